//! Errors: a bad URL, name, quota or setting when a store or limiter is built.

use sluicegate::rate::QuotaError;

/// Why a store or a limiter could not be built.
///
/// Decisions never fail on a dead Redis: they fall back per the limit's
/// [`FailurePolicy`](crate::FailurePolicy) instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The Redis URL or connection settings were refused by the client.
    #[error("bad redis connection settings: {0}")]
    Connection(#[from] redis::RedisError),
    /// TLS settings that cannot work: a `rediss://` URL in a build without the `tls`
    /// feature, a CA or client certificate for a plain `redis://` URL, a PEM without a
    /// certificate or key in it.
    #[error("redis TLS settings: {0}")]
    Tls(String),
    /// A limit name that cannot be part of a hash-tagged key.
    #[error("limit name {0:?} must be non-empty and contain no '{{' or '}}'")]
    Name(String),
    /// A store prefix that cannot be part of a hash-tagged key.
    #[error(
        "store prefix {0:?} must contain no '{{' or '}}' (they would break the keys' hash tags); `:` and `%` are fine"
    )]
    Prefix(String),
    /// The quota or window itself is invalid.
    #[error("bad quota: {0}")]
    Quota(#[from] QuotaError),
    /// A limit that runs tasks (global concurrency) was built outside a tokio runtime.
    #[error("a global concurrency limit must be built inside a tokio runtime")]
    Runtime,
    /// The local share of a global concurrency limit (its `Local` fallback, built from the
    /// same settings) is not a valid limiter, e.g. for a zero queue timeout.
    #[error("{0}")]
    Limiter(#[from] sluicegate::concurrency::ConfigError),
    /// A global sliding window with a slice count out of range.
    #[error("a global sliding window needs between 1 and {max} slices, not {slices}")]
    Slices {
        /// What was asked for.
        slices: u32,
        /// The most a global window takes ([`GlobalWindow::MAX_SLICES`](crate::GlobalWindow::MAX_SLICES)).
        max: u32,
    },
    /// A quota or setting the Redis scripts cannot represent exactly.
    #[error("out of range for a global limit: {0}")]
    Range(&'static str),
}
