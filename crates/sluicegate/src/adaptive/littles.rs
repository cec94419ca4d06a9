//! [`LittlesLaw`]: ours. `limit = pass rate × min RT` (the BBR family of Sentinel, Kratos and
//! go-zero), made robust: warm-up, floor and ceiling, a queue estimate from low-quantile RTs
//! to hold the limit at the knee, a drop response with cool-down, and periodic probes so min
//! RT cannot drift.

mod bucket;
mod calm;
mod cap;
mod config;
mod demand;
mod explain;
mod pooled;
mod slowed;
mod start;
mod steps;

pub use config::LittlesLawConfig;

use super::algorithm::{LimitAlgorithm, Outcome, Sample, clamp};
use crate::clock::Nanos;
use bucket::{Bucket, mean};
use calm::CalmDrops;
use cap::ShedCap;
use demand::{DemandStart, Verdict};
use pooled::Pooled;
use start::StartTest;
use std::collections::VecDeque;
use std::time::Duration;
use steps::SlowSteps;

/// Buckets over which the floor of the low RT is taken before the first probe.
const LOW_WINDOW: usize = 100;
/// Growth factor per bucket before the resource has first queued.
const STARTUP_STEP: f64 = 1.5;
/// The low quantile of RT every queue estimate reads (the buckets', the start's floor, the
/// demand-led start's check): the 5th percentile.
const LOW_QUANTILE: f64 = 0.05;
/// The smallest standing queue aimed for before the knee is known, and the most the least
/// one may be after it, in requests.
const MIN_QUEUE_TARGET: f64 = 2.0;
/// Once the knee is known, the least standing queue aimed for is this many standard errors of
/// the queue estimate (at least one request).
const QUEUE_NOISE: f64 = 2.0;
/// Where the limiter has no queue, the median's reading of the queue replaces the low RT's
/// when it is larger by this many of its standard errors.
const MEDIAN_SIGNIFICANCE: f64 = 3.0;
/// Where the queue is read off the mean RTs ([`LittlesLaw::mean_queue`]): the most noise it is
/// read with (requests), the most spread of the RTs (their coefficient of variation), the band
/// around its reading the low RT's is kept in, and the queue then aimed for (half a request:
/// at the workers nothing is lost, one over them waits each time one answers).
const MEAN_NOISE: f64 = 1.2;
const MEAN_SPREAD: f64 = 0.6;
const MEAN_BAND: f64 = 0.5;
const MEAN_TARGET: f64 = 0.5;
/// How far under the most workers counted busy the mean reading falls before the count
/// lifts it ([`LittlesLaw::mean_queue`]).
const COUNT_SLACK: f64 = 0.5;
/// How far over the start's floor (× `probe_trigger`) every bucket's low RT since must stand
/// for that floor to be measured again at once ([`LittlesLaw::floor_never_near`]): about
/// twice it at the default trigger.
const NEVER_NEAR: f64 = 1.33;
/// The buckets opened after a start's knee that [`LittlesLaw::floor_never_near`] needs at least.
const NEVER_NEAR_BUCKETS: usize = 2;
/// The least ratio of the buckets' low RTs to their middle ones where
/// [`LittlesLaw::floor_never_near`] calls a floor never near: a log-normal σ 0.5 reads 0.44
/// (one with a coefficient of variation of 0.6, 0.40), an exponential service 0.07.
const NEVER_NEAR_SPREAD: f64 = 0.4;

/// A min-RT probe: the limit is held down over `[start, end)`; requests that start then are
/// measured until `done`, so slow ones are not left out of the mean.
#[derive(Clone, Copy, Debug)]
struct Probe {
    start: Nanos,
    end: Nanos,
    done: Nanos,
    limit: usize,
    /// The pass rate of the last buckets before it (per second).
    rate: f64,
    /// The soonest it may stop holding the limit down: three recent mean RTs after it
    /// started, so that its first answers are not only the short requests.
    earliest: Nanos,
    /// It stopped holding as soon as its floor read as precisely as a bucket's.
    decided: bool,
    /// Its depth came from the queue estimate, not the BDP: it may sit above a pool that
    /// shrank as it started, so its readings only confirm the regime.
    shallow: bool,
    /// It checks the slower reading of the probe before it, at half its depth.
    check: bool,
    /// The recent mean RT when it started: the regime it started in.
    rt_at_start: Option<Duration>,
    /// Answers carried over from a blind probe before it, at its depth: counted with its own
    /// RTs, not in its pass rate.
    carried: u64,
    /// It holds half a starting limit found past the knee: when it lets go, the limit returns
    /// to the BDP it measured ([`LittlesLaw::after_start_probe`]). The mark goes with the
    /// probe, so a rule that drops it leaves none on the next (a deeper probe in its place
    /// inherits it: [`LittlesLaw::deeper_probe`]).
    from_start: bool,
    /// It checks a reading that would have restarted the slow start, taken by a probe that
    /// started in the new regime (a queue held above the workers a drop left,
    /// [`LittlesLaw::wait_added`]): the pass rate of the buckets before it, until it lets go
    /// ([`LittlesLaw::after_check`]).
    restart_rate: Option<f64>,
    /// Placed at the exact count of the workers ([`LittlesLaw::probe_at_count`]): at as many
    /// permits as workers none idles, so its pass rate does not fall, yet nobody waited inside:
    /// it drained ([`LittlesLaw::finish_probe`]).
    at_count: bool,
    /// Placed at the workers the mean RTs read busy ([`LittlesLaw::probe_at_busy`]): so near
    /// the workers that its pass rate barely falls, it may let go on its answers alone
    /// ([`LittlesLaw::probe_decided`]).
    at_busy: bool,
}

/// Buckets the queue estimate (and the recent RT) is taken over.
const RT_BUCKETS: usize = 3;
/// Buckets a back-off's cool-down lasts at least.
const COOL_BUCKETS: u64 = 10;

/// Buckets of data before a saturated warm-up trusts its mean RT.
const WARM_BUCKETS: u64 = 3;

/// The slow start's pass rate must grow by this factor when the limit has doubled; if it
/// does not, the starting limit was already past the knee (BBR's full-pipe test).
const FULL_PIPE_GROWTH: f64 = 1.25;

/// A bucket is in a steady state when its pass rate × mean RT accounts for this share of
/// the permits.
const STEADY: f64 = 0.8;

/// A probe's min RT within this factor of the last one's is the same regime; the spaced-out
/// periodic probes also need the pass rate within it of the one before the last probe.
const SAME_REGIME: std::ops::RangeInclusive<f64> = 0.8..=1.25;

/// A window's BDP (pass rate × min RT) under this share of the permits in service by the
/// queue estimate (the limit less the queue) says min RT is a censored mean: a probe's mean RT
/// leaves out the slow answers it did not wait for (a heavy tail, a two-speed service's slow
/// mode), and a depth built on it lands at half the limit. Exponential service reads 0.8–1.5,
/// heavy-tailed 0.5–0.8, two-speed 0.2–0.6 (seventeenth round (p)).
const CENSORED: f64 = 0.7;

/// Periodic probes that found the floor where it was space the next one out by up to
/// `2^MAX_SPACING` probe intervals.
const MAX_SPACING: u32 = 2;

/// Limit changes remembered, to know the limit a request started under.
const LIMIT_LOG: usize = 16;

/// Standard errors by which the slow start's queue estimate must pass zero before it ends the
/// slow start: fewer, and the noise of small buckets' low RTs ends it on a false knee.
const STARTUP_SIGNIFICANCE: f64 = 3.0;

/// Standard errors of the pass rates by which a step of the slow start must fall short of what
/// it would have bought, and fail to show a gain, to be taken as having bought nothing
/// ([`SlowSteps::bought_nothing`]).
const STEP_SIGNIFICANCE: f64 = 1.0;

/// Standard errors (binomial) by which the answers that count the most workers busy may fall
/// short of one in that many, for the count to be taken as exact ([`LittlesLaw::exact_count`]).
const EXACT_SIGNIFICANCE: f64 = 1.5;

/// Standard errors (Poisson, of the count the rate before it admits in as long) by which a
/// probe must admit more than that rate before it goes deeper ([`LittlesLaw::deeper_probe`]):
/// the permits it took were waiting, not in service.
const DEEPER_SIGNIFICANCE: f64 = 2.0;
/// Standard errors of the last buckets' mean RT by which it must stand under min RT ÷
/// `probe_trigger` to read as a faster service ([`LittlesLaw::faster_past_its_noise`]).
const FASTER_SIGNIFICANCE: f64 = 2.0;
/// Buckets (at least; `probe_duration` if longer) a probe must expect to be held to read as one
/// in a slow pool ([`LittlesLaw::probe_stretched`]). At two, 20 workers of 50 ms (a probe's
/// 100 answers in 0.24 s at 21 permits, the bucket 0.1 s) passed: a probe at their count
/// as a 3× slow spell began behind an upstream timeout moved its path, and one seed's
/// limit reached 2 (`littles_is_not_walked_to_one_permit_by_a_slow_spell_behind_an_upstream_timeout`).
/// 5 workers of 500 ms expect 8 s and more.
const STRETCHED_BUCKETS: u32 = 5;

/// Standard errors (Poisson, of their count) by which the last buckets' answers must pass
/// what the capacity last measured while queueing gives in their span before workers are taken
/// to have come back: three waited for 15–23 permits of 50 workers after a return from 10.
const CAME_BACK_SIGNIFICANCE: f64 = 2.0;

/// In front of requests that slow each other (RT = `a + b n` at `n` in service), the limit
/// grows while a step of it still brings this share of a step more throughput: Little's law
/// gives `n ÷ (a + b n)` answers a second, whose elasticity `a ÷ (a + b n)` falls to this
/// share at `n = (a ÷ b) (1 ÷ share − 1)`, four times the permits at which the RT doubles.
/// (A third held `shared_service_0.7x` at the 20 permits its load needs, and turned away
/// 17 %; a quarter and a fifth, 0 %.)
const SHARED_ELASTICITY: f64 = 0.2;

/// Requests that slow each other: the line their RTs rise on (RT = `intercept` + `slope` ×
/// permits out, s) and the knee it gives, where a step of the limit brings
/// [`SHARED_ELASTICITY`] of a step more throughput.
#[derive(Clone, Copy, Debug)]
struct Shared {
    intercept: f64,
    slope: f64,
    knee: f64,
}

impl Shared {
    fn new((intercept, slope): (f64, f64)) -> Self {
        Shared {
            intercept,
            slope,
            knee: intercept / slope * (1.0 / SHARED_ELASTICITY - 1.0),
        }
    }

    /// The RT the line gives at `permits` out.
    fn rt(&self, permits: f64) -> f64 {
        self.intercept + self.slope * permits
    }
}

/// The most recent answers kept for the line test at the first queue (a bound on memory).
const RECENT_ANSWERS: usize = 1024;

/// Answers' ends kept for counting the answers a request saw while out: a request whose
/// start is older than the oldest is not counted (one round trip of a pool of 4096 busy).
const KEPT_ENDS: usize = 4096;
/// Successes kept for the pooled queue estimate, in `min_samples`: four buckets' worth of the
/// three it reads, for buckets that overfill.
const LAST_ANSWERS: usize = 4 * RT_BUCKETS;
/// The share of a window's drops that may come late (past the median answer) and still be
/// read as the slowest few of failures that mostly come fast, the service's own: no back-off
/// on them. Past it, the late ones are answers kept past a deadline. A share, not a scale.
const FAILURE_TAIL: f64 = 0.2;

/// Standard deviations of a Poisson demand's concurrency a limit without a queue leaves room
/// for under a load below capacity, as the demand-led start's leaps do: callers that cannot
/// wait are turned away in the tail past it (2.6, the normal tail's 0.5 % of issue 13's
/// under-capacity target, lost 0.4–0.6 % in `no_queue_0.8x`: beyond the workers the resource's
/// own queue decays by the load's share, not as a normal tail).
const PEAK_ROOM: f64 = 3.0;

/// Standard errors by which a queue at the starting limit, measured from the first requests'
/// low RT, must pass the target.
const START_FLOOR_SIGNIFICANCE: f64 = 2.0;
/// Before the first probe, how far over the most workers an answer counted busy the steering
/// may grow the limit ([`LittlesLaw::unprobed_cap`]).
const UNPROBED_SLACK: usize = 2;

/// Little's law with a window of buckets: `bdp = pass rate × min RT`, the concurrency at
/// which the resource is busy all the time and nothing waits — and Little's law again on the
/// resource's own queue, to hold the limit just past that point.
///
/// Every bucket it decides, on what the bucket saw. A bucket lasts at least `bucket` (100 ms),
/// at least one recent mean RT (a change of the limit shows in the RTs a round trip later)
/// and at least the time `min_samples` answers take at the recent rate, so that a resource
/// answering in seconds gets buckets of seconds: no time constant is a scale of its own.
///
/// - **Application-limited** (no request found every permit taken): the knee, once the
///   resource has been seen queueing (bursts then wait in the limiter, not inside the
///   resource, where waiting slows everyone); before that, `app_limited_gain` × the demand
///   seen (the larger of the BDP and the most permits out at once less the resource's own
///   queue) — unless the resource queues anyway: then that demand plus the target queue is
///   the knee.
/// - **Saturated**: estimate the requests standing in the resource's own queue as
///   `queue = (low RT − its floor) × pass rate`, where *low RT* is the 5th-percentile RT of
///   the last three buckets and its *floor* the same measured unqueued, during the last probe.
///   Low quantiles of RT move with queueing delay but hardly with service-time noise, which is
///   what makes this estimate steady where mean RT is not. Then steer the queue to
///   two standard errors of the estimate once a probe has measured the floor, at least one
///   request and at most `queue_target × limit` or 2, whichever is more (before that,
///   `queue_target × limit`, at least 2): grow by `max_step` while there is clearly no queue
///   and nearly every request (90 %) found every permit taken (capacity to find; when most
///   found one free, demand only touches the limit), otherwise correct `queue_gain` of the
///   error, at most `× backoff` down a bucket — unless the queue stands three standard errors
///   of its own low RT past the target in every one of the last three buckets, more than that
///   step takes back, and the pass rate confirms it (pass rate × min RT, the permits it keeps
///   in service, is below what the cut leaves; a delay outside the resource lifts RTs at the
///   same pass rate): then the waiting permits are drained at once (no lower than half the
///   limit) and the steering holds as after the slow start's drain (workers that went away).
///   A drain after which the low RT reads what it read before, while the pass rate fell with
///   the limit, drained a delay outside, not a queue: the slow start restarts on the delay at
///   once, as after a probe that read one (where the capacity before it is known in the old
///   regime; otherwise the next drain probes instead).
/// - **Re-probe**: while nearly every request finds every permit taken, every
///   `probe_interval` or early when the window's RT exceeds `probe_trigger ×` the unqueued
///   one (medians once a probe has measured one: a probe's mean leaves out the slow answers it
///   did not wait for; before that, mean RT against min RT), (once a probe has measured the
///   floor) the low RT shows a queue, the window was measured after the last probe (unless
///   that one found a new regime) and the last probe measured something, the limit is held at
///   `probe_gain × last pass rate × min RT` (at least half the limit; a periodic probe below
///   the limit at most the workers the answers counted busy at once, and where the pass rate
///   would hold it at half the limit, `probe_gain` × them where they stand for the workers
///   now; where the mean RTs read the queue, at least the workers they read busy) long enough
///   to expect
///   `probe_samples` requests — or, once at least three recent RTs have passed, as soon as its
///   low RT reads as precisely as a bucket's (as many answers, no larger standard error) while
///   its pass rate shows it drained (or, at the workers the mean RTs read busy, it holds
///   `probe_samples` ÷ 2 answers) and its mean RT the same regime (or one more than
///   `probe_trigger` slower: censoring only lowers a mean so far). That drains the resource's queue; the requests that *started*
///   during the probe (followed until they finish) give the unqueued low-RT floor, median and
///   min RT, so none can drift. Each probe that finds the same regime doubles the time to the
///   next periodic one, up to four `probe_interval`s, while the pass rate stays within the
///   same regime of the one before the last probe. Where min RT is a censored mean (the
///   window's BDP under 0.7 of the limit less the queue, the queue at its set point)
///   the probe holds `probe_gain` × the limit less the queue instead, and only confirms. Within a
///   regime the floor rises only after a probe that lost pass rate (it drained: the workers
///   idled). A min RT that moved by more than 25 % marks a new regime: older pass-rate buckets
///   are forgotten; one that rose by more than `probe_trigger` restarts the slow start, up to
///   the last capacity measured × the new min RT (a slower service's end, an answer that beats
///   every one since by `probe_trigger` near the old floor, brings the regime before back).
///   Mean RTs below min RT ÷ `probe_trigger`
///   (the resource got faster) lower min RT to them and probe at once, below the limit (the
///   RT its depth comes from still holds the old limit's queue); low RTs below the floor ÷
///   `probe_trigger`, by three standard errors, lower the floor to them (a delay that went
///   away leaves the same mean RT, full of the queue the old limit leaves inside). A probe
///   that admits more than the buckets before it passed (by two standard errors) and reads a
///   queue in its own low RT (over the floor, or over none where the floor is stale or was
///   taken from such readings) is above the knee: the limit comes down to the permits it kept
///   in service, and a probe below them starts at once. No growth until the probe is done. Three pinned buckets, no queue over the target, that pass more than the capacity last
///   measured while the resource queued (by two standard errors of their count), at a mean
///   RT within 25 % of min RT and in the regime it served its most in (min RT within
///   `probe_trigger` of the one then): workers came back, and
///   the slow start restarts, up to that most × min RT.
/// - **Startup**: until the resource first queues, growth is × 1.5 a bucket (a slow start)
///   while nearly every request (90 %) found every permit taken;
///   at the first queue the limit drops at once to BDP × (1 + `queue_target`) + 2 (a drain:
///   the slow start overshot by the buckets it took to see the queue), and is not cut again
///   until the queue estimate is taken from requests that started after the drain. Past the
///   starting limit, the first queue must also stand three standard errors of the recent low
///   RTs (read off each bucket's own RTs) above zero, or small buckets' noise ends the slow
///   start on a false knee; and the slow start's unqueued mean RT (from buckets whose queue
///   estimate reads none) replaces the warm-up's stand-in for min RT (the first buckets see
///   the short requests first and read low). A bucket too small for a queue estimate in which
///   nearly every request found every permit taken holds the limit. After the drain, as
///   after a probe, no early probe until the window is measured anew. Past the starting
///   limit, a step that bought no pass rate ends it too (`SlowSteps`: the pinned buckets'
///   rate at the limit stepped to no higher than at the limit before by a standard error and
///   short of the step's share by one, no answer counting that limit before busy): the limit
///   goes back to the limit before, the knee.
/// - **A start already past the knee** (an initial limit above the resource's concurrency):
///   every RT was queued from the first request, so the floor and min RT were too. It shows
///   as a queue seen at the starting limit before any growth, or as the slow start doubling
///   the limit without 25 % more pass rate (BBR's full-pipe test, on buckets where nearly
///   every request found every permit taken and, at the starting limit, in a steady state:
///   pass rate × mean RT ≈ the limit). Either way the limit returns to the starting one and a
///   probe at half of it starts at once, to measure the floor below the knee. The queue at the
///   starting limit is also measured from the first requests' low RT (the buckets' is queued
///   too), two standard errors past the target and confirmed by the pass rate (× their mean
///   RT, the permits in service, below the limit less the target). Sooner, and
///   without a probe: the requests that started with more than half the permits out took
///   significantly longer (three standard errors of their log RTs) than those that started
///   with few out, so they waited; by Little's law the permits in service are the permits out
///   × the ratio of their mean RTs, and the limit drops there (plus the target queue) with
///   min RT, floor and median taken from the first requests.
/// - **Requests that slow each other** (a shared CPU or lock: RT = `a + b n` at `n` in
///   service, no queue anywhere) read as a start past the knee too: the requests that
///   started with more permits out took longer. What tells them from a queue is the shape of
///   RT against the permits out: a queue in front of a pool is flat up to the workers and then
///   rises on a line through the origin (a hockey stick), requests that slow each other rise
///   from the first permit. Where the first requests' RTs rise on a line with a slope and an
///   intercept each three standard errors above zero, and the requests that found every
///   permit taken are on it (no more than the target queue above it), there is no knee at
///   the start; the limit grows × `max_step` a bucket while nearly every request finds every
///   permit taken, up to where a step of it brings a fifth of a step more throughput
///   (Little's law: `n ÷ (a + b n)`, at `4 a ÷ b`), and backs off on drops. The low RTs,
///   which rise with every permit, are not read as a queue, and there are no probes.
/// - **Warm-up**: `initial` until there is an RT; saturated from the start, the mean RT of
///   the first buckets (the very first left out) stands in for min RT until the first probe.
/// - **Drops**: a bucket with drops in which the limit held demand back (a request found
///   every permit taken, or a caller waited or was turned away: below the limit a lower one
///   changes nothing the resource sees; nor below the knee while the resource shows no
///   queue beyond the target), when the last buckets holding at least
///   `1 / drop_fraction` samples have `drop_fraction` drops, multiplies the limit by
///   `backoff`; for `cool_down` after that the limit may fall but not rise. Counted against
///   the share of drops the resource shows with no queue (a service that fails 5 % of
///   requests at any load backs off only past 5 % + `drop_fraction`, by more than chance:
///   `calm.rs`); a drop answered faster than the floor is left out (it may teach a cap the
///   service enforces, `cap.rs`), and so is one sooner than the window's median answer: it
///   was refused, not kept past a deadline, and a queue it waited in shows in the answers.
///   Where the window holds fewer than `1 / drop_fraction` samples (cut short at a new
///   regime), only late drops past that fraction of them count; where its late drops are no
///   more than `FAILURE_TAIL` (a fifth) of its drops, the rest refused, they are the tail of the
///   service's own failures: no back-off.
/// - **No queue in the limiter** (`max_queue` 0: callers that find every permit taken are
///   turned away at once, [`LimitAlgorithm::on_turned_away`]): nobody waits, so no bucket is
///   pinned and the callers held back never outnumber the answers. The demand-led start
///   counts the arrivals instead (answers and callers turned away); a bucket that turned
///   callers away grows as a pinned one does; and while the demand (arrivals a second × min
///   RT) is below the knee, the limit leaves room for three standard deviations of it above
///   it — the peaks' only wait is then inside the resource — until a bucket is pinned or
///   callers wait in the limiter.
/// - **A cap enforced with fast failures** (a service that answers `503` at once past its own
///   connection cap): such failures, faster than the floor, are left out of the steering as
///   any fast failure is, but start only from the cap up; the cap is learnt from their permits
///   out and the limit held at it until it lapses (`cap.rs`).
/// - Always within `[min, max]`; an idle bucket changes nothing.
///
/// Buckets are indexed by each sample's end time, so the algorithm needs no clock of its own.
/// The repository's guide `docs/adaptive.md` says why each rule is there.
#[derive(Clone, Debug)]
pub struct LittlesLaw {
    c: LittlesLawConfig,
    limit: usize,
    /// The limit outside probes.
    base: usize,
    /// The limit before a one-permit step of growth after a probe, and the count of buckets
    /// closed when it was taken ([`Self::step_after_probe`]): the first queue over the target
    /// read within the window after it goes back there ([`Self::step_taken_back`]).
    stepped_from: Option<(usize, u64)>,
    /// When the open bucket closes (set by the first sample).
    bucket_end: Option<Nanos>,
    /// Length of the next bucket: at least `bucket`, one recent mean RT, and the time
    /// `min_samples` successes take at the recent rate.
    span: Duration,
    current: Bucket,
    closed: VecDeque<Bucket>,
    min_rt: Option<Duration>,
    probed: bool,
    next_probe: Nanos,
    probe: Option<Probe>,
    probe_rt: Bucket,
    /// The median RT the probes measured (unqueued): what the early probe's test compares
    /// the recent medians with.
    probe_mid: Option<Duration>,
    /// The last probe measured nothing (too few answers): no early probe on the mean RT until
    /// one does.
    blind: bool,
    /// A blind probe's answers (its limit and RTs, unsealed): the next probe at its depth
    /// measures with them added to its own.
    blind_answers: Option<(usize, Bucket)>,
    /// Probes in a row that found the floor where it was: each doubles the time to the next
    /// periodic probe, up to `2^MAX_SPACING` probe intervals.
    confirmed: u32,
    /// When the last probe started, and the pass rate before it.
    last_probe: (Nanos, f64),
    closed_total: u64,
    cool_until: Nanos,
    /// The cool-down also lasts until this many buckets have closed ([`Self::cooling`]).
    cool_buckets: u64,
    /// The pass rate last measured while the resource queued: its capacity, remembered
    /// through quiet spells so a burst finds the limit already there.
    capacity: f64,
    /// The busiest run of [`RT_BUCKETS`] buckets in the window, taken where `capacity` is: the
    /// bar of [`Self::workers_came_back`] far under the knee the most served gives, counted
    /// over the span that test counts over.
    busiest_run: f64,
    /// The most workers any answer of the window counted busy at once ([`Bucket::counted`])
    /// when `capacity` was last measured: the pool that served it, as the answers count it
    /// (0 where the bar was set at a delay's end, whose answers counted its permits busy).
    counted_then: usize,
    /// The last exact count of the workers ([`Self::exact_count`]): the pool that the count
    /// of a fall ([`Self::count_fell`]) is judged against.
    last_exact: Option<usize>,
    /// The bucket a fall read off the count drained at ([`Self::fell_to`]).
    fell_at: Option<u64>,
    /// What the workers a fall left serve at min RT: the return's bar until they come back.
    fell_bar: f64,
    /// The most the resource has served while it queued (the mean pass rate of the window's
    /// saturated buckets), and the min RT then: what a slow start after workers came back
    /// grows to at most, in the regime it was measured in.
    served_most: (f64, Duration),
    /// The most workers an answer counted busy at once ([`Bucket::counted_ahead`]) in a pinned
    /// bucket outside probes since the regime began (a new regime, a fall, a return reset
    /// it): in a pool served first come, first served no answer reads more than the workers,
    /// so it bounds them from below ([`Self::mean_queue`]).
    regime_counted: usize,
    /// The resource's capacity as last measured in min RT's regime, and that min RT: the mean
    /// pass rate of the window's saturated buckets while it queued, outside probes, with the
    /// recent RT within [`SAME_REGIME`] of min RT and the bucket's own pass rate no less than
    /// [`STEADY`] × that mean (at a delay's onset the answers stop for as long as the delay
    /// while the RTs that do come are the old ones). What a delay outside leaves unchanged.
    regime_rate: Option<(f64, Duration)>,
    /// The limits of the last few buckets.
    recent_limits: VecDeque<usize>,
    /// Low RTs of recent buckets, for the floor queueing delay is measured from.
    lows: VecDeque<Duration>,
    /// Median RTs of the same buckets: the unqueued median before a probe has measured one
    /// ([`median_queue`](Self::median_queue)).
    mids: VecDeque<Duration>,
    /// The low RT measured by the last probe (unqueued): the floor, once there is one.
    low_floor: Option<Duration>,
    /// The resource has queued at least once (startup is over).
    knee_found: bool,
    /// The limit the queue steering last set while the resource queued: the knee, held
    /// while demand stays below it.
    knee: Option<usize>,
    /// Pass rates of the pinned buckets at the starting limit, for the full-pipe test.
    startup: Vec<f64>,
    /// The pass rates of the slow start's pinned buckets at the limit it stands at and at the
    /// one it stepped from.
    steps: SlowSteps,
    /// When the limit last changed, and what it was before (the last few changes).
    limit_log: VecDeque<(Nanos, usize)>,
    /// Buckets closed since the last probe finished measuring.
    since_probe: usize,
    /// The slow start was restarted by a regime change (not the start of the run).
    restarted: bool,
    /// The slow start under way was restarted by workers that came back
    /// ([`Self::workers_came_back`]): once it has found the knee, the next periodic probe waits
    /// until its buckets have left the window.
    came_back: bool,
    /// What a service that slowed re-based since the last probe ([`slowed::Slowed`]).
    slowed: Option<slowed::Slowed>,
    /// The regime the window's older buckets read when the probe under way started, and the
    /// one a blind probe left ([`LittlesLaw::service_slowed`] compares with it after the probe).
    probe_ref: Option<(f64, f64)>,
    slow_ref: Option<(f64, f64)>,
    /// The most a restarted slow start grows to: the capacity measured before the change ×
    /// the new min RT (an RT that rose at the same capacity moves the knee by as much).
    restart_cap: Option<usize>,
    /// The slow start restarted on a delay outside the resource ([`Self::delay_outside`]): the
    /// capacity before it and the old min RT (the service's own time). Each step of that slow
    /// start grows by at most twice the workers the old capacity leaves idle at the last
    /// bucket's pass rate, and once found the knee is not passed.
    delay_restart: Option<(f64, Duration)>,
    /// The regime before a delay outside came ([`Self::delay_restart`]): its floor and
    /// unqueued median, which the delay's end brings back ([`Self::delay_ended`]); and the
    /// shortest answer since the delay came, and how many answers that is of.
    before_delay: (Option<Duration>, Option<Duration>, Option<(Duration, u64)>),
    /// When a delay outside that has not ended becomes the regime ([`Self::delay_lapsed`]).
    delay_lapses: Nanos,
    /// The regime before a slower service restarted the slow start (not a delay outside):
    /// its min RT, floor, unqueued median and capacity, which the slowdown's end brings back
    /// ([`Self::slowdown_ended`]); and the shortest answer since, and how many answers that is
    /// of.
    before_slower: Option<BeforeSlower>,
    /// The bucket count when the limit was last drained (the slow start's, a standing queue's).
    drained_at: Option<u64>,
    /// When that drain came, where the steering drained (the slow start's drain, a standing
    /// queue's): the hold after it ends at the first bucket whose answers all started after
    /// it. `None` after the start's knee, found on an answer, and after a delay's end: their
    /// three buckets hold (ended early after the start's too, the start-led small pools moved
    /// on the card, 15 rows of ±0.005–0.014, and `threaded_overload` 11–15 lost on its p99
    /// line; after the delay's end, its regime came back later).
    drained_when: Option<Nanos>,
    /// The floor was taken from readings that bound it from above only (low RTs well below
    /// a stale floor, a probe that did not drain): until a probe drains, it may be a queued
    /// one: a probe reads its own queue against none ([`Self::deeper_probe`]), and a lower
    /// floor a probe reads in the same regime is taken whole, not averaged with it.
    floor_unsure: bool,
    /// When the last standing-queue drain cut the limit (bucket count), the recent low RT and
    /// pass rate before it, and the share of the limit it left.
    drain_low: Option<(u64, Duration, f64, f64)>,
    /// RTs at the starting limit, by the permits out when each request started.
    start: StartTest,
    /// The unqueued RTs (min RT, floor, median) came from the start's first requests, not
    /// from a probe: the early probe judges by them as by a probe's, but the first probe
    /// takes its own readings as they are (a dozen answers are no reference for a regime).
    measured_at_start: bool,
    /// The demand-led start (its own module says how it leaps and where it stops).
    demand: DemandStart,
    /// The limiter's running counts of callers held back and, of those, turned away at once,
    /// and both as the last bucket closed.
    held_back: u64,
    turned_away: u64,
    counted: (u64, u64),
    /// The room a limit without a queue leaves for the demand's peaks
    /// ([`room_without_queue`](Self::room_without_queue)).
    room: Option<f64>,
    /// A shallow probe read something other than the regime it expected: the next probe, due
    /// a window later, is at the full depth.
    probe_full: bool,
    /// The start's RTs rose with the permits out on a line from the first permit: requests
    /// that slow each other (a shared CPU or lock), no queue.
    shared: Option<Shared>,
    /// The latest successful answers (at most [`RECENT_ANSWERS`]): RT, and the permits out
    /// when each started.
    recent_answers: VecDeque<(Duration, usize)>,
    /// The last successes (when each ended, its RT), up to [`LAST_ANSWERS`] × `min_samples`:
    /// a queue estimate pooled across buckets too short for a low RT of their own.
    last_rts: VecDeque<(Nanos, Duration)>,
    /// The ends of the last answers (at most [`KEPT_ENDS`]), in order: the answers a request
    /// saw while it was out are counted in them ([`Bucket::counted`]).
    ends: VecDeque<Nanos>,
    /// The cap a resource that sheds load at once when full enforces, learnt from its fast
    /// failures' permits out (its module says how): the limit is held at it.
    shed: ShedCap,
    /// The drops of buckets in which the resource kept no queue: the share it fails anyway.
    calm: CalmDrops,
    /// The window's median RT as its last bucket closed ([`Self::mid_of_window`]): a drop
    /// answered sooner was refused, not kept past a deadline.
    recent_mid: Option<Duration>,
}

impl LittlesLaw {
    /// A Little's-law limit starting at `config.initial` (clamped to `[min, max]`), on
    /// [`sanitized`](LittlesLawConfig::sanitized) settings: numbers out of range are brought
    /// into it, never a panic.
    pub fn new(config: LittlesLawConfig) -> Self {
        let config = config.sanitized();
        let limit = clamp(config.initial, config.min, config.max);
        LittlesLaw {
            c: config,
            limit,
            base: limit,
            bucket_end: None,
            span: config.bucket,
            current: Bucket::new(config.bucket),
            closed: VecDeque::new(),
            min_rt: None,
            probed: false,
            next_probe: Nanos::ZERO + config.probe_interval,
            probe: None,
            probe_rt: Bucket::default(),
            probe_mid: None,
            blind: false,
            blind_answers: None,
            confirmed: 0,
            last_probe: (Nanos::ZERO, 0.0),
            closed_total: 0,
            cool_until: Nanos::ZERO,
            cool_buckets: 0,
            capacity: 0.0,
            busiest_run: 0.0,
            counted_then: 0,
            last_exact: None,
            fell_at: None,
            fell_bar: 0.0,
            served_most: (0.0, Duration::ZERO),
            regime_counted: 0,
            regime_rate: None,
            recent_limits: VecDeque::new(),
            lows: VecDeque::new(),
            mids: VecDeque::new(),
            low_floor: None,
            knee_found: false,
            knee: None,
            startup: Vec::new(),
            steps: SlowSteps::default(),
            limit_log: VecDeque::new(),
            since_probe: usize::MAX,
            restarted: false,
            came_back: false,
            stepped_from: None,
            slowed: None,
            probe_ref: None,
            slow_ref: None,
            restart_cap: None,
            delay_restart: None,
            delay_lapses: Nanos::ZERO,
            before_delay: (None, None, None),
            before_slower: None,
            drained_at: None,
            drained_when: None,
            floor_unsure: false,
            drain_low: None,
            start: StartTest::default(),
            measured_at_start: false,
            demand: DemandStart::new(config.queue_target, config.min, config.max),
            held_back: 0,
            turned_away: 0,
            counted: (0, 0),
            room: None,
            probe_full: false,
            shared: None,
            recent_answers: VecDeque::new(),
            last_rts: VecDeque::new(),
            ends: VecDeque::new(),
            shed: ShedCap::default(),
            calm: CalmDrops::default(),
            recent_mid: None,
        }
    }

    /// The min RT in use, once measured.
    pub fn min_rt(&self) -> Option<Duration> {
        self.min_rt
    }

    /// Whether a min-RT probe is in progress (holding the limit down or measuring).
    pub fn probing(&self) -> bool {
        self.probe.is_some()
    }

    /// Successes per second over `buckets`.
    fn rate_of<'a>(buckets: impl Iterator<Item = &'a Bucket>) -> f64 {
        let (n, t) = buckets.fold((0, 0.0), |(n, t), b| {
            (n + b.passes, t + b.span.as_secs_f64())
        });
        if t > 0.0 { n as f64 / t } else { 0.0 }
    }

    /// The successes over `buckets`, their mean RT and its variance, in seconds (0 and 0
    /// where there are none).
    fn rt_moments<'a>(buckets: impl Iterator<Item = &'a Bucket>) -> (u64, f64, f64) {
        let (n, sum, sq) = buckets.fold((0u64, 0.0, 0.0), |(n, s, q), b| {
            (n + b.passes, s + b.rt_sum.as_secs_f64(), q + b.rt_sq)
        });
        let per = n.max(1) as f64;
        let mean = sum / per;
        (n, mean, (sq / per - mean * mean).max(0.0))
    }

    /// Starts the cool-down after a back-off: `cool_down`, and at least [`COOL_BUCKETS`]
    /// buckets closed — counted as they close, not as time from the present bucket's length:
    /// a back-off in the long buckets of a stall (a few successes a second while a service
    /// fails nearly every request: each bucket waits for `min_samples` of them, up to a
    /// minute) held the limit down for minutes after the service recovered.
    fn cool_down_from(&mut self, now: Nanos) {
        self.cool_until = now + self.c.cool_down;
        self.cool_buckets = self.closed_total + COOL_BUCKETS;
    }

    /// Whether a back-off's cool-down holds the limit from rising.
    fn cooling(&self, now: Nanos) -> bool {
        now < self.cool_until || self.closed_total < self.cool_buckets
    }

    /// `d` stretched to `buckets` of the current span, if that is longer: time constants
    /// given in seconds still hold for a resource whose every answer takes seconds.
    fn at_least_buckets(&self, d: Duration, buckets: u32) -> Duration {
        d.max(self.span * buckets)
    }

    /// Pass rate (per second) the limit is built on. Saturated with the resource queueing:
    /// the mean over saturated buckets outside probes (the resource's capacity; the max of
    /// noisy buckets would overstate it by ~1.5 σ). Otherwise the max over the window, which
    /// follows a growing limit without lag.
    fn pass_rate(&self, saturated: bool) -> f64 {
        let busy = self.closed.iter().filter(|b| b.saturated && !b.probed);
        if saturated && busy.clone().next().is_some() {
            return Self::rate_of(busy);
        }
        self.closed.iter().map(Bucket::rate).fold(0.0, f64::max)
    }

    /// The pass rate of the window's busiest run of [`RT_BUCKETS`] consecutive buckets (all of
    /// them where fewer have closed).
    fn busiest_run(&self) -> f64 {
        let window: Vec<&Bucket> = self.closed.iter().collect();
        window
            .windows(RT_BUCKETS.min(window.len()).max(1))
            .map(|run| Self::rate_of(run.iter().copied()))
            .fold(0.0, f64::max)
    }

    /// The low RT the queue estimate measures queueing delay from: the probes' once there is
    /// one, else the least of the recent buckets'.
    fn floor(&self) -> Option<Duration> {
        self.low_floor.or_else(|| self.lows.iter().min().copied())
    }

    /// The mean low RT of the last [`RT_BUCKETS`] buckets and their pass rate, if each has a
    /// low RT.
    fn recent_low(&self) -> Option<(Duration, f64)> {
        let recent: Vec<&Bucket> = self.closed.iter().rev().take(RT_BUCKETS).collect();
        let lows: Vec<Duration> = recent.iter().filter_map(|b| b.low_rt()).collect();
        if lows.len() < RT_BUCKETS {
            return None;
        }
        let low = lows.iter().sum::<Duration>() / lows.len() as u32;
        Some((low, Self::rate_of(recent.into_iter())))
    }

    /// Requests standing in the resource's own queue: queueing delay (recent low RT over its
    /// floor) × pass rate — Little's law applied to the queue.
    fn queue_estimate(&self) -> Option<f64> {
        let floor = self.floor()?;
        let (low, rate) = self.recent_low()?;
        let from_low = low.saturating_sub(floor).as_secs_f64() * rate;
        Some(match self.median_queue(rate) {
            Some((q, se)) if q - MEDIAN_SIGNIFICANCE * se > from_low => q,
            _ => from_low,
        })
    }

    /// Where the limiter has no queue, the queue read off the median RT instead of the low one:
    /// the last buckets' median over the unqueued median (a probe's, else the least of the
    /// window's bucket medians) × `rate`, and one bucket's standard error of it, in requests.
    /// `None` unless each of the last [`RT_BUCKETS`] buckets turned callers away at once and
    /// has a median.
    ///
    /// Turned away at once, callers leave instead of waiting, so between refusals the
    /// resource's occupancy falls and some requests find a worker free: the fastest answers
    /// are unqueued ones and the low RTs miss a queue that most requests wait in (20 workers
    /// of a near-fixed 20 ms, `max_queue = 0`: a dozen waiting, read as one). The median moves
    /// with the typical request's wait. It is noisier than the low quantile wherever the
    /// service time spreads (five times, for an exponential one), so it counts only where it
    /// reads more by [`MEDIAN_SIGNIFICANCE`] of its own standard errors, one bucket's, not the
    /// mean's: a reference taken as the least of many medians sits that far under the truth.
    fn median_queue(&self, rate: f64) -> Option<(f64, f64)> {
        let recent: Vec<&Bucket> = self.closed.iter().rev().take(RT_BUCKETS).collect();
        if recent.len() < RT_BUCKETS || !recent.iter().all(|b| b.turned_away_at_once()) {
            return None;
        }
        let unqueued = self.probe_mid.or_else(|| self.mids.iter().min().copied())?;
        let mids: Vec<(f64, f64)> = recent
            .iter()
            .filter_map(|b| b.mid_rt().zip(b.mid_se()))
            .map(|(mid, se)| (mid.as_secs_f64(), se.as_secs_f64()))
            .collect();
        if mids.len() < RT_BUCKETS {
            return None;
        }
        let n = mids.len() as f64;
        let mid = mids.iter().map(|m| m.0).sum::<f64>() / n;
        let se = (mids.iter().map(|m| m.1 * m.1).sum::<f64>() / n).sqrt();
        Some(((mid - unqueued.as_secs_f64()).max(0.0) * rate, se * rate))
    }

    /// The successes that ended in the last [`RT_BUCKETS`] buckets, taken together: at least
    /// twice `min_samples` of them, or `None`. They stand in where a bucket has too few
    /// successes for a low RT of its own (at 10–20 answers a second about half do). Only
    /// successes from those buckets count: older ones would read no queue through a collapse
    /// that stops the successes.
    fn pooled_answers(&self, now: Nanos) -> Option<Pooled> {
        if self.closed.len() < RT_BUCKETS {
            return None;
        }
        let recent = self.closed.iter().rev().take(RT_BUCKETS);
        let span: Duration = recent.clone().map(|b| b.span).sum();
        let since = now.as_u64().saturating_sub(span.as_nanos() as u64);
        let mut rts: Vec<Duration> = self
            .last_rts
            .iter()
            .filter(|(end, _)| end.as_u64() >= since)
            .map(|&(_, rt)| rt)
            .collect();
        if rts.len() < 2 * self.c.min_samples.max(1) {
            return None;
        }
        let mean = rts.iter().sum::<Duration>().as_secs_f64() / rts.len() as f64;
        Some(Pooled {
            low: low_quantile(&mut rts),
            mean,
            rate: Self::rate_of(recent),
        })
    }

    /// A queue standing above `target` in every one of the last buckets, each reading it
    /// [`STARTUP_SIGNIFICANCE`] standard errors of its own low RT above the target: the least
    /// of their readings, or `None` if a bucket does not show one (or has no low RT).
    fn standing_queue(&self, target: f64) -> Option<f64> {
        let floor = self.floor()?;
        if self.closed.len() < RT_BUCKETS {
            return None;
        }
        self.closed
            .iter()
            .rev()
            .take(RT_BUCKETS)
            .try_fold(f64::INFINITY, |least, b| {
                let (q, se) = b.queue_over(floor).zip(b.low_se())?;
                let noise = se.as_secs_f64() * b.rate();
                (q - target > STARTUP_SIGNIFICANCE * noise).then_some(least.min(q))
            })
    }

    /// The noise of the queue estimate, in requests: the standard error of one recent bucket's
    /// low RT (root mean square over the last buckets) × their pass rate. One bucket's, not
    /// their mean's: the floor it is measured from is the lowest of such readings.
    fn queue_noise(&self) -> f64 {
        let recent: Vec<&Bucket> = self.closed.iter().rev().take(RT_BUCKETS).collect();
        let var: f64 = recent
            .iter()
            .filter_map(|b| b.low_se())
            .map(|se| se.as_secs_f64().powi(2))
            .sum::<f64>()
            / (recent.len().max(1) as f64);
        var.sqrt() * Self::rate_of(recent.into_iter())
    }

    /// The workers the last [`RT_BUCKETS`] buckets outside probes counted busy at once: the
    /// most any answer counted ([`Bucket::counted`]), plus the answers their pass rate gives
    /// in the floor's time (what the shortest service sees answered by the others while it is
    /// served, and which it counted as answers ahead of it: about a worker in front of 5
    /// exponential ones, nearly all of them where the service has a floor of 40 ms in 50).
    fn counted_workers(&self) -> Option<f64> {
        let recent: Vec<&Bucket> = (self.closed.iter().rev())
            .filter(|b| !b.probed)
            .take(RT_BUCKETS)
            .collect();
        if recent.len() < RT_BUCKETS {
            return None;
        }
        let most = recent.iter().map(|b| b.counted).max().filter(|&w| w > 0)?;
        let floor = self.floor()?.as_secs_f64();
        Some(most as f64 + Self::rate_of(recent.into_iter()) * floor)
    }

    /// Where a probe is held past its shortest to expect its `probe_samples` answers (the
    /// recent mean RT × `probe_samples` ÷ the limit over [`STRETCHED_BUCKETS`] buckets or
    /// `probe_duration`): a slow pool, a few answers a second a worker (5 workers of 500 ms:
    /// 12 s at 4 permits), where each permit a probe holds back, and each bucket the steering
    /// holds one under the workers, costs a share of the workers for seconds. Not in front of
    /// 50 workers of 50 ms, whose probes last their 0.2 s and whose fall and return are read
    /// off them, nor 20 of 50 ms (0.3 s).
    fn probe_stretched(&self) -> bool {
        let shortest = self.at_least_buckets(self.c.probe_duration, STRETCHED_BUCKETS);
        self.recent_rt(RT_BUCKETS).is_some_and(|rt| {
            rt.mul_f64(self.c.probe_samples as f64 / self.base.max(1) as f64) > shortest
        })
    }

    /// The count stands for the workers now ([`Self::depth_from_count`],
    /// [`Self::count_shows_room`]): the knee found and
    /// no slow start under way, the last buckets' pass rate within [`SAME_REGIME`] of the
    /// window's, and the window's no less than the most the resource has served ÷
    /// `probe_trigger`.
    fn count_stands(&self) -> bool {
        if !self.knee_found || self.restarted {
            return false;
        }
        let unprobed = self.closed.iter().rev().filter(|b| !b.probed);
        let busy = self.closed.iter().filter(|b| b.saturated && !b.probed);
        let (recent, window) = (
            Self::rate_of(unprobed.take(RT_BUCKETS)),
            Self::rate_of(busy),
        );
        let steady = window > 0.0 && SAME_REGIME.contains(&(recent / window));
        let served = window * self.c.probe_trigger >= self.served_most.0;
        steady && served
    }

    /// The workers a periodic probe goes to, in a slow pool ([`Self::probe_stretched`]) whose
    /// count is exact ([`Self::exact_count`], or the last exact one where the window's most
    /// counted is still it, whichever of that count's tests fell short this bucket), read in the last
    /// buckets too (one of them counted it: after a fall the window still holds the old
    /// pool's counts), and under the limit. At as many permits as the workers nobody waits
    /// inside a pool served first come, first served, and none of them idles, so the probe
    /// measures the unqueued service at no cost; `probe_gain` × pass rate × min RT put it at
    /// 3–4 permits for 5 workers, for the 12–20 s its 100 answers take there
    /// (`few_slow_workers_3x` seed 5: 3 permits for 21.7 s, 0.863 of capacity).
    fn probe_at_count(&self) -> Option<usize> {
        let exact = self.exact_count().or_else(|| {
            let most = self.most_counted();
            self.last_exact.filter(|&m| most == Some(m))
        })?;
        let recent = self.closed.iter().rev().filter(|b| !b.probed);
        let read = recent.take(RT_BUCKETS).map(|b| b.counted).max() == Some(exact);
        (read && exact < self.base && self.probe_stretched()).then_some(exact)
    }

    /// The depth of a periodic probe where the queue is read off the mean RTs
    /// ([`Self::mean_queue`]: a service that spreads little): the workers the window's pinned
    /// buckets kept busy (pass rate × min RT), rounded down, under the limit. At or under the
    /// workers nobody waits inside, so the probe measures the unqueued service, and each
    /// permit under them costs a worker for the whole hold: `probe_gain` × one bucket's pass
    /// rate × min RT, the half-limit clamp and the count put `report_generator_1.5x`'s probes
    /// at 6–9 permits for 10 workers for 5–30 s each, ~1.7 % of the run. (The exact count,
    /// [`Self::probe_at_count`], is not read there: each answer sees the others' shorter
    /// remaining services end first, and the most counted is a few workers under the pool.)
    ///
    /// Read wherever that reading's standard error is within [`MEAN_NOISE`], however the RTs
    /// spread: [`MEAN_SPREAD`] keeps it out of the steering where the low RT and the exact
    /// count read an exponential service's queue, but the depth it replaces here is one
    /// bucket's pass rate, a dozen answers (±30 %), × min RT × `probe_gain`, clamped to half
    /// the limit. In front of 10 exponential workers whose answers a delay outside them holds
    /// (`demo_busy_2x`), where neither the low RT nor the count reads the queue, that put the
    /// probes at 6–9 permits of 13–16 for 28 % of their hold (the window's reading: 11–13), and
    /// they cost 0.022 of the run's goodput.
    fn probe_at_busy(&self, b: &Bucket, min_rt: Duration) -> Option<usize> {
        let (queue, _) = self.mean_reading_within(b, min_rt, true, f64::INFINITY)?;
        let busy = self.base as f64 - queue;
        Some((busy as usize).min(self.base.saturating_sub(1)))
    }

    /// Where the count shows every permit in service: a pinned bucket outside probes and
    /// cool-downs, in a slow pool ([`Self::probe_stretched`]) whose count stands
    /// ([`Self::count_stands`]), the exact count and each of the last buckets' count no less
    /// than the limit. In a pool served first come, first served no answer counts more
    /// workers than there are, and one that waited counts fewer than the permits out, so
    /// nobody waits inside and the limit may grow a permit whatever the low RTs read: at 4
    /// permits for 5 workers of 500 ms a bucket holds ~10 answers, most have no low RT of their
    /// own, and against a floor drawn low the others read 0.4–0.6 waiting, where half the
    /// error rounds back to the limit (`few_slow_workers_3x` seed 17: 4 permits from 10 s to
    /// 79 s, 0.853 of capacity).
    fn count_shows_room(&self, b: &Bucket, now: Nanos) -> bool {
        self.probe.is_none()
            && !b.probed
            && b.pinned()
            && !self.cooling(now)
            && self.delay_restart.is_none()
            && self.exact_count().is_some_and(|m| m >= self.base)
            && self.count_stands()
            && self.counted_busy().is_some_and(|w| w >= self.base)
            && self.probe_stretched()
    }

    /// The depth of a probe that the pass rate would hold at half the limit, from the workers
    /// counted busy instead ([`Self::counted_workers`]): `probe_gain` × them, under the limit
    /// (0 where the count may not stand for the workers now). One bucket's pass rate × min RT
    /// reads a few permits under the workers where a bucket holds a few dozen answers, or
    /// where the set point's own queue slows them (contention) or a delay outside holds
    /// permits, and the half-limit clamp then sets the depth: 6 of 12 permits for 10 workers
    /// (`demo_2x`), 5–7 for 10 (`report_generator_1.5x`), 6–8 for the ~13 a delay outside
    /// keeps busy (`demo_busy_2x`), most of what their probes cost. The count is a lower bound
    /// on the workers (no answer reads more in a pool served first come, first served), so
    /// 15 % under it still drains them.
    ///
    /// Only where the count stands for the workers now ([`Self::count_stands`]), the count
    /// taken no higher than the least recent limit (an answer of a request that started
    /// under a limit just raised reads the permits it found out). In a spell of fewer
    /// workers or a slower service (`capacity_fifth`'s 10 workers, `latency_spike`), the
    /// probes keep their depth: the workers' return and the regime's end are read off them,
    /// and a depth from the count there moved the return by a second either way (card 198
    /// against 201).
    fn depth_from_count(&self) -> usize {
        if !self.count_stands() {
            return 0;
        }
        let least = self.least_recent_limit().unwrap_or(self.base);
        match self.counted_workers() {
            Some(w) => {
                let w = w.min(least as f64);
                (((w * self.c.probe_gain) as usize).min(w as usize))
                    .min(self.base.saturating_sub(1))
            }
            _ => 0,
        }
    }

    /// The step of growth on a pinned bucket that reads no queue within [`RT_BUCKETS`] buckets
    /// after a probe, where × `max_step` would add more than a permit: one permit, in a window
    /// of one regime (where the count stands, [`Self::count_stands`]) whose most counted + 1 is
    /// no more than the limit (the count says the workers are under it). The bucket after a probe reads no
    /// queue off its drained buckets, and × 1.1 took 21 permits for 20 workers to 23; a cut
    /// took it to 22, where the steering's rounding of a queue of 1.0–1.85 against a target
    /// of 1 held it for seconds (`threaded_overload`: p99 2.003× unloaded on seeds 6–10 and
    /// 16–20, against a bar of 2×; seventy-third and seventy-sixth rounds). Where × 1.1 adds a
    /// permit anyway (under 15 permits) nothing changes (a step there and its take-back cut
    /// 14 permits to 11 at once in `demo_2x`). After a return the count reads the permits, so
    /// the growth that finds the workers is not slowed. The limit before the step is kept
    /// for [`Self::step_taken_back`], renewed once a window has passed since.
    fn step_after_probe(&mut self, base: f64, step: f64) -> Option<f64> {
        let after_probe = self.closed.iter().rev().take(RT_BUCKETS).any(|b| b.probed);
        let most = self.most_counted().unwrap_or(0);
        let applies = self.knee_found
            && (base * step).max(base + 1.0).round() > base + 1.0
            && after_probe
            && self.count_stands()
            && (most + 1) as f64 <= base;
        if !applies {
            return None;
        }
        let window = self.c.pass_buckets as u64;
        let stale = self
            .stepped_from
            .is_some_and(|(_, at)| self.closed_total > at + window);
        if self.stepped_from.is_none() || stale {
            self.stepped_from = Some((self.base, self.closed_total));
        }
        Some(base + 1.0)
    }

    /// The steering's `next` limit, or, where it cuts within the window after a step of
    /// [`Self::step_after_probe`] (a queue read over the target), the limit before that step,
    /// as long as that is under the limit now: the steps after a probe found a queue, so the
    /// limit they began at was the knee (21 → 22 → 23, then 21, not 22).
    fn step_taken_back(&mut self, steering: bool, next: f64, base: f64) -> f64 {
        let window = self.c.pass_buckets as u64;
        let from = self.stepped_from.filter(|&(prev, at)| {
            self.closed_total <= at + window && steering && next < base && (prev as f64) < base
        });
        match from {
            Some((prev, _)) => {
                self.stepped_from = None;
                prev as f64
            }
            None => next,
        }
    }

    /// The workers the answer `s` shows busy at once (see [`Bucket::counted`]): the permits out
    /// when it started, itself included, less the answers that came while it was out; `None`
    /// where an answer since its start is no longer kept. Keeps its end.
    /// And the same from the permits whose requests went in ahead of it ([`Sample::ahead`]):
    /// a waiter handed its permit with others at one instant counts them among the permits
    /// out, though their tasks ran after its own and they queued behind it (no more than the
    /// workers; the first count reads one over them for each).
    fn count_answer(&mut self, s: &Sample) -> Option<(usize, usize)> {
        let end = s.end();
        let kept = self.ends.len() < KEPT_ENDS || self.ends.front().is_some_and(|&e| e <= s.start);
        let busy = kept.then(|| {
            let seen = self.ends.len() - self.ends.partition_point(|&e| e <= s.start);
            (
                s.in_flight.saturating_sub(seen),
                s.ahead.saturating_sub(seen),
            )
        });
        if self.ends.len() >= KEPT_ENDS {
            self.ends.pop_front();
        }
        let at = self.ends.partition_point(|&e| e <= end);
        self.ends.insert(at, end);
        busy
    }

    /// The least of the limits of the last buckets (`None` before the first bucket closes).
    fn least_recent_limit(&self) -> Option<usize> {
        self.recent_limits.iter().copied().min()
    }

    /// The workers each of the last [`RT_BUCKETS`] buckets counted busy at once
    /// ([`Bucket::counted`]), the least of them, without the floor's margin: a lower bound on
    /// the workers that stands in every recent bucket.
    fn counted_busy(&self) -> Option<usize> {
        let recent: Vec<&Bucket> = self.closed.iter().rev().take(RT_BUCKETS).collect();
        if recent.len() < RT_BUCKETS {
            return None;
        }
        recent.iter().map(|b| b.counted).min().filter(|&w| w > 0)
    }

    /// The window's buckets whose answers count the workers: outside probes and at the limit
    /// (nearly every request started with every permit taken: below the limit an answer counts
    /// the callers, not the workers).
    fn counting_buckets(&self) -> impl Iterator<Item = &Bucket> + Clone {
        self.closed.iter().filter(|b| !b.probed && b.pinned())
    }

    /// The most workers an answer of [`Self::counting_buckets`] counted busy at once (`None`
    /// where there is no such bucket).
    fn most_counted(&self) -> Option<usize> {
        self.counting_buckets().map(|b| b.counted).max()
    }

    /// The workers the window's buckets outside probes, at the limit, counted busy at once,
    /// where that count is exact rather than a loose lower bound: `None` unless it is.
    ///
    /// An answer counts all `w` workers where its service was the shortest of those in
    /// service (it ended before any other's): in a pool of memoryless workers one answer in
    /// `w` (5 exponential workers: 20 % of the answers read 5, none more), more where the
    /// service is more variable than that. Where it spreads less (a log-normal σ 0.5 in front
    /// of 10 workers), the most counted is the thin tail of a distribution a few workers
    /// under the pool (8 read by 1–3 % of the answers). So the most counted, `m`, is taken
    /// as the workers where at least `m` × `min_samples` answers have a count, those reading
    /// `m` are no fewer than one in `m` less [`EXACT_SIGNIFICANCE`] standard errors of that
    /// share (binomial), `m` is no less than the pass rate × the floor (every answer held
    /// a worker at least that long: a near-fixed service counts 1 or 2 in front of any pool),
    /// and no more than one over the permits the answers held where it was read (Little's law).
    fn exact_count(&self) -> Option<usize> {
        // Only buckets whose demand the limit held (nearly every request started with every
        // permit taken): below the limit an answer counts the callers, not the workers (a
        // 0.8× load in front of 50 workers with 5 % failures was cut to the concurrency it
        // happened to show, and 0.64 % of it turned away).
        let window = self.counting_buckets();
        let most = self.most_counted().filter(|&m| m > 0)?;
        self.answers_reading(window.clone(), most)?;
        let floor = self.floor()?.as_secs_f64();
        // Little's law: no more than one over the permits the answers of the buckets it was
        // read in held (their RTs ÷ their span). Past them, the count counts permits out that
        // no answer stands for (a feed that says every permit was out at each start).
        let held = (window.clone())
            .filter(|b| b.counted == most)
            .map(|b| b.rt_sum.as_secs_f64() / b.span.as_secs_f64().max(1e-9))
            .fold(0.0, f64::max);
        let fits = most as f64 <= held + 1.0;
        (fits && most as f64 >= Self::rate_of(window) * floor).then_some(most)
    }

    /// The answers of `buckets` with a count, where they show `most` workers: at least `most`
    /// × `min_samples` of them, and those reading `most` no fewer than one in `most` less
    /// [`EXACT_SIGNIFICANCE`] standard errors of that share (binomial). `None` where not.
    fn answers_reading<'a>(
        &self,
        buckets: impl Iterator<Item = &'a Bucket> + Clone,
        most: usize,
    ) -> Option<u64> {
        let n: u64 = buckets.clone().map(|b| b.with_count).sum();
        let at: u64 = (buckets.filter(|b| b.counted == most))
            .map(|b| b.at_counted)
            .sum();
        let share = 1.0 / most as f64;
        let expected = n as f64 * share;
        let se = (expected * (1.0 - share)).sqrt();
        let enough = n >= most.saturating_mul(self.c.min_samples.max(1)) as u64;
        (enough && at as f64 >= expected - EXACT_SIGNIFICANCE * se).then_some(n)
    }

    /// The most the ordinary steering may hold where the workers counted busy are exact
    /// ([`Self::exact_count`]) and under every recent limit: those workers and the least
    /// target queue (one request), no lower than `down` (a step); unbounded elsewhere. The
    /// permits past them wait inside the resource, where each slows every worker, and the
    /// low RT misses most of such a queue in a small pool: the wait for a few answers of
    /// memoryless workers is short one time in twenty (3 waiting in front of 5 exponential
    /// workers read as about one, and the limit held 8).
    fn by_exact_count(&self, down: f64) -> f64 {
        let least = self.least_recent_limit().unwrap_or(self.base);
        match self.exact_count() {
            Some(m) if self.knee_found && !self.restarted && self.probe.is_none() && m < least => {
                ((m + 1) as f64).max(down)
            }
            _ => f64::INFINITY,
        }
    }

    /// The workers left after a fall, read off the count: `buckets` (each at the limit) held
    /// at least `held` permits, and where the count was exact before ([`Self::last_exact`],
    /// `w`) the answers of a pool of memoryless workers count each of `1..=min(held, w)`
    /// alike. So where none of `n` answers counted more than `m`, `m + 1` under both, the
    /// chance of that under the old pool is `(m ÷ min(held, w))ⁿ`: below [`PINNED_TAIL`]
    /// the pool is taken as `m`, if those reading `m` are no fewer than one in `m` less
    /// [`EXACT_SIGNIFICANCE`] standard errors (a delay outside the workers counts the
    /// permits it holds off the answers during it: a spread of small counts, few at the
    /// most) and Little's law agrees (`m` no less than their pass rate × the floor).
    fn count_fell<'a>(
        &self,
        buckets: impl Iterator<Item = &'a Bucket> + Clone,
        held: usize,
    ) -> Option<usize> {
        let w = self.last_exact?;
        let top = held.min(w);
        let most = buckets
            .clone()
            .map(|b| b.counted)
            .max()
            .filter(|&m| m > 0)?;
        if most + 1 >= top || buckets.clone().any(|b| !b.pinned()) {
            return None;
        }
        let n = self.answers_reading(buckets.clone(), most)?;
        let tail = (most as f64 / top as f64).powf(n as f64);
        let floor = self.floor()?.as_secs_f64();
        (tail < demand::PINNED_TAIL && most as f64 >= Self::rate_of(buckets) * floor)
            .then_some(most)
    }

    /// The window's median RT is past √`probe_trigger` × the probes' unqueued median: half
    /// way (on a log scale) to an early probe ([`Self::next_limit`]'s `inflated`).
    fn median_rising(&self) -> bool {
        match (self.probe_mid, self.mid_of_window()) {
            (Some(unqueued), Some(mid)) => {
                mid.as_secs_f64() > self.c.probe_trigger.sqrt() * unqueued.as_secs_f64()
            }
            _ => false,
        }
    }

    /// The queue by Little's law on the mean RTs: the limit less the workers the window's
    /// pinned buckets kept busy (their pass rate × min RT, a probe's mean service). Unbiased
    /// where the low RT is not (the wait for `k` answers is short one time in twenty, and the
    /// floor may be drawn low), but as noisy as the service spreads: read only where its
    /// standard error (the workers × the RTs' coefficient of variation × √(1/`n` + 1/the
    /// probe's `probe_samples`)) is at most [`MEAN_NOISE`] requests and that coefficient at
    /// most [`MEAN_SPREAD`] (a log-normal σ 0.5 reads 0.4–0.5, a uniform 20–60 ms 0.3; an
    /// exponential 1, whose queue the low RT and the exact count read). Not where an exact
    /// count caps the steering, nor in a restarted start or under a shedding cap, whose
    /// window holds another regime's pass rates; only with the knee found, a probe's min RT
    /// and the bucket pinned, outside probes. Lifted to the workers counted busy at once where
    /// it reads half a worker or more fewer ([`Self::lifted_to_count`]).
    fn mean_queue(&self, b: &Bucket, min_rt: Duration) -> Option<f64> {
        self.mean_reading(b, min_rt, true)
    }

    /// [`Self::mean_queue`], with the count's lift (`lift`) or without it: the mean RTs' own
    /// reading, as [`Self::room_by_mean`] checks the count against.
    fn mean_reading(&self, b: &Bucket, min_rt: Duration, lift: bool) -> Option<f64> {
        self.mean_reading_se(b, min_rt, lift).map(|(m, _)| m)
    }

    /// [`Self::mean_reading`] and its standard error, in requests.
    fn mean_reading_se(&self, b: &Bucket, min_rt: Duration, lift: bool) -> Option<(f64, f64)> {
        self.mean_reading_within(b, min_rt, lift, MEAN_SPREAD)
    }

    /// [`Self::mean_reading_se`] where the RTs' coefficient of variation is at most `spread`
    /// ([`MEAN_SPREAD`] for the steering; its standard error is bounded by [`MEAN_NOISE`]
    /// whatever the spread).
    fn mean_reading_within(
        &self,
        b: &Bucket,
        min_rt: Duration,
        lift: bool,
        spread: f64,
    ) -> Option<(f64, f64)> {
        if !(self.knee_found && self.probed && self.probe.is_none() && b.pinned())
            || self.restarted
            || self.shed_cap() < self.c.max
            || self.exact_count().is_some()
        {
            return None;
        }
        let window: Vec<&Bucket> = self.counting_buckets().collect();
        let n: u64 = window.iter().map(|b| b.passes).sum();
        // A drop held a worker the successes' pass rate does not count.
        let drops: u64 = window.iter().map(|b| b.drops).sum();
        // Under half the permits the resource kept in service at its most, the window may
        // hold a smaller pool's pass rate (workers that came back), read as a queue.
        let most = self.served_most.0 * self.served_most.1.as_secs_f64();
        if window.len() < RT_BUCKETS || n < 2 || drops > 0 || (self.base as f64) < 0.5 * most {
            return None;
        }
        let (_, mean, var) = Self::rt_moments(window.iter().copied());
        let cv = var.sqrt() / mean.max(1e-12);
        let counted = window.iter().map(|b| b.counted_ahead).max().unwrap_or(0);
        let busy = Self::rate_of(window.into_iter()) * min_rt.as_secs_f64();
        let probe = self.c.probe_samples.max(1) as f64;
        let se = busy * cv * (1.0 / n as f64 + 1.0 / probe).sqrt();
        // No fewer than the most workers an answer counted busy at once since the regime
        // began, where that is within the limit (past it, workers went away since). min RT
        // is a probe's mean of a few dozen answers (a decided probe stops at 16–58: ±10 % of a
        // log-normal σ 0.5's mean), and read low it reads a queue at the workers: the
        // steering then holds a permit under them, where every answer is a tenth short
        // (`report_generator_1.5x` seed 21, min RT 1.52 s for a 1.70 s service: 9 permits
        // for 10 workers for 0.68 of the run). The count reads the pool there (10), and
        // nothing higher: it only lifts a reading that fell short.
        // Only where the reading falls short of the count by half a worker or more
        // ([`COUNT_SLACK`]): closer, the reading already stands at the count within its
        // steering band, and a lift of a few hundredths only nudges the steering off its
        // course (`report_generator_1.5x` seed 8: one lift of 9.97 to 10 at 267 s, a cut
        // not taken at 272 s, 10 answers fewer in the last 20 s).
        let busy = if lift {
            Self::lifted_to_count(busy, counted.max(self.regime_counted), self.base)
        } else {
            busy
        };
        (se <= MEAN_NOISE && cv <= spread).then(|| ((self.base as f64 - busy).max(0.0), se))
    }

    /// The mean RTs' reading ([`Self::mean_queue`]) where it reads under its target and the
    /// limit is no more than the most workers an answer of the window counted busy at once
    /// ([`Self::most_counted`]: in a pool served first come, first served, nobody waits inside
    /// there): it steers in a bucket whose low RTs give no queue estimate, to grow. A bucket
    /// sized for `min_samples` answers has fewer about half the time, and then no low RT of
    /// its own, so the estimate needs three in a row that do: in front of a slow pool the
    /// limit held wherever it stood for most of the buckets (`report_generator_1.5x` seed 23:
    /// 8 permits for 10 workers from 25 s to 184 s, where the mean reading often read none
    /// waiting and answers counted all 8 busy). Never to cut: where min RT reads high the
    /// reading does too little, and the count bounds the workers only from below.
    ///
    /// The mean RTs' own reading, not lifted to the count ([`Self::mean_reading`]): the rule
    /// grows where two readings agree, and the lift puts the count in the place of the other.
    /// Lifted, a reading under the count by half a worker or more reads none waiting wherever
    /// the count reaches the limit, and the rule grows on the count alone (report101 measured
    /// that form: 6–10 0.973). With the lift the steering grew 10 → 11 permits for 10
    /// workers where the mean RTs read 1.2–1.6 waiting (`report_generator_1.5x` seed 6 at 128
    /// s and 241 s; a probe to 6 followed the second, 0.971 → 0.935). Where this rule grows
    /// (the reading within half a worker of the limit) the lift does not act, so it reads the
    /// same as [`Self::mean_queue`] there.
    fn room_by_mean(&self, b: &Bucket, min_rt: Duration) -> Option<f64> {
        let m = self.mean_reading(b, min_rt, false)?;
        let counted = self.most_counted()?;
        (m < MEAN_TARGET && self.base <= counted).then_some(m)
    }

    /// The mean RTs' reading ([`Self::mean_queue`], lifted to the count) stands over its
    /// target by [`QUEUE_NOISE`] of its own standard errors: where the buckets are too short
    /// for a low RT of their own, a queue the steering would otherwise hold. In front of a slow
    /// pool each bucket is sized for `min_samples` answers and has fewer about half the time,
    /// and the queue estimate needs three in a row that have a low RT: 56 % of the steering's
    /// buckets after 30 s had none (`report_generator_1.5x` seeds 1–30). There the limit held
    /// wherever it stood, while growth came on any one bucket whose low RTs read none waiting
    /// (at the workers they do): the limit climbed to 11–12 permits for 10 workers and held
    /// there (seed 26: 12 for 107 s), a permit over the workers on average after the first
    /// probe, each costing its share of the pool's rate to contention. Read with the count's
    /// lift, so a min RT read low (which reads a queue at the workers) cuts no more than the
    /// count allows; never to grow (that is [`Self::room_by_mean`]).
    fn queue_by_mean(&self, b: &Bucket, min_rt: Duration) -> bool {
        self.mean_reading_se(b, min_rt, true)
            .is_some_and(|(m, se)| m > MEAN_TARGET + QUEUE_NOISE * se)
    }

    /// The mean reading `busy` lifted to the most workers counted busy at once, `most`, where
    /// that is within the limit `base` and the reading falls [`COUNT_SLACK`] or more short.
    fn lifted_to_count(busy: f64, most: usize, base: usize) -> f64 {
        if most <= base && busy + COUNT_SLACK <= most as f64 {
            most as f64
        } else {
            busy
        }
    }

    /// Mean RT over the last `buckets` closed buckets.
    fn recent_rt(&self, buckets: usize) -> Option<Duration> {
        let recent = self.closed.iter().rev().take(buckets);
        let (sum, n) = recent.fold((Duration::ZERO, 0), |(s, n), b| {
            (s + b.rt_sum, n + b.passes)
        });
        mean(sum, n, self.c.min_samples)
    }

    /// The last buckets' mean RT stands under min RT ÷ `probe_trigger` by
    /// [`FASTER_SIGNIFICANCE`] of its standard errors (the RTs' spread ÷ √ their count): a
    /// faster service, not the noise of a few dozen answers. In front of 5 workers of 500 ms
    /// three buckets hold ~30 answers, whose mean has a standard error of a fifth of the
    /// service: a mean under min RT ÷ 1.5 came a few times a run, set min RT to it (320–360
    /// ms) and a probe at once, and the next probe, reading the service again, restarted the
    /// slow start as on a 1.5× slower one (`few_slow_workers_3x` seeds 3, 8 and 12: 7–8 permits
    /// for 5 workers for 40–75 s).
    fn faster_past_its_noise(&self, min_rt: Duration) -> bool {
        let (n, mean, var) = Self::rt_moments(self.closed.iter().rev().take(RT_BUCKETS));
        let se = (var / n.max(1) as f64).sqrt();
        min_rt.as_secs_f64() / self.c.probe_trigger - mean > FASTER_SIGNIFICANCE * se
    }

    /// Mean of the median RTs of the window's buckets (those with enough answers for one).
    fn mid_of_window(&self) -> Option<Duration> {
        let (sum, n) = self
            .closed
            .iter()
            .filter_map(Bucket::mid_rt)
            .fold((Duration::ZERO, 0u32), |(s, n), mid| (s + mid, n + 1));
        (n > 0).then(|| sum / n)
    }

    /// The next bucket's length: at least `bucket`, at least the recent mean RT (a limit
    /// change shows in the RTs one round trip later) and at least the time `min_samples`
    /// successes take at the last bucket's rate (a bucket with fewer says nothing).
    fn next_span(&self, last: &Bucket) -> Duration {
        let rt = self.recent_rt(RT_BUCKETS).unwrap_or(Duration::ZERO);
        let rate = last.rate();
        let fill = if rate > 0.0 {
            Duration::from_secs_f64((self.c.min_samples as f64 / rate).min(60.0))
        } else {
            self.span // silence: keep the span until there is news
        };
        // A bucket answered mostly by drops (the successes stopped: a capacity fall behind a
        // proxy's upstream timeout, every request given up) sized the next for `min_samples`
        // successes at one or two a second: 15 s without a decision while the drops came in,
        // the limit held at twice the workers left and their backlog growing (review 32).
        // A bucket with over twice as many drops as successes lets the next one grow to twice
        // its own span at most. (Over as many: `littles_is_not_walked_to_one_permit_by_a_slow_
        // spell_behind_an_upstream_timeout` lost a seed to 1, the shorter buckets backing off
        // more often in the slow spell.)
        let fill = if last.drops > 2 * last.passes {
            fill.min(2 * last.span)
        } else {
            fill
        };
        self.c.bucket.max(rt).max(fill)
    }

    fn close_bucket(&mut self, closed_at: Nanos) {
        let mut b = std::mem::replace(&mut self.current, Bucket::new(self.span));
        b.probed = self.probe.is_some();
        let opened = closed_at.as_u64().saturating_sub(b.span.as_nanos() as u64);
        b.held_down = self.probe.is_some_and(|p| p.end.as_u64() > opened);
        let (held_back, turned_away) = self.counted;
        b.turned_away = self.turned_away.saturating_sub(turned_away);
        b.waited = self
            .held_back
            .saturating_sub(held_back)
            .saturating_sub(b.turned_away);
        self.counted = (self.held_back, self.turned_away);
        b.seal(self.c.min_samples);
        // The first buckets see only the requests that finished soon after the start: their
        // low RT reads low, and a floor taken from it would read every later bucket as queued.
        if let Some(low) = b.low_rt().filter(|_| self.closed_total >= WARM_BUCKETS) {
            self.lows.push_back(low);
            while self.lows.len() > LOW_WINDOW {
                self.lows.pop_front();
            }
            if let Some(mid) = b.mid_rt() {
                self.mids.push_back(mid);
                while self.mids.len() > LOW_WINDOW {
                    self.mids.pop_front();
                }
            }
        }
        self.closed_total += 1;
        self.since_probe = self.since_probe.saturating_add(1);
        if !b.probed && b.pinned() {
            self.regime_counted = self.regime_counted.max(b.counted_ahead);
        }
        self.closed.push_back(b.clone());
        while self.closed.len() > self.c.pass_buckets.max(1) {
            self.closed.pop_front();
        }
        if let Some(m) = self.exact_count() {
            self.last_exact = Some(m);
        }
        let before = self.limit;
        // The slow start's pinned buckets in a row, each at the limit it was under from start
        // to end (a leap of the demand-led start is no step of it).
        let under = self.recent_limits.back().copied().unwrap_or(self.limit);
        if self.knee_found || self.restarted || self.probe.is_some() || self.demand.holds() {
            self.steps.clear();
        } else if b.pinned() || b.turned_away_at_once() {
            if under == self.limit {
                self.steps.add(self.limit, &b);
            }
        } else {
            self.steps.clear();
        }
        // While the demand-led start checks a leap, the limit is its to hold.
        if !self.demand.holds() {
            self.limit = self.next_limit(&b, closed_at).min(self.shed_cap());
        }
        if self.limit != before {
            self.log_limit(closed_at, before);
        }
        self.note_calm(&b);
        self.recent_mid = self.mid_of_window();
        self.span = self.next_span(&b);
        self.current.span = self.span;
        self.recent_limits.push_back(self.limit);
        if self.recent_limits.len() > RT_BUCKETS + 1 {
            self.recent_limits.pop_front();
        }
    }

    fn finish_probe(&mut self, now: Nanos) {
        let Some(probe) = self.probe.filter(|p| now >= p.done) else {
            return;
        };
        self.probe = None;
        self.slowed = None;
        let reference = self.probe_ref.take();
        self.slow_ref = None;
        let needed = if probe.decided {
            self.c.min_samples
        } else {
            self.c.probe_samples / 2
        };
        // A blind probe's answers are not nothing: at the same depth the next probe's join
        // them (one carried over at most, so a reading spans two probes, never more).
        let unsealed = (probe.carried == 0 && self.probe_rt.passes < needed as u64)
            .then(|| (probe.limit, self.probe_rt.clone()));
        self.probe_rt.seal(self.c.min_samples);
        let low = self.probe_rt.low_rt();
        let mid = self.probe_rt.mid_rt();
        let Some(rt) = mean(self.probe_rt.rt_sum, self.probe_rt.passes, needed) else {
            // Too few answers to measure anything (a heavy tail at half the limit, or a
            // two-speed service whose slow requests held the permits the whole probe): no
            // early probe on the mean RT until one has measured, or probes at half the limit
            // follow every second, each as blind as the last. The periodic ones go on, and so
            // does the test on medians once a probe has measured one (a 3× slower service
            // shows there, and its first probe may be blind).
            self.since_probe = 0;
            self.blind = true;
            self.blind_answers = unsealed;
            self.slow_ref = reference;
            return;
        };
        // The probe's own pass rate: the requests it admitted (and saw answered) over the
        // time it held the limit down — counted, not taken from their RTs, whose mean a heavy
        // tail makes noisy. A probe that lost pass rate against the buckets before it got
        // below the knee: the workers idled, so nothing it measured waited. So did one placed
        // at the exact count of the workers, whose rate holds.
        let held = probe.end.as_u64().saturating_sub(probe.start.as_u64()) as f64 / 1e9;
        let rate = (self.probe_rt.passes - probe.carried) as f64 / held.max(1e-9);
        let drained = rate < (1.0 + self.c.probe_gain) / 2.0 * probe.rate || probe.at_count;
        self.blind = false;
        // A probe that drained measured the floor unqueued.
        let unsure = self.floor_unsure;
        self.floor_unsure &= !drained;
        let rt = match self.min_rt {
            Some(old) if self.probed => {
                let ratio = ratio_of(rt, old);
                // A shallow probe's censored mean swings with the few slow answers it waited
                // for (0.74–1.37 of min RT in `heavy_tail_3x`, its median within 0.8–1.25):
                // its median judges too.
                let same = SAME_REGIME.contains(&ratio)
                    || (probe.shallow
                        && self.probe_mid.zip(mid).is_some_and(|(old, new)| {
                            let r = ratio_of(new, old);
                            SAME_REGIME.contains(&r)
                        }));
                if probe.shallow && !same {
                    // A shallow probe only confirms: above a pool that shrank as it started it
                    // drains nothing and reads a queued floor as a slower regime. It measured
                    // nothing; a probe at the full depth follows once the window is measured
                    // anew (it still holds the buckets from before this one).
                    self.confirmed = 0;
                    self.since_probe = 0;
                    let window = u32::try_from(self.c.pass_buckets).unwrap_or(u32::MAX);
                    self.next_probe = now + self.span * window;
                    self.probe_full = true;
                    return;
                }
                if same {
                    // Same regime: average with the last estimate, halving the noise of one
                    // probe's few hundred samples. The floor may fall but only rise after a
                    // probe that drained: one that did not quite drain the queue reads high,
                    // but a floor that could only fall ratchets down on every low reading (a
                    // 5th percentile of 100 answers wanders by ±40 %), and a floor a few ms
                    // low is a standing "queue" inside the steering's dead band. A floor that
                    // bounds the unqueued one from above only (`floor_unsure`) is no estimate
                    // to average with: a lower reading is taken whole (halved, a queued floor
                    // of 62 ms read 2.3 ms and kept 32, then 14, and 60–73 permits stood for
                    // 50 workers until the next probe: `network_delay_spike` seed 27).
                    if let (Some(old), Some(new)) = (self.low_floor, low) {
                        self.low_floor = Some(if new <= old && unsure {
                            new
                        } else if new <= old {
                            (old + new) / 2
                        } else if drained {
                            old + (new - old) / 4
                        } else {
                            old
                        });
                    }
                    if let (Some(old), Some(new)) = (self.probe_mid, mid) {
                        self.probe_mid = Some((old + new) / 2);
                    }
                    // The floor held: no early probe until the window is measured anew, and
                    // the next periodic one waits twice as long as the last (the resource has
                    // not changed since).
                    self.since_probe = 0;
                    self.confirmed = (self.confirmed + 1).min(MAX_SPACING);
                    (old + rt) / 2
                } else if probe.decided && ratio <= self.c.probe_trigger {
                    // Stopped early on the same regime, its later answers read another: a
                    // few dozen answers are no evidence of a change (a floor from them, taken
                    // as a new regime's, read 1 ms for 2 ms and held the return of
                    // `capacity_fifth`'s workers in the steering's dead band). It measured
                    // nothing; the next probe, held as long as it needs, judges.
                    self.since_probe = 0;
                    return;
                } else if ratio > *SAME_REGIME.end() && self.wait_added(&probe, ratio, low) {
                    // A slower reading that is a wait added to each request, not a slower
                    // service: a probe at half the depth checks it at once. A queue it did not
                    // drain reads as the old regime there, a delay outside as slow again.
                    let limit = (probe.limit / 2).max(self.c.min);
                    let started_in_new = !probe
                        .rt_at_start
                        .is_some_and(|rt| SAME_REGIME.contains(&ratio_of(rt, old)));
                    let before = Self::rate_of(self.closed.iter().rev().take(RT_BUCKETS));
                    self.start_probe(now, self.recent_rt(RT_BUCKETS).or(Some(rt)), limit, false);
                    if let Some(p) = self.probe.as_mut() {
                        p.check = true;
                        p.restart_rate = started_in_new.then_some(before);
                    }
                    return;
                } else {
                    let outside = self.delay_outside(ratio, low);
                    let before_delay = (self.low_floor, self.probe_mid, None);
                    self.low_floor = low.or(self.low_floor);
                    self.probe_mid = mid.or(self.probe_mid);
                    // The resource changed: the next periodic probe one interval after this.
                    self.confirmed = 0;
                    let next = probe.start + self.at_least_buckets(self.c.probe_interval, 50);
                    self.next_probe = self.next_probe.min(next);
                    // A new regime: pass rates measured under the old one mislead, and the
                    // knee moved by as much as the RT did. Find it again like at the start.
                    let keep = self.closed.len().saturating_sub(1);
                    self.closed.drain(..keep);
                    self.regime_counted = 0;
                    if ratio > self.c.probe_trigger {
                        let old_knee = self.knee.unwrap_or(self.base) as f64;
                        self.knee_found = false;
                        self.knee = None;
                        self.restarted = true;
                        self.delay_restart = None;
                        // What the old capacity serves at the new RT: a delay outside the
                        // resource (a check probe confirmed it) takes that many more permits.
                        // A slower service on the same workers does not: its knee stays where
                        // it was, and the capacity's cap let a restarted start grow to 3× the
                        // workers where a timeout hid the queue from the successes
                        // (`littles_restart_after_a_slowdown_does_not_outgrow_the_workers`).
                        let mut cap =
                            self.capacity * rt.as_secs_f64() * (1.0 + self.c.queue_target);
                        if !probe.check {
                            cap = cap.min(old_knee);
                        }
                        // A delay outside, read as one by its shape: the capacity before it
                        // (the one last measured in the old regime; `capacity` may be the
                        // delay's own, taken while it read as a queue: 272 answers a second
                        // for 50 workers of 50 ms, and the knee cut to 25 by the drains) at
                        // the new RT, Little's law, not bounded by the old knee
                        // (`network_delay_spike`: capped at 27 for the 250 the delay needs,
                        // the steering took 6 s to grow there).
                        if let Some(served) = self.rate_before(old).filter(|_| outside) {
                            // The new RT is the old min RT plus the delay, read as the rise of
                            // the low RT over the old floor: the probe's mean leaves out the
                            // long answers it did not wait for (242 ms for the 250 of 50 ms
                            // behind 200 ms), and the cap came out 5 % under the knee.
                            let delay = before_delay
                                .0
                                .zip(low)
                                .map_or(Duration::ZERO, |(was, now)| now.saturating_sub(was));
                            let rt = rt.max(old + delay);
                            cap = self.restart_on_delay(now, served, old, rt, before_delay);
                        }
                        self.restart_cap =
                            (cap > 0.0).then(|| (cap + MIN_QUEUE_TARGET).ceil() as usize);
                        // A slower service (no delay): the regime before it, for its end.
                        self.before_slower = (self.delay_restart.is_none())
                            .then(|| self.rate_before(old))
                            .flatten()
                            .map(|served| BeforeSlower {
                                min_rt: old,
                                floor: before_delay.0,
                                mid: before_delay.1,
                                served,
                                through: None,
                            });
                    } else {
                        // Any other regime ends what a delay's restart left (its cap, its
                        // test of the end): one that is faster is no delay (review 45: a delay
                        // shorter than the old floor ended unseen, and its cap held for good).
                        self.delay_restart = None;
                        self.restart_cap = None;
                        self.before_slower = None;
                    }
                    rt
                }
            }
            _ => {
                self.low_floor = low.or(self.low_floor);
                self.probe_mid = mid.or(self.probe_mid);
                // As after any probe that measured: the window still holds the buckets from
                // before it (the starting limit's queue, in front of a pool smaller than it),
                // whose medians set off an early probe the moment this one was done.
                self.since_probe = 0;
                rt
            }
        };
        self.min_rt = Some(rt);
        self.probed = true;
    }

    /// The count showed the workers fell to `m` ([`Self::count_fell`]): the limit drains to
    /// them and the least target queue at once, and holds until the estimate is taken after.
    /// No probe for a window: one due now reads the backlog's RTs (a periodic probe right
    /// after such a drain went to 7 permits for 10 workers and held 4 s on their queued mean
    /// RT). And the workers' return is judged against what `m` workers serve at min RT at
    /// least: the bars measured in the fall are its backlog's, most of whose answers came
    /// back late (133 a second for 10 workers of 50 ms), and 11 permits for those 10 cleared
    /// them once an answer counted 11 (`capacity_fifth` seed 30: two false returns, to 62
    /// permits).
    fn fell_to(&mut self, now: Nanos, m: usize) {
        self.regime_counted = 0;
        let to = clamp(m + 1, self.c.min, self.c.max);
        self.base = self.base.min(to);
        self.knee = Some(self.base);
        self.drained(now);
        self.drain_low = None;
        self.since_probe = 0;
        self.fell_at = Some(self.closed_total);
        if let Some(rt) = self.min_rt.filter(|rt| !rt.is_zero()) {
            self.fell_bar = m as f64 / rt.as_secs_f64();
        }
        let window = u32::try_from(self.c.pass_buckets).unwrap_or(u32::MAX);
        self.next_probe = self.next_probe.max(now + self.span * window);
    }

    /// A drain at `now`: the steering holds until the estimate is taken after it.
    fn drained(&mut self, now: Nanos) {
        self.drained_at = Some(self.closed_total);
        self.drained_when = Some(now);
    }

    /// Right after a drain, the last buckets still show the queue it has already dealt with:
    /// held for [`RT_BUCKETS`] buckets, or, after the steering's own drains, until one holds
    /// only answers of requests that started after it, which read the limit it left. Three
    /// buckets alone held 24 permits for 10 workers for 1.7 s after a drain from 48
    /// (`capacity_fifth` seed 4): each was as long as the backlog's RT, 0.4–0.5 s, and the
    /// second already read the drained limit.
    fn held_after_drain(&self, b: &Bucket) -> bool {
        let started_after = self
            .drained_when
            .zip(b.oldest)
            .is_some_and(|(drained, oldest)| oldest >= drained);
        // And where a standing queue was drained, only once the bucket's low RT shows it: one
        // that reads what the drain's buckets read may be a delay outside, which the three
        // buckets let `drained_a_delay` tell (ended before, a second drain went in first).
        let shows = match self.drain_low {
            Some((at, before, ..)) if Some(at) == self.drained_at => b
                .low_rt()
                .is_some_and(|low| ratio_of(low, before) < *SAME_REGIME.start()),
            _ => true,
        };
        let ended = started_after && shows;
        !ended
            && self
                .drained_at
                .is_some_and(|at| self.closed_total <= at + RT_BUCKETS as u64)
    }

    fn next_limit(&mut self, b: &Bucket, now: Nanos) -> usize {
        let (min, max) = (self.c.min, self.c.max);
        self.finish_probe(now);
        self.after_start_probe(now);
        self.after_check(now);
        self.delay_lapsed(now);
        if let Some(limit) = self.delay_ended(b) {
            return limit;
        }
        if let Some(limit) = self.slowdown_ended(b) {
            return limit;
        }
        if let Some(limit) = self.deeper_probe(now) {
            return limit;
        }
        self.served_more(now);
        let window_rt = self.recent_rt(self.c.pass_buckets);
        // Queueing shows within a few buckets; a whole window would lag the limit's swings.
        let short_rt = self.recent_rt(RT_BUCKETS);
        let settled = self.closed_total >= 2 * self.c.pass_buckets as u64;
        if !b.saturated && settled {
            // Demand below the limit: RT is unqueued, the window mean estimates min RT. (The
            // first buckets are skipped: they favour short requests.)
            if let Some(rt) = window_rt {
                self.min_rt = Some(self.min_rt.map_or(rt, |m| m.min(rt)));
            }
        }
        if self.min_rt.is_none() && b.saturated && self.closed_total > WARM_BUCKETS {
            // Warm-up, saturated from the start: the mean RT so far (the first bucket left
            // out, it favours short requests) stands in for min RT until the first probe.
            let seen = usize::try_from(self.closed_total - 1).unwrap_or(usize::MAX);
            self.min_rt = self.recent_rt(seen.min(self.c.pass_buckets));
            self.next_probe = now + self.at_least_buckets(self.c.probe_interval, 50) / 2;
        }
        let Some(min_rt) = self.min_rt else {
            return self.limit; // warm-up: no RT yet
        };
        if b.passes + b.drops == 0 && self.probe.is_none() {
            return self.limit; // idle: no news is no reason to move
        }
        if let Some(line) = self.shared {
            return self.shared_limit(b, now, line);
        }
        let base = self.base as f64;
        // The queue aimed for. Before the knee, `queue_target` of the limit and at least two
        // requests: at the starting limit the target alone judges the first queue, and a
        // smaller one ended slow starts on noise (`huge_pool_1.5x` 0.81 → 0.50). Once a probe
        // has measured the floor, the estimate's own noise (two standard errors of a bucket's
        // low RT, in requests), at least one request (fewer, and a worker may idle between
        // answers) and at most that share: waiting requests slow the workers, and 4 % of a
        // large pool is many times the noise (12 requests in front of 300 workers, where the
        // noise is 2–3). In between (the knee found, the floor not yet probed: the floor is
        // the first buckets' and reads low), the noise between one and two requests, or the
        // share where that is more.
        let share = self.starting_queue_target();
        let noise = QUEUE_NOISE * self.queue_noise();
        let target = if self.knee_found && self.probed {
            noise.min(share).max(1.0)
        } else if self.knee_found {
            noise
                .clamp(1.0, MIN_QUEUE_TARGET)
                .max(self.c.queue_target * base)
        } else {
            share
        };
        let queue = self.queue_estimate();
        // Read only where the buckets give no estimate of their own.
        let answers = if queue.is_none() {
            self.pooled_answers(now)
        } else {
            None
        };
        let pooled = match queue {
            Some(q) => Some(q),
            None => self.floor().zip(answers.as_ref()).map(|(f, a)| a.queue(f)),
        };
        // Past the starting limit, the slow start ends only at a queue its own noise cannot
        // explain: at a limit of a few dozen in front of a slow pool, a bucket holds a few dozen
        // answers (an early one a dozen), its 5th percentile is their smallest or second
        // smallest, and one such reading a few ms high is a "queue" of the 2-request target.
        // (At the starting limit the queue that shows a start already past the knee is judged
        // by the target alone, as before.)
        let startup_bar = if !self.knee_found && self.base > clamp(self.c.initial, min, max) {
            target.max(STARTUP_SIGNIFICANCE * self.queue_noise())
        } else {
            target
        };
        // At the starting limit, the buckets' floor is their own low RT, queued from the first
        // request when the resource is smaller than the limit: the first requests' is not.
        let queueing = queue.is_some_and(|q| q > startup_bar) || self.queued_at_start(target);
        // The first queue of a start that was not pinned (a light load that grew): the recent
        // answers by the permits out when each started may rise on a line from the first
        // permit too, requests that slow each other rather than a queue.
        if queueing && !self.knee_found && !self.restarted && !self.probed && self.probe.is_none() {
            // Split at half the most permits out among them, not half the limit: a light
            // load that grew has not reached a limit set at twice its demand.
            let peak = self.recent_answers.iter().map(|a| a.1).max().unwrap_or(0);
            let least = (self.c.min_samples as u64).min(peak as u64 / 2).max(2);
            let mut recent = StartTest::default();
            for &(rt, in_flight) in &self.recent_answers {
                recent.add(rt, in_flight, peak, true);
            }
            let knee = recent
                .line(least, STARTUP_SIGNIFICANCE, target)
                .map(Shared::new)
                .filter(|line| line.knee > peak as f64);
            self.recent_answers = VecDeque::new();
            if let Some(line) = knee {
                self.shared = Some(line);
                self.demand.end();
                self.base = self.base.min(line.knee.ceil() as usize);
                return self.shared_limit(b, now, line);
            }
        }
        if let Some(knee) = self.full_pipe(b) {
            // The pass rate did not grow with the limit: the starting limit already queued the
            // resource, so the floor and min RT measured so far are queued ones (and a drain
            // to the BDP they give would stay above the knee). Back to the starting limit,
            // which already had this throughput, and probe below it at once.
            self.knee_found = true;
            self.base = clamp(knee, min, max);
            let limit = clamp(knee / 2, min, max);
            self.start_probe(now, short_rt, limit, false);
            self.mark_from_start(true);
            return limit;
        }
        if let Some(from) = self
            .steps
            .bought_nothing(self.limit, STEP_SIGNIFICANCE)
            .filter(|&from| {
                from >= clamp(self.c.initial, min, max)
                    && !queueing
                    && self.probe.is_none()
                    && (b.pinned() || b.turned_away_at_once())
            })
        {
            // The last step of the slow start from the starting limit up bought no pass rate:
            // the limit it began at already had what the resource serves, and the permits it
            // added wait inside (no answer since counted as many busy). Back to that limit, the
            // knee; the next step would have added half as many again (`demo_busy_2x`: a delay
            // outside the workers blurs the queue estimate, and 20 → 30 → 45 → 68 permits for
            // 10 workers held 68 for over a second while the pass rate stood at 167–180 a
            // second).
            self.knee_found = true;
            self.base = clamp(from, min, max);
            return self.base;
        }
        // The slow start ends at the first queue: the limit has overshot by the growth of the
        // buckets it took to see it, so it drops at once to the BDP plus the target queue
        // (BBR's drain) instead of backing off a step a bucket.
        // The min RT that stands in until the first probe is the mean RT of the first buckets,
        // which see the short requests first and read low (a drain to the BDP built on it
        // landed at 0.7 × the knee of a 2000-worker pool). Past the starting limit and before
        // the first queue, the slow start's buckets are unqueued: their mean RT is the better
        // stand-in. (At the starting limit they may be queued from the first request.)
        // Only a bucket whose queue estimate reads none counts as unqueued: one too small for
        // an estimate says nothing, and in front of a pool that serves slower as it fills its
        // mean RT rose with the queue each bucket (`demo_2x` seed 6: 117 → 706 ms).
        let min_rt = match short_rt {
            Some(rt)
                if rt > min_rt
                    && queue.is_some()
                    && !queueing
                    && !self.knee_found
                    && !self.restarted
                    && !self.probed
                    && self.probe.is_none()
                    && self.base > clamp(self.c.initial, min, max)
                    && b.pinned() =>
            {
                self.min_rt = Some(rt);
                rt
            }
            _ => min_rt,
        };
        let drain = queueing && !self.knee_found && b.saturated && self.probe.is_none();
        // Queueing at the starting limit, before any growth: the floor and min RT were
        // measured at a limit already past the knee, queued. Probe below it at once.
        let queued_from_start =
            drain && !self.restarted && self.base <= clamp(self.c.initial, min, max);
        self.knee_found |= queueing;
        let bdp = self.pass_rate(b.saturated && queueing) * min_rt.as_secs_f64();
        if b.saturated && queueing {
            self.capacity = self.pass_rate(false);
            self.busiest_run = self.busiest_run();
            self.counted_then = self.closed.iter().map(|b| b.counted).max().unwrap_or(0);
            let served = self.pass_rate(true);
            if served > self.served_most.0 {
                self.served_most = (served, min_rt);
            }
            let in_regime = self
                .recent_rt(RT_BUCKETS)
                .is_some_and(|rt| SAME_REGIME.contains(&ratio_of(rt, min_rt)));
            if in_regime && self.probe.is_none() && b.rate() >= STEADY * served {
                self.regime_rate = Some((served, min_rt));
            }
        }
        // A bucket where nearly every request found every permit taken, and too small for a
        // queue estimate, is no evidence of demand below the limit: its few answers may all
        // have started while a raise was filling (`demo_2x` seed 6: 46–66 of 68 out, read as
        // application-limited, the limit went to 2 × 66 for 10 workers). Held, as any bucket
        // without an estimate.
        let unread = b.pinned() && queue.is_none();
        let mean_alone = queue
            .is_none()
            .then(|| self.room_by_mean(b, min_rt))
            .flatten();
        let mut probe_undrained = false;
        let mut next = if !b.saturated && !unread {
            // Room for `app_limited_gain` × the demand seen, measured two ways: the BDP, and
            // the most permits out at once less the resource's queue (which also counts the
            // slow requests of a multi-modal service that a min RT leaves out).
            // Once the knee is known, hold it: a limit above it lets a burst queue inside the
            // resource (where waiting slows everyone) instead of in the limiter.
            let peak = self
                .closed
                .iter()
                .map(|b| b.max_in_flight)
                .max()
                .unwrap_or(0);
            // Permits waiting in the resource's own queue are not demand it serves: counting
            // them would let a burst that queues inside raise the limit, and the slowed
            // service raise it again (a collapse under a load below capacity).
            let demand = bdp.max(peak as f64 - queue.unwrap_or(0.0));
            if queueing && self.knee.is_none() && self.probe.is_none() {
                // The resource queues while demand stays below the limit: the limit is past
                // its knee, and room for bursts is room to queue inside (a surge of slow
                // requests then slows everyone). The demand it served, less that queue, is the
                // knee: hold it, as once a knee is known.
                let knee = self.drained_to(demand);
                self.knee = Some(clamp((knee.ceil() as usize).min(self.base), min, max));
            }
            self.knee
                .unwrap_or((demand * self.c.app_limited_gain).ceil() as usize)
        } else if self.probe_limit(now).is_some() {
            // A probe holds the limit down: keep the limit it returns to.
            self.base
        } else if let Some(q) = queue.or(mean_alone) {
            // A service that slowed reads as a queue against the floor of its old regime.
            let q = if self.follow_slowdown() {
                self.queue_estimate().unwrap_or(q)
            } else {
                q
            };
            // Where the service spreads little, the low RT misses most of a queue in front of a
            // small pool (the wait for a few answers is short one time in twenty), and a floor
            // drawn low reads a queue where none waits: the mean RTs' reading, unbiased, bounds
            // it, and steers to half a request ([`Self::mean_queue`]).
            let (q, target) = match self.mean_queue(b, min_rt) {
                Some(m) => (q.clamp(m - MEAN_BAND, m + MEAN_BAND), MEAN_TARGET),
                None => (q, target),
            };
            // Steer the resource's own queue to `target`: grow fast while there is clearly
            // none (capacity to find), otherwise correct part of the error each bucket.
            // Before the knee is first found, any queue under the target is noise.
            let clear = if self.knee_found {
                target / 4.0
            } else {
                startup_bar
            };
            // Where the count shows every permit busy at once, the reading is noise: no queue.
            let at_count = self.count_at_the_limit();
            let steering = !at_count && (q >= clear || self.probe.is_some());
            // Asked wherever the estimate reads no queue past the target, not only where it
            // reads clearly none: a bucket's low RT off a few dozen answers, against a floor a
            // probe drew low, reads 0.4–1.1 requests where none wait, and the steering's half
            // of an error under a request rounds back to the limit (`capacity_fifth` seed 3:
            // 19–23 permits for 50 workers for 1.2 s after their return).
            if let Some(cap) = self
                .workers_came_back(min_rt)
                .filter(|_| !queueing && b.pinned())
            {
                // Workers came back: the knee is as unknown as at the start, and is found the
                // same way, up to what the resource served at its most (`capacity_fifth`: × 1.1
                // a bucket, stalled by the estimate's noise at a third of the workers, took 10
                // permits back to 50 workers in 2–3 s, 1300–2200 answers lost).
                self.knee_found = false;
                self.knee = None;
                self.restarted = true;
                self.restart_cap = Some(cap);
                self.came_back = true;
                self.regime_counted = 0;
                self.fell_bar = 0.0;
                self.delay_restart = None;
                if self.probe.take().is_some() {
                    // In a probe's tail: the resource changed under it, and what it measured
                    // is neither regime's. The tail held the limit where it was, and the
                    // slow start needs it to grow. (A start probe's mark goes with it.)
                    self.since_probe = 0;
                }
            }
            // Until the knee is found, grow like a slow start.
            let step = if self.knee_found {
                self.c.max_step
            } else {
                STARTUP_STEP
            };
            let next = if steering {
                base + self.c.queue_gain * (target - q)
            } else if (b.pinned() || b.turned_away_at_once())
                && !self.knee_found
                && self.demand.defers_growth()
            {
                // The demand-led start is about to leap further than a step: the step would
                // end it.
                base
            } else if b.pinned() || b.turned_away_at_once() {
                // Pinned, or (no queue in the limiter) callers turned away for want of a
                // permit while the resource shows no queue: a load it could carry is being
                // refused. Without a queue nobody waits for a permit, so a bucket is never
                // pinned: held at the starting limit, 50 workers at half their capacity lost
                // 29 % (review 28).
                self.step_after_probe(base, step)
                    .unwrap_or((base * step).max(base + 1.0))
            } else {
                // Some request found every permit taken, but most did not: demand only
                // touched the limit, which is not what holds the pass rate back. Growing here
                // lets the next burst of a load below capacity queue inside the resource. The
                // slow start too: at 0.8× the capacity of a pool the size of the starting
                // limit a quarter of the requests find every permit taken, and growing on a
                // tenth took 20 permits to 45–114 in front of 20 workers, where a burst
                // queued inside and collapsed the resource (`cache_0.8x`, twentieth round).
                base
            };
            // The steps are fractions of the limit, but at least a permit: the limit is
            // whole, and below 5 permits × 1.1 and × 0.9 round back to the limit itself (4
            // permits for 5 workers held for 100 s, with room and a queue alike).
            let (up, down) = (
                (base * step).max(base + 1.0),
                down_step(base, self.c.backoff),
            );
            let held = self.held_after_drain(b);
            // The workers went away, read off the count before the queue estimate shows it
            // whole: every answer of the last buckets (a probe's too: its limit is among the
            // recent ones the count is judged under) counted `m` or fewer busy, far fewer than
            // the pool counted exact before. The permits past them wait inside the resource:
            // drained at once to `m + 1` (`capacity_fifth` seed 1: the queue estimate, which
            // averaged a blind probe's buckets, drained 49 to 31, then 28 to 14, and a probe
            // and a second early one followed; the fall took 5.9 s, now 2.7 s).
            let fell = (self.knee_found && self.probe.is_none() && self.delay_restart.is_none())
                .then(|| {
                    let recent = self.closed.iter().rev().take(RT_BUCKETS);
                    let all = recent.clone().count() == RT_BUCKETS;
                    let least = self.least_recent_limit().unwrap_or(self.base);
                    all.then(|| self.count_fell(recent, least)).flatten()
                })
                .flatten()
                .filter(|&m| ((m + 1) as f64) < base);
            let next = if let Some(m) = fell {
                self.fell_to(now, m);
                self.base as f64
            } else if drain {
                self.drained(now);
                // Like after a probe: no early probe until the window is measured anew (it
                // still holds the overshoot's inflated RTs, which set off a probe at once).
                self.since_probe = 0;
                // Never below the permits the window's unqueued buckets kept in service: min
                // RT may be a censored mean (a two-speed service's first answers are its short
                // ones), and a BDP on it drained 149 permits to 22 in front of 50 workers.
                let bdp = (self.pass_rate(false) * min_rt.as_secs_f64())
                    .max(self.served_unqueued(target));
                let cut = self.drained_to(bdp).max(self.in_service_at_restart(queue));
                let cut = cut.min(base);
                self.drained_in_a_delay(cut, base);
                cut
            } else if held {
                // Right after the drain, the last buckets still show the overshoot's queue,
                // which the drain has already dealt with: no cut until the estimate is taken
                // from requests that started after it.
                next.clamp(base, up)
            } else if let Some(excess) =
                self.standing_queue(target)
                    .map(|_| q - target)
                    .filter(|&excess| {
                        // Only a queue the pass rate confirms: the permits it leaves in service
                        // answer at least as fast as the resource does (Little's law on min RT). A
                        // delay outside the resource lifts every RT as a queue does, at the same
                        // pass rate.
                        let recent = self.closed.iter().rev().take(RT_BUCKETS);
                        self.knee_found
                            && self.probe.is_none()
                            && base - excess < down
                            && Self::rate_of(recent) * min_rt.as_secs_f64() < base - excess
                    })
            {
                // A queue far past the target, standing beyond its noise in every recent
                // bucket, more than a step takes back, and confirmed by the pass rate (the
                // workers went away): Little's law says how many permits wait, so they are
                // drained at once, no lower than half the limit a bucket, and the steering
                // holds until the estimate is taken after the drain, as after the slow start's.
                // At × 0.9 a bucket of a queued RT, 45 permits took 5 s to reach 10 workers.
                if self.drained_a_delay() {
                    // The last drain took permits and left the wait where it was: they were
                    // not waiting inside, but in a delay outside. The slow start restarts on it
                    // as after a probe that read one; where the capacity before it was not
                    // measured in min RT's regime, probe now, and read the regime as it is
                    // (`network_delay_spike` seed 16: the probe at 10 permits held 1 s and
                    // read what the drain had; the restart came 1.1 s later).
                    if !self.restart_on_drained_delay(now) {
                        self.drain_low = None;
                        probe_undrained = true;
                    }
                    base
                } else {
                    self.drained(now);
                    let cut = (base - excess).max(base / 2.0);
                    self.drained_in_a_delay(cut, base);
                    self.drain_low = self
                        .recent_low()
                        .map(|(low, rate)| (self.closed_total, low, rate, cut / base));
                    cut
                }
            } else {
                // Not below the workers the answers counted busy in each of the last buckets
                // plus one, the least target queue: in a pool served first come, first served
                // no answer counts more than the workers, so a queue read past that is min
                // RT's, not the pool's (50 exponential workers: the count is 50 and the
                // steering trims 51 to 50 on a reading of 3–4 waiting). Not while the median
                // RT is half way to an early probe: there the permit of queue the floor holds
                // lifts the median over the probes' (censored, low) one, and early probes at
                // half the limit follow (`heavy_tail_3x` seed 4: probes every 2–4 s, each
                // lowering the probes' median, 0.9998 → 0.9662). And only where the count is
                // under the limit: a count at or past it says only that every permit was in
                // service (or it comes from permits out before a cut), not where the workers end.
                // No higher than the workers counted, where the count is exact, and one more.
                let next = next.clamp(down, up).min(self.by_exact_count(down));
                let next = match self.counted_busy() {
                    Some(w) if (w as f64) < base && next < base && !self.median_rising() => {
                        next.max(((w + 1) as f64).min(base))
                    }
                    _ => next,
                };
                // A cut soon after a step that followed a probe goes back to where it began.
                self.step_taken_back(steering, next, base)
            };
            if steering && self.probe.is_none() && self.knee_found {
                self.knee = Some(clamp(next.round() as usize, min, max));
            }
            if at_count && next >= base {
                // A permit at a time, through a probe's tail too: its buckets read the workers
                // now, not the ones the probe held down.
                base + 1.0
            } else if self.probe.is_some() {
                next.min(base)
            } else {
                next
            }
            .round() as usize
        } else if pooled.is_some_and(|p| p < target / 4.0)
            && b.pinned()
            && self.probe.is_none()
            && base < 0.5 * self.served_most.0 * min_rt.as_secs_f64()
        {
            // Too few answers a bucket for an estimate of their own, pinned at under half the
            // permits the resource kept in service at its most, and the answers of the last
            // buckets together show no queue: a limit walked down (to 1, in front of 20 workers
            // back at full speed) grows a step at a time.
            (base * self.c.max_step).max(base + 1.0).round() as usize
        } else if self.queue_by_mean(b, min_rt) {
            // Too few answers a bucket for a low RT of their own, but the mean RTs read a
            // queue past their target by two of their own standard errors: a permit less.
            clamp(self.base.saturating_sub(1), min, max)
        } else if let Some(cap) = (b.pinned())
            .then(|| self.by_exact_count(down_step(base, self.c.backoff)))
            .filter(|&cap| cap < base)
        {
            // Too few answers a bucket for a low RT of their own, but the workers counted are
            // exact: the permits past them and the least target wait inside the resource.
            cap.round() as usize
        } else if self.delay_restart.is_some()
            && !self.knee_found
            && b.pinned()
            && self.probe.is_none()
        {
            // The slow start restarted on a delay outside grows without a queue estimate of
            // its own (the restart leaves one bucket of the window, and three are needed):
            // its steps are paced by the workers the old capacity leaves idle (below), and
            // its cap is the knee. Held for the two buckets, it lost half a second.
            (base * STARTUP_STEP).max(base + 1.0).round() as usize
        } else {
            self.base // not enough data for a queue estimate yet
        };
        if let Some(cap) = self.unprobed_cap().filter(|_| next > self.base) {
            next = next.min(cap.max(self.base));
        }
        if self.count_shows_room(b, now) {
            next = next.max(self.base + 1);
        }
        if let Some(room) = self.room_without_queue(b, min_rt) {
            // A step at most, as growth is.
            next = next.max(room.min((base * self.c.max_step).max(base + 1.0)).ceil() as usize);
        }
        if let Some((served, service)) = self.delay_restart {
            if !self.knee_found {
                // Each step of the slow start lands in the workers at once (the delay is
                // after them): at × 1.5, 75 permits queued in front of 50 workers, whose
                // contention held the queue for seconds. At most twice the workers the old
                // capacity leaves idle at this bucket's pass rate (Little's law on the
                // service's own time), at least a permit.
                let idle = (served - b.rate()) * service.as_secs_f64();
                // A step of the slow start is that many, not × 1.5 bounded by it: the cap
                // (Little's law on the capacity before the delay) finds the knee, the steps
                // only pace the permits into the workers (× 1.5 from the probe's 12 permits
                // took 2 s to the knee of 250).
                let paced = (base + 2.0 * idle.max(1.0)).ceil() as usize;
                next = if next > self.base { paced } else { next };
            } else if let Some(cap) = self.restart_cap {
                // And the knee the old capacity gives is not passed: × 1.1 a bucket read the
                // queue a bucket or two late (an RT of 250 ms), 293 permits for 250.
                next = next.min(cap.max(self.base));
            }
        }
        if let Some(cap) = self.restart_cap.filter(|&c| !self.knee_found && next >= c) {
            // The restarted slow start reached what the old capacity allows at the new RT.
            next = cap;
            self.knee_found = true;
            self.knee = Some(clamp(cap, self.c.min, self.c.max));
        }
        // Below the knee, with no queue in the resource beyond the target, drops do not back
        // off: a lower limit relieves nothing there, and the drops are the resource's own
        // (a deadline inside its service-time tail) or the wait for a permit in front of it,
        // which a lower limit only lengthens. Read as overload they walked the limit from the
        // knee to 1–2 in front of 50 idle workers and held it there (a service 3× slower with
        // a 300 ms deadline: 0.56 of capacity, the oracle 0.96; review 31).
        // In a restarted start (a slowdown or the workers' return: the knee unknown, the limit
        // below the cap the old capacity allows at the new RT), the cap stands in for the knee,
        // and outside probes the pooled estimate for a missing one: a service 3× slower behind
        // a 300 ms timeout gave buckets of 4–15 answers, and its drops walked the restarted
        // start down to a limit of 1
        // (`littles_regrows_after_a_slow_spell_behind_an_upstream_timeout`).
        let restarting = self.restarted
            && !self.knee_found
            && self.restart_cap.is_some_and(|cap| self.base < cap);
        // Elsewhere below the knee, pooled answers that read as a slower service (the whole
        // distribution scaled, its low end with it), not as a queue (a wait added to each), also
        // stand in: the same service with its knee known walked down to 1–3 (four seeds of
        // ten of `slow_service_upstream_timeout_1.5x`).
        let outside_probes = self.probe.is_none() && !b.probed;
        let slower_service = outside_probes
            && answers.as_ref().is_some_and(|a| {
                self.floor()
                    .zip(self.min_rt)
                    .is_some_and(|(floor, min_rt)| a.slower_service(floor, min_rt))
            });
        // And in a probe: its buckets, at half the limit, hold too few answers for an estimate
        // of their own, and without one every drop of the deadline's tail backed the limit the
        // probe returns to off a step a bucket, through the whole of a probe that lasts seconds
        // at a slow service's RT (a 300 ms timeout in front of a 150 ms service: 4 → 3 → 2 under
        // a probe at 2, then 1 for 20 workers, while the pooled answers read 0.04–0.47 waiting
        // against a target of 1).
        let estimate = if slower_service || restarting || !outside_probes {
            pooled
        } else {
            queue
        };
        let knee = self.knee.or(self.restart_cap.filter(|_| restarting));
        let unqueued_below_knee =
            estimate.is_some_and(|q| q < target) && knee.is_some_and(|k| self.base < k);
        // Not in the bucket where a fall read off the count drained: its late answers are the
        // backlog's, which the drain has already dealt with (a back-off on them took the 11
        // permits the count gave for 10 workers to 9, and the cool-down held them there).
        let just_fell = self.fell_at == Some(self.closed_total);
        if b.fresh_drops > 0 && b.bound() && !unqueued_below_knee && !just_fell && self.dropping() {
            next = next.min((self.base as f64 * self.c.backoff).floor() as usize);
            self.cool_down_from(now);
        } else if self.cooling(now) {
            next = next.min(self.base);
        }
        self.base = clamp(next, min, max);
        let min_rt = self.min_rt.unwrap_or(min_rt); // a re-based min RT needs no probe
        // Once a probe has measured the floor, the mean RT alone is no evidence: under
        // heavy-tailed service it swings far more than 1.5× from one second to the next, so
        // the low quantile must show a queue too. (Before it, the floor may itself be queued.)
        // The window must also have been measured after the last probe: right after one, it
        // still holds the buckets that set it off, and a heavy-tailed RT re-triggered probes
        // back to back (each at half the limit, under a load the resource carried).
        // RTs well below what the last probes measured unqueued: the resource got faster, and
        // a floor or min RT from before reads a queue as none. Probe now, from the recent RT.
        self.unchanged_since_probe(now);
        // A floor from the start's first answers that nothing since came near: measured now.
        if self.floor_never_near() {
            self.next_probe = self.next_probe.min(now);
        }
        if let Some(low) = self.below_floor() {
            self.low_floor = Some(low);
            // Read off buckets still queued behind the old limit: a bound from above.
            self.floor_unsure = true;
            if let Some(rt) = short_rt.filter(|&rt| rt < min_rt) {
                self.min_rt = Some(rt);
            }
        }
        let faster = self.probed
            && self.probe.is_none()
            && self.since_probe >= RT_BUCKETS
            && short_rt
                .is_some_and(|rt| rt.as_secs_f64() * self.c.probe_trigger < min_rt.as_secs_f64())
            && self.faster_past_its_noise(min_rt);
        let min_rt = match short_rt {
            Some(rt) if faster => {
                self.min_rt = Some(rt.min(min_rt));
                rt.min(min_rt)
            }
            _ => min_rt,
        };
        // Once a probe has measured the median RT unqueued, "inflated" compares medians: the
        // mean of a probe's answers leaves out the slow ones it did not wait for (a two-speed
        // service's 500 ms mode, a heavy tail), so the window's mean RT sat above 1.5 × min RT
        // at the knee itself and probes at half the limit followed every second or so.
        // Until then, the mean RT against min RT — unless the last probe measured nothing: the
        // mean is then as far above min RT as before, and the next probe as blind.
        let measured = self.probed || self.measured_at_start;
        let inflated = (queueing || !measured)
            && self.since_probe >= self.c.pass_buckets
            && match (self.probe_mid.filter(|_| measured), self.mid_of_window()) {
                (Some(unqueued), Some(mid)) => {
                    mid.as_secs_f64() > self.c.probe_trigger * unqueued.as_secs_f64()
                }
                _ => {
                    !self.blind
                        && window_rt.is_some_and(|rt| {
                            rt.as_secs_f64() > self.c.probe_trigger * min_rt.as_secs_f64()
                        })
                }
            };
        // Queueing while the limit shrinks may be a min RT that is too low: check it soon.
        // A probe drains a queue the limit holds inside the resource; when most requests found
        // a permit free, the limit holds none there (it empties between bursts).
        // A probe (periodic, or early on inflated RTs) drains a queue the limit holds inside
        // the resource. When most of the window's buckets found a permit free, the limit holds
        // none: a pinned bucket is then a surge (of a two-speed service's slow requests) that
        // drains by itself, and a probe at half the limit stalls behind the surge's slow
        // requests while callers queue in the limiter and the predicted wait turns them away
        // (`two_speeds_0.8x`). Held until most of the window is pinned again.
        let held_down = {
            let pinned = self.closed.iter().filter(|b| b.pinned()).count();
            2 * pinned >= self.closed.len()
        };
        if self.came_back && self.knee_found {
            // The slow start after the workers came back has found the knee: a periodic probe
            // due now would take its depth (the last bucket's pass rate × min RT, or the queue
            // estimate's) and the pass rate it is judged against from the ramp's buckets, still
            // climbing. It waits until they have left the window. (`capacity_fifth` seed 23: at
            // 40 permits 0.2 s after the ramp, it did not drain and read 41.6 ms, which kept
            // min RT at the fall's 42 ms, and the probes after it went to 35 permits for 50
            // workers. Over seeds 1–250 the rule moves goodput either way: +0.0018 ± 0.0014
            // among the 29 seeds it moves.)
            self.came_back = false;
            let window = u32::try_from(self.c.pass_buckets).unwrap_or(u32::MAX);
            self.next_probe = self.next_probe.max(now + self.span * window);
        }
        if self.probe.is_none()
            && b.saturated
            && (queued_from_start
                || probe_undrained
                || (b.pinned() && (((now >= self.next_probe || inflated) && held_down) || faster)))
        {
            let mut drained = b.rate() * min_rt.as_secs_f64() * self.c.probe_gain;
            let shallow = self
                .in_service(queue, target, min_rt, faster)
                .map(|n| n * self.c.probe_gain)
                .filter(|&d| d > drained);
            drained = shallow.unwrap_or(drained);
            let limit = if queued_from_start {
                self.base / 2
            } else {
                // A faster resource: the RT the depth comes from still holds the queue the
                // old limit leaves, so pass rate × RT is about the limit itself, and a probe
                // held there drains nothing. Below the limit in that case.
                let top = if faster {
                    ((self.base as f64 * self.c.probe_gain) as usize).max(self.base / 2)
                } else {
                    self.base
                };
                // Half the limit rounded up: at m + 1 for an exact count of m (11 for 10
                // workers) the pass rate reads 5–6, which the half-limit clamp held.
                let at_half = (drained as usize) <= self.base.div_ceil(2);
                let depth = (drained as usize).clamp(self.base / 2, top);
                // No higher than the workers the answers counted busy at once: a probe above
                // them drains nothing, and its queued floor and mean are taken as the
                // unqueued ones (5 workers of 500 ms: probes at 7 for 8 permits, from the
                // start's queued mean RT, and the limit back at 8–9 after them). Only a probe
                // below the limit: where pass rate × min RT reaches the limit itself, min RT
                // is another regime's (a slower service that just ended), the floor the
                // count's margin is read from too, and a probe moved there on it read a queue
                // as the new regime (`latency_spike` seed 29: 57 permits for 50 workers, the
                // return 2.1 → 7.1 s).
                let depth = match self.counted_workers() {
                    Some(w) if depth < self.base => depth.min((w as usize).max(self.base / 2)),
                    _ => depth,
                };
                let depth = self.first_depth(self.unprobed_depth(depth));
                if at_half && !faster && depth < self.base {
                    depth.max(self.depth_from_count())
                } else {
                    depth
                }
            };
            let at_count = self.probe_at_count().filter(|_| !queued_from_start);
            let limit = at_count.unwrap_or(limit);
            // Where the mean RTs read the busy workers within their noise, no deeper than
            // those: a deeper probe costs the workers it leaves idle for the whole of its hold.
            let at_busy = self
                .probe_at_busy(b, min_rt)
                .filter(|&d| !queued_from_start && !faster && at_count.is_none() && d > limit);
            let limit = at_busy.unwrap_or(limit);
            // A probe at the count takes its depth from the count, not from the queue
            // estimate: no shallow one, whatever depth it replaced.
            let shallow = shallow.is_some() && at_count.is_none();
            self.start_probe(now, short_rt, limit, shallow);
            if let Some(p) = self.probe.as_mut() {
                p.at_count = at_count.is_some();
                p.at_busy = at_busy.is_some();
            }
            self.mark_from_start(queued_from_start);
        }
        self.probe_limit(now).unwrap_or(self.base)
    }

    /// The limit in front of requests that slow each other (the start's RTs rose on a line
    /// with the permits out): no queue to read in the low RTs, which rise with every permit.
    /// Grows × `max_step` while nearly every request finds every permit taken (or, without a
    /// queue in the limiter, callers were turned away), up to the line's knee, and while the
    /// line still holds: the last buckets' mean RT no more than
    /// [`SAME_REGIME`]'s end over the line's at the limit (a slowdown that grows faster than
    /// a line — throughput that peaks and falls — or a queue on top of it: the limit holds).
    /// Backs off on drops.
    fn shared_limit(&mut self, b: &Bucket, now: Nanos, line: Shared) -> usize {
        let (min, max) = (self.c.min, self.c.max);
        let base = self.base as f64;
        let mut next = self.base;
        let on_line = self
            .recent_rt(RT_BUCKETS)
            .is_some_and(|rt| rt.as_secs_f64() <= *SAME_REGIME.end() * line.rt(base));
        if b.fresh_drops > 0 && b.bound() && self.dropping() {
            next = (base * self.c.backoff).floor() as usize;
            self.cool_down_from(now);
        } else if !self.cooling(now)
            && (b.pinned() || b.turned_away_at_once())
            && base < line.knee
            && on_line
        {
            next = ((base * self.c.max_step).max(base + 1.0).min(line.knee)).round() as usize;
        }
        self.base = clamp(next, min, max);
        self.base
    }

    /// The permits the window's buckets kept in service on average while nothing waited: the
    /// RTs summed over the time they span (Little's law: in flight = rate × mean RT) of the
    /// buckets outside probes whose own low RT reads less than `target` queued. A lower bound
    /// on the knee that needs no min RT: where min RT is a censored mean (the short requests of
    /// a two-speed service answer first) the BDP reads a fraction of it.
    fn served_unqueued(&self, target: f64) -> f64 {
        let Some(floor) = self.floor() else {
            return 0.0;
        };
        let (rt, span) = self
            .closed
            .iter()
            .filter(|b| !b.probed)
            .filter(|b| b.queue_over(floor).is_some_and(|q| q < target))
            .fold((0.0, 0.0), |(r, s), b| {
                (r + b.rt_sum.as_secs_f64(), s + b.span.as_secs_f64())
            });
        if span > 0.0 { rt / span } else { 0.0 }
    }

    /// Where a slow start restarted on a slower service (not a delay outside) reads its first
    /// queue at the limit it drains from (no bucket of the estimate under a lower one), the
    /// permits that limit less `queue` leaves in service (Little's law), with the drain's
    /// margin: the least its drain may leave. The drain's BDP takes min RT from the probe that
    /// read the new regime, whose span the old regime's RTs set, so its mean is censored: at
    /// the onset of a 3× slowdown (`latency_spike` seed 2) a probe of 0.2 s read 93.5 ms for
    /// 150, and the start restarted at 51 permits for 50 workers drained on a queue of 5.9 to
    /// 37, where the steering held it to the slowdown's end (10.8 s to converge). After the
    /// start's growth (the workers' return, a delay outside) the estimate lags the limit, and
    /// the limit less it stays above the knee: 0 there, the BDP alone.
    fn in_service_at_restart(&self, queue: Option<f64>) -> f64 {
        let level = self.least_recent_limit().is_some_and(|l| l >= self.base);
        match queue {
            Some(q) if self.restarted && self.delay_restart.is_none() && level => {
                self.drained_to(self.base as f64 - q)
            }
            _ => 0.0,
        }
    }

    /// A queue at the starting limit, measured from the first requests' low RT rather than
    /// the buckets' alone: in front of a resource smaller than the limit every bucket is queued
    /// from the first request, their floor with them, and the estimate reads no queue. The
    /// first requests (at most half the limit out) were served at once unless the resource is
    /// smaller still. The queue must stand [`START_FLOOR_SIGNIFICANCE`] standard errors past
    /// `target` (of the recent buckets' mean low RT and of the first requests' low RT, each ×
    /// the pass rate), and the pass rate must confirm it: pass rate × the first requests' mean
    /// RT, the permits in service, below what the limit less `target` leaves. The first
    /// requests' mean RT alone reads low in a two-speed or heavy-tailed service (its short
    /// requests answer first), and their low RT alone, the least of a dozen, may read a few ms
    /// low in front of a large pool, where a few ms are a few requests.
    fn queued_at_start(&self, target: f64) -> bool {
        let initial = clamp(self.c.initial, self.c.min, self.c.max);
        let started = self.knee_found
            || self.restarted
            || self.probed
            || self.probe.is_some()
            || self.demand.leapt();
        if started || self.base != initial {
            return false;
        }
        let (Some(first), Some(first_se), Some(first_rt), Some(buckets), Some((low, rate))) = (
            self.start.unqueued_low(),
            self.start.unqueued_low_se(),
            self.start.unqueued_rt(),
            self.lows.iter().min().copied(),
            self.recent_low(),
        ) else {
            return false;
        };
        let queue = low.saturating_sub(first.min(buckets)).as_secs_f64() * rate;
        let recent = self.queue_noise().powi(2) / RT_BUCKETS as f64;
        let noise = (recent + (first_se.as_secs_f64() * rate).powi(2)).sqrt();
        let in_service = rate * first_rt.as_secs_f64();
        queue - target > START_FLOOR_SIGNIFICANCE * noise && in_service < self.base as f64 - target
    }

    /// Still at the starting limit, before any growth, probe or knee: the requests that
    /// found every permit taken are filed against those that started with few out.
    fn at_start(&self) -> bool {
        let initial = clamp(self.c.initial, self.c.min, self.c.max);
        !self.knee_found
            && !self.restarted
            && !self.probed
            && self.probe.is_none()
            && !self.demand.leapt()
            && self.shared.is_none()
            && self.base == initial
            && self.limit == initial
    }

    /// A starting limit already past the knee, seen from the RTs themselves: the requests
    /// that started with more than half the permits out took longer than those that started
    /// with few out, so they waited inside the resource. Little's law on the two groups gives
    /// the permits in service, and the limit drops to that plus the target queue (the drain).
    /// The first group also gives what every RT since (queued from the first request) could
    /// not: an unqueued mean RT for min RT, and an unqueued low RT for the floor the queue
    /// estimate is measured from — the fastest of the first requests, which started before
    /// the resource filled. It is judged on every answer and needs a few of each group, a
    /// round trip or two, where the queue estimate waited for buckets whose floor was itself
    /// queued (and a bucket of a few late answers lasted 26 s).
    fn past_the_knee_from_the_start(&mut self, now: Nanos) {
        let (min, initial) = (self.c.min, clamp(self.c.initial, self.c.min, self.c.max));
        let least = (self.c.min_samples as u64).min(initial as u64 / 2);
        let target = (self.c.queue_target * initial as f64).max(MIN_QUEUE_TARGET);
        let Some(in_service) = self.start.in_service(least, STARTUP_SIGNIFICANCE, target) else {
            return;
        };
        // Requests that slow each other read as a start past the knee: those that started
        // with more permits out took longer. Where the RTs rise on a line from the first
        // permit, there is no queue, and the knee is where the line's throughput stops
        // growing, if that is past the starting limit.
        let knee = self
            .start
            .line(least, STARTUP_SIGNIFICANCE, target)
            .map(Shared::new)
            .filter(|line| line.knee > initial as f64);
        if let Some(line) = knee {
            self.shared = Some(line);
            self.demand.end();
            return;
        }
        self.min_rt = self.start.unqueued_rt();
        self.low_floor = self.start.unqueued_low();
        self.probe_mid = self.start.unqueued_mid();
        self.measured_at_start = true;
        self.knee_found = true;
        let knee = self.drained_to(in_service);
        let knee = clamp((knee.ceil() as usize).min(initial), min, initial);
        self.knee = Some(knee);
        self.limit_log.push_back((now, self.limit));
        if self.limit_log.len() > LIMIT_LOG {
            self.limit_log.pop_front();
        }
        self.base = knee;
        self.limit = knee;
        // As after the drain: the last buckets still hold the queue of the starting limit.
        self.drained_at = Some(self.closed_total);
        self.drained_when = None;
        self.since_probe = 0;
        self.next_probe = self
            .next_probe
            .max(now + self.at_least_buckets(self.c.probe_interval, 50) / 2);
    }

    /// The floor was taken from the start's first answers (no probe has measured one since),
    /// and no bucket opened since came near it: every low RT of the buckets opened after the
    /// start's knee ([`NEVER_NEAR_BUCKETS`] of them at least; the one open then holds the
    /// start's queued answers) stands over [`NEVER_NEAR`] × `probe_trigger` × it, while their
    /// middle RTs read no queue over min RT (their mean within [`SAME_REGIME`] of it) and the
    /// RTs spread little (their low RTs at least [`NEVER_NEAR_SPREAD`] of their middle ones).
    /// The first answers of a start past the knee are the fastest of a group; a service whose
    /// 5th percentile is ~0.66 s read a floor of 221 ms there (`report_generator_1.5x` seed 23),
    /// every bucket then read 2–3 waiting where none did, and the steering cut 10 workers'
    /// limit to 9 and 8 at 21 and 25 s, before a window of ten buckets could call the floor
    /// never near (39 s). Where the middle RTs read a queue too, it is the starting limit's
    /// (seed 1: medians 2.8–4.7 s over a min RT of 1.7 s at 15 permits), and a probe then
    /// drains nothing. Not on a floor an exponential service's 5th percentile could read
    /// (under 2 × [`LOW_QUANTILE`] of min RT): its low RTs per bucket wander far over the
    /// first answers' (`few_slow_workers_3x`). The spread is read off the low and middle RTs,
    /// which the start's queued answers move little: their coefficient of variation read 0.8–0.9
    /// in seed 23 for a service's 0.53.
    fn floor_never_near(&self) -> bool {
        let (Some(floor), Some(min_rt)) = (self.low_floor, self.min_rt) else {
            return false;
        };
        if !self.measured_at_start || self.probed || self.probe.is_some() {
            return false;
        }
        if floor.as_secs_f64() < 2.0 * LOW_QUANTILE * min_rt.as_secs_f64() {
            return false;
        }
        let after = self.since_probe.saturating_sub(1).min(self.closed.len());
        if after < NEVER_NEAR_BUCKETS {
            return false;
        }
        let window = self.closed.iter().skip(self.closed.len() - after);
        let read: Vec<(f64, f64)> = window
            .clone()
            .filter_map(|b| b.low_rt().zip(b.mid_rt()))
            .map(|(low, mid)| (low.as_secs_f64(), mid.as_secs_f64()))
            .collect();
        let (lows, mids) = read.iter().fold((0.0, 0.0), |(l, m), r| (l + r.0, m + r.1));
        if mids <= 0.0 || lows / mids < NEVER_NEAR_SPREAD {
            return false;
        }
        if mids / read.len() as f64 > min_rt.as_secs_f64() * SAME_REGIME.end() {
            return false;
        }
        let bar = floor.as_secs_f64() * self.c.probe_trigger * NEVER_NEAR;
        window
            .filter_map(Bucket::low_rt)
            .all(|low| low.as_secs_f64() > bar)
    }

    /// The most the steering grows the limit to before the first probe, after a start past the knee
    /// ([`Self::past_the_knee_from_the_start`]) in front of a slow pool (its probes stretched,
    /// [`Self::probe_stretched`]): [`UNPROBED_SLACK`] over the most workers an answer of the
    /// window's pinned buckets counted busy. Until a probe measures them, the floor and min RT are
    /// the start's first answers', and a floor read high reads no queue where some wait: the
    /// steering grew 12 permits for 10 workers to 13–15 (`report_generator_1.5x` seed 20, answers
    /// counting 10 busy at most), and the first probe, from 14, read the wait into min RT (2.04 s
    /// for 1.70 s). A cap, not a cut: a limit already over it holds. Not after any start (231 → 222
    /// targets on the card: `huge_pool_1.5x`, `uniform_1.5x`, `heavy_tail_0.8x` lost), nor after
    /// every start past the knee (`demo_2x`, whose 10 workers of 50 ms a probe does not stretch:
    /// 6–10 0.983 → 0.976).
    fn unprobed_cap(&self) -> Option<usize> {
        let unprobed = !self.probed && self.probe.is_none() && self.measured_at_start;
        if !unprobed || !self.probe_stretched() {
            return None;
        }
        self.most_counted().map(|m| m + UNPROBED_SLACK)
    }

    /// The depth of the first probe after a start past the knee, in front of a slow pool (the
    /// state of [`Self::unprobed_cap`]), where pass rate × min RT × `probe_gain` puts it at the
    /// limit: the most workers an answer counted busy at once, under the limit (at least half
    /// of it). Until that probe, min RT is the start's stand-in, the mean RT of buckets queued
    /// behind the starting limit, and by Little's law pass rate × that RT is the permits out,
    /// the limit itself: × `probe_gain` it sits one noisy bucket's pass rate under the limit.
    /// A bucket of ~40 answers read 7.0 a second for a pool serving 5.5
    /// (`report_generator_1.5x` seed 26), the probe went to the limit, 12 permits for 10
    /// workers, drained nothing, passed the drain test against the same noisy buckets, and its
    /// queued reading (2.25 s for a 1.70 s service) replaced the stand-in whole: 12–13 permits
    /// to the end. A probe already under the limit keeps its depth (taken to the count, such
    /// probes went deeper than they need: eighty-eighth round).
    fn unprobed_depth(&self, depth: usize) -> usize {
        if depth < self.base || self.unprobed_cap().is_none() {
            return depth;
        }
        self.most_counted().map_or(depth, |m| {
            m.min(self.base.saturating_sub(1)).max(self.base / 2)
        })
    }

    /// The depth of the first probe in front of a slow pool ([`Self::probe_stretched`]): no
    /// deeper than the most workers an answer counted busy at once since the regime began
    /// (from the permits whose requests went in ahead of it, [`Sample::ahead`]), under the
    /// limit. In a pool served first come, first served no answer counts more than the
    /// workers, so at that many permits nobody waits inside and the probe measures the
    /// unqueued service whole; each permit under it idles a worker for the whole of a hold that
    /// lasts seconds there. The first probe's depth comes from min RT's stand-in (the mean RT
    /// of the start's first buckets, off by a third either way: 2.31 s and 1.18 s for a 1.70 s
    /// service in `report_generator_1.5x` seeds 26 and 30) × one bucket's pass rate ×
    /// `probe_gain`, clamped to half the limit: that scenario's first probes held 8.4 permits of
    /// 11.4 for 10 workers for 15 s on average (seeds 1–90), 7 of 11 in seed 2. Later probes
    /// build on min RT as a probe measured it.
    fn first_depth(&self, depth: usize) -> usize {
        if self.probed || self.regime_counted == 0 || !self.probe_stretched() {
            return depth;
        }
        depth.max(self.regime_counted.min(self.base.saturating_sub(1)))
    }

    /// The resource got faster, seen in its low RTs: the last buckets' mean low RT stands
    /// below the floor ÷ `probe_trigger`, and below it by [`STARTUP_SIGNIFICANCE`] standard
    /// errors of a bucket's low RT. The floor then belongs to a slower regime (a delay that
    /// went away) and reads the queue the old limit leaves as none, while the mean RT, full of
    /// that queue, need not fall by as much. That mean low RT, the new floor: not the least of
    /// the buckets' (the least of three 5th percentiles of 20–30 answers each is an order
    /// statistic near zero: 48 µs for a 2.6 ms floor as `capacity_fifth` seed 2's workers came
    /// back, which read two waiting at 40 permits for 50 workers for the last 17 s).
    fn below_floor(&self) -> Option<Duration> {
        let floor = self.low_floor?;
        if !self.probed || self.probe.is_some() || self.since_probe < RT_BUCKETS {
            return None;
        }
        let (mean, _) = self.recent_low()?;
        let se = self.bucket_low_se()?;
        let below = floor.saturating_sub(mean);
        (mean.as_secs_f64() * self.c.probe_trigger < floor.as_secs_f64()
            && below.as_secs_f64() > STARTUP_SIGNIFICANCE * se.as_secs_f64())
        .then_some(mean)
    }

    /// The permits in service by Little's law on the queue (the limit less the queue the low
    /// RTs read), where the probe's depth comes from them rather than the BDP: the queue holds
    /// its set point (at most twice the target: a regime that has not moved), the last shallow
    /// probe found nothing new, and the window's BDP reads under [`CENSORED`] of them — min RT
    /// is a censored mean, and `probe_gain` × the BDP would probe at half the limit (the clamp)
    /// where 15 % under the workers drains them. Before any probe has measured too: min RT is
    /// then the first buckets' mean RT, censored the same way (their short requests answer
    /// first), and a first probe at half the limit under a load below capacity stalled behind
    /// the slow requests of a surge while callers were turned away (`two_speeds_0.8x`,
    /// twentieth round).
    fn in_service(
        &self,
        queue: Option<f64>,
        target: f64,
        min_rt: Duration,
        faster: bool,
    ) -> Option<f64> {
        let q = queue.filter(|&q| q <= 2.0 * target)?;
        if faster || self.probe_full {
            return None;
        }
        let in_service = (self.base as f64 - q).max(0.0);
        let bdp = self.pass_rate(true) * min_rt.as_secs_f64();
        (bdp < CENSORED * in_service).then_some(in_service)
    }

    /// Each of the last [`RT_BUCKETS`] buckets, pinned and none held down by a probe, had an
    /// answer count every permit of the limit busy at once, more than the workers last counted
    /// exact: in a pool served first come, first served no answer counts more workers than
    /// there are, so the workers are more than the limit and nobody waits inside, whatever the
    /// low RTs read (a stray count one over the workers comes in one bucket, not three in a
    /// row). After the workers came back in a probe or its tail (`capacity_fifth`, 50 workers
    /// back from 10 under a probe at 8–10 permits), the limit it returns to is the old pool's
    /// count plus its target queue: every answer counts it, the queue estimate reads noise of
    /// 0.5–1.9 requests against a target of 1–2 and the steering holds the limit, while the
    /// pass rate at that limit stays under the bar the old pool's busiest buckets set, so
    /// neither the growth nor [`Self::workers_came_back`] sees them (seed 19: restarted
    /// 1.4 s after the return, where 0.8 s without the probe).
    fn count_at_the_limit(&self) -> bool {
        let Some(m) = self.last_exact else {
            return false;
        };
        // An answer that counts more permits than the limits held is no count (a caller that
        // does not give the permits out).
        let held = (self.recent_limits.iter().copied()).fold(self.base, usize::max);
        let counts = |b: &Bucket| b.counted >= self.base && b.counted > m && b.counted <= held;
        let mut recent = self.closed.iter().rev().take(RT_BUCKETS);
        self.knee_found
            && self.delay_restart.is_none()
            && self.base > m
            && self.closed.len() >= RT_BUCKETS
            && recent.all(|b| !b.held_down && b.pinned() && counts(b))
    }

    /// Workers came back, seen in the pass rate: the last [`RT_BUCKETS`] buckets, each pinned
    /// and none held down by a probe (a probe's tail, while its last answers are followed, is
    /// at the limit: `capacity_fifth` seed 30, a probe that let go 0.6 s after the return held
    /// 13 permits for 50 workers another second), passed more than `capacity` (the pass rate last measured while the
    /// resource queued) over their span, by [`CAME_BACK_SIGNIFICANCE`] standard errors of that
    /// count (Poisson), at a mean RT within [`SAME_REGIME`] of min RT. The RT tells it from a
    /// resource that got faster (a slower service's end, a delay's end): there the same permits
    /// answer sooner, here more permits answer as soon. Only in the regime the resource served
    /// its most in, judged as a probe judges a restart: min RT within `probe_trigger` of the
    /// one then, either way (two probes' censored means of one service differ by more than
    /// [`SAME_REGIME`]: `capacity_fifth` seed 23 read 54.4 ms at the start and 42.2 ms while 10
    /// workers served, the test never fired, and × 1.1 a bucket took 12 permits to 40 in
    /// 3.3 s). And only below what that most serves at min RT (Little's law, plus the target
    /// queue): the slow start's cap, returned. In a delay's regime (`network_delay_spike`, 250 ms for 50 ms) the limit below
    /// the knee passes the rate test too, but the slow start capped at 1000 answers a second ×
    /// 250 ms went past the knee on the delay's late answers and left 150 permits for 50 workers
    /// after it (seeds 16–30, −0.02 to −0.09): that regime has its own restarted slow start.
    /// And only where the answers count more workers busy at once than when `capacity` was
    /// measured (`counted_then`), which far under the knee stands in for Little's law at the
    /// limit.
    fn workers_came_back(&self, min_rt: Duration) -> Option<usize> {
        let (served, then) = self.served_most;
        let most = served * min_rt.as_secs_f64() * (1.0 + self.c.queue_target);
        let cap = (most + MIN_QUEUE_TARGET).ceil() as usize;
        let recent: Vec<&Bucket> = self.closed.iter().rev().take(RT_BUCKETS).collect();
        let trigger = self.c.probe_trigger;
        if !self.knee_found
            || !(1.0 / trigger..=trigger).contains(&ratio_of(min_rt, then))
            || cap <= self.base
            || self.capacity <= 0.0
            || recent.len() < RT_BUCKETS
            || recent.iter().any(|b| b.held_down || !b.pinned())
        {
            return None;
        }
        let same_rt = self
            .recent_rt(RT_BUCKETS)
            .is_some_and(|rt| SAME_REGIME.contains(&ratio_of(rt, min_rt)));
        let (n, t) = recent.iter().fold((0.0, 0.0), |(n, t), b| {
            (n + b.passes as f64, t + b.span.as_secs_f64())
        });
        // Far under that knee (at most half of it), the bar is the busiest run of as many
        // buckets as the test counts: the busiest single bucket is 1.4-1.6 x what 10 workers
        // serve in `capacity_fifth` (one bucket's noise), and 13-15 permits for 50 workers could
        // not pass it (the return turned on a coin flip).
        let bar = if cap >= 2 * self.base {
            self.busiest_run
        } else {
            self.capacity
        };
        // No lower than what the workers a fall read off the count left serve ([`Self::fell_to`]).
        let bar = bar.max(self.fell_bar);
        let expected = bar * t;
        let clears = |count: f64| count - expected > CAME_BACK_SIGNIFICANCE * expected.sqrt();
        // Every permit busy at once in each bucket ([`Self::count_at_the_limit`], which steps
        // the limit there), two or more past the workers last counted exact: more workers,
        // whatever the bar says. The bar is re-measured from the returned pool's first buckets
        // wherever their noise reads a queue (`capacity_fifth` seed 19, 13 permits for 50
        // workers in a probe's tail: the bar 257 answers a second, the count when it was
        // measured 13, the restart 1.4 s after the return), and no pool of that many workers
        // gives such a count, not even a stray's one over, in three buckets in a row.
        if same_rt && self.count_at_the_limit() && self.base >= self.last_exact.unwrap_or(0) + 2 {
            return Some(cap);
        }
        // The workers the answers count busy at once: more than counted when the bar was
        // measured, or the pool is the one that served it. In a pool served first come, first
        // served no answer counts more than the workers, so 13 permits for 10 count 10 at most
        // and 13 for 50 count 13 (`capacity_fifth`: 11-13 permits for 10 workers pass a bar
        // of ~200 a second at 50 ms, and one lucky run restarted the slow start in the fall,
        // 55 times in seeds 1-250, seven of its falls past 5 s). A service with less spread than an
        // exponential one counts under its workers, but as far under in both pools. An answer
        // that counts more permits than the limit held is no count (a caller that does not
        // give the permits out): the pass rate alone then.
        let most = recent.iter().map(|b| b.counted).max().unwrap_or(0);
        let held = self
            .recent_limits
            .iter()
            .copied()
            .fold(self.base, usize::max);
        // And only where the limits held could count past what was counted then: after a
        // fall shorter than the window, `counted_then` still holds the pool before it (50),
        // which no answer at the 17–21 permits left can pass, and the count would hold the
        // return off until the window turned over (review 72).
        let counts = most <= held && self.counted_then <= held;
        if counts && most <= self.counted_then {
            return None;
        }
        // Little's law at the limit: what it passes at min RT must itself clear the bar, or
        // the old workers, held at about the limit, pass as much (11 permits for 10 workers).
        // Far under the knee the count has told them apart: not asked there.
        let can = self.base as f64 / min_rt.as_secs_f64().max(1e-9) * t;
        let counted = counts && cap >= 2 * self.base;
        (same_rt && (counted || clears(can)) && clears(n)).then_some(cap)
    }

    /// The last standing-queue drain drained a delay outside the resource, not a queue inside
    /// it: within three estimates of it, the recent low RT reads what it read before the drain
    /// (within [`SAME_REGIME`]), `probe_trigger` × the floor or more, while the pass rate fell
    /// with the limit (below halfway between the rate before and that rate × the share of the
    /// limit the drain left). A queue's wait falls with the permits drained while the workers
    /// stay busy; a delay's stays, and the pass rate is the limit over it. The pass-rate test
    /// of the drain itself passes for either while the limit is pinned (`network_delay_spike`
    /// seed 7: 56 → 28 → 14 → 7 permits after a probe that fell on the delay's onset measured
    /// nothing, 142 answers a second through the delay).
    fn drained_a_delay(&self) -> bool {
        let (Some((at, before, rate_before, share)), Some((low, rate)), Some(floor)) =
            (self.drain_low, self.recent_low(), self.floor())
        else {
            return false;
        };
        let ratio = ratio_of(low, before);
        self.closed_total <= at + 3 * RT_BUCKETS as u64
            && SAME_REGIME.contains(&ratio)
            && low.as_secs_f64() > self.c.probe_trigger * floor.as_secs_f64()
            && rate < (1.0 + share) / 2.0 * rate_before
    }

    /// The capacity last measured while the resource queued ([`Self::regime_rate`]), where that
    /// was in min RT `old`'s regime: what the resource served before a delay outside came.
    fn rate_before(&self, old: Duration) -> Option<f64> {
        self.regime_rate
            .filter(|&(_, then)| SAME_REGIME.contains(&ratio_of(then, old)))
            .map(|(served, _)| served)
    }

    /// The slow start restarts on a delay outside (read by a probe, [`Self::finish_probe`], or
    /// by a drain, [`Self::restart_on_drained_delay`]): `served` answers a second before it at
    /// min RT `old`, the regime before it (`before_delay`) for its end to bring back, and its
    /// cap until it lapses. Returns that cap: the capacity before at the new RT `rt` (Little's
    /// law) and the target queue.
    fn restart_on_delay(
        &mut self,
        now: Nanos,
        served: f64,
        old: Duration,
        rt: Duration,
        before_delay: (Option<Duration>, Option<Duration>, Option<(Duration, u64)>),
    ) -> f64 {
        self.delay_restart = Some((served, old));
        self.before_delay = before_delay;
        self.delay_lapses = now + self.at_least_buckets(self.c.probe_interval * 4, 50);
        served * rt.as_secs_f64() * (1.0 + self.c.queue_target)
    }

    /// The last standing-queue drain read a delay outside ([`Self::drained_a_delay`]): the
    /// slow start restarts on it as after a probe that read one ([`Self::finish_probe`]),
    /// without the probe. The drain was the probe: it halved the permits, the pass rate fell
    /// with them and the low RT stayed, which a queue inside does not do (its wait falls while
    /// the workers stay busy). The new regime is read off the buckets after the drain: the
    /// floor is their low RT, min RT the old one plus the low RT's rise over the old floor, and
    /// the cap the capacity before the delay at that RT (Little's law). Only where that
    /// capacity was measured in min RT's regime; `false` where nothing restarted.
    fn restart_on_drained_delay(&mut self, now: Nanos) -> bool {
        if self.probe.is_some() || self.delay_restart.is_some() {
            return false;
        }
        let (Some(old), Some(floor), Some((low, _))) =
            (self.min_rt, self.low_floor, self.recent_low())
        else {
            return false;
        };
        let Some(served) = self.rate_before(old) else {
            return false;
        };
        let rt = old + low.saturating_sub(floor);
        let before_delay = (self.low_floor, self.probe_mid, None);
        let cap = self.restart_on_delay(now, served, old, rt, before_delay);
        self.low_floor = Some(low);
        self.probe_mid = self.mid_of_window().or(self.probe_mid);
        self.confirmed = 0;
        self.next_probe = now + self.at_least_buckets(self.c.probe_interval, 50);
        let keep = self.closed.len().saturating_sub(1);
        self.closed.drain(..keep);
        self.regime_counted = 0;
        self.knee_found = false;
        self.knee = None;
        self.restarted = true;
        self.restart_cap = (cap > 0.0).then(|| (cap + MIN_QUEUE_TARGET).ceil() as usize);
        self.min_rt = Some(rt);
        self.drain_low = None;
        self.since_probe = 0;
        true
    }

    /// Periodic probes are spaced out only while the resource looks as it did at the last
    /// probe: a pass rate that moved out of [`SAME_REGIME`] of the one before it (workers came
    /// or went; a floor measured before may be a queued one) makes the next probe due one
    /// probe interval after the last, as if none had been spaced out.
    fn unchanged_since_probe(&mut self, now: Nanos) {
        let busy = self.closed.iter().filter(|b| b.saturated && !b.probed);
        if self.confirmed == 0 || self.probe.is_some() || busy.clone().next().is_none() {
            return;
        }
        let (at, rate) = self.last_probe;
        if !SAME_REGIME.contains(&(Self::rate_of(busy) / rate.max(1e-9))) {
            self.confirmed = 0;
            let due = at + self.at_least_buckets(self.c.probe_interval, 50);
            self.next_probe = self.next_probe.min(due.max(now));
        }
    }

    /// Whether the fresh drops (of requests that started under a limit no higher than the one
    /// they were answered under) of the last buckets reach `drop_fraction` of their samples, counted
    /// over the fewest recent buckets that hold enough samples to resolve that fraction (100
    /// for 1 %): in a bucket of 60 answers one late answer is 1.7 %, and a heavy-tailed service
    /// whose own tail passes the deadline once in 2500 requests backed off every few seconds.
    ///
    /// Against the share of drops the resource shows with no queue ([`CalmDrops`]): a service
    /// that fails 5 % of requests at any load backs off only when more fail, and the window
    /// then holds more samples, enough to tell.
    ///
    /// Not judged on fewer samples than resolve `drop_fraction` (or than a full window of
    /// `min_samples` buckets holds, where that is fewer), unless the late drops there, fresh
    /// or not, are already more than the fraction allows of that many: a window cut short at a
    /// new regime held one answer of the slower service's own tail past the deadline in 75
    /// samples, "1.3 %", and the back-off held the limit at 42 for 50 workers for 1.6 s
    /// (`latency_spike` seed 9); fifteen late answers in 49 samples are overload however few
    /// (`few_slow_workers_3x`). Nor where the window's late drops are no more than
    /// [`FAILURE_TAIL`] of its drops, the rest refused (sooner than the median answer):
    /// failures that mostly come fast are the service's own, and their slowest few are their
    /// tail, not answers kept past a deadline (`flapping_failures_1.5x`: 30 % failing at a
    /// fifth of their service time backed off at each burst's onset on 2–4 late drops against
    /// 25–48 refused in 100–136 samples, before the background share had learnt them). Late
    /// drops past that tail back off however many fail fast beside them (review 59: with "no
    /// more late than refused", 35 late and 40 refused in every 100 answers never backed off).
    fn dropping(&self) -> bool {
        let fraction = self.c.drop_fraction;
        let enough = self.calm.window(fraction).ceil();
        // Fresh late drops (the back-off's evidence), every late one, and every drop.
        let (mut fresh, mut late, mut drops, mut samples) = (0u64, 0u64, 0u64, 0u64);
        for b in self.closed.iter().rev() {
            fresh += b.fresh_drops;
            late += b.late_drops;
            drops += b.drops;
            samples += b.passes + b.drops;
            if samples as f64 >= enough {
                break;
            }
        }
        let resolved = (1.0 / fraction).min((self.c.pass_buckets * self.c.min_samples) as f64);
        (samples as f64 >= resolved || late as f64 > fraction * resolved)
            && late as f64 > FAILURE_TAIL * drops as f64
            && self.calm.overload(fresh, samples, fraction)
    }

    /// The queue aimed for before the knee: `queue_target` of the limit, and at least
    /// [`MIN_QUEUE_TARGET`] requests.
    fn starting_queue_target(&self) -> f64 {
        (self.c.queue_target * self.base as f64).max(MIN_QUEUE_TARGET)
    }

    /// Counts `b`'s drops into the background share if the resource kept no queue of its own
    /// in it (its low RT over the floor, × its pass rate, under the starting queue target) and
    /// no probe was under way. Its late drops, fresh or not: the share is how often the
    /// resource fails, whatever limit the failed requests started under (fresh ones alone
    /// left out most of a background while the limit fell, and the back-offs on it walked
    /// the limit down: review 31).
    fn note_calm(&mut self, b: &Bucket) {
        let Some(floor) = self.floor() else {
            return;
        };
        let target = self.starting_queue_target();
        let calm = !b.probed && b.queue_over(floor).is_some_and(|q| q < target);
        if calm {
            self.calm.add(b.late_drops, b.passes + b.drops);
        }
    }

    /// The limit in force at `t` (as far back as the log goes; before it, the oldest limit it
    /// remembers).
    fn limit_in_force(&self, t: Nanos) -> usize {
        let mut limit = self.limit;
        for &(from, before) in self.limit_log.iter().rev() {
            if t >= from {
                return limit;
            }
            limit = before;
        }
        limit
    }

    /// The lower of the limit in force at `t` and the one before it (as far as the log
    /// reaches back): a request that started just after a raise, on a permit the raise made,
    /// found every permit of the old limit taken.
    fn limit_at(&self, t: Nanos) -> usize {
        let mut limit = self.limit;
        for &(from, before) in self.limit_log.iter().rev() {
            if t >= from {
                return limit.min(before);
            }
            limit = before;
        }
        limit
    }

    /// BBR's full-pipe test on the slow start, against the starting limit: once the limit has
    /// doubled from it, with demand filling every permit, the pass rate must have grown by
    /// `FULL_PIPE_GROWTH`; if not, the starting limit (returned) was already past the knee.
    /// By Little's law, a limit × 2 that brings no more throughput doubled the RT: the
    /// resource was queueing all along.
    fn full_pipe(&mut self, b: &Bucket) -> Option<usize> {
        if self.knee_found || self.restarted || !b.pinned() || self.probe.is_some() {
            self.startup.clear();
            return None;
        }
        let initial = clamp(self.c.initial, self.c.min, self.c.max);
        let limit = self.base;
        if limit == initial {
            // Only a bucket in a steady state: the requests it saw finish account for every
            // permit (Little's law, `in flight = rate × RT`). Right after the start, the fast
            // requests of a two-speed service finish first and overstate the rate.
            let in_flight = b.rt_sum.as_secs_f64() / b.span.as_secs_f64().max(1e-9);
            if in_flight >= STEADY * limit as f64 {
                self.startup.push(b.rate());
            }
            return None;
        }
        let rate = self.startup.iter().sum::<f64>() / self.startup.len().max(1) as f64;
        (!self.startup.is_empty() && limit >= 2 * initial && b.rate() < FULL_PIPE_GROWTH * rate)
            .then_some(initial)
    }

    fn start_probe(&mut self, now: Nanos, short_rt: Option<Duration>, limit: usize, shallow: bool) {
        self.probe_full = false;
        self.probe_ref = match (self.older_regime(), self.slow_ref) {
            (Some(now), Some(kept)) if kept.0 < now.0 => Some(kept),
            (now, kept) => now.or(kept),
        };
        let spacing = 1u32 << self.confirmed.min(MAX_SPACING);
        self.next_probe = now + self.at_least_buckets(self.c.probe_interval, 50) * spacing;
        // Long enough for a few round trips even when the resource has slowed down.
        let shortest = self.at_least_buckets(self.c.probe_duration, 2);
        let span = short_rt.map_or(shortest, |rt| {
            let enough = rt.mul_f64(self.c.probe_samples as f64 / limit.max(1) as f64);
            shortest
                .max(rt.saturating_mul(3))
                .max(enough.min(shortest.saturating_mul(5)))
        });
        let end = now + span;
        let unprobed = self.closed.iter().rev().filter(|b| !b.probed);
        let rate = match Self::rate_of(unprobed.take(RT_BUCKETS)) {
            0.0 => Self::rate_of(self.closed.iter().rev().take(RT_BUCKETS)),
            r => r,
        };
        // The window's pass rate (its saturated buckets outside probes), less noisy than the
        // last few buckets': the spaced-out probes compare against it.
        let busy = self.closed.iter().filter(|b| b.saturated && !b.probed);
        let window = match Self::rate_of(busy) {
            0.0 => rate,
            r => r,
        };
        self.last_probe = (now, window);
        let earliest = now + short_rt.map_or(shortest, |rt| rt * 3).min(span);
        // The blind probe before, at this depth (its censoring is the depth's), lends its
        // answers; a shallow probe or a check measures something else, and leaves them to the
        // next probe at the depth (taken and dropped, a 3× slower service's first full probe,
        // blind by a few answers, lent none to its second across the shallow one between, and
        // the regime went unmeasured until a third: `latency_spike` seed 1, 7 s).
        let limit = clamp(limit, self.c.min, self.c.max);
        let pool = self.blind_answers.take_if(|(depth, _)| {
            let r = limit as f64 / (*depth).max(1) as f64;
            !shallow && SAME_REGIME.contains(&r)
        });
        let carried = pool.as_ref().map_or(0, |(_, b)| b.passes);
        self.probe = Some(Probe {
            rate,
            earliest,
            decided: false,
            shallow,
            check: false,
            rt_at_start: short_rt,
            carried,
            start: now,
            end,
            done: end + span,
            limit,
            from_start: false,
            restart_rate: None,
            at_count: false,
            at_busy: false,
        });
        self.probe_rt = match pool {
            Some((_, mut answers)) => {
                answers.span = span;
                answers
            }
            None => Bucket::new(span),
        };
    }

    /// A probe's slower reading (a mean RT `ratio` × min RT) is a delay outside the resource:
    /// its low RT rose over the floor by as much as its mean RT rose over min RT (within
    /// [`SAME_REGIME`]), and by three of its standard errors. A delay adds the same wait to
    /// every request; a slower service multiplies them, and a queue adds less to the low end
    /// than to the mean (a 3× slower service read 0.15–0.18, a fifth of the workers with the
    /// probe above them 0.56–0.69; 200 ms outside, 0.96–1.07).
    fn delay_outside(&self, ratio: f64, low: Option<Duration>) -> bool {
        let (Some(min_rt), Some(floor), Some(low), Some(se)) =
            (self.min_rt, self.low_floor, low, self.probe_rt.low_se())
        else {
            return false;
        };
        reads_a_delay(min_rt, floor, low, ratio, se)
    }

    /// The `n` answers of the probe under way read a delay outside the resource, as
    /// [`Self::delay_outside`] judges a probe's reading (its low RT rose over the floor by as
    /// much as its mean RT over min RT, a mean `probe_trigger` × min RT or more), where the
    /// capacity before it was measured in min RT's regime: the restart on it needs no more.
    /// Such a probe stops at once rather than following its answers for as long again: the
    /// cap comes from the low RT's rise, which the long answers do not move (the probe after
    /// `network_delay_spike`'s onset held 1 s and followed 1 s more).
    fn delay_so_far(&mut self, n: u64) -> bool {
        let Some((_, then)) = self.regime_rate else {
            return false;
        };
        let (Some(min_rt), Some(floor), Some(mean), Some((low, se))) = (
            self.min_rt,
            self.low_floor,
            mean(self.probe_rt.rt_sum, n, 1),
            self.probe_rt.low_so_far(self.c.min_samples),
        ) else {
            return false;
        };
        let ratio = ratio_of(mean, min_rt);
        SAME_REGIME.contains(&ratio_of(then, min_rt))
            && ratio > self.c.probe_trigger
            && reads_a_delay(min_rt, floor, low, ratio, se)
    }

    /// A probe's slower reading (a mean RT `ratio` × min RT) is a wait added to each request —
    /// a queue it could not drain, or a delay outside the resource — and not a slower service,
    /// which multiplies every RT alike: its low RT rose (over the floor) more than twice as
    /// much as its mean RT (over min RT), by three of its standard errors. Only for a probe
    /// that is no check itself and that started on the old regime's RTs (the recent mean RT
    /// within [`SAME_REGIME`] of min RT): the change came while it held, and it may have held
    /// the limit above the workers left (`capacity_halves` seed 8: 42 permits for 25 workers
    /// from the moment they halved, a queued floor of 38.7 ms taken for a new regime's, 11 s
    /// to converge). A probe set off by RTs already slower started in the new regime and reads
    /// it as it is: checking a delay's (`network_delay_spike`) cost 2.2 s at a quarter of the
    /// knee before the restart. Unless that reading would restart the slow start and most of
    /// its rise, not all, is a wait: then it is the queue of a probe held above the workers left.
    fn wait_added(&self, probe: &Probe, ratio: f64, low: Option<Duration>) -> bool {
        let (Some(min_rt), Some(floor), Some(low), Some(se)) =
            (self.min_rt, self.low_floor, low, self.probe_rt.low_se())
        else {
            return false;
        };
        let started_in_old = probe
            .rt_at_start
            .is_some_and(|rt| SAME_REGIME.contains(&ratio_of(rt, min_rt)));
        // Or one that started in the new regime and reads it more than `probe_trigger` slower
        // (a restart), where most of the mean's rise is a wait in front of every request (the
        // low RT rose at least half as much) but not all of it, as a delay's is
        // (`delay_outside`). A queue held above the workers left does that: the waiting adds
        // to every RT, contention slows the service on top. The probe a drop to a fifth set off
        // at half the limit (28 permits for 10 workers) read 283 ms for 50 ms, the low RT +149
        // ms and the mean +234, and the slow start restarted on it held 25–37 permits for 10
        // workers for 26 s (`capacity_fifth` seed 45; seed 53, 21 permits, 16 s). A 3× slower
        // service behind a 300 ms timeout read 0.30 as much (its slow answers cut off), and a
        // check there walked the limit to 1.
        let rose = ratio_of(low, floor) - 1.0;
        let added = low.saturating_sub(floor).as_secs_f64();
        let mean_added = min_rt.as_secs_f64() * (ratio - 1.0);
        let queued_restart = ratio > self.c.probe_trigger
            && added >= mean_added / 2.0
            && !self.delay_outside(ratio, Some(low));
        !probe.check
            && (started_in_old || queued_restart)
            && rose > 2.0 * (ratio - 1.0)
            && added > STARTUP_SIGNIFICANCE * se.as_secs_f64()
    }

    /// The root mean square of the recent buckets' low-RT standard errors: how precisely one
    /// bucket reads the low RT the queue estimate compares with the floor.
    fn bucket_low_se(&self) -> Option<Duration> {
        let ses: Vec<f64> = self
            .closed
            .iter()
            .rev()
            .take(RT_BUCKETS)
            .filter_map(|b| b.low_se())
            .map(|se| se.as_secs_f64().powi(2))
            .collect();
        (!ses.is_empty())
            .then(|| Duration::from_secs_f64((ses.iter().sum::<f64>() / ses.len() as f64).sqrt()))
    }

    /// A probe that holds the limit down ends as soon as its floor reads as precisely as a
    /// bucket's low RT (what the queue estimate compares with it), at any rate: at a few
    /// answers a second the 100 answers it used to wait for took 10–30 s of a held limit.
    /// Its answers are then followed for as long again, so the slow ones are not left out.
    fn probe_decided(&mut self, now: Nanos) {
        let Some(p) = self.probe.filter(|p| now < p.end && now >= p.earliest) else {
            return;
        };
        let n = self.probe_rt.passes - p.carried;
        let every = self.c.min_samples.max(1) as u64;
        if !n.is_multiple_of(every) {
            return;
        }
        let (Some(bar), Some((_, se))) = (
            self.bucket_low_se(),
            self.probe_rt.low_so_far(self.c.min_samples),
        ) else {
            return;
        };
        // As many answers as a recent bucket, too: the standard error read off a dozen RTs
        // (the gap between the two smallest) is itself no reading.
        let recent = self.closed.iter().rev().take(RT_BUCKETS);
        let (count, buckets) = recent.fold((0, 0), |(c, k), b| (c + b.passes, k + 1));
        if se > bar || n * buckets.max(1) < count {
            return;
        }
        // And only once it has drained: its pass rate (the answers so far, and the permits
        // still out on requests it started) fell below the buckets' before it, so its workers
        // idled and nothing it measured waited. A probe held above the workers (half the limit
        // after a drop to a fifth) drains nothing early and is held as long as before.
        let held = now - p.start;
        let rate = (n + p.limit as u64) as f64 / held.as_secs_f64().max(1e-9);
        // A probe at the workers the mean RTs read busy ([`Self::probe_at_busy`]) loses a
        // permit of pass rate in ten at most, which its noise hides: it lets go once it holds
        // as many answers as a probe that never drained needs (`probe_samples` ÷ 2).
        let answered = p.at_busy && n >= self.c.probe_samples as u64 / 2;
        if rate >= (1.0 + self.c.probe_gain) / 2.0 * p.rate && !answered {
            return;
        }
        // And only when it reads the regime it expected: its mean RT so far within the same
        // regime of min RT. One that reads a new regime (a capacity drop, a slower service)
        // holds as long as before: a dozen answers are no evidence of a change, and the pass
        // rate it is compared with above may be the old capacity's. Unless it reads one more
        // than `probe_trigger` slower, once drained: the mean so far is censored (the short
        // answers come back first), which only lowers it, and a probe that held its whole span
        // after a delay came (2.1 s, then as long again measuring) restarted the slow start
        // 5 s after the change (`network_delay_spike`).
        let trigger = self.c.probe_trigger;
        let same = self
            .min_rt
            .zip(mean(self.probe_rt.rt_sum, n, 1))
            .is_some_and(|(old, new)| {
                let ratio = ratio_of(new, old);
                SAME_REGIME.contains(&ratio) || ratio > trigger
            });
        if !same {
            return;
        }
        self.probe = Some(Probe {
            end: now,
            done: if self.delay_so_far(n) {
                now
            } else {
                now + held
            },
            decided: true,
            ..p
        });
        self.move_to(now, self.base);
    }

    /// Follows the demand-led start: a leap, or the knee it found (as the slow start's drain:
    /// the knee, min RT from Little's law at the starting limit, no cut until the buckets are
    /// taken after it, and the low RTs of the overshoot left out of the floor).
    fn follow_demand(&mut self, now: Nanos, verdict: Verdict) {
        let (min, max) = (self.c.min, self.c.max);
        let to = match verdict {
            Verdict::Wait | Verdict::Done => return,
            // Back to the limit before the leap, plus the drain's margin, while the knee is
            // read: the leap's limit stays the base, so the knee may land above this.
            Verdict::Back(from) => {
                let to = (self.drained_to(from as f64).ceil() as usize).min(self.limit);
                self.move_to(now, clamp(to, min, max));
                return;
            }
            Verdict::Leap(to) => clamp(to, min, max),
            Verdict::Knee {
                in_service,
                from,
                rt,
            } => {
                // The queue the overshoot left inside slows the workers that serve it, so the
                // answer rate may show fewer in service than the limit judged clear before the
                // leap (a pool the size of the starting limit): the knee is that limit then,
                // and the steering comes down to it from the drain's usual margin above, on the
                // floor the starting limit's answers measured (unqueued, by the rank test).
                // From below, its × 1.1 step took 20 permits for 20 workers to 22, and its dead
                // band held them there.
                // Below that limit where the pinned requests' count read fewer in service and
                // could speak at the starting limit ([`DemandStart::counted_below`]): behind a
                // delay outside 10 workers, a leap the rate pulled back left 23 permits
                // standing 1–4 s where the count read 10–14 (`demo_busy_2x`).
                // Either way the steering reads on from that floor, the one the knee was read
                // against: the buckets' own after it is the least of their 5th percentiles,
                // which reads low (0.7 ms for a service whose 5th percentile is 2.6 ms) and held
                // 47 permits for 50 workers on a phantom queue until the first probe at 5 s.
                self.low_floor = self.demand.floor();
                let knee = if in_service <= from as f64 {
                    self.drained_to(self.demand.counted_below(from).unwrap_or(from as f64))
                } else {
                    self.drained_to(in_service)
                };
                let knee = clamp((knee.ceil() as usize).min(self.base), min, max);
                self.knee_found = true;
                self.knee = Some(knee);
                self.min_rt = Some(rt);
                self.drained_at = Some(self.closed_total);
                self.drained_when = None;
                self.since_probe = 0;
                self.lows.clear();
                self.mids.clear();
                self.next_probe = self
                    .next_probe
                    .max(now + self.at_least_buckets(self.c.probe_interval, 50) / 2);
                knee
            }
        };
        self.base = to;
        self.move_to(now, to);
    }

    /// Puts the limit in force at `to`, held under the cap learnt from fast failures, at
    /// `now`: logged where it changed.
    fn move_to(&mut self, now: Nanos, to: usize) {
        let to = to.min(self.shed_cap());
        if to != self.limit {
            self.log_limit(now, self.limit);
            self.limit = to;
        }
    }

    /// Remembers that the limit changed at `at` from `before`.
    fn log_limit(&mut self, at: Nanos, before: usize) {
        self.limit_log.push_back((at, before));
        if self.limit_log.len() > LIMIT_LOG {
            self.limit_log.pop_front();
        }
    }

    /// The limit, held at the cap a resource that sheds when full enforces, if one is known.
    /// The steering goes on underneath, within its own bound (`cap.rs`).
    fn capped(&mut self, now: Nanos) -> usize {
        let cap = self.shed_cap();
        if self.limit > cap {
            self.log_limit(now, self.limit);
            self.limit = cap;
        }
        self.base = self.base.min(self.shed.base_bound().max(self.c.min));
        self.limit
    }

    /// The most the limit in force may be by the cap learnt from fast failures (at least
    /// `min`; `usize::MAX`: no bound).
    fn shed_cap(&self) -> usize {
        self.shed.limit_bound().max(self.c.min)
    }

    /// Without a queue in the limiter (callers turned away at once, and fewer waited than
    /// half the answers), the limit a load below capacity needs: its Poisson peaks cannot wait
    /// for a permit, so the limit leaves room for [`PEAK_ROOM`] standard deviations of the
    /// demand's concurrency (arrivals a second × min RT, the callers turned away counted), and
    /// the resource's own queue takes the rare peak past its workers.
    ///
    /// Measured on each bucket that turned callers away, and kept through the buckets that
    /// turned none away (the room is why they did not: held at the knee between refusals, 50
    /// workers at 0.8 of their capacity lost 1–2 %). It stands over the steering's cuts: the
    /// queue a peak leaves inside the resource is the only wait it can have (cut back to the
    /// knee whenever a peak queued, the same load lost 0.6–0.7 %, now 0.3–0.4 %). Dropped
    /// once a bucket is pinned, callers wait in the limiter, or the demand reaches the knee:
    /// overloaded, the steering holds the knee as with a queue — as far as the low RTs show
    /// the queue: in front of a near-fixed service they do not, and the limit sits above the
    /// workers (`no_queue_fixed_2x`, review 30). (Room there let the limit
    /// swing a step past it: 2–3 % of the goodput in `two_speeds_2x` and `heavy_tail_3x`,
    /// where a queue timeout of 0.5–1 s against a slow mode's RT turns nearly every caller
    /// away at once by its predicted wait.) Not applied during a probe, which holds the limit
    /// down.
    fn room_without_queue(&mut self, b: &Bucket, min_rt: Duration) -> Option<f64> {
        if self.probe.is_some() {
            return None;
        }
        let queued = b.waited > 0 && !b.turned_away_at_once();
        if queued || b.pinned() {
            self.room = None;
        } else if b.turned_away_at_once() {
            let arrivals =
                (b.passes + b.drops + b.turned_away) as f64 / b.span.as_secs_f64().max(1e-9);
            let demand = arrivals * min_rt.as_secs_f64();
            self.room = (!self.knee.is_some_and(|knee| demand >= knee as f64))
                .then(|| demand + PEAK_ROOM * demand.sqrt());
        }
        self.room
    }

    /// A probe holding the limit down that admitted more than the buckets before it passed
    /// (by [`DEEPER_SIGNIFICANCE`] standard errors of that count) stands above the knee: the
    /// permits it took were waiting, not in service (a delay outside the resource would have
    /// taken its pass rate down with them). Where its own low RT also reads a queue — over the
    /// floor, or over none where the floor is stale (its low RT under the floor ÷
    /// `probe_trigger` by three standard errors: a delay that went away, `network_delay_spike`)
    /// or unsure — a probe below it starts at once: at the permits it kept in service (its
    /// limit less that queue) × `probe_gain`, at least half its limit, and the limit it
    /// returns to comes down to those permits plus the drain's margin. A floor it read under
    /// the stale one is taken, as a bound from above. The next probe may go deeper again,
    /// against this one's pass rate; min RT waits for a probe to finish (a mean so far leaves
    /// out the slow answers).
    ///
    /// After the delay, the probes held 79–160 permits for 50 workers, each returning to a
    /// limit above the knee before the floor was re-based (three probes in a row, 8 s at two
    /// thirds of capacity: *Thirty-second round*).
    fn deeper_probe(&mut self, now: Nanos) -> Option<usize> {
        let p = self.probe.filter(|p| now < p.end)?;
        if !self.probed || p.shallow || p.check {
            return None;
        }
        let floor = self.low_floor?;
        let rate = self.admitted_more(&p, now)?;
        let (low, se) = self.probe_rt.low_so_far(self.c.min_samples)?;
        let stale = self.floor_unsure
            || (low.as_secs_f64() * self.c.probe_trigger < floor.as_secs_f64()
                && floor.saturating_sub(low).as_secs_f64()
                    > STARTUP_SIGNIFICANCE * se.as_secs_f64());
        let from = if stale { Duration::ZERO } else { floor };
        let queue = low.saturating_sub(from).as_secs_f64() * rate;
        let noise = se.as_secs_f64() * rate;
        if queue
            <= self
                .starting_queue_target()
                .max(STARTUP_SIGNIFICANCE * noise)
        {
            return None;
        }
        if stale {
            self.low_floor = Some(low.min(floor));
            self.floor_unsure = true;
        }
        let in_service = p.limit as f64 - queue;
        let knee = self.drained_to(in_service);
        let knee = clamp((knee.ceil() as usize).min(p.limit), self.c.min, self.c.max);
        self.base = self.base.min(knee);
        self.knee = self.knee.map(|k| k.min(knee));
        let depth = ((in_service * self.c.probe_gain) as usize)
            .clamp(p.limit / 2, p.limit.saturating_sub(1).max(1));
        self.probe = None;
        self.confirmed = 0;
        self.since_probe = 0;
        let mean = mean(
            self.probe_rt.rt_sum,
            self.probe_rt.passes,
            self.c.min_samples,
        );
        self.start_probe(now, mean, depth, false);
        if let Some(next) = self.probe.as_mut() {
            next.rate = rate;
            next.from_start = p.from_start;
        }
        self.probe_limit(now)
    }

    /// The rate at which the probe `p` under way admitted requests (its answers and the permits
    /// still out, over the time it held), once it has as many answers as a recent bucket (as
    /// `probe_decided` asks), where that is more than the rate before it gives by
    /// [`DEEPER_SIGNIFICANCE`] standard errors of the count (Poisson): the permits it took were
    /// waiting, not in service. A probe of a few dozen answers must admit half as many again,
    /// one of thousands a few per cent.
    fn admitted_more(&self, p: &Probe, now: Nanos) -> Option<f64> {
        let n = self.probe_rt.passes - p.carried;
        let recent = self.closed.iter().rev().take(RT_BUCKETS);
        let (count, buckets) = recent.fold((0, 0), |(c, k), b| (c + b.passes, k + 1));
        if n < self.c.min_samples as u64 || n * buckets.max(1) < count {
            return None;
        }
        let held = (now - p.start).as_secs_f64().max(1e-9);
        let admitted = (n + p.limit as u64) as f64;
        let expected = p.rate * held;
        (admitted - expected > DEEPER_SIGNIFICANCE * expected.sqrt()).then(|| admitted / held)
    }

    /// The delay outside that restarted the slow start ([`Self::delay_restart`]) went away:
    /// the bucket's shortest answer is shorter than every answer since the delay came, by the
    /// floor of the regime before it (once those answers are 2 × `probe_samples`: the least of
    /// that many is within the old floor of the delay itself but for a chance of 0.95^200).
    /// Every answer through a delay carries it whole; one that did not was not delayed. The
    /// low RT is no such test: at the delay's knee the workers keep a queue, and the answers
    /// that came back without the delay waited behind it and behind the delay's permits,
    /// which come back all at once and fill the workers' queue (the first buckets after the
    /// end read 174–189 ms against the delay's floor of 202 ms, the next 320–670 ms).
    ///
    /// The regime before the delay comes back whole: its min RT, floor and median, and its
    /// knee by Little's law (the capacity before the delay × its min RT, plus the target
    /// queue), where the limit goes at once. The steering then holds, as after a drain, until
    /// the estimate is taken from requests that started after it.
    ///
    /// Left to the probes, the end took 2–7 s from the delay's knee (190–270 permits for 50
    /// workers; `network_delay_spike`): the low RTs that fell through the stale floor
    /// re-based it on the transition's queued buckets (13–23 ms for a 2.5 ms service), and
    /// the steering walked down × 0.9 a bucket of a queued RT.
    fn delay_ended(&mut self, b: &Bucket) -> Option<usize> {
        let (served, service) = self.delay_restart?;
        // The second shortest answer: two that beat the delay, not one (a cached reply or a
        // fast path in the middle of a delay read as its end, and the old regime's knee of 55
        // came back for 250 permits' worth of delayed requests: review 45).
        let (Some(old_floor), Some(least)) = (self.before_delay.0, b.second) else {
            return None;
        };
        let through = self.before_delay.2;
        self.before_delay.2 =
            Some(through.map_or((least, b.passes), |(s, n)| (s.min(least), n + b.passes)));
        // Faster than every answer through the delay by the old regime's unqueued low end,
        // once they are enough for the shortest to be within that of the delay itself.
        let enough = 2 * self.c.probe_samples as u64;
        if through.is_none_or(|(s, n)| n < enough || least + old_floor >= s) {
            return None;
        }
        // What the answers that beat the delay still carry over the old regime's low end: more
        // than the old service's own time, and the delay eased (a path that partly recovered),
        // not ended. 200 ms → 100 ms left 120 ms for a service of 50 ms; the end of a delay,
        // 0–22 ms in `network_delay_spike` but in seed 8 (71 ms: the workers' queue the
        // delay's permits fill as they come back), which the eased cap (131) then holds
        // until the steering walks it down (1.8 s).
        let left = least.saturating_sub(old_floor);
        if left > service {
            return self.delay_eased(served, service + left, least, b.passes);
        }
        self.delay_restart = None;
        let mid = self.before_delay.1;
        Some(self.regime_back(served, service, old_floor, mid))
    }

    /// Puts back whole the regime a change interrupted (a delay outside, [`Self::delay_ended`];
    /// a slower service, [`Self::slowdown_ended`]): its min RT, floor and median, and its knee
    /// by Little's law on the capacity it `served` (never over the limit's base), where the
    /// limit goes at once; the steering then holds, as after a drain. Returns the knee.
    fn regime_back(
        &mut self,
        served: f64,
        min_rt: Duration,
        floor: Duration,
        mid: Option<Duration>,
    ) -> usize {
        let knee = self.drained_to(served * min_rt.as_secs_f64());
        let knee = clamp(
            (knee.ceil() as usize).min(self.base),
            self.c.min,
            self.c.max,
        );
        self.restart_cap = None;
        self.min_rt = Some(min_rt);
        self.low_floor = Some(floor);
        self.probe_mid = mid.or(self.probe_mid);
        self.floor_unsure = false;
        self.capacity = served;
        self.busiest_run = served;
        // No count stands for this bar: the change's answers counted its permits busy.
        self.counted_then = 0;
        self.knee_found = true;
        self.knee = Some(knee);
        self.base = knee;
        self.probe = None;
        self.confirmed = 0;
        self.drain_low = None;
        // The change's pass rates mislead, as at any change of regime.
        let keep = self.closed.len().saturating_sub(1);
        self.closed.drain(..keep);
        self.regime_counted = 0;
        self.drained_at = Some(self.closed_total);
        self.drained_when = None;
        self.since_probe = 0;
        knee
    }

    /// The slower service that restarted the slow start ([`Self::before_slower`]) is back to
    /// the regime before it: the bucket's second shortest answer is shorter than every answer
    /// since the restart by `probe_trigger` (the factor the restart was read past), once those
    /// are 2 × `probe_samples`, and within [`SAME_REGIME`] of the old floor. The regime before
    /// comes back whole, as after a delay's end ([`Self::delay_ended`]): its min RT, floor,
    /// median, and its knee by Little's law on the capacity before. Where the service spreads
    /// (an exponential one) the shortest answers through the slowdown are a few ms and nothing
    /// beats them by that much; a near-constant one's are the slower service's floor. Left to
    /// the probes, a 49–51 ms service back from 3× grew on the stale floor to 72 permits for
    /// 50 workers, and the faster probe, held under that limit, drained nothing and read a
    /// queued floor (61 ms), on which the limit stood at 56–80 for 5 s.
    fn slowdown_ended(&mut self, b: &Bucket) -> Option<usize> {
        let before = self.before_slower.as_mut()?;
        let least = b.second?;
        let through = before.through;
        before.through =
            Some(through.map_or((least, b.passes), |(s, n)| (s.min(least), n + b.passes)));
        let enough = 2 * self.c.probe_samples as u64;
        let old_floor = before.floor?;
        if through.is_none_or(|(s, n)| {
            n < enough || least.as_secs_f64() * self.c.probe_trigger >= s.as_secs_f64()
        }) || !SAME_REGIME.contains(&ratio_of(least, old_floor))
        {
            return None;
        }
        let before = self.before_slower.take()?;
        Some(self.regime_back(before.served, before.min_rt, old_floor, before.mid))
    }

    /// The delay outside eased: the answers that beat it still carry `rt` (the old service
    /// plus what is left of the delay). The cap is the old capacity at that RT, and the
    /// shortest answer through the delay is counted anew from `least` (`passes` answers),
    /// so its end is read against what is left of it.
    fn delay_eased(
        &mut self,
        served: f64,
        rt: Duration,
        least: Duration,
        passes: u64,
    ) -> Option<usize> {
        self.before_delay.2 = Some((least, passes));
        let cap = self.drained_to(served * rt.as_secs_f64());
        let cap = clamp(cap.ceil() as usize, self.c.min, self.c.max);
        self.restart_cap = Some(cap);
        (self.base > cap).then(|| {
            self.base = cap;
            if self.knee_found {
                self.knee = Some(cap);
            }
            cap
        })
    }

    /// A delay outside that has not ended within four probe intervals (20 s by default, and
    /// at least 50 buckets) is the regime: its cap (the capacity before it × the new RT) and
    /// its test of the end go. The end of a delay that lasts is then found as any faster
    /// regime is, by the probes. Without it, a delay that never ended (a route moved for good)
    /// kept the old capacity's cap for good: a pool scaled from 50 to 100 workers behind it
    /// stayed at 267–287 permits for a knee of 500 (review 45), and a delay too short for its
    /// end to be read (under the old floor) kept its cap too.
    fn delay_lapsed(&mut self, now: Nanos) {
        // Or the regime before it is back, measured by a probe (a delay too short for its end
        // to show in `delay_ended`).
        let back = self.delay_restart.is_some_and(|(_, service)| {
            self.min_rt
                .is_some_and(|rt| SAME_REGIME.contains(&ratio_of(rt, service)))
        });
        if self.delay_restart.is_some() && (now >= self.delay_lapses || back) {
            self.delay_restart = None;
            self.restart_cap = None;
        }
    }

    /// A drain (the slow start's, or of a standing queue) from `base` to `cut` in the slow
    /// start restarted on a delay outside ([`Self::delay_restart`]): the cap it returns to
    /// comes down to halfway between them. The cap (the capacity before the delay × the new RT)
    /// is the knee where nothing waits; at it, the workers' share of the limit has no room,
    /// and a burst that queues slows them, their answers fall, fewer permits are in the delay
    /// and more wait at the workers (a second state that holds: at 250 permits for 50 workers
    /// behind 200 ms, half the answers and a queue of 100, with the simulator's contention).
    /// Back at the cap after each drain, the limit swung between 185 and 255 every 2–3 s
    /// (`network_delay_spike`), at 0.8–0.9 of capacity; halfway down after each drain, it
    /// settles where no burst tips it (226 in seed 1).
    fn drained_in_a_delay(&mut self, cut: f64, base: f64) {
        if self.delay_restart.is_some() {
            let mid = ((cut + base) / 2.0).ceil() as usize;
            self.restart_cap = self.restart_cap.map(|c| c.min(mid));
        }
    }

    /// A probe that admitted significantly more than the buckets before it (as
    /// [`deeper_probe`](Self::deeper_probe) judges it: its answers and the permits still out,
    /// by [`DEEPER_SIGNIFICANCE`] standard errors of the count the rate before it gives) at
    /// fewer permits than the limit it returns to: the permits above its depth served nothing,
    /// and the requests they kept waiting slowed the workers that served the rest. The limit it
    /// returns to, and the knee, come down to its depth and the least target queue (a request).
    ///
    /// In front of 5 workers of 500 ms (`few_slow_workers_3x`) a probe at 5 passed 10 answers a
    /// second where the 10 permits before it had passed 7, and the limit went back to 10: the
    /// queue estimate, missing in most buckets at these rates and reading about half of a
    /// small queue where it is there, held it for tens of seconds. The count knows how few
    /// answers it has: a probe of a few dozen must pass half as many again to count, one of
    /// thousands a few per cent. Where the limit holds no queue, a probe below it passes less,
    /// never more; a resource that got faster as it started (workers back, a delay gone) is
    /// read the same way, and the steering grows from there on the queue it then reads as none.
    fn served_more(&mut self, now: Nanos) {
        let Some(p) = self.probe.filter(|p| now < p.end) else {
            return;
        };
        if p.shallow || p.check || p.limit >= self.base || self.admitted_more(&p, now).is_none() {
            return;
        }
        let knee = clamp(p.limit + 1, self.c.min, self.c.max);
        self.base = self.base.min(knee);
        self.knee = Some(self.knee.map_or(knee, |k| k.min(knee)));
    }

    /// `permits` in service plus the drain's margin: the target queue's share of them and
    /// [`MIN_QUEUE_TARGET`] — what a limit brought down to a measured BDP or knee leaves.
    fn drained_to(&self, permits: f64) -> f64 {
        permits * (1.0 + self.c.queue_target) + MIN_QUEUE_TARGET
    }

    /// The check of a reading that would have restarted the slow start, set off in the new
    /// regime (a probe held above the workers a drop left read their queue), has let go of the
    /// limit: whatever it read, the limit it returns to comes down to the permits in service —
    /// its own depth, or the pass rate of the buckets before it at the RT it read (Little's
    /// law), whichever is more — plus the drain's margin, as after a deeper probe. The reading
    /// it checked put the knee under that probe's depth, and the limit it returned to was the
    /// one from before the drop: 33–41 permits for 10 workers held through its tail, where the
    /// steering cannot drain, and the drains after it took 1–3 s more (`capacity_fifth` seed 27:
    /// the check at 10 read the old regime at 22.0 s, 41 permits stood until 23.9 s, 5.8 s to
    /// converge). Its depth alone is not enough: a check at 6 went back to 9 for 10 workers,
    /// and the return of the workers was read under them (seed 42).
    fn after_check(&mut self, now: Nanos) {
        let Some(p) = self.probe.filter(|p| now >= p.end) else {
            return;
        };
        let Some(before) = p.restart_rate else {
            return;
        };
        if let Some(p) = self.probe.as_mut() {
            p.restart_rate = None;
        }
        let rt = mean(
            self.probe_rt.rt_sum,
            self.probe_rt.passes,
            self.c.min_samples,
        );
        let Some(rt) = rt else {
            return;
        };
        let permits = (before * rt.as_secs_f64()).max(p.limit as f64);
        let to = clamp(
            (self.drained_to(permits).ceil() as usize).min(self.base),
            self.c.min,
            self.c.max,
        );
        self.base = to;
        self.knee = self.knee.map(|k| k.min(to));
    }

    /// Marks the probe under way as the one below a start past the knee, or as no longer it.
    fn mark_from_start(&mut self, from_start: bool) {
        if let Some(p) = self.probe.as_mut() {
            p.from_start = from_start;
        }
    }

    /// The probe below a starting limit found past the knee has let go of the limit: it
    /// returns to the drain's BDP — the probe's own pass rate (its answers and the permits
    /// still out, over the time it held) × the mean RT of its answers so far, plus the target
    /// — and not to the starting limit, the one known to be past the knee. Back at 20 permits
    /// in front of 10 workers that slow as they fill, 10 requests waited inside and slowed
    /// every worker by half, and the steering took the limit down × 0.9 a bucket, 20 → 12 in
    /// about a second (`demo_2x`). The probe's mean leaves out the slow answers it has not
    /// seen yet, so the BDP reads low rather than high; the steering grows from there while
    /// no queue shows. Never above the limit it would return to.
    fn after_start_probe(&mut self, now: Nanos) {
        let Some(p) = self.probe.filter(|p| p.from_start && now >= p.end) else {
            return;
        };
        self.mark_from_start(false);
        let Some(rt) = mean(
            self.probe_rt.rt_sum,
            self.probe_rt.passes,
            self.c.min_samples,
        ) else {
            return; // too few answers to measure: the probe's end judges as before
        };
        let answers = self.probe_rt.passes.saturating_sub(p.carried) + p.limit as u64;
        let held = p.end.as_u64().saturating_sub(p.start.as_u64()) as f64 / 1e9;
        let bdp = answers as f64 / held.max(1e-9) * rt.as_secs_f64();
        let drain = self.drained_to(bdp);
        let to = clamp(
            (drain.ceil() as usize).min(self.base),
            self.c.min,
            self.c.max,
        );
        self.base = to;
        self.knee = Some(self.knee.map_or(to, |k| k.min(to)));
    }

    /// The probe's limit while it holds the limit down.
    fn probe_limit(&self, now: Nanos) -> Option<usize> {
        self.probe.filter(|p| now < p.end).map(|p| p.limit)
    }
}

impl LimitAlgorithm for LittlesLaw {
    fn name(&self) -> &'static str {
        "littles"
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn explain(&self, now: Nanos) -> super::Explanation {
        self.explanation(now) // littles/explain.rs
    }

    fn on_demand(&mut self, blocked: u64) {
        self.held_back = self.held_back.max(blocked);
        self.demand.on_demand(blocked);
    }

    fn on_turned_away(&mut self, turned_away: u64) {
        self.turned_away = self.turned_away.max(turned_away);
        self.demand.on_turned_away(turned_away);
    }

    fn on_sample(&mut self, s: &Sample) -> usize {
        let s = &s.bounded();
        // Every answer gave its permit back, and is counted as seen by the requests out
        // meanwhile, however it is read below (a fast failure left out of the readings was
        // still one of the permits out when they started).
        let busy = self.count_answer(s);
        if s.outcome == Outcome::Ignored {
            return self.limit;
        }
        // A failure answered faster than the resource's unqueued answers (under the floor of
        // their low RTs) waited in no queue: it says nothing of load (a path in maintenance, a
        // dependency down), and as a drop one client sending such requests backed every
        // client's limit off to the minimum (review 26). Left out as an ignored one is. A
        // resource that sheds load fast because it queues shows the queue in its answers.
        // But a resource that refuses at once what passes its own cap (a full service's `503`)
        // fails that way only from its cap up: such failures teach the cap (`cap.rs`).
        if s.outcome == Outcome::Dropped && self.floor().is_some_and(|floor| s.latency < floor) {
            self.shed.add(s.end(), s.in_flight, true);
            return self.capped(s.end());
        }
        let end = s.end();
        let mut at = *self.bucket_end.get_or_insert(end + self.span);
        if end >= at {
            // Close the current bucket, then any empty ones a silence skipped (bounded).
            for _ in 0..=self.c.pass_buckets {
                self.close_bucket(at);
                at = at + self.span;
                if end < at {
                    break;
                }
            }
            self.bucket_end = Some(if end < at { at } else { end + self.span });
            let interval = self.at_least_buckets(self.c.probe_interval, 50);
            self.shed.judge(end, interval, interval);
        }
        // Pinned: it took the last permit of the limit in force when it started.
        let pinned = s.in_flight >= self.limit_at(s.start);
        // Dropped answers too (in both groups alike): in front of a pool a quarter of the
        // starting limit, most answers of the requests that found every permit taken come
        // after the client's deadline, and leaving them out left the test without its evidence
        // for 30 s.
        if self.at_start() {
            let success = s.outcome == Outcome::Success;
            self.start.add(s.latency, s.in_flight, self.limit, success);
            self.past_the_knee_from_the_start(end);
        }
        let initial = clamp(self.c.initial, self.c.min, self.c.max);
        let least = self.c.min_samples.min(initial / 2).max(2);
        let at_start = self.at_start();
        let verdict = self
            .demand
            .observe(end, s.latency, s.in_flight, self.limit, at_start, least);
        self.follow_demand(end, verdict);
        // A late answer of a request that started under a higher limit than the present one
        // is news of a limit already cut: the cut that followed (the start's, a drain, a
        // back-off) came after it started. It does not back the limit off again.
        let fresh = self.limit_in_force(s.start) <= self.base;
        // Against the lowest recent limit: a request that started before a raise found every
        // permit of the old limit taken.
        let threshold = self.least_recent_limit().unwrap_or(self.limit);
        let b = &mut self.current;
        b.saturated |= s.in_flight >= threshold.min(self.limit);
        b.at_limit += u64::from(pinned);
        b.max_in_flight = b.max_in_flight.max(s.in_flight);
        b.oldest = Some(b.oldest.map_or(s.start, |o| o.min(s.start)));
        if let Some((busy, ahead)) = busy {
            self.current.count(busy);
            self.current.counted_ahead = self.current.counted_ahead.max(ahead);
        }
        match s.outcome {
            Outcome::Success => {
                self.shed.add(end, s.in_flight, false);
                if self.last_rts.len() >= LAST_ANSWERS * self.c.min_samples.max(1) {
                    self.last_rts.pop_front();
                }
                self.last_rts.push_back((end, s.latency));
                let b = &mut self.current;
                b.add(s.latency);
                // Kept until the first queue only (the line test at it reads them).
                if self.shared.is_none() && !self.knee_found && !self.restarted && !self.probed {
                    if self.recent_answers.len() == RECENT_ANSWERS {
                        self.recent_answers.pop_front();
                    }
                    self.recent_answers.push_back((s.latency, s.in_flight));
                }
                if let Some(p) = self.probe
                    && s.start >= p.start
                    && s.start < p.end
                {
                    self.probe_rt.add(s.latency);
                    self.probe_decided(end);
                }
            }
            Outcome::Dropped => {
                // Answered sooner than most answers: refused, not kept past a deadline (a
                // failure that is fast when the resource is calm comes back later than its
                // floor once it queued behind others). It does not back off: a queue it
                // waited in shows in the answers' RTs, and the steering reads it there.
                let refused = self.recent_mid.is_some_and(|mid| s.latency < mid);
                let b = &mut self.current;
                b.drops += 1;
                b.late_drops += u64::from(!refused);
                b.fresh_drops += u64::from(fresh && !refused);
            }
            Outcome::Ignored => {}
        }
        self.capped(end)
    }
}

/// A step down from `base` by `backoff`, at least a permit.
fn down_step(base: f64, backoff: f64) -> f64 {
    (base * backoff).min(base - 1.0)
}

/// The regime before a slower service restarted the slow start ([`LittlesLaw::before_slower`]).
#[derive(Clone, Copy, Debug)]
struct BeforeSlower {
    min_rt: Duration,
    floor: Option<Duration>,
    mid: Option<Duration>,
    served: f64,
    through: Option<(Duration, u64)>,
}

/// A probe's slower reading — its low RT `low` over the `floor`, its mean `ratio` × `min_rt` —
/// is a delay outside the resource, not a slower service: a delay adds the same wait to every
/// request, so the low RT rises by as much as the mean (within [`SAME_REGIME`]); a slower
/// service multiplies them, so the low RT rises by the floor × (`ratio` − 1). The two readings
/// are as far apart as the floor is from min RT: where the service spreads little they nearly
/// meet (49–51 ms, 3× slower: +98 ms at the low end against +100 for a delay), and the low
/// RT's rise must stand nearer the delay's by three of its standard errors (`se`), as it must
/// stand above zero. A 3× slower near-constant service read as a delay restarted the slow
/// start to the old capacity at the new RT, 159 permits for 50 workers (`const_spike`).
fn reads_a_delay(
    min_rt: Duration,
    floor: Duration,
    low: Duration,
    ratio: f64,
    se: Duration,
) -> bool {
    let added = low.saturating_sub(floor).as_secs_f64();
    let mean_added = min_rt.as_secs_f64() * (ratio - 1.0);
    let scaled = floor.as_secs_f64() * (ratio - 1.0);
    let bar = STARTUP_SIGNIFICANCE * se.as_secs_f64();
    mean_added > 0.0
        && SAME_REGIME.contains(&(added / mean_added))
        && added > bar
        && added - (mean_added + scaled) / 2.0 > bar
}

/// `a ÷ b`.
fn ratio_of(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-12)
}

/// The rank of the `q`-quantile of `n` samples (`n` ≥ 1): the `ceil(q n)`-th smallest, at
/// least the first.
fn rank(q: f64, n: usize) -> usize {
    ((q * n as f64).ceil() as usize).clamp(1, n)
}

/// The [`LOW_QUANTILE`] of `rts` (not empty).
fn low_quantile(rts: &mut [Duration]) -> Duration {
    *rts.select_nth_unstable(rank(LOW_QUANTILE, rts.len()) - 1).1
}

#[cfg(test)]
mod change_tests;
#[cfg(test)]
mod start_tests;
#[cfg(test)]
mod tests;
