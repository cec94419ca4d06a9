//! A cap the resource enforces with fast failures: a service that guards itself (a connection
//! cap, a load-shedding middleware, Tomcat's `maxConnections`) has no queue past its cap and
//! answers every request beyond it at once with an overload failure (review 28 finding 3).
//!
//! Such a failure is faster than the unqueued answers, so the steering leaves it out as it
//! leaves out a path in maintenance's (review 26): it says nothing of a queue. What tells the
//! two apart is the permits out when each request started. A maintenance path fails at any
//! count; a full service fails only from its cap up, and there nearly every time. So the
//! recent answers are sorted by their permits out, and the split that best separates the fast
//! failures from the rest (the most likely change point of the failure share) is a cap when
//!
//! - at least [`MIN_DROPS`] fast failures lie above it, a share of at least [`SHARE_ABOVE`] of
//!   the answers there;
//! - below it the share is at most [`RATIO`] of that, and at the share above, the answers
//!   below would have shown [`SIGNIFICANCE`] standard errors (Poisson) more failures than they
//!   did.
//!
//! The limit is then held at the cap, the most permits out below the split (a request that
//! started with that many out was served). Once held there no request passes it, so nothing shows
//! whether the cap still stands: it lapses after a hold (the probe interval), its evidence is
//! forgotten and the limit is free to grow — the service may have grown. If the failures come
//! back where it stood, [`MIN_DROPS_AGAIN`] of them learn it again, judged as each comes. (A
//! hold doubled at each such return, up to 8 intervals, held a cap 16.5 s after the service
//! doubled: `self_shedding_grows`.) A cap learnt lower than the one in force replaces it at
//! once.

use crate::clock::Nanos;
use std::collections::VecDeque;
use std::time::Duration;

/// Fast failures above the split needed to call it a cap.
const MIN_DROPS: usize = 5;
/// Fast failures above the split needed to learn again the cap that lapsed last (within
/// [`SAME_CAP`]): its lapse was a test of it, and two failures where it stood pass it.
const MIN_DROPS_AGAIN: usize = 2;
/// The least failure share above the split: a full service refuses nearly every request past
/// its cap (less the ones that started while a permit was in transit, or out of order with
/// another that started with one permit fewer out).
const SHARE_ABOVE: f64 = 0.5;
/// The failure share below the split may be at most this fraction of the share above.
const RATIO: f64 = 0.1;
/// Standard errors by which the answers below the split must fall short of the failures the
/// share above would have given them.
const SIGNIFICANCE: f64 = 3.0;
/// The most fast failures between two judgements set off by failures, once several found no
/// cap ([`ShedCap::every`]): at 80, 160 and 320 the four `self_shedding` scenarios read the
/// same on seeds 1–15 (a cap still forming is judged at each bucket's close too).
const MOST_PENDING: usize = 320;
/// Answers kept, at most (the newest).
const MAX_SAMPLES: usize = 4096;
/// A cap learnt again within this fraction of the one that lapsed is the same cap.
const SAME_CAP: f64 = 0.1;
/// How far the steering's own limit may stand above a cap in force (the limit in force is held
/// at the cap): three × 0.9 cuts without a step up in between before the cap is cut into.
/// Held at the cap itself, where the resource never queues, the queue estimate is noise, and
/// its cuts took 20 permits for 20 workers to 15–17 for 7 s (`self_shedding_2x` seed 8:
/// goodput 0.944).
const ROOM: f64 = 1.25;
/// After a lapse the limit grows from [`ROOM`] × the cap by at most this a bucket: a jump to
/// the steering's own limit (55 for a cap of 20) handed every caller in the limiter's queue a
/// permit at once, and at 2× they were all refused (66 in one tick: a tenth of a second's
/// goodput at each lapse).
const REGROWTH: f64 = 1.1;
/// Buckets after a lapse during which the growth is bounded.
const REGROWTH_BUCKETS: u32 = 50;

/// The learner; see the module's doc.
#[derive(Clone, Debug, Default)]
pub(super) struct ShedCap {
    /// Recent answers: (end, permits out at the start, a fast failure).
    samples: VecDeque<(Nanos, usize, bool)>,
    /// Fast failures among `samples`.
    drops: usize,
    /// Fast failures since the answers were last judged.
    pending: usize,
    /// Fast failures that set off the next judgement (at least [`MIN_DROPS`]): doubled each
    /// time one finds no cap, up to [`MOST_PENDING`], back at [`MIN_DROPS`] when one does.
    /// Each judgement sorts the answers kept (up to 4096): at every fifth failure of a path
    /// in maintenance, failing at any permits out, a third of the answers failing fast cost
    /// 6.4 µs an answer under the steering's lock (0.03 µs with none); now 0.14 µs. (Each
    /// bucket's close judges as before.)
    every: usize,
    /// The cap in force, and until when.
    cap: Option<(usize, Nanos)>,
    /// The last cap that lapsed, and when.
    lapsed: Option<(usize, Nanos)>,
    /// Buckets closed since the last lapse.
    since_lapse: u32,
    /// How long a cap holds (the last `judge` was given).
    hold: Duration,
}

impl ShedCap {
    /// The most the limit in force may be: the cap, or while the limit grows after a lapse
    /// its bound then (`usize::MAX`: none).
    pub(super) fn limit_bound(&self) -> usize {
        match self.cap {
            Some((c, _)) => c,
            None => self.regrowth(),
        }
    }

    /// The most the steering's own limit may be: [`ROOM`] × the cap, or the bound after a
    /// lapse (`usize::MAX`: none).
    pub(super) fn base_bound(&self) -> usize {
        match self.cap {
            Some((c, _)) => (c as f64 * ROOM).ceil() as usize,
            None => self.regrowth(),
        }
    }

    /// The cap in force and until when it holds, if one is.
    pub(super) fn in_force(&self) -> Option<(usize, Nanos)> {
        self.cap
    }

    fn regrowth(&self) -> usize {
        match self.lapsed {
            Some((c, _)) if self.since_lapse < REGROWTH_BUCKETS => {
                let grown = c as f64 * ROOM * REGROWTH.powi(self.since_lapse as i32);
                grown.ceil() as usize
            }
            _ => usize::MAX,
        }
    }

    /// An answer (a success, or a failure faster than the unqueued answers), `in_flight`
    /// permits out when it started.
    pub(super) fn add(&mut self, end: Nanos, in_flight: usize, fast_drop: bool) {
        self.samples.push_back((end, in_flight, fast_drop));
        self.drops += usize::from(fast_drop);
        while self.samples.len() > MAX_SAMPLES {
            self.pop();
        }
        // A failure frees its permit at once and the next caller in the limiter's queue takes
        // it: past the cap, the whole queue went through in a tenth of a second, every caller
        // refused (the real gate: 500 at each lapse). So without a cap in force the answers
        // are judged at once, at every [`MIN_DROPS`]-th fast failure (a sort of the answers
        // each time), and for a hold after a lapse at each past the old cap.
        if fast_drop && self.cap.is_none() {
            self.pending += 1;
            let past_old = self
                .lapsed
                .is_some_and(|(c, at)| in_flight > c && end < at + self.hold);
            if past_old || self.pending >= self.every.max(MIN_DROPS) {
                self.learn(end);
                self.every = if self.cap.is_some() {
                    MIN_DROPS
                } else {
                    (2 * self.every.max(MIN_DROPS)).min(MOST_PENDING)
                };
            }
        }
    }

    fn pop(&mut self) {
        if let Some((_, _, d)) = self.samples.pop_front() {
            self.drops -= usize::from(d);
        }
    }

    /// At a bucket's close: forgets answers older than `window`, lets a cap whose hold is
    /// over lapse, and looks for one; a cap found holds for `hold`.
    pub(super) fn judge(&mut self, now: Nanos, window: Duration, hold: Duration) {
        while self
            .samples
            .front()
            .is_some_and(|&(end, _, _)| end + window < now)
        {
            self.pop();
        }
        if let Some((c, until)) = self.cap
            && now >= until
        {
            // Nothing has passed the cap since: forget the failures that set it (the answers
            // below it stay: with them two failures past it are evidence at once) and let the
            // limit grow.
            self.cap = None;
            self.lapsed = Some((c, now));
            self.since_lapse = 0;
            self.samples.retain(|&(_, _, d)| !d);
            self.drops = 0;
        }
        self.since_lapse = self.since_lapse.saturating_add(1);
        self.hold = hold;
        self.learn(now);
    }

    /// Takes the cap the recent answers show, if any: a new one holds for the hold from now,
    /// a lower one than in force replaces it at once (its hold unchanged).
    fn learn(&mut self, now: Nanos) {
        self.pending = 0;
        let Some(found) = self.split() else {
            return;
        };
        self.cap = match self.cap {
            Some((c, until)) => Some((c.min(found), until)),
            None => Some((found, now + self.hold)),
        };
    }

    /// `cap` is the one that lapsed last, or within [`SAME_CAP`] of it.
    fn near_lapsed(&self, cap: usize) -> bool {
        self.lapsed
            .is_some_and(|(l, _)| (cap as f64 - l as f64).abs() <= SAME_CAP * l as f64 + 1.0)
    }

    /// The cap the recent answers show, if any: the permits out below the best split.
    fn split(&self) -> Option<usize> {
        let again = self.lapsed.is_some();
        let least = if again { MIN_DROPS_AGAIN } else { MIN_DROPS };
        if self.drops < least {
            return None;
        }
        let mut v: Vec<(usize, bool)> = self.samples.iter().map(|&(_, n, d)| (n, d)).collect();
        v.sort_unstable();
        let (n, d) = (v.len() as f64, self.drops as f64);
        let whole = n * h(d / n);
        let mut best: Option<(f64, usize)> = None;
        let mut below_drops = 0usize;
        for i in 1..v.len() {
            below_drops += usize::from(v[i - 1].1);
            if v[i].0 == v[i - 1].0 {
                continue;
            }
            let (nb, db) = (i as f64, below_drops as f64);
            let (na, da) = (n - nb, d - db);
            if (da as usize) < least {
                break; // fewer above every later split
            }
            let (pb, pa) = (db / nb, da / na);
            let expected = nb * pa;
            let evident = expected - db >= SIGNIFICANCE * expected.sqrt();
            if pa < SHARE_ABOVE || pb > RATIO * pa || !evident {
                continue;
            }
            // The most permits out at which answers below the split were seen: one more may
            // still be served, but only this many are known to be (at 2× every answer starts
            // with all 20 out, and the failures after a raise to 27 with 28 out).
            let cap = v[i - 1].0;
            // Fewer than MIN_DROPS only where the cap that lapsed stood.
            if (da as usize) < MIN_DROPS && !self.near_lapsed(cap) {
                continue;
            }
            let gain = nb * h(pb) + na * h(pa) - whole;
            if best.is_none_or(|(g, _)| gain > g) {
                best = Some((gain, cap));
            }
        }
        best.map(|(_, cap)| cap).filter(|&c| c >= 1)
    }
}

/// `p ln p + (1 − p) ln(1 − p)`: the log-likelihood per answer of a failure share `p`.
fn h(p: f64) -> f64 {
    let term = |x: f64| if x > 0.0 { x * x.ln() } else { 0.0 };
    term(p) + term(1.0 - p)
}
