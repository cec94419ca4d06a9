//! A concurrency limit on outgoing requests: the same limiter on the way out, with per-request [`Bypass`] and [`Priority`](crate::concurrency::Priority) through request extensions.

mod future;
mod hold;
mod layer;
mod service;

pub use future::ResponseFuture;
pub use hold::{AtHead, CallPermit, Hold, ThroughBody};
pub use layer::ClientLimitLayer;
pub use service::{Bypass, ClientLimit};
