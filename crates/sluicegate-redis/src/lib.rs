//! Global limits shared by every instance of a service, kept in Redis.
//!
//! When a service runs as N instances, a per-process limit of X lets N×X through. The limits
//! here live in Redis, so all instances together stay under X:
//!
//! | limit | what it promises | cost per decision |
//! |---|---|---|
//! | [`GlobalGcra`] | a steady rate with bursts, as [`sluicegate::rate::Gcra`] | one script call |
//! | [`GlobalWindow`] | at most X in any window, as [`sluicegate::rate::SlidingWindow`] | one script call |
//! | [`GlobalKeyedGcra`] | a [`GlobalGcra`] per client key, each key's state expiring when idle | one script call |
//! | [`HybridGcra`] | GCRA from leased batches; overshoot at most rate × lease time | one call per batch |
//! | [`GlobalConcurrency`] | at most N permits at once; leases with a TTL, FIFO wait queue | one call per permit, one to release |
//!
//! Every limit answers with the same [`Decision`](sluicegate::rate::Decision) as the local
//! limiters. A decision never waits on Redis longer than the store's budget (20 ms by
//! default); after that the limit's [`FailurePolicy`] decides (`Local`: this instance's share
//! of the limit, `Allow`, or `Deny`) until Redis answers again, which the store notices by
//! itself. The guide `docs/global-limits.md` explains the scripts, the hybrid overshoot bound
//! and the choice of client.
//!
//! | feature | adds |
//! |---|---|
//! | `tls` (default) | `rediss://` URLs (rustls with ring; the system's CAs, or `StoreBuilder::tls_ca`) |
//! | `tower` | `RedisCheck`: a global rate limit in sluicegate's HTTP rate layer (`RateLimitLayer::deferred`) |
//!
//! # Quick example
//!
//! ```no_run
//! use sluicegate::rate::Quota;
//! use sluicegate_redis::{FailurePolicy, GlobalGcra, RedisStore};
//!
//! # async fn demo() -> Result<(), sluicegate_redis::Error> {
//! let store = RedisStore::connect("redis://127.0.0.1:6379/").await?;
//! // 1000/s to the payment provider, all three instances together.
//! let payments = GlobalGcra::builder(&store, "payments", Quota::per_second(1000).expect("1000/s is a valid quota"))
//!     .on_failure(FailurePolicy::Local)
//!     .instances(3)
//!     .build()?;
//! let decision = payments.check().await;
//! # let _ = decision;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

pub mod concurrency;
mod error;
mod policy;
pub mod rate;
mod store;
#[cfg(feature = "tower")]
mod tower;

pub use concurrency::{GlobalConcurrency, GlobalPermit};
pub use error::Error;
pub use policy::{FailurePolicy, Source};
pub use rate::{GlobalGcra, GlobalKeyedGcra, GlobalWindow, HybridGcra, Verdict};
pub use store::{HealthSnapshot, RedisStore, StoreBuilder};
#[cfg(feature = "tower")]
pub use tower::RedisCheck;
