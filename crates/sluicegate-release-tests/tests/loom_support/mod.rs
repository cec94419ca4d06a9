//! The end-of-model check shared by the loom models.

use sluicegate::concurrency::{ConcurrencyLimiter, Snapshot};

/// Asserts the limiter settled: no permit leaked (throttled or bypass), no waiter left
/// behind, every admission completed. Returns the snapshot for the model's own counts.
pub(crate) fn settled(limiter: &ConcurrencyLimiter) -> Snapshot {
    let s = limiter.snapshot();
    assert_eq!(s.in_flight, 0, "permit leaked: {s:?}");
    assert_eq!(s.bypass_in_flight, 0, "bypass permit leaked: {s:?}");
    assert_eq!(s.queued, 0, "waiter left behind: {s:?}");
    assert_eq!(s.admitted, s.completed, "{s:?}");
    s
}
