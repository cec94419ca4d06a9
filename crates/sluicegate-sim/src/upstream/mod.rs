//! The simulated resource: `c` workers with a service-time distribution and a FIFO queue of
//! its own, slower when overcommitted, with latency outside the workers, failures, and changes
//! over time.

mod service;

pub use service::{Part, Service};

use crate::scenario::duration::{de_duration, de_opt_duration};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use serde::Deserialize;
use sluicegate::adaptive::Outcome;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::oneshot;

/// The upstream as a scenario file describes it (`[upstream]`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamModel {
    /// Requests it serves at once.
    pub workers: usize,
    /// Service time of one request with no contention.
    pub service: Service,
    /// Latency outside the workers (a network hop, a wait on something else): adds to every
    /// request's response time without using capacity ("0ms").
    #[serde(default, deserialize_with = "de_duration")]
    pub extra_latency: Duration,
    /// A delay drawn anew for every answer, outside the workers, on top of `extra_latency`
    /// (none by default): what a busy machine's scheduler adds to each response — a few ms
    /// usually, now and then a hundred. Any service-time distribution.
    #[serde(default)]
    pub jitter: Option<Service>,
    /// The upstream's timer tick ("0ms": none): every service ends on the next multiple of
    /// it, as one whose sleeps or polls wake on a millisecond timer wheel
    /// (`sluicegate upstream`, tokio's timer) does. Answers then come in bursts, several in the
    /// same instant, and a limiter hands their permits to its waiters only as the waiters'
    /// tasks run, after the whole burst (review 27).
    #[serde(default, deserialize_with = "de_duration")]
    pub tick: Duration,
    /// Probability that a request fails (0).
    #[serde(default)]
    pub failure_rate: f64,
    /// A failed request answers after this fraction of its drawn service time (0.2: fast).
    #[serde(default = "default_failure_time")]
    pub failure_time: f64,
    /// What the limiter is told about a failed request: `"ignored"` (the default: an error
    /// that says nothing about load, like an HTTP 500 through the HTTP layer), `"success"`
    /// (a generic layer that sees an answer, whatever it says) or `"dropped"`.
    #[serde(default)]
    pub failures_reported_as: Reported,
    /// A request that starts service while `q` requests wait in the upstream's own queue takes
    /// `1 + contention × q / workers` times longer (0.5).
    #[serde(default = "default_contention")]
    pub contention: f64,
    /// A request that starts service with `n` requests in service (itself included) takes
    /// `1 + sharing × n` times longer (0: none). Requests that share something — a CPU, a
    /// lock, a cache — slow each other with no queue anywhere: throughput still grows with
    /// concurrency, toward `1 ÷ (sharing × mean service)`, while every answer slows
    /// (review 28).
    #[serde(default)]
    pub sharing: f64,
    /// A service that guards itself (none by default): while this many requests are in it
    /// (in service or in its own queue), an arrival is answered at once — after only the
    /// latency outside the workers — as an overload failure the limiter is told of as
    /// `Dropped`, as the gate does an upstream's `503` (a connection cap, a load-shedding
    /// middleware, Tomcat's `maxConnections`: issue #13, review 28 finding 3). With
    /// `shed_at = workers` it has no queue at all.
    #[serde(default)]
    pub shed_at: Option<usize>,
    /// Changes over time, in time order.
    #[serde(default, rename = "change")]
    pub changes: Vec<Change>,
}

/// How the simulated client reports a failed request to the limiter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reported {
    /// `Outcome::Ignored`.
    #[default]
    Ignored,
    /// `Outcome::Success`: the limiter cannot tell a failure from an answer.
    Success,
    /// `Outcome::Dropped`.
    Dropped,
}

fn default_failure_time() -> f64 {
    0.2
}

fn default_contention() -> f64 {
    0.5
}

/// A change of the upstream at some moment (`[[upstream.change]]`); fields left out keep
/// their value.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    /// When, from the start of the run.
    #[serde(deserialize_with = "de_duration")]
    pub at: Duration,
    /// New worker count.
    pub workers: Option<usize>,
    /// Service times become this multiple of the file's distribution (1 = as configured).
    pub service_scale: Option<f64>,
    /// New latency outside the workers.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub extra_latency: Option<Duration>,
    /// New failure rate.
    pub failure_rate: Option<f64>,
    /// New `shed_at` (0: it no longer sheds).
    pub shed_at: Option<usize>,
}

/// What the upstream is like at some moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpstreamState {
    /// Requests it can serve at once.
    pub workers: usize,
    /// Multiple of the configured service times.
    pub service_scale: f64,
    /// Latency outside the workers.
    pub extra_latency: Duration,
    /// Probability that a request fails.
    pub failure_rate: f64,
    /// Requests in it past which it refuses at once (`shed_at`).
    pub shed_at: Option<usize>,
}

impl UpstreamModel {
    /// `workers` servers with exponential service of mean `mean`, contention 0.5, no changes.
    pub fn new(workers: usize, mean: Duration) -> Self {
        UpstreamModel {
            workers,
            service: Service::exponential(mean),
            extra_latency: Duration::ZERO,
            jitter: None,
            tick: Duration::ZERO,
            failure_rate: 0.0,
            failure_time: default_failure_time(),
            failures_reported_as: Reported::Ignored,
            contention: default_contention(),
            sharing: 0.0,
            shed_at: None,
            changes: Vec::new(),
        }
    }

    /// The state at `t = 0`.
    pub fn initial(&self) -> UpstreamState {
        UpstreamState {
            workers: self.workers,
            service_scale: 1.0,
            extra_latency: self.extra_latency,
            failure_rate: self.failure_rate,
            shed_at: self.shed_at,
        }
    }

    /// The state in force at `t`.
    pub fn state_at(&self, t: Duration) -> UpstreamState {
        let mut s = self.initial();
        for c in self.changes.iter().take_while(|c| c.at <= t) {
            s.workers = c.workers.unwrap_or(s.workers);
            s.service_scale = c.service_scale.unwrap_or(s.service_scale);
            s.extra_latency = c.extra_latency.unwrap_or(s.extra_latency);
            s.failure_rate = c.failure_rate.unwrap_or(s.failure_rate);
            if let Some(k) = c.shed_at {
                s.shed_at = (k > 0).then_some(k);
            }
        }
        s
    }

    /// Mean latency outside the workers in `state`: `extra_latency` plus the jitter's mean.
    pub fn mean_outside(&self, state: &UpstreamState) -> Duration {
        state.extra_latency + self.jitter.as_ref().map_or(Duration::ZERO, Service::mean)
    }

    /// Mean time a request holds a worker in `state` (failures are faster), no contention.
    pub fn mean_busy(&self, state: &UpstreamState) -> f64 {
        let f = state.failure_rate;
        self.service.mean().as_secs_f64() * state.service_scale * (1.0 - f + f * self.failure_time)
    }

    /// Requests per second it completes in `state` when busy and not overcommitted (every
    /// worker busy — no more than `shed_at` of them — each slowed by the others' `sharing`).
    pub fn capacity(&self, state: &UpstreamState) -> f64 {
        let workers = state.workers.min(state.shed_at.unwrap_or(usize::MAX)) as f64;
        workers / (self.mean_busy(state) * (1.0 + self.sharing * workers))
    }

    /// Requests per second it *serves successfully* in `state`: the capacity for goodput.
    pub fn good_capacity(&self, state: &UpstreamState) -> f64 {
        self.capacity(state) * (1.0 - state.failure_rate)
    }

    /// p99 response time of a successful request with no queue and no contention (the
    /// jitter included: no limit can take it away), from 20 000 seeded draws (the same every
    /// time).
    pub fn unloaded_p99(&self, state: &UpstreamState) -> Duration {
        let mut rng = SmallRng::seed_from_u64(0x5eed);
        let mut v: Vec<Duration> = (0..20_000)
            .map(|_| {
                let jitter = self
                    .jitter
                    .as_ref()
                    .map_or(Duration::ZERO, |j| j.sample(&mut rng));
                let alone = state.service_scale * (1.0 + self.sharing);
                self.service.sample(&mut rng).mul_f64(alone) + jitter
            })
            .collect();
        v.sort_unstable();
        v[v.len() * 99 / 100] + state.extra_latency
    }

    /// Why the model cannot be simulated, if it cannot.
    ///
    /// # Errors
    ///
    /// Zero workers, a bad distribution, a rate outside `[0, 1]`, changes out of order.
    pub fn validate(&self) -> Result<(), String> {
        self.service.validate()?;
        if let Some(j) = &self.jitter {
            j.validate().map_err(|e| format!("upstream.jitter: {e}"))?;
        }
        let rate_ok = |r: f64| (0.0..1.0).contains(&r);
        if self.workers == 0 {
            return Err("upstream.workers must be at least 1".into());
        }
        if !rate_ok(self.failure_rate) {
            return Err("upstream.failure_rate must be in [0, 1)".into());
        }
        if !(self.failure_time > 0.0 && self.failure_time <= 1.0) {
            return Err("upstream.failure_time must be in (0, 1]".into());
        }
        if !(self.contention.is_finite() && self.contention >= 0.0) {
            return Err("upstream.contention must be >= 0".into());
        }
        if !(self.sharing.is_finite() && self.sharing >= 0.0) {
            return Err("upstream.sharing must be >= 0".into());
        }
        if self.shed_at == Some(0) {
            return Err("upstream.shed_at must be at least 1".into());
        }
        let mut last = Duration::ZERO;
        for c in &self.changes {
            if c.at < last {
                return Err(format!(
                    "upstream.change at {:?} is out of time order",
                    c.at
                ));
            }
            last = c.at;
            if c.workers == Some(0) {
                return Err(format!(
                    "upstream.change at {:?}: workers must be >= 1",
                    c.at
                ));
            }
            if c.service_scale.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
                return Err(format!(
                    "upstream.change at {:?}: service_scale must be > 0",
                    c.at
                ));
            }
            if c.failure_rate.is_some_and(|r| !rate_ok(r)) {
                return Err(format!(
                    "upstream.change at {:?}: failure_rate must be in [0, 1)",
                    c.at
                ));
            }
        }
        Ok(())
    }
}

/// How a call to the upstream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Served.
    Ok,
    /// Failed.
    Failed,
    /// Refused at once: the upstream was full (`shed_at`).
    Shed,
}

/// The running upstream. Thread-safe (a mutex), so the multi-threaded mode can share it.
#[derive(Debug)]
pub struct Upstream {
    inner: Mutex<Inner>,
    model: UpstreamModel,
    /// Tokio time per unit of simulated time.
    scale: u32,
    /// The start of the run in tokio time: ticks count from it.
    origin: tokio::time::Instant,
}

#[derive(Debug)]
struct Inner {
    state: UpstreamState,
    busy: usize,
    waiting: VecDeque<oneshot::Sender<()>>,
    max_seen: usize,
}

impl Upstream {
    /// An idle upstream in the model's initial state, sleeping `scale` × its simulated times
    /// (see [`crate::engine::VIRTUAL_SCALE`]).
    pub fn new(model: UpstreamModel, scale: u32) -> Self {
        Upstream {
            inner: Mutex::new(Inner {
                state: model.initial(),
                busy: 0,
                waiting: VecDeque::new(),
                max_seen: 0,
            }),
            model,
            scale: scale.max(1),
            origin: tokio::time::Instant::now(),
        }
    }

    /// The outcome a failed request reports to the limiter.
    pub fn failures_reported_as(&self) -> Outcome {
        match self.model.failures_reported_as {
            Reported::Ignored => Outcome::Ignored,
            Reported::Success => Outcome::Success,
            Reported::Dropped => Outcome::Dropped,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Switches to `state` (more workers start on the queue at once; fewer take effect as
    /// running requests finish).
    pub fn set_state(&self, state: UpstreamState) {
        self.lock().state = state;
        self.dispatch();
    }

    /// Requests in the upstream (served or queued) right now.
    pub fn in_system(&self) -> usize {
        let i = self.lock();
        i.busy + i.waiting.len()
    }

    /// The most requests ever in the upstream at once.
    pub fn max_in_system(&self) -> usize {
        self.lock().max_seen
    }

    fn dispatch(&self) {
        let mut i = self.lock();
        while i.busy < i.state.workers {
            let Some(tx) = i.waiting.pop_front() else {
                break;
            };
            i.busy += 1;
            // The receiver lives in a call that cannot be cancelled (see `call`).
            let _ = tx.send(());
        }
    }

    /// Serves one request: waits for a worker, then for its service time, then for the
    /// latency outside the workers (and this answer's jitter).
    ///
    /// The simulation never drops this future midway: like a real upstream, work once sent
    /// is finished even if its client has gone.
    pub async fn call(&self, rng: &Mutex<SmallRng>) -> Reply {
        let wait = {
            let mut i = self.lock();
            let n = i.busy + i.waiting.len() + 1;
            if i.state.shed_at.is_some_and(|k| n > k) {
                None
            } else {
                i.max_seen = i.max_seen.max(n);
                if i.busy < i.state.workers {
                    i.busy += 1;
                    Some(None)
                } else {
                    let (tx, rx) = oneshot::channel();
                    i.waiting.push_back(tx);
                    Some(Some(rx))
                }
            }
        };
        let Some(wait) = wait else {
            return self.shed(rng).await;
        };
        if let Some(rx) = wait {
            let _ = rx.await;
        }
        let (service, failed, extra) = {
            let i = self.lock();
            let mut rng = rng.lock().unwrap_or_else(|e| e.into_inner());
            let overcommit = i.waiting.len() as f64 / i.state.workers.max(1) as f64;
            let shared = 1.0 + self.model.sharing * i.busy as f64;
            let slow = (1.0 + self.model.contention * overcommit) * shared * i.state.service_scale;
            let mut service = self.model.service.sample(&mut *rng).mul_f64(slow);
            let failed = rand::Rng::random::<f64>(&mut *rng) < i.state.failure_rate;
            if failed {
                service = service.mul_f64(self.model.failure_time);
            }
            let jitter = self
                .model
                .jitter
                .as_ref()
                .map_or(Duration::ZERO, |j| j.sample(&mut *rng));
            (
                service * self.scale,
                failed,
                (i.state.extra_latency + jitter) * self.scale,
            )
        };
        if self.model.tick.is_zero() {
            sleep_ms_dithered(service, rng).await;
        } else {
            // The end rounded up to the next tick since the run started.
            let tick = (self.model.tick * self.scale).as_nanos().max(1);
            let end = (tokio::time::Instant::now() + service).duration_since(self.origin);
            let ticks = end.as_nanos().div_ceil(tick);
            let end = Duration::from_nanos(u64::try_from(ticks * tick).unwrap_or(u64::MAX));
            tokio::time::sleep_until(self.origin + end).await;
        }
        self.lock().busy -= 1;
        self.dispatch();
        if !extra.is_zero() {
            sleep_ms_dithered(extra, rng).await;
        }
        if failed { Reply::Failed } else { Reply::Ok }
    }

    /// The answer of a full upstream (`shed_at`): no worker, only the latency outside them.
    async fn shed(&self, rng: &Mutex<SmallRng>) -> Reply {
        let extra = {
            let i = self.lock();
            let mut rng = rng.lock().unwrap_or_else(|e| e.into_inner());
            let jitter = self
                .model
                .jitter
                .as_ref()
                .map_or(Duration::ZERO, |j| j.sample(&mut *rng));
            (i.state.extra_latency + jitter) * self.scale
        };
        if !extra.is_zero() {
            sleep_ms_dithered(extra, rng).await;
        }
        Reply::Shed
    }
}

/// Sleeps for `d` on tokio's millisecond timer without its bias: tokio rounds every sleep up
/// to the next millisecond (+0.5 ms on average, 25 % of a 2 ms service), so the whole
/// milliseconds of `d` are slept, plus one more with probability equal to the fraction left.
/// The mean is then exactly `d` at any scale.
async fn sleep_ms_dithered(d: Duration, rng: &Mutex<SmallRng>) {
    let ms = d.as_secs_f64() * 1000.0;
    let whole = ms.floor();
    let up = rand::Rng::random::<f64>(&mut *rng.lock().unwrap_or_else(|e| e.into_inner()));
    let ms = if up < ms - whole { whole + 1.0 } else { whole };
    if ms > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
    }
}
