//! Permit guards: holding one is the right to run; dropping it gives the right back.

use std::fmt;

use super::core::Inner;
use crate::sync::Arc;

/// A permit borrowed from a limiter. Dropping it releases the permit, including on panic and
/// when the future holding it is cancelled.
///
/// # Examples
///
/// ```
/// use sluicegate::concurrency::ConcurrencyLimiter;
///
/// let limiter = ConcurrencyLimiter::new(1);
/// {
///     let _permit = limiter.try_acquire().unwrap();
///     assert_eq!(limiter.snapshot().in_flight, 1);
/// } // released here
/// assert_eq!(limiter.snapshot().in_flight, 0);
/// ```
#[must_use = "the permit is released as soon as it is dropped"]
pub struct Permit<'a> {
    pub(crate) inner: &'a Inner,
}

impl Drop for Permit<'_> {
    #[inline]
    fn drop(&mut self) {
        self.inner.release();
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").finish_non_exhaustive()
    }
}

/// A permit that owns a handle to its limiter, so it can move into spawned tasks and
/// response futures. Dropping it releases the permit.
///
/// # Examples
///
/// ```
/// use sluicegate::concurrency::ConcurrencyLimiter;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let limiter = ConcurrencyLimiter::new(4);
/// let permit = limiter.acquire_owned().await.unwrap();
/// let job = tokio::spawn(async move {
///     let _permit = permit; // held until the task ends
///     "done"
/// });
/// assert_eq!(job.await.unwrap(), "done");
/// assert_eq!(limiter.snapshot().in_flight, 0);
/// # });
/// ```
#[must_use = "the permit is released as soon as it is dropped"]
pub struct OwnedPermit {
    pub(crate) inner: Arc<Inner>,
    pub(crate) kind: PermitKind,
}

/// Whether an owned permit counts against the limit. A full word rather than a `bool`:
/// permits are moved through response futures on every request, and a one-byte field next
/// to a pointer made those moves byte-sized partial copies that stall store forwarding
/// (measured in the middleware bench).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum PermitKind {
    Throttled,
    Bypass,
}

impl OwnedPermit {
    /// Whether this permit skipped the limit (see
    /// [`ConcurrencyLimiter::acquire_bypass`](super::ConcurrencyLimiter::acquire_bypass)).
    pub fn is_bypass(&self) -> bool {
        self.kind == PermitKind::Bypass
    }
}

impl Drop for OwnedPermit {
    #[inline]
    fn drop(&mut self) {
        if self.kind == PermitKind::Bypass {
            self.inner.bypass_release();
        } else {
            self.inner.release();
        }
    }
}

impl fmt::Debug for OwnedPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit")
            .field("bypass", &self.is_bypass())
            .finish_non_exhaustive()
    }
}
