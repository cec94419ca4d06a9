//! The packed permit word: in-flight count, flags and the completed counter in one `u64`.
//!
//! ```text
//!  63                     25  24      23       22       21            0
//! +-------------------------+-------+--------+--------+---------------+
//! | completed (39, wraps)   |CLOSED |DRAINERS|WAITERS | in_flight (22)|
//! +-------------------------+-------+--------+--------+---------------+
//! ```
//!
//! Keeping the completed counter in the same word lets a release be a single `fetch_add`
//! (minus one in flight, plus one completed) and makes `admitted = completed + in_flight`
//! exact without a third atomic on the fast path. The 39-bit field wraps; [`Completed`]
//! extends it to 64 bits (see its docs).

use crate::sync::{AtomicU64, Ordering};

/// Largest number of permits a limiter can hand out: half of what the 22-bit field holds,
/// leaving the other half for optimistic increments that are about to be taken back (one per
/// thread at most) so they can never carry into the flags.
pub(crate) const MAX_PERMITS: u64 = (1 << 21) - 1;
const IN_FLIGHT_MASK: u64 = (1 << 22) - 1;
/// Set while the wait queue is not empty: fast-path acquires must not barge past waiters and
/// releases must look at the queue.
pub(crate) const WAITERS: u64 = 1 << 22;
/// Set while somebody waits in `drain()` for in-flight to reach zero.
pub(crate) const DRAINERS: u64 = 1 << 23;
/// Set between `close()` and reopening.
pub(crate) const CLOSED: u64 = 1 << 24;
/// Releases that must take the slow path.
pub(crate) const SLOW_RELEASE: u64 = WAITERS | DRAINERS;
/// Acquires that must take the slow path (besides a full limiter).
pub(crate) const SLOW_ACQUIRE: u64 = WAITERS | CLOSED;

const COMPLETED_SHIFT: u32 = 25;
const COMPLETED_BITS: u32 = 64 - COMPLETED_SHIFT;
/// One completed release.
pub(crate) const COMPLETED_ONE: u64 = 1 << COMPLETED_SHIFT;
/// The state change of a release that finished its work: one less in flight, one more done.
pub(crate) const RELEASE_COMPLETED: u64 = COMPLETED_ONE - 1;
const HALF: u64 = 1 << (COMPLETED_BITS - 1);
const FIELD: u64 = 1 << COMPLETED_BITS;

pub(crate) const fn in_flight(state: u64) -> u64 {
    state & IN_FLIGHT_MASK
}

pub(crate) const fn completed_field(state: u64) -> u64 {
    state >> COMPLETED_SHIFT
}

/// Extends the wrapping completed field of the state word to a monotonic `u64`.
///
/// The thread whose release carries the field across half of its range bumps `half_epochs`.
/// A reader then knows the true count `T` lies in `[epochs × HALF, epochs × HALF + FIELD)`
/// (a crossing may not be recorded yet, or one more may be; both stay inside that range), and
/// inside a range one field wide only one value has the low bits read from the state.
#[derive(Debug)]
pub(crate) struct Completed {
    half_epochs: AtomicU64,
}

impl Completed {
    pub(crate) fn new() -> Self {
        Completed {
            half_epochs: AtomicU64::new(0),
        }
    }

    /// Called with the state word as it was before a completed release.
    #[inline]
    pub(crate) fn on_release(&self, previous_state: u64) {
        // The field was HALF - 1 or FIELD - 1 exactly when its low bits are all ones: one
        // mask test on the hot path.
        const LOW_ONES: u64 = (HALF - 1) << COMPLETED_SHIFT;
        if previous_state & LOW_ONES == LOW_ONES {
            self.half_epochs.fetch_add(1, Ordering::Release);
        }
    }

    /// The monotonic count, given an epoch loaded (Acquire) before `state`.
    pub(crate) fn extend(epochs: u64, state: u64) -> u64 {
        let base = epochs.wrapping_mul(HALF);
        let offset = completed_field(state).wrapping_sub(base) & (FIELD - 1);
        base.wrapping_add(offset)
    }

    pub(crate) fn epochs(&self) -> u64 {
        self.half_epochs.load(Ordering::Acquire)
    }

    /// Tests only: a fresh word (nothing in flight, no flags) whose count stands at `n`, with
    /// the matching epochs recorded here; for driving real operations across the wraps.
    #[cfg(test)]
    pub(crate) fn start_at(&self, n: u64) -> u64 {
        self.half_epochs.store(n / HALF, Ordering::Relaxed);
        (n & (FIELD - 1)) << COMPLETED_SHIFT
    }
}

#[cfg(all(test, not(sluicegate_loom)))]
mod tests {
    use super::*;

    /// Replays `n` completed releases starting from `start` on a private word.
    fn count_through(start: u64, n: u64) -> (u64, Completed) {
        let completed = Completed::new();
        completed.half_epochs.store(start / HALF, Ordering::Relaxed);
        let mut state = (start & (FIELD - 1)) << COMPLETED_SHIFT | 1;
        for _ in 0..n {
            completed.on_release(state);
            state = state.wrapping_add(RELEASE_COMPLETED).wrapping_add(1);
        }
        (state, completed)
    }

    #[test]
    fn completed_counter_survives_field_wraps() {
        for start in [0, HALF - 3, FIELD - 3, 5 * FIELD - 2, 7 * HALF - 1] {
            let (state, completed) = count_through(start, 10);
            assert_eq!(
                Completed::extend(completed.epochs(), state),
                start + 10,
                "start {start}"
            );
        }
    }

    #[test]
    fn completed_counter_tolerates_an_unrecorded_crossing() {
        // The field crossed the half mark but the crossing thread has not bumped the epoch yet.
        let state = ((HALF + 2) & (FIELD - 1)) << COMPLETED_SHIFT;
        assert_eq!(Completed::extend(0, state), HALF + 2);
        let state = 3 << COMPLETED_SHIFT; // wrapped past FIELD, epoch still says 1 half
        assert_eq!(Completed::extend(1, state), FIELD + 3);
    }

    #[test]
    fn release_word_moves_one_permit_to_completed() {
        let state = 3 | WAITERS;
        let after = state.wrapping_add(RELEASE_COMPLETED);
        assert_eq!(in_flight(after), 2);
        assert_eq!(completed_field(after), 1);
        assert_eq!(after & WAITERS, WAITERS);
    }
}
