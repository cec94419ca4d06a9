//! The seam between the rate layer and a rate limiter: one call, one decision.

use std::sync::Arc;

use crate::http::RatePolicy;
use crate::rate::Decision;

/// A rate limiter as the rate layer sees it: asked once per request, it answers with a
/// [`Decision`] (and counts the request if it is allowed).
///
/// `K` is the key the layer's [`KeyExtractor`](super::KeyExtractor) finds in a request:
/// `()` for a global limit. Any limiter can plug in by implementing [`check`](Self::check)
/// (and [`policy`](Self::policy), to announce its quota in `RateLimit-Policy`); a shared
/// limiter is usually given as an `Arc` (implemented for `Arc<C>`).
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use sluicegate::http::RatePolicy;
/// use sluicegate::middleware::rate::RateCheck;
/// use sluicegate::rate::Decision;
///
/// /// Allows the first `limit` requests, ever.
/// struct FirstN { limit: u32, seen: AtomicU32 }
///
/// impl RateCheck<()> for FirstN {
///     fn check(&self, _: &()) -> Decision {
///         let n = self.seen.fetch_add(1, Ordering::Relaxed);
///         let reset = Duration::from_secs(60);
///         if n < self.limit {
///             Decision::allow(self.limit, self.limit - n - 1, reset)
///         } else {
///             Decision::deny(self.limit, 0, Duration::MAX, reset)
///         }
///     }
///
///     fn policy(&self) -> Option<RatePolicy> {
///         Some(RatePolicy::new(u64::from(self.limit), Duration::from_secs(60)))
///     }
/// }
/// # let f = FirstN { limit: 1, seen: AtomicU32::new(0) };
/// # assert!(f.check(&()).is_allowed());
/// # assert!(f.check(&()).is_denied());
/// ```
pub trait RateCheck<K: ?Sized> {
    /// Decides on one request with key `key`, counting it if allowed.
    fn check(&self, key: &K) -> Decision;

    /// The quota announced in `RateLimit-Policy`, if the limiter can say it as "`limit` per
    /// `window`" (default: none, and the header is left out). Asked only when a response
    /// carries the headers.
    fn policy(&self) -> Option<RatePolicy> {
        None
    }
}

impl<K: ?Sized, C: RateCheck<K> + ?Sized> RateCheck<K> for Arc<C> {
    #[inline]
    fn check(&self, key: &K) -> Decision {
        (**self).check(key)
    }

    #[inline]
    fn policy(&self) -> Option<RatePolicy> {
        (**self).policy()
    }
}
