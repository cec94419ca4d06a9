//! Per-pool counters and histograms the limiter's snapshot does not hold: what the gate
//! answered, how long requests waited and how long the upstream took.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Why the gate answered a request itself, or that the upstream did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The upstream answered (any status).
    Forwarded,
    /// Every slot taken and the queue full.
    QueueFull,
    /// Waited the whole queue timeout.
    QueueTimeout,
    /// Would have timed out in the queue, so turned away at once.
    PredictedTimeout,
    /// The pool is closed (or closed while the request waited).
    Closed,
    /// Over the pool's rate or the client's.
    RateLimited,
    /// The upstream refused the connection or could not be reached.
    UpstreamUnreachable,
    /// The upstream broke the exchange (reset, malformed answer).
    UpstreamError,
    /// The upstream did not answer within the upstream timeout.
    UpstreamTimeout,
    /// The client went away while its request waited in the queue (or in the middle of its
    /// request body).
    ClientGone,
    /// The client's request body broke its framing (`400`).
    BadRequestBody,
    /// The client stopped sending its request body for `client_body_timeout` (`408`).
    ClientBodyTimeout,
    /// The request body was longer than `client_max_body_size` (`413`): said so by its
    /// `Content-Length` (nothing read or forwarded), or found so as it came.
    BodyTooLarge,
    /// A global pool on `deny` while Redis does not answer (`503`).
    StoreUnavailable,
}

impl Outcome {
    /// Every outcome, in metrics order.
    pub const ALL: [Outcome; 14] = [
        Outcome::Forwarded,
        Outcome::QueueFull,
        Outcome::QueueTimeout,
        Outcome::PredictedTimeout,
        Outcome::Closed,
        Outcome::RateLimited,
        Outcome::UpstreamUnreachable,
        Outcome::UpstreamError,
        Outcome::UpstreamTimeout,
        Outcome::ClientGone,
        Outcome::BadRequestBody,
        Outcome::ClientBodyTimeout,
        Outcome::BodyTooLarge,
        Outcome::StoreUnavailable,
    ];

    /// The stable name used in `X-Sluicegate-Reason`, logs, status and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Forwarded => "forwarded",
            Outcome::QueueFull => "queue_full",
            Outcome::QueueTimeout => "queue_timeout",
            Outcome::PredictedTimeout => "predicted_timeout",
            Outcome::Closed => "closed",
            Outcome::RateLimited => "rate_limited",
            Outcome::UpstreamUnreachable => "upstream_unreachable",
            Outcome::UpstreamError => "upstream_error",
            Outcome::UpstreamTimeout => "upstream_timeout",
            Outcome::ClientGone => "client_gone",
            Outcome::BadRequestBody => "bad_request_body",
            Outcome::ClientBodyTimeout => "client_body_timeout",
            Outcome::BodyTooLarge => "body_too_large",
            Outcome::StoreUnavailable => "store_unavailable",
        }
    }

    /// The outcome of a limiter rejection.
    pub fn of(rejected: &sluicegate::concurrency::Rejected) -> Self {
        use sluicegate::concurrency::Rejected;
        match rejected {
            Rejected::QueueFull { .. } => Outcome::QueueFull,
            Rejected::QueueTimeout { .. } => Outcome::QueueTimeout,
            Rejected::PredictedTimeout { .. } => Outcome::PredictedTimeout,
            Rejected::Closed { .. } => Outcome::Closed,
            // `Rejected` may grow; a reason the gate does not know yet reads as overload.
            _ => Outcome::QueueFull,
        }
    }
}

/// Upper bounds of the histogram buckets, in seconds.
pub const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// A Prometheus-style histogram of durations: lock-free, fixed buckets.
#[derive(Debug, Default)]
pub struct Histogram {
    /// Observations per bucket (not cumulative); the last one is `+Inf`.
    counts: [AtomicU64; BUCKETS.len() + 1],
    /// The sum in nanoseconds, modulo 2^64 (584 years): a sum of waits grows by the number
    /// of requests waiting each second, so a deep queue reaches that in days.
    sum_nanos: AtomicU64,
    /// How many times `sum_nanos` has wrapped.
    sum_wraps: AtomicU64,
}

impl Histogram {
    /// Records one duration.
    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(BUCKETS.len());
        self.counts[i].fetch_add(1, Relaxed);
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let before = self.sum_nanos.fetch_add(nanos, Relaxed);
        // Only the observation that carries the sum past 2^64 pays a second write.
        if before.checked_add(nanos).is_none() {
            self.sum_wraps.fetch_add(1, Relaxed);
        }
    }

    /// Cumulative counts per bucket (the last is `+Inf`, the total), and the sum in seconds.
    pub fn read(&self) -> ([u64; BUCKETS.len() + 1], f64) {
        let mut out = [0; BUCKETS.len() + 1];
        let mut total = 0u64;
        for (o, c) in out.iter_mut().zip(&self.counts) {
            total = total.wrapping_add(c.load(Relaxed));
            *o = total;
        }
        // The wraps around the sum, so that both are of one moment: a wrap counted between
        // the two reads is read again. (An observation that has wrapped the sum but not yet
        // counted it is an instant of two instructions, once in days.)
        let (wraps, nanos) = loop {
            let wraps = self.sum_wraps.load(Relaxed);
            let nanos = self.sum_nanos.load(Relaxed);
            if self.sum_wraps.load(Relaxed) == wraps {
                break (wraps, nanos);
            }
        };
        let sum = wraps as f64 * 2f64.powi(64) + nanos as f64;
        (out, sum / 1e9)
    }
}

/// What one pool has answered and measured since the gate started (kept across reloads).
#[derive(Debug, Default)]
pub struct Stats {
    outcomes: [AtomicU64; Outcome::ALL.len()],
    /// Requests that skipped the limits through a bypass rule.
    pub bypassed: AtomicU64,
    /// Answers whose body the upstream broke off (closed or reset the connection, broke the
    /// framing) or stopped sending for the upstream timeout, in the middle: counted
    /// `forwarded` at their head, and this too.
    pub broken_bodies: AtomicU64,
    /// Client connections cut at `send_timeout` (the client took none of its answer for
    /// that long) while this pool's answer was being sent: counted `forwarded` (and
    /// `completed`) too.
    pub send_timeouts: AtomicU64,
    /// Time from arrival to a slot, for requests that had to wait.
    pub queue_wait: Histogram,
    /// Time from forwarding to the upstream's response head, less the waits for the
    /// client's request body.
    pub upstream_latency: Histogram,
    /// The log of the pool's refusals (a summary each second under a flood).
    pub refusals: std::sync::Arc<super::RefusalLog>,
    /// Upgraded connections (WebSocket): open now, and opened since the gate started.
    pub tunnels: super::Tunnels,
    /// Limiters the pool has moved off, and what they counted.
    pub retired: super::Retired,
    /// Woken when the pool is closed or opened (the admin API, the kill switch): requests
    /// waiting for a global slot, outside the local limiter that turns away its own waiters,
    /// then ask it whether they are turned away.
    pub closing: tokio::sync::Notify,
}

impl Stats {
    /// Counts one request ending in `outcome`.
    pub fn count(&self, outcome: Outcome) {
        self.outcomes[outcome as usize].fetch_add(1, Relaxed);
    }

    /// Counts one request pool `name` turned away for `outcome`, and logs it: see
    /// [`RefusalLog`](super::RefusalLog) for what reaches the log.
    pub fn refuse(&self, name: &str, outcome: Outcome) {
        self.count(outcome);
        self.refusals.refused(name, outcome as usize);
    }

    /// As [`refuse`](Self::refuse), with what went wrong (logged with the first of a run
    /// and at `debug`): an upstream that cannot be reached fails every request at once, and
    /// a line each would flood the log just when the operator reads it.
    pub fn refuse_because(&self, name: &str, outcome: Outcome, error: &dyn std::fmt::Display) {
        self.count(outcome);
        self.refusals
            .refused_because(name, outcome as usize, Some(error));
    }

    /// Counts an answer of upstream `upstream` whose body broke off for `why`, and logs it:
    /// the 1st, 2nd, 4th, 8th… of pool `name`'s, with how many so far (a flood of them writes
    /// a line per doubling, not one each).
    pub fn broke_off(
        &self,
        name: &str,
        upstream: &dyn std::fmt::Display,
        why: &dyn std::fmt::Display,
    ) {
        if let Some(n) = count_logging_doublings(&self.broken_bodies) {
            tracing::warn!(
                pool = name,
                %upstream,
                broken_bodies = n,
                "upstream broke off an answer in the middle of its body ({why}); the client's connection was cut (lines at the 1st, 2nd, 4th, 8th… of the pool's)"
            );
        }
    }

    /// Counts a client connection cut at `send_timeout` (`timeout`) while pool `name`'s
    /// answer was sent to `peer` (for `client`, when trusted proxies named one), and logs it
    /// at `info`, as the client's other failures are (`client_body_timeout`): the 1st, 2nd,
    /// 4th, 8th… of the pool's, with how many so far.
    pub fn cut_at_send_timeout(
        &self,
        name: &str,
        peer: std::net::SocketAddr,
        client: Option<std::net::IpAddr>,
        timeout: Duration,
    ) {
        if let Some(n) = count_logging_doublings(&self.send_timeouts) {
            tracing::info!(
                pool = name,
                %peer,
                client = client.map(tracing::field::display),
                send_timeouts = n,
                "a client took none of its answer for {timeout:?} (send_timeout): its connection was cut in the middle of the answer (lines at the 1st, 2nd, 4th, 8th… of the pool's)"
            );
        }
    }

    /// Requests that ended in `outcome`. Clients that left a queue are counted as they
    /// leave (a local queue's by [`Admission`](super::Admission), a global pool's store
    /// queue by the proxy), never worked out from the limiters' counters.
    pub fn get(&self, outcome: Outcome) -> u64 {
        self.outcomes[outcome as usize].load(Relaxed)
    }
}

/// Adds one to `counter` (wrapping at its end) and says the count when it is one to log:
/// the 1st, 2nd, 4th, 8th… (a flood writes a line per doubling, not one each).
fn count_logging_doublings(counter: &AtomicU64) -> Option<u64> {
    let n = counter.fetch_add(1, Relaxed).wrapping_add(1);
    n.is_power_of_two().then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count of broken bodies wraps at its end as every counter here does, instead of
    /// overflowing (a panic in a debug build) in the `+ 1` that decides the log line.
    #[test]
    fn the_broken_bodies_count_wraps_at_its_end() {
        let stats = Stats::default();
        stats.broken_bodies.store(u64::MAX, Relaxed);
        stats.broke_off("api", &"http://127.0.0.1:9", &"reset");
        assert_eq!(stats.broken_bodies.load(Relaxed), 0);
        stats.broke_off("api", &"http://127.0.0.1:9", &"reset");
        assert_eq!(stats.broken_bodies.load(Relaxed), 1);
    }

    #[test]
    fn histogram_buckets_are_cumulative() {
        let h = Histogram::default();
        h.observe(Duration::from_micros(500));
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_secs(100));
        let (counts, sum) = h.read();
        assert_eq!(counts[0], 1);
        assert_eq!(counts[2], 2);
        assert_eq!(counts[BUCKETS.len() - 1], 2);
        assert_eq!(counts[BUCKETS.len()], 3);
        assert!((sum - 100.0035).abs() < 1e-6);
    }

    /// Defect pinned: the sum was kept in nanoseconds in a `u64`, which wraps after 584
    /// years of summed time, and a sum of waits grows by the number of requests waiting
    /// each second (Little's law): 21 days at an average of 10 000 queued, two at 100 000.
    /// `_sum` then dropped by 584 years, and Prometheus read a counter reset. Started just
    /// short of the wrap, it must keep growing.
    #[test]
    fn the_sum_keeps_growing_past_the_wrap_of_its_nanoseconds() {
        let h = Histogram::default();
        h.observe(Duration::from_nanos(u64::MAX - 1_000_000_000));
        let (_, before) = h.read();
        h.observe(Duration::from_secs(2));
        let (counts, after) = h.read();
        assert_eq!(counts[BUCKETS.len()], 2);
        let expected = (u64::MAX as f64 + 1e9) / 1e9;
        assert!(after > before, "{after} after {before}");
        assert!((after - expected).abs() < 1e-3 * expected, "{after}");
    }

    #[test]
    fn outcomes_index_their_own_counter() {
        let s = Stats::default();
        for (i, o) in Outcome::ALL.iter().enumerate() {
            assert_eq!(*o as usize, i);
        }
        s.count(Outcome::Forwarded);
        assert_eq!(s.get(Outcome::Forwarded), 1);
        assert_eq!(s.get(Outcome::ClientGone), 0);
    }
}
