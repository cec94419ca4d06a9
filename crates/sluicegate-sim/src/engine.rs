//! Runs one scenario with one algorithm and records every request.
//!
//! The engine is tokio itself. In the default, virtual mode a `current_thread` runtime with
//! paused time auto-advances to the next timer whenever every task is idle, so the real
//! limiter, its queue timeouts and the algorithm run unchanged while 90 s of traffic take well
//! under a second; one thread and a seeded RNG make a run deterministic. The threaded mode
//! ([`run_threaded`]) runs the same tasks on a multi-threaded runtime in real time, so the
//! limiter's lock-free paths race for real under the adaptive limit. A traced run
//! ([`Mode::trace`]) also keeps what the algorithm said of itself at every timeline point.

use crate::algo::Algo;
use crate::load::Load;
use crate::scenario::Scenario;
use crate::upstream::{Reply, Upstream};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sluicegate::adaptive::{AdaptiveLimiter, Explanation};
use sluicegate::clock::{Clock, Nanos};
use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::{Instant, sleep_until};

/// How one request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fate {
    /// Served within its deadline: goodput.
    Good,
    /// Served after its deadline: the client had gone.
    Late,
    /// The upstream failed it.
    Failed,
    /// The upstream refused it at once, full (`shed_at`): turned away as the limiter's
    /// rejections are, by the upstream instead.
    Shed,
    /// Turned away by the limiter (queue full, predicted timeout).
    Rejected,
    /// Waited the whole queue timeout.
    QueueTimeout,
}

/// One finished request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Record {
    /// When it arrived, from the start of the run.
    pub arrival: Duration,
    /// When it was answered or turned away.
    pub end: Duration,
    /// How it ended.
    pub fate: Fate,
}

impl Record {
    /// Arrival to answer.
    pub fn latency(&self) -> Duration {
        self.end - self.arrival
    }
}

/// The limiter and upstream, sampled every [`TICK`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// When.
    pub t: Duration,
    /// The limit.
    pub limit: usize,
    /// Permits out.
    pub in_flight: usize,
    /// Callers in the limiter's queue.
    pub queued: usize,
    /// Requests at the upstream (served or queued there).
    pub upstream: usize,
}

/// Sampling period of the timeline.
pub const TICK: Duration = Duration::from_millis(100);

/// Everything one run produced.
#[derive(Clone, Debug)]
pub struct Run {
    /// Scenario name.
    pub scenario: String,
    /// Algorithm name.
    pub algo: &'static str,
    /// Requests that arrived.
    pub arrivals: u64,
    /// When each request arrived, finished or not.
    pub arrival_times: Vec<Duration>,
    /// Requests that finished (arrivals that did not were still running at the end).
    pub records: Vec<Record>,
    /// The timeline.
    pub timeline: Vec<Point>,
    /// What the algorithm said of itself ([`AdaptiveLimiter::explain`]) at each point of the
    /// timeline, in step with it; empty unless the run was traced ([`Mode::trace`]).
    pub explained: Vec<Explanation>,
    /// The limiter's counters at the end, after every request finished.
    pub end: sluicegate::concurrency::Snapshot,
}

struct Ctx {
    t0: Instant,
    rng: Mutex<SmallRng>,
    upstream: Upstream,
    limiter: AdaptiveLimiter,
    /// Tokio time per unit of simulated time.
    scale: u32,
    /// The client deadline, in tokio time.
    deadline: Duration,
    /// The caller's upstream timeout, in tokio time.
    upstream_timeout: Option<Duration>,
    records: Mutex<Vec<Record>>,
    arrivals: Mutex<Vec<Duration>>,
    /// Keep the algorithm's explanation at every timeline point.
    trace: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Ctx {
    /// Simulated time since the start, from tokio time.
    fn since(&self, t: Instant) -> Duration {
        (t - self.t0) / self.scale
    }

    /// Tokio time for a simulated duration.
    fn tokio(&self, d: Duration) -> Duration {
        d * self.scale
    }

    /// An exponential draw of simulated mean `mean_secs`, in tokio time.
    fn exp(&self, mean_secs: f64) -> Duration {
        let u: f64 = lock(&self.rng).random();
        self.tokio(Duration::from_secs_f64(-(1.0 - u).ln() * mean_secs))
    }
}

/// How a run is made: in virtual time (the default) or in real time on threads, traced or
/// not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mode {
    /// `Some(n)`: in real time on a runtime of `n` worker threads ([`run_threaded`]);
    /// `None`: in virtual time ([`run`]).
    pub threads: Option<usize>,
    /// Keep what the algorithm says of itself at every timeline point ([`Run::explained`]).
    /// Reading it changes nothing in a virtual-time run: the same requests end the same way.
    pub trace: bool,
}

/// Runs `scenario` with `algo` from `seed` and returns what happened.
///
/// # Panics
///
/// If the runtime cannot be built (out of resources).
pub fn run(scenario: &Scenario, algo: Algo, seed: u64) -> Run {
    run_as(scenario, algo, seed, Mode::default())
}

/// Runs `scenario` with `algo` from `seed` as `mode` says.
///
/// # Panics
///
/// If the runtime cannot be built (out of resources).
pub fn run_as(scenario: &Scenario, algo: Algo, seed: u64, mode: Mode) -> Run {
    let (rt, scale) = match mode.threads {
        Some(threads) => (
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads.max(1))
                .enable_time()
                .build(),
            1,
        ),
        None => (
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build(),
            VIRTUAL_SCALE,
        ),
    };
    let rt = rt.expect("building the simulation runtime");
    rt.block_on(simulate(scenario.clone(), algo, seed, scale, mode.trace))
}

/// Tokio time per unit of simulated time in virtual mode. tokio's timer counts whole
/// milliseconds; run 1000× slowed down, it resolves a simulated microsecond, so a 1 ms cache
/// is simulated as faithfully as a 1 s report generator. (Paused time makes the slowdown free.)
pub const VIRTUAL_SCALE: u32 = 1000;

/// Runs `scenario` with `algo` in real time on a runtime of `threads` worker threads: the
/// scenario takes its full duration (plus one deadline) of wall time, and the numbers vary
/// from run to run. For checking the limiter's concurrent paths under an adaptive limit, not
/// for the scorecard.
///
/// # Panics
///
/// If the runtime cannot be built (out of resources).
pub fn run_threaded(scenario: &Scenario, algo: Algo, seed: u64, threads: usize) -> Run {
    let mode = Mode {
        threads: Some(threads),
        trace: false,
    };
    run_as(scenario, algo, seed, mode)
}

/// Virtual time since the start of the run: the clock injected into the limiter and the
/// adaptive wrapper, so a run's numbers do not depend on when in the process it started.
#[derive(Clone, Copy, Debug)]
pub struct RunClock {
    t0: Instant,
    scale: u32,
}

impl RunClock {
    /// A clock whose epoch is now.
    pub fn start() -> Self {
        RunClock::scaled(1)
    }

    /// A clock whose epoch is now and which reads tokio time ÷ `scale` (simulated time when
    /// tokio runs `scale` times slowed down).
    pub fn scaled(scale: u32) -> Self {
        RunClock {
            t0: Instant::now(),
            scale: scale.max(1),
        }
    }
}

impl Clock for RunClock {
    fn now(&self) -> Nanos {
        Nanos::from((Instant::now() - self.t0) / self.scale)
    }
}

async fn simulate(s: Scenario, algo: Algo, seed: u64, scale: u32, trace: bool) -> Run {
    // The limiter runs on tokio time (its queue timeout is a tokio timer, its wait estimate
    // must agree with it); the algorithm is timed in simulated time.
    let limiter_clock = RunClock::start();
    let clock = RunClock {
        scale,
        ..limiter_clock
    };
    let limiter = ConcurrencyLimiter::builder(1)
        .max_queue(s.limiter.max_queue)
        .queue_timeout(s.limiter.queue_timeout * scale)
        .predictive(s.limiter.predictive)
        .clock(limiter_clock)
        .build()
        .expect("valid limiter settings");
    let ctx = Arc::new(Ctx {
        t0: clock.t0,
        rng: Mutex::new(SmallRng::seed_from_u64(seed)),
        upstream: Upstream::new(s.upstream.clone(), scale),
        // The algorithm is timed in simulated time, the limiter's timers in tokio time.
        limiter: AdaptiveLimiter::with_sample_clock(
            limiter,
            algo.build(s.upstream.workers),
            Arc::new(clock),
        ),
        deadline: s.deadline * scale,
        upstream_timeout: s.limiter.upstream_timeout.map(|t| t * scale),
        scale,
        records: Mutex::new(Vec::new()),
        arrivals: Mutex::new(Vec::new()),
        trace,
    });
    let end = ctx.t0 + ctx.tokio(s.duration);
    for at in s.change_times() {
        let (ctx, state) = (ctx.clone(), s.state_at(at));
        tokio::spawn(async move {
            sleep_until(ctx.t0 + ctx.tokio(at)).await;
            ctx.upstream.set_state(state);
        });
    }
    let sampler = tokio::spawn(sample(ctx.clone(), end));
    match &s.load {
        &Load::Closed { clients, think } => {
            for _ in 0..clients {
                tokio::spawn(client(ctx.clone(), end, think));
            }
        }
        Load::Open { .. } => {
            let rate = |t| s.rate_at(t).unwrap_or(0.0);
            open_loop(ctx.clone(), end, rate).await;
        }
    }
    // Let requests in flight at the end finish or reach their deadline, then drain what the
    // upstream still works on (its answers are late by then, but they hold permits).
    sleep_until(end + ctx.deadline).await;
    let drained = ctx.limiter.limiter().drain();
    let _ = tokio::time::timeout(ctx.deadline * 10, drained).await;
    let (timeline, explained) = sampler.await.unwrap_or_default();
    let records = std::mem::take(&mut *lock(&ctx.records));
    let arrival_times = std::mem::take(&mut *lock(&ctx.arrivals));
    Run {
        scenario: s.name.clone(),
        algo: algo.name(),
        arrivals: arrival_times.len() as u64,
        arrival_times,
        records,
        timeline,
        explained,
        end: ctx.limiter.limiter().snapshot(),
    }
}

/// The timeline, and the algorithm's explanation at each of its points when tracing.
async fn sample(ctx: Arc<Ctx>, end: Instant) -> (Vec<Point>, Vec<Explanation>) {
    let (mut out, mut explained) = (Vec::new(), Vec::new());
    let mut t = ctx.t0;
    while t <= end {
        sleep_until(t).await;
        let snap = ctx.limiter.limiter().snapshot();
        out.push(Point {
            t: ctx.since(t),
            limit: snap.limit,
            in_flight: snap.in_flight,
            queued: snap.queued,
            upstream: ctx.upstream.in_system(),
        });
        if ctx.trace {
            explained.push(ctx.limiter.explain());
        }
        t += ctx.tokio(TICK);
    }
    (out, explained)
}

async fn open_loop(ctx: Arc<Ctx>, end: Instant, rate_at: impl Fn(Duration) -> f64) {
    let mut next = ctx.t0;
    loop {
        let rate = rate_at(ctx.since(next)).max(1e-9);
        next += ctx.exp(1.0 / rate);
        if next >= end {
            return;
        }
        if next > Instant::now() {
            sleep_until(next).await;
        }
        tokio::spawn(request(ctx.clone(), next));
    }
}

async fn client(ctx: Arc<Ctx>, end: Instant, think: Duration) {
    loop {
        let arrival = Instant::now();
        if arrival >= end {
            return;
        }
        let handle = tokio::spawn(request(ctx.clone(), arrival));
        // The client waits for its answer or its deadline, whichever comes first; the
        // request itself runs on (a real upstream finishes work whose client has gone).
        let _ = tokio::time::timeout_at(arrival + ctx.deadline, handle).await;
        sleep_until(Instant::now() + ctx.exp(think.as_secs_f64())).await;
    }
}

async fn request(ctx: Arc<Ctx>, arrival: Instant) {
    lock(&ctx.arrivals).push(ctx.since(arrival));
    // A client whose deadline passes while it waits leaves the queue.
    let acquired = tokio::time::timeout_at(arrival + ctx.deadline, ctx.limiter.acquire()).await;
    let fate = match acquired {
        Err(_) | Ok(Err(Rejected::QueueTimeout { .. })) => Fate::QueueTimeout,
        Ok(Err(_)) => Fate::Rejected,
        Ok(Ok(permit)) => {
            let Some(reply) = call(&ctx).await else {
                // Given up at the upstream timeout: the permit goes back as a drop, as the
                // gate's `504` does.
                permit.dropped();
                return record(&ctx, arrival, Fate::Late);
            };
            let late = Instant::now() - arrival > ctx.deadline;
            match (reply, late) {
                (Reply::Shed, _) => {
                    // The gate reports an upstream's `503` as a drop.
                    permit.dropped();
                    Fate::Shed
                }
                (Reply::Failed, _) => {
                    permit.finish(ctx.upstream.failures_reported_as());
                    Fate::Failed
                }
                (Reply::Ok, true) => {
                    permit.dropped();
                    Fate::Late
                }
                (Reply::Ok, false) => {
                    permit.success();
                    Fate::Good
                }
            }
        }
    };
    record(&ctx, arrival, fate);
}

/// Calls the upstream: its reply, or `None` if the caller's upstream timeout passed first. The
/// upstream then works on, unseen by the limit, as one that does not notice its caller close
/// the connection (a proxy's upstream timeout in front of most application servers).
async fn call(ctx: &Arc<Ctx>) -> Option<Reply> {
    let Some(within) = ctx.upstream_timeout else {
        return Some(ctx.upstream.call(&ctx.rng).await);
    };
    let upstream = ctx.clone();
    let call = tokio::spawn(async move { upstream.upstream.call(&upstream.rng).await });
    // The task only ends by returning: a join error would be a panic inside the upstream.
    let reply = tokio::time::timeout(within, call).await.ok()?;
    Some(reply.expect("the upstream call panicked"))
}

fn record(ctx: &Ctx, arrival: Instant, fate: Fate) {
    let record = Record {
        arrival: ctx.since(arrival),
        end: ctx.since(Instant::now()),
        fate,
    };
    lock(&ctx.records).push(record);
}
