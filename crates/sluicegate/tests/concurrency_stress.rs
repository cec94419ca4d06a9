//! Stress: many tasks on a multi-thread runtime acquire with random cancellation and
//! timeouts. Bounded (a couple of seconds); at the end every permit is back and the counters
//! balance with what the tasks saw.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::SmallRng};
use sluicegate::concurrency::{ConcurrencyLimiter, Priority, QueueOrder, Rejected};

#[derive(Default)]
struct Seen {
    admitted: AtomicU64,
    rejected: AtomicU64,
    timed_out: AtomicU64,
    cancelled_or_admitted: AtomicU64,
    attempts: AtomicU64,
}

async fn stress(order: QueueOrder) {
    const MAX: usize = 4;
    const TASKS: u64 = 64;
    const ROUNDS: u64 = 800;
    let limiter = ConcurrencyLimiter::builder(MAX)
        .max_queue(24)
        .queue_timeout(Duration::from_millis(3))
        .order(order)
        .build()
        .unwrap();
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Seen::default());

    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (limiter, running, peak, seen) =
                (limiter.clone(), running.clone(), peak.clone(), seen.clone());
            tokio::spawn(async move {
                let mut rng = SmallRng::seed_from_u64(task);
                for _ in 0..ROUNDS {
                    seen.attempts.fetch_add(1, Ordering::Relaxed);
                    let priority = Priority(rng.random_range(100..103));
                    let acquire = limiter.acquire_owned().priority(priority);
                    // Some callers go away while they wait.
                    let patience = Duration::from_micros(rng.random_range(50..4000));
                    let outcome = if rng.random_bool(0.3) {
                        match tokio::time::timeout(patience, acquire).await {
                            Ok(outcome) => outcome,
                            Err(_) => {
                                seen.cancelled_or_admitted.fetch_add(1, Ordering::Relaxed);
                                continue;
                            }
                        }
                    } else {
                        acquire.await
                    };
                    match outcome {
                        Ok(permit) => {
                            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                            peak.fetch_max(now, Ordering::SeqCst);
                            if rng.random_bool(0.5) {
                                tokio::task::yield_now().await;
                            } else {
                                tokio::time::sleep(Duration::from_micros(200)).await;
                            }
                            running.fetch_sub(1, Ordering::SeqCst);
                            drop(permit);
                            seen.admitted.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(Rejected::QueueTimeout { .. }) => {
                            seen.timed_out.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            seen.rejected.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }

    let s = limiter.snapshot();
    assert!(peak.load(Ordering::SeqCst) <= MAX, "peak {peak:?}");
    assert_eq!((s.in_flight, s.queued), (0, 0), "{s:?}");
    assert_eq!(s.arrived(), seen.attempts.load(Ordering::Relaxed), "{s:?}");
    assert_eq!(s.admitted, s.completed);
    assert_eq!(s.rejected(), seen.rejected.load(Ordering::Relaxed));
    assert_eq!(s.timed_out, seen.timed_out.load(Ordering::Relaxed));
    // A caller that gave up may have been granted a permit at that very instant; the
    // limiter then counts it as admitted (and completed: the permit went on to the next
    // waiter), otherwise as cancelled.
    assert_eq!(
        s.admitted + s.cancelled,
        seen.admitted.load(Ordering::Relaxed) + seen.cancelled_or_admitted.load(Ordering::Relaxed)
    );
    assert!(
        s.admitted > 0 && s.cancelled > 0 && s.timed_out > 0,
        "{s:?}"
    );
    // And it still works afterwards.
    assert!(limiter.try_acquire().is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifo_under_stress_keeps_the_cap_and_balances() {
    stress(QueueOrder::Fifo).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lifo_under_stress_keeps_the_cap_and_balances() {
    stress(QueueOrder::Lifo).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn limit_changes_under_stress_lose_nothing() {
    let limiter = ConcurrencyLimiter::builder(3)
        .max_queue(1000)
        .build()
        .unwrap();
    let done = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let (limiter, done) = (limiter.clone(), done.clone());
            tokio::spawn(async move {
                for _ in 0..200 {
                    let _permit = limiter.acquire().await.unwrap();
                    tokio::task::yield_now().await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let changer = {
        let limiter = limiter.clone();
        tokio::spawn(async move {
            for n in [0, 5, 1, 0, 8, 2, 0, 3].into_iter().cycle().take(400) {
                limiter.set_max(n).unwrap();
                tokio::task::yield_now().await;
            }
            limiter.set_max(4).unwrap();
        })
    };
    changer.await.unwrap();
    for w in workers {
        w.await.unwrap();
    }
    let s = limiter.snapshot();
    assert_eq!(done.load(Ordering::Relaxed), 32 * 200);
    assert_eq!(
        (s.in_flight, s.queued, s.admitted, s.completed),
        (0, 0, 6400, 6400)
    );
}
