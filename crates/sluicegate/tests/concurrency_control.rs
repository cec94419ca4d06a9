//! Control calls (`reset`, `open`, `drain`, `set_max`), counters and defaults: the cases
//! issue 8 found broken, each pinned by a test that failed before its fix.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use std::sync::Mutex;
use std::time::Duration;

use sluicegate::adaptive::{AdaptiveLimiter, Fixed, LimitAlgorithm, Sample};
use sluicegate::clock::FakeClock;
use sluicegate::concurrency::{ConcurrencyLimiter, Priority, Rejected};

fn poll_once<F: Future>(fut: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    fut.poll(&mut Context::from_waker(std::task::Waker::noop()))
}

/// Defect 2 (issue 8): kill switch on, `reset()` with a permit held, `open()` during the
/// drain, a caller queued at the limit of 0, the permit came back, the reset reopened with
/// the limit of 2 — and the caller used to stay queued forever with nothing in flight. Since
/// ctl121 the `open()` is the reset's end: the limit of 2 comes with it, and the caller is
/// served at once rather than queued at 0.
#[tokio::test(start_paused = true)]
async fn caller_after_an_open_during_a_reset_is_served_at_the_resets_limit() {
    let limiter = served_after_a_reset(ConcurrencyLimiter::open);
    let s = limiter.snapshot();
    assert_eq!((s.in_flight, s.queued, s.completed), (0, 0, 2));
}

/// Kill switch on (`set_max(0)`) in a limiter of 2, `reset()` with a permit held, `control`
/// during the drain (an `open()` last): the reset is over though the permit is held, with
/// the limit of 2, and a caller is served at once. Returns the limiter, every permit back.
fn served_after_a_reset(control: impl FnOnce(&ConcurrencyLimiter)) -> ConcurrencyLimiter {
    let limiter = ConcurrencyLimiter::new(2);
    let held = limiter.try_acquire().unwrap();
    limiter.set_max(0).unwrap();
    {
        let mut reset = pin!(limiter.reset());
        assert!(
            poll_once(reset.as_mut()).is_pending(),
            "drains the held permit"
        );
        control(&limiter);
        assert!(poll_once(reset.as_mut()).is_ready(), "opened: over");
        assert_eq!(limiter.max(), 2, "the reset's limit");
        let mut caller = pin!(limiter.acquire());
        let Poll::Ready(Ok(permit)) = poll_once(caller.as_mut()) else {
            panic!("not served at the reset's limit: {:?}", limiter.snapshot());
        };
        drop((permit, held));
    }
    limiter
}

/// Defect 3 (issue 8): `reset()` restored the builder's limit over the adaptive
/// algorithm's (50 before the reset, 1 after). The algorithm owns the limit now.
#[tokio::test(start_paused = true)]
async fn reset_keeps_the_limit_an_adaptive_algorithm_set() {
    let adaptive = AdaptiveLimiter::new(ConcurrencyLimiter::new(1), Fixed::new(50));
    assert_eq!(adaptive.limit(), 50);
    adaptive.limiter().reset().await;
    assert_eq!(adaptive.limit(), 50);
    // A manual override (the kill switch) is still undone by a reset.
    adaptive.limiter().set_max(0).unwrap();
    adaptive.limiter().reset().await;
    assert_eq!(adaptive.limit(), 50);
}

/// trial102: `timeout(.., limiter.reset())` — a reset with a deadline, while a request that
/// will not end holds a permit — gave up and left the limiter closed for good: every later
/// acquire `Closed`, also after the holder finished. Dropping a reset reopens as its end
/// would (the configured limit, nothing waited for).
#[tokio::test(start_paused = true)]
async fn a_reset_given_up_on_reopens_the_limiter() {
    let limiter = ConcurrencyLimiter::new(2);
    let held = limiter.try_acquire_owned().unwrap();
    limiter.set_max(0).unwrap();
    let gave_up = tokio::time::timeout(Duration::from_secs(5), limiter.reset()).await;
    assert!(
        gave_up.is_err(),
        "the permit is still held: the drain waits"
    );
    assert!(!limiter.is_closed());
    assert_eq!(
        limiter.max(),
        2,
        "the configured limit, as a finished reset"
    );
    let second = limiter.try_acquire().expect("one of the 2 permits is free");
    drop((held, second));
    let s = limiter.snapshot();
    assert_eq!((s.in_flight, s.rejected_closed), (0, 0));
}

/// trial102: the kill switch pressed (`close()`) while a reset drains was undone when the
/// reset ended: the limiter opened again with nobody asking. A `close()` after the reset's
/// own is the later word; the reset leaves it closed, finished or given up on. An `open()`
/// during the drain still lets the reset restore the limit (defect 2 above).
#[tokio::test(start_paused = true)]
async fn a_close_during_a_reset_outlasts_the_reset() {
    let limiter = ConcurrencyLimiter::new(2);
    let held = limiter.try_acquire().unwrap();
    let mut reset = pin!(limiter.reset());
    assert!(
        poll_once(reset.as_mut()).is_pending(),
        "drains the held permit"
    );
    limiter.close();
    drop(held);
    assert!(poll_once(reset.as_mut()).is_ready());
    assert!(
        limiter.is_closed(),
        "the kill switch came after the reset's close"
    );

    limiter.open();
    let held = limiter.try_acquire().unwrap();
    let given_up = tokio::time::timeout(Duration::from_secs(1), async {
        let mut reset = pin!(limiter.reset());
        assert!(poll_once(reset.as_mut()).is_pending());
        limiter.close();
        reset.await;
    })
    .await;
    assert!(given_up.is_err());
    assert!(
        limiter.is_closed(),
        "a reset given up on leaves the kill switch on"
    );
    drop(held);
}

/// review104: the kill switch pressed and lifted again (`close()`, then `open()`) while a
/// reset drains. The `open()` is the later word, as an `open()` alone during the drain is
/// (defect 2 above), and the reset's limit is restored (since ctl121 by the `open()`, the
/// reset's end); it used to see a `close()` after its own and leave the limit where
/// `set_max(0)` put it, with the caller that queued after the `open()` stranded at a limit
/// of 0 and nothing in flight.
#[tokio::test(start_paused = true)]
async fn a_close_lifted_during_a_reset_lets_the_reset_restore_the_limit() {
    let limiter = served_after_a_reset(|limiter| {
        limiter.close();
        limiter.open();
    });
    assert!(!limiter.is_closed());
}

/// ctl121 (review104 §6): two resets overlap — the earlier drains, the later closes after
/// it — and the later is given up on: it reopens at once with the configured limit. The
/// earlier's drain went on against the open, busy limiter, ending only once nothing ran
/// (under steady traffic, never; its caller, an admin request say, hung meanwhile). The
/// later reset's reopen is the earlier's end too.
#[tokio::test(start_paused = true)]
async fn a_reset_superseded_by_a_later_reset_given_up_on_ends_with_it() {
    let limiter = ConcurrencyLimiter::new(2);
    let held = limiter.try_acquire().unwrap();
    let earlier = a_reset_draining(&limiter).await;
    let later = tokio::time::timeout(Duration::from_secs(1), limiter.reset()).await;
    assert!(later.is_err(), "the permit is still held: given up on");
    assert!(!limiter.is_closed(), "the later reset reopened");
    over_though_work_runs(earlier, &limiter).await;
    drop(held);
}

/// A `reset()` of `limiter` in a task of its own, run until it drains.
async fn a_reset_draining(limiter: &ConcurrencyLimiter) -> tokio::task::JoinHandle<()> {
    let reset = tokio::spawn({
        let limiter = limiter.clone();
        async move { limiter.reset().await }
    });
    tokio::task::yield_now().await;
    assert!(limiter.is_closed(), "the reset drains");
    reset
}

/// The reset in `task` is over (a second of paused time is more than enough), and one of
/// the 2 permits of `limiter` is free, the other still held.
async fn over_though_work_runs(task: tokio::task::JoinHandle<()>, limiter: &ConcurrencyLimiter) {
    tokio::time::timeout(Duration::from_secs(1), task)
        .await
        .expect("the reset is over once the limiter is open again")
        .unwrap();
    assert_eq!(limiter.try_acquire().map(drop), Ok(()), "one of 2 is free");
}

/// ctl121: an `open()` while a reset drains is that reset's end: the reset's limit (a kill
/// switch of 0 undone), the limiter open, the reset's future done though a permit is still
/// held. It used to open at the limit of 0 and leave the reset draining an open limiter.
#[tokio::test(start_paused = true)]
async fn an_open_during_a_reset_ends_the_reset_with_its_limit() {
    let limiter = ConcurrencyLimiter::new(2);
    let held = limiter.try_acquire().unwrap();
    limiter.set_max(0).unwrap();
    let reset = a_reset_draining(&limiter).await;
    limiter.open();
    assert_eq!(limiter.max(), 2, "the reset's limit, from the open on");
    over_though_work_runs(reset, &limiter).await;
    drop(held);
}

/// ctl121: the kill switch (`set_max(0)`) pressed after an `open()` ended a reset is the
/// later word. The reset's drain used to go on, and its end — once nothing ran — restored
/// the limit over it: the limiter came back to 2 with nobody asking.
#[tokio::test(start_paused = true)]
async fn a_kill_switch_after_an_open_during_a_reset_is_not_undone_by_the_reset() {
    let limiter = ConcurrencyLimiter::new(2);
    let held = limiter.try_acquire().unwrap();
    let mut reset = Box::pin(limiter.reset());
    assert!(poll_once(reset.as_mut()).is_pending());
    limiter.open();
    limiter.set_max(0).unwrap();
    drop(held);
    assert!(poll_once(reset.as_mut()).is_ready());
    assert_eq!(
        limiter.max(),
        0,
        "the kill switch came after the reset's end"
    );
    assert!(!limiter.is_closed());
}

/// review104: a reset given up on (or a `drain()` dropped) left its waker registered with
/// the limiter, and the drainers' flag set, until nothing ran any more. A given-up reset
/// reopens the limiter, so on a busy one that may be never: each reset given up on from a
/// task of its own (an admin request with a deadline) kept that task's waker, and with the
/// flag every release took the locked slow path. A dropped drain takes its waker back.
#[tokio::test(start_paused = true)]
async fn a_reset_given_up_on_keeps_no_waker() {
    struct Noop;
    impl std::task::Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    let limiter = ConcurrencyLimiter::new(2);
    let held = limiter.try_acquire().unwrap();
    for _ in 0..3 {
        let task = Arc::new(Noop);
        let waker = std::task::Waker::from(task.clone());
        let mut reset = Box::pin(limiter.reset());
        let polled = reset.as_mut().poll(&mut Context::from_waker(&waker));
        assert!(polled.is_pending(), "drains the held permit");
        drop((reset, waker));
        assert!(!limiter.is_closed(), "given up on: reopened");
        assert_eq!(Arc::strong_count(&task), 1, "the limiter kept the waker");
    }
    let mut drain = Box::pin(limiter.drain());
    let task = Arc::new(Noop);
    let waker = std::task::Waker::from(task.clone());
    assert!(
        drain
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending()
    );
    drop((drain, waker));
    assert_eq!(
        Arc::strong_count(&task),
        1,
        "a dropped drain kept its waker"
    );
    drop(held);
    limiter.drain().await;
}

/// Defect 4 (issue 8): a waiter granted a permit at the instant it was cancelled made
/// `admitted` go back by one.
#[tokio::test(start_paused = true)]
async fn cancelling_a_granted_waiter_does_not_take_back_its_admission() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.try_acquire().unwrap();
    let mut waiter = Box::pin(limiter.acquire());
    assert!(poll_once(waiter.as_mut()).is_pending());
    drop(held); // grants the waiter, which has not been polled since
    let before = limiter.snapshot();
    assert_eq!(before.admitted, 2);
    drop(waiter);
    let after = limiter.snapshot();
    assert!(after.admitted >= before.admitted, "{before:?} -> {after:?}");
    assert_eq!(
        (after.in_flight, after.admitted, after.completed),
        (0, 2, 2)
    );
    assert!(limiter.try_acquire().is_ok(), "the permit came back");
}

/// Defect 4 (issue 8): with one thread calling `try_acquire` on a full limiter and another
/// taking snapshots, `admitted` went backwards thousands of times a second (the optimistic
/// increments being taken back). Every counter must only grow.
#[test]
fn counters_never_go_back_while_try_acquire_hammers_a_full_limiter() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.try_acquire_owned().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let hammers: Vec<_> = (0..2)
        .map(|_| {
            let (limiter, stop) = (limiter.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut tries = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    assert!(limiter.try_acquire().is_err());
                    tries += 1;
                }
                tries
            })
        })
        .collect();
    let mut last = limiter.snapshot();
    for _ in 0..200_000 {
        let s = limiter.snapshot();
        assert!(
            s.admitted >= last.admitted,
            "admitted went back: {last:?} -> {s:?}"
        );
        assert!(s.completed >= last.completed, "{last:?} -> {s:?}");
        assert!(s.rejected_queue_full >= last.rejected_queue_full);
        assert!(s.admitted >= s.completed);
        last = s;
    }
    stop.store(true, Ordering::Relaxed);
    let tries: u64 = hammers.into_iter().map(|h| h.join().unwrap()).sum();
    drop(held);
    let s = limiter.snapshot();
    assert_eq!((s.in_flight, s.completed), (0, 1));
    assert_eq!(s.rejected_queue_full, tries);
}

/// Defect 5 (issue 8): `Priority` derived `Default` (0, below `LOW`) while the docs said
/// `NORMAL`, so a client request without a priority queued behind later `LOW` ones.
#[test]
fn default_priority_is_normal() {
    assert_eq!(Priority::default(), Priority::NORMAL);
}

/// Defect 5, as a user meets it: a waiter at the default priority is served before a
/// later `LOW` one.
#[tokio::test(start_paused = true)]
async fn default_priority_waiter_is_served_before_a_later_low_one() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.try_acquire().unwrap();
    let mut plain = pin!(limiter.acquire().priority(Priority::default()));
    let mut low = pin!(limiter.acquire().priority(Priority::LOW));
    assert!(poll_once(plain.as_mut()).is_pending());
    assert!(poll_once(low.as_mut()).is_pending());
    drop(held);
    let Poll::Ready(Ok(permit)) = poll_once(plain.as_mut()) else {
        panic!("the default-priority waiter came first and should hold the permit");
    };
    assert!(poll_once(low.as_mut()).is_pending());
    drop(permit);
    assert!(matches!(poll_once(low.as_mut()), Poll::Ready(Ok(_))));
}

/// Issue 14: a snapshot prints as one line a person can read.
#[tokio::test(start_paused = true)]
async fn snapshot_prints_gauges_then_the_counters_that_moved() {
    let limiter = ConcurrencyLimiter::builder(1).max_queue(0).build().unwrap();
    let held = limiter.try_acquire().unwrap();
    let _health = limiter.acquire_bypass();
    assert!(limiter.try_acquire().is_err());
    limiter.close();
    assert_eq!(
        limiter.snapshot().to_string(),
        "limit 1, 1 in flight, 0 queued, 1 bypassing, closed; admitted 1, completed 0, \
         bypassed 1, rejected (queue full) 1"
    );
    drop(held);
}

/// One clock per limiter (issue 8): the blocking acquire's timeout reads the limiter's clock,
/// so a `FakeClock` moved past the deadline ends the wait (it used to read `Instant`).
#[test]
fn blocking_timeout_follows_the_limiters_fake_clock() {
    let clock = FakeClock::new();
    let limiter = ConcurrencyLimiter::builder(1)
        .queue_timeout(Duration::from_secs(3600))
        .clock(clock.clone())
        .build()
        .unwrap();
    let held = limiter.try_acquire_owned().unwrap();
    let waiter = std::thread::spawn({
        let limiter = limiter.clone();
        move || limiter.acquire_blocking().map(drop)
    });
    while limiter.snapshot().queued == 0 {
        std::thread::yield_now();
    }
    clock.advance(Duration::from_secs(3601));
    let outcome = waiter.join().unwrap();
    assert!(
        matches!(outcome, Err(Rejected::QueueTimeout { .. })),
        "{outcome:?}"
    );
    drop(held);
}

/// Records the latency of each sample.
#[derive(Debug, Default)]
struct Latencies(Arc<Mutex<Vec<Duration>>>);

impl LimitAlgorithm for Latencies {
    fn name(&self) -> &'static str {
        "latencies"
    }
    fn limit(&self) -> usize {
        4
    }
    fn on_sample(&mut self, sample: &Sample) -> usize {
        self.0.lock().unwrap().push(sample.latency);
        4
    }
}

/// An adaptive limiter on a fake clock that records its samples' latencies.
fn recorded() -> (FakeClock, AdaptiveLimiter, Arc<Mutex<Vec<Duration>>>) {
    let clock = FakeClock::new();
    let limiter = ConcurrencyLimiter::builder(1)
        .clock(clock.clone())
        .build()
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let adaptive = AdaptiveLimiter::new(limiter, Latencies(seen.clone()));
    (clock, adaptive, seen)
}

/// One clock per limiter (issue 8): the adaptive limiter times its samples with the wrapped
/// limiter's clock (it used to read tokio's time whatever the limiter was given).
#[tokio::test]
async fn adaptive_samples_are_timed_with_the_limiters_clock() {
    let (clock, adaptive, seen) = recorded();
    let permit = adaptive.acquire().await.unwrap();
    clock.advance(Duration::from_millis(250));
    permit.success();
    assert_eq!(*seen.lock().unwrap(), [Duration::from_millis(250)]);
}

/// Time excluded from a permit (a client's slow upload, in the gate) is not the service's:
/// the sample leaves it out, and never goes below zero. Defect pinned: a proxy had no way
/// to keep a client's upload time out of the latency its adaptive limit learns from, so
/// slow uploads read as a slow service.
#[tokio::test]
async fn excluded_time_is_left_out_of_the_sample() {
    let (clock, adaptive, seen) = recorded();
    let ms = Duration::from_millis;

    let mut p = adaptive.acquire().await.unwrap();
    clock.advance(ms(900));
    p.exclude(ms(800));
    clock.advance(ms(50));
    p.success();

    let mut q = adaptive.acquire().await.unwrap();
    clock.advance(ms(10));
    q.exclude(ms(7));
    q.exclude(ms(7));
    q.success();

    assert_eq!(*seen.lock().unwrap(), [ms(150), Duration::ZERO]);
}
