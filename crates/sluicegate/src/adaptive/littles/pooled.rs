//! The pooled answers of the last buckets, summarised: what the queue estimate and the
//! slower-service test read where a bucket has too few successes of its own.

use std::time::Duration;

/// The pooled answers of the last buckets
/// ([`LittlesLaw::pooled_answers`](super::LittlesLaw::pooled_answers)), as the queue estimate
/// and the slower-service test read them.
pub(super) struct Pooled {
    /// Their [`LOW_QUANTILE`](super::LOW_QUANTILE).
    pub(super) low: Duration,
    /// Their mean, in seconds.
    pub(super) mean: f64,
    /// The buckets' pass rate, per second.
    pub(super) rate: f64,
}

impl Pooled {
    /// The queue estimate: their low RT over `floor` × the pass rate.
    pub(super) fn queue(&self, floor: Duration) -> f64 {
        self.low.saturating_sub(floor).as_secs_f64() * self.rate
    }

    /// They read as a slower service, not a queue: their low RT is no more than twice `floor`
    /// × the factor their mean RT rose over `min_rt` by. A queue adds its wait to every
    /// request, and lifts the low RT far more than the mean in proportion; a slower service
    /// multiplies every RT alike (as
    /// [`LittlesLaw::wait_added`](super::LittlesLaw::wait_added) tells a probe's reading).
    pub(super) fn slower_service(&self, floor: Duration, min_rt: Duration) -> bool {
        let scale = (self.mean / min_rt.as_secs_f64().max(1e-9)).max(1.0);
        self.low.as_secs_f64() <= 2.0 * scale * floor.as_secs_f64()
    }
}
