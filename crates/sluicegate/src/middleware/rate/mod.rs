//! A rate limit for HTTP services, global or keyed (client IP, a header, a closure), answering `429` with the IETF `RateLimit` headers.

mod check;
mod future;
mod key;
mod layer;
mod service;
mod wire;

pub use check::RateCheck;
pub use future::ResponseFuture;
pub use key::{Global, HeaderKey, KeyExtractor, KeyFn, PeerIp, group_ip, key_fn};
pub use layer::RateLimitLayer;
pub use service::RateLimit;
