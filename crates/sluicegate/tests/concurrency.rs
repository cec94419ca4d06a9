//! Behaviour of the concurrency limiter, in paused tokio time.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};
use std::time::Duration;

use sluicegate::concurrency::{ConcurrencyLimiter, ConfigError, Priority, QueueOrder, Rejected};

fn poll_once<F: Future>(fut: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    let waker = std::task::Waker::noop();
    fut.poll(&mut Context::from_waker(waker))
}

#[tokio::test(start_paused = true)]
async fn permits_never_exceed_max_and_come_back_on_drop() {
    let limiter = ConcurrencyLimiter::new(2);
    let a = limiter.try_acquire().unwrap();
    let _b = limiter.try_acquire().unwrap();
    assert!(matches!(
        limiter.try_acquire(),
        Err(Rejected::QueueFull { .. })
    ));
    drop(a);
    let _c = limiter.try_acquire().unwrap();
    let s = limiter.snapshot();
    assert_eq!((s.in_flight, s.admitted, s.completed), (2, 3, 1));
}

#[tokio::test(start_paused = true)]
async fn released_permit_goes_to_the_first_waiter() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.try_acquire().unwrap();
    let mut first = pin!(limiter.acquire());
    let mut second = pin!(limiter.acquire());
    assert!(poll_once(first.as_mut()).is_pending());
    assert!(poll_once(second.as_mut()).is_pending());
    // A newcomer cannot barge past the queue, even the moment a permit frees up.
    drop(held);
    assert!(limiter.try_acquire().is_err());
    let Poll::Ready(Ok(permit)) = poll_once(first.as_mut()) else {
        panic!("first waiter should hold the permit");
    };
    assert!(poll_once(second.as_mut()).is_pending());
    drop(permit);
    assert!(matches!(poll_once(second.as_mut()), Poll::Ready(Ok(_))));
}

#[tokio::test(start_paused = true)]
async fn lifo_serves_the_newest_waiter_first() {
    let limiter = ConcurrencyLimiter::builder(1)
        .order(QueueOrder::Lifo)
        .build()
        .unwrap();
    let held = limiter.try_acquire().unwrap();
    let mut old = pin!(limiter.acquire());
    let mut new = pin!(limiter.acquire());
    assert!(poll_once(old.as_mut()).is_pending());
    assert!(poll_once(new.as_mut()).is_pending());
    drop(held);
    assert!(poll_once(old.as_mut()).is_pending());
    assert!(matches!(poll_once(new.as_mut()), Poll::Ready(Ok(_))));
}

#[tokio::test(start_paused = true)]
async fn higher_priority_waiter_is_served_first() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.try_acquire().unwrap();
    let mut low = pin!(limiter.acquire().priority(Priority::LOW));
    let mut high = pin!(limiter.acquire().priority(Priority::HIGH));
    assert!(poll_once(low.as_mut()).is_pending());
    assert!(poll_once(high.as_mut()).is_pending());
    drop(held);
    assert!(poll_once(low.as_mut()).is_pending());
    assert!(matches!(poll_once(high.as_mut()), Poll::Ready(Ok(_))));
}

/// A caller standing in for one that already waits elsewhere (the gate's hand-over between
/// limiters) waits past a full queue, in its priority's place, where a new caller is
/// refused; with a queue of 0 too.
#[tokio::test(start_paused = true)]
async fn a_caller_past_a_full_queue_waits_in_its_place() {
    for max_queue in [0, 1] {
        let limiter = ConcurrencyLimiter::builder(1)
            .max_queue(max_queue)
            .build()
            .unwrap();
        let held = limiter.try_acquire().unwrap();
        let mut own = pin!(limiter.acquire());
        if max_queue == 1 {
            assert!(poll_once(own.as_mut()).is_pending());
        }
        let err = limiter.acquire().await.unwrap_err();
        assert!(matches!(err, Rejected::QueueFull { .. }), "{err:?}");
        let mut handed = pin!(
            limiter
                .acquire()
                .priority(Priority::HIGH)
                .past_a_full_queue()
        );
        assert!(poll_once(handed.as_mut()).is_pending(), "queue {max_queue}");
        assert_eq!(limiter.snapshot().queued, max_queue + 1);
        drop(held);
        let Poll::Ready(Ok(first)) = poll_once(handed.as_mut()) else {
            panic!("the caller in line first is served first (queue {max_queue})");
        };
        if max_queue == 1 {
            assert!(poll_once(own.as_mut()).is_pending());
            drop(first);
            assert!(matches!(poll_once(own.as_mut()), Poll::Ready(Ok(_))));
        }
    }
}

#[tokio::test(start_paused = true)]
async fn full_queue_rejects_at_once() {
    let limiter = ConcurrencyLimiter::builder(1).max_queue(1).build().unwrap();
    let _held = limiter.try_acquire().unwrap();
    let mut waiting = pin!(limiter.acquire());
    assert!(poll_once(waiting.as_mut()).is_pending());
    let err = limiter.acquire().await.unwrap_err();
    assert!(matches!(err, Rejected::QueueFull { .. }), "{err:?}");
    assert_eq!(limiter.snapshot().rejected_queue_full, 1);
}

#[tokio::test(start_paused = true)]
async fn waiter_times_out_after_queue_timeout() {
    let limiter = ConcurrencyLimiter::builder(1)
        .queue_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let _held = limiter.try_acquire().unwrap();
    let started = tokio::time::Instant::now();
    let err = limiter.acquire().await.unwrap_err();
    assert!(matches!(err, Rejected::QueueTimeout { .. }), "{err:?}");
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    let s = limiter.snapshot();
    assert_eq!((s.timed_out, s.queued), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn dropped_waiter_leaves_the_queue() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.try_acquire().unwrap();
    {
        let mut waiting = pin!(limiter.acquire());
        assert!(poll_once(waiting.as_mut()).is_pending());
        assert_eq!(limiter.snapshot().queued, 1);
    }
    let s = limiter.snapshot();
    assert_eq!((s.queued, s.cancelled), (0, 1));
    drop(held);
    // The permit went back to the pool, not to the cancelled waiter.
    assert!(limiter.try_acquire().is_ok());
}

#[tokio::test(start_paused = true)]
async fn permit_passes_to_next_waiter_when_winner_is_dropped() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.try_acquire().unwrap();
    let mut winner = Box::pin(limiter.acquire());
    let mut next = pin!(limiter.acquire());
    assert!(poll_once(winner.as_mut()).is_pending());
    assert!(poll_once(next.as_mut()).is_pending());
    drop(held); // granted to `winner`, which is dropped before it sees it
    drop(winner);
    let Poll::Ready(Ok(_permit)) = poll_once(next.as_mut()) else {
        panic!("the permit should have passed on");
    };
    // The winner was granted, so it stays admitted (counters never go back) and its permit
    // came back as completed at once; it is not also counted as cancelled.
    let s = limiter.snapshot();
    assert_eq!(
        (s.admitted, s.completed, s.cancelled, s.in_flight),
        (3, 2, 0, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn raising_the_limit_admits_waiters_at_once() {
    let limiter = ConcurrencyLimiter::new(1);
    let _held = limiter.try_acquire().unwrap();
    let mut a = pin!(limiter.acquire());
    let mut b = pin!(limiter.acquire());
    assert!(poll_once(a.as_mut()).is_pending());
    assert!(poll_once(b.as_mut()).is_pending());
    limiter.set_max(3).unwrap();
    assert!(matches!(poll_once(a.as_mut()), Poll::Ready(Ok(_))));
    assert!(matches!(poll_once(b.as_mut()), Poll::Ready(Ok(_))));
}

#[tokio::test(start_paused = true)]
async fn lowering_the_limit_waits_for_running_work() {
    let limiter = ConcurrencyLimiter::new(3);
    let a = limiter.try_acquire().unwrap();
    let b = limiter.try_acquire().unwrap();
    limiter.set_max(1).unwrap();
    assert_eq!(
        limiter.snapshot().in_flight,
        2,
        "running work is not interrupted"
    );
    let mut c = pin!(limiter.acquire());
    assert!(poll_once(c.as_mut()).is_pending());
    drop(a);
    assert!(
        poll_once(c.as_mut()).is_pending(),
        "still one in flight = the new limit"
    );
    drop(b);
    assert!(matches!(poll_once(c.as_mut()), Poll::Ready(Ok(_))));
}

#[tokio::test(start_paused = true)]
async fn zero_limit_pauses_until_raised() {
    let limiter = ConcurrencyLimiter::new(2);
    limiter.set_max(0).unwrap();
    let mut waiting = pin!(limiter.acquire());
    assert!(poll_once(waiting.as_mut()).is_pending());
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert!(poll_once(waiting.as_mut()).is_pending());
    limiter.set_max(1).unwrap();
    assert!(matches!(poll_once(waiting.as_mut()), Poll::Ready(Ok(_))));
}

#[tokio::test(start_paused = true)]
async fn close_rejects_waiters_and_newcomers_but_keeps_held_permits() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.try_acquire().unwrap();
    let mut waiting = pin!(limiter.acquire());
    assert!(poll_once(waiting.as_mut()).is_pending());
    limiter.close();
    assert!(matches!(
        poll_once(waiting.as_mut()),
        Poll::Ready(Err(Rejected::Closed { .. }))
    ));
    assert!(limiter.acquire().await.unwrap_err().is_closed());
    assert_eq!(limiter.snapshot().in_flight, 1);
    drop(held);
    limiter.open();
    assert!(limiter.try_acquire().is_ok());
}

#[tokio::test(start_paused = true)]
async fn drain_resolves_when_the_last_permit_returns() {
    let limiter = ConcurrencyLimiter::new(2);
    let a = limiter.try_acquire().unwrap();
    let b = limiter.try_acquire().unwrap();
    let mut drain = pin!(limiter.drain());
    assert!(poll_once(drain.as_mut()).is_pending());
    drop(a);
    assert!(poll_once(drain.as_mut()).is_pending());
    drop(b);
    assert!(poll_once(drain.as_mut()).is_ready());
}

#[tokio::test(start_paused = true)]
async fn reset_cancels_waiters_waits_for_work_and_restores_the_limit() {
    let limiter = ConcurrencyLimiter::new(2);
    limiter.set_max(1).unwrap();
    let held = limiter.acquire_owned().await.unwrap();
    let waiter = tokio::spawn({
        let limiter = limiter.clone();
        async move { limiter.acquire_owned().await.map(drop) }
    });
    tokio::task::yield_now().await;
    let reset = tokio::spawn({
        let limiter = limiter.clone();
        async move { limiter.reset().await }
    });
    tokio::task::yield_now().await;
    assert!(waiter.await.unwrap().unwrap_err().is_closed());
    assert!(!reset.is_finished(), "reset waits for the running permit");
    drop(held);
    reset.await.unwrap();
    assert!(!limiter.is_closed());
    assert_eq!(limiter.max(), 2);
}

#[tokio::test(start_paused = true)]
async fn bypass_skips_the_limit_and_is_counted_apart() {
    let limiter = ConcurrencyLimiter::new(1);
    limiter.set_max(0).unwrap();
    let health = limiter.acquire_bypass();
    assert!(health.is_bypass());
    let s = limiter.snapshot();
    assert_eq!((s.in_flight, s.bypass_in_flight, s.bypassed), (0, 1, 1));
    limiter.set_max(1).unwrap();
    let _throttled = limiter
        .try_acquire()
        .expect("bypass did not take the permit");
    drop(health);
    assert_eq!(limiter.snapshot().bypass_in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn predicted_timeout_turns_away_a_caller_that_would_wait_too_long() {
    let limiter = ConcurrencyLimiter::builder(1)
        .queue_timeout(Duration::from_millis(250))
        .max_queue(100)
        .predictive(true)
        .build()
        .unwrap();
    // Six callers, each holding the one permit for 100 ms: a line forms.
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let limiter = limiter.clone();
        tasks.push(tokio::spawn(async move {
            let permit = limiter
                .acquire()
                .timeout(Some(Duration::from_secs(10)))
                .await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            drop(permit);
        }));
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(limiter.snapshot().mean_release_interval.is_some());
    // Three waiters ahead at ~100 ms each: more than the 250 ms this caller will wait.
    assert_eq!(limiter.snapshot().queued, 3);
    let err = limiter.acquire().await.unwrap_err();
    assert!(matches!(err, Rejected::PredictedTimeout { .. }), "{err:?}");
    assert!(err.retry_after() > Duration::from_millis(250));
    // A caller prepared to wait long enough is queued as usual.
    let patient = limiter
        .acquire()
        .timeout(Some(Duration::from_secs(1)))
        .await;
    assert!(patient.is_ok());
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(limiter.snapshot().rejected_predicted, 1);
}

#[test]
fn blocking_acquire_waits_for_a_release_from_another_thread() {
    let limiter = ConcurrencyLimiter::new(1);
    let held = limiter.acquire_owned();
    let held = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(held)
        .unwrap();
    let releaser = std::thread::spawn(move || drop(held));
    let value = limiter.run_blocking(|| 7).unwrap();
    releaser.join().unwrap();
    assert_eq!(value, 7);
    assert_eq!(limiter.snapshot().completed, 2);
}

#[test]
fn impossible_settings_are_refused_at_construction() {
    let too_many = ConcurrencyLimiter::MAX_PERMITS + 1;
    assert!(matches!(
        ConcurrencyLimiter::builder(too_many).build(),
        Err(ConfigError::MaxTooLarge { .. })
    ));
    assert_eq!(
        ConcurrencyLimiter::builder(1)
            .queue_timeout(Duration::ZERO)
            .build()
            .unwrap_err(),
        ConfigError::ZeroQueueTimeout
    );
    let err = ConcurrencyLimiter::builder(1)
        .predictive(true)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("queue timeout"), "{err}");
    let limiter = ConcurrencyLimiter::new(1);
    assert!(limiter.set_max(too_many).is_err());
    assert_eq!(limiter.max(), 1);
}

#[tokio::test(start_paused = true)]
async fn owned_permits_outlive_the_borrow_and_release_on_drop() {
    let limiter = ConcurrencyLimiter::new(1);
    let permit = limiter.try_acquire_owned().unwrap();
    let task = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(permit);
    });
    assert!(matches!(
        limiter.try_acquire_owned(),
        Err(Rejected::QueueFull { .. })
    ));
    let waited = limiter.acquire_owned().await.unwrap();
    task.await.unwrap();
    assert!(!waited.is_bypass());
    drop(waited);
    let s = limiter.snapshot();
    assert_eq!((s.admitted, s.completed, s.rejected_queue_full), (2, 2, 1));
}

#[test]
fn blocking_acquire_with_an_enormous_timeout_waits_instead_of_panicking() {
    let limiter = ConcurrencyLimiter::builder(1)
        .queue_timeout(Duration::MAX)
        .build()
        .unwrap();
    let held = limiter.try_acquire_owned().unwrap();
    let releaser = std::thread::spawn({
        let limiter = limiter.clone();
        move || {
            // Release only once the main thread is parked in the queue.
            while limiter.snapshot().queued == 0 {
                std::thread::yield_now();
            }
            drop(held);
        }
    });
    let value = limiter.run_blocking(|| "ran").unwrap();
    releaser.join().unwrap();
    assert_eq!(value, "ran");
}

#[tokio::test(start_paused = true)]
async fn async_acquire_with_an_enormous_timeout_waits_for_a_release() {
    let limiter = ConcurrencyLimiter::builder(1)
        .queue_timeout(Duration::MAX)
        .build()
        .unwrap();
    let held = limiter.try_acquire_owned().unwrap();
    let waiter = tokio::spawn({
        let limiter = limiter.clone();
        async move { limiter.acquire_owned().await.map(drop) }
    });
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert!(!waiter.is_finished());
    drop(held);
    waiter.await.unwrap().unwrap();
}

/// The release-interval estimate learns only from releases while someone waits. One stall
/// (a request held 100 s while a patient caller waited) made it 100 s; once the queue had
/// emptied, every caller that found the permit taken was turned away as "predicted
/// timeout" — none ever waited again, so no release ever corrected the estimate, and the
/// queue stayed off for the limiter's life although the resource answered in 10 ms.
#[tokio::test(start_paused = true)]
async fn predictive_queue_recovers_after_a_stall() {
    let limiter = ConcurrencyLimiter::builder(1)
        .queue_timeout(Duration::from_secs(1))
        .max_queue(100)
        .predictive(true)
        .build()
        .unwrap();
    // The stall: held 100 s, with a caller prepared to wait that long.
    let stalled = limiter.try_acquire_owned().unwrap();
    let patient = tokio::spawn({
        let limiter = limiter.clone();
        async move {
            let permit = limiter
                .acquire_owned()
                .timeout(Some(Duration::from_secs(1000)))
                .await;
            drop(permit);
        }
    });
    tokio::time::sleep(Duration::from_secs(100)).await;
    drop(stalled);
    patient.await.unwrap();
    assert!(limiter.snapshot().mean_release_interval.unwrap() >= Duration::from_secs(10));
    // The resource is fast again: each request holds the permit 10 ms, and a caller comes
    // while it is held, prepared to wait the queue timeout (1 s).
    let mut waited = 0;
    for _ in 0..50 {
        let held = limiter.try_acquire_owned().unwrap();
        let release = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            drop(held);
        });
        if let Ok(permit) = limiter.acquire().await {
            waited += 1;
            drop(permit);
        }
        release.await.unwrap();
    }
    assert!(
        waited >= 45,
        "only {waited} of 50 callers could wait for a 10 ms release"
    );
    assert!(limiter.snapshot().mean_release_interval.unwrap() < Duration::from_secs(1));
}
