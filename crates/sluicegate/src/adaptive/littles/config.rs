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
    /// A probe runs until it can expect this many requests, and counts only with half of them
    /// (100): min RT drives every later limit, so it must not be a handful of lucky samples.
    /// It stops sooner once its low RT reads as precisely as a bucket's (as many answers, no
    /// larger standard error), if it drained and reads the same regime.
    pub probe_samples: usize,
    /// Limit ÷ BDP while demand stays below the limit (2.0): room for bursts, harmless
    /// because the limit is not what holds the load back.
    pub app_limited_gain: f64,
    /// While saturated, the most standing queue inside the resource the limit aims for, as a
    /// fraction of the limit (0.04, at least 2 requests). Until a probe has measured the floor
    /// it is the target (the estimate's noise, 1–2 requests, where that is more); after, the
    /// target is two standard errors of the queue estimate, at least one request, at most this
    /// share: enough that no worker idles, little enough that waiting (and any contention)
    /// stays small.
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
    /// `1 / drop_fraction` of them, that trigger a back-off (0.01): beyond the share of drops
    /// the resource shows while it keeps no queue, and by more than chance (the buckets then
    /// hold more samples). Drops answered sooner than most answers are refusals and not
    /// counted.
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

/// The shortest bucket [`LittlesLawConfig::sanitized`] keeps: a bucket of zero closes at every
/// sample, with too few samples to count, and the limit collapsed to 1.
const MIN_BUCKET: Duration = Duration::from_millis(1);

/// The longest `bucket`, `probe_interval`, `probe_duration` and `cool_down`
/// [`LittlesLawConfig::sanitized`] keeps: a day, far past any resource's round trip, and small
/// enough that the spans built from them (a probe of five shortest spans, an interval of 50
/// buckets spaced fourfold) stay far inside the clock's range.
const MAX_SPAN: Duration = Duration::from_secs(86_400);

/// The most `pass_buckets`, `min_samples` and `probe_samples` [`LittlesLawConfig::sanitized`]
/// keeps: the window's buckets are kept and walked on each close, and the counts are products'
/// factors; a million is far past any window a limit can use.
const MAX_COUNT: usize = 1_000_000;

impl LittlesLawConfig {
    /// These settings brought into the ranges [`LittlesLaw`](super::LittlesLaw) works in,
    /// never a panic on a later sample: `max` below `min` is raised to `min` (the floor wins,
    /// as in the other algorithms); `bucket` is at least 1 ms, and it, `probe_interval`,
    /// `probe_duration` and `cool_down` at most a day; `pass_buckets`, `min_samples`
    /// and `probe_samples` within 1 and a million; `queue_target`, `queue_gain`, `probe_gain`,
    /// `drop_fraction` and `backoff` within `[0, 1]` (`drop_fraction` and `backoff` above 0);
    /// `app_limited_gain`, `max_step` and `probe_trigger` at least 1. A gain that is not a
    /// finite number (NaN, infinite) takes its default.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use sluicegate::adaptive::LittlesLawConfig;
    ///
    /// let c = LittlesLawConfig { bucket: Duration::ZERO, backoff: f64::NAN, ..Default::default() };
    /// let c = c.sanitized();
    /// assert_eq!(c.bucket, Duration::from_millis(1));
    /// assert_eq!(c.backoff, LittlesLawConfig::default().backoff);
    /// ```
    #[must_use]
    pub fn sanitized(mut self) -> Self {
        let d = LittlesLawConfig::default();
        let finite = |v: f64, default: f64| if v.is_finite() { v } else { default };
        self.max = self.max.max(self.min);
        self.bucket = self.bucket.clamp(MIN_BUCKET, MAX_SPAN);
        self.probe_interval = self.probe_interval.min(MAX_SPAN);
        self.probe_duration = self.probe_duration.min(MAX_SPAN);
        self.cool_down = self.cool_down.min(MAX_SPAN);
        self.pass_buckets = self.pass_buckets.clamp(1, MAX_COUNT);
        self.min_samples = self.min_samples.clamp(1, MAX_COUNT);
        self.probe_samples = self.probe_samples.clamp(1, MAX_COUNT);
        self.app_limited_gain = finite(self.app_limited_gain, d.app_limited_gain).max(1.0);
        self.queue_target = finite(self.queue_target, d.queue_target).clamp(0.0, 1.0);
        self.queue_gain = finite(self.queue_gain, d.queue_gain).clamp(0.0, 1.0);
        self.max_step = finite(self.max_step, d.max_step).max(1.0);
        self.probe_trigger = finite(self.probe_trigger, d.probe_trigger).max(1.0);
        self.probe_gain = finite(self.probe_gain, d.probe_gain).clamp(0.0, 1.0);
        // Positive: a back-off is a fraction of the limit, and drops are counted against
        // `1 / drop_fraction` samples.
        self.drop_fraction = finite(self.drop_fraction, d.drop_fraction).clamp(1e-6, 1.0);
        self.backoff = finite(self.backoff, d.backoff).clamp(0.01, 1.0);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive::{LimitAlgorithm, LittlesLaw, Sample};
    use crate::clock::Nanos;

    /// Defect pinned (review 3, item 9): `LittlesLaw` with NaN gains panicked on samples
    /// (`f64::clamp` with a NaN bound), and `bucket = 0` was taken and collapsed the limit
    /// to one. And (uptime audit, 2026-12-04): `probe_duration: Duration::MAX` panicked in the
    /// first probe (`shortest * 5` overflowed). Sanitized settings are the defaults where the numbers were not numbers, in range
    /// elsewhere, and a limiter built on them runs without a panic, within its bounds.
    #[test]
    fn sanitized_settings_are_in_range_and_run_without_a_panic() {
        let d = LittlesLawConfig::default();
        assert_eq!(d.sanitized(), d, "the defaults are in range");
        let odd = [
            LittlesLawConfig {
                min: 10,
                max: 5,
                ..d
            },
            LittlesLawConfig {
                bucket: Duration::ZERO,
                pass_buckets: 0,
                min_samples: 0,
                probe_samples: 0,
                ..d
            },
            LittlesLawConfig {
                queue_gain: f64::NAN,
                backoff: f64::NAN,
                max_step: f64::NAN,
                app_limited_gain: f64::NAN,
                queue_target: f64::INFINITY,
                probe_trigger: f64::NEG_INFINITY,
                probe_gain: f64::NAN,
                drop_fraction: f64::NAN,
                ..d
            },
            LittlesLawConfig {
                backoff: 2.0,
                max_step: 0.5,
                drop_fraction: 0.0,
                queue_gain: -1.0,
                ..d
            },
            // Durations at their ceiling: each on its own, so the others keep the limiter
            // moving through probes and back-offs.
            LittlesLawConfig {
                probe_duration: Duration::MAX,
                ..d
            },
            LittlesLawConfig {
                probe_interval: Duration::MAX,
                ..d
            },
            LittlesLawConfig {
                cool_down: Duration::MAX,
                ..d
            },
            LittlesLawConfig {
                bucket: Duration::MAX,
                ..d
            },
            LittlesLawConfig {
                probe_samples: usize::MAX,
                min_samples: usize::MAX,
                pass_buckets: usize::MAX,
                ..d
            },
        ];
        for cfg in odd {
            let c = cfg.sanitized();
            for v in [
                c.app_limited_gain,
                c.queue_target,
                c.queue_gain,
                c.max_step,
                c.probe_trigger,
                c.probe_gain,
                c.drop_fraction,
                c.backoff,
            ] {
                assert!(v.is_finite(), "{c:?}");
            }
            assert!(
                c.backoff <= 1.0 && c.max_step >= 1.0 && c.min <= c.max,
                "{c:?}"
            );
            assert!(!c.bucket.is_zero(), "{c:?}");
            // The constructor sanitizes what it is given: the raw settings run as well.
            run_without_a_panic(c);
            run_without_a_panic(cfg);
        }
        let nan = LittlesLawConfig {
            queue_gain: f64::NAN,
            ..d
        }
        .sanitized();
        assert_eq!(nan.queue_gain, d.queue_gain);
        let zero = LittlesLawConfig {
            bucket: Duration::ZERO,
            ..d
        }
        .sanitized();
        assert_eq!(zero.bucket, MIN_BUCKET);
        let long = LittlesLawConfig {
            probe_duration: Duration::MAX,
            ..d
        }
        .sanitized();
        assert_eq!(long.probe_duration, MAX_SPAN);
    }

    /// A limiter built on `raw` (sanitized by the constructor) takes 20 000 samples without
    /// a panic, its limit within the sanitized bounds.
    fn run_without_a_panic(raw: LittlesLawConfig) {
        let c = raw.sanitized();
        let mut l = LittlesLaw::new(raw);
        let mut t = 0u64;
        for i in 0..20_000u64 {
            t += 1_000_000;
            let rt = Duration::from_micros(500 + (i * 7919) % 50_000);
            let in_flight = (i % 50) as usize;
            let s = if i % 13 == 0 {
                Sample::dropped(Nanos::new(t), rt, in_flight)
            } else {
                Sample::success(Nanos::new(t), rt, in_flight)
            };
            let limit = l.on_sample(&s);
            assert!((c.min..=c.max).contains(&limit), "{raw:?}: {limit}");
        }
    }
}
