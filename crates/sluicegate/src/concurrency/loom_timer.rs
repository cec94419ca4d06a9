//! A queue timer that a loom model fires by hand: loom explores thread interleavings but has
//! no time, so a timeout racing a grant needs a timer that is just another thread's action.
//! Compiled only under `--cfg sluicegate_loom`.

use std::task::{Context, Poll, Waker};

use crate::sync::{Arc, AtomicU64, Mutex, Ordering, lock};

/// A timer that fires when [`fire`](Self::fire) is called. Clones share one timer.
#[derive(Clone, Debug)]
pub struct ManualTimer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    fired: AtomicU64,
    waker: Mutex<Option<Waker>>,
}

impl Default for ManualTimer {
    fn default() -> Self {
        Self::new()
    }
}

impl ManualTimer {
    /// A timer that has not fired.
    pub fn new() -> Self {
        ManualTimer {
            shared: Arc::new(Shared {
                fired: AtomicU64::new(0),
                waker: Mutex::new(None),
            }),
        }
    }

    /// Fires the timer and wakes the task waiting on it.
    pub fn fire(&self) {
        self.shared.fired.store(1, Ordering::Release);
        if let Some(waker) = lock(&self.shared.waker).take() {
            waker.wake();
        }
    }

    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
        // Register before checking, so a `fire` in between is not missed.
        *lock(&self.shared.waker) = Some(cx.waker().clone());
        if self.shared.fired.load(Ordering::Acquire) == 1 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}
