//! loom models of the control calls racing each other and the permit traffic: `drain`,
//! `reset`, `open`, `set_max`. Run by `scripts/test.sh` with the other `loom_*` models.
//!
//! Each model ends with the limiter settled: nothing in flight, nothing queued, every
//! acquire counted once.
#![cfg(sluicegate_loom)]

mod loom_support;

use std::future::Future;

use loom::future::block_on;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use loom_support::settled;
use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};

/// A `reset()` of `limiter` on a thread of its own, run to its end.
fn reset_on_a_thread(limiter: &ConcurrencyLimiter) -> thread::JoinHandle<()> {
    let limiter = limiter.clone();
    thread::spawn(move || block_on(limiter.reset()))
}

/// Polls `future` once and drops it: a call given up on (under a timeout, say).
fn given_up_after_one_poll<F: Future>(future: F) {
    let mut future = Box::pin(future);
    let noop = std::task::Waker::noop();
    let _ = future
        .as_mut()
        .poll(&mut std::task::Context::from_waker(noop));
}

/// Defect 1 (issue 8): with one permit held and a drainer registered, a second drainer that
/// took the lock between the last release's `fetch_add` and the release's slow path threw the
/// first drainer's waker away; the first drainer never woke. loom reports the deadlock on
/// the code before the fix.
#[test]
fn two_drainers_both_wake_when_the_last_permit_returns() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let drainers: Vec<_> = (0..2)
            .map(|_| {
                let limiter = limiter.clone();
                thread::spawn(move || block_on(limiter.drain()))
            })
            .collect();
        drop(held);
        for d in drainers {
            d.join().unwrap();
        }
        settled(&limiter);
    });
}

/// review104: a drain given up on (polled once, then dropped: a reset under a timeout) takes
/// its waker back and, with the last one, the drainers' flag. Racing another drainer and the
/// last release, it must take neither the other's waker nor the flag it still needs: the
/// other drainer wakes when the permit returns.
#[test]
fn a_drain_given_up_on_leaves_the_other_drainer_its_wake_up() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let gave_up = thread::spawn({
            let limiter = limiter.clone();
            move || given_up_after_one_poll(limiter.drain())
        });
        let waits = thread::spawn({
            let limiter = limiter.clone();
            move || block_on(limiter.drain())
        });
        drop(held);
        gave_up.join().unwrap();
        waits.join().unwrap();
        settled(&limiter);
    });
}

/// Defect 1 through the public calls that reach it: two `reset()`s at once.
#[test]
fn two_resets_at_once_both_finish() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let resetter = reset_on_a_thread(&limiter);
        let second = reset_on_a_thread(&limiter);
        drop(held);
        resetter.join().unwrap();
        second.join().unwrap();
        assert!(!limiter.is_closed());
        settled(&limiter);
    });
}

/// trial102: a `close()` racing a `reset()`. The limiter ends closed if the close came after
/// the reset's own close (the kill switch pressed during the reset stands), and the reset
/// finishes either way. (Open if the close came before, the reset undoing it: not asserted.
/// When `is_closed` reads false, the reset's close may still come before or after the
/// operator's, and nothing public tells which.)
#[test]
fn a_close_racing_a_reset_stands_if_it_came_after_the_resets_close() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let resetter = reset_on_a_thread(&limiter);
        // Whether the reset had closed the limiter when the operator closed it.
        let after_the_resets_close = limiter.is_closed();
        limiter.close();
        drop(held);
        resetter.join().unwrap();
        if after_the_resets_close {
            assert!(limiter.is_closed(), "the kill switch was undone");
        }
        limiter.open();
        settled(&limiter);
    });
}

/// review104: the kill switch pressed and lifted (`close()`, `open()`) racing a `reset()`
/// that undoes a `set_max(0)`. Whichever close came last, the `open()` came after the
/// operator's, so the reset restores the limit and the limiter ends open: it used to keep
/// the limit at 0 when the reset's close came first.
#[test]
fn a_close_and_open_racing_a_reset_leave_the_reset_its_limit() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        limiter.set_max(0).unwrap();
        let resetter = reset_on_a_thread(&limiter);
        limiter.close();
        limiter.open();
        drop(held);
        resetter.join().unwrap();
        assert!(!limiter.is_closed());
        assert_eq!(limiter.max(), 1, "the reset's limit");
        settled(&limiter);
    });
}

/// Waits until the reset on another thread has closed the limiter (its close came first).
fn until_closed(limiter: &ConcurrencyLimiter) {
    while !limiter.is_closed() {
        thread::yield_now();
    }
}

/// ctl121 (review104 §6): reset A drains; reset B closes after it and is given up on (polled
/// once, dropped), reopening at once. B's reopen, racing A's registration as a drainer, is
/// A's end too: A finishes while the permit is still held. (loom reports the deadlock on the
/// code before: A waited for a permit nobody would return.)
#[test]
fn a_reset_superseded_by_a_later_one_given_up_on_ends_with_it() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        let earlier = reset_on_a_thread(&limiter);
        until_closed(&limiter);
        given_up_after_one_poll(limiter.reset());
        earlier.join().unwrap();
        assert!(!limiter.is_closed());
        assert_eq!(limiter.max(), 1);
        drop(held);
        settled(&limiter);
    });
}

/// ctl121: an `open()` during a reset is the reset's end (the reset's limit, the kill switch
/// of 0 undone); a `set_max(0)` after it, and the last permit's return racing the reset's
/// thread, leave the limit at 0: the reset's thread, however late it runs, does not restore
/// the limit again. (On the code before, the reset ended only at the return, and restored 1.)
#[test]
fn an_open_during_a_reset_is_its_end_and_a_later_kill_switch_stands() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(1);
        let held = limiter.try_acquire_owned().unwrap();
        limiter.set_max(0).unwrap();
        let resetter = reset_on_a_thread(&limiter);
        until_closed(&limiter);
        limiter.open();
        assert_eq!(limiter.max(), 1, "the reset's limit");
        limiter.set_max(0).unwrap();
        drop(held);
        resetter.join().unwrap();
        assert!(!limiter.is_closed());
        assert_eq!(
            limiter.max(),
            0,
            "the kill switch came after the reset's end"
        );
        settled(&limiter);
    });
}

/// Defect 2 (issue 8): kill switch on (`max` 0), `reset()` while a permit is held, `open()`
/// during the drain, a caller queues, the permit comes back, the reset reopens with the
/// configured limit — and used to leave the caller queued forever, because reopening raised
/// the limit without running the hand-off. loom reports the deadlock on the code before the
/// fix.
#[test]
fn reopening_with_a_queued_waiter_hands_it_a_permit() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(2);
        let held = limiter.try_acquire_owned().unwrap();
        limiter.set_max(0).unwrap();
        let resetter = reset_on_a_thread(&limiter);
        let caller = thread::spawn({
            let limiter = limiter.clone();
            move || {
                limiter.open();
                block_on(limiter.acquire()).map(drop)
            }
        });
        drop(held);
        resetter.join().unwrap();
        let outcome = caller.join().unwrap();
        let s = settled(&limiter);
        assert_eq!(s.limit, 2, "reset restores the configured limit");
        match outcome {
            Ok(()) => assert_eq!(s.completed, 2),
            Err(Rejected::Closed { .. }) => assert_eq!((s.completed, s.rejected_closed), (1, 1)),
            Err(other) => panic!("unexpected {other:?}"),
        }
    });
}

/// Lowering the limit against the fast path: once `set_max(1)` returns, no acquire is
/// admitted while the one permit out is still held, and nothing is lost.
#[test]
fn lowering_the_limit_is_obeyed_by_the_fast_path() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::new(2);
        let lowered = Arc::new(AtomicUsize::new(0));
        let released = Arc::new(AtomicUsize::new(0));
        let first = limiter.try_acquire_owned().unwrap();
        let tryer = thread::spawn({
            let (limiter, lowered, released) = (limiter.clone(), lowered.clone(), released.clone());
            move || {
                // Read before the acquire: if the limit was already lowered, the acquire
                // comes after `set_max` returned and must obey the new limit.
                let after_lowering = lowered.load(Ordering::SeqCst) == 1;
                match limiter.try_acquire() {
                    Ok(permit) => {
                        if after_lowering {
                            // The permit word carries the release's history: an admission
                            // under the new limit of 1 sees the first permit gone.
                            assert_eq!(released.load(Ordering::SeqCst), 1, "2 running, limit 1");
                        }
                        drop(permit);
                        true
                    }
                    Err(r) => {
                        assert!(matches!(r, Rejected::QueueFull { .. }), "{r:?}");
                        false
                    }
                }
            }
        });
        limiter.set_max(1).unwrap();
        lowered.store(1, Ordering::SeqCst);
        released.store(1, Ordering::SeqCst);
        drop(first);
        let admitted = u64::from(tryer.join().unwrap());
        let s = settled(&limiter);
        assert_eq!(s.limit, 1);
        assert_eq!(s.completed, 1 + admitted);
        assert_eq!(s.rejected_queue_full, 1 - admitted);
    });
}
