//! A concurrency limit for any tower service; a rejection is the call's error ([`Rejected`](crate::concurrency::Rejected), boxed), like tower's `load_shed`.

mod future;
mod layer;
mod service;

pub use future::ResponseFuture;
pub use layer::ConcurrencyLimitLayer;
pub use service::ConcurrencyLimit;
