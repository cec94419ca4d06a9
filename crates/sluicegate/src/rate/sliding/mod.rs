//! Sliding window: a ring of per-slice atomic counters, lock-free and of fixed size.
//!
//! [`evaluate`] is the pure decision over the slice counts; [`SlidingWindow`] is the
//! in-memory ring that feeds it and records admissions with one compare-and-swap.

mod core;
mod limiter;
mod ring;

pub use core::{WindowParams, evaluate};
pub use limiter::SlidingWindow;
