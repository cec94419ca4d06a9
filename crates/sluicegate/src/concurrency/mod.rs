//! The concurrency limiter: at most `max` calls at once, the rest wait in a bounded queue.
//!
//! ```
//! use std::time::Duration;
//! use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let api = ConcurrencyLimiter::builder(2)
//!     .max_queue(10)
//!     .queue_timeout(Duration::from_secs(5))
//!     .build()?;
//!
//! let permit = api.acquire().await?; // waits here while two calls are running
//! // ... call the API ...
//! drop(permit); // the next waiter starts now
//!
//! // Or let the limiter wrap the call:
//! let answer = api.run(async { "pong" }).await?;
//! assert_eq!(answer, "pong");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Semantics
//!
//! - **Permits** are RAII guards ([`Permit`], [`OwnedPermit`]): dropping one releases it,
//!   also on panic and cancellation.
//! - **Queue.** When every permit is taken, callers wait, up to `max_queue` of them, each at
//!   most `queue_timeout`. Other outcomes are values of [`Rejected`], each with a
//!   `retry_after` hint.
//! - **Limit changes** ([`ConcurrencyLimiter::set_max`]): raising admits waiters at once;
//!   lowering never interrupts running work; `0` pauses.
//! - **Close, drain, reset**: [`ConcurrencyLimiter::close`] rejects all that waits and all
//!   that comes; [`ConcurrencyLimiter::drain`] resolves when nothing runs;
//!   [`ConcurrencyLimiter::reset`] does both and reopens with the configured settings.
//! - **Bypass**: [`ConcurrencyLimiter::acquire_bypass`] skips the limit, counted apart.
//! - **Predictive rejection** (opt-in): a caller whose expected wait (queue position ×
//!   smoothed interval between releases) exceeds its timeout is turned away at once with
//!   [`Rejected::PredictedTimeout`].
//!
//! # Runtime
//!
//! A caller that has to wait with a queue timeout waits on a tokio timer, so the async
//! acquires ([`ConcurrencyLimiter::acquire`], `acquire_owned`, `run`, and the tower layers)
//! need a tokio runtime with time enabled (`#[tokio::main]`, or a runtime builder with
//! `enable_time()` / `enable_all()`) once a timeout is set. Elsewhere the first caller that
//! has to queue panics as `tokio::time::sleep` does ("timers are disabled") — only under
//! load, when it first queues, so a quiet test does not show it. Without a timeout no timer
//! is armed; the blocking acquires need no runtime at all.
//!
//! # Cancel safety
//!
//! Dropping an [`Acquire`] or [`AcquireOwned`] future removes the caller from the queue at
//! once. If a release handed it a permit at the same instant, that permit goes on to the next
//! waiter (or back to the pool); the grant stays counted as admitted and completed. Either way
//! no permit is leaked and no waiter misses a wake-up; loom models in
//! `crates/sluicegate-release-tests/tests/loom_*.rs` check these races.
//!
//! # Fairness
//!
//! A released permit goes straight to the next waiter: while anyone waits, new callers
//! cannot barge past the queue, even through `try_acquire`. Waiters of a higher
//! [`Priority`] are always served first (strict priority); within one priority the order is
//! [`QueueOrder::Fifo`] (default) or [`QueueOrder::Lifo`]. Strict priority can starve low
//! priorities under sustained overload; give them a timeout.
//!
//! # Cost
//!
//! With no waiters, acquire and release are one `fetch_add` each: no lock,
//! no clock read, no allocation. The queue (only used when callers must wait) is behind a
//! mutex. The repository's `docs/concurrency-state-machine.md` describes the state machine.

mod blocking;
mod core;
mod error;
mod future;
mod limiter;
#[cfg(sluicegate_loom)]
mod loom_timer;
mod permit;
mod queue;
mod snapshot;
mod state;
#[cfg(all(test, not(sluicegate_loom)))]
mod wrap_tests;

pub use error::{ConfigError, Rejected};
pub use future::{Acquire, AcquireOwned, Drain};
pub use limiter::{Builder, ConcurrencyLimiter};
#[cfg(sluicegate_loom)]
#[doc(hidden)]
pub use loom_timer::ManualTimer;
pub use permit::{OwnedPermit, Permit};
pub use queue::{Priority, QueueOrder};
pub use snapshot::Snapshot;
