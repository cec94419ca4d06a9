//! The in-memory GCRA limiter: the pure step in a compare-and-swap loop.

use crate::clock::{Clock, MonotonicClock};
use crate::rate::{CheckError, Decision, Quota};
use crate::sync::{AtomicU64, Mutex, Ordering, lock};

use crate::rate::CacheLine;

use super::{GcraParams, ParamsCell, requote, step};

/// A GCRA rate limiter (a token bucket): `count` per `period` with bursts of up to `burst`,
/// all of its state in one atomic word.
///
/// # Examples
///
/// ```
/// use sluicegate::clock::FakeClock;
/// use sluicegate::rate::{Gcra, Quota};
/// use std::time::Duration;
///
/// let clock = FakeClock::new();
/// let limiter = Gcra::with_clock(Quota::per_second(2).unwrap(), clock.clone());
/// assert!(limiter.check().is_allowed());
/// assert!(limiter.check().is_allowed());
/// let denied = limiter.check();
/// assert!(denied.is_denied());
/// assert_eq!(denied.retry_after(), Duration::from_millis(500));
/// clock.advance(denied.retry_after());
/// assert!(limiter.check().is_allowed());
/// ```
#[derive(Debug)]
pub struct Gcra<C: Clock = MonotonicClock> {
    // On a line pair of its own: under contention this line moves between cores on every
    // check, and the quota (read on every check, written almost never) should not move with it.
    tat: CacheLine<AtomicU64>,
    params: ParamsCell,
    quota: Mutex<Quota>,
    clock: C,
}

impl Gcra<MonotonicClock> {
    /// A limiter for `quota` on the system's monotonic clock.
    pub fn new(quota: Quota) -> Self {
        Self::with_clock(quota, MonotonicClock)
    }
}

impl<C: Clock> Gcra<C> {
    /// A limiter for `quota` reading time from `clock`.
    pub fn with_clock(quota: Quota, clock: C) -> Self {
        Gcra {
            tat: CacheLine(AtomicU64::new(0)),
            params: ParamsCell::new(GcraParams::from_quota(&quota)),
            quota: Mutex::new(quota),
            clock,
        }
    }

    /// Checks for, and on success consumes, one request.
    #[inline]
    pub fn check(&self) -> Decision {
        match self.check_n(1) {
            Ok(decision) => decision,
            // n = 1 exceeds no burst: a quota with count > 0 has burst ≥ 1.
            Err(_) => Decision::never(),
        }
    }

    /// Checks for, and on success consumes, `n` requests at once (all or nothing).
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the burst.
    #[inline]
    pub fn check_n(&self, n: u32) -> Result<Decision, CheckError> {
        let now = self.clock.now().as_u64();
        let (mut seq, mut params) = self.params.read_unvalidated();
        let mut tat = self.tat.load(Ordering::Acquire);
        loop {
            // One sequence check covers both the quota and the state read under it.
            if !self.params.unchanged_since(seq) {
                (seq, params) = self.params.read_unvalidated();
                tat = self.tat.load(Ordering::Acquire);
                continue;
            }
            let (decision, next) = step(params, tat, now, n)?;
            let Some(next) = next else {
                return Ok(decision);
            };
            // On failure, carry on from the value the CAS saw: loading it again would fetch
            // the contended line once more, shared, before the next CAS takes it exclusive.
            match self
                .tat
                .compare_exchange_weak(tat, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(decision),
                Err(seen) => tat = seen,
            }
        }
    }

    /// The decision [`check`](Self::check) would make now, without consuming anything.
    #[inline]
    pub fn peek(&self) -> Decision {
        self.peek_n(1).unwrap_or_else(|_| Decision::never())
    }

    /// The decision [`check_n`](Self::check_n) would make now, without consuming anything.
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the burst.
    ///
    /// `peek_n(0)` is allowed and its [`remaining`](Decision::remaining) is what is available
    /// now (`peek()` reports what would remain after one more).
    #[inline]
    pub fn peek_n(&self, n: u32) -> Result<Decision, CheckError> {
        let now = self.clock.now().as_u64();
        let (_, params) = self.params.read();
        step(params, self.tat.load(Ordering::Acquire), now, n).map(|(decision, _)| decision)
    }

    /// Replaces the quota, keeping the state: what remains is kept (capped at the new burst),
    /// so the change itself hands out no burst, and from now on the new rate applies.
    pub fn set_quota(&self, quota: Quota) {
        let mut current = lock(&self.quota);
        let now = self.clock.now().as_u64();
        self.params
            .write(GcraParams::from_quota(&quota), |old, new| {
                // A CAS, not a store: a check that read the old quota and races this write must
                // either land first (and be carried over) or fail its own CAS and retry.
                let _ = self
                    .tat
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |tat| {
                        Some(requote(old, new, tat, now))
                    });
            });
        *current = quota;
    }

    /// The quota in force.
    pub fn quota(&self) -> Quota {
        *lock(&self.quota)
    }

    /// The clock this limiter reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}
