//! A concurrency limit for HTTP services that answers `503` + `Retry-After` itself, so the service stays infallible (axum).

mod future;
mod layer;
mod service;

pub use future::ResponseFuture;
pub use layer::HttpConcurrencyLimitLayer;
pub use service::HttpConcurrencyLimit;
