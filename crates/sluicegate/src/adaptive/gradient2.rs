//! [`Gradient2`]: Netflix concurrency-limits' recommended gradient algorithm, as a baseline.

use super::algorithm::{LimitAlgorithm, Outcome, Sample};
use std::time::Duration;

/// Settings for [`Gradient2`]; the defaults are Netflix's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gradient2Config {
    /// Limit before any sample (20).
    pub initial: usize,
    /// Floor (20).
    pub min: usize,
    /// Ceiling (200).
    pub max: usize,
    /// Weight of the new estimate in each update (0.2).
    pub smoothing: f64,
    /// Headroom added to every estimate (4).
    pub queue_size: f64,
    /// Samples in the long RTT's exponential average (600).
    pub long_window: usize,
    /// How much slower the short RTT may be before the limit shrinks (1.5).
    pub rtt_tolerance: f64,
}

impl Default for Gradient2Config {
    fn default() -> Self {
        Gradient2Config {
            initial: 20,
            min: 20,
            max: 200,
            smoothing: 0.2,
            queue_size: 4.0,
            long_window: 600,
            rtt_tolerance: 1.5,
        }
    }
}

/// Gradient2: `gradient = clamp(tolerance × long_rtt / short_rtt, 0.5, 1)`,
/// `limit ← limit × (1 − smoothing) + (limit × gradient + queue_size) × smoothing`.
///
/// Like Netflix's, it ignores drops (a known weakness the simulator shows).
#[derive(Clone, Debug)]
pub struct Gradient2 {
    config: Gradient2Config,
    estimate: f64,
    long_rtt: f64,
    long_count: usize,
}

/// `c` with every number in the range [`Gradient2::new`] documents.
fn sanitized(mut c: Gradient2Config) -> Gradient2Config {
    let d = Gradient2Config::default();
    let finite = |v: f64, default: f64| if v.is_finite() { v } else { default };
    c.max = c.max.max(c.min);
    c.smoothing = finite(c.smoothing, d.smoothing).clamp(0.0, 1.0);
    c.queue_size = finite(c.queue_size, d.queue_size).max(0.0);
    c.rtt_tolerance = finite(c.rtt_tolerance, d.rtt_tolerance).max(1.0);
    c.long_window = c.long_window.max(1);
    c
}

/// Samples averaged plainly before the long RTT switches to an exponential average.
const WARMUP: usize = 10;

impl Gradient2 {
    /// A Gradient2 limit starting at `config.initial`.
    ///
    /// Settings out of range are brought into it, never a panic: a `max` below `min` is
    /// raised to `min` (the floor wins, as in the other algorithms), `initial` is clamped to
    /// `[min, max]`, `smoothing` to `[0, 1]`, `queue_size` to at least 0, `rtt_tolerance` to
    /// at least 1 and `long_window` to at least 1; a gain that is not a finite number (NaN,
    /// infinite) takes its default.
    pub fn new(config: Gradient2Config) -> Self {
        let config = sanitized(config);
        let estimate = (config.initial as f64).clamp(config.min as f64, config.max as f64);
        Gradient2 {
            config,
            estimate,
            long_rtt: 0.0,
            long_count: 0,
        }
    }

    /// The long-term RTT estimate (0 before the first sample; at most [`Duration::MAX`]).
    pub fn long_rtt(&self) -> Duration {
        // Kept in `f64` seconds: a sample of `Duration::MAX` rounds up past what a
        // `Duration` holds.
        Duration::try_from_secs_f64(self.long_rtt).unwrap_or(Duration::MAX)
    }

    fn add_long(&mut self, rtt: f64) {
        if self.long_count < WARMUP {
            self.long_count += 1;
            self.long_rtt += (rtt - self.long_rtt) / self.long_count as f64;
        } else {
            let factor = 2.0 / (self.config.long_window as f64 + 1.0);
            self.long_rtt = self.long_rtt * (1.0 - factor) + rtt * factor;
        }
    }
}

impl LimitAlgorithm for Gradient2 {
    fn name(&self) -> &'static str {
        "gradient2"
    }

    fn limit(&self) -> usize {
        self.estimate as usize
    }

    fn on_sample(&mut self, s: &Sample) -> usize {
        let s = &s.bounded();
        if s.outcome == Outcome::Ignored {
            return self.limit();
        }
        let c = self.config;
        let short = s.latency.as_secs_f64().max(1e-9);
        self.add_long(short);
        if self.long_rtt / short > 2.0 {
            // The long RTT lags a recovery: let it catch up faster.
            self.long_rtt *= 0.95;
        }
        if (s.in_flight as f64) < self.estimate / 2.0 {
            return self.limit();
        }
        let gradient = (c.rtt_tolerance * self.long_rtt / short).clamp(0.5, 1.0);
        let new = self.estimate * gradient + c.queue_size;
        let new = self.estimate * (1.0 - c.smoothing) + new * c.smoothing;
        self.estimate = new.clamp(c.min as f64, c.max as f64);
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

    #[test]
    fn gradient2_grows_by_smoothed_queue_size_when_rtt_is_steady() {
        let cfg = Gradient2Config {
            initial: 50,
            ..Gradient2Config::default()
        };
        let mut g = Gradient2::new(cfg);
        // gradient = clamp(1.5 × 1, 0.5, 1) = 1; new = 50 + 4; 50 × 0.8 + 54 × 0.2 = 50.8.
        assert_eq!(g.on_sample(&sample(10, 40)), 50);
        assert!((g.estimate - 50.8).abs() < 1e-9);
    }

    #[test]
    fn gradient2_shrinks_when_short_rtt_exceeds_long_by_more_than_tolerance() {
        let cfg = Gradient2Config {
            initial: 100,
            ..Gradient2Config::default()
        };
        let mut g = Gradient2::new(cfg);
        for _ in 0..10 {
            g.on_sample(&sample(10, 0)); // app-limited: only trains long_rtt
        }
        assert_eq!(g.limit(), 100);
        // long ≈ (10×10 + 40)/11 ms = 12.73; gradient = max(0.5, 1.5 × 12.73/40) = 0.5;
        // new = 100 × 0.5 + 4 = 54; 100 × 0.8 + 54 × 0.2 = 90.8.
        assert_eq!(g.on_sample(&sample(40, 100)), 90);
    }

    /// Defect pinned (review 3, item 9): `Gradient2::new` with `min > max` panicked (in
    /// `f64::clamp`), and a NaN `smoothing` drove the limit to 0, a kill switch. Settings out
    /// of range are clamped now, and the limit stays within the (clamped) bounds.
    #[test]
    fn settings_out_of_range_are_clamped_not_a_panic_or_a_kill_switch() {
        let odd = [
            Gradient2Config {
                min: 10,
                max: 5,
                initial: 50,
                ..Gradient2Config::default()
            },
            Gradient2Config {
                smoothing: f64::NAN,
                ..Gradient2Config::default()
            },
            Gradient2Config {
                smoothing: f64::INFINITY,
                queue_size: f64::NAN,
                rtt_tolerance: f64::NEG_INFINITY,
                long_window: 0,
                ..Gradient2Config::default()
            },
            Gradient2Config {
                smoothing: -3.0,
                queue_size: -9.0,
                rtt_tolerance: 0.0,
                ..Gradient2Config::default()
            },
        ];
        for cfg in odd {
            let mut g = Gradient2::new(cfg);
            let (lo, hi) = (cfg.min, cfg.max.max(cfg.min));
            assert!((lo..=hi).contains(&g.limit()), "{cfg:?}: {}", g.limit());
            for i in 0..3000u64 {
                let l = g.on_sample(&sample(1 + (i * 7919) % 500, (i % 300) as usize));
                assert!((lo..=hi).contains(&l), "{cfg:?}: limit {l}");
            }
            assert!(g.limit() > 0, "{cfg:?}");
        }
        let g = Gradient2::new(Gradient2Config {
            min: 10,
            max: 5,
            ..Gradient2Config::default()
        });
        assert_eq!(g.limit(), 10, "the floor wins");
    }

    /// The long RTT is kept in seconds as an `f64`; a sample of `Duration::MAX` (a caller's
    /// "never answered") made it 2^64 s, one past what a `Duration` holds, and reading it
    /// back panicked ("can not convert float seconds to Duration").
    #[test]
    fn long_rtt_of_the_longest_sample_reads_back_saturated() {
        let mut g = Gradient2::new(Gradient2Config::default());
        // The sample is first bounded to what a limiter's clock counts (2^64 ns, 584 years).
        g.on_sample(&Sample::success(Nanos::ZERO, Duration::MAX, 40));
        assert!(g.long_rtt() >= Duration::from_secs(18_000_000_000));
        g.on_sample(&sample(10, 40));
        assert!(g.long_rtt() > Duration::from_secs(1_000_000_000));
        assert!(g.limit() >= g.config.min);
    }

    #[test]
    fn gradient2_ignores_drops_and_stays_within_bounds() {
        let mut g = Gradient2::new(Gradient2Config::default());
        for i in 0..2000 {
            let rtt = if i % 2 == 0 { 1 } else { 500 };
            let mut s = sample(rtt, 1000);
            if i % 3 == 0 {
                s.outcome = Outcome::Dropped;
            }
            let l = g.on_sample(&s);
            assert!((20..=200).contains(&l), "limit {l}");
        }
    }
}
