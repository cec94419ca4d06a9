//! The sliding window late in its clock's life: started near 2^31 and 2^32 slices, driven
//! across them with real `check()` calls, and left idle for whole 2^32-slice turns.
//!
//! Defect 6 of issue 8: each slot kept only the low 32 bits of its slice number, so an
//! untouched slot (or one last written more than 2^31 slices ago) read as a slice *ahead* of
//! the clock and `check()` retried forever, and after an idle gap of 2^32 slices old counts
//! read as current. Every test here hung or failed before the fix (commit "Sliding window:
//! full-width slice bookkeeping").

use std::sync::mpsc;
use std::time::Duration;

use sluicegate::clock::{FakeClock, Nanos};
use sluicegate::rate::SlidingWindow;

const SLICE_NS: u64 = 1_000_000; // 1 ms slices: 2^31 of them are ~25 days
const SLICES: u32 = 4;
const LIMIT: u32 = 8;

/// A window of `LIMIT` per 4 ms in four 1 ms slices, its clock at `slice` slices.
fn window_at(slice: u64) -> (SlidingWindow<FakeClock>, FakeClock) {
    let clock = FakeClock::new();
    clock.set(Nanos::new(slice * SLICE_NS));
    let window = SlidingWindow::with_clock(
        LIMIT,
        Duration::from_nanos(SLICE_NS * u64::from(SLICES)),
        SLICES,
        clock.clone(),
    )
    .unwrap();
    (window, clock)
}

/// Runs `f` on a thread of its own and fails (instead of hanging the suite) if it does not
/// return within 30 s. This bounds a hang; it measures no timing.
fn returns<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("{what}: never returned"))
}

/// Drives one slice at a time from `from` for `slices` slices, asking for one request per
/// slice and `LIMIT` at once every fourth slice, and checks each decision against what a
/// window at slice 0 decides for the same workload.
fn drive_like_a_window_at_zero(from: u64, slices: u64) {
    let (late, late_clock) = window_at(from);
    let (early, early_clock) = window_at(0);
    for i in 0..slices {
        for n in [1, 2, LIMIT / 2, 1] {
            let (a, b) = (late.check_n(n).unwrap(), early.check_n(n).unwrap());
            assert_eq!(a, b, "slice {} (offset {i}) asking for {n}", from + i);
        }
        late_clock.advance(Duration::from_nanos(SLICE_NS));
        early_clock.advance(Duration::from_nanos(SLICE_NS));
    }
}

#[test]
fn first_check_past_2_31_slices_returns() {
    let decision = returns("check at 2^31 slices", || window_at(1 << 31).0.check());
    assert!(decision.is_allowed());
    let decision = returns("check at 2^32 - 1 slices", || {
        window_at((1 << 32) - 1).0.check()
    });
    assert!(decision.is_allowed());
}

#[test]
fn checks_across_2_31_slices_decide_as_at_the_clock_start() {
    returns("driving across 2^31", || {
        drive_like_a_window_at_zero((1 << 31) - 10, 20)
    });
}

#[test]
fn checks_across_2_32_slices_decide_as_at_the_clock_start() {
    returns("driving across 2^32", || {
        drive_like_a_window_at_zero((1 << 32) - 10, 20)
    });
    returns("driving across 2^33", || {
        drive_like_a_window_at_zero((1 << 33) - 10, 20)
    });
}

#[test]
fn a_window_idle_for_more_than_2_31_slices_still_answers() {
    returns("check after 2^31 idle slices", || {
        let (window, clock) = window_at(5);
        assert!(window.check_n(LIMIT).unwrap().is_allowed());
        clock.advance(Duration::from_nanos(SLICE_NS * ((1 << 31) + 3)));
        assert_eq!(window.peek_n(0).unwrap().remaining(), LIMIT);
        assert!(window.check_n(LIMIT).unwrap().is_allowed());
    });
}

#[test]
fn counts_from_whole_2_32_slice_turns_ago_are_not_current() {
    for gap in [1u64 << 32, (1 << 32) - 1, (1 << 32) + 1, 3 << 32] {
        returns("check after an idle 2^32 turn", move || {
            let (window, clock) = window_at(100);
            assert!(window.check_n(LIMIT).unwrap().is_allowed());
            assert!(window.check().is_denied());
            clock.advance(Duration::from_nanos(SLICE_NS * gap));
            assert_eq!(
                window.peek_n(0).unwrap().remaining(),
                LIMIT,
                "idle for {gap} slices, the window is empty"
            );
            assert!(
                window.check_n(LIMIT).unwrap().is_allowed(),
                "idle for {gap} slices"
            );
        });
    }
}

#[test]
fn counts_a_whole_2_32_slice_turn_old_do_not_count_in_the_completed_slices() {
    // Fill the slot of slice s, then come back at s + 2^32 + 1: slot s is now one of the
    // completed slices of the window, and its old count must read as empty.
    returns("completed slice after a 2^32 turn", || {
        let (window, clock) = window_at(100);
        assert!(window.check_n(LIMIT).unwrap().is_allowed());
        clock.advance(Duration::from_nanos(SLICE_NS * ((1 << 32) + 1)));
        assert!(
            window.check_n(LIMIT).unwrap().is_allowed(),
            "the slice 2^32 turns ago is not the previous slice"
        );
    });
}
