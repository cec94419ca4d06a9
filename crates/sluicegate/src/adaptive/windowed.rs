//! [`Windowed`]: Netflix-style sample windows in front of any algorithm.

use super::algorithm::{LimitAlgorithm, Outcome, Sample};
use crate::clock::Nanos;
use std::time::Duration;

/// Settings for [`Windowed`]; the defaults are Netflix's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowedConfig {
    /// A window closes no sooner than this after it opened (1 s).
    pub min_window: Duration,
    /// ...and only once it holds this many samples (10).
    pub min_samples: usize,
    /// Samples faster than this are discarded as noise (100 µs).
    pub min_rtt: Duration,
}

impl Default for WindowedConfig {
    fn default() -> Self {
        WindowedConfig {
            min_window: Duration::from_secs(1),
            min_samples: 10,
            min_rtt: Duration::from_micros(100),
        }
    }
}

/// Aggregates samples into windows and feeds the inner algorithm one sample per window: the
/// window's mean latency, its largest in-flight, and `Dropped` if any sample was dropped.
///
/// Windows are measured by sample end time (`start + latency`).
#[derive(Clone, Debug)]
pub struct Windowed<A> {
    inner: A,
    config: WindowedConfig,
    opened: Option<Nanos>,
    count: usize,
    rtt_sum: Duration,
    max_in_flight: usize,
    dropped: bool,
}

impl<A: LimitAlgorithm> Windowed<A> {
    /// Wraps `inner`.
    pub fn new(inner: A, config: WindowedConfig) -> Self {
        Windowed {
            inner,
            config,
            opened: None,
            count: 0,
            rtt_sum: Duration::ZERO,
            max_in_flight: 0,
            dropped: false,
        }
    }

    /// The wrapped algorithm.
    pub fn inner(&self) -> &A {
        &self.inner
    }
}

impl<A: LimitAlgorithm> LimitAlgorithm for Windowed<A> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn limit(&self) -> usize {
        self.inner.limit()
    }

    fn on_demand(&mut self, blocked: u64) {
        self.inner.on_demand(blocked);
    }

    fn on_turned_away(&mut self, turned_away: u64) {
        self.inner.on_turned_away(turned_away);
    }

    fn explain(&self, now: Nanos) -> super::Explanation {
        self.inner.explain(now)
    }

    fn on_sample(&mut self, s: &Sample) -> usize {
        let s = &s.bounded();
        if s.outcome == Outcome::Ignored || s.latency < self.config.min_rtt {
            return self.limit();
        }
        let end = s.end();
        let opened = *self.opened.get_or_insert(end);
        self.count += 1;
        self.rtt_sum = self.rtt_sum.saturating_add(s.latency);
        self.max_in_flight = self.max_in_flight.max(s.in_flight);
        self.dropped |= s.outcome == Outcome::Dropped;
        if end - opened < self.config.min_window || self.count < self.config.min_samples {
            return self.limit();
        }
        let aggregate = Sample {
            start: opened,
            latency: mean(self.rtt_sum, self.count),
            in_flight: self.max_in_flight,
            ahead: self.max_in_flight,
            outcome: if self.dropped {
                Outcome::Dropped
            } else {
                Outcome::Success
            },
        };
        self.opened = None;
        self.count = 0;
        self.rtt_sum = Duration::ZERO;
        self.max_in_flight = 0;
        self.dropped = false;
        self.inner.on_sample(&aggregate)
    }
}

/// `sum / count` for any count (`count > 0`): a busy window can hold more than `u32::MAX`
/// samples, the most `Duration`'s own division takes.
fn mean(sum: Duration, count: usize) -> Duration {
    let nanos = sum.as_nanos() / count as u128;
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive::{Aimd, AimdConfig};

    fn at(ms: u64, in_flight: usize) -> Sample {
        let start = Nanos::from(Duration::from_millis(ms));
        Sample::success(start, Duration::from_millis(10), in_flight)
    }

    #[test]
    fn windowed_feeds_one_aggregate_per_closed_window() {
        let mut w = Windowed::new(Aimd::new(AimdConfig::default()), WindowedConfig::default());
        for i in 0..20 {
            assert_eq!(w.on_sample(&at(i * 10, 15)), 20, "window still open");
        }
        // 1 s after the first sample ended, with ≥ 10 samples: one aggregate → AIMD +1.
        assert_eq!(w.on_sample(&at(1000, 15)), 21);
        assert_eq!(w.on_sample(&at(1010, 15)), 21, "a new window opened");
    }

    #[test]
    fn windowed_discards_samples_below_min_rtt() {
        let mut w = Windowed::new(Aimd::new(AimdConfig::default()), WindowedConfig::default());
        let tiny = Sample::success(Nanos::ZERO, Duration::from_micros(50), 15);
        for _ in 0..100 {
            w.on_sample(&tiny);
        }
        assert_eq!(w.count, 0);
    }

    /// The latency each aggregate sample carried to the inner algorithm.
    #[derive(Debug, Default)]
    struct Seen(Vec<Duration>);

    impl LimitAlgorithm for Seen {
        fn name(&self) -> &'static str {
            "seen"
        }
        fn limit(&self) -> usize {
            1
        }
        fn on_sample(&mut self, s: &Sample) -> usize {
            self.0.push(s.latency);
            1
        }
    }

    /// A window that holds 2^32 samples (a long `min_window` on a busy service: 72 minutes
    /// at a million samples a second) still feeds their mean. The count was cut to 32 bits
    /// for the division: at exactly 2^32 it divided by zero and panicked the permit's
    /// release, and past it the "mean" was the whole sum over a few samples.
    #[test]
    fn windowed_mean_holds_past_two_to_the_32_samples() {
        let config = WindowedConfig {
            min_window: Duration::from_secs(4 * 3600),
            ..WindowedConfig::default()
        };
        for before in [u32::MAX as usize, u32::MAX as usize + 7] {
            let mut w = Windowed::new(Seen::default(), config);
            // `before` samples of 10 ms each, the first of them ending at 0.
            w.opened = Some(Nanos::ZERO);
            w.count = before;
            w.rtt_sum = Duration::from_millis(10) * u32::try_from(before / 1000).unwrap() * 1000
                + Duration::from_millis(10) * u32::try_from(before % 1000).unwrap();
            let last = Sample::success(
                Nanos::from(Duration::from_secs(5 * 3600)),
                Duration::from_millis(10),
                4,
            );
            w.on_sample(&last);
            assert_eq!(w.inner().0, [Duration::from_millis(10)], "{before} before");
        }
    }
}
