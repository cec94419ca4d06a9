//! The start's test of a starting limit already past the knee: the RTs of the requests that
//! started with few permits out against those of the requests that found every permit taken.

use super::LOW_QUANTILE;
use std::time::Duration;

/// Running moments of a group of RTs: their count, sum, and the sum of their logarithms and
/// of their squares.
#[derive(Clone, Copy, Debug, Default)]
struct Moments {
    n: u64,
    sum: f64,
    ln: f64,
    ln2: f64,
}

impl Moments {
    fn add(&mut self, rt: f64) {
        let ln = rt.max(1e-9).ln();
        self.n += 1;
        self.sum += rt;
        self.ln += ln;
        self.ln2 += ln * ln;
    }

    fn mean(&self) -> f64 {
        self.sum / self.n.max(1) as f64
    }

    fn ln_mean(&self) -> f64 {
        self.ln / self.n.max(1) as f64
    }

    /// The variance of the mean of the logarithms (the sample variance ÷ n).
    fn ln_mean_var(&self) -> f64 {
        let n = self.n as f64;
        if self.n < 2 {
            return f64::INFINITY;
        }
        let var = (self.ln2 - self.ln * self.ln / n).max(0.0) / (n - 1.0);
        var / n
    }
}

/// The most RTs of the first group kept for its low quantile: a bound on memory (a start
/// under a load below the limit files requests for as long as it lasts), not a statistic.
const KEPT: usize = 1024;

/// The RTs of the requests that started at the starting limit, in two groups: those that found
/// at most half the permits out (unqueued, unless the resource has fewer workers than that)
/// and those that found more out.
///
/// In front of a resource with at least as many workers as the limit, both groups are served
/// at once and their RTs have one distribution, whatever its shape. In front of a smaller one
/// the second group waits: by Little's law, its `k` permits out (on average) were answered at
/// `k ÷ RT_more` a second, of which `k × RT_few ÷ RT_more` were in service and the rest
/// queued inside. It needs no floor, no bucket and no probe, so it sees a start past the knee
/// as soon as a few answers of each group are in: a round trip, however long that is.
#[derive(Clone, Debug, Default)]
pub(super) struct StartTest {
    few: Moments,
    /// The successes of the first group: a failure that answers fast is no unqueued RT.
    few_ok: Moments,
    /// The latest successful RTs of the first group (at most `KEPT`).
    few_rts: std::collections::VecDeque<Duration>,
    more: Moments,
    /// The permits out when each request of the second group started, summed.
    more_in_flight: f64,
}

impl StartTest {
    /// Files the RT of a request that started with `in_flight` permits out (itself included)
    /// under a limit of `limit`. Answers that were dropped (late, or failed) count in the test
    /// as successes do, in both groups alike, but give no unqueued RT.
    pub(super) fn add(&mut self, rt: Duration, in_flight: usize, limit: usize, success: bool) {
        if in_flight * 2 <= limit {
            self.few.add(rt.as_secs_f64());
            if success {
                self.few_ok.add(rt.as_secs_f64());
                if self.few_rts.len() == KEPT {
                    self.few_rts.pop_front();
                }
                self.few_rts.push_back(rt);
            }
        } else {
            self.more.add(rt.as_secs_f64());
            self.more_in_flight += in_flight as f64;
        }
    }

    /// The mean RT of the requests that started with few permits out and succeeded.
    pub(super) fn unqueued_rt(&self) -> Option<Duration> {
        (self.few_ok.n > 0).then(|| Duration::from_secs_f64(self.few_ok.mean()))
    }

    /// The 5th percentile of the RTs of the requests that started with few permits out: the
    /// fastest of them, the first to start, were not queued even in front of a pool smaller
    /// than half the limit.
    pub(super) fn unqueued_low(&self) -> Option<Duration> {
        self.few_quantile(LOW_QUANTILE)
    }

    /// The standard error of [`unqueued_low`](Self::unqueued_low), read off the spread of the
    /// RTs just above it.
    pub(super) fn unqueued_low_se(&self) -> Option<Duration> {
        let mut rts: Vec<Duration> = self.few_rts.iter().copied().collect();
        let n = rts.len();
        if n < 2 {
            return None;
        }
        rts.sort_unstable();
        let k1 = ((LOW_QUANTILE * n as f64).ceil() as usize).clamp(1, n);
        let k2 = ((2.0 * LOW_QUANTILE * n as f64).ceil() as usize).clamp(k1 + 1, n);
        let gap = rts[k2 - 1].saturating_sub(rts[k1 - 1]).as_secs_f64();
        let density = (k2 - k1) as f64 / n as f64 / gap.max(1e-12);
        let se = (LOW_QUANTILE * (1.0 - LOW_QUANTILE) / n as f64).sqrt() / density;
        Some(Duration::from_secs_f64(se))
    }

    /// The median RT of the requests that started with few permits out.
    pub(super) fn unqueued_mid(&self) -> Option<Duration> {
        self.few_quantile(0.5)
    }

    /// The `ceil(q n)`-th smallest of the `n` RTs kept of the first group.
    fn few_quantile(&self, q: f64) -> Option<Duration> {
        let mut rts: Vec<Duration> = self.few_rts.iter().copied().collect();
        let n = rts.len();
        let k = ((q * n as f64).ceil() as usize).clamp(1, n.max(1));
        (n > 0).then(|| *rts.select_nth_unstable(k - 1).1)
    }

    /// The permits in service (Little's law: `k × RT_few ÷ RT_more` for the `k` out on
    /// average when the second group started) if the second group waited: its log RTs stand
    /// `significance` standard errors above the first group's (logarithms, so a heavy tail's
    /// few slow answers do not swamp the test), with at least `least` answers in each group,
    /// and the permits that waited come to more than `target`.
    pub(super) fn in_service(&self, least: u64, significance: f64, target: f64) -> Option<f64> {
        if self.few.n < least.max(2) || self.more.n < least.max(2) {
            return None;
        }
        let lift = self.more.ln_mean() - self.few.ln_mean();
        let se = (self.few.ln_mean_var() + self.more.ln_mean_var()).sqrt();
        let out = self.more_in_flight / self.more.n as f64;
        let in_service = out * self.few.mean() / self.more.mean().max(1e-12);
        (lift > significance * se && out - in_service > target).then_some(in_service)
    }
}
