//! The in-memory sliding window: a ring of atomic words, each a slice number and a count, and
//! a per-slice cached allowance that makes the common check one read and one CAS.

use std::time::Duration;

use crate::clock::{Clock, MonotonicClock, saturating_nanos};
use crate::rate::{CheckError, Decision, QuotaError};
use crate::sync::{AtomicU64, Ordering};

use super::ring::{Ring, count, tagged, word};
use super::{WindowParams, evaluate};

/// A sliding-window rate limiter: at most `limit` in any window (at slice resolution), and at
/// most `limit · (1 + 1/slices)` in any interval as long as the window.
///
/// Memory is fixed: `slices + 1` atomic words (rounded up to a power of two), each holding a
/// slice number and its count, plus four words of bookkeeping. The first check in a new slice
/// empties the slots of the slices passed over since the last one (at most one ring), so no
/// slot is ever read with counts from an older turn, at any age of the clock; no lock is ever
/// taken.
///
/// The first check in a slice sums the completed slices once and caches how many the current
/// slice may still take; later checks in that slice read the cache and the current slot and
/// swap the slot. Denials and peeks read every slot, to compute an exact `retry_after`.
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
    // At least `slices + 1` slots, each `slice (low 32 bits) << 32 | count`.
    ring: Ring,
    // The fast path's view of the current slice, refreshed once per slice by the first check
    // that finds it out of date (see `check_n`):
    // - `hint`: the slice number plus one (0 = no valid cache, e.g. just after `set_limit`);
    // - `cache`: that slice's low 32 bits << 32 | its allowance, the most the current slice
    //   may hold given the completed slices: `min(limit − window, edge_cap − edge)`.
    hint: AtomicU64,
    cache: AtomicU64,
    limit: AtomicU64,
    slices: u32,
    slice_ns: u64,
    // How long a slice keeps counting against some interval: `(slices + 1) · slice_ns`.
    ring_ns: u64,
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
            ring: Ring::new(slices as usize + 1),
            hint: AtomicU64::new(0),
            cache: AtomicU64::new(0),
            limit: AtomicU64::new(u64::from(limit)),
            slices,
            slice_ns,
            ring_ns: slice_ns.saturating_mul(u64::from(slices) + 1),
            clock,
        })
    }

    /// Checks for, and on success records, one request.
    #[inline]
    pub fn check(&self) -> Decision {
        let now = self.clock.now().as_u64();
        match self.check_fast(now, 1) {
            Some(decision) => decision,
            None => self
                .check_slow(now, 1, true)
                .unwrap_or_else(|_| Decision::never()),
        }
    }

    /// Checks for, and on success records, `n` requests at once (all or nothing).
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the limit.
    #[inline]
    pub fn check_n(&self, n: u32) -> Result<Decision, CheckError> {
        let now = self.clock.now().as_u64();
        match self.check_fast(now, n) {
            Some(decision) => Ok(decision),
            None => self.check_slow(now, n, true),
        }
    }

    /// The admission of `n > 0` at `now` in the common case, or `None` for the slow path.
    #[inline(always)]
    fn check_fast(&self, now: u64, n: u32) -> Option<Decision> {
        // Fast path: `now` falls in the slice the cache was made for, so the completed slices
        // are summed up already and only the current slot is read and swapped. Everything
        // else (a new slice, a denial, `n == 0`) takes the exact slow path.
        let hint = self.hint.load(Ordering::Acquire);
        let slice = hint.wrapping_sub(1);
        let into = now.wrapping_sub(slice.wrapping_mul(self.slice_ns));
        if hint != 0 && into < self.slice_ns && n > 0 {
            let cache = self.cache.load(Ordering::Acquire);
            if cache >> 32 == slice & 0xFFFF_FFFF {
                let allowance = cache & 0xFFFF_FFFF;
                let limit = self.limit();
                // Everything the decision needs is read before the CAS: a locked instruction
                // holds back every load after it until it completes.
                let reset = self.ring_ns.saturating_sub(into);
                let slot = self.ring.slot(slice);
                let mut raw = slot.load(Ordering::Acquire);
                loop {
                    // Entering the slice emptied its slot: another slice's tag on a count is
                    // a rare straggler that the slow path sorts out.
                    let current = if tagged(raw, slice) || count(raw) == 0 {
                        count(raw)
                    } else {
                        break;
                    };
                    let wanted = current + u64::from(n);
                    if wanted > allowance {
                        break;
                    }
                    match slot.compare_exchange_weak(
                        raw,
                        word(slice, wanted),
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => {
                            return Some(Decision::allowed(limit, allowance - wanted, 1, reset));
                        }
                        Err(seen) => raw = seen,
                    }
                }
            }
        }
        None
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
        self.check_slow(now, n, false)
    }

    /// Changes the limit. The counts stay: what was admitted in the window still counts
    /// against the new limit, so a change never hands out a fresh window.
    ///
    /// A check racing the change on another thread may still be decided under the old limit.
    pub fn set_limit(&self, limit: u32) {
        self.limit.store(u64::from(limit), Ordering::SeqCst);
        // The cached allowance was made for the old limit.
        self.hint.store(0, Ordering::SeqCst);
    }

    /// The limit in force.
    #[inline]
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

    /// The exact decision from every slot of the window; records `n` when `record` and
    /// allowed, and refreshes the fast path's cache when it is out of date.
    #[cold]
    #[inline(never)]
    fn check_slow(&self, mut now: u64, n: u32, record: bool) -> Result<Decision, CheckError> {
        loop {
            let slice = now / self.slice_ns;
            let into = now - slice * self.slice_ns;
            if record {
                self.ring.enter(slice);
            }
            let slot = self.ring.slot(slice);
            let raw = slot.load(Ordering::Acquire);
            let latest = self.ring.latest();
            if self.ring.is_behind(slice, latest) {
                // Our reading of the clock is a whole ring turn old: read it again rather
                // than overwrite a newer slice. `latest` came from a reading of this clock,
                // so a monotonic clock reads at least that; the `max` only keeps a clock
                // that went back from spinning here.
                now = self
                    .clock
                    .now()
                    .as_u64()
                    .max(latest.saturating_mul(self.slice_ns));
                continue;
            }
            // Entered (`slice <= latest`), the slot holds this slice's count or, from a
            // thread that stalled, an older slice's, which counts as empty.
            let current = if tagged(raw, slice) && slice <= latest {
                count(raw)
            } else {
                0
            };
            let limit = self.limit.load(Ordering::SeqCst);
            let params = WindowParams {
                limit: limit as u32,
                slices: self.slices,
                slice_ns: self.slice_ns,
            };
            if record {
                self.refresh_cache(params, slice, latest);
            }
            let slices = self.slices as usize;
            let count = |j: usize| {
                if j == slices {
                    return current;
                }
                self.completed(slice, j, latest)
            };
            let decision = evaluate(params, count, into, n)?;
            if decision.is_denied() || n == 0 || !record {
                return Ok(decision);
            }
            let next = word(slice, current + u64::from(n));
            if slot
                .compare_exchange_weak(raw, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(decision);
            }
        }
    }

    /// The count of the completed slice `slices - j` slices before `slice` (0 if none).
    fn completed(&self, slice: u64, j: usize, latest: u64) -> u64 {
        match slice.checked_sub(u64::from(self.slices) - j as u64) {
            Some(s) => self.ring.count_of(s, latest),
            None => 0,
        }
    }

    /// Makes the cache describe `slice` under `params`, unless it already does.
    fn refresh_cache(&self, params: WindowParams, slice: u64, latest: u64) {
        if params.limit == 0 {
            return;
        }
        let hint = self.hint.load(Ordering::SeqCst);
        let tag = slice & 0xFFFF_FFFF;
        let mine = slice.saturating_add(1);
        // Up to date, or already made for a later slice by a thread with a newer clock reading.
        if hint > mine || hint == mine && self.cache.load(Ordering::SeqCst) >> 32 == tag {
            return;
        }
        // `window`: the completed slices that share an aligned window with this one; `edge`:
        // those plus the one before, all an interval of one window long can touch.
        let window: u64 = (1..self.slices as usize)
            .map(|j| self.completed(slice, j, latest))
            .sum();
        let edge = window + self.completed(slice, 0, latest);
        let allowance = u64::from(params.limit)
            .saturating_sub(window)
            .min(params.edge_cap().saturating_sub(edge))
            .min(u64::from(u32::MAX));
        self.cache.store((tag << 32) | allowance, Ordering::SeqCst);
        self.hint.fetch_max(mine, Ordering::SeqCst);
        // A `set_limit` that ran meanwhile may have cleared the hint before we set it; its
        // new limit is then visible here, and the cache made for the old one is dropped.
        if self.limit.load(Ordering::SeqCst) != u64::from(params.limit) {
            self.hint.store(0, Ordering::SeqCst);
        }
    }
}
