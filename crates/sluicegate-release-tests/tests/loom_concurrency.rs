//! loom models of the concurrency limiter's races. Run by `scripts/test.sh` as
//! `RUSTFLAGS="--cfg sluicegate_loom" cargo test --release --test loom_concurrency`.
//!
//! Each model checks permit accounting at the end: nothing in flight, nothing queued, and
//! every acquire counted under exactly one outcome.
#![cfg(sluicegate_loom)]

mod loom_support;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};

use loom::future::block_on;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use loom_support::settled;
use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};

#[test]
fn release_hands_off_to_a_waiter() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.acquire_owned();
        let held = block_on(held).unwrap();
        let waiter = thread::spawn({
            let limiter = limiter.clone();
            move || drop(block_on(limiter.acquire()).unwrap())
        });
        drop(held);
        waiter.join().unwrap();
        let s = settled(&limiter);
        assert_eq!(s.completed, 2);
    });
}

#[test]
fn cancelled_waiter_passes_a_granted_permit_on() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = block_on(limiter.acquire_owned()).unwrap();
        let quitter = thread::spawn({
            let limiter = limiter.clone();
            move || {
                let mut acquire = pin!(limiter.acquire());
                let _ = acquire
                    .as_mut()
                    .poll(&mut Context::from_waker(Waker::noop()));
                // dropped here, possibly just as the permit is handed to it
            }
        });
        let patient = thread::spawn({
            let limiter = limiter.clone();
            move || drop(block_on(limiter.acquire()).unwrap())
        });
        drop(held);
        quitter.join().unwrap();
        patient.join().unwrap();
        let s = settled(&limiter);
        // The quitter either got and released a permit, or was counted as cancelled.
        assert_eq!(s.completed + s.cancelled, 3, "{s:?}");
    });
}

#[test]
fn close_racing_acquire_ends_in_one_outcome() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = block_on(limiter.acquire_owned()).unwrap();
        let acquirer = thread::spawn({
            let limiter = limiter.clone();
            move || block_on(limiter.acquire()).map(drop)
        });
        let closer = thread::spawn({
            let limiter = limiter.clone();
            move || limiter.close()
        });
        drop(held);
        let outcome = acquirer.join().unwrap();
        closer.join().unwrap();
        let s = settled(&limiter);
        match outcome {
            Ok(()) => assert_eq!((s.completed, s.rejected_closed), (2, 0)),
            Err(Rejected::Closed { .. }) => assert_eq!((s.completed, s.rejected_closed), (1, 1)),
            Err(other) => panic!("unexpected {other:?}"),
        }
    });
}

#[test]
fn set_max_racing_hand_off_never_overshoots_or_strands_a_waiter() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let running = Arc::new(AtomicUsize::new(0));
        let held = block_on(limiter.acquire_owned()).unwrap();
        running.fetch_add(1, Ordering::SeqCst);
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let limiter = limiter.clone();
                let running = running.clone();
                thread::spawn(move || {
                    let permit = block_on(limiter.acquire()).unwrap();
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    assert!(now <= 2, "{now} running with a limit of 2");
                    running.fetch_sub(1, Ordering::SeqCst);
                    drop(permit);
                })
            })
            .collect();
        limiter.set_max(2).unwrap();
        running.fetch_sub(1, Ordering::SeqCst);
        drop(held);
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(settled(&limiter).completed, 3);
    });
}

#[test]
fn queue_full_boundary_admits_or_rejects_each_caller_once() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::builder(1).max_queue(1).build().unwrap();
        let held = block_on(limiter.acquire_owned()).unwrap();
        let callers: Vec<_> = (0..2)
            .map(|_| {
                let limiter = limiter.clone();
                thread::spawn(move || block_on(limiter.acquire()).map(drop))
            })
            .collect();
        drop(held);
        let outcomes: Vec<_> = callers.into_iter().map(|c| c.join().unwrap()).collect();
        let s = settled(&limiter);
        let rejected = outcomes.iter().filter(|o| o.is_err()).count() as u64;
        assert!(outcomes.iter().all(|o| match o {
            Ok(()) => true,
            Err(r) => matches!(r, Rejected::QueueFull { .. }),
        }));
        assert_eq!(s.rejected_queue_full, rejected);
        assert_eq!(s.completed, 3 - rejected);
    });
}

#[test]
fn drain_wakes_when_the_last_permit_returns() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(2);
        let a = block_on(limiter.acquire_owned()).unwrap();
        let b = block_on(limiter.acquire_owned()).unwrap();
        let releaser = thread::spawn(move || {
            drop(a);
            drop(b);
        });
        block_on(limiter.drain());
        releaser.join().unwrap();
        settled(&limiter);
    });
}

#[test]
fn optimistic_increments_never_admit_past_the_limit() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let holders = Arc::new(AtomicUsize::new(0));
        let tryers: Vec<_> = (0..2)
            .map(|_| {
                let (limiter, holders) = (limiter.clone(), holders.clone());
                thread::spawn(move || {
                    if let Ok(permit) = limiter.try_acquire() {
                        assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                        holders.fetch_sub(1, Ordering::SeqCst);
                        drop(permit);
                        true
                    } else {
                        false
                    }
                })
            })
            .collect();
        let permit = block_on(limiter.acquire()).unwrap();
        assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders");
        holders.fetch_sub(1, Ordering::SeqCst);
        drop(permit);
        let admitted = tryers
            .into_iter()
            .map(|t| u64::from(t.join().unwrap()))
            .sum::<u64>();
        let s = settled(&limiter);
        assert_eq!(s.completed, admitted + 1);
        assert_eq!(s.rejected_queue_full, 2 - admitted);
    });
}

#[test]
fn undone_increment_does_not_strand_a_waiter() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = block_on(limiter.acquire_owned()).unwrap();
        let waiter = thread::spawn({
            let limiter = limiter.clone();
            move || drop(block_on(limiter.acquire()).unwrap())
        });
        let tryer = thread::spawn({
            let limiter = limiter.clone();
            move || limiter.try_acquire().map(drop).is_ok()
        });
        drop(held);
        waiter.join().unwrap();
        let tried = u64::from(tryer.join().unwrap());
        assert_eq!(settled(&limiter).completed, 2 + tried);
    });
}
