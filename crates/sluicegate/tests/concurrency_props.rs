//! Property tests: random sequences of acquire / release / cancel / timeout / set_max /
//! close / open / reset never break the limiter's promises.
//!
//! Every step ends by polling every waiting future, so "granted" and "held" coincide and the
//! model can compare its own tally with the limiter's snapshot exactly.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use proptest::prelude::*;
use sluicegate::concurrency::{
    AcquireOwned, ConcurrencyLimiter, OwnedPermit, Priority, QueueOrder, Rejected,
};

#[derive(Clone, Debug)]
enum Op {
    Acquire {
        priority: u8,
        patient: bool,
    },
    TryAcquire,
    Release(usize),
    Cancel(usize),
    /// Release a permit and, before anyone polls, drop a waiter (maybe the one just granted).
    ReleaseThenCancel(usize, usize),
    Advance(u64),
    SetMax(usize),
    Close,
    Open,
    /// Start a `reset()` (polled once here, and with every waiter after each step).
    Reset,
    /// Give up on a running reset (drop its future).
    DropReset(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..3, any::<bool>()).prop_map(|(priority, patient)| Op::Acquire { priority, patient }),
        1 => Just(Op::TryAcquire),
        3 => any::<usize>().prop_map(Op::Release),
        1 => any::<usize>().prop_map(Op::Cancel),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::ReleaseThenCancel(a, b)),
        1 => (1u64..150).prop_map(Op::Advance),
        1 => (0usize..5).prop_map(Op::SetMax),
        1 => prop_oneof![9 => Just(Op::Open), 1 => Just(Op::Close)],
        1 => prop_oneof![2 => Just(Op::Reset), 1 => any::<usize>().prop_map(Op::DropReset)],
    ]
}

struct Waiting {
    id: u64,
    priority: u8,
    future: Pin<Box<AcquireOwned>>,
}

/// The test's own tally of what happened, and the strongest limit it may have seen.
#[derive(Default, Debug)]
struct Tally {
    arrived: u64,
    admitted: u64,
    queue_full: u64,
    closed: u64,
    timed_out: u64,
    cancelled: u64,
    completed: u64,
}

/// A reset's future and which close was its own.
struct Resetting {
    close: u64,
    future: Pin<Box<dyn Future<Output = ()>>>,
}

/// What the control calls should have left, by the rules of
/// docs/concurrency-state-machine.md ("Resets and the calls that overlap them"), kept with
/// plain sets rather than the limiter's counters under its lock.
#[derive(Debug)]
struct Control {
    closed: bool,
    limit: usize,
    /// The builder's limit: the one a reset's end restores.
    reset_limit: usize,
    closes: u64,
    /// Resets started and not ended, by their own close.
    running: Vec<u64>,
}

impl Control {
    /// A reopen: `open()` (restoring the limit while a reset runs), or a reset's end. It
    /// ends every running reset.
    fn reopen(&mut self, restore: bool) {
        if restore || !self.running.is_empty() {
            self.limit = self.reset_limit;
        }
        self.running.clear();
        self.closed = false;
    }

    /// Reset `close` is over (its drain, or given up on).
    fn end(&mut self, close: u64) {
        if !self.running.contains(&close) {
            return; // ended by a reopen since
        }
        if self.closes == close {
            self.reopen(true);
        } else {
            self.running.retain(|&c| c != close);
        }
    }
}

struct Model {
    limiter: &'static ConcurrencyLimiter,
    resets: Vec<Resetting>,
    control: Control,
    held: Vec<OwnedPermit>,
    waiting: Vec<Waiting>,
    tally: Tally,
    /// Highest in-flight allowed now: the limit, or more right after a lowering, while the
    /// work that was already running finishes.
    cap: usize,
    next_id: u64,
    /// Admission order of waiters, per priority.
    admitted_ids: BTreeMap<u8, Vec<u64>>,
    fifo: bool,
}

impl Model {
    fn poll_all(&mut self) {
        let mut cx = Context::from_waker(Waker::noop());
        let mut still = Vec::new();
        for mut w in std::mem::take(&mut self.waiting) {
            match w.future.as_mut().poll(&mut cx) {
                Poll::Pending => still.push(w),
                Poll::Ready(result) => {
                    if result.is_ok() {
                        self.admitted_ids.entry(w.priority).or_default().push(w.id);
                    }
                    self.record(result);
                }
            }
        }
        self.waiting = still;
        let mut still = Vec::new();
        for mut r in std::mem::take(&mut self.resets) {
            match r.future.as_mut().poll(&mut cx) {
                Poll::Pending => still.push(r),
                Poll::Ready(()) => self.reset_over(r.close),
            }
        }
        self.resets = still;
    }

    fn reset_over(&mut self, close: u64) {
        let restores = self.control.running.contains(&close) && self.control.closes == close;
        self.control.end(close);
        if restores {
            self.cap = self.cap.max(self.control.limit);
        }
    }

    fn reopened(&mut self) {
        self.cap = self.cap.max(self.control.limit);
    }

    fn record(&mut self, result: Result<OwnedPermit, Rejected>) {
        match result {
            Ok(permit) => {
                self.tally.admitted += 1;
                self.held.push(permit);
            }
            Err(Rejected::QueueFull { .. }) => self.tally.queue_full += 1,
            Err(Rejected::Closed { .. }) => self.tally.closed += 1,
            Err(Rejected::QueueTimeout { .. }) => self.tally.timed_out += 1,
            Err(r) => panic!("predictive is off: {r:?}"),
        }
    }

    fn release(&mut self, i: usize) {
        if !self.held.is_empty() {
            let permit = self.held.swap_remove(i % self.held.len());
            drop(permit);
            self.tally.completed += 1;
            self.cap = self.cap.saturating_sub(1).max(self.limiter.max());
        }
    }

    fn cancel(&mut self, i: usize) {
        if !self.waiting.is_empty() {
            let waiter = self.waiting.remove(i % self.waiting.len());
            // Whether it still waited or had been granted a permit it never saw, only the
            // limiter knows; the other counters must agree with its answer.
            let cancelled = self.limiter.snapshot().cancelled;
            drop(waiter);
            if self.limiter.snapshot().cancelled > cancelled {
                self.tally.cancelled += 1;
            } else {
                // Granted by a release, dropped before it saw the permit: admitted, and the
                // permit came back at once.
                self.tally.admitted += 1;
                self.tally.completed += 1;
            }
        }
    }

    async fn apply(&mut self, op: Op) {
        match op {
            Op::Acquire { priority, patient } => {
                self.tally.arrived += 1;
                let priority = [Priority::LOW, Priority::NORMAL, Priority::HIGH][priority as usize];
                let mut future = self.limiter.acquire_owned().priority(priority);
                if patient {
                    future = future.timeout(None);
                }
                self.next_id += 1;
                self.waiting.push(Waiting {
                    id: self.next_id,
                    priority: priority.0,
                    future: Box::pin(future),
                });
            }
            Op::TryAcquire => {
                self.tally.arrived += 1;
                let result = self.limiter.try_acquire().map(|p| {
                    drop(p);
                    self.tally.completed += 1;
                });
                match result {
                    Ok(()) => self.tally.admitted += 1,
                    Err(Rejected::QueueFull { .. }) => self.tally.queue_full += 1,
                    Err(Rejected::Closed { .. }) => self.tally.closed += 1,
                    Err(other) => panic!("try_acquire never waits: {other:?}"),
                }
            }
            Op::Release(i) => self.release(i),
            Op::Cancel(i) => self.cancel(i),
            Op::ReleaseThenCancel(i, j) => {
                self.release(i);
                self.cancel(j);
            }
            Op::Advance(ms) => tokio::time::advance(Duration::from_millis(ms)).await,
            Op::SetMax(n) => {
                let in_flight = self.limiter.snapshot().in_flight;
                self.limiter.set_max(n).unwrap();
                self.control.limit = n;
                self.cap = n.max(in_flight);
            }
            Op::Close => {
                self.limiter.close();
                self.control.closes += 1;
                self.control.closed = true;
            }
            Op::Open => {
                self.limiter.open();
                self.control.reopen(false);
                self.reopened();
            }
            Op::Reset => {
                self.control.closes += 1;
                self.control.closed = true;
                let close = self.control.closes;
                self.control.running.push(close);
                let mut future: Pin<Box<dyn Future<Output = ()>>> = Box::pin(self.limiter.reset());
                if future
                    .as_mut()
                    .poll(&mut Context::from_waker(Waker::noop()))
                    .is_ready()
                {
                    self.reset_over(close);
                } else {
                    self.resets.push(Resetting { close, future });
                }
            }
            Op::DropReset(i) => {
                if !self.resets.is_empty() {
                    let given_up = self.resets.remove(i % self.resets.len());
                    drop(given_up.future);
                    self.reset_over(given_up.close);
                }
            }
        }
        self.poll_all();
    }

    fn check(&self) {
        let s = self.limiter.snapshot();
        let t = &self.tally;
        let c = &self.control;
        assert_eq!(s.closed, c.closed, "closed: {c:?}");
        assert_eq!(s.limit, c.limit, "the limit: {c:?}");
        for r in &self.resets {
            assert!(
                c.running.contains(&r.close),
                "reset {} still waits though a reopen ended it: {c:?}",
                r.close
            );
            assert!(
                s.in_flight > 0,
                "reset {} waits with nothing running",
                r.close
            );
        }
        assert_eq!(
            s.in_flight,
            self.held.len(),
            "granted permits are held: {s:?}"
        );
        assert!(
            s.in_flight <= self.cap,
            "{} in flight, allowed {}",
            s.in_flight,
            self.cap
        );
        assert_eq!(s.queued, self.waiting.len());
        assert_eq!(s.admitted, t.admitted, "{s:?} {t:?}");
        assert_eq!(s.completed, t.completed);
        assert_eq!(s.rejected_queue_full, t.queue_full);
        assert_eq!(s.rejected_closed, t.closed);
        assert_eq!(s.timed_out, t.timed_out);
        assert_eq!(s.cancelled, t.cancelled);
        assert_eq!(s.arrived(), t.arrived, "counters balance");
        if self.fifo {
            for (priority, ids) in &self.admitted_ids {
                assert!(
                    ids.is_sorted(),
                    "FIFO broken within priority {priority}: {ids:?}"
                );
            }
        }
    }
}

fn run(max: usize, max_queue: usize, order: QueueOrder, ops: Vec<Op>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        // Leaked: the resets' futures borrow it for as long as the model holds them.
        let limiter: &'static ConcurrencyLimiter = Box::leak(Box::new(
            ConcurrencyLimiter::builder(max)
                .max_queue(max_queue)
                .queue_timeout(Duration::from_millis(100))
                .order(order)
                .build()
                .unwrap(),
        ));
        let mut model = Model {
            limiter,
            resets: Vec::new(),
            control: Control {
                closed: false,
                limit: max,
                reset_limit: max,
                closes: 0,
                running: Vec::new(),
            },
            held: Vec::new(),
            waiting: Vec::new(),
            tally: Tally::default(),
            cap: max,
            next_id: 0,
            admitted_ids: BTreeMap::new(),
            fifo: order == QueueOrder::Fifo,
        };
        for op in ops {
            model.apply(op).await;
            model.check();
        }
        // Wind down: give everything back, wait out every timeout; nothing may be left.
        model.limiter.set_max(8).unwrap();
        model.control.limit = 8;
        model.cap = model.cap.max(8);
        while !model.held.is_empty() {
            model.release(0);
            model.poll_all();
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        model.poll_all();
        while !model.held.is_empty() {
            model.release(0);
            model.poll_all();
        }
        assert!(model.resets.is_empty(), "nothing runs: every reset is over");
        model.limiter.close();
        model.control.closes += 1;
        model.control.closed = true;
        model.poll_all();
        model.check();
        let s = model.limiter.snapshot();
        assert_eq!((s.in_flight, s.queued), (0, 0));
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_operations_keep_every_promise(
        max in 0usize..4,
        max_queue in 0usize..6,
        lifo in any::<bool>(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let order = if lifo { QueueOrder::Lifo } else { QueueOrder::Fifo };
        run(max, max_queue, order, ops);
    }
}
