//! The simulated resource: `c` workers with exponential service times and a FIFO queue of
//! its own, slower when overcommitted, with capacity changes and failures over time.

use rand::Rng;
use rand::rngs::SmallRng;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::sync::oneshot;

/// What the upstream is like at some moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpstreamState {
    /// Requests it can serve at once.
    pub workers: usize,
    /// Mean service time of one request with no contention.
    pub mean_service: Duration,
    /// Probability that a request fails (fast, after a fifth of its service time).
    pub failure_rate: f64,
}

impl UpstreamState {
    /// Requests per second it completes when busy and not overcommitted: `workers / mean`.
    pub fn capacity(&self) -> f64 {
        self.workers as f64 / self.mean_service.as_secs_f64()
    }

    /// p99 latency with no queue and no contention: `mean × ln 100` (exponential service).
    pub fn unloaded_p99(&self) -> Duration {
        self.mean_service.mul_f64(100f64.ln())
    }
}

/// The upstream's settings and how they change over a run.
#[derive(Clone, Debug, PartialEq)]
pub struct UpstreamModel {
    /// The state at `t = 0`.
    pub initial: UpstreamState,
    /// `(at, new state)` changes, in time order.
    pub changes: Vec<(Duration, UpstreamState)>,
    /// Contention: a request that starts service while `q` requests wait in the upstream's
    /// own queue takes `1 + contention × q / workers` times longer (0.5).
    pub contention: f64,
}

impl UpstreamModel {
    /// `workers` servers with mean service time `mean`, no changes, contention 0.5.
    pub fn new(workers: usize, mean: Duration) -> Self {
        UpstreamModel {
            initial: UpstreamState {
                workers,
                mean_service: mean,
                failure_rate: 0.0,
            },
            changes: Vec::new(),
            contention: 0.5,
        }
    }

    /// Adds a change at `at`, built from the state in force just before it.
    pub fn change_at(mut self, at: Duration, f: impl FnOnce(&mut UpstreamState)) -> Self {
        let mut next = self.state_at(at);
        f(&mut next);
        self.changes.push((at, next));
        self
    }

    /// The state in force at `t`.
    pub fn state_at(&self, t: Duration) -> UpstreamState {
        self.changes
            .iter()
            .take_while(|(at, _)| *at <= t)
            .last()
            .map_or(self.initial, |(_, s)| *s)
    }
}

/// How a call to the upstream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Served.
    Ok,
    /// Failed.
    Failed,
}

/// The running upstream (single-threaded: lives inside the simulation's `LocalSet`).
#[derive(Debug)]
pub struct Upstream {
    inner: RefCell<Inner>,
    contention: f64,
}

#[derive(Debug)]
struct Inner {
    state: UpstreamState,
    busy: usize,
    waiting: VecDeque<oneshot::Sender<()>>,
    max_seen: usize,
}

impl Upstream {
    /// An idle upstream in `state`.
    pub fn new(state: UpstreamState, contention: f64) -> Self {
        Upstream {
            inner: RefCell::new(Inner {
                state,
                busy: 0,
                waiting: VecDeque::new(),
                max_seen: 0,
            }),
            contention,
        }
    }

    /// Switches to `state` (more workers start on the queue at once; fewer take effect as
    /// running requests finish).
    pub fn set_state(&self, state: UpstreamState) {
        self.inner.borrow_mut().state = state;
        self.dispatch();
    }

    /// Requests in the upstream (served or queued) right now.
    pub fn in_system(&self) -> usize {
        let i = self.inner.borrow();
        i.busy + i.waiting.len()
    }

    /// The most requests ever in the upstream at once.
    pub fn max_in_system(&self) -> usize {
        self.inner.borrow().max_seen
    }

    fn dispatch(&self) {
        let mut i = self.inner.borrow_mut();
        while i.busy < i.state.workers {
            let Some(tx) = i.waiting.pop_front() else {
                break;
            };
            i.busy += 1;
            // The receiver lives in a call that cannot be cancelled (see `call`).
            let _ = tx.send(());
        }
    }

    /// Serves one request: waits for a worker, then for its service time.
    ///
    /// The simulation never drops this future midway: like a real upstream, work once sent
    /// is finished even if its client has gone.
    pub async fn call(&self, rng: &RefCell<SmallRng>) -> Reply {
        let wait = {
            let mut i = self.inner.borrow_mut();
            let n = i.busy + i.waiting.len() + 1;
            i.max_seen = i.max_seen.max(n);
            if i.busy < i.state.workers {
                i.busy += 1;
                None
            } else {
                let (tx, rx) = oneshot::channel();
                i.waiting.push_back(tx);
                Some(rx)
            }
        };
        if let Some(rx) = wait {
            let _ = rx.await;
        }
        let (service, failed) = {
            let i = self.inner.borrow();
            let mut rng = rng.borrow_mut();
            let overcommit = i.waiting.len() as f64 / i.state.workers.max(1) as f64;
            let slow = 1.0 + self.contention * overcommit;
            let u: f64 = rng.random::<f64>();
            let mut service = i.state.mean_service.mul_f64(-(1.0 - u).ln() * slow);
            let failed = rng.random::<f64>() < i.state.failure_rate;
            if failed {
                service /= 5;
            }
            (service, failed)
        };
        tokio::time::sleep(service).await;
        self.inner.borrow_mut().busy -= 1;
        self.dispatch();
        if failed { Reply::Failed } else { Reply::Ok }
    }
}
