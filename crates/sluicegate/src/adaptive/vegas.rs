//! [`Vegas`]: TCP Vegas's queue estimate applied to concurrency (Netflix concurrency-limits).

use super::algorithm::{LimitAlgorithm, Outcome, Sample, log10_step};
use super::explanation::Explanation;
use crate::clock::Nanos;
use std::time::Duration;

/// Settings for [`Vegas`]; the defaults are Netflix's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasConfig {
    /// Limit before any sample (20).
    pub initial: usize,
    /// Ceiling (1000); the floor is 1.
    pub max: usize,
    /// Weight of the new limit in each update (1.0: no smoothing).
    pub smoothing: f64,
    /// Re-measure the no-load RTT every `jitter × probe_multiplier × limit` samples (30).
    pub probe_multiplier: f64,
    /// Seed of the probe jitter (in `0.5..1`), so runs are reproducible.
    pub seed: u64,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            initial: 20,
            max: 1000,
            smoothing: 1.0,
            probe_multiplier: 30.0,
            seed: 0x5eed,
        }
    }
}

/// Vegas: `queue = ceil(limit × (1 − rtt_noload / rtt))`; grow by `beta` while the queue is at
/// most `threshold`, by `L10` below `alpha`, shrink by `L10` above `beta` or on a drop, where
/// `L10 = max(1, floor(log10 limit))`, `alpha = 3·L10`, `beta = 6·L10`, `threshold = L10`.
#[derive(Clone, Debug)]
pub struct Vegas {
    config: VegasConfig,
    estimate: f64,
    rtt_noload: Option<Duration>,
    probe_count: u64,
    probe_jitter: f64,
    rng: u64,
}

/// `c` with every number in the range [`Vegas::new`] documents.
fn sanitized(mut c: VegasConfig) -> VegasConfig {
    let d = VegasConfig::default();
    let finite = |v: f64, default: f64| if v.is_finite() { v } else { default };
    c.max = c.max.max(1);
    c.smoothing = finite(c.smoothing, d.smoothing).clamp(0.0, 1.0);
    c.probe_multiplier = finite(c.probe_multiplier, d.probe_multiplier).max(0.0);
    c
}

impl Vegas {
    /// A Vegas limit starting at `config.initial`.
    ///
    /// Settings out of range are brought into it, never a kill switch: `max` is at least 1,
    /// `initial` is clamped to `[1, max]`, `smoothing` to `[0, 1]` and `probe_multiplier` to
    /// at least 0; one that is not a finite number (NaN, infinite) takes its default.
    pub fn new(config: VegasConfig) -> Self {
        let config = sanitized(config);
        let mut v = Vegas {
            config,
            estimate: (config.initial as f64).clamp(1.0, config.max.max(1) as f64),
            rtt_noload: None,
            probe_count: 0,
            probe_jitter: 1.0,
            rng: config.seed | 1,
        };
        v.reset_jitter();
        v
    }

    /// The RTT Vegas believes the resource has without a queue.
    pub fn rtt_noload(&self) -> Option<Duration> {
        self.rtt_noload
    }

    fn reset_jitter(&mut self) {
        // xorshift64: deterministic, no dependency, plenty for a jitter.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.probe_jitter = 0.5 + (self.rng >> 11) as f64 / (1u64 << 53) as f64 * 0.5;
    }
}

impl LimitAlgorithm for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn limit(&self) -> usize {
        self.estimate as usize
    }

    /// The no-load RTT it measures queueing against, as `min_rt`.
    fn explain(&self, _now: Nanos) -> Explanation {
        Explanation {
            min_rt: self.rtt_noload,
            ..Explanation::default()
        }
    }

    fn on_sample(&mut self, s: &Sample) -> usize {
        let s = &s.bounded();
        if s.outcome == Outcome::Ignored {
            return self.limit();
        }
        let rtt = s.latency;
        self.probe_count += 1;
        let probe_every = self.probe_jitter * self.config.probe_multiplier * self.estimate;
        if self.probe_count as f64 >= probe_every {
            self.reset_jitter();
            self.probe_count = 0;
            self.rtt_noload = Some(rtt);
            return self.limit();
        }
        let noload = match self.rtt_noload {
            Some(n) if rtt >= n => n,
            _ => {
                self.rtt_noload = Some(rtt);
                return self.limit();
            }
        };
        let limit = self.estimate;
        let l10 = log10_step(limit);
        let queue = (limit * (1.0 - noload.as_secs_f64() / rtt.as_secs_f64().max(1e-12))).ceil();
        let new = if s.outcome == Outcome::Dropped {
            limit - l10
        } else if (s.in_flight as f64) * 2.0 < limit {
            return self.limit();
        } else if queue <= l10 {
            limit + 6.0 * l10
        } else if queue < 3.0 * l10 {
            limit + l10
        } else if queue > 6.0 * l10 {
            limit - l10
        } else {
            return self.limit();
        };
        let new = new.clamp(1.0, self.config.max.max(1) as f64);
        self.estimate = (1.0 - self.config.smoothing) * limit + self.config.smoothing * new;
        self.limit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Nanos;

    fn sample(rtt_ms: u64, in_flight: usize) -> Sample {
        Sample::success(Nanos::ZERO, Duration::from_millis(rtt_ms), in_flight)
    }

    fn vegas(initial: usize) -> Vegas {
        Vegas::new(VegasConfig {
            initial,
            probe_multiplier: 1e9, // no probes: pin the formula
            ..VegasConfig::default()
        })
    }

    #[test]
    fn vegas_grows_by_beta_when_there_is_no_queue() {
        let mut v = vegas(20);
        assert_eq!(v.on_sample(&sample(10, 20)), 20); // first sample sets rtt_noload
        // queue = ceil(20 × (1 − 10/10)) = 0 ≤ L10 = 1 → 20 + 6.
        assert_eq!(v.on_sample(&sample(10, 20)), 26);
    }

    #[test]
    fn vegas_shrinks_by_l10_when_the_queue_exceeds_beta_or_on_drop() {
        let mut v = vegas(100);
        v.on_sample(&sample(10, 100));
        // L10 = 2, beta = 12; queue = ceil(100 × (1 − 10/20)) = 50 > 12 → 98.
        assert_eq!(v.on_sample(&sample(20, 100)), 98);
        let drop = Sample::dropped(Nanos::ZERO, Duration::from_millis(10), 1);
        // L10(98) = 1.
        assert_eq!(v.on_sample(&drop), 97);
    }

    #[test]
    fn vegas_adds_l10_between_threshold_and_alpha_and_holds_between_alpha_and_beta() {
        let mut v = vegas(100);
        v.on_sample(&sample(100, 100));
        // queue = ceil(100 × (1 − 100/103)) = 3: 2 < 3 < alpha = 6 → +2.
        assert_eq!(v.on_sample(&sample(103, 100)), 102);
        // queue = ceil(102 × (1 − 100/110)) = 10: between alpha 6 and beta 12 → unchanged.
        assert_eq!(v.on_sample(&sample(110, 102)), 102);
        // app-limited (in_flight × 2 < limit) → unchanged.
        assert_eq!(v.on_sample(&sample(100, 10)), 102);
    }

    #[test]
    fn vegas_probe_resets_rtt_noload_and_limit_stays_within_bounds() {
        let mut v = Vegas::new(VegasConfig::default());
        v.on_sample(&sample(10, 20));
        for _ in 0..2000 {
            let l = v.on_sample(&sample(50, 2000));
            assert!((1..=1000).contains(&l));
        }
        // Probes re-measured the no-load RTT at the new, slower level.
        assert_eq!(v.rtt_noload(), Some(Duration::from_millis(50)));
    }

    /// As Gradient2's (review 3, item 9): a NaN `smoothing` made the estimate NaN, a limit of
    /// 0 (`NaN as usize`), a kill switch; a smoothing above 1 overshot below 0 (0 again) and
    /// one below 0 above `max`; a NaN `probe_multiplier` never probed again, so the no-load
    /// RTT of the first sample stood for the limiter's life.
    #[test]
    fn settings_out_of_range_are_clamped_not_a_kill_switch() {
        let odd = [
            VegasConfig {
                smoothing: f64::NAN,
                ..VegasConfig::default()
            },
            VegasConfig {
                smoothing: 3.0,
                ..VegasConfig::default()
            },
            VegasConfig {
                smoothing: -2.0,
                probe_multiplier: f64::NAN,
                ..VegasConfig::default()
            },
            VegasConfig {
                smoothing: f64::INFINITY,
                probe_multiplier: f64::NEG_INFINITY,
                max: 0,
                ..VegasConfig::default()
            },
        ];
        for cfg in odd {
            let mut v = Vegas::new(cfg);
            let hi = cfg.max.max(1);
            v.on_sample(&sample(10, 20));
            for i in 0..3000u64 {
                let l = v.on_sample(&sample(10 + (i * 7919) % 90, 2000));
                assert!((1..=hi).contains(&l), "{cfg:?}: limit {l}");
            }
            for _ in 0..3000 {
                v.on_sample(&sample(200, 2000));
            }
            assert_eq!(
                v.rtt_noload(),
                Some(Duration::from_millis(200)),
                "{cfg:?}: probes re-measure the no-load RTT"
            );
        }
    }
}
