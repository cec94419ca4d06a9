//! A point-in-time view of a limiter: gauges and monotonic counters.

use std::time::Duration;

/// What a limiter is doing and has done. Gauges are current values; counters only grow.
///
/// Every acquire ends in exactly one outcome, so at any quiet moment
/// `arrived() == admitted + rejected() + timed_out + cancelled + queued`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The current limit (`set_max` changes it).
    pub limit: usize,
    /// Throttled permits held right now.
    pub in_flight: usize,
    /// Callers waiting in the queue.
    pub queued: usize,
    /// Bypass permits held right now (not counted in `in_flight`).
    pub bypass_in_flight: usize,
    /// Whether the limiter is closed.
    pub closed: bool,
    /// Throttled permits ever granted, at once or after waiting.
    pub admitted: u64,
    /// Throttled permits ever released after use.
    pub completed: u64,
    /// Bypass permits ever handed out.
    pub bypassed: u64,
    /// Turned away because every permit was taken and the queue was full.
    pub rejected_queue_full: u64,
    /// Turned away, or taken out of the queue, because the limiter was closed.
    pub rejected_closed: u64,
    /// Turned away because the expected wait exceeded the caller's timeout.
    pub rejected_predicted: u64,
    /// Gave up after waiting the whole queue timeout.
    pub timed_out: u64,
    /// Left the queue because the caller went away (its future was dropped).
    pub cancelled: u64,
    /// Smoothed time between releases while callers waited (predictive mode only).
    pub mean_release_interval: Option<Duration>,
}

impl Snapshot {
    /// Every rejection, whatever the reason (timeouts and cancellations not included).
    pub fn rejected(&self) -> u64 {
        self.rejected_queue_full + self.rejected_closed + self.rejected_predicted
    }

    /// Every throttled acquire that has started.
    pub fn arrived(&self) -> u64 {
        self.admitted + self.rejected() + self.timed_out + self.cancelled + self.queued as u64
    }
}
