//! [`Aimd`]: additive increase, multiplicative decrease (Netflix concurrency-limits' AIMD).

use super::algorithm::{LimitAlgorithm, Outcome, Sample, clamp};
use std::time::Duration;

/// Settings for [`Aimd`]; the defaults are Netflix's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimdConfig {
    /// Limit before any sample (20).
    pub initial: usize,
    /// Floor (20).
    pub min: usize,
    /// Ceiling (200).
    pub max: usize,
    /// Factor applied on a drop (0.9).
    pub backoff: f64,
    /// A success slower than this counts as a drop (5 s).
    pub timeout: Duration,
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig {
            initial: 20,
            min: 20,
            max: 200,
            backoff: 0.9,
            timeout: Duration::from_secs(5),
        }
    }
}

/// AIMD: a drop (or a latency above `timeout`) multiplies the limit by `backoff`; a success
/// while at least half the limit was in use adds one.
///
/// # Examples
///
/// ```
/// use sluicegate::adaptive::{Aimd, AimdConfig, LimitAlgorithm, Sample};
/// use sluicegate::clock::Nanos;
/// use std::time::Duration;
///
/// let mut aimd = Aimd::new(AimdConfig::default());
/// let ok = Sample::success(Nanos::ZERO, Duration::from_millis(10), 15);
/// assert_eq!(aimd.on_sample(&ok), 21);
/// ```
#[derive(Clone, Debug)]
pub struct Aimd {
    config: AimdConfig,
    limit: usize,
}

impl Aimd {
    /// An AIMD limit starting at `config.initial` (clamped to `[min, max]`).
    pub fn new(config: AimdConfig) -> Self {
        let limit = clamp(config.initial, config.min, config.max);
        Aimd { config, limit }
    }
}

impl LimitAlgorithm for Aimd {
    fn name(&self) -> &'static str {
        "aimd"
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn on_sample(&mut self, s: &Sample) -> usize {
        let s = &s.bounded();
        let c = &self.config;
        let next = match s.outcome {
            Outcome::Ignored => self.limit,
            Outcome::Dropped => (self.limit as f64 * c.backoff).floor() as usize,
            Outcome::Success if s.latency > c.timeout => {
                (self.limit as f64 * c.backoff).floor() as usize
            }
            Outcome::Success if s.in_flight.saturating_mul(2) >= self.limit => self.limit + 1,
            Outcome::Success => self.limit,
        };
        self.limit = clamp(next, c.min, c.max);
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Nanos;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn aimd_adds_one_when_half_the_limit_is_used() {
        let mut a = Aimd::new(AimdConfig::default());
        assert_eq!(a.on_sample(&Sample::success(Nanos::ZERO, ms(5), 10)), 21);
        // 9 × 2 < 21: application-limited, unchanged.
        assert_eq!(a.on_sample(&Sample::success(Nanos::ZERO, ms(5), 9)), 21);
    }

    #[test]
    fn aimd_multiplies_by_backoff_on_drop_and_on_slow_success() {
        let cfg = AimdConfig {
            initial: 100,
            ..AimdConfig::default()
        };
        let mut a = Aimd::new(cfg);
        assert_eq!(a.on_sample(&Sample::dropped(Nanos::ZERO, ms(5), 1)), 90);
        let slow = Sample::success(Nanos::ZERO, Duration::from_secs(6), 90);
        assert_eq!(a.on_sample(&slow), 81);
    }

    #[test]
    fn aimd_stays_within_min_and_max() {
        let mut a = Aimd::new(AimdConfig::default());
        for _ in 0..50 {
            a.on_sample(&Sample::dropped(Nanos::ZERO, ms(5), 1));
        }
        assert_eq!(a.limit(), 20);
        for _ in 0..500 {
            a.on_sample(&Sample::success(Nanos::ZERO, ms(5), 1000));
        }
        assert_eq!(a.limit(), 200);
    }

    /// A sample's `in_flight` is any `usize` a caller builds it with; doubling it to compare
    /// with the limit overflowed (a panic in debug builds) above `usize::MAX / 2`.
    #[test]
    fn any_in_flight_counts_as_at_least_half_the_limit() {
        let mut a = Aimd::new(AimdConfig::default());
        let busy = Sample::success(Nanos::ZERO, ms(5), usize::MAX);
        assert_eq!(a.on_sample(&busy), 21);
    }
}
