//! A quota that can change while checks read it: a sequence lock over two atomic words.

use crate::sync::{AtomicU64, Mutex, Ordering, lock};

use super::GcraParams;

/// Holds the current [`GcraParams`]. Reads are lock-free (retried in the rare case a write
/// overlaps); writes are serialised by a mutex and bump `seq` to odd while in progress.
#[derive(Debug)]
pub(crate) struct ParamsCell {
    seq: AtomicU64,
    t: AtomicU64,
    burst: AtomicU64,
    writer: Mutex<()>,
}

impl ParamsCell {
    pub(crate) fn new(params: GcraParams) -> Self {
        ParamsCell {
            seq: AtomicU64::new(0),
            t: AtomicU64::new(params.t),
            burst: AtomicU64::new(u64::from(params.burst)),
            writer: Mutex::new(()),
        }
    }

    /// The sequence number to pass to [`ParamsCell::unchanged_since`], and the parameters.
    #[inline]
    pub(crate) fn read(&self) -> (u64, GcraParams) {
        loop {
            let seq = self.seq.load(Ordering::Acquire);
            if seq & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let t = self.t.load(Ordering::Acquire);
            let burst = self.burst.load(Ordering::Acquire) as u32;
            if self.seq.load(Ordering::Acquire) == seq {
                return (seq, GcraParams { t, burst });
            }
        }
    }

    /// The parameters and the sequence number to validate them with: unlike
    /// [`read`](Self::read) this does not check the sequence again itself, so a caller that
    /// reads more state under the same sequence checks once, with
    /// [`unchanged_since`](Self::unchanged_since), after all of its reads.
    #[inline]
    pub(crate) fn read_unvalidated(&self) -> (u64, GcraParams) {
        let mut seq = self.seq.load(Ordering::Acquire);
        while seq & 1 == 1 {
            std::hint::spin_loop();
            seq = self.seq.load(Ordering::Acquire);
        }
        let t = self.t.load(Ordering::Acquire);
        let burst = self.burst.load(Ordering::Acquire) as u32;
        (seq, GcraParams { t, burst })
    }

    /// Whether no write started since `read` returned `seq`.
    #[inline]
    pub(crate) fn unchanged_since(&self, seq: u64) -> bool {
        self.seq.load(Ordering::SeqCst) == seq
    }

    /// Runs `migrate(old, new)` and installs `new`, with readers held off in between.
    pub(crate) fn write(&self, new: GcraParams, migrate: impl FnOnce(GcraParams, GcraParams)) {
        let _guard = lock(&self.writer);
        let (_, old) = self.read();
        self.seq.fetch_add(1, Ordering::SeqCst);
        migrate(old, new);
        self.t.store(new.t, Ordering::SeqCst);
        self.burst.store(u64::from(new.burst), Ordering::SeqCst);
        self.seq.fetch_add(1, Ordering::SeqCst);
    }
}
