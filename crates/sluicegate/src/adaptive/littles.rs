//! [`LittlesLaw`]: ours. `limit = max pass rate × min RT` (the BBR family of Sentinel, Kratos
//! and go-zero), made robust: warm-up, floor and ceiling, headroom, a drop response with
//! cool-down, and a periodic re-probe of min RT so it cannot drift.

use super::algorithm::{LimitAlgorithm, Outcome, Sample, clamp};
use crate::clock::Nanos;
use std::collections::VecDeque;
use std::time::Duration;

/// Settings for [`LittlesLaw`]. The defaults suit services with latencies from ~1 ms to ~1 s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LittlesLawConfig {
    /// Limit during warm-up, before the first bucket with enough samples (20).
    pub initial: usize,
    /// Floor (1).
    pub min: usize,
    /// Ceiling (1000).
    pub max: usize,
    /// Length of one bucket; the limit is recomputed when a bucket closes (100 ms).
    pub bucket: Duration,
    /// Buckets over which the max pass rate is taken (10, i.e. 1 s).
    pub pass_buckets: usize,
    /// A bucket's mean RT counts only with at least this many successes (10).
    pub min_samples: usize,
    /// Gain `g = clamp(tolerance × min_rt / bucket_rt, 1, 2)`: extra room while RT is near
    /// its minimum (the resource is not queueing), none once RT is inflated (1.5).
    pub rtt_tolerance: f64,
    /// Time between min-RT probes (2 s).
    pub probe_interval: Duration,
    /// How long a probe holds the limit down (200 ms).
    pub probe_duration: Duration,
    /// Factor on the limit while probing (0.75): low enough to drain the resource's own
    /// queue, so the RT measured is the unqueued one.
    pub probe_gain: f64,
    /// Drops in a bucket, as a fraction of its samples, that trigger a back-off (0.01).
    pub drop_fraction: f64,
    /// Factor on the limit on a back-off (0.9).
    pub backoff: f64,
    /// After a back-off, the limit does not rise for this long (1 s).
    pub cool_down: Duration,
}

impl Default for LittlesLawConfig {
    fn default() -> Self {
        LittlesLawConfig {
            initial: 20,
            min: 1,
            max: 1000,
            bucket: Duration::from_millis(100),
            pass_buckets: 10,
            min_samples: 10,
            rtt_tolerance: 1.5,
            probe_interval: Duration::from_secs(2),
            probe_duration: Duration::from_millis(200),
            probe_gain: 0.75,
            drop_fraction: 0.01,
            backoff: 0.9,
            cool_down: Duration::from_secs(1),
        }
    }
}

/// A min-RT probe: the limit is held down over `[start, end)`; requests that start then are
/// measured until `done`, so slow ones are not left out of the mean.
#[derive(Clone, Copy, Debug)]
struct Probe {
    start: Nanos,
    end: Nanos,
    done: Nanos,
}

#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    passes: u64,
    rt_sum: Duration,
    drops: u64,
}

impl Bucket {
    fn mean_rt(&self, min_samples: usize) -> Option<Duration> {
        (self.passes >= min_samples as u64 && self.passes > 0)
            .then(|| self.rt_sum / u32::try_from(self.passes).unwrap_or(u32::MAX))
    }
}

/// Little's law with a window of buckets: `bdp = max pass rate × min RT`,
/// `limit = ceil(bdp × g + √bdp)` with `g = clamp(tolerance × min_rt / bucket_rt, 1, 2)`.
///
/// - **Warm-up**: `initial` until a bucket has `min_samples` successes.
/// - **Re-probe**: every `probe_interval` the limit is held at `probe_gain ×` for
///   `probe_duration`; the mean RT of requests that *started* during the probe replaces min RT,
///   so min RT follows the resource up as well as down instead of drifting.
/// - **Drops**: a bucket with more than `drop_fraction` drops multiplies the limit by
///   `backoff`; for `cool_down` after that the limit may fall but not rise.
/// - Always within `[min, max]`.
///
/// Buckets are indexed by each sample's end time, so the algorithm needs no clock of its own.
#[derive(Clone, Debug)]
pub struct LittlesLaw {
    c: LittlesLawConfig,
    limit: usize,
    /// The limit outside probes (what a probe scales down).
    base: usize,
    current_idx: Option<u64>,
    current: Bucket,
    closed: VecDeque<Bucket>,
    min_rt: Option<Duration>,
    last_rt: Option<Duration>,
    next_probe: Nanos,
    probe: Option<Probe>,
    probe_rt: Bucket,
    cool_until: Nanos,
}

impl LittlesLaw {
    /// A Little's-law limit starting at `config.initial` (clamped to `[min, max]`).
    pub fn new(config: LittlesLawConfig) -> Self {
        let limit = clamp(config.initial, config.min, config.max);
        LittlesLaw {
            c: config,
            limit,
            base: limit,
            current_idx: None,
            current: Bucket::default(),
            closed: VecDeque::new(),
            min_rt: None,
            last_rt: None,
            next_probe: Nanos::ZERO + config.probe_interval,
            probe: None,
            probe_rt: Bucket::default(),
            cool_until: Nanos::ZERO,
        }
    }

    /// The min RT in use, once measured.
    pub fn min_rt(&self) -> Option<Duration> {
        self.min_rt
    }

    /// Whether a min-RT probe is in progress (holding the limit down or measuring).
    pub fn probing(&self) -> bool {
        self.probe.is_some()
    }

    /// Largest successes per second over the closed buckets of the window.
    fn max_pass_rate(&self) -> f64 {
        let max = self.closed.iter().map(|b| b.passes).max().unwrap_or(0);
        max as f64 / self.c.bucket.as_secs_f64()
    }

    fn close_bucket(&mut self, closed_at: Nanos) {
        let b = std::mem::take(&mut self.current);
        self.closed.push_back(b);
        while self.closed.len() > self.c.pass_buckets.max(1) {
            self.closed.pop_front();
        }
        self.last_rt = b.mean_rt(self.c.min_samples);
        if let Some(rt) = self.last_rt {
            self.min_rt = Some(self.min_rt.map_or(rt, |m| m.min(rt)));
        }
        self.limit = self.next_limit(&b, closed_at);
    }

    fn next_limit(&mut self, b: &Bucket, now: Nanos) -> usize {
        let (min, max) = (self.c.min, self.c.max);
        if self.probe.is_some_and(|p| now >= p.done) {
            self.probe = None;
            if let Some(rt) = self.probe_rt.mean_rt(self.c.min_samples) {
                self.min_rt = Some(rt);
            }
        }
        let Some(min_rt) = self.min_rt else {
            return self.limit; // warm-up: no RT yet
        };
        if b.passes + b.drops == 0 && self.probe.is_none() {
            return self.limit; // idle: no news is no reason to move
        }
        let bdp = self.max_pass_rate() * min_rt.as_secs_f64();
        let gain = match self.last_rt {
            Some(rt) => {
                (self.c.rtt_tolerance * min_rt.as_secs_f64() / rt.as_secs_f64()).clamp(1.0, 2.0)
            }
            None => 1.0,
        };
        let mut next = (bdp * gain + bdp.sqrt()).ceil() as usize;
        let samples = b.passes + b.drops;
        if b.drops > 0 && b.drops as f64 >= self.c.drop_fraction * samples as f64 {
            next = next.min((self.base as f64 * self.c.backoff).floor() as usize);
            self.cool_until = now + self.c.cool_down;
        } else if now < self.cool_until {
            next = next.min(self.base);
        }
        self.base = clamp(next, min, max);
        if self.probe.is_none() && now >= self.next_probe {
            self.next_probe = now + self.c.probe_interval;
            let end = now + self.c.probe_duration;
            self.probe = Some(Probe {
                start: now,
                end,
                done: end + self.c.probe_duration,
            });
            self.probe_rt = Bucket::default();
        }
        match self.probe {
            Some(p) if now < p.end => {
                clamp((self.base as f64 * self.c.probe_gain) as usize, min, max)
            }
            _ => self.base,
        }
    }
}

impl LimitAlgorithm for LittlesLaw {
    fn name(&self) -> &'static str {
        "littles"
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn on_sample(&mut self, s: &Sample) -> usize {
        if s.outcome == Outcome::Ignored {
            return self.limit;
        }
        let end = s.end();
        let bucket_ns = self.c.bucket.as_nanos().max(1) as u64;
        let idx = end.as_u64() / bucket_ns;
        let current = *self.current_idx.get_or_insert(idx);
        if idx > current {
            // Close the current bucket, then any empty ones a silence skipped (bounded).
            let gaps = (idx - current).min(self.c.pass_buckets as u64 + 1);
            for k in 0..gaps {
                let closed_at = Nanos::new((idx - gaps + k + 1) * bucket_ns);
                self.close_bucket(closed_at);
            }
            self.current_idx = Some(idx);
        }
        let b = &mut self.current;
        match s.outcome {
            Outcome::Success => {
                b.passes += 1;
                b.rt_sum += s.latency;
                if let Some(p) = self.probe {
                    if s.start >= p.start && s.start < p.end {
                        self.probe_rt.passes += 1;
                        self.probe_rt.rt_sum += s.latency;
                    }
                }
            }
            Outcome::Dropped => b.drops += 1,
            Outcome::Ignored => {}
        }
        self.limit
    }
}

#[cfg(test)]
mod tests;
