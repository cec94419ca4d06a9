//! Why an acquire did not get a permit, and why a configuration was refused.

use std::fmt;
use std::time::Duration;

/// An acquire that ended without a permit. Each outcome carries a `retry_after` hint: how
/// long until trying again has a fair chance, estimated from the recent release rate.
///
/// A rejection is an expected outcome under load, so callers usually match on it. New
/// reasons may be added (the enum is `#[non_exhaustive]`), so a match ends with a catch-all:
///
/// # Examples
///
/// ```
/// use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};
///
/// fn should_retry(r: &Rejected) -> bool {
///     match r {
///         Rejected::Closed { .. } => false,
///         Rejected::QueueFull { .. } | Rejected::PredictedTimeout { .. } => true,
///         _ => true,
///     }
/// }
///
/// let limiter = ConcurrencyLimiter::new(1);
/// let _held = limiter.try_acquire().unwrap();
/// let rejected = limiter.try_acquire().unwrap_err();
/// assert_eq!(rejected.reason(), "queue_full");
/// assert!(should_retry(&rejected));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejected {
    /// Every permit was taken and the wait queue was full (or the call did not wait:
    /// `try_acquire` behaves as if `max_queue` were 0).
    QueueFull {
        /// Suggested wait before trying again.
        retry_after: Duration,
    },
    /// The caller waited in the queue for its whole timeout.
    QueueTimeout {
        /// Suggested wait before trying again.
        retry_after: Duration,
    },
    /// The limiter was closed (by `close()` or `reset()`) before a permit was granted.
    Closed {
        /// Suggested wait before trying again.
        retry_after: Duration,
    },
    /// The queue ahead was so long that the caller would have timed out anyway, so it was
    /// turned away at once instead of waiting for nothing.
    PredictedTimeout {
        /// Suggested wait before trying again.
        retry_after: Duration,
    },
}

impl Rejected {
    /// The suggested wait before trying again.
    pub fn retry_after(&self) -> Duration {
        match *self {
            Rejected::QueueFull { retry_after }
            | Rejected::QueueTimeout { retry_after }
            | Rejected::Closed { retry_after }
            | Rejected::PredictedTimeout { retry_after } => retry_after,
        }
    }

    /// Whether the limiter was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, Rejected::Closed { .. })
    }

    /// A short, stable name for logs, metrics and response headers.
    pub fn reason(&self) -> &'static str {
        match self {
            Rejected::QueueFull { .. } => "queue_full",
            Rejected::QueueTimeout { .. } => "queue_timeout",
            Rejected::Closed { .. } => "closed",
            Rejected::PredictedTimeout { .. } => "predicted_timeout",
        }
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            Rejected::QueueFull { .. } => "all permits are taken and the wait queue is full",
            Rejected::QueueTimeout { .. } => "waited in the queue for the whole timeout",
            Rejected::Closed { .. } => "the limiter is closed",
            Rejected::PredictedTimeout { .. } => {
                "the queue is too long to be served within the timeout"
            }
        };
        write!(f, "{what} (retry after {:?})", self.retry_after())
    }
}

impl std::error::Error for Rejected {}

/// Settings that cannot work, refused when the limiter is built or changed.
///
/// # Examples
///
/// ```
/// use sluicegate::concurrency::{ConcurrencyLimiter, ConfigError};
///
/// let too_many = ConcurrencyLimiter::builder(usize::MAX).build().unwrap_err();
/// assert!(matches!(too_many, ConfigError::MaxTooLarge { .. }));
/// let limiter = ConcurrencyLimiter::new(1);
/// assert!(limiter.set_max(usize::MAX).is_err()); // the limit stays 1
/// assert_eq!(limiter.max(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// More permits than the limiter can count.
    MaxTooLarge {
        /// What was asked for.
        requested: usize,
        /// The largest value allowed.
        allowed: usize,
    },
    /// A zero queue timeout would reject every queued caller at once.
    ZeroQueueTimeout,
    /// Predictive rejection compares an estimated wait with the caller's timeout, so it needs
    /// one.
    PredictiveWithoutTimeout,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::MaxTooLarge { requested, allowed } => write!(
                f,
                "max of {requested} permits is more than the {allowed} a limiter can count"
            ),
            ConfigError::ZeroQueueTimeout => f.write_str(
                "queue timeout of zero rejects every queued caller; use max_queue(0) to reject \
                 at once instead",
            ),
            ConfigError::PredictiveWithoutTimeout => f.write_str(
                "predictive rejection needs a queue timeout to compare the estimated wait with; \
                 set queue_timeout(..)",
            ),
        }
    }
}

impl std::error::Error for ConfigError {}
