//! [`LittlesLawConfig`]: the settings of [`LittlesLaw`](super::LittlesLaw) and their defaults.

use std::time::Duration;

/// Settings for [`LittlesLaw`](super::LittlesLaw). The defaults suit services with latencies from ~1 ms to ~1 s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LittlesLawConfig {
    /// Limit during warm-up, before the first bucket with enough samples (20).
    pub initial: usize,
    /// Floor (1).
    pub min: usize,
    /// Ceiling (1 000 000: no scale of its own; set one if the resource has a known bound).
    pub max: usize,
    /// Shortest bucket; the limit is recomputed when a bucket closes (100 ms). A bucket also
    /// lasts at least one recent mean RT and the time `min_samples` answers take.
    pub bucket: Duration,
    /// Buckets over which the max pass rate and the window RT are taken (10, i.e. 1 s).
    pub pass_buckets: usize,
    /// A bucket's mean RT counts only with at least this many successes (10).
    pub min_samples: usize,
    /// A probe runs until it can expect this many requests, and counts only with them (100):
    /// min RT drives every later limit, so it must not be a handful of lucky samples.
    pub probe_samples: usize,
    /// Limit ÷ BDP while demand stays below the limit (2.0): room for bursts, harmless
    /// because the limit is not what holds the load back.
    pub app_limited_gain: f64,
    /// While saturated, the standing queue inside the resource the limit aims for, as a
    /// fraction of the limit (0.04; at least 2 requests until the knee is found, then at least
    /// two standard errors of the queue estimate, within 1–2 requests): enough that no worker
    /// idles, little enough that waiting (and any contention) stays small.
    pub queue_target: f64,
    /// Share of the queue error corrected each bucket (0.5).
    pub queue_gain: f64,
    /// Growth factor per bucket while saturated and the resource shows no queue (1.1); also
    /// the largest step up.
    pub max_step: f64,
    /// Time between min-RT probes while saturated (5 s; at least 50 buckets).
    pub probe_interval: Duration,
    /// An early min-RT probe starts when the window's RT exceeds min RT by this factor (1.5)
    /// and, once a probe has measured the floor, the low RT shows a queue.
    pub probe_trigger: f64,
    /// How long a min-RT probe holds the limit down (200 ms; at least 2 buckets and 3 RTs).
    pub probe_duration: Duration,
    /// The probe's limit as a fraction of the last bucket's pass rate × min RT (0.85; at least
    /// half the limit): low enough to drain the resource's own queue, so the RTs measured are
    /// unqueued ones.
    pub probe_gain: f64,
    /// Drops, as a fraction of the samples of the last buckets holding at least
    /// `1 / drop_fraction` of them, that trigger a back-off (0.01).
    pub drop_fraction: f64,
    /// Factor on the limit on a back-off (0.9); also the largest step down a bucket.
    pub backoff: f64,
    /// After a back-off, the limit does not rise for this long (1 s; at least 10 buckets).
    pub cool_down: Duration,
}

impl Default for LittlesLawConfig {
    fn default() -> Self {
        LittlesLawConfig {
            initial: 20,
            min: 1,
            max: 1_000_000,
            bucket: Duration::from_millis(100),
            pass_buckets: 10,
            min_samples: 10,
            probe_samples: 100,
            app_limited_gain: 2.0,
            queue_target: 0.04,
            queue_gain: 0.5,
            max_step: 1.1,
            probe_interval: Duration::from_secs(5),
            probe_trigger: 1.5,
            probe_duration: Duration::from_millis(200),
            probe_gain: 0.85,
            drop_fraction: 0.01,
            backoff: 0.9,
            cool_down: Duration::from_secs(1),
        }
    }
}
