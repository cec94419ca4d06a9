//! What the gate holds in memory reading ahead, both ways: request bodies read before their
//! request asks for a slot (`client_body_buffer_size`) and answers read ahead of a slow
//! client (`response_buffer_size`), counted together against one gate-wide cap
//! (`max_buffered_bytes`). Past the cap nothing more is read ahead: a body (either way)
//! is streamed as with a bound of `0`, its request holding its slot.
//!
//! A buffer may grow only while the gate-wide count is below the cap, so the count can pass
//! it by one read (8 KiB from the gate's own upstream connections, one of hyper's frames
//! otherwise) per buffer growing at that moment. What hyper queues for a client's socket
//! (up to 16 frames) and the kernel's socket buffers are not counted: they are held whether
//! or not the gate reads ahead.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// The gate-wide count of bytes held by read-ahead buffers, and what reading ahead did
/// (kept across reloads; `/status` `buffers`, `/metrics` `sluicegate_buffer*`).
#[derive(Debug, Default)]
pub struct Buffers {
    held: AtomicUsize,
    /// Answers the upstream finished while part of them still waited in the gate for the
    /// client: their slot was freed before the client had them.
    answers_freed_early: AtomicU64,
    /// Answers the gate stopped reading ahead at `response_buffer_size`: their slot was
    /// held until the client had taken enough of them.
    answers_at_bound: AtomicU64,
    /// Bodies (either way) the gate stopped reading ahead, or never read ahead, because the
    /// buffers held `max_buffered_bytes`.
    at_cap: AtomicU64,
}

/// Which count of [`Buffers`] an event goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// See [`Buffers::answers_freed_early`].
    AnswerFreedEarly,
    /// See [`Buffers::answers_at_bound`].
    AnswerAtBound,
    /// See [`Buffers::at_cap`].
    AtCap,
}

impl Buffers {
    /// Bytes the read-ahead buffers hold now.
    pub fn held(&self) -> usize {
        self.held.load(Relaxed)
    }

    /// Answers the upstream finished while part of them still waited in the gate (their
    /// slot freed before the client had them).
    pub fn answers_freed_early(&self) -> u64 {
        self.answers_freed_early.load(Relaxed)
    }

    /// Answers whose read-ahead stopped at `response_buffer_size` (their slot held until the
    /// client caught up).
    pub fn answers_at_bound(&self) -> u64 {
        self.answers_at_bound.load(Relaxed)
    }

    /// Bodies, either way, not read ahead (further) because the buffers held
    /// `max_buffered_bytes`.
    pub fn at_cap(&self) -> u64 {
        self.at_cap.load(Relaxed)
    }

    pub(crate) fn count(&self, event: Event) {
        let counter = match event {
            Event::AnswerFreedEarly => &self.answers_freed_early,
            Event::AnswerAtBound => &self.answers_at_bound,
            Event::AtCap => &self.at_cap,
        };
        counter.fetch_add(1, Relaxed);
    }
}

/// The read-ahead settings in force and the gate-wide count they feed: one value per state
/// (a reload makes a new one on the same [`Buffers`]), shared by its pools.
#[derive(Debug, Default)]
pub struct Buffering {
    /// Most of an answer read ahead of its client (`response_buffer_size`; `0`: none).
    pub answer: usize,
    /// Most bytes all read-ahead buffers hold together (`max_buffered_bytes`).
    pub total: usize,
    /// The count, kept across reloads.
    pub buffers: Arc<Buffers>,
}

impl Buffering {
    /// Whether a buffer holding `has` bytes, `uncounted` of them not yet in the gate-wide
    /// count, may read more: a cap of `0` reads nothing ahead; else a buffer holding nothing
    /// yet may (one read is what streaming takes too), and one holding something while the
    /// gate-wide count is below the cap.
    pub(crate) fn may_grow(&self, has: usize, uncounted: usize) -> bool {
        self.total > 0 && (has == 0 || self.buffers.held() + uncounted < self.total)
    }
}

/// Bytes one buffer holds, counted in [`Buffers`]; given back when dropped.
#[derive(Debug)]
pub(crate) struct Counted {
    buffers: Arc<Buffers>,
    n: usize,
}

impl Counted {
    /// Counts nothing yet.
    pub(crate) fn new(buffers: Arc<Buffers>) -> Self {
        Counted { buffers, n: 0 }
    }

    /// The buffer holds `n` bytes now.
    pub(crate) fn set(&mut self, n: usize) {
        if n > self.n {
            self.buffers.held.fetch_add(n - self.n, Relaxed);
        } else if n < self.n {
            self.buffers.held.fetch_sub(self.n - n, Relaxed);
        }
        self.n = n;
    }

    /// The bytes counted.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// The same bytes counted once more, for another holder that keeps them alive (a copy
    /// kept to send a body again): given back when that one drops.
    pub(crate) fn another(&self) -> Self {
        let mut counted = Counted::new(self.buffers.clone());
        counted.set(self.n);
        counted
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.set(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every buffer's bytes come back when it drops, whatever it held last; a buffer may
    /// grow while the count is below the cap, and one holding nothing always may.
    #[test]
    fn counted_bytes_come_back_and_the_cap_stops_growth() {
        let b = Buffering {
            answer: 10,
            total: 100,
            buffers: Arc::default(),
        };
        let mut one = Counted::new(b.buffers.clone());
        let mut two = Counted::new(b.buffers.clone());
        one.set(60);
        two.set(30);
        assert_eq!(b.buffers.held(), 90);
        assert!(b.may_grow(30, 0));
        two.set(45);
        assert_eq!(b.buffers.held(), 105);
        assert!(!b.may_grow(45, 0), "past the cap");
        assert!(b.may_grow(0, 0), "nothing held: one read, as streaming");
        let none = Buffering {
            total: 0,
            ..Buffering::default()
        };
        assert!(!none.may_grow(0, 0), "a cap of 0 reads nothing ahead");
        one.set(10);
        assert_eq!(b.buffers.held(), 55);
        assert!(b.may_grow(10, 40));
        assert!(!b.may_grow(10, 50), "what is not counted yet counts");
        drop(two);
        assert_eq!(b.buffers.held(), 10);
        drop(one);
        assert_eq!(b.buffers.held(), 0);
    }
}
