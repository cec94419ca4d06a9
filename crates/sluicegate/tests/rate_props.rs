//! Property tests for the rate limiters' promises, driven by a fake clock.

use std::num::NonZeroU32;
use std::time::Duration;

use proptest::prelude::*;
use sluicegate::clock::{Clock, FakeClock};
use sluicegate::rate::{Gcra, Quota, SlidingWindow};

/// One step of a workload: move time forward by `advance` ns, then ask for `n`.
fn ops(max_advance: u64, max_n: u32) -> impl Strategy<Value = Vec<(u64, u32)>> {
    prop::collection::vec((0..max_advance, 1..=max_n), 1..300)
}

fn quota() -> impl Strategy<Value = Quota> {
    (1u32..20, 1u64..2_000, 1u32..20).prop_map(|(count, period_us, burst)| {
        Quota::new(count, Duration::from_micros(period_us))
            .unwrap()
            .with_burst(NonZeroU32::new(burst).unwrap())
    })
}

fn interval_ns(q: &Quota) -> u64 {
    q.emission_interval().unwrap().as_nanos() as u64
}

proptest! {
    #[test]
    fn sliding_window_never_admits_more_than_limit_per_aligned_window_or_edge_cap_per_interval(
        limit in 1u32..40,
        slices in 1u32..16,
        slice_ns in 1u64..1_000,
        workload in ops(400, 5),
    ) {
        let clock = FakeClock::new();
        let window = slice_ns * u64::from(slices);
        let limiter =
            SlidingWindow::with_clock(limit, Duration::from_nanos(window), slices, clock.clone())
                .unwrap();
        let mut admitted: Vec<(u64, u64)> = Vec::new();
        for (advance, n) in workload {
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(limit);
            if limiter.check_n(n).unwrap().is_allowed() {
                admitted.push((clock.now().as_u64(), u64::from(n)));
            }
        }
        let cap = u64::from(limit) + u64::from(limit) / u64::from(slices);
        for &(start, _) in &admitted {
            let in_interval: u64 =
                admitted.iter().filter(|(t, _)| *t >= start && *t < start + window).map(|a| a.1).sum();
            prop_assert!(in_interval <= cap, "{in_interval} in [{start}, +{window}) > {cap}");
            let aligned = start - start % slice_ns;
            let in_aligned: u64 =
                admitted.iter().filter(|(t, _)| *t >= aligned && *t < aligned + window).map(|a| a.1).sum();
            prop_assert!(in_aligned <= u64::from(limit), "{in_aligned} in aligned window at {aligned}");
        }
    }

    #[test]
    fn gcra_allows_exactly_at_retry_after_never_before(q in quota(), workload in ops(3_000_000, 20)) {
        let clock = FakeClock::new();
        let limiter = Gcra::with_clock(q, clock.clone());
        for (advance, n) in workload {
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(q.burst());
            let decision = limiter.check_n(n).unwrap();
            if decision.is_denied() {
                let wait = decision.retry_after();
                prop_assert!(wait > Duration::ZERO);
                clock.advance(wait - Duration::from_nanos(1));
                prop_assert!(limiter.check_n(n).unwrap().is_denied(), "allowed 1 ns before retry_after");
                clock.advance(Duration::from_nanos(1));
                prop_assert!(limiter.check_n(n).unwrap().is_allowed(), "denied at retry_after");
            }
        }
    }

    #[test]
    fn gcra_never_admits_more_than_burst_plus_elapsed_rate(q in quota(), workload in ops(100_000, 3)) {
        let clock = FakeClock::new();
        let limiter = Gcra::with_clock(q, clock.clone());
        let mut admitted = 0u64;
        for (advance, n) in workload {
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(q.burst());
            if limiter.check_n(n).unwrap().is_allowed() {
                admitted += u64::from(n);
            }
            let bound = u64::from(q.burst()) + clock.now().as_u64() / interval_ns(&q);
            prop_assert!(admitted <= bound);
        }
    }

    #[test]
    fn peek_never_changes_state(
        q in quota(),
        workload in prop::collection::vec((0u64..200_000, 1u32..5, any::<bool>()), 1..200),
    ) {
        let clock = FakeClock::new();
        let (gcra, gcra_twin) =
            (Gcra::with_clock(q, clock.clone()), Gcra::with_clock(q, clock.clone()));
        let window = || SlidingWindow::with_clock(q.burst(), Duration::from_micros(500), 5, clock.clone()).unwrap();
        let (sliding, sliding_twin) = (window(), window());
        for (advance, n, peek) in workload {
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(q.burst());
            if peek {
                let peeked = gcra.peek_n(n).unwrap();
                prop_assert_eq!(peeked, gcra.peek_n(n).unwrap());
                let peeked = sliding.peek_n(n).unwrap();
                prop_assert_eq!(peeked, sliding.peek_n(n).unwrap());
            }
            prop_assert_eq!(gcra.check_n(n).unwrap(), gcra_twin.check_n(n).unwrap());
            prop_assert_eq!(sliding.check_n(n).unwrap(), sliding_twin.check_n(n).unwrap());
        }
    }

    #[test]
    fn gcra_quota_change_hands_out_no_burst_and_then_follows_the_new_quota(
        old in quota(),
        new in quota(),
        before in ops(100_000, 3),
        after in ops(100_000, 3),
    ) {
        let clock = FakeClock::new();
        let limiter = Gcra::with_clock(old, clock.clone());
        for (advance, n) in before {
            clock.advance(Duration::from_nanos(advance));
            let _ = limiter.check_n(n.min(old.burst())).unwrap();
        }
        let remaining_before = limiter.peek_n(0).unwrap().remaining();
        let changed_at = clock.now().as_u64();
        limiter.set_quota(new);
        let kept = limiter.peek_n(0).unwrap().remaining();
        prop_assert!(kept <= remaining_before.min(new.burst()), "change handed out {kept} > {remaining_before}");
        let mut admitted = 0u64;
        for (advance, n) in after {
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(new.burst());
            if limiter.check_n(n).unwrap().is_allowed() {
                admitted += u64::from(n);
            }
            let elapsed = clock.now().as_u64() - changed_at;
            prop_assert!(admitted <= u64::from(kept) + elapsed / interval_ns(&new));
        }
        // Once a full burst's worth of time has passed, the whole new burst is there.
        clock.advance(Duration::from_nanos(interval_ns(&new) * u64::from(new.burst())));
        prop_assert!(limiter.check_n(new.burst()).unwrap().is_allowed());
    }

    #[test]
    fn sliding_limit_change_keeps_the_counts_and_then_follows_the_new_limit(
        old in 1u32..30,
        new in 1u32..30,
        before in ops(300, 4),
        after in ops(300, 4),
    ) {
        let (slices, slice_ns) = (5u32, 200u64);
        let window = slice_ns * u64::from(slices);
        let clock = FakeClock::new();
        let limiter = SlidingWindow::with_clock(old, Duration::from_nanos(window), slices, clock.clone()).unwrap();
        let mut admitted: Vec<(u64, u64)> = Vec::new();
        for (advance, n) in before {
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(old);
            if limiter.check_n(n).unwrap().is_allowed() {
                admitted.push((clock.now().as_u64(), u64::from(n)));
            }
        }
        let changed_at = clock.now().as_u64();
        limiter.set_limit(new);
        for (advance, n) in after {
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(new);
            if limiter.check_n(n).unwrap().is_allowed() {
                let now = clock.now().as_u64();
                admitted.push((now, u64::from(n)));
                // Counting what came before the change too: the aligned window ending with
                // this admission holds at most the new limit.
                let from = (now - now % slice_ns + slice_ns).saturating_sub(window);
                let held: u64 = admitted.iter().filter(|(t, _)| *t >= from).map(|a| a.1).sum();
                prop_assert!(held <= u64::from(new), "{held} > new limit {new} after the change at {changed_at}");
            }
        }
        clock.advance(Duration::from_nanos(window + slice_ns));
        prop_assert!(limiter.check_n(new).unwrap().is_allowed());
    }

    #[test]
    fn limit_zero_denies_everything(workload in ops(10_000_000_000, 1_000)) {
        let clock = FakeClock::new();
        let gcra = Gcra::with_clock(Quota::per_second(0).unwrap(), clock.clone());
        let sliding = SlidingWindow::with_clock(0, Duration::from_secs(1), 10, clock.clone()).unwrap();
        for (advance, n) in workload {
            clock.advance(Duration::from_nanos(advance));
            for decision in [gcra.check_n(n).unwrap(), sliding.check_n(n).unwrap(), gcra.peek(), sliding.peek()] {
                prop_assert!(decision.is_denied());
                prop_assert_eq!(decision.retry_after(), Duration::MAX);
            }
        }
    }
}

#[test]
fn setting_the_limit_to_zero_stops_admissions_at_once() {
    let clock = FakeClock::new();
    let gcra = Gcra::with_clock(Quota::per_second(100).unwrap(), clock.clone());
    assert!(gcra.check().is_allowed());
    gcra.set_quota(Quota::deny_all());
    assert!(gcra.check().is_denied());
    clock.advance(Duration::from_secs(60));
    assert!(gcra.check().is_denied());
}

#[test]
fn asking_for_more_than_the_burst_is_an_error_not_a_denial() {
    let gcra = Gcra::with_clock(Quota::per_second(5).unwrap(), FakeClock::new());
    let err = gcra.check_n(6).unwrap_err();
    assert_eq!(
        err.to_string(),
        "asked for 6 at once but the limiter allows at most 5"
    );
    let window =
        SlidingWindow::with_clock(5, Duration::from_secs(1), 10, FakeClock::new()).unwrap();
    assert!(window.check_n(6).is_err());
}

#[test]
fn stale_slices_count_as_empty_after_the_ring_comes_round() {
    let clock = FakeClock::new();
    let window =
        SlidingWindow::with_clock(4, Duration::from_millis(100), 4, clock.clone()).unwrap();
    assert!(window.check_n(4).unwrap().is_allowed());
    assert!(window.check().is_denied());
    // Many ring turns later, the old slot is stale and counts as empty.
    clock.advance(Duration::from_secs(7));
    assert_eq!(window.peek().remaining(), 3);
    assert!(window.check_n(4).unwrap().is_allowed());
}

proptest! {
    #[test]
    fn sliding_check_decides_exactly_as_a_peek_just_before_it(
        limit in 1u32..40,
        slices in 1u32..16,
        slice_ns in 1u64..1_000,
        workload in ops(400, 5),
        changes in prop::collection::vec((0usize..300, 0u32..40), 0..4),
    ) {
        // `peek_n` always reads every slot; `check_n` mostly takes the cached fast path. The
        // two must agree on every decision, across slice changes and limit changes.
        let clock = FakeClock::new();
        let window = slice_ns * u64::from(slices);
        let limiter =
            SlidingWindow::with_clock(limit, Duration::from_nanos(window), slices, clock.clone())
                .unwrap();
        for (i, (advance, n)) in workload.into_iter().enumerate() {
            for &(at, new) in &changes {
                if at == i {
                    limiter.set_limit(new);
                }
            }
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(limiter.limit()).max(1);
            let peeked = limiter.peek_n(n);
            prop_assert_eq!(peeked, limiter.check_n(n));
        }
    }
}

proptest! {
    /// Any state, however far ahead of `now` (written under another quota, or read from a
    /// shared store): the step never panics, a denial leaves fewer than `n`, and the request
    /// goes through exactly at `retry_after`, never before.
    #[test]
    fn gcra_step_on_any_state_allows_exactly_at_retry_after(
        q in quota(),
        tat in 0u64..1 << 62,
        now in 0u64..1 << 62,
        n in 1u32..20,
    ) {
        use sluicegate::rate::gcra::{GcraParams, step};
        let p = GcraParams::from_quota(&q);
        let n = n.min(q.burst());
        let (d, next) = step(p, tat, now, n).unwrap();
        prop_assert!(d.remaining() <= q.burst());
        if d.is_allowed() {
            prop_assert!(next.is_some());
        } else {
            prop_assert!(d.remaining() < n);
            let wait = u64::try_from(d.retry_after().as_nanos()).unwrap();
            prop_assert!(wait > 0);
            prop_assert!(step(p, tat, now + wait, n).unwrap().0.is_allowed());
            prop_assert!(step(p, tat, now + wait - 1, n).unwrap().0.is_denied());
        }
    }
}
