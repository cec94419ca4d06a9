//! The permit a middleware future holds: taken on the limiter's lock-free path, or handed
//! out by its queue.

use std::fmt;

use crate::adaptive::{AdaptiveLimiter, AdaptivePermit, Outcome};
use crate::concurrency::{ConcurrencyLimiter, OwnedPermit};

/// A throttled (or bypass) permit owned by a response future or body; dropping it releases
/// it.
pub(crate) enum HeldPermit {
    Owned(OwnedPermit),
    /// Timed for an adaptive limit: finishing it feeds the algorithm a sample. Boxed: inline
    /// it would triple the size of every held permit and slow the fast path (measured).
    Timed(Box<Timed>),
}

/// An adaptive permit and how its work went, as far as known yet. Dropped without
/// [`HeldPermit::complete`] (a cancelled request, a client that hung up), it counts as
/// [`Outcome::Ignored`]: a cancellation says nothing about the resource.
pub(crate) struct Timed {
    permit: AdaptivePermit,
    outcome: Outcome,
}

impl HeldPermit {
    /// A permit if one is free and nobody waits: no lock, no clock, no queue.
    #[inline]
    pub(crate) fn try_fast(limiter: &ConcurrencyLimiter) -> Option<Self> {
        limiter.try_acquire_owned_fast().map(HeldPermit::Owned)
    }

    /// A permit from `acquire_owned()` or `acquire_bypass()`.
    pub(crate) fn owned(permit: OwnedPermit) -> Self {
        HeldPermit::Owned(permit)
    }

    /// Starts timing this permit for `adaptive` (if any): call it as soon as the permit is
    /// granted, as [`AdaptiveLimiter::wrap`] says.
    #[inline]
    pub(crate) fn adapt(self, adaptive: Option<&AdaptiveLimiter>) -> Self {
        match adaptive {
            None => self,
            Some(adaptive) => self.timed(adaptive),
        }
    }

    #[cold]
    fn timed(self, adaptive: &AdaptiveLimiter) -> Self {
        match self {
            HeldPermit::Owned(permit) => HeldPermit::Timed(Box::new(Timed {
                permit: adaptive.wrap(permit),
                outcome: Outcome::Ignored,
            })),
            other => other,
        }
    }

    /// Records how the work went, for an adaptive limit (nothing otherwise).
    #[inline]
    pub(crate) fn set_outcome(&mut self, outcome: Outcome) {
        if let HeldPermit::Timed(timed) = self {
            timed.outcome = outcome;
        }
    }

    /// The work is over and ended with `outcome`: release, and for an adaptive limit feed
    /// the sample.
    #[inline]
    pub(crate) fn finish(mut self, outcome: impl FnOnce() -> Outcome) {
        if let HeldPermit::Timed(timed) = &mut self {
            timed.outcome = outcome();
        }
        self.complete();
    }

    /// The work is over: release the permit and, for an adaptive limit, feed its sample.
    #[inline]
    pub(crate) fn complete(self) {
        // One arm per variant, so the fast one inlines its release instead of calling the
        // whole enum's drop glue.
        match self {
            HeldPermit::Owned(owned) => drop(owned),
            HeldPermit::Timed(timed) => {
                let Timed { permit, outcome } = *timed;
                permit.finish(outcome);
            }
        }
    }
}

impl fmt::Debug for HeldPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HeldPermit::Owned(_) => "HeldPermit::Owned",
            HeldPermit::Timed(_) => "HeldPermit::Timed",
        })
    }
}
