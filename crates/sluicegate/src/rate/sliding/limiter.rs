//! The in-memory sliding window: `slices + 1` atomic words, each a slice number and a count.

use std::time::Duration;

use crate::clock::{Clock, MonotonicClock, saturating_nanos};
use crate::rate::{CheckError, Decision, QuotaError};
use crate::sync::{AtomicU64, Ordering};

use super::{WindowParams, evaluate};

/// A sliding-window rate limiter: at most `limit` in any window (at slice resolution), and at
/// most `limit · (1 + 1/slices)` in any interval as long as the window.
///
/// Memory is fixed: `slices + 1` atomic words, each holding a slice number and its count. A
/// slot left over from an older turn of the ring counts as empty and is reset by the same
/// compare-and-swap that records the next admission, so no lock is ever taken.
///
/// Under concurrent use, threads that straddle a slice boundary may each see the other's
/// slice before it is written, so the bound can be exceeded by at most one admission per
/// racing thread at each boundary.
///
/// # Examples
///
/// ```
/// use sluicegate::clock::FakeClock;
/// use sluicegate::rate::SlidingWindow;
/// use std::time::Duration;
///
/// let clock = FakeClock::new();
/// let window = SlidingWindow::with_clock(3, Duration::from_secs(1), 10, clock.clone())?;
/// for _ in 0..3 {
///     assert!(window.check().is_allowed());
/// }
/// let denied = window.check();
/// assert!(denied.is_denied());
/// // With fewer than one request per slice, the edge cap `3 · (1 + 1/10)` rounds down to 3:
/// // the three must leave all 11 slices an interval of one window can touch.
/// assert_eq!(denied.retry_after(), Duration::from_millis(1100));
/// # Ok::<(), sluicegate::rate::QuotaError>(())
/// ```
#[derive(Debug)]
pub struct SlidingWindow<C: Clock = MonotonicClock> {
    slots: Box<[AtomicU64]>,
    limit: AtomicU64,
    slices: u32,
    slice_ns: u64,
    clock: C,
}

impl SlidingWindow<MonotonicClock> {
    /// The default number of slices a window is cut into: the edge burst stays within 10 %.
    pub const DEFAULT_SLICES: u32 = 10;

    /// At most `limit` per `window`, in [`DEFAULT_SLICES`](Self::DEFAULT_SLICES) slices, on
    /// the system's monotonic clock.
    ///
    /// # Errors
    ///
    /// As [`with_clock`](SlidingWindow::with_clock).
    pub fn new(limit: u32, window: Duration) -> Result<Self, QuotaError> {
        Self::with_clock(limit, window, Self::DEFAULT_SLICES, MonotonicClock)
    }
}

impl<C: Clock> SlidingWindow<C> {
    /// The most slices a window may be cut into.
    pub const MAX_SLICES: u32 = 1024;

    /// At most `limit` per `window`, counted in `slices` slices, reading time from `clock`.
    /// A `limit` of 0 denies everything. The window is rounded down to whole nanoseconds per
    /// slice. One slice is a fixed window.
    ///
    /// # Errors
    ///
    /// [`QuotaError::ZeroPeriod`] for a zero window, [`QuotaError::SliceCount`] for 0 or more
    /// than [`MAX_SLICES`](Self::MAX_SLICES) slices, [`QuotaError::WindowTooShort`] for a
    /// window of fewer nanoseconds than slices.
    pub fn with_clock(
        limit: u32,
        window: Duration,
        slices: u32,
        clock: C,
    ) -> Result<Self, QuotaError> {
        if window.is_zero() {
            return Err(QuotaError::ZeroPeriod);
        }
        if slices == 0 || slices > Self::MAX_SLICES {
            return Err(QuotaError::SliceCount(slices));
        }
        let slice_ns = saturating_nanos(window) / u64::from(slices);
        if slice_ns == 0 {
            return Err(QuotaError::WindowTooShort);
        }
        Ok(SlidingWindow {
            slots: (0..=slices).map(|_| AtomicU64::new(0)).collect(),
            limit: AtomicU64::new(u64::from(limit)),
            slices,
            slice_ns,
            clock,
        })
    }

    /// Checks for, and on success records, one request.
    pub fn check(&self) -> Decision {
        self.check_n(1).unwrap_or_else(|_| Decision::never())
    }

    /// Checks for, and on success records, `n` requests at once (all or nothing).
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the limit.
    pub fn check_n(&self, n: u32) -> Result<Decision, CheckError> {
        let mut now = self.clock.now().as_u64();
        loop {
            let slice = now / self.slice_ns;
            let slot = &self.slots[self.slot_of(slice)];
            let raw = slot.load(Ordering::Acquire);
            if is_newer(raw, slice) {
                // Our reading of the clock is a whole ring turn old: read it again rather
                // than overwrite a newer slice.
                now = self.clock.now().as_u64();
                continue;
            }
            let current = count_in(raw, slice);
            let decision = self.decide(slice, current, now, n)?;
            if decision.is_denied() || n == 0 {
                return Ok(decision);
            }
            let next = (slice << 32) | (current + u64::from(n));
            if slot
                .compare_exchange_weak(raw, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(decision);
            }
        }
    }

    /// The decision [`check`](Self::check) would make now, without recording anything.
    pub fn peek(&self) -> Decision {
        self.peek_n(1).unwrap_or_else(|_| Decision::never())
    }

    /// The decision [`check_n`](Self::check_n) would make now, without recording anything.
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the limit.
    ///
    /// `peek_n(0)` is allowed and its [`remaining`](Decision::remaining) is what is available
    /// now (`peek()` reports what would remain after one more).
    pub fn peek_n(&self, n: u32) -> Result<Decision, CheckError> {
        let now = self.clock.now().as_u64();
        let slice = now / self.slice_ns;
        let current = count_in(
            self.slots[self.slot_of(slice)].load(Ordering::Acquire),
            slice,
        );
        self.decide(slice, current, now, n)
    }

    /// Changes the limit. The counts stay: what was admitted in the window still counts
    /// against the new limit, so a change never hands out a fresh window.
    pub fn set_limit(&self, limit: u32) {
        self.limit.store(u64::from(limit), Ordering::Release);
    }

    /// The limit in force.
    pub fn limit(&self) -> u32 {
        self.limit.load(Ordering::Acquire) as u32
    }

    /// The window length (whole nanoseconds per slice × slices).
    pub fn window(&self) -> Duration {
        Duration::from_nanos(self.slice_ns * u64::from(self.slices))
    }

    /// The number of slices the window is cut into.
    pub fn slices(&self) -> u32 {
        self.slices
    }

    /// The clock this limiter reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    fn slot_of(&self, slice: u64) -> usize {
        (slice % (u64::from(self.slices) + 1)) as usize
    }

    fn decide(&self, slice: u64, current: u64, now: u64, n: u32) -> Result<Decision, CheckError> {
        let params = WindowParams {
            limit: self.limit(),
            slices: self.slices,
            slice_ns: self.slice_ns,
        };
        let slices = self.slices as usize;
        let ring = slices + 1;
        // The ring slot of the oldest slice counted; later slices follow it round the ring
        // (one division here instead of one per slot).
        let first_slot = self.slot_of(slice + 1);
        let count = |j: usize| {
            if j == slices {
                return current;
            }
            match (slice + j as u64).checked_sub(slices as u64) {
                Some(s) => {
                    let slot = first_slot + j;
                    let slot = if slot >= ring { slot - ring } else { slot };
                    count_in(self.slots[slot].load(Ordering::Acquire), s)
                }
                None => 0,
            }
        };
        evaluate(params, count, now % self.slice_ns, n)
    }
}

/// The count in slot word `raw` if it belongs to `slice`, else 0 (a stale slot is empty).
fn count_in(raw: u64, slice: u64) -> u64 {
    if raw >> 32 == slice & 0xFFFF_FFFF {
        raw & 0xFFFF_FFFF
    } else {
        0
    }
}

/// Whether slot word `raw` belongs to a slice after `slice` (its 32-bit slice number wraps).
fn is_newer(raw: u64, slice: u64) -> bool {
    let ahead = ((raw >> 32) as u32).wrapping_sub(slice as u32);
    ahead != 0 && ahead < u32::MAX / 2
}
