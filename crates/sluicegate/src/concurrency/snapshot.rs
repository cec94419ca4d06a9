//! A point-in-time view of a limiter: gauges and monotonic counters.

use std::fmt;
use std::time::Duration;

/// What a limiter is doing and has done. Gauges are current values; counters only grow
/// (from one snapshot to the next, whatever runs meanwhile: graph them as counters).
///
/// Every acquire ends in exactly one outcome, so at any quiet moment
/// `arrived() == admitted + rejected() + timed_out + cancelled + queued`.
///
/// # What the gauges may briefly show
///
/// - `in_flight` may exceed `limit`: after `set_max` lowered the limit (running work is
///   never interrupted), and for an instant while a caller racing on a full limiter takes
///   back the optimistic increment of its failed attempt (the lock-free path cannot tell
///   before it tries). No permit is ever granted beyond the limit in effect.
/// - `admitted` counts such a passing increment if a snapshot catches one, and, as a
///   counter, never takes it back: it may run ahead of the true count by at most one per
///   thread racing on a full limiter, until the next real admissions make up the difference.
///   `completed` is always exact.
/// - A waiter granted a permit at the very instant it was cancelled counts as admitted and
///   completed (its permit was granted, came back at once and went on to the next waiter),
///   not as cancelled.
///
/// # Examples
///
/// ```
/// use sluicegate::concurrency::ConcurrencyLimiter;
///
/// let limiter = ConcurrencyLimiter::new(2);
/// let permit = limiter.try_acquire().unwrap();
/// let s = limiter.snapshot();
/// assert_eq!((s.limit, s.in_flight, s.admitted, s.completed), (2, 1, 1, 0));
/// assert_eq!(s.to_string(), "limit 2, 1 in flight, 0 queued, open; admitted 1, completed 0");
/// # drop(permit);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The current limit (`set_max` changes it).
    pub limit: usize,
    /// Throttled permits held right now (see above for what it may briefly show).
    pub in_flight: usize,
    /// Callers waiting in the queue.
    pub queued: usize,
    /// Bypass permits held right now (not counted in `in_flight`).
    pub bypass_in_flight: usize,
    /// Whether the limiter is closed.
    pub closed: bool,
    /// Throttled permits ever granted, at once or after waiting.
    pub admitted: u64,
    /// Throttled permits ever released.
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

/// One line for logs and dashboards: the gauges, then the counters, zero counters left out.
impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "limit {}, {} in flight, {} queued",
            self.limit, self.in_flight, self.queued
        )?;
        if self.bypass_in_flight > 0 {
            write!(f, ", {} bypassing", self.bypass_in_flight)?;
        }
        f.write_str(if self.closed { ", closed" } else { ", open" })?;
        write!(
            f,
            "; admitted {}, completed {}",
            self.admitted, self.completed
        )?;
        let counters = [
            ("bypassed", self.bypassed),
            ("rejected (queue full)", self.rejected_queue_full),
            ("rejected (closed)", self.rejected_closed),
            ("rejected (predicted timeout)", self.rejected_predicted),
            ("timed out", self.timed_out),
            ("cancelled", self.cancelled),
        ];
        for (name, value) in counters.into_iter().filter(|(_, v)| *v > 0) {
            write!(f, ", {name} {value}")?;
        }
        if let Some(interval) = self.mean_release_interval {
            write!(f, "; a release every {interval:?}")?;
        }
        Ok(())
    }
}
