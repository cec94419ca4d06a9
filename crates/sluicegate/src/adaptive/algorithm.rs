//! The [`LimitAlgorithm`] trait and the [`Sample`] it is fed.

use super::explanation::Explanation;
use crate::clock::Nanos;
use std::fmt;
use std::time::Duration;

/// How a request that held a permit ended, as far as the limit is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// It completed: its latency says something about the resource.
    Success,
    /// It was dropped by overload: timed out, or the resource said it was overloaded.
    Dropped,
    /// It ended in a way that says nothing about load (a client error, a cancellation).
    Ignored,
}

/// One finished request, as an algorithm sees it.
///
/// Built with [`Sample::success`] or [`Sample::dropped`] (and [`Sample::with_ahead`]) outside
/// this crate: it is `#[non_exhaustive]`, so what a limiter learns to record can grow without
/// breaking the algorithms and tests that make samples by hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sample {
    /// When the request got its permit, on the limiter's clock.
    pub start: Nanos,
    /// How long it held the permit.
    pub latency: Duration,
    /// Permits out when it started, itself included.
    pub in_flight: usize,
    /// Of those, the permits whose requests went ahead of it, itself included: `in_flight`
    /// less the permits handed at the same moment to waiters whose tasks had not run yet,
    /// which go to the resource after it (at most `in_flight`). A resource served first
    /// come, first served had at most this many of them in service or queued when this one
    /// arrived. [`Sample::success`] and [`Sample::dropped`] set it to `in_flight`; a caller
    /// that knows better sets it with [`Sample::with_ahead`].
    pub ahead: usize,
    /// How it ended.
    pub outcome: Outcome,
}

impl Sample {
    /// A successful sample.
    pub fn success(start: Nanos, latency: Duration, in_flight: usize) -> Self {
        Sample {
            start,
            latency,
            in_flight,
            ahead: in_flight,
            outcome: Outcome::Success,
        }
    }

    /// A dropped sample (timeout or overload answer).
    pub fn dropped(start: Nanos, latency: Duration, in_flight: usize) -> Self {
        Sample {
            outcome: Outcome::Dropped,
            ..Sample::success(start, latency, in_flight)
        }
    }

    /// The same sample with [`ahead`](Sample::ahead) set to `ahead` (at most `in_flight`).
    ///
    /// ```
    /// use sluicegate::adaptive::Sample;
    /// use sluicegate::clock::Nanos;
    /// use std::time::Duration;
    ///
    /// // Handed its permit with two other waiters at one instant, its task ran first.
    /// let s = Sample::success(Nanos::ZERO, Duration::from_millis(10), 12).with_ahead(10);
    /// assert_eq!((s.in_flight, s.ahead), (12, 10));
    /// ```
    #[must_use]
    pub fn with_ahead(self, ahead: usize) -> Self {
        Sample {
            ahead: ahead.min(self.in_flight),
            ..self
        }
    }

    /// The sample within what a limiter can measure: a latency of at most `u64::MAX` ns
    /// (what its clock counts) and at most [`ConcurrencyLimiter::MAX_PERMITS`] in flight.
    /// A sample built by hand may hold more (`Duration::MAX` for "never answered"), on which
    /// the algorithms' sums overflowed; each bounds what it is fed first.
    ///
    /// [`ConcurrencyLimiter::MAX_PERMITS`]: crate::concurrency::ConcurrencyLimiter::MAX_PERMITS
    pub(crate) fn bounded(&self) -> Sample {
        Sample {
            latency: self.latency.min(Duration::from_nanos(u64::MAX)),
            in_flight: self
                .in_flight
                .min(crate::concurrency::ConcurrencyLimiter::MAX_PERMITS),
            ahead: self
                .ahead
                .min(self.in_flight)
                .min(crate::concurrency::ConcurrencyLimiter::MAX_PERMITS),
            ..*self
        }
    }

    /// When the request finished: `start + latency`.
    pub fn end(&self) -> Nanos {
        self.start + self.latency
    }
}

/// An algorithm that turns samples into a concurrency limit.
///
/// Implementations are pure state machines: no clock reads, no I/O, no randomness beyond a
/// seeded generator of their own. The limit they return always lies within the bounds they
/// were configured with.
pub trait LimitAlgorithm: Send + fmt::Debug {
    /// A short name for tables and charts, e.g. `"littles"`.
    fn name(&self) -> &'static str;

    /// The current limit.
    fn limit(&self) -> usize;

    /// Feeds one finished request and returns the (possibly new) limit.
    fn on_sample(&mut self, sample: &Sample) -> usize;

    /// Demand the limit held back: `blocked` callers so far found every permit taken (they
    /// waited in the limiter's queue or were turned away). [`AdaptiveLimiter`] calls it with
    /// its running count just before each [`on_sample`](Self::on_sample), so the count is as
    /// of that sample's end. The default ignores it.
    ///
    /// [`AdaptiveLimiter`]: super::AdaptiveLimiter
    fn on_demand(&mut self, blocked: u64) {
        let _ = blocked;
    }

    /// Of the callers held back (counted by [`on_demand`](Self::on_demand) too),
    /// `turned_away` so far did not wait at all: the queue was full or absent (`max_queue`
    /// 0), or their wait was predicted past their timeout. Without a queue in the limiter
    /// they are the only trace of demand above the limit: nobody waits for a permit, so no
    /// request starts "with every permit taken" for long. [`AdaptiveLimiter`] calls it with
    /// its running count just before each [`on_sample`](Self::on_sample), as `on_demand`.
    /// The default ignores it.
    ///
    /// [`AdaptiveLimiter`]: super::AdaptiveLimiter
    fn on_turned_away(&mut self, turned_away: u64) {
        let _ = turned_away;
    }

    /// Why the limit sits where it does, as of `now` (on the clock the samples are timed
    /// with): what the algorithm is doing and what it has measured, for a status page. Off
    /// the hot path: [`AdaptiveLimiter::explain`] calls it under the lock the samples take.
    /// The default explains nothing (every field `None`).
    ///
    /// [`AdaptiveLimiter::explain`]: super::AdaptiveLimiter::explain
    fn explain(&self, now: Nanos) -> Explanation {
        let _ = now;
        Explanation::default()
    }
}

impl<A: LimitAlgorithm + ?Sized> LimitAlgorithm for Box<A> {
    fn name(&self) -> &'static str {
        (**self).name()
    }

    fn limit(&self) -> usize {
        (**self).limit()
    }

    fn on_sample(&mut self, sample: &Sample) -> usize {
        (**self).on_sample(sample)
    }

    fn on_demand(&mut self, blocked: u64) {
        (**self).on_demand(blocked);
    }

    fn on_turned_away(&mut self, turned_away: u64) {
        (**self).on_turned_away(turned_away);
    }

    fn explain(&self, now: Nanos) -> Explanation {
        (**self).explain(now)
    }
}

/// Clamps `value` to `[min, max]`, where `max < min` counts as `max = min`.
pub(crate) fn clamp(value: usize, min: usize, max: usize) -> usize {
    value.max(min).min(max.max(min))
}

/// `floor(max(1, log10(x)))`, the step size Vegas uses (Netflix's `L10`).
pub(crate) fn log10_step(x: f64) -> f64 {
    x.log10().floor().max(1.0)
}
