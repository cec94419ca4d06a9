//! GCRA (generic cell rate algorithm): a token bucket whose whole state is one atomic word,
//! the theoretical arrival time `tat`.
//!
//! [`step`] is the pure algorithm over that word, taking `now`; [`Gcra`] is the in-memory
//! store, a compare-and-swap loop around it. A remote store (Redis) runs the same step.

mod cell;
mod core;
mod limiter;

pub(crate) use cell::ParamsCell;
pub use core::{GcraParams, requote, step};
pub use limiter::Gcra;
