//! Why a global permit was not handed out.

use std::time::Duration;

/// Why [`GlobalConcurrency::acquire`](super::GlobalConcurrency::acquire) gave no permit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AcquireError {
    /// This instance's wait queue is full (with `max_queue(0)`: all permits are out).
    #[error("the wait queue is full")]
    QueueFull {
        /// A hint for the caller: about the time until as many permits came back as callers
        /// wait before it, plus one — the mean hold of this instance's leases ÷ `max`, per
        /// place in line; 1 s before any lease was released here; at most the queue
        /// timeout.
        retry_after: Duration,
    },
    /// No permit came within the queue timeout.
    #[error("no permit within the queue timeout")]
    Timeout {
        /// A hint for the caller: about one queue timeout.
        retry_after: Duration,
    },
    /// Redis did not answer and the limit's failure policy is `Deny`.
    #[error("redis is unreachable and the limit fails closed")]
    Unavailable {
        /// A hint for the caller: the time to the store's next probe of Redis (at least its
        /// least backoff).
        retry_after: Duration,
    },
}

impl AcquireError {
    /// How long the caller might wait before trying again.
    pub fn retry_after(&self) -> Duration {
        match *self {
            AcquireError::QueueFull { retry_after }
            | AcquireError::Timeout { retry_after }
            | AcquireError::Unavailable { retry_after } => retry_after,
        }
    }
}
