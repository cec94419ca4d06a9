//! The seam between the rate layer and a rate limiter: one call, one decision.

use std::sync::Arc;
use std::time::Duration;

/// A rate limiter as the rate layer sees it: asked once per request, it answers with a
/// [`RateDecision`] (and counts the request if it is allowed).
///
/// `K` is the key the layer's [`KeyExtractor`](super::KeyExtractor) finds in a request:
/// `()` for a global limit. Any limiter can plug in by implementing this one method; a
/// shared limiter is usually given as an `Arc` (implemented for `Arc<C>`).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::time::Duration;
/// use sluicegate::middleware::rate::{Policy, RateCheck, RateDecision};
///
/// /// Allows the first `limit` requests, ever.
/// struct FirstN { limit: u64, seen: AtomicU64 }
///
/// impl RateCheck<()> for FirstN {
///     fn check(&self, _: &()) -> RateDecision {
///         let n = self.seen.fetch_add(1, Ordering::Relaxed);
///         let policy = Policy::new(self.limit, Duration::from_secs(60));
///         if n < self.limit {
///             RateDecision::allow(self.limit - n - 1, Duration::from_secs(60)).with_policy(policy)
///         } else {
///             RateDecision::deny(Duration::from_secs(60), Duration::from_secs(60)).with_policy(policy)
///         }
///     }
/// }
/// # let f = FirstN { limit: 1, seen: AtomicU64::new(0) };
/// # assert!(f.check(&()).allowed);
/// # assert!(!f.check(&()).allowed);
/// ```
pub trait RateCheck<K: ?Sized> {
    /// Decides on one request with key `key`, counting it if allowed.
    fn check(&self, key: &K) -> RateDecision;
}

impl<K: ?Sized, C: RateCheck<K> + ?Sized> RateCheck<K> for Arc<C> {
    fn check(&self, key: &K) -> RateDecision {
        (**self).check(key)
    }
}

/// The policy a decision was made against, for the `RateLimit-Policy` header: `limit`
/// requests per `window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Requests allowed per window.
    pub limit: u64,
    /// The window.
    pub window: Duration,
}

impl Policy {
    /// `limit` requests per `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        Policy { limit, window }
    }
}

/// One rate limit decision. A denial is a decision, not an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateDecision {
    /// Whether the request may go on.
    pub allowed: bool,
    /// Requests left in the current window after this one.
    pub remaining: u64,
    /// When a denied request could succeed (zero when allowed).
    pub retry_after: Duration,
    /// When the quota is whole again.
    pub reset_after: Duration,
    /// The quota, when the limiter knows it as "`limit` per `window`".
    pub policy: Option<Policy>,
}

impl RateDecision {
    /// An allowed request with `remaining` left and the quota whole again after
    /// `reset_after`.
    pub fn allow(remaining: u64, reset_after: Duration) -> Self {
        RateDecision {
            allowed: true,
            remaining,
            retry_after: Duration::ZERO,
            reset_after,
            policy: None,
        }
    }

    /// A denied request that may succeed after `retry_after`, the quota whole again after
    /// `reset_after`.
    pub fn deny(retry_after: Duration, reset_after: Duration) -> Self {
        RateDecision {
            allowed: false,
            remaining: 0,
            retry_after,
            reset_after,
            policy: None,
        }
    }

    /// The same decision, naming its quota (for `RateLimit-Policy`).
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }
}
