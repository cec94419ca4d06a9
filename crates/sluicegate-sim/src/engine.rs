//! Runs one scenario with one algorithm in virtual time and records every request.
//!
//! The engine is tokio itself: a `current_thread` runtime with paused time auto-advances to
//! the next timer whenever every task is idle, so the real limiter, its queue timeouts and the
//! algorithm run unchanged while 90 s of traffic take well under a second. One thread and a
//! seeded RNG make a run deterministic.

use crate::algo::Algo;
use crate::load::Load;
use crate::scenario::Scenario;
use crate::upstream::{Reply, Upstream};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sluicegate::adaptive::AdaptiveLimiter;
use sluicegate::clock::{Clock, Nanos};
use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use tokio::task::LocalSet;
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
    pub scenario: &'static str,
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
}

struct Ctx {
    t0: Instant,
    rng: RefCell<SmallRng>,
    upstream: Upstream,
    limiter: AdaptiveLimiter,
    deadline: Duration,
    records: RefCell<Vec<Record>>,
    arrivals: RefCell<Vec<Duration>>,
}

impl Ctx {
    fn since(&self, t: Instant) -> Duration {
        t - self.t0
    }

    fn exp(&self, mean_secs: f64) -> Duration {
        let u: f64 = self.rng.borrow_mut().random();
        Duration::from_secs_f64(-(1.0 - u).ln() * mean_secs)
    }
}

/// Runs `scenario` with `algo` from `seed` and returns what happened.
///
/// # Panics
///
/// If the runtime cannot be built (out of resources).
pub fn run(scenario: &Scenario, algo: Algo, seed: u64) -> Run {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("building the simulation runtime");
    LocalSet::new().block_on(&rt, simulate(scenario, algo, seed))
}

/// Virtual time since the start of the run: the clock injected into the limiter and the
/// adaptive wrapper, so a run's numbers do not depend on when in the process it started.
#[derive(Clone, Copy, Debug)]
pub struct RunClock {
    t0: Instant,
}

impl RunClock {
    /// A clock whose epoch is now.
    pub fn start() -> Self {
        RunClock { t0: Instant::now() }
    }
}

impl Clock for RunClock {
    fn now(&self) -> Nanos {
        Nanos::from(Instant::now() - self.t0)
    }
}

async fn simulate(s: &Scenario, algo: Algo, seed: u64) -> Run {
    let initial = s.upstream.initial;
    let clock = RunClock::start();
    let limiter = ConcurrencyLimiter::builder(1)
        .max_queue(s.max_queue)
        .queue_timeout(s.queue_timeout)
        .predictive(true)
        .clock(clock)
        .build()
        .expect("valid limiter settings");
    let ctx = Rc::new(Ctx {
        t0: clock.t0,
        rng: RefCell::new(SmallRng::seed_from_u64(seed)),
        upstream: Upstream::new(initial, s.upstream.contention),
        // The adaptive limiter times its samples with the limiter's clock (the run clock).
        limiter: AdaptiveLimiter::new(limiter, algo.build(initial.workers)),
        deadline: s.clients.deadline,
        records: RefCell::new(Vec::new()),
        arrivals: RefCell::new(Vec::new()),
    });
    let end = ctx.t0 + s.duration;
    for &(at, state) in &s.upstream.changes {
        let ctx = ctx.clone();
        tokio::task::spawn_local(async move {
            sleep_until(ctx.t0 + at).await;
            ctx.upstream.set_state(state);
        });
    }
    let sampler = tokio::task::spawn_local(sample(ctx.clone(), end));
    match s.clients.load.clone() {
        Load::Closed { clients, think } => {
            for _ in 0..clients {
                tokio::task::spawn_local(client(ctx.clone(), end, think));
            }
        }
        load => tokio::task::spawn_local(open_loop(ctx.clone(), end, load))
            .await
            .ok()
            .unwrap_or(()),
    }
    // Let requests in flight at the end finish or reach their deadline.
    sleep_until(end + s.clients.deadline).await;
    let timeline = sampler.await.unwrap_or_default();
    let records = ctx.records.take();
    let arrival_times = ctx.arrivals.take();
    Run {
        scenario: s.name,
        algo: algo.name(),
        arrivals: arrival_times.len() as u64,
        arrival_times,
        records,
        timeline,
    }
}

async fn sample(ctx: Rc<Ctx>, end: Instant) -> Vec<Point> {
    let mut out = Vec::new();
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
        t += TICK;
    }
    out
}

async fn open_loop(ctx: Rc<Ctx>, end: Instant, load: Load) {
    let mut next = ctx.t0;
    loop {
        let rate = load.rate_at(ctx.since(next)).unwrap_or(0.0).max(1e-9);
        next += ctx.exp(1.0 / rate);
        if next >= end {
            return;
        }
        if next > Instant::now() {
            sleep_until(next).await;
        }
        tokio::task::spawn_local(request(ctx.clone(), next));
    }
}

async fn client(ctx: Rc<Ctx>, end: Instant, think: Duration) {
    loop {
        let arrival = Instant::now();
        if arrival >= end {
            return;
        }
        let handle = tokio::task::spawn_local(request(ctx.clone(), arrival));
        // The client waits for its answer or its deadline, whichever comes first; the
        // request itself runs on (a real upstream finishes work whose client has gone).
        let _ = tokio::time::timeout_at(arrival + ctx.deadline, handle).await;
        sleep_until(Instant::now() + ctx.exp(think.as_secs_f64())).await;
    }
}

async fn request(ctx: Rc<Ctx>, arrival: Instant) {
    ctx.arrivals.borrow_mut().push(ctx.since(arrival));
    let fate = match ctx.limiter.acquire().await {
        Err(Rejected::QueueTimeout { .. }) => Fate::QueueTimeout,
        Err(_) => Fate::Rejected,
        Ok(permit) => {
            let reply = ctx.upstream.call(&ctx.rng).await;
            let late = Instant::now() - arrival > ctx.deadline;
            match (reply, late) {
                (Reply::Failed, _) => {
                    permit.ignore();
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
    let record = Record {
        arrival: ctx.since(arrival),
        end: ctx.since(Instant::now()),
        fate,
    };
    ctx.records.borrow_mut().push(record);
}
