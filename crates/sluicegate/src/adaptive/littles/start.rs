//! The start's test of a starting limit already past the knee: the RTs of the requests that
//! started with few permits out against those of the requests that found every permit taken.

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

    fn merge(&mut self, other: &Moments) {
        self.n += other.n;
        self.sum += other.sum;
        self.ln += other.ln;
        self.ln2 += other.ln2;
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

/// The low quantile the floor is read at, as the buckets read theirs.
const LOW_QUANTILE: f64 = 0.05;

/// The RTs of the requests that started during the start, in groups: those that found at
/// most half the starting limit out (unqueued, unless the resource has fewer workers than
/// that), and the current *round*: those that found more out than the round's lower edge.
///
/// In front of a resource with at least as many workers as the limit, both groups are served
/// at once and their RTs have one distribution, whatever its shape. In front of a smaller one
/// the round waits: by Little's law, its `k` permits out (on average) were answered at
/// `k ÷ RT_round` a second, of which `k × RT_few ÷ RT_round` were in service and the rest
/// queued inside. It needs no floor, no bucket and no probe, so it sees a start past the knee
/// as soon as a few answers of each group are in: a round trip, however long that is. A round
/// whose requests that found every permit of its limit taken answered as fast as the first
/// ones is *clear*: the limit may double (TCP's slow start, a doubling a round trip).
#[derive(Clone, Debug)]
pub(super) struct StartTest {
    /// The starting limit.
    initial: usize,
    few: Moments,
    /// The successes of the first group: a failure that answers fast is no unqueued RT.
    few_ok: Moments,
    /// The latest successful RTs of the first group (at most `KEPT`).
    few_rts: std::collections::VecDeque<Duration>,
    /// The first group and the answers that judged the rounds clear since: what a round is
    /// compared with.
    clear: Moments,
    /// The round: the requests that started with more than `from` out, under a limit of `to`.
    from: usize,
    to: usize,
    more: Moments,
    /// The permits out when each request of the round started, summed.
    more_in_flight: f64,
    /// The requests of the round that found every permit of its limit taken: the first to
    /// answer of those that started on the way up to it are the least queued, and read a
    /// queue as none, where these all waited as long as any.
    top: Moments,
    /// The RTs at the top of the round (at most `KEPT`).
    top_rts: Vec<f64>,
}

/// What the start's round says, once it has enough answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Round {
    /// Its requests waited: this many permits were in service (Little's law).
    Queued(f64),
    /// They did not, and enough answered at the top of the round to say so.
    Clear,
}

impl StartTest {
    /// A test for a start at `initial` permits: its first round is the requests that found
    /// more than half of them out.
    pub(super) fn new(initial: usize) -> Self {
        StartTest {
            initial,
            few: Moments::default(),
            few_ok: Moments::default(),
            few_rts: std::collections::VecDeque::new(),
            clear: Moments::default(),
            from: initial / 2,
            to: initial,
            more: Moments::default(),
            more_in_flight: 0.0,
            top: Moments::default(),
            top_rts: Vec::new(),
        }
    }

    /// Files the RT of a request that started with `in_flight` permits out (itself included).
    /// Answers that were dropped (late, or failed) count in the test as successes do, in
    /// every group alike, but give no unqueued RT.
    pub(super) fn add(&mut self, rt: Duration, in_flight: usize, success: bool) {
        let secs = rt.as_secs_f64();
        if in_flight * 2 <= self.initial {
            self.few.add(secs);
            self.clear.add(secs);
            if success {
                self.few_ok.add(secs);
                if self.few_rts.len() == KEPT {
                    self.few_rts.pop_front();
                }
                self.few_rts.push_back(rt);
            }
        } else if in_flight > self.from {
            self.more.add(secs);
            self.more_in_flight += in_flight as f64;
            if in_flight >= self.to {
                self.top.add(secs);
                if self.top_rts.len() < KEPT {
                    self.top_rts.push(secs);
                }
            }
        }
    }

    /// Whether the first group holds `least` answers: the rounds can be judged. (Until then
    /// the buckets' slow start grows the limit alone; a stream of samples that never shows
    /// the first requests, which started with few permits out, would leave it at the start.)
    pub(super) fn judging(&self, least: u64) -> bool {
        self.few.n >= least.max(2)
    }

    /// The limit the round was set for.
    pub(super) fn to(&self) -> usize {
        self.to
    }

    /// The last limit judged clear (past the first round), or half the starting limit.
    pub(super) fn last_clear(&self) -> usize {
        self.from
    }

    /// Whether the round is the first: the requests that found more than half the starting
    /// limit out.
    pub(super) fn first_round(&self) -> bool {
        self.to <= self.initial
    }

    /// The round was judged clear: it joins what later rounds are compared with, and the next
    /// one is the requests that find more than its limit out, up to `to`.
    pub(super) fn next_round(&mut self, to: usize) {
        self.clear.merge(&self.top);
        self.round(self.to, to);
    }

    /// A round of the requests that find more than `from` out under a limit of `to`, from
    /// scratch.
    pub(super) fn round(&mut self, from: usize, to: usize) {
        self.from = from.max(self.initial / 2);
        self.to = to;
        self.more = Moments::default();
        self.more_in_flight = 0.0;
        self.top = Moments::default();
        self.top_rts.clear();
    }

    /// The mean RT of the first group and of the answers that judged the rounds clear.
    pub(super) fn clear_rt(&self) -> Option<Duration> {
        (self.clear.n > 0).then(|| Duration::from_secs_f64(self.clear.mean()))
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

    /// The round's verdict. `Queued` with the permits in service (Little's law:
    /// `k × RT_clear ÷ RT_round` for the `k` out on average when its requests started) if its
    /// log RTs stand `significance` standard errors above those of the first group and the
    /// answers that judged the rounds clear (logarithms, so a heavy tail's few slow answers do
    /// not swamp the test), with at least `least` answers in each, and the permits that waited
    /// come to more than `target`. Otherwise `Clear` once as many requests answered at the top
    /// of the round as it is wide (and at least `least`); `None` until then.
    pub(super) fn verdict(&self, least: u64, significance: f64, target: f64) -> Option<Round> {
        if self.few.n < least.max(2) || self.more.n < least.max(2) {
            return None;
        }
        let lift = self.more.ln_mean() - self.clear.ln_mean();
        let se = (self.clear.ln_mean_var() + self.more.ln_mean_var()).sqrt();
        let out = self.more_in_flight / self.more.n as f64;
        let in_service = out * self.clear.mean() / self.more.mean().max(1e-12);
        let width = self.to.saturating_sub(self.from) as u64;
        if lift > significance * se && out - in_service > target {
            if self.first_round() {
                return Some(Round::Queued(in_service));
            }
            // Past the first round the rounds judged before read low (their first answers
            // judged them), and a round compared with them reads a queue where there is none
            // (2000 workers drained to 1100). A queue shifts every answer at the top by its
            // wait: most of them come in over the first group's median. Fewer, and this is the
            // bias, not a queue (the round is judged clear once it is wide enough).
            let mid = self.unqueued_mid()?.as_secs_f64();
            if self.top_rts.len() < least as usize {
                return None;
            }
            let n = self.top_rts.len() as f64;
            let below = self.top_rts.iter().filter(|&&rt| rt < mid).count() as f64;
            if below < n / 2.0 + significance * (n / 4.0).sqrt() {
                return Some(Round::Queued(in_service));
            }
        }
        (self.top.n >= width.max(least)).then_some(Round::Clear)
    }
}
