//! The permit a middleware future holds: taken on the limiter's lock-free path, or handed
//! out by its queue.

use std::fmt;

use crate::concurrency::{ConcurrencyLimiter, OwnedPermit};

/// A throttled permit owned by a response future or body; dropping it releases it.
///
/// The `Fast` form is what a public `ConcurrencyLimiter::try_acquire_owned()` would return:
/// one CAS to take, one `fetch_add` to give back, plus the handle clone a `'static` future
/// needs. Going through `acquire_owned()` when a permit is free costs two more reference
/// count round trips (the future's handle and the permit's), which is most of the layer's
/// overhead; see `BENCHMARKS.md`. Replace this with the core's own owned fast path when it
/// has one.
pub(crate) struct HeldPermit {
    /// Taken on the lock-free path; released by hand in `Drop`. A bare pointer (`None` is
    /// its null niche), so moving a held permit is one word, not a tagged enum.
    fast: Option<ConcurrencyLimiter>,
    /// Handed out by the queue (or a bypass): releases itself.
    _owned: Option<OwnedPermit>,
}

impl HeldPermit {
    /// A permit if one is free and nobody waits: no lock, no clock, no queue.
    #[inline]
    pub(crate) fn try_fast(limiter: &ConcurrencyLimiter) -> Option<Self> {
        // Exactly what `try_acquire()` does before its slow path; the matching release is
        // in `Drop`, as in `Permit`.
        limiter.inner().try_acquire_fast().then(|| HeldPermit {
            fast: Some(limiter.clone()),
            _owned: None,
        })
    }

    /// A permit from `acquire_owned()` or `acquire_bypass()`.
    pub(crate) fn owned(permit: OwnedPermit) -> Self {
        HeldPermit {
            fast: None,
            _owned: Some(permit),
        }
    }
}

impl Drop for HeldPermit {
    #[inline]
    fn drop(&mut self) {
        if let Some(limiter) = &self.fast {
            limiter.inner().release();
        }
    }
}

impl fmt::Debug for HeldPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeldPermit")
            .field("fast", &self.fast.is_some())
            .finish_non_exhaustive()
    }
}
