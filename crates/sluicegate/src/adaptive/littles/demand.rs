//! The demand-led start: leaps from the starting limit to the concurrency the offered load
//! holds, by Little's law on the demand, instead of growing × 1.5 a bucket.
//!
//! At the starting limit `L0`, pinned (callers wait or are turned away), three counts give the
//! demand without a single RT: the answers `X0` a second (from the `L0`-th answer on: the
//! first requests start together and, behind a service floor, answer together), the callers
//! held back `λ` a second (the limiter's count,
//! [`on_demand`](crate::adaptive::LimitAlgorithm::on_demand)) and `L0` itself. If the resource
//! serves all `L0` at once, Little's law gives its mean RT as `L0 ÷ X0`, and the demand's
//! concurrency as `λ × L0 ÷ X0`: reached a few round trips after the first answer, where the
//! slow start waits three buckets (100 ms at least each) and then grows × 1.5 a bucket.
//!
//! Checks cap it at the knee:
//!
//! - **Before the first leap**, the resource must serve all `L0` at once: the requests that
//!   found more than half the permits out must not be slower than those that found few (a
//!   rank test: of every pair, the second group's answer is the faster about half the time,
//!   whatever the shape of the RTs; *clear* at no less than ½ less [`CLEAR`] standard
//!   errors). In front of a pool smaller than `L0` (the demo: 10 workers that slow as they
//!   fill) the second group waits and there is no leap: the start's own tests handle it.
//!   The first group is the first ten requests or so, fixed once the limit is pinned: where
//!   they happened to be fast, the share may stay low however many answers come (2 starts
//!   of 200 in front of 200 workers). So the count of the requests that waited is read too: one that started with
//!   `n` permits out and saw `k` answers while it was out shows at least `n − k` workers
//!   (served first come, first served, it waited for `n − w` answers before a worker took
//!   it), and [`PINNED`] answers that show the starting limit less at most
//!   [`MIN_QUEUE_TARGET`] clear it as well (200 workers of 20 ms behind 20 permits: in seeds
//!   60 and 92 of the tests, and seed 19 of the card, the rank test never read clear and the
//!   slow start took over after 0.4 s, with 2.7 % of callers timed out in the limiter).
//!   The same count holds a leap the rank test clears wherever it could have shown the
//!   starting limit served at once and has not
//!   ([`count_withholds`](DemandStart::count_withholds)): [`PINNED`] or more of the requests
//!   that found every permit taken, none showing more workers than the limit less the target
//!   queue, while some of the first group answered fast enough that, served with every permit
//!   out, they would have shown more (a slow first group in front of the demo's 10 workers:
//!   20 → 74 permits at 0.45 s, p99 6 × unloaded; behind a scheduler's delay outside them,
//!   20 → 43–80 in 26 starts of 500). The rank test alone clears a leap only where the count
//!   cannot speak: a service with little spread, or behind a floor, whose answers are never
//!   short enough to show the pool whatever its size.
//!   The buckets' slow start, whose step of × 1.5 would end the watch, waits for it while it
//!   counts its answers under a demand that stands; and once more when it has its count and
//!   waits only for the first group's last answers (the slowest of the first ten requests,
//!   ~3 mean RTs of an exponential service), which the rank test then reads as still out, each
//!   at least as slow as its time out so far (a pair the second group may yet win counts as
//!   lost to it).
//!   Where the demand is far past the leaps (it asks for × [`LEAP`] × [`LEAP_AGAIN`] and
//!   more, the answers counted 1.5 standard errors high), the watch counts one answer a permit
//!   over one round trip, and reads the first group's last answers as still out as soon as
//!   that count stands: each round trip at the starting limit then holds back dozens of
//!   callers for each it serves (2000 workers of 200 ms at 1.5 ×: 20 permits for 0.6–0.8 s,
//!   now 0.4–0.6 s).
//! - **Each leap** is at most × [`LEAP`] (× [`LEAP_AGAIN`] after a clear one), to the demand
//!   plus three standard deviations of it (a Poisson count), and is checked from a round trip
//!   after it. The queue inside the
//!   resource, by Little's law: the 5th-percentile RT of the requests that started since, over
//!   that of the starting limit's answers, × the answer rate, standing three standard errors
//!   past the target queue (without a queue in the limiter, the medians' too: the requests
//!   that find a worker free between refusals keep the low RTs low). Or the permits in service, `X1 × L0 ÷ X0`, three standard errors
//!   short of the leap's limit (at a first look, once the low RTs can be read too, and at two
//!   answers a permit). Either is the knee: the permits in service then are the leap's limit
//!   less that queue, or, where the low RTs show none, the answer rate's count. (Waiting
//!   requests slow the workers that serve them, so the answer rate understates the pool by as
//!   much as the queue is large; when it shows fewer than the limit before the leap, that
//!   limit, judged clear, is where the start returns.)
//! - **A leap that found no more workers by the answer rate**: no more answers a second than
//!   the starting limit gave, and three standard errors fewer than the leap's limit would.
//!   The queue's contention slows the workers, so the rate reads a pool the size of the
//!   starting limit and one half again as large alike; the knee is read instead from the
//!   *pinned* requests (started after the leap with every permit of its limit taken): in a
//!   pool served first come, first served, the fewest answers one of them saw while it was
//!   out is the queue ahead of it, plus the few answered while it was served. The leap's
//!   limit less that queue is the knee; until five pinned requests have answered, the limit
//!   is held back at the starting limit (plus the drain's margin), and if no count stands
//!   once every request out then has answered, that limit is the knee.
//! - **A leap that slowed the answers**: fewer answers a second than the starting limit gave,
//!   by three standard errors, is past any knee (a pool that slows as it fills), judged as
//!   soon as the count shows it, without the low RTs of requests started after the leap,
//!   which behind such a queue come seconds later; the start returns to the limit before.
//! - **No knee**, and callers still held back: the leap's answers measure the mean RT again,
//!   and it leaps on. No caller held back: the limit covers the demand, and the buckets take
//!   over. A leap is judged clear on two answers a permit of its limit, or, after a leap from
//!   a limit already judged clear or where the answer rate shows the leap's limit in service
//!   within one standard error, on one, once [`MIN_LOW`] requests started a round trip
//!   after it have answered (the low RTs read the queue whole by then: each of those waited
//!   behind it). Or, sooner, by the count of the pinned requests: [`PINNED`] of them that
//!   saw no more answers while out than the target queue, past those the answer rate gives
//!   in the starting limit's 5th-percentile RT (the others served while it was: behind a
//!   service floor, more than the target), show the leap's limit served at once, and callers
//!   held back since the leap that ask for another leap it on. After a
//!   leap from a limit judged clear, the pinned requests' count reads the knee as soon as it
//!   stands.
//!
//! The buckets' own decisions wait while a leap is being checked; any other move of the limit
//! before the first leap (the start's tests, a bucket's growth) ends the demand-led start.

use super::super::algorithm::clamp;
use super::{LOW_QUANTILE, MIN_QUEUE_TARGET, rank};
use crate::clock::{Nanos, saturating_nanos};
use std::time::Duration;

/// The most one leap multiplies the limit by: an overshoot past the knee costs a queue inside
/// the resource for the two round trips the check takes.
pub(super) const LEAP: f64 = 4.0;

/// The most a leap after a clear one multiplies the limit by: the resource has shown it serves
/// the limit before, and a larger step leaves a smaller overshoot at the knee (× 4 took 500
/// workers from 320 permits to 1059, whose queue slowed them so much that the answer rate read
/// 327 in service; × 8 from 80 to 640 read about 440).
pub(super) const LEAP_AGAIN: f64 = 8.0;

/// Poisson standard errors by which the callers held back at the starting limit must
/// outnumber its answers for the first leap (by Little's law on both counts, a demand above
/// the starting limit). The bar had been a demand past two slow-start steps (2.25 ×): below
/// it the slow start, which first waits three buckets for a queue estimate, held callers in
/// the limiter's queue for half a second under a load the resource could carry (a fixed 50 ms
/// service, 50 workers at 0.5 ×: p99 2.3 × no limit's, now 1.2 ×). A demand only as large as
/// the limit but counted over a burst of a fast service (two round trips of a 3 ms cache are
/// a few ms) leapt into a pool that slows as it fills; at 1.5 standard errors none did in
/// seeds 1–30 of the under-capacity scenarios. A pool the size of the starting limit under
/// an overload (`uniform_1.5x`) is checked after the leap as every leap is.
const FIRST_LEAP_SIGNIFICANCE: f64 = 1.5;

/// A leap after a clear one: the demand past one slow-start step above the limit.
const WORTH_AGAIN: f64 = 1.5;

/// Standard errors by which the permits in service must fall short of the leap's limit for
/// the check to call it the knee.
const KNEE_SIGNIFICANCE: f64 = 3.0;

/// Standard errors of the rank test's share below ½ still taken as clear: the first group is
/// the first ten requests or so, fixed once the limit is pinned, so at one standard error one
/// start in six whose first answers happened to be fast would never leap. At the first look,
/// pools of 20 workers and more read at most 1.0 (seeds 1–10 of nine scenarios), the demo's
/// 10 workers 2.0–3.2.
const CLEAR: f64 = 1.5;

/// Answers for a low quantile that is not the smallest of a handful.
const MIN_LOW: usize = 20;

/// Answers of pinned requests (started after a leap with every permit of its limit taken)
/// before their count is read: the fewest answers one of them saw while it was out is the
/// queue ahead of it plus those answered while it was served, and the least of five
/// services is short enough that the second part is a few answers (20 workers of 10 ms
/// behind 40–55 permits: the knee read 16–21).
const PINNED: u64 = 5;

/// The chance below which `PINNED` or more pinned requests that all answered no sooner than
/// their least RT are taken as queued: the one-sided tail of [`KNEE_SIGNIFICANCE`] standard
/// errors. Without a queue inside, each answers no sooner than that with the share of the
/// starting limit's answers that did.
pub(super) const PINNED_TAIL: f64 = 0.00135;

/// The most answer ends kept for the pinned requests' count (a bound on memory, not a
/// statistic): past it, the count is not read.
const KEPT_ENDS: usize = 1 << 16;

/// The most RTs of each group kept for the rank test (a bound on memory, not a statistic).
const KEPT: usize = 4096;

/// Counts from a point in time on.
#[derive(Clone, Copy, Debug, Default)]
struct Mark {
    at: Nanos,
    blocked: u64,
    turned_away: u64,
    answers: u64,
}

#[derive(Clone, Copy, Debug)]
enum Phase {
    /// At the starting limit, measuring.
    Watching,
    /// Leapt at `at` to `to`; checked from a round trip after.
    Leapt { at: Nanos, from: usize, to: usize },
    /// Back at `from` (plus the drain's margin) after a leap to `to` at `at` that found no
    /// more workers by the answer rate, until the pinned requests' count reads the knee or
    /// every request out when it came back has answered (the answers count was `answers`).
    Back {
        at: Nanos,
        from: usize,
        to: usize,
        answers: u64,
    },
    /// Over: the buckets decide.
    Done,
}

/// What the demand-led start asks of the limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Verdict {
    /// Nothing to do yet.
    Wait,
    /// Leap to this limit.
    Leap(usize),
    /// Back to this limit (the one before the leap), plus the drain's margin, and held there
    /// while the knee is read.
    Back(usize),
    /// The knee: `in_service` permits in service at the leap from `from` (judged clear),
    /// and the resource's mean RT by Little's law at the starting limit.
    Knee {
        in_service: f64,
        from: usize,
        rt: Duration,
    },
    /// Over, with the limit where it is.
    Done,
}

/// The demand-led start's state.
#[derive(Clone, Debug)]
pub(super) struct DemandStart {
    /// The limiter's running count of callers that found every permit taken, and of those
    /// turned away without waiting.
    blocked: u64,
    turned_away: u64,
    /// Answers seen (successes and drops).
    answers: u64,
    phase: Phase,
    /// From the first answer at the starting limit.
    start: Option<Mark>,
    /// From a round trip after the last leap.
    check: Option<Mark>,
    /// The check's first look is taken.
    looked: bool,
    /// The watch has its count: two answers a permit over two of the RTs they give.
    counted: bool,
    /// The buckets' slow start would have grown past the watch, which had its count and
    /// waited only for the first group's last answers: the rank test reads those still out.
    impatient: bool,
    /// Leaps so far.
    leaps: u32,
    /// Answers at the starting limit that waited behind at most [`MIN_QUEUE_TARGET`] others
    /// (by the answers each saw while it was out, [`file_room`](Self::file_room)).
    roomy: u64,
    /// Answers at the starting limit of requests that found every permit taken, and the
    /// most workers one of them showed (the permits out when it started less the answers it
    /// saw while out, [`file_room`](Self::file_room)).
    full: u64,
    full_shown: u64,
    /// The resource's mean RT at the starting limit, by Little's law (s), and the answers it
    /// was measured on.
    rt: f64,
    measured: u64,
    /// The answers a check needs: as many as the starting limit's rate was measured on.
    least: u64,
    /// RTs at the starting limit of the requests that found at most half the permits out,
    /// and of the others (s), each kept sorted.
    few: Vec<f64>,
    more: Vec<f64>,
    /// The rank test's count: of every pair (one of `more`, one of `few`), those where the
    /// `more` RT is the lower, ties counted a half. Kept as RTs are filed, so the test costs
    /// two binary searches an answer, not a pass over every pair.
    wins: f64,
    /// At the starting limit, by the permits out when each request started (itself
    /// included; the last slot counts every request that found them all taken): how many of
    /// those that found at most half out have answered, and the earliest start among the
    /// answers at each count (ns).
    few_at: Vec<u32>,
    earliest: Vec<u64>,
    /// RTs of the requests that started after the last leap (s).
    after: Vec<f64>,
    /// The ends of the answers since the last leap, in order (at most [`KEPT_ENDS`]); before
    /// the first leap, also the starting limit's answers that [`file_room`](Self::file_room)
    /// counts (at most [`KEPT`]).
    ends: Vec<u64>,
    /// Of the pinned requests (started after the leap with every permit of its limit taken)
    /// that answered: how many, their least RT (s), and the fewest answers one of them saw
    /// while it was out, itself left out.
    pinned: u64,
    pinned_rt: f64,
    pinned_seen: u64,
    /// Of those pinned requests, the ones that saw no more answers while out than the target
    /// queue, past the answer rate × the starting limit's 5th-percentile RT: in a pool served
    /// first come, first served, each shows the leap's limit, less that, served at once.
    roomy_after: u64,
    /// The counts at the last leap.
    leapt_mark: Mark,
    /// At the knee after a leap, the permits in service by the pinned requests' count (the
    /// leap's limit less the queue they counted, [`PINNED`] of them answered), whether or not
    /// the count stood as a queue ([`pinned_queue`](Self::pinned_queue)'s tail test).
    counted_at_knee: Option<f64>,
    /// The starting limit's 5th-percentile RT (s; [`floor`](Self::floor)), taken at the
    /// first leap: no RT is filed after it.
    floor_s: Option<f64>,
    /// The steering's target queue as a share of the limit (`queue_target` of the config).
    queue_target: f64,
    /// The configured bounds of the limit: a leap is cut to them, and checked as cut.
    min: usize,
    max: usize,
}

impl DemandStart {
    /// A start that aims, as the steering does, at a queue of `queue_target` × the limit, and
    /// leaps within `min..=max`.
    pub(super) fn new(queue_target: f64, min: usize, max: usize) -> Self {
        DemandStart {
            blocked: 0,
            turned_away: 0,
            answers: 0,
            phase: Phase::Watching,
            start: None,
            check: None,
            looked: false,
            counted: false,
            impatient: false,
            leaps: 0,
            roomy: 0,
            full: 0,
            full_shown: 0,
            rt: 0.0,
            measured: 0,
            least: 0,
            few: Vec::new(),
            more: Vec::new(),
            wins: 0.0,
            few_at: Vec::new(),
            earliest: Vec::new(),
            after: Vec::new(),
            ends: Vec::new(),
            pinned: 0,
            pinned_rt: f64::INFINITY,
            pinned_seen: u64::MAX,
            roomy_after: 0,
            leapt_mark: Mark::default(),
            counted_at_knee: None,
            floor_s: None,
            queue_target,
            min,
            max,
        }
    }
}

impl DemandStart {
    /// Over: the buckets decide.
    pub(super) fn end(&mut self) {
        self.phase = Phase::Done;
    }

    /// The limiter's running count of callers held back.
    pub(super) fn on_demand(&mut self, blocked: u64) {
        self.blocked = self.blocked.max(blocked);
    }

    /// The limiter's running count of callers turned away without waiting.
    pub(super) fn on_turned_away(&mut self, turned_away: u64) {
        self.turned_away = self.turned_away.max(turned_away);
    }

    /// The callers held back since `mark` as they count for the demand, `n` answers since:
    /// with a queue in the limiter, those held back (each waits, then answers, so while the
    /// limit is pinned they are the arrivals); without one (callers turned away at once, and
    /// fewer waited than half the answers), the answers and those turned away, who left
    /// without a trace in the answers.
    fn held_since(&self, mark: &Mark, n: u64) -> f64 {
        let held = self.blocked - mark.blocked;
        let turned_away = (self.turned_away - mark.turned_away).min(held);
        if turned_away > 0 && 2 * (held - turned_away) < n {
            (n + turned_away) as f64
        } else {
            held as f64
        }
    }

    /// Once over, at the next answer (after the limiter read [`floor`](Self::floor) at the
    /// knee): the RTs and answer ends the start kept go back to the allocator. They are
    /// bounded (up to 4096 RTs a group and 65,536 ends, ~0.6 MB), but a limiter lives as long
    /// as its service, and a program may hold one for each of many upstreams.
    fn release(&mut self) {
        if self.few.capacity()
            + self.more.capacity()
            + self.after.capacity()
            + self.ends.capacity()
            + self.few_at.capacity()
            + self.earliest.capacity()
            > 0
        {
            self.few = Vec::new();
            self.more = Vec::new();
            self.few_at = Vec::new();
            self.earliest = Vec::new();
            self.after = Vec::new();
            self.ends = Vec::new();
        }
    }

    /// The 5th-percentile RT of the answers at the starting limit (unqueued, by the rank test).
    pub(super) fn floor(&self) -> Option<Duration> {
        let mut before: Vec<f64> = self.few.iter().chain(&self.more).copied().collect();
        low(&mut before).map(|(low, _)| Duration::from_secs_f64(low))
    }

    /// It leapt at least once.
    pub(super) fn leapt(&self) -> bool {
        self.rt > 0.0
    }

    /// A leap is being checked: the buckets hold the limit.
    pub(super) fn holds(&self) -> bool {
        matches!(self.phase, Phase::Leapt { .. } | Phase::Back { .. })
    }

    /// Asked by the buckets' slow start before it grows the starting limit, which would end
    /// the watch: true (hold the limit) while the watch is still counting the answers its
    /// first leap is measured on, with the callers held back outnumbering the answers so far
    /// as the leap asks (it leaps × 4 where the slow start steps × 1.5); and once, when it has
    /// its count and waits only for the first group's last answers, which the rank test then
    /// reads as still out (each at least as slow as its time out so far).
    pub(super) fn defers_growth(&mut self) -> bool {
        if !matches!(self.phase, Phase::Watching) || self.impatient {
            return false;
        }
        let n = self.answers;
        let held = self.held_since(&Mark::default(), n);
        if held - n as f64 <= FIRST_LEAP_SIGNIFICANCE * (held + n as f64).sqrt() {
            return false;
        }
        if !self.counted {
            return true;
        }
        // Counted: deferred once more only where the watch waits for the first group's last
        // answers (not on the rank test, nor on the demand).
        self.impatient = self.few_missing();
        self.impatient
    }

    /// Some of the first group's requests are still out, read as [`few_out`](Self::few_out)
    /// reads them.
    fn few_missing(&self) -> bool {
        !self.few_at.is_empty() && self.few_at.iter().all(|&c| c <= 1) && self.few_at.contains(&0)
    }

    fn mark(&self, at: Nanos) -> Mark {
        Mark {
            at,
            blocked: self.blocked,
            turned_away: self.turned_away,
            answers: self.answers,
        }
    }

    /// Files one answer (success or drop) of a request that started with `in_flight` permits
    /// out, ending at `end`, under `limit`; `at_start` says the limit is still the starting
    /// one, untouched by anything else. `least` answers of each group make the rank test.
    pub(super) fn observe(
        &mut self,
        end: Nanos,
        latency: Duration,
        in_flight: usize,
        limit: usize,
        at_start: bool,
        least: usize,
    ) -> Verdict {
        self.answers += 1;
        match self.phase {
            Phase::Done => {
                self.release();
                Verdict::Done
            }
            Phase::Watching if !at_start => {
                self.phase = Phase::Done;
                Verdict::Done
            }
            Phase::Watching => self.watch(end, latency, in_flight, limit, least),
            Phase::Leapt { at, from, to } => {
                // Requests that started a round trip after the leap: the first ones after it
                // may have found workers free even past the knee (the leap's new permits fill
                // the pool before any waits).
                let start = end.as_u64().saturating_sub(saturating_nanos(latency));
                if start >= (at + Duration::from_secs_f64(self.rt)).as_u64()
                    && self.after.len() < KEPT
                {
                    self.after.push(latency.as_secs_f64());
                }
                self.count(end, latency, in_flight, at, to);
                self.check(end, at, from, to)
            }
            Phase::Back {
                at,
                from,
                to,
                answers,
            } => {
                self.count(end, latency, in_flight, at, to);
                let rt = Duration::from_secs_f64(self.rt);
                if let Some(knee) = self.pinned_knee(end, at, from, to, rt) {
                    return knee;
                }
                // Every request out when the limit came back has answered (it had `to` out
                // at most): no pinned count stood, and the limit before the leap is the knee.
                if self.answers - answers >= to as u64 {
                    let knee = Verdict::Knee {
                        in_service: from as f64,
                        from,
                        rt,
                    };
                    return self.knee(end, at, to, knee);
                }
                Verdict::Wait
            }
        }
    }

    fn watch(
        &mut self,
        end: Nanos,
        latency: Duration,
        in_flight: usize,
        limit: usize,
        least: usize,
    ) -> Verdict {
        self.file(latency.as_secs_f64(), in_flight * 2 > limit);
        self.file_start(end, latency, in_flight, limit);
        self.file_room(end, latency, in_flight, limit);
        // Counted from the limit-th answer on: the first requests started together, and
        // behind a service floor they answer together, a burst no steady rate has.
        if self.start.is_none() && self.answers >= limit as u64 {
            self.start = Some(self.mark(end));
        }
        let Some(start) = self.start else {
            return Verdict::Wait;
        };
        let n = self.answers - start.answers;
        let dt = secs(end, start.at);
        // Two answers a permit (a count to a standard error of a sixth or less at the
        // starting limit) over two of the RTs they give; one over one where the demand is
        // far past the leaps.
        let far = self.far_past_the_leaps(&start, n, limit);
        let per = if far { 1 } else { 2 };
        if n < per * limit as u64 || dt <= 0.0 {
            return Verdict::Wait;
        }
        let rate = n as f64 / dt;
        let rt = limit as f64 / rate;
        self.counted |= dt >= per as f64 * rt;
        // The first group's requests still out, each at least as slow as its time out so far:
        // once counted where the demand is far past the leaps, otherwise only where the buckets'
        // slow start would have grown past the watch.
        let out = if self.impatient || far && self.counted {
            self.few_out(end, limit)
        } else {
            Vec::new()
        };
        if dt < per as f64 * rt || self.few.len() + out.len() < least || self.more.len() < least {
            return Verdict::Wait;
        }
        // Held back a second × RT against answers a second × RT (the limit): compare the
        // counts themselves, each a Poisson count over the same time. And the resource serves
        // every permit at once: by the rank test, or by the count of the answers that waited
        // behind at most the least target queue.
        let held = self.held_since(&start, n);
        if held - n as f64 <= FIRST_LEAP_SIGNIFICANCE * (held + n as f64).sqrt()
            || !(self.roomy >= PINNED || self.clear(&out) && !self.count_withholds(limit))
        {
            return Verdict::Wait;
        }
        let demand = held / dt * rt;
        self.rt = rt;
        self.measured = n;
        self.least = n;
        self.leap(end, limit, demand)
    }

    /// The demand at the starting limit `limit` is far past the leaps: it asks for two of them
    /// or more (× [`LEAP`] × [`LEAP_AGAIN`]) with the `n` answers since `start` counted
    /// [`FIRST_LEAP_SIGNIFICANCE`] standard errors high. By Little's law on both counts over
    /// the same time, the demand is the limit × the callers held back ÷ the answers, and the
    /// answers, a few dozen, are the noisy count. There each round trip at the starting limit
    /// holds back more than 30 callers for every one it serves (2000 workers at 1.5 ×: 20
    /// permits for 0.6–0.8 s, 0.056 of the goodput), so the watch measures the rate on one
    /// answer a permit over one of the RTs it gives (a standard error of a fifth), and reads
    /// the first group's last answers as still out as soon as that count stands, where
    /// elsewhere it waits for two of each and for the slow start's step. Which the leap is
    /// does not change: × [`LEAP`], checked as every leap is.
    fn far_past_the_leaps(&self, start: &Mark, n: u64, limit: usize) -> bool {
        let counted_high = n as f64 + FIRST_LEAP_SIGNIFICANCE * (n as f64).sqrt();
        n > 0
            && self.held_since(start, n) * limit as f64 / counted_high
                >= LEAP * LEAP_AGAIN * limit as f64
    }

    fn leap(&mut self, at: Nanos, from: usize, demand: f64) -> Verdict {
        // The demand's concurrency varies like a Poisson count: room for three standard
        // deviations of it.
        let most = if self.leaps == 0 { LEAP } else { LEAP_AGAIN };
        self.leaps += 1;
        let to = (demand + 3.0 * demand.sqrt())
            .min(most * from as f64)
            .ceil() as usize;
        // Cut to the configured bounds: the check judges the limit set. At `max` already,
        // there is nothing to leap to.
        let to = clamp(to, self.min, self.max);
        if to <= from {
            self.phase = Phase::Done;
            return Verdict::Done;
        }
        self.phase = Phase::Leapt { at, from, to };
        self.check = None;
        self.looked = false;
        self.after.clear();
        self.ends.clear();
        self.pinned = 0;
        self.pinned_rt = f64::INFINITY;
        self.pinned_seen = u64::MAX;
        self.roomy_after = 0;
        self.leapt_mark = self.mark(at);
        if self.floor_s.is_none() {
            self.floor_s = self.floor().map(|f| f.as_secs_f64());
        }
        Verdict::Leap(to)
    }

    fn check(&mut self, end: Nanos, at: Nanos, from: usize, to: usize) -> Verdict {
        let rt = Duration::from_secs_f64(self.rt);
        // A leap after a clear one: the pinned requests' count reads an overshoot as soon as
        // it stands, a queue's wait after the leap, where the low RTs of requests started a
        // round trip after it come two round trips after it (640 permits for 500 workers: 140
        // waiting, 0.10 s → 0.06 s). Not at the first leap, past a pool the starting limit
        // judged only as large as itself: there the count read 2–3 permits low and the
        // 50-worker rows' knees moved (forty-eighth round's *not kept*).
        if self.leaps >= 2
            && let Some(knee) = self.pinned_knee(end, at, from, to, rt)
        {
            return knee;
        }
        // Clear by the pinned requests' count: [`PINNED`] of them saw no more answers while
        // out than the target queue, so the pool served the leap's limit, less that, at once
        // (as the starting limit's count clears the first leap), where the answer rate waits a
        // round trip and then measures one (80 permits for 500 workers: 0.10–0.13 s → 0.06–0.10
        // s). It leaps on only where the callers held back since the leap ask for more than
        // the largest leap gives, so that the demand's value does not matter: counted from the
        // leap on, it reads low where the limiter's queue emptied into the leap's permits and
        // callers found one free (200 workers at 0.8 ×: 154–161 for a demand of 160, where the
        // check a round trip on leapt to 185–212, and a false knee followed). Elsewhere the
        // check goes on and measures the demand as before.
        if self.roomy_after >= PINNED {
            let mark = self.leapt_mark;
            let n = self.answers - mark.answers;
            let dt = secs(end, mark.at);
            if dt > 0.0 {
                let demand = self.held_since(&mark, n) / dt * self.rt;
                if demand >= LEAP_AGAIN * to as f64 {
                    return self.leap(end, to, demand);
                }
            }
        }
        if end < at + rt {
            return Verdict::Wait;
        }
        let Some(mark) = self.check else {
            self.check = Some(self.mark(end));
            return Verdict::Wait;
        };
        let n = self.answers - mark.answers;
        let dt = secs(end, mark.at);
        if dt < self.rt || n == 0 {
            return Verdict::Wait;
        }
        let rate = n as f64 / dt;
        let in_service = rate * self.rt;
        let bar = KNEE_SIGNIFICANCE;
        let se = (1.0 / n as f64 + 1.0 / self.measured.max(1) as f64).sqrt();
        // Fewer answers a second than the starting limit gave, by three standard errors (on
        // as few answers as that takes): the leap cost throughput, past any knee — a queue
        // inside a pool that slows as it fills (the demo's 10 workers behind 74 permits
        // answered at a third of the rate, and the first answers of requests started after
        // the leap came 2 s later). The start returns to the limit before the leap.
        // No more answers a second than the starting limit gave, and three standard errors
        // fewer than the leap's limit would: the leap is past the knee. Waiting requests slow
        // the workers that serve them, so past the knee the rate falls, and it cannot tell a
        // pool the size of the starting limit from a larger one (20 workers behind 48 permits
        // and 30 behind 72 both read under 20 in service). The pinned requests' count can:
        // the knee is the leap's limit less the queue it reads (20 workers behind 40–55
        // permits read 16–21, 30 workers behind 58–75 read 25–31). Until it stands, the
        // limit comes back to the one before the leap: the low RTs of requests started a
        // round trip after the leap, each behind the whole overshoot, held it 47–106 ms.
        if !self.looked && in_service <= from as f64 && in_service < to as f64 * (1.0 - bar * se) {
            if let Some(knee) = self.pinned_knee(end, at, from, to, rt) {
                return knee;
            }
            self.phase = Phase::Back {
                at,
                from,
                to,
                answers: self.answers,
            };
            return Verdict::Back(from);
        }
        if !self.looked && in_service < from as f64 * (1.0 - bar * se) {
            let knee = Verdict::Knee {
                in_service,
                from,
                rt,
            };
            return self.knee(end, at, to, knee);
        }
        // A round trip, and as many answers as the starting limit's rate was measured on;
        // a leap is judged clear only on two answers a permit of the new limit (one after a
        // clear leap, below).
        if n < self.least {
            return Verdict::Wait;
        }
        let held_back = self.held_since(&mark, n) / dt;
        // Callers still held back, on more than half the answers' count: demand reaches the
        // limit. Fewer, and the leap covered it.
        if held_back * 2.0 < rate {
            self.phase = Phase::Done;
            return Verdict::Done;
        }
        // Two looks: the first as soon as there are answers enough, for an overshoot far past
        // the knee (three standard errors), and the last when the leap would be judged clear.
        // After a leap from a limit judged clear, one answer a permit, once the low RTs of
        // requests started a round trip after the leap can be read. After the first leap too,
        // where the answer rate shows the leap's limit in service within one standard error:
        // the low RTs of twenty answers are too noisy to show a queue of 30 (50 workers behind
        // 80 permits read 24 ± 8 waiting), and the rate, on the starting limit's few answers,
        // reads a knee only three standard errors short (37 of 80 in service was not), so a
        // leap judged then went on to 640 permits for 50 workers. A rate that reads the leap's
        // limit in service shows none of the shortfall such a queue makes (seeds 1–10 of 2000
        // workers of 200 ms reach them a round trip sooner, 1.35–1.60 s; 50 workers behind 80
        // read 37 in `overload_10x` seed 22, and wait for two answers a permit as before).
        let quick = self.leaps >= 2 || in_service >= to as f64 * (1.0 - se);
        let per_permit = if quick { 1 } else { 2 };
        let last = n >= per_permit * to as u64 && (per_permit == 2 || self.after.len() >= MIN_LOW);
        if !last && self.looked {
            return Verdict::Wait;
        }
        // The first look reads the low RTs as well as the answer rate: the rate of some 50
        // answers a round trip after a leap, slowed by the overshoot's queue, read 28–38 in
        // service for 50 workers behind 80 permits, a knee the buckets then held below the pool.
        if !last && self.after.len() < MIN_LOW {
            return Verdict::Wait;
        }
        self.looked = true;
        // The low end of the RTs moves by the whole queueing delay and hardly with service
        // noise (the buckets' queue estimate): Little's law on the queue inside gives the
        // permits that wait, against the starting limit's answers (unqueued, by the rank test).
        // The knee is then the leap's limit less that queue, not the answer rate's count: the
        // queue slows the workers that serve it (contention), and the rate understates the
        // pool by as much as the queue is large against it (80 permits on 50 workers read 24–54
        // in service by the rate, 47–58 by the low RTs; 640 on 500 read 430–506 by the rate,
        // 504 by the low RTs in seed 1).
        // Without a queue in the limiter (callers turned away at once, fewer waiting than half
        // the answers), requests that find a worker free between refusals keep the low RTs low
        // whatever the queue: the median reads it too (as the buckets do, `median_queue`).
        let held = self.blocked - mark.blocked;
        let turned_away = (self.turned_away - mark.turned_away).min(held);
        let no_queue = turned_away > 0 && 2 * (held - turned_away) < n;
        let queue = self.queue_since_leap(rate, to, no_queue);
        if let Some(queue) = queue {
            // Where the rate shows no more in service than the starting limit, the low RTs,
            // each behind the whole overshoot, may have caught only part of its queue (20
            // workers behind 40–68 permits read 16–43 waiting of 20–48); the pinned
            // requests' count reads it whole, if it stands.
            let queue = match self.pinned_queue(end, at, to) {
                Some(counted) if in_service <= from as f64 => counted,
                _ => queue,
            };
            let knee = Verdict::Knee {
                in_service: to as f64 - queue,
                from,
                rt,
            };
            return self.knee(end, at, to, knee);
        }
        if in_service < to as f64 * (1.0 - bar * se) {
            // Fewer in service than the leap gave: past the knee. The queue inside slows the
            // workers that serve it (contention), so the answer rate understates the pool;
            // the limit before the leap was clear.
            let knee = Verdict::Knee {
                in_service,
                from,
                rt,
            };
            return self.knee(end, at, to, knee);
        }
        if !last {
            return Verdict::Wait;
        }
        // Room at the new limit: its answers measure the mean RT again (pooled), and callers
        // still held back ask for more.
        let measured = self.measured + n;
        self.rt = (self.rt * self.measured as f64 + to as f64 / rate * n as f64) / measured as f64;
        self.measured = measured;
        let demand = held_back.max(rate) * self.rt;
        if demand < WORTH_AGAIN * to as f64 {
            self.phase = Phase::Done;
            return Verdict::Done;
        }
        self.leap(end, to, demand)
    }

    /// Files an answer since the leap at `at` to `to`: its end, and, for a pinned request
    /// (started with every permit of `to` taken, once an answer since the leap freed one and
    /// no sooner than the starting limit's 5th-percentile RT after it: those let in by the
    /// leap itself start together and meet the pool in any order, and on threads start up to
    /// a tenth of a millisecond after it, with answers of requests from before it between
    /// them), its RT and the answers it saw while it was out.
    fn count(&mut self, end: Nanos, latency: Duration, in_flight: usize, at: Nanos, to: usize) {
        if self.ends.len() >= KEPT_ENDS {
            return;
        }
        let end = end.as_u64();
        let i = self.ends.partition_point(|&e| e <= end);
        self.ends.insert(i, end);
        let start = end.saturating_sub(saturating_nanos(latency));
        // The first answer since the leap (the earliest filed), and a short unqueued RT after
        // the leap.
        let freed = self.ends[0];
        let settled = self
            .floor_s
            .map_or(u64::MAX, |f| (at + Duration::from_secs_f64(f)).as_u64());
        if in_flight < to || start <= at.as_u64() || start < freed.max(settled) {
            return;
        }
        let seen = self.ends.len() - self.ends.partition_point(|&e| e < start) - 1;
        self.pinned += 1;
        self.pinned_rt = self.pinned_rt.min(latency.as_secs_f64());
        self.pinned_seen = self.pinned_seen.min(seen as u64);
        // It saw the answers of the others served while it was: behind a service floor those
        // alone are more than the target queue (2000 workers of 50 ms + an exponential 150 ms:
        // ~20 answers at 80 permits, ~160 at 640, for a target of 3 and 26), and no request
        // counted the leap's limit clear however far it was from the pool.
        let served = self.served_meanwhile(Nanos::new(end), at).unwrap_or(0.0);
        if seen as f64 - served <= self.target_queue(to) {
            self.roomy_after += 1;
        }
    }

    /// The answers a pinned request saw served by others while it was out, at the least: the
    /// answer rate since the leap at `at` (up to `end`) × the starting limit's 5th-percentile
    /// RT, a short service. `None` before that RT is known.
    fn served_meanwhile(&self, end: Nanos, at: Nanos) -> Option<f64> {
        let rate = self.ends.len() as f64 / secs(end, at).max(1e-9);
        Some(rate * self.floor_s?)
    }

    /// The target queue at `to` permits: `queue_target` of them, at least [`MIN_QUEUE_TARGET`].
    fn target_queue(&self, to: usize) -> f64 {
        (self.queue_target * to as f64).max(MIN_QUEUE_TARGET)
    }

    /// The knee the pinned requests' count reads after the leap from `from` at `at` to `to`,
    /// if it stands: the leap's limit less the queue counted ([`pinned_queue`](Self::pinned_queue)).
    /// The start is then over.
    fn pinned_knee(
        &mut self,
        end: Nanos,
        at: Nanos,
        from: usize,
        to: usize,
        rt: Duration,
    ) -> Option<Verdict> {
        let queue = self.pinned_queue(end, at, to)?;
        let knee = Verdict::Knee {
            in_service: to as f64 - queue,
            from,
            rt,
        };
        Some(self.knee(end, at, to, knee))
    }

    /// The permits waiting inside the resource after the leap at `at` to `to`, counted by
    /// the pinned requests, if it stands: at least [`PINNED`] of them answered, none sooner
    /// than an unqueued request would have in [`PINNED_TAIL`] of draws, and the queue past
    /// the target. A pinned request that waits behind `q` others in a pool served first come,
    /// first served sees `q` answers before a worker takes it, and some more while it is
    /// served: the fewest any saw, less the answers a second × the starting limit's
    /// 5th-percentile RT (a short service), is the queue.
    fn pinned_queue(&self, end: Nanos, at: Nanos, to: usize) -> Option<f64> {
        if self.pinned < PINNED || self.ends.len() >= KEPT_ENDS {
            return None;
        }
        let queue = self.pinned_seen as f64 - self.served_meanwhile(end, at)?;
        let target = self.target_queue(to);
        // The share of the starting limit's answers (unqueued, by the rank test) as slow as
        // the pinned requests' fastest.
        let as_slow = |group: &[f64]| group.len() - group.partition_point(|&x| x < self.pinned_rt);
        let before = self.few.len() + self.more.len();
        let share = (as_slow(&self.few) + as_slow(&self.more)) as f64 / before.max(1) as f64;
        (queue > target && share.powi(self.pinned.min(64) as i32) < PINNED_TAIL).then_some(queue)
    }

    /// The permits waiting inside the resource since the last leap, if they stand
    /// [`KNEE_SIGNIFICANCE`] standard errors past the target queue (`queue_target` of the limit, at least
    /// two): the 5th-percentile RT of the requests that started after the leap over that of
    /// the starting limit's answers, × the answer rate. With `no_queue` (the limiter turns
    /// callers away at once), the medians too, and the larger reading that stands.
    fn queue_since_leap(&self, rate: f64, to: usize, no_queue: bool) -> Option<f64> {
        let mut before: Vec<f64> = self.few.iter().chain(&self.more).copied().collect();
        if self.after.len() < MIN_LOW {
            return None;
        }
        let mut after = self.after.clone();
        let target = self.target_queue(to);
        let read = |f: fn(&mut [f64]) -> Option<(f64, f64)>, b: &mut [f64], a: &mut [f64]| {
            let (floor, floor_se) = f(b)?;
            let (now, now_se) = f(a)?;
            let queue = (now - floor) * rate;
            let noise = (floor_se.powi(2) + now_se.powi(2)).sqrt() * rate;
            (queue - target > KNEE_SIGNIFICANCE * noise).then_some(queue)
        };
        let from_low = read(low, &mut before, &mut after);
        let from_mid = if no_queue {
            read(mid, &mut before, &mut after)
        } else {
            None
        };
        match (from_low, from_mid) {
            (Some(l), Some(m)) => Some(l.max(m)),
            (l, m) => l.or(m),
        }
    }

    /// Files an answer at the starting limit `limit` for the count of the requests that waited
    /// behind few others: in a pool of `w` workers served first come, first served, a request
    /// that started with `in_flight` permits out (itself included) waits for `in_flight − w`
    /// answers before a worker takes it, so one that saw `seen` answers while it was out shows
    /// at least `in_flight − seen` workers. Those that show the starting limit less at most
    /// [`MIN_QUEUE_TARGET`] are counted ([`roomy`](Self::roomy)). The answer ends are kept
    /// in `ends` until [`PINNED`] are counted (at most [`KEPT`]); the leap clears them.
    fn file_room(&mut self, end: Nanos, latency: Duration, in_flight: usize, limit: usize) {
        if self.roomy >= PINNED || self.ends.len() >= KEPT {
            return;
        }
        let end = end.as_u64();
        let i = self.ends.partition_point(|&e| e <= end);
        self.ends.insert(i, end);
        let start = end.saturating_sub(saturating_nanos(latency));
        let seen = self.ends.len() - self.ends.partition_point(|&e| e < start) - 1;
        if in_flight as f64 >= limit as f64 - MIN_QUEUE_TARGET + seen as f64 {
            self.roomy += 1;
        }
        if in_flight >= limit {
            self.full += 1;
            self.full_shown = self.full_shown.max(in_flight.saturating_sub(seen) as u64);
        }
    }

    /// The knee the pinned requests' count reads under `from`, the limit before the leap, if
    /// the count could speak at that limit ([`count_could_speak`](Self::count_could_speak)):
    /// the permits in service it counted at the knee, where fewer than `from`.
    ///
    /// After a leap the answer rate pulled back (no more in service than the limit before),
    /// the knee was that limit, judged clear, whatever the count read: the queue slows the
    /// workers that serve it, and behind a service floor the count reads low too (`cache_3x`:
    /// 11–18 of 20 workers, its pinned requests' own services slowed past the floor it
    /// subtracts). Behind a delay outside the workers (`demo_busy_2x`), a first group slow by
    /// chance clears the leap, the count reads 10–14 in service for 10 workers, and 23
    /// permits stood for seconds. The count tells the two apart by what it could show at the
    /// starting limit: behind a floor no answer there is fast enough to have shown more
    /// workers than the most shown, so it reads a short pool whatever the pool; where some
    /// answer is, the count reads the pool.
    pub(super) fn counted_below(&self, from: usize) -> Option<f64> {
        self.counted_at_knee
            .filter(|&c| c > 0.0 && c < from as f64 && self.count_could_speak(from))
    }

    /// The permits in service by the pinned requests' count after the leap at `at` to `to`,
    /// at least [`PINNED`] of them answered: the leap's limit less the fewest answers one saw
    /// while out, less those served meanwhile.
    fn counted_in_service(&self, end: Nanos, at: Nanos, to: usize) -> Option<f64> {
        if self.pinned < PINNED || self.ends.len() >= KEPT_ENDS {
            return None;
        }
        let queue = self.pinned_seen as f64 - self.served_meanwhile(end, at)?;
        Some(to as f64 - queue)
    }

    /// The knee after the leap at `at` to `to`: its count noted
    /// ([`counted_at_knee`](Self::counted_at_knee)), the start over.
    fn knee(&mut self, end: Nanos, at: Nanos, to: usize, knee: Verdict) -> Verdict {
        self.counted_at_knee = self.counted_in_service(end, at, to);
        self.phase = Phase::Done;
        knee
    }

    /// The count at the starting limit `limit` could speak: [`PINNED`] or more requests that
    /// found every permit taken answered, and some answer there (of either group) was fast
    /// enough that, served with every permit out, it would have shown more workers than the
    /// most shown — the mean RT × (1 − the most shown ÷ `limit`), as in
    /// [`count_withholds`](Self::count_withholds), which reads the first group alone.
    fn count_could_speak(&self, limit: usize) -> bool {
        let all = self.few.len() + self.more.len();
        if self.full < PINNED || all == 0 {
            return false;
        }
        let mean = self.few.iter().chain(&self.more).sum::<f64>() / all as f64;
        let fast = mean * (1.0 - self.full_shown as f64 / limit as f64);
        self.few.partition_point(|&x| x < fast) + self.more.partition_point(|&x| x < fast) > 0
    }

    /// The count of the requests that found every permit of the starting limit `limit` out
    /// withholds the leap the rank test clears: at least [`PINNED`] of them answered, none
    /// showed more workers than the limit less the target queue, and some of the first group
    /// answered fast enough that, in a pool serving every permit at once, such a request
    /// would have shown more.
    ///
    /// A request that found all `L` permits out and saw `k` answers while it was out shows at
    /// least `L − k` workers (in a pool of `w` served first come, first served, it waited for
    /// `L − w` answers). Served at once, with every permit out, it sees the others answer at
    /// `L` ÷ the mean RT: one of RT `r` shows about `L − L r ÷ mean`, and more than the most
    /// shown, `s`, where `r` < the mean × (1 − `s` ÷ `L`). Under that hypothesis every answer
    /// at the starting limit is unqueued, so their mean is the service's, and the first
    /// group's RTs (the rank test's own reference) give the share `p` of requests that fast;
    /// `n` requests that all showed no more than `s` come with a chance of `(1 − p)ⁿ`.
    ///
    /// The rank test's first group is the first ten requests or so, fixed once the limit is
    /// pinned: where they happened to be slow it clears a start in front of a pool half the
    /// limit (`demo_2x` seed 25: eleven answers, 20 → 74 permits in front of 10 workers at
    /// 0.45 s, p99 6 × unloaded). There no request that found 20 out showed more than 9
    /// workers (37 of them), and 36 % of the first group answered within 0.55 of the mean RT.
    /// Behind a delay outside the workers (`demo_busy_2x`: a scheduler's, 8 ms median) the
    /// count reads 11–14 of 10 workers, the fast share is a tenth or two of the first group,
    /// and `(1 − p)ⁿ` stayed above [`PINNED_TAIL`] in 26 starts of 500 that leapt to 43–80
    /// permits, the limit 23 for 10 workers for seconds after. The leap waits for the count
    /// then, not for its tail: while `p` > 0 the count can speak, and a pool serving the
    /// limit at once shows it ([`roomy`](Self::roomy)). On seeds 1–20 of every built-in
    /// scenario, each leap the rank test alone cleared read 18–20 shown or a `p` of 0, but
    /// two of `no_queue_0.5x` (15 and 17 shown), which now wait. Where the count does not
    /// come, the buckets' slow start takes over, checked a bucket at a time. A service with
    /// little spread (19–21 ms), or behind a floor, shows few workers whatever the pool, but
    /// then none of the first group is that fast, and the count stands aside.
    fn count_withholds(&self, limit: usize) -> bool {
        if self.full < PINNED || self.ends.len() >= KEPT || self.few.is_empty() {
            return false;
        }
        let target = (self.queue_target * limit as f64).max(MIN_QUEUE_TARGET);
        let shown = self.full_shown as f64;
        if shown >= limit as f64 - target {
            return false;
        }
        let all = self.few.len() + self.more.len();
        let mean = self.few.iter().chain(&self.more).sum::<f64>() / all as f64;
        let fast = mean * (1.0 - shown / limit as f64);
        self.few.partition_point(|&x| x < fast) > 0
    }

    /// Files the start of an answer at the starting limit `limit` under the permits out when
    /// it started (the last slot for every request that found them all taken), and counts
    /// the answers of the first group at each count.
    fn file_start(&mut self, end: Nanos, latency: Duration, in_flight: usize, limit: usize) {
        if limit == 0 || limit > KEPT {
            return;
        }
        if self.earliest.len() != limit {
            self.earliest = vec![u64::MAX; limit];
            self.few_at = vec![0; limit / 2];
        }
        let start = end.as_u64().saturating_sub(saturating_nanos(latency));
        let i = in_flight.clamp(1, limit) - 1;
        self.earliest[i] = self.earliest[i].min(start);
        if let Some(count) = self.few_at.get_mut(i) {
            *count += 1;
        }
    }

    /// The first group's requests still out at `end`, each by the least its RT can be: its
    /// time out so far. Read only off a start that filled its permits one by one, each
    /// count of at most half the limit taken by one request (none answered twice): the
    /// counts not yet answered are requests still out, and each started no later than any
    /// request that found more permits out (they were taken after it). Otherwise none.
    fn few_out(&self, end: Nanos, limit: usize) -> Vec<f64> {
        if self.few_at.len() != limit / 2 || !self.few_missing() {
            return Vec::new();
        }
        let mut out = Vec::new();
        // The earliest start among the answers that found more than `k` permits out.
        let mut later = u64::MAX;
        for k in (0..limit).rev() {
            if k < self.few_at.len() && self.few_at[k] == 0 && later != u64::MAX {
                out.push(end.as_u64().saturating_sub(later) as f64 / 1e9);
            }
            later = later.min(self.earliest[k]);
        }
        out
    }

    /// Files an RT at the starting limit in its group (`more`: it found more than half the
    /// permits out), in order, and counts its pairs with the other group for the rank test.
    fn file(&mut self, rt: f64, more: bool) {
        let (group, other) = if more {
            (&mut self.more, &self.few)
        } else {
            (&mut self.few, &self.more)
        };
        if group.len() >= KEPT {
            return;
        }
        // Of the other group: those below `rt`, and those equal to it.
        let below = other.partition_point(|&x| x < rt);
        let equal = other.partition_point(|&x| x <= rt) - below;
        let above = other.len() - below - equal;
        // A `more` RT wins against the `few` above it; a `few` RT loses to the `more` below.
        self.wins += if more { above } else { below } as f64 + 0.5 * equal as f64;
        let at = group.partition_point(|&x| x < rt);
        group.insert(at, rt);
    }

    /// The rank test: the requests that found more than half the permits out answered no
    /// slower than those that found few (the share of pairs where the second group's RT is
    /// the lower is at least ½ less [`CLEAR`] standard errors).
    ///
    /// `out` are the first group's requests still out, each by the least its RT can be (its
    /// time out so far): a request of the second group wins against one only where it
    /// answered sooner than that, and a pair it may yet win counts as lost, so the share is
    /// never more than the whole group's, once answered, would give.
    fn clear(&self, out: &[f64]) -> bool {
        let (n1, n2) = ((self.few.len() + out.len()) as f64, self.more.len() as f64);
        let wins = self.wins
            + out
                .iter()
                .map(|&c| self.more.partition_point(|&x| x < c) as f64)
                .sum::<f64>();
        let share = wins / (n1 * n2);
        let se = ((n1 + n2 + 1.0) / (12.0 * n1 * n2)).sqrt();
        share >= 0.5 - CLEAR * se
    }
}

/// The 5th percentile of `rts` (the `ceil(0.05 n)`-th smallest) and its standard error, read
/// off the gap to the 10th percentile as the buckets read theirs.
fn low(rts: &mut [f64]) -> Option<(f64, f64)> {
    let n = rts.len();
    if n < 2 {
        return None;
    }
    rts.sort_unstable_by(f64::total_cmp);
    let k1 = rank(LOW_QUANTILE, n);
    let k2 = rank(2.0 * LOW_QUANTILE, n).max(k1 + 1);
    let gap = (rts[k2 - 1] - rts[k1 - 1]).max(1e-12);
    let density = (k2 - k1) as f64 / n as f64 / gap;
    Some((
        rts[k1 - 1],
        (LOW_QUANTILE * (1.0 - LOW_QUANTILE) / n as f64).sqrt() / density,
    ))
}

/// The median of `rts` and its standard error (the RTs √n ranks either side span four).
fn mid(rts: &mut [f64]) -> Option<(f64, f64)> {
    let n = rts.len();
    if n < 2 {
        return None;
    }
    rts.sort_unstable_by(f64::total_cmp);
    let m = n.div_ceil(2);
    let w = (n as f64).sqrt().ceil() as usize;
    let (lo, hi) = (m.saturating_sub(w).max(1), (m + w).min(n));
    Some((rts[m - 1], (rts[hi - 1] - rts[lo - 1]) / 4.0))
}

/// Seconds from `from` to `to` (zero if `to` is earlier).
fn secs(to: Nanos, from: Nanos) -> f64 {
    to.as_u64().saturating_sub(from.as_u64()) as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Once the start is over, what it kept is freed at the next answer: a limiter that
    /// runs for days held the start's RTs and answer ends (up to ~0.6 MB) for good.
    #[test]
    fn the_start_frees_what_it_kept_once_over() {
        let mut d = DemandStart::new(0.04, 1, 10_000);
        let ms = |t: f64| Nanos::ZERO + Duration::from_secs_f64(t / 1e3);
        let (mut t, mut blocked, mut leap) = (100.0, 0, None);
        while leap.is_none() {
            assert!(t < 2000.0, "no leap");
            t += 5.0;
            blocked += 5;
            d.on_demand(blocked);
            let in_flight = if (t as u64 / 5).is_multiple_of(2) {
                5
            } else {
                15
            };
            let rt = Duration::from_secs_f64((95.0 + ((t as u64 * 7919) % 11) as f64) / 1e3);
            if let Verdict::Leap(to) = d.observe(ms(t), rt, in_flight, 20, true, 10) {
                leap = Some(to);
            }
        }
        // Answers after the leap, every permit of it taken: the check files their RTs and ends.
        let to = leap.unwrap();
        for _ in 0..5 {
            t += 1.0;
            d.observe(ms(t), Duration::from_millis(100), to, to, false, 10);
        }
        assert!(d.few.capacity() + d.more.capacity() > 0);
        assert!(!d.ends.is_empty());
        d.end();
        assert!(
            d.floor().is_some(),
            "read at the knee, before the next answer"
        );
        assert!(matches!(
            d.observe(ms(t + 1.0), Duration::from_millis(100), 1, to, false, 10),
            Verdict::Done
        ));
        let kept = [
            d.few.capacity(),
            d.more.capacity(),
            d.after.capacity(),
            d.ends.capacity(),
        ];
        assert_eq!(kept, [0; 4]);
    }

    /// A leap past the knee of a pool that slows as it fills is judged on the answer rate
    /// as soon as that falls clearly below the starting limit's (the limit comes back to it
    /// at once, and the knee follows from the pinned requests' count), without waiting for the
    /// low RTs of requests started after the leap. Defect pinned: in `demo_2x` seed 25 a
    /// leap from 20 to 74 permits in front of 10 workers answered at a third of the rate,
    /// the requests started after it answered only 2 s later, and the limit stood at 74 for
    /// 2.3 s (now 1.0 s).
    #[test]
    fn a_leap_that_slows_the_answers_is_the_knee_before_its_low_rts_are_read() {
        let mut d = DemandStart::new(0.04, 1, 10_000);
        let ms = |t: f64| Nanos::ZERO + Duration::from_secs_f64(t / 1e3);
        // At the starting limit of 20: an answer every 5 ms (200/s), 100 ms each, half of them
        // with few permits out and half with many, alike (the rank test is clear); callers
        // held back at 1000/s.
        let mut t = 100.0;
        let (mut blocked, mut leap) = (0, None);
        while leap.is_none() {
            assert!(t < 2000.0, "no leap");
            t += 5.0;
            blocked += 5;
            d.on_demand(blocked);
            let jitter = ((t as u64 * 7919) % 11) as f64;
            let in_flight = if (t as u64 / 5).is_multiple_of(2) {
                5
            } else {
                15
            };
            match d.observe(
                ms(t),
                Duration::from_secs_f64((95.0 + jitter) / 1e3),
                in_flight,
                20,
                true,
                10,
            ) {
                Verdict::Leap(to) => leap = Some((t, to)),
                Verdict::Wait => {}
                v => panic!("{v:?} at {t} ms"),
            }
        }
        let (leapt_at, to) = leap.unwrap();
        assert!(to > 40, "a leap to {to}");
        // After it, answers at a third of the rate, of requests that started before it (so no
        // low RT of a request started after the leap is read yet).
        loop {
            t += 15.0;
            blocked += 15;
            d.on_demand(blocked);
            let v = d.observe(ms(t), Duration::from_secs_f64(1.5), 60, to, false, 10);
            match v {
                Verdict::Wait => assert!(t - leapt_at < 1000.0, "still waiting at {t} ms"),
                Verdict::Knee {
                    in_service, from, ..
                } => {
                    assert_eq!(from, 20);
                    assert!(in_service < 12.0, "{in_service}");
                    assert!(t - leapt_at < 1000.0, "{t}");
                    break;
                }
                // Back at the starting limit while the pinned requests' count is read: the
                // rate shows no more in service than it, three standard errors short of the
                // leap's limit.
                Verdict::Back(from) => {
                    assert_eq!(from, 20);
                    assert!(t - leapt_at < 1000.0, "{t}");
                    break;
                }
                v => panic!("{v:?} at {t} ms"),
            }
        }
    }

    /// Drives the starting limit of 20 for 2 s: answers every 5 ms (200/s, so a mean RT of
    /// 100 ms by Little's law), alike whether few or many permits were out (the rank test is
    /// clear), and callers held back at `held_per_s`. The first leap's limit, if any.
    fn first_leap(held_per_s: f64) -> Option<usize> {
        let mut d = DemandStart::new(0.04, 1, 10_000);
        let ms = |t: f64| Nanos::ZERO + Duration::from_secs_f64(t / 1e3);
        let mut t = 100.0;
        while t < 2100.0 {
            t += 5.0;
            d.on_demand((t * held_per_s / 1e3) as u64);
            let jitter = ((t as u64 * 7919) % 11) as f64;
            let in_flight = if (t as u64 / 5).is_multiple_of(2) {
                5
            } else {
                15
            };
            let rt = Duration::from_secs_f64((95.0 + jitter) / 1e3);
            match d.observe(ms(t), rt, in_flight, 20, true, 10) {
                Verdict::Leap(to) => return Some(to),
                Verdict::Wait => {}
                v => panic!("{v:?} at {t} ms"),
            }
        }
        None
    }

    /// A demand clearly above the starting limit but under 2.25 × it leaps. Defect pinned:
    /// 50 workers × a fixed 50 ms at 0.5 × (a demand of 25 for a starting limit of 20) waited
    /// for the slow start's third bucket, with callers queued in the limiter for 0.45 s: p99
    /// 2.3 × no limit's under a load the pool could carry.
    #[test]
    fn a_demand_clearly_above_the_starting_limit_leaps() {
        // 300 held back a second against 200 answers: a demand of 30 for 20 permits.
        let to = first_leap(300.0).expect("a demand of 1.5 x the starting limit leaps");
        assert!((30..=50).contains(&to), "leapt to {to}");
    }

    /// A demand at the starting limit does not leap: its held-back count is no more than its
    /// answers' (a pool the size of the limit, or a load just under it).
    #[test]
    fn a_demand_at_the_starting_limit_does_not_leap() {
        assert_eq!(first_leap(200.0), None);
        assert_eq!(first_leap(150.0), None);
    }

    /// Exponential draws of mean `mean` from a fixed sequence (a 64-bit LCG from `seed`): the
    /// same numbers on every run and platform.
    fn exponential_draws(seed: u64, mean: f64) -> impl FnMut() -> f64 {
        let mut u = seed;
        move || {
            u = u
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            -((((u >> 11) as f64) + 0.5) / (1u64 << 53) as f64).ln() * mean
        }
    }

    /// The first leap both tests below start from: 20 permits in front of an exponential
    /// 100 ms service (drawn from a fixed sequence), an answer every 5 ms (200/s: 100 ms by
    /// Little's law), callers held back at 10,000/s (a demand of 1000 permits). Returns the
    /// start, the leap's instant (ms) and its limit.
    fn first_leap_from_20_behind_a_demand_of_1000() -> (DemandStart, f64, usize) {
        let mut d = DemandStart::new(0.04, 1, 10_000);
        let ms = |t: f64| Nanos::ZERO + Duration::from_secs_f64(t / 1e3);
        let mut exp_ms = exponential_draws(12345, 100.0);
        let mut t = 100.0;
        loop {
            assert!(t < 2000.0, "no first leap");
            t += 5.0;
            d.on_demand((t * 10.0) as u64);
            let in_flight = if (t as u64 / 5).is_multiple_of(2) {
                5
            } else {
                15
            };
            let rt = Duration::from_secs_f64(exp_ms() / 1e3);
            if let Verdict::Leap(to) = d.observe(ms(t), rt, in_flight, 20, true, 10) {
                return (d, t, to);
            }
        }
    }

    /// A leap whose pinned requests (started after it with every permit of its limit taken)
    /// answered having seen no more answers while out than the target queue is clear of the
    /// knee by their count, as the first leap is by the starting limit's: it leaps on before
    /// a round trip has passed. Defect pinned: in front of 500 workers (`many_workers_2x`) the
    /// leap to 80 was judged a round trip after it, on a round trip of answers, and 420 workers
    /// stood idle for 0.10–0.13 s where five short requests had shown them within 0.05 s.
    #[test]
    fn a_leap_is_cleared_by_the_count_of_the_requests_that_saw_few_answers() {
        let (mut d, leapt_at, to) = first_leap_from_20_behind_a_demand_of_1000();
        let ms = |t: f64| Nanos::ZERO + Duration::from_secs_f64(t / 1e3);
        let mut t;
        assert_eq!(to, 80);
        // After it, 80 permits out: an answer every 1.25 ms, of requests that started before
        // the leap, and every eighth one a short request that started after it and saw one
        // answer while out.
        let mut next = None;
        for i in 1..80 {
            t = leapt_at + 1.25 * i as f64;
            d.on_demand((t * 10.0) as u64);
            let rt = if i % 8 == 0 { 1.5 } else { 100.0 + i as f64 };
            match d.observe(ms(t), Duration::from_secs_f64(rt / 1e3), 80, 80, false, 10) {
                Verdict::Wait => {}
                Verdict::Leap(to) => {
                    next = Some((t, to));
                    break;
                }
                v => panic!("{v:?} at {t} ms"),
            }
        }
        let (at, to) = next.expect("leapt on within 100 ms of the leap");
        assert!(at - leapt_at < 100.0, "{at} ms, leapt at {leapt_at}");
        assert_eq!(to, 640);
    }

    /// Leaps from 20 behind a demand of 1000 in front of a service of 50 ms + an exponential
    /// 50 ms (a mean of 100 ms: an answer every 5 ms at 20 permits), then 80 permits out, an
    /// answer every 1.25 ms: of requests that started before the leap, and every eighth one of
    /// a request that started 52 ms before it answered (pinned, one of the shortest), having
    /// seen the answers of those 52 ms and `waited` more (the queue it waited behind). Where
    /// it leapt on within 160 ms of the first leap: (ms after it, to).
    fn leap_on_behind_a_service_floor(waited: usize) -> Option<(f64, usize)> {
        let mut d = DemandStart::new(0.04, 1, 10_000);
        let ms = |t: f64| Nanos::ZERO + Duration::from_secs_f64(t / 1e3);
        let mut exp_ms = exponential_draws(12345, 50.0);
        let mut t = 100.0;
        let leapt_at = loop {
            assert!(t < 2000.0, "no first leap");
            t += 5.0;
            d.on_demand((t * 10.0) as u64);
            let in_flight = if (t as u64 / 5).is_multiple_of(2) {
                5
            } else {
                15
            };
            let rt = Duration::from_secs_f64((50.0 + exp_ms()) / 1e3);
            if let Verdict::Leap(to) = d.observe(ms(t), rt, in_flight, 20, true, 10) {
                assert_eq!(to, 80);
                break t;
            }
        };
        for i in 1..128 {
            t = leapt_at + 1.25 * i as f64;
            d.on_demand((t * 10.0) as u64);
            let rt = if i % 8 == 0 {
                52.0 + 1.25 * waited as f64
            } else {
                100.0 + i as f64
            };
            match d.observe(ms(t), Duration::from_secs_f64(rt / 1e3), 80, 80, false, 10) {
                Verdict::Wait => {}
                Verdict::Leap(to) => return Some((t - leapt_at, to)),
                v => panic!("{v:?} at {t} ms"),
            }
        }
        None
    }

    /// Behind a service floor the pinned requests' count clears a leap too: each saw the
    /// answers of the others served while it was (the answer rate × the starting limit's
    /// 5th-percentile RT, 42 here) besides any queue. Defect pinned: they were held to the
    /// target queue alone (3 at 80 permits), so no request ever counted the leap clear, and in
    /// front of 2000 workers of 50 ms + an exponential 150 ms (`huge_pool_1.5x`) each leap
    /// waited a round trip and an answer a permit, 80 permits for 0.4 s where the count showed
    /// the pool in 0.2 s. A queue of 20 in front of them still shows, and holds the leap.
    #[test]
    fn a_leap_behind_a_service_floor_is_cleared_by_the_count_past_the_answers_served_meanwhile() {
        let (at, to) = leap_on_behind_a_service_floor(0).expect("leapt on within 160 ms");
        assert!(at < 160.0, "{at} ms after the first leap");
        assert_eq!(to, 640);
        assert_eq!(leap_on_behind_a_service_floor(20), None);
    }

    /// After a leap from a limit judged clear, the pinned requests' count reads an overshoot
    /// as soon as it stands, before the low RTs of requests started a round trip after the
    /// leap can. Defect pinned: 640 permits for 500 workers (`many_workers_2x`) stood 0.10 s,
    /// 140 waiting inside, where the count read them within 0.06 s.
    #[test]
    fn a_leap_after_a_clear_one_finds_its_knee_by_the_count() {
        let (mut d, leapt_at, to) = first_leap_from_20_behind_a_demand_of_1000();
        let ms = |t: f64| Nanos::ZERO + Duration::from_secs_f64(t / 1e3);
        let mut t;
        // 80 permits, clear: an answer every 1.25 ms, every eighth a short one.
        let mut second = None;
        for i in 1..200 {
            t = leapt_at + 1.25 * i as f64;
            d.on_demand((t * 10.0) as u64);
            let rt = if i % 8 == 0 { 1.5 } else { 100.0 + i as f64 };
            if let Verdict::Leap(to) =
                d.observe(ms(t), Duration::from_secs_f64(rt / 1e3), to, to, false, 10)
            {
                second = Some((t, to));
                break;
            }
        }
        let (at, to) = second.expect("a second leap");
        assert!(to > 500, "{to}");
        // 500 workers behind it: an answer every 0.2 ms, and every fifth one a request that
        // started after the leap with every permit taken and waited 60 ms (300 answers).
        for i in 1..2000 {
            t = at + 0.2 * i as f64;
            d.on_demand((t * 10.0) as u64);
            let rt = if i % 5 == 0 && t - at > 70.0 {
                60.0
            } else {
                100.0 + i as f64 / 100.0
            };
            match d.observe(ms(t), Duration::from_secs_f64(rt / 1e3), to, to, false, 10) {
                Verdict::Wait => {}
                Verdict::Knee { in_service, .. } => {
                    assert!(t - at < 100.0, "the knee {t} ms, {} after the leap", t - at);
                    assert!(in_service < to as f64 - 100.0, "{in_service}");
                    return;
                }
                v => panic!("{v:?} at {t} ms"),
            }
        }
        panic!("no knee");
    }

    /// The first ten services of [`first_leap_behind_a_slow_first_group`] (ms): a first
    /// group that happened to be slow (mean 117 ms for a 50 ms mean), but not all of it.
    const FIRST_MS: [f64; 10] = [
        20.0, 40.0, 60.0, 90.0, 110.0, 130.0, 150.0, 170.0, 190.0, 210.0,
    ];

    /// 20 permits pinned in front of `workers` of an exponential 50 ms service, served first
    /// come, first served: the 20 first requests start together, each answer starts the next
    /// (with all 20 out), callers are held back at 1000/s, and the first ten services are
    /// [`FIRST_MS`]. The first leap's limit, if any, within 400 answers.
    fn first_leap_behind_a_slow_first_group(workers: usize) -> Option<usize> {
        let mut exp_s = exponential_draws(0x2545_F491_4F6C_DD1D, 0.050);
        let mut free: BinaryHeap<Reverse<u64>> = (0..workers).map(|_| Reverse(0)).collect();
        first_leap_of_20_pinned(|t, i, out| {
            let service = if i < 10 { FIRST_MS[i] / 1e3 } else { exp_s() };
            let Reverse(at) = free.pop().unwrap();
            let end = at.max(t) + (service * 1e9) as u64 + 1;
            free.push(Reverse(end));
            out.push(Reverse((end, t, i.min(19) + 1)));
        })
    }

    /// Answers in flight: (answer, start) in ns, and the permits out when it started.
    type InFlight = BinaryHeap<Reverse<(u64, u64, usize)>>;

    /// The first leap's limit, if any, within 400 answers, of a start with 20 permits pinned:
    /// `start(t, i, out)` starts the `i`-th request at `t` (ns; `i` is 20 for every one after
    /// the first twenty), putting its answer in `out`; each answer starts the next, callers
    /// held back at 1000/s.
    fn first_leap_of_20_pinned(mut start: impl FnMut(u64, usize, &mut InFlight)) -> Option<usize> {
        let mut d = DemandStart::new(0.04, 1, 10_000);
        let mut out = InFlight::new();
        for i in 0..20 {
            start(0, i, &mut out);
        }
        for _ in 0..400 {
            let Reverse((end, began, in_flight)) = out.pop().unwrap();
            d.on_demand(end / 1_000_000);
            let rt = Duration::from_nanos(end - began);
            match d.observe(
                Nanos::ZERO + Duration::from_nanos(end),
                rt,
                in_flight,
                20,
                true,
                10,
            ) {
                Verdict::Leap(to) => return Some(to),
                Verdict::Wait => {}
                v => panic!("{v:?}"),
            }
            start(end, 20, &mut out);
        }
        None
    }

    /// A first group that happened to be slow clears the rank test in front of a pool half
    /// the starting limit, but the count of the requests that found every permit taken reads
    /// the queue inside (none showed more than nine workers, where three in ten of the first
    /// group answered fast enough to show more): no leap (it leapt to 80). Defect pinned:
    /// `demo_2x` seed 25 leapt 20 → 74 permits at 0.45 s in front of 10 workers on a first
    /// group of eleven slow answers (p99 5.99 × unloaded; demo_busy_2x seeds 25 and 29 alike).
    #[test]
    fn a_slow_first_group_in_front_of_a_small_pool_does_not_leap() {
        assert_eq!(first_leap_behind_a_slow_first_group(10), None);
    }

    /// The same slow first group in front of a pool larger than the demand: the count
    /// contradicts nothing, and the start leaps.
    #[test]
    fn a_slow_first_group_in_front_of_a_large_pool_leaps() {
        assert!(first_leap_behind_a_slow_first_group(1000).is_some_and(|to| to > 40));
    }

    /// 20 permits pinned in front of `workers` of an exponential 50 ms service, served first
    /// come, first served, each answer delayed outside the workers by an exponential 13 ms (a
    /// busy machine's scheduler: the worker is free before the permit is): the 20 first
    /// requests start together, each answer starts the next (with all 20 out), callers are
    /// held back at 1000/s. Services and delays are drawn from `seed`. The first leap's limit,
    /// if any, within 400 answers.
    fn first_leap_behind_a_delay_outside(workers: usize, seed: u64) -> Option<usize> {
        let mut service_s = exponential_draws(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), 0.050);
        let mut delay_s = exponential_draws(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 1, 0.013);
        let mut free: BinaryHeap<Reverse<u64>> = (0..workers).map(|_| Reverse(0)).collect();
        first_leap_of_20_pinned(|t, i, out| {
            let Reverse(at) = free.pop().unwrap();
            let done = at.max(t) + (service_s() * 1e9) as u64 + 1;
            free.push(Reverse(done));
            out.push(Reverse((done + (delay_s() * 1e9) as u64, t, i.min(19) + 1)));
        })
    }

    /// Behind a delay outside the workers, a count that could have shown the starting limit
    /// served at once and has not holds the first leap the rank test clears: in front of 10
    /// workers, seeds 1–60 leap in 4 (each with no answer of the first group fast enough for
    /// the count to speak), where 9 leapt to 80 (1, 25, 26, 31, 32, 50, 55, 57, 59: the first
    /// group slow by chance, the count 11–17 of 20, its tail above `PINNED_TAIL`). Defect
    /// pinned: `demo_busy_2x` leapt 20 → 68–80 permits in front of 10 workers in one start in
    /// eight (the real demo in one run of four). In front of 25 and of 1000 workers every seed
    /// leaps, as before.
    #[test]
    fn a_count_that_could_show_the_starting_limit_and_did_not_holds_the_first_leap() {
        let small: Vec<u64> = (1..=60)
            .filter(|&s| first_leap_behind_a_delay_outside(10, s).is_some())
            .collect();
        assert!(small.len() <= 4, "leapt in front of 10 workers: {small:?}");
        assert!(!small.contains(&25) && !small.contains(&31), "{small:?}");
        for workers in [25, 1000] {
            for seed in 1..=60 {
                assert!(
                    first_leap_behind_a_delay_outside(workers, seed).is_some_and(|to| to > 40),
                    "{workers} workers, seed {seed}: no leap"
                );
            }
        }
    }
}
