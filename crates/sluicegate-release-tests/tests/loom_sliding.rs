//! loom models of the sliding window's ring: entering a new slice (emptying the slots of an
//! older turn) races other threads' admissions, and a thread whose clock reading is a whole
//! ring old must not overwrite a newer slice. Run by `scripts/test.sh` with the other loom
//! models (`RUSTFLAGS="--cfg sluicegate_loom" cargo test --release --test 'loom_*'`).
#![cfg(sluicegate_loom)]

use std::cell::RefCell;
use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use sluicegate::clock::{Clock, Nanos};
use sluicegate::rate::SlidingWindow;

const SLICE_NS: u64 = 10;

loom::thread_local! {
    // This thread's successive clock readings, in slices; the last one repeats.
    static READINGS: RefCell<Vec<u64>> = RefCell::new(Vec::new());
}

/// A clock each loom thread sets for itself: the first read gives the thread's own time, a
/// read after that the time the others may have reached (real clocks move on).
#[derive(Debug)]
struct ThreadClock;

impl Clock for ThreadClock {
    fn now(&self) -> Nanos {
        READINGS.with(|r| {
            let mut r = r.borrow_mut();
            let slice = if r.len() > 1 { r.remove(0) } else { r[0] };
            Nanos::new(slice * SLICE_NS)
        })
    }
}

fn reads(slices: &[u64]) {
    READINGS.with(|r| *r.borrow_mut() = slices.to_vec());
}

/// One request per slice, one slice per window (a ring of two slots).
fn window() -> Arc<SlidingWindow<ThreadClock>> {
    Arc::new(SlidingWindow::with_clock(1, Duration::from_nanos(SLICE_NS), 1, ThreadClock).unwrap())
}

/// Two threads enter slice 2 at once, whose slot still holds slice 0's count: exactly one is
/// admitted, and emptying the old count never wipes the new one.
#[test]
fn entering_a_slice_races_an_admission_in_it() {
    loom::model(|| {
        let window = window();
        reads(&[0]);
        assert!(window.check().is_allowed());
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let window = window.clone();
                thread::spawn(move || {
                    reads(&[2]);
                    window.check().is_allowed()
                })
            })
            .collect();
        let admitted = racers
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&a| a)
            .count();
        assert_eq!(admitted, 1);
        reads(&[2]);
        assert!(window.peek().is_denied(), "slice 2's admission was wiped");
    });
}

/// A thread that read slice 2 races one at slice 4 (a whole ring later, same slot). Whoever
/// wins, slice 4 ends with its one admission intact and nothing more.
#[test]
fn a_reading_a_ring_old_does_not_overwrite_the_newer_slice() {
    loom::model(|| {
        let window = window();
        reads(&[0]);
        assert!(window.check().is_allowed());
        let behind = thread::spawn({
            let window = window.clone();
            move || {
                reads(&[2, 4]);
                window.check().is_allowed()
            }
        });
        let ahead = thread::spawn({
            let window = window.clone();
            move || {
                reads(&[4]);
                window.check().is_allowed()
            }
        });
        let (behind, ahead) = (behind.join().unwrap(), ahead.join().unwrap());
        assert!(ahead || behind, "slice 4 admits one of them");
        reads(&[4]);
        assert!(
            window.peek().is_denied(),
            "slice 4's admission was overwritten"
        );
    });
}
