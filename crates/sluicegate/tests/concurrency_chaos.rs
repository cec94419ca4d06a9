//! Randomized stress of the concurrency limiter with the control calls in the mix: tasks
//! on a multi-thread runtime and a blocking thread acquire with random priorities, timeouts
//! and drops, while a controller calls `set_max`, `close`, `open`, `reset` and `drain` at
//! random, and a monitor takes snapshots. After every run: nothing in flight, nothing
//! queued, every arrival counted under exactly one outcome, every counter monotonic, no
//! waiter left behind, and concurrency never above the limit in effect.
//!
//! Bounded for the suite (`SLUICEGATE_STRESS_SECS`, default 8 s in runs of about 0.5 s);
//! `scripts/soak` runs it for long.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng, rngs::SmallRng};
use sluicegate::concurrency::{ConcurrencyLimiter, Priority, QueueOrder, Rejected, Snapshot};

/// The builder's limit, which `reset` restores.
const CONFIGURED: usize = 3;
/// Limits the controller picks from (0 is the kill switch).
const LIMITS: [usize; 6] = [0, 1, 2, 3, 4, 6];

/// What the callers saw, to compare with the limiter's counters.
#[derive(Default)]
struct Seen {
    arrived: AtomicU64,
    admitted: AtomicU64,
    queue_full: AtomicU64,
    closed: AtomicU64,
    predicted: AtomicU64,
    timed_out: AtomicU64,
    /// Futures dropped while pending: cancelled, or granted at that instant (the limiter
    /// then counts them admitted).
    dropped: AtomicU64,
}

impl Seen {
    fn record<T>(&self, outcome: &Result<T, Rejected>) {
        let counter = match outcome {
            Ok(_) => &self.admitted,
            Err(Rejected::QueueFull { .. }) => &self.queue_full,
            Err(Rejected::Closed { .. }) => &self.closed,
            Err(Rejected::PredictedTimeout { .. }) => &self.predicted,
            Err(Rejected::QueueTimeout { .. }) => &self.timed_out,
            Err(other) => panic!("unknown rejection {other:?}"),
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The test's view of concurrency: holders count themselves in after they get a permit and
/// out before they release it, so `running` never exceeds the limiter's `in_flight`.
#[derive(Default)]
struct Guard {
    running: AtomicUsize,
    /// The highest concurrency allowed now: raised before a raise takes effect, tightened
    /// to the limit only once a drain proved every permit from before a lowering gone.
    ceiling: AtomicUsize,
}

impl Guard {
    fn enter(&self, limiter: &ConcurrencyLimiter) {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        let ceiling = self.ceiling.load(Ordering::SeqCst);
        assert!(
            now <= ceiling,
            "{now} running, allowed {ceiling}: {}",
            limiter.snapshot()
        );
    }

    fn leave(&self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Run {
    limiter: ConcurrencyLimiter,
    seen: Seen,
    guard: Guard,
    stop: AtomicBool,
}

fn deadline_from_env() -> Duration {
    let secs = std::env::var("SLUICEGATE_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(8.0);
    Duration::from_secs_f64(secs)
}

#[test]
fn random_traffic_and_control_calls_keep_every_promise() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(3)
        .enable_time()
        .build()
        .unwrap();
    let total = deadline_from_env();
    let started = Instant::now();
    let mut seed = std::env::var("SLUICEGATE_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    let mut runs = 0;
    while runs == 0 || started.elapsed() < total {
        eprintln!("run {runs}: SLUICEGATE_STRESS_SEED={seed}");
        runtime.block_on(one_run(seed, Duration::from_millis(500)));
        seed = seed.wrapping_add(1);
        runs += 1;
    }
    eprintln!("{runs} runs in {:?}", started.elapsed());
}

async fn one_run(seed: u64, length: Duration) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let predictive = rng.random_bool(0.3);
    let mut builder = ConcurrencyLimiter::builder(CONFIGURED)
        .max_queue(rng.random_range(0..16))
        .order(if rng.random_bool(0.5) {
            QueueOrder::Fifo
        } else {
            QueueOrder::Lifo
        });
    if predictive || rng.random_bool(0.5) {
        builder = builder.queue_timeout(Duration::from_micros(rng.random_range(200..5_000)));
    }
    let run = Arc::new(Run {
        limiter: builder.predictive(predictive).build().unwrap(),
        seen: Seen::default(),
        guard: Guard {
            running: AtomicUsize::new(0),
            ceiling: AtomicUsize::new(CONFIGURED),
        },
        stop: AtomicBool::new(false),
    });

    let monitor = std::thread::spawn({
        let run = run.clone();
        move || monitor(&run)
    });
    let blocking = std::thread::spawn({
        let (run, seed) = (run.clone(), rng.random());
        move || blocking_caller(&run, seed)
    });
    let callers: Vec<_> = (0..12)
        .map(|_| tokio::spawn(caller(run.clone(), rng.random())))
        .collect();
    let controller = tokio::spawn(controller(run.clone(), rng.random()));

    tokio::time::sleep(length).await;
    run.stop.store(true, Ordering::SeqCst);
    // Everything below ends in a bounded time unless a waiter or a drainer was left
    // behind (or a permit leaked, so a drain never ends).
    tokio::time::timeout(STUCK, controller)
        .await
        .unwrap_or_else(|_| stuck(&run, "a reset or drain"))
        .unwrap();
    // The controller left the limiter open at a limit above 0: every waiter still queued
    // must now be served or time out.
    for caller in callers {
        tokio::time::timeout(STUCK, caller)
            .await
            .unwrap_or_else(|_| stuck(&run, "a waiter"))
            .unwrap();
    }
    for thread in [blocking, monitor] {
        let waited = Instant::now();
        while !thread.is_finished() {
            if waited.elapsed() > STUCK {
                stuck(&run, "a blocking waiter");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        thread.join().unwrap();
    }
    check_settled(&run);
}

fn stuck(run: &Run, what: &str) -> ! {
    panic!("{what} left behind: {}", run.limiter.snapshot())
}

/// Far longer than anything in a run takes, even on a loaded machine.
const STUCK: Duration = Duration::from_secs(30);

/// An async caller: random priority, timeout, patience (a drop while pending), hold time.
async fn caller(run: Arc<Run>, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    while !run.stop.load(Ordering::Relaxed) {
        // An acquire that ends at once never yields: without this, callers starve the
        // runtime's timers.
        tokio::task::yield_now().await;
        run.seen.arrived.fetch_add(1, Ordering::Relaxed);
        let mut acquire = run
            .limiter
            .acquire_owned()
            .priority(Priority(rng.random_range(126..=130)));
        if rng.random_bool(0.3) {
            acquire = acquire.timeout(Some(Duration::from_micros(rng.random_range(100..3_000))));
        }
        let outcome = if rng.random_bool(0.3) {
            let patience = Duration::from_micros(rng.random_range(10..2_000));
            match tokio::time::timeout(patience, acquire).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    run.seen.dropped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
        } else {
            acquire.await
        };
        run.seen.record(&outcome);
        if let Ok(permit) = outcome {
            run.guard.enter(&run.limiter);
            for _ in 0..rng.random_range(0..3) {
                tokio::task::yield_now().await;
            }
            if rng.random_bool(0.2) {
                tokio::time::sleep(Duration::from_micros(rng.random_range(10..500))).await;
            }
            run.guard.leave();
            drop(permit);
        }
    }
}

/// A plain thread: `try_acquire` and the blocking acquire, in the same queue.
fn blocking_caller(run: &Run, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    while !run.stop.load(Ordering::Relaxed) {
        run.seen.arrived.fetch_add(1, Ordering::Relaxed);
        let outcome = if rng.random_bool(0.5) {
            run.limiter.try_acquire()
        } else {
            run.limiter.acquire_blocking()
        };
        run.seen.record(&outcome);
        if let Ok(permit) = outcome {
            run.guard.enter(&run.limiter);
            std::thread::yield_now();
            run.guard.leave();
            drop(permit);
        }
    }
}

/// Random control calls. Raising the ceiling comes before a raise takes effect; it is
/// tightened only after a drain, which proves every older permit gone.
async fn controller(run: Arc<Run>, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let limiter = &run.limiter;
    let ceiling = &run.guard.ceiling;
    while !run.stop.load(Ordering::Relaxed) {
        match rng.random_range(0..10) {
            0..=3 => {
                let n = LIMITS[rng.random_range(0..LIMITS.len())];
                ceiling.fetch_max(n, Ordering::SeqCst);
                limiter.set_max(n).unwrap();
            }
            4 => limiter.close(),
            5 => limiter.open(),
            6 => {
                ceiling.fetch_max(CONFIGURED, Ordering::SeqCst);
                limiter.reset().await;
                ceiling.store(CONFIGURED, Ordering::SeqCst);
            }
            7 => {
                // A drain may wait for the kill switch's holders; bound it.
                let max = limiter.max();
                if tokio::time::timeout(Duration::from_millis(20), limiter.drain())
                    .await
                    .is_ok()
                    && limiter.max() == max
                {
                    ceiling.store(max.max(1), Ordering::SeqCst);
                }
            }
            _ => {}
        }
        let pause = Duration::from_micros(rng.random_range(50..3_000));
        tokio::time::sleep(pause).await;
    }
    // Leave it usable, so nothing waits forever on the kill switch.
    ceiling.fetch_max(CONFIGURED, Ordering::SeqCst);
    limiter.set_max(CONFIGURED).unwrap();
    limiter.open();
}

/// Snapshots throughout the run: every counter only grows.
fn monitor(run: &Run) {
    let mut last = run.limiter.snapshot();
    while !run.stop.load(Ordering::Relaxed) {
        let s = run.limiter.snapshot();
        let pairs = [
            ("admitted", last.admitted, s.admitted),
            ("completed", last.completed, s.completed),
            ("bypassed", last.bypassed, s.bypassed),
            (
                "rejected_queue_full",
                last.rejected_queue_full,
                s.rejected_queue_full,
            ),
            ("rejected_closed", last.rejected_closed, s.rejected_closed),
            (
                "rejected_predicted",
                last.rejected_predicted,
                s.rejected_predicted,
            ),
            ("timed_out", last.timed_out, s.timed_out),
            ("cancelled", last.cancelled, s.cancelled),
        ];
        for (name, before, after) in pairs {
            assert!(after >= before, "{name} went back: {last} -> {s}");
        }
        assert!(s.admitted >= s.completed, "{s}");
        last = s;
        std::thread::yield_now();
    }
}

/// Threads that may race an optimistic increment past a snapshot (callers, the blocking
/// thread), with room to spare.
const RACERS: u64 = 16;

fn check_settled(run: &Run) {
    let before = run.limiter.snapshot();
    // `admitted` may run ahead by an increment a snapshot caught in passing (at most one
    // per racing thread, see `Snapshot`) until real admissions make up for it: make them.
    for _ in 0..RACERS {
        drop(run.limiter.try_acquire().expect("open, nothing held"));
    }
    let s: Snapshot = run.limiter.snapshot();
    assert!(s.admitted <= before.admitted + RACERS, "{before} -> {s}");
    let seen = &run.seen;
    let load = |c: &AtomicU64| c.load(Ordering::SeqCst);
    let admitted = load(&seen.admitted) + RACERS;
    assert_eq!((s.in_flight, s.queued), (0, 0), "{s}");
    assert_eq!(run.guard.running.load(Ordering::SeqCst), 0);
    assert_eq!(s.completed, s.admitted, "{s}");
    assert_eq!(s.rejected_queue_full, load(&seen.queue_full), "{s}");
    assert_eq!(s.rejected_predicted, load(&seen.predicted), "{s}");
    assert_eq!(s.timed_out, load(&seen.timed_out), "{s}");
    // A future dropped while pending was still queued (cancelled), or was granted or
    // closed at that instant without seeing it.
    assert!(s.rejected_closed >= load(&seen.closed), "{s}");
    assert_eq!(
        s.admitted + s.cancelled + s.rejected_closed,
        admitted + load(&seen.dropped) + load(&seen.closed),
        "{s}"
    );
    assert_eq!(
        s.arrived(),
        load(&seen.arrived) + RACERS,
        "every arrival, one outcome: {s}"
    );
}
