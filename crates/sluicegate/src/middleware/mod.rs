//! Tower middleware (feature `tower`): server layers for axum / tonic / hyper and a client
//! layer for outgoing requests, all built on the [`concurrency`](crate::concurrency) limiter
//! or on any rate limiter behind [`rate::RateCheck`].
//!
//! | layer | for | a rejection is |
//! |---|---|---|
//! | [`concurrency::ConcurrencyLimitLayer`] | any tower service | the call's error ([`Rejected`](crate::concurrency::Rejected), boxed) |
//! | [`http_concurrency::HttpConcurrencyLimitLayer`] | HTTP servers (axum) | a `503` + `Retry-After` response |
//! | [`rate::RateLimitLayer`] | HTTP servers, global or keyed | a `429` + `Retry-After` + `RateLimit` response |
//! | [`client::ClientLimitLayer`] | HTTP clients | the call's error; bypass / priority per request |
//!
//! Server layers reserve a permit in `poll_ready`, consume it in `call` and release it when
//! the response future (HTTP: the response body) is done or dropped; a cloned service starts
//! with no reservation. A limiter handle cloned into several layers is one shared limit.
//! The repository's guide `docs/middleware.md` gives the design and its trade-offs.

mod body;
pub mod client;
pub mod concurrency;
pub mod http_concurrency;
mod permit;
pub mod rate;
mod reserve;

pub use body::LimitBody;

/// The error type of the layers that return rejections as errors (tower's convention).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
