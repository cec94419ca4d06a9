//! Flow control for services and their clients.
//!
//! sluicegate keeps a slow resource alive under a flood, and keeps a runaway client from
//! becoming that flood.
//!
//! | module | what it is |
//! |---|---|
//! | [`concurrency`] | how much work runs at once, with a bounded wait queue |
//! | [`clock`] | time sources shared by every limiter |
//! | [`adaptive`] | adaptive limit algorithms (Little's law, Gradient2, Vegas, AIMD, fixed) |
//! | [`rate`] | rate limiters: sliding window, GCRA |
//! | [`keyed`] | per-key rate limiters with bounded memory |
// With the feature off the two modules do not exist, so their rows name them without a link
// (a link would be a broken intra-doc link: a `cargo doc` warning).
#![cfg_attr(
    feature = "tower",
    doc = "| [`middleware`] (feature `tower`) | tower layers: server concurrency / rate limits, a client limit |"
)]
#![cfg_attr(
    feature = "tower",
    doc = "| [`http`] (feature `tower`) | the HTTP mapping: `429` / `503`, `Retry-After`, `RateLimit` headers |"
)]
#![cfg_attr(
    not(feature = "tower"),
    doc = "| `middleware` (feature `tower`, off in this build) | tower layers: server concurrency / rate limits, a client limit |"
)]
#![cfg_attr(
    not(feature = "tower"),
    doc = "| `http` (feature `tower`, off in this build) | the HTTP mapping: `429` / `503`, `Retry-After`, `RateLimit` headers |"
)]
//!
//! # Quick example
//!
//! ```
//! use sluicegate::concurrency::ConcurrencyLimiter;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! // A slow API that takes at most 4 calls at once; up to 100 callers wait in line.
//! let api = ConcurrencyLimiter::builder(4).max_queue(100).build().unwrap();
//!
//! let answer = api.run(async { 42 }).await;
//! assert_eq!(answer.unwrap(), 42);
//! # });
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adaptive;
pub mod clock;
pub mod concurrency;
#[cfg(feature = "tower")]
pub mod http;
pub mod keyed;
#[cfg(feature = "tower")]
pub mod middleware;
pub mod rate;
pub(crate) mod sync;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
