//! The ring of slice counters and its full-width bookkeeping: which turn of the ring a
//! 32-bit slot tag belongs to, for the whole life of a 64-bit clock.
//!
//! A slot word is `slice (low 32 bits) << 32 | count`. The tag alone wraps every 2^32 slices
//! (~50 days of 1 ms slices, 4 s of 1 ns ones), so the ring also keeps `latest`, the newest
//! slice *entered* (full width, only grows). Two rules make every tag unambiguous:
//!
//! - a slice is entered before anything is recorded in it, and entering empties the slots of
//!   the slices passed over on the way (at most one ring), so once `latest` is `L` every
//!   non-empty slot belongs to a slice in `(L − ring, L]`, where tags cannot collide;
//! - a count of 0 is empty whatever its tag (an untouched or emptied slot).
//!
//! A thread whose clock reading is a whole ring older than `latest` reads the clock again
//! rather than write into a slot that now belongs to a newer slice. The one case left is a
//! thread stalled for 2^32 slices between reading `latest` and its compare-and-swap: its one
//! write may land in a slice it does not belong to, which can only make that slice count
//! more (deny sooner), never admit more.

use crate::sync::{AtomicU64, Ordering};

const COUNT: u64 = 0xFFFF_FFFF;

/// The slot word of `count` admissions in `slice`.
#[inline(always)]
pub(super) fn word(slice: u64, count: u64) -> u64 {
    ((slice & COUNT) << 32) | count
}

/// Whether slot word `raw` carries the tag of `slice`.
#[inline(always)]
pub(super) fn tagged(raw: u64, slice: u64) -> bool {
    raw >> 32 == slice & COUNT
}

/// The count in slot word `raw`, whatever slice it belongs to.
#[inline(always)]
pub(super) fn count(raw: u64) -> u64 {
    raw & COUNT
}

#[derive(Debug)]
pub(super) struct Ring {
    // At least `slices + 1` slots, rounded up to a power of two so that the slot of a slice
    // is a mask, not a division.
    slots: Box<[AtomicU64]>,
    mask: u64,
    latest: AtomicU64,
}

impl Ring {
    /// A ring of at least `len` slots.
    pub(super) fn new(len: usize) -> Self {
        let len = len.next_power_of_two();
        Ring {
            slots: (0..len).map(|_| AtomicU64::new(0)).collect(),
            mask: len as u64 - 1,
            latest: AtomicU64::new(0),
        }
    }

    /// Slots in the ring.
    #[inline(always)]
    pub(super) fn len(&self) -> u64 {
        self.mask + 1
    }

    /// The slot of `slice`.
    #[inline(always)]
    pub(super) fn slot(&self, slice: u64) -> &AtomicU64 {
        &self.slots[(slice & self.mask) as usize]
    }

    /// The newest slice entered.
    #[inline]
    pub(super) fn latest(&self) -> u64 {
        self.latest.load(Ordering::SeqCst)
    }

    /// Whether a clock reading in `slice` is at least a whole ring older than `latest`: its
    /// slots may belong to newer slices by now, so it must read the clock again.
    #[inline]
    pub(super) fn is_behind(&self, slice: u64, latest: u64) -> bool {
        // A difference, not `slice + len`: that saturates in the last ring of the clock and
        // compared as behind, so the reader re-read the clock forever.
        latest.saturating_sub(slice) >= self.len()
    }

    /// The count recorded in `slice`, with `latest` read after any slot the caller relies on
    /// being current: 0 unless the slot carries the tag of `slice` and `slice` lies in
    /// `(latest − ring, latest]`.
    #[inline]
    pub(super) fn count_of(&self, slice: u64, latest: u64) -> u64 {
        if slice > latest || self.is_behind(slice, latest) {
            return 0;
        }
        let raw = self.slot(slice).load(Ordering::Acquire);
        if tagged(raw, slice) { count(raw) } else { 0 }
    }

    /// Makes `slice` entered: `latest ≥ slice`, and the slots of the slices passed over on the
    /// way hold nothing from older turns. Returns `latest`.
    pub(super) fn enter(&self, slice: u64) -> u64 {
        let mut latest = self.latest();
        while latest < slice {
            let first = if slice - latest >= self.len() {
                slice - self.mask
            } else {
                latest + 1
            };
            for s in first..=slice {
                self.empty(s);
            }
            match self
                .latest
                .compare_exchange(latest, slice, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return slice,
                Err(seen) => latest = seen,
            }
        }
        latest
    }

    /// Empties the slot of `slice` of counts from an older turn, unless another thread has
    /// entered `slice` meanwhile (its counts may then be real).
    fn empty(&self, slice: u64) {
        let slot = self.slot(slice);
        let mut raw = slot.load(Ordering::SeqCst);
        // `latest` is read after the slot: a count recorded in `slice` was recorded after
        // `latest` reached `slice`, so if this read sees it, the next one sees that `latest`.
        while count(raw) != 0 && self.latest() < slice {
            match slot.compare_exchange(raw, 0, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return,
                Err(seen) => raw = seen,
            }
        }
    }
}
