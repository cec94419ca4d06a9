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

    fn on_sample(&mut self, s: &Sample) -> usize {
        let s = &s.bounded();
        if s.outcome == Outcome::Ignored || s.latency < self.config.min_rtt {
            return self.limit();
        }
        let end = s.end();
        let opened = *self.opened.get_or_insert(end);
        self.count += 1;
        self.rtt_sum += s.latency;
        self.max_in_flight = self.max_in_flight.max(s.in_flight);
        self.dropped |= s.outcome == Outcome::Dropped;
        if end - opened < self.config.min_window || self.count < self.config.min_samples {
            return self.limit();
        }
        let aggregate = Sample {
            start: opened,
            latency: self.rtt_sum / self.count as u32,
            in_flight: self.max_in_flight,
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
}
