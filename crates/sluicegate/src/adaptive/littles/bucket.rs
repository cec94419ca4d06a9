//! A bucket of samples: counts, RT sum, the RTs themselves until it closes, and its low
//! quantile.

use super::{LOW_QUANTILE, rank};
use std::time::Duration;

/// One bucket's worth of samples.
#[derive(Clone, Debug, Default)]
pub(super) struct Bucket {
    /// How long the bucket lasted (its share of the time axis; rates are passes ÷ span).
    pub(super) span: Duration,
    /// Every successful RT while the bucket is open; emptied when it is sealed.
    rts: Vec<Duration>,
    /// The bucket's 5th-percentile RT, once sealed with enough samples.
    low: Option<Duration>,
    /// The bucket's median RT, once sealed with enough samples.
    mid: Option<Duration>,
    /// The standard error of `low`, from the spread of the RTs just above it.
    low_se: Option<Duration>,
    /// The standard error of `mid`, from the RTs √n ranks either side of it.
    mid_se: Option<Duration>,
    pub(super) passes: u64,
    pub(super) rt_sum: Duration,
    /// The sum of the squared RTs, in seconds² (their spread).
    pub(super) rt_sq: f64,
    /// The shortest successful RT.
    pub(super) least: Option<Duration>,
    /// The second shortest: what at least two answers beat (one fast answer is no evidence of
    /// a change: a cached reply, another path).
    pub(super) second: Option<Duration>,
    pub(super) drops: u64,
    /// Of `drops`, those answered no sooner than the window's median (sooner, a drop was
    /// refused, not kept past a deadline): the background share counts these.
    pub(super) late_drops: u64,
    /// Of `late_drops`, those whose request started under a limit no higher than the limit
    /// when it was answered: only these back the limit off.
    pub(super) fresh_drops: u64,
    /// The most workers its answers show busy at once: for each, the permits out when its
    /// request started (itself included) less the answers that came while it was out. In a
    /// pool served first come, first served, a request that found `n - 1` out waits for
    /// `n - w` answers when `w` workers serve (if `n > w`), and sees no more, whatever it
    /// saw during its own service: so no answer reads more than the workers, and one whose
    /// service ended before any other's reads them exactly (a lower bound on the workers).
    pub(super) counted: usize,
    /// The same counted from the permits whose requests went in ahead ([`Sample::ahead`]).
    pub(super) counted_ahead: usize,
    /// Of its answers with a count, those that counted `counted` (the most).
    pub(super) at_counted: u64,
    /// Its answers with a count (one whose start is older than the answers kept has none).
    pub(super) with_count: u64,
    /// The most permits out when one of its requests started.
    pub(super) max_in_flight: usize,
    /// Some request started with every permit taken: demand reached the limit.
    pub(super) saturated: bool,
    /// Samples whose request started with every permit taken.
    pub(super) at_limit: u64,
    /// A min-RT probe was under way: its pass rate understates the resource.
    pub(super) probed: bool,
    /// A probe held the limit down during some of it. A probe's tail (after it lets the limit
    /// go, while the answers of the requests it started are followed) is `probed` too, but
    /// its pass rate is the limit's own.
    pub(super) held_down: bool,
    /// Callers held back while it was open that were turned away without waiting, and those
    /// that waited for a permit (the limiter's counts, taken as it closes).
    pub(super) turned_away: u64,
    pub(super) waited: u64,
    /// When the earliest started of its answers' requests got its permit: a bucket whose
    /// answers all started after a drain reads the limit the drain left.
    pub(super) oldest: Option<crate::clock::Nanos>,
}

impl Bucket {
    /// An empty bucket lasting `span`.
    pub(super) fn new(span: Duration) -> Self {
        Bucket {
            span,
            ..Bucket::default()
        }
    }

    /// The bucket's 5th-percentile RT (a true quantile at any request rate: the
    /// `ceil(0.05 n)`-th smallest of its `n` RTs): low quantiles move with queueing delay and
    /// hardly with service-time noise. `None` with fewer than `min_samples` successes.
    pub(super) fn low_rt(&self) -> Option<Duration> {
        self.low
    }

    /// The bucket's median RT (`None` with fewer than `min_samples` successes): unlike the
    /// mean, it hardly moves with the few slow answers of a heavy tail, and it hardly depends
    /// on whether the slowest answers were waited for.
    pub(super) fn mid_rt(&self) -> Option<Duration> {
        self.mid
    }

    /// The standard error of [`mid_rt`](Self::mid_rt).
    pub(super) fn mid_se(&self) -> Option<Duration> {
        self.mid_se
    }

    /// The standard error of [`low_rt`](Self::low_rt).
    pub(super) fn low_se(&self) -> Option<Duration> {
        self.low_se
    }

    /// Computes the low quantile, its standard error and the median (with at least
    /// `min_samples` successes) and frees the RTs.
    pub(super) fn seal(&mut self, min_samples: usize) {
        let n = self.rts.len();
        if let Some((low, se)) = self.low_so_far(min_samples) {
            self.low = Some(low);
            self.low_se = Some(se);
            let m = n.div_ceil(2);
            let (_, mid, _) = self.rts.select_nth_unstable(m - 1);
            self.mid = Some(*mid);
            // The median's rank has a standard error of √n ÷ 2: the RTs √n ranks either side
            // span about four standard errors of it.
            let w = (n as f64).sqrt().ceil() as usize;
            let (lo, hi) = (m.saturating_sub(w).max(1), (m + w).min(n));
            let (_, lo_rt, _) = self.rts.select_nth_unstable(lo - 1);
            let lo_rt = *lo_rt;
            let (_, hi_rt, _) = self.rts.select_nth_unstable(hi - 1);
            self.mid_se = Some(hi_rt.saturating_sub(lo_rt) / 4);
        }
        self.rts = Vec::new();
    }

    /// The 5th-percentile RT of the answers so far and its standard error, with at least
    /// `min_samples` of them (the bucket stays open).
    pub(super) fn low_so_far(&mut self, min_samples: usize) -> Option<(Duration, Duration)> {
        let n = self.rts.len();
        if n < min_samples.max(1) {
            return None;
        }
        let k = rank(LOW_QUANTILE, n);
        let (_, kth, _) = self.rts.select_nth_unstable(k - 1);
        let low = *kth;
        // The standard error of a p-quantile of n samples is √(p(1 − p) / n) ÷ the density
        // there; the density is read off the RTs themselves, as p ÷ the gap from the
        // p-quantile to the 2p-quantile.
        let k2 = rank(2.0 * LOW_QUANTILE, n);
        let (_, k2th, _) = self.rts.select_nth_unstable(k2 - 1);
        let gap = k2th.saturating_sub(low).as_secs_f64();
        let se = (LOW_QUANTILE * (1.0 - LOW_QUANTILE) / n as f64).sqrt() * gap / LOW_QUANTILE;
        Some((low, Duration::from_secs_f64(se)))
    }

    /// Nearly every request (90 %) started with every permit taken: demand is not what
    /// limits the pass rate.
    pub(super) fn pinned(&self) -> bool {
        self.pressed(0.9)
    }

    /// The limit held some demand back: a request started with every permit taken, or a
    /// caller waited for a permit or was turned away. A back-off for drops needs it: below
    /// the limit, a lower limit changes nothing the resource sees, and only walks toward the
    /// demand, which a failing service keeps small (its callers retry less, or fail fast).
    pub(super) fn bound(&self) -> bool {
        self.saturated || self.waited > 0 || self.turned_away > 0
    }

    /// Callers were turned away at once, and fewer waited for a permit than half the answers:
    /// the limiter has no queue (or one too small to hold a caller long), so the demand the
    /// limit holds back leaves instead of waiting, and its requests, never started, cannot
    /// show it by starting with every permit taken. (Overloaded with a queue, callers are
    /// turned away at once too, when it is full or their wait would pass its timeout, but
    /// nearly every answer is of a caller that waited.)
    pub(super) fn turned_away_at_once(&self) -> bool {
        self.turned_away > 0 && 2 * self.waited < self.passes + self.drops
    }

    /// At least `share` of the requests started with every permit taken.
    pub(super) fn pressed(&self, share: f64) -> bool {
        let samples = self.passes + self.drops;
        samples > 0 && self.at_limit as f64 >= share * samples as f64
    }

    /// The requests its low RT shows waiting above `floor` (Little's law: that wait × its pass
    /// rate), once sealed with a low RT.
    pub(super) fn queue_over(&self, floor: Duration) -> Option<f64> {
        self.low
            .map(|low| low.saturating_sub(floor).as_secs_f64() * self.rate())
    }

    /// Counts one answer that showed `busy` workers busy at once ([`Self::counted`]).
    pub(super) fn count(&mut self, busy: usize) {
        self.with_count += 1;
        if busy > self.counted {
            self.counted = busy;
            self.at_counted = 1;
        } else if busy == self.counted {
            self.at_counted += 1;
        }
    }

    /// Rate of successes per second over the bucket's span.
    pub(super) fn rate(&self) -> f64 {
        self.passes as f64 / self.span.as_secs_f64().max(1e-9)
    }

    pub(super) fn add(&mut self, rt: Duration) {
        self.passes += 1;
        self.rt_sum += rt;
        self.rt_sq += rt.as_secs_f64().powi(2);
        match self.least {
            Some(least) if rt >= least => {
                self.second = Some(self.second.map_or(rt, |second| second.min(rt)));
            }
            least => {
                self.second = least;
                self.least = Some(rt);
            }
        }
        self.rts.push(rt);
    }
}

/// Mean of `n` RTs summing to `rt_sum`, if there are at least `min_samples`.
pub(super) fn mean(rt_sum: Duration, n: u64, min_samples: usize) -> Option<Duration> {
    (n >= min_samples.max(1) as u64).then(|| rt_sum / u32::try_from(n).unwrap_or(u32::MAX))
}
