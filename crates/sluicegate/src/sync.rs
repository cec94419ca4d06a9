//! Synchronisation primitives: std normally, loom's model-checked twins under `--cfg sluicegate_loom`.
//!
//! Everything in the limiters that is shared between threads goes through this module, so the
//! loom models (`crates/sluicegate-release-tests/tests/loom_*.rs`) explore the real code, not a
//! copy of it.

#[cfg(sluicegate_loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(sluicegate_loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};
/// Parking a thread, for the blocking acquire.
#[cfg(sluicegate_loom)]
pub(crate) use loom::thread::{Thread, current, park};

#[cfg(not(sluicegate_loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(sluicegate_loom))]
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};
#[cfg(not(sluicegate_loom))]
pub(crate) use std::thread::{Thread, current, park};

/// Parks the thread for at most `timeout`. loom has no time: there it parks until unparked
/// (the models of the blocking acquire set no timeout).
pub(crate) fn park_timeout(timeout: std::time::Duration) {
    #[cfg(sluicegate_loom)]
    {
        let _ = timeout;
        park();
    }
    #[cfg(not(sluicegate_loom))]
    std::thread::park_timeout(timeout);
}

/// Locks `mutex`, ignoring poisoning: the limiter's state stays consistent across a panic,
/// because no user code runs while the lock is held.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(sluicegate_loom)]
    {
        mutex.lock().unwrap()
    }
    #[cfg(not(sluicegate_loom))]
    {
        mutex
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
