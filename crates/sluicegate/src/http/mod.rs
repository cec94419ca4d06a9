//! The HTTP mapping: which status, which headers and which short body tell a caller "not now".
//!
//! | outcome | status (default) | headers |
//! |---|---|---|
//! | rate limited | `429 Too Many Requests` | `Retry-After`, `RateLimit-Policy`, `RateLimit` |
//! | queue full, queue timeout, closed, predicted timeout | `503 Service Unavailable` | `Retry-After` |
//! | no rate limit key in the request | `500 Internal Server Error` | |
//!
//! `Retry-After` is in whole seconds, rounded up, at least 1. The `RateLimit-Policy` and
//! `RateLimit` headers follow draft-ietf-httpapi-ratelimit-headers:
//! `RateLimit-Policy: "name";q=100;w=60` and `RateLimit: "name";r=42;t=17`. Every status is
//! configurable through [`RejectionMapping`].

mod headers;
mod mapping;

pub use headers::{RATELIMIT, RATELIMIT_POLICY, RatePolicy, set_ratelimit_headers};
pub use mapping::{RejectionMapping, retry_after_secs};
