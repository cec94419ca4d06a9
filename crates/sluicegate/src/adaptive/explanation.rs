//! [`Explanation`]: why an adaptive limit sits where it does, as far as its algorithm can say.

use std::time::Duration;

/// Why an algorithm's limit sits where it does: what it is doing and what it has measured,
/// read off its state by [`LimitAlgorithm::explain`](super::LimitAlgorithm::explain) (and
/// [`AdaptiveLimiter::explain`](super::AdaptiveLimiter::explain)), for an operator's status
/// page. Every field is optional: an algorithm fills what it has and leaves the rest `None`
/// ([`LittlesLaw`](super::LittlesLaw) fills most; the baselines little or nothing). The
/// caller serialises it as it likes (the gate's `GET /status` shows it as JSON).
///
/// Rates are answers a second; queues and limits are requests.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Explanation {
    /// What the algorithm is doing ([`Phase`]).
    pub phase: Option<Phase>,
    /// The limit the algorithm steers, before a probe or a [`cap`](Self::cap) holds the limit
    /// in force lower: the limit it returns to when they let go (the limit itself when
    /// nothing holds it).
    pub steered_limit: Option<usize>,
    /// The most the limit may be now, and what set it ([`Cap`]); `None`: nothing but the
    /// configured maximum.
    pub cap: Option<Cap>,
    /// Requests that slow each other (a shared CPU or lock: each answer slower the more run
    /// at once, with no queue anywhere) rather than a pool of workers with a queue in front:
    /// the limit grows while a step of it still brings a fifth of a step more throughput,
    /// and no queue is read from the answers. Once on, it stays on.
    pub shared: Option<bool>,
    /// The knee: the limit past which the resource queues (the queue steering's last setting
    /// while it queued) or, with [`shared`](Self::shared) requests, past which a step of the
    /// limit brings less than a fifth of a step more throughput. The limit is held near it.
    pub knee: Option<usize>,
    /// The mean answer time of the resource when nothing waits in it (min RT): what a
    /// request costs the resource.
    pub min_rt: Option<Duration>,
    /// The low (5th-percentile) answer time measured with nothing waiting: the floor that
    /// queueing delay is measured from.
    pub floor_rt: Option<Duration>,
    /// The requests the algorithm reads waiting inside the resource: the recent low answer
    /// time over [`floor_rt`](Self::floor_rt), × the answer rate (Little's law).
    pub queue: Option<f64>,
    /// Answers a second over the recent window.
    pub pass_rate: Option<f64>,
    /// The demand the algorithm sees: requests a second over the recent window, answered
    /// (successes and drops) or turned away without waiting for a permit (a caller that waits
    /// in the limiter's queue counts when answered: a queue that grows is demand not seen
    /// yet, and one that times out in the queue is never counted). Above
    /// [`pass_rate`](Self::pass_rate), callers were refused or failed; well above
    /// [`capacity`](Self::capacity), the resource is overloaded.
    pub demand: Option<f64>,
    /// Answers a second last measured while the resource queued: its capacity, remembered
    /// through quiet spells.
    pub capacity: Option<f64>,
    /// The share of the recent window's requests that started with every permit taken: near
    /// 1 the demand presses on the limit (it holds callers back), near 0 the demand is below
    /// it and the limit follows the demand.
    pub at_limit: Option<f64>,
    /// The last time the limit moved, and why ([`LimitChange`]).
    pub last_change: Option<LimitChange>,
}

/// What an adaptive algorithm is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// No answer time measured yet: the limit is the initial one.
    WarmingUp,
    /// Looking for the knee: the limit grows while demand fills it (a slow start, or leaps to
    /// the demand it held back) until the resource first queues. A light load that never
    /// fills the limit leaves it here, the limit following the demand.
    Starting,
    /// Looking for the knee again: the resource changed (much slower answers, or workers
    /// that came back), and the knee it had no longer holds.
    Restarting,
    /// A probe holds the limit down for a moment to measure the unqueued answer time again
    /// (or follows the answers of the requests it let in), so the floor cannot drift.
    Probing,
    /// After a back-off for drops: for a while the limit may fall but not rise.
    CoolingDown,
    /// The knee is known: the limit is steered around it.
    Steady,
}

impl Phase {
    /// The phase's name in snake case, e.g. `"cooling_down"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::WarmingUp => "warming_up",
            Phase::Starting => "starting",
            Phase::Restarting => "restarting",
            Phase::Probing => "probing",
            Phase::CoolingDown => "cooling_down",
            Phase::Steady => "steady",
        }
    }
}

/// A bound on the limit below the configured maximum, and what set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cap {
    /// The most the limit in force may be.
    pub limit: usize,
    /// What set it.
    pub source: CapSource,
    /// How much longer it holds at least, where the algorithm knows.
    pub holds_for: Option<Duration>,
}

/// What set a [`Cap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CapSource {
    /// The resource refuses at once (fast failures, a `503` past its own connection cap)
    /// every request beyond this many at once: learnt from those failures, held for a while
    /// and then let go to see whether the resource grew.
    FastFailures,
    /// A cap learnt from fast failures lapsed: the limit grows back from it by at most a
    /// tenth a step, so a queue of callers is not let through at once.
    AfterCap,
    /// A start after the resource changed grows at most to the capacity last measured × the
    /// new answer time; after a delay outside the resource, the knee found that way is not
    /// passed until the delay ends or lapses (`holds_for`).
    Capacity,
}

impl CapSource {
    /// The source's name in snake case, e.g. `"fast_failures"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CapSource::FastFailures => "fast_failures",
            CapSource::AfterCap => "after_cap",
            CapSource::Capacity => "capacity",
        }
    }
}

/// The last move of the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitChange {
    /// The limit before it.
    pub from: usize,
    /// The limit after it (the limit now: nothing moved it since).
    pub to: usize,
    /// How long ago.
    pub ago: Duration,
    /// Why, as far as the algorithm can tell.
    pub cause: ChangeCause,
}

/// Why the limit last moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChangeCause {
    /// A back-off: more requests were dropped (timed out, refused by an overloaded resource)
    /// than the resource drops anyway.
    Drops,
    /// A probe took the limit down to measure the unqueued answer time.
    Probe,
    /// A probe ended and the limit went back to the steered one.
    ProbeEnded,
    /// Held at a cap the resource enforces with fast failures.
    Cap,
    /// Grown: demand filled the limit and the resource showed no queue (or demand was turned
    /// away for want of a permit).
    Raise,
    /// Cut by the steering: the resource's own queue stood past its target, or the demand it
    /// follows fell.
    Cut,
}

impl ChangeCause {
    /// The cause's name in snake case, e.g. `"probe_ended"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeCause::Drops => "drops",
            ChangeCause::Probe => "probe",
            ChangeCause::ProbeEnded => "probe_ended",
            ChangeCause::Cap => "cap",
            ChangeCause::Raise => "raise",
            ChangeCause::Cut => "cut",
        }
    }
}
