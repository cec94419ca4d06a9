//! Rate limiters under real threads: the fast paths must not admit more than the limit when
//! many threads race inside one slice, nor after the slice (and its cached allowance) rolls
//! over, nor after a limit change.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sluicegate::clock::FakeClock;
use sluicegate::rate::{Gcra, Quota, SlidingWindow};

const THREADS: usize = 4;

/// Runs `tries` checks on each of `THREADS` threads at once; returns how many were allowed.
fn admitted_by_racing_threads(tries: usize, check: impl Fn() -> bool + Sync) -> u64 {
    let admitted = AtomicU64::new(0);
    let start = Barrier::new(THREADS);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                start.wait();
                for _ in 0..tries {
                    if check() {
                        admitted.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    admitted.into_inner()
}

#[test]
fn sliding_window_admits_exactly_its_limit_to_racing_threads_in_each_slice() {
    let clock = FakeClock::new();
    let (limit, slices) = (1_000u32, 4u32);
    let window =
        SlidingWindow::with_clock(limit, Duration::from_millis(400), slices, clock.clone())
            .unwrap();
    // Time stands still within a phase, so no admission straddles a boundary and the bound
    // is exact. Each phase starts a window after the last, with all earlier slices aged out.
    for phase in 0..5 {
        let admitted = admitted_by_racing_threads(600, || window.check().is_allowed());
        assert_eq!(admitted, u64::from(limit), "phase {phase}");
        clock.advance(Duration::from_millis(500));
    }
}

#[test]
fn sliding_window_shares_one_window_between_its_slices_under_racing_threads() {
    let clock = FakeClock::new();
    let window =
        SlidingWindow::with_clock(1_000, Duration::from_millis(400), 4, clock.clone()).unwrap();
    // 400 in the first slice; the next three slices of the same window share the other 600.
    assert_eq!(
        admitted_by_racing_threads(100, || window.check().is_allowed()),
        400
    );
    let mut rest = 0;
    for _ in 1..4 {
        clock.advance(Duration::from_millis(100));
        rest += admitted_by_racing_threads(100, || window.check().is_allowed());
    }
    assert_eq!(rest, 600);
}

#[test]
fn sliding_window_applies_a_lowered_limit_to_the_next_check() {
    let clock = FakeClock::new();
    let window =
        SlidingWindow::with_clock(1_000, Duration::from_secs(1), 10, clock.clone()).unwrap();
    assert_eq!(
        admitted_by_racing_threads(50, || window.check().is_allowed()),
        200
    );
    window.set_limit(300);
    assert_eq!(
        admitted_by_racing_threads(50, || window.check().is_allowed()),
        100
    );
    window.set_limit(0);
    assert!(window.check().is_denied());
}

#[test]
fn gcra_admits_exactly_its_burst_to_racing_threads() {
    let clock = FakeClock::new();
    let gcra = Gcra::with_clock(
        Quota::per_second(500)
            .unwrap()
            .with_burst(std::num::NonZeroU32::new(1_000).unwrap()),
        clock.clone(),
    );
    assert_eq!(
        admitted_by_racing_threads(600, || gcra.check().is_allowed()),
        1_000
    );
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        admitted_by_racing_threads(600, || gcra.check().is_allowed()),
        500
    );
}
