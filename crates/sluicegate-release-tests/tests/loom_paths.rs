//! loom models of the paths besides the plain async acquire: a queue timeout racing a grant,
//! bypass permits, the blocking acquire. Run by `scripts/test.sh` with the other `loom_*`
//! models.
#![cfg(sluicegate_loom)]

mod loom_support;

use loom::future::block_on;
use loom::thread;
use loom_support::settled;
use sluicegate::concurrency::{ConcurrencyLimiter, ManualTimer, Rejected};

/// A waiter's timeout fires while the release grants it a permit: it ends with the permit
/// (kept, counted admitted) or with `QueueTimeout` (counted timed out), never both or
/// neither, and no permit is lost.
#[test]
fn timeout_racing_a_grant_ends_in_one_outcome() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let timer = ManualTimer::new();
        let waiter = thread::spawn({
            let (limiter, timer) = (limiter.clone(), timer.clone());
            move || block_on(limiter.acquire().manual_timer(timer)).map(drop)
        });
        let alarm = thread::spawn(move || timer.fire());
        drop(held);
        let outcome = waiter.join().unwrap();
        alarm.join().unwrap();
        let s = settled(&limiter);
        match outcome {
            Ok(()) => assert_eq!((s.completed, s.timed_out), (2, 0)),
            Err(Rejected::QueueTimeout { .. }) => assert_eq!((s.completed, s.timed_out), (1, 1)),
            Err(other) => panic!("unexpected {other:?}"),
        }
    });
}

/// A timeout racing a grant with a second waiter behind: a waiter that times out just as it
/// is granted keeps the permit; one that leaves the queue first lets the permit reach the
/// next waiter. Either way the patient waiter is served.
#[test]
fn timed_out_waiter_never_strands_the_next_one() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let timer = ManualTimer::new();
        let hasty = thread::spawn({
            let (limiter, timer) = (limiter.clone(), timer.clone());
            move || block_on(limiter.acquire().manual_timer(timer)).map(drop)
        });
        let patient = thread::spawn({
            let limiter = limiter.clone();
            move || block_on(limiter.acquire()).map(drop)
        });
        timer.fire();
        drop(held);
        let hasty = hasty.join().unwrap();
        patient
            .join()
            .unwrap()
            .expect("the patient waiter is served");
        let s = settled(&limiter);
        assert_eq!(s.completed + s.timed_out, 3, "{s:?} {hasty:?}");
    });
}

/// Bypass permits never take or delay a throttled permit, and work while closed.
#[test]
fn bypass_permits_never_touch_the_throttled_ones() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let bypasser = thread::spawn({
            let limiter = limiter.clone();
            move || {
                let permit = limiter.acquire_bypass();
                assert!(permit.is_bypass());
                drop(permit);
            }
        });
        let closer = thread::spawn({
            let limiter = limiter.clone();
            move || {
                limiter.close();
                drop(limiter.acquire_bypass());
            }
        });
        let outcome = block_on(limiter.acquire()).map(drop);
        bypasser.join().unwrap();
        closer.join().unwrap();
        let s = settled(&limiter);
        assert_eq!(s.bypassed, 2);
        match outcome {
            Ok(()) => assert_eq!((s.completed, s.rejected_closed), (1, 0)),
            Err(Rejected::Closed { .. }) => assert_eq!((s.completed, s.rejected_closed), (0, 1)),
            Err(other) => panic!("a bypass took the throttled permit: {other:?}"),
        }
    });
}

/// The blocking acquire parks its thread in the same queue: a release on another thread
/// unparks it with the permit, and no wake-up is lost.
#[test]
fn blocking_acquire_is_woken_by_a_release() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let blocker = thread::spawn({
            let limiter = limiter.clone();
            move || limiter.run_blocking(|| ()).is_ok()
        });
        drop(held);
        assert!(blocker.join().unwrap());
        assert_eq!(settled(&limiter).completed, 2);
    });
}

/// A blocking waiter and an async waiter share the queue; a close wakes the parked thread.
#[test]
fn close_unparks_a_blocking_waiter() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let blocker = thread::spawn({
            let limiter = limiter.clone();
            move || limiter.acquire_blocking().map(drop)
        });
        limiter.close();
        drop(held);
        let outcome = blocker.join().unwrap();
        let s = settled(&limiter);
        match outcome {
            Ok(()) => unreachable!("closed before the only permit came back"),
            Err(r) => assert!(r.is_closed() && s.rejected_closed == 1, "{r:?} {s:?}"),
        }
    });
}
