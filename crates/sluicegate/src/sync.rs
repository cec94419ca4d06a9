//! Synchronisation primitives: std normally, loom's model-checked twins under `--cfg loom`.
//!
//! Everything in the limiters that is shared between threads goes through this module, so the
//! loom models in `tests/loom_*.rs` explore the real code, not a copy of it.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};

/// Locks `mutex`, ignoring poisoning: the limiter's state stays consistent across a panic,
/// because no user code runs while the lock is held.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(loom)]
    {
        mutex.lock().unwrap()
    }
    #[cfg(not(loom))]
    {
        mutex
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
