//! The completed counter across its wraps: a limiter whose 39-bit field starts just short
//! of each wrap point, driven through every kind of release.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use super::ConcurrencyLimiter;

const FIELD: u64 = 1 << 39;
const HALF: u64 = 1 << 38;

fn poll_once<F: Future>(fut: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    fut.poll(&mut Context::from_waker(Waker::noop()))
}

/// One round of each release kind: fast path, hand-off to a waiter, a waiter cancelled as it
/// is granted, a blocking acquire: six completed releases.
fn one_of_each(limiter: &ConcurrencyLimiter) {
    drop(limiter.try_acquire().unwrap());
    let held = limiter.try_acquire().unwrap();
    let mut waiter = pin!(limiter.acquire());
    assert!(poll_once(waiter.as_mut()).is_pending());
    drop(held);
    let Poll::Ready(Ok(permit)) = poll_once(waiter.as_mut()) else {
        panic!("hand-off failed");
    };
    drop(permit);
    let held = limiter.try_acquire().unwrap();
    let mut quitter = Box::pin(limiter.acquire());
    assert!(poll_once(quitter.as_mut()).is_pending());
    drop(held);
    drop(quitter); // granted, then cancelled: released as completed
    drop(limiter.acquire_blocking().unwrap());
}

#[test]
fn completed_counter_stays_exact_and_monotonic_across_its_wraps() {
    for start in [
        HALF - 3,
        FIELD - 3,
        2 * FIELD - 1,
        5 * FIELD - 2,
        u64::MAX / 2,
    ] {
        let limiter = ConcurrencyLimiter::new(1);
        limiter.start_completed_at(start);
        assert_eq!(limiter.snapshot().completed, start);
        let mut last = limiter.snapshot();
        for round in 1..=4 {
            one_of_each(&limiter);
            let s = limiter.snapshot();
            assert_eq!(
                s.completed,
                start + 6 * round,
                "start {start}, round {round}"
            );
            assert_eq!((s.admitted, s.in_flight, s.queued), (s.completed, 0, 0));
            assert!(
                s.admitted > last.admitted,
                "went back at {start}: {last:?} -> {s:?}"
            );
            last = s;
        }
    }
}
