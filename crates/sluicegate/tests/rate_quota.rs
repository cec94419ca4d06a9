//! Constructors fed user numbers (a config file's) answer with an error, never a panic, and
//! limiters built from extreme but valid numbers answer every call.

use std::num::{NonZeroU32, NonZeroUsize};
use std::time::Duration;

use sluicegate::clock::{FakeClock, Nanos};
use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::{Gcra, Quota, QuotaError, SlidingWindow};

/// Defect 7 of issue 8: `Quota::per_second(n)` panicked for `n > 10^9` (its `expect` claimed
/// a second holds `u32::MAX` nanoseconds) where `Quota::new` returned `RateTooHigh`.
#[test]
fn per_second_above_one_per_nanosecond_is_an_error_not_a_panic() {
    assert_eq!(
        Quota::per_second(1_000_000_001),
        Err(QuotaError::RateTooHigh)
    );
    assert_eq!(Quota::per_second(u32::MAX), Err(QuotaError::RateTooHigh));
    assert_eq!(
        Quota::per_second(u32::MAX),
        Quota::new(u32::MAX, Duration::from_secs(1))
    );
    assert!(Quota::per_second(1_000_000_000).is_ok());
    assert!(Quota::per_second(0).is_ok(), "0 is the kill switch");
}

#[test]
fn per_minute_and_per_hour_take_any_count() {
    for count in [0, 1, 1_000_000_001, u32::MAX] {
        assert_eq!(
            Quota::per_minute(count),
            Quota::new(count, Duration::from_secs(60)).unwrap()
        );
        assert_eq!(
            Quota::per_hour(count),
            Quota::new(count, Duration::from_secs(3600)).unwrap()
        );
    }
}

#[test]
fn quota_new_rejects_what_it_cannot_serve() {
    assert_eq!(Quota::new(1, Duration::ZERO), Err(QuotaError::ZeroPeriod));
    assert_eq!(
        Quota::new(10, Duration::from_nanos(9)),
        Err(QuotaError::RateTooHigh)
    );
    assert_eq!(
        QuotaError::RateTooHigh.to_string(),
        "the rate must be at most one request per nanosecond"
    );
}

#[test]
fn sliding_window_constructor_rejects_bad_shapes() {
    let window = |limit, window, slices| {
        SlidingWindow::with_clock(limit, window, slices, FakeClock::new()).map(|_| ())
    };
    assert_eq!(window(1, Duration::ZERO, 1), Err(QuotaError::ZeroPeriod));
    assert_eq!(
        window(1, Duration::from_secs(1), 0),
        Err(QuotaError::SliceCount(0))
    );
    assert_eq!(
        window(1, Duration::from_secs(1), 1025),
        Err(QuotaError::SliceCount(1025))
    );
    assert_eq!(
        window(1, Duration::from_nanos(3), 4),
        Err(QuotaError::WindowTooShort)
    );
}

/// A window of `Duration::MAX` (584 years of nanoseconds) computed its reset time as
/// `(slices + 1) × slice_ns` and overflowed (a panic in debug builds).
#[test]
fn longest_window_and_latest_clock_answer_without_overflow() {
    for slices in [1, 2, 1024] {
        let clock = FakeClock::new();
        let window = SlidingWindow::with_clock(2, Duration::MAX, slices, clock.clone()).unwrap();
        assert!(window.check().is_allowed());
        assert!(window.check().is_allowed());
        assert!(window.check().is_denied());
        clock.set(Nanos::new(u64::MAX));
        let _ = window.check();
        let _ = window.peek();
    }
    let clock = FakeClock::new();
    clock.set(Nanos::new(u64::MAX - 20));
    let window = SlidingWindow::with_clock(3, Duration::from_nanos(4), 4, clock.clone()).unwrap();
    for _ in 0..10 {
        let _ = window.check();
        clock.advance(Duration::from_nanos(1));
    }
}

#[test]
fn extreme_quotas_build_limiters_that_answer() {
    let slow = Quota::new(1, Duration::MAX).unwrap();
    let fast = Quota::per_second(1_000_000_000)
        .unwrap()
        .with_burst(NonZeroU32::MAX);
    for quota in [slow, fast, Quota::per_hour(u32::MAX), Quota::deny_all()] {
        let gcra = Gcra::with_clock(quota, FakeClock::new());
        let _ = gcra.check();
        let _ = gcra.check_n(u32::MAX);
        let keyed = KeyedGcra::<u64, _>::with_clock(quota, NonZeroUsize::MAX, FakeClock::new());
        let _ = keyed.check(&1);
        let _ = keyed.check_n(&1, u32::MAX);
    }
}

/// A quota whose full bucket takes longer than the clock can count (`Duration::MAX` as a
/// budget that never refills, 10 per 1000 years: burst × interval beyond 2^64 ns) let every request through: the state saturated at `u64::MAX`,
/// where "next state ≤ now + horizon" (both saturated) always held.
#[test]
fn quotas_longer_than_the_clock_still_deny_past_their_burst() {
    let millennium = Duration::from_secs(1000 * 365 * 86_400);
    let cases = [
        (Quota::new(100, Duration::MAX).unwrap(), 100),
        (Quota::new(10, millennium).unwrap(), 10),
        // (A burst worth more than 146 years of the rate is cut instead, the rate kept:
        // `a_burst_worth_centuries_still_limits_after_a_flood`.)
    ];
    for (quota, burst) in cases {
        let clock = FakeClock::new();
        clock.advance(Duration::from_secs(1));
        let gcra = Gcra::with_clock(quota, clock.clone());
        let keyed = KeyedGcra::<u64, _>::with_clock(quota, NonZeroUsize::MIN, clock.clone());
        for i in 0..burst {
            assert!(gcra.check().is_allowed(), "{quota:?}: request {i}");
            assert!(keyed.check(&1).is_allowed(), "{quota:?}: request {i}");
        }
        for _ in 0..3 {
            assert!(gcra.check().is_denied(), "{quota:?}: past the burst");
            assert!(keyed.check(&1).is_denied(), "{quota:?}: past the burst");
        }
        // A budget meant never to refill is still (nearly) spent a year later.
        clock.advance(Duration::from_secs(365 * 86_400));
        assert!(gcra.check_n(2).unwrap().is_denied(), "{quota:?}: a year on");
    }
}

/// A clock that went back by more than a ring (a broken clock; `FakeClock` wrapped around
/// before it saturated) left the window re-reading it forever.
#[test]
fn a_clock_that_goes_back_does_not_hang_the_window() {
    #[derive(Debug)]
    struct Backwards(std::sync::atomic::AtomicU64);
    impl sluicegate::clock::Clock for Backwards {
        fn now(&self) -> Nanos {
            Nanos::new(self.0.load(std::sync::atomic::Ordering::SeqCst))
        }
    }
    let clock = std::sync::Arc::new(Backwards(std::sync::atomic::AtomicU64::new(1 << 40)));
    let window = SlidingWindow::with_clock(3, Duration::from_nanos(4), 4, clock.clone()).unwrap();
    assert!(window.check().is_allowed());
    clock.0.store(7, std::sync::atomic::Ordering::SeqCst);
    let _ = window.check();
    let _ = window.check_n(2);
}

#[test]
fn fake_clock_stops_at_the_last_instant() {
    use sluicegate::clock::Clock;
    let clock = FakeClock::new();
    clock.set(Nanos::new(u64::MAX - 1));
    clock.advance(Duration::from_nanos(5));
    assert_eq!(clock.now(), Nanos::new(u64::MAX));
}

/// GCRA keeps its state as the instant the bucket is next full (ns on a `u64` clock). A
/// bucket owing more than the clock can hold (a burst worth centuries of the rate: `1/h`
/// with a burst of ten million) saturated that instant at `u64::MAX`, where `next` and the
/// limit `now + horizon` both saturate and compare equal: every check after was allowed, a
/// limit gone for good. The gate takes such a config (`rate = "1/h"`, `burst = 10000000`).
#[test]
fn a_burst_worth_centuries_still_limits_after_a_flood() {
    let quota = Quota::per_hour(1).with_burst(NonZeroU32::new(10_000_000).unwrap());
    let clock = FakeClock::new();
    clock.set(Nanos::new(1 << 40)); // 18 minutes of uptime
    let gcra = Gcra::with_clock(quota, clock.clone());
    let keyed = KeyedGcra::<u8, _>::with_clock(quota, NonZeroUsize::MIN, clock.clone());
    let (mut admitted, mut admitted_keyed) = (0u64, 0u64);
    for _ in 0..20 {
        if gcra.check_n(1_000_000).unwrap().is_allowed() {
            admitted += 1_000_000;
        }
        if keyed.check_n(&1, 1_000_000).unwrap().is_allowed() {
            admitted_keyed += 1_000_000;
        }
    }
    assert!(admitted <= 10_000_000, "{admitted} admitted at once");
    assert!(
        admitted_keyed <= 10_000_000,
        "{admitted_keyed} admitted at once"
    );
    // Empty it: then one an hour, as the quota says.
    for (left, take) in [
        (gcra.peek_n(0).unwrap().remaining(), &|n| gcra.check_n(n)),
        (keyed.peek_n(&1, 0).unwrap().remaining(), &|n| {
            keyed.check_n(&1, n)
        }),
    ] as [(u32, &dyn Fn(u32) -> Result<sluicegate::rate::Decision, _>); 2]
    {
        if left > 0 {
            assert!(take(left).unwrap().is_allowed());
        }
        let denied = take(1).unwrap();
        assert!(denied.is_denied(), "{denied:?}");
        assert!(denied.retry_after() <= Duration::from_secs(3600));
    }
    clock.advance(Duration::from_secs(3600));
    assert!(gcra.check().is_allowed());
    assert!(gcra.check().is_denied());
    assert!(keyed.check(&1).is_allowed());
    assert!(keyed.check(&1).is_denied());
}

/// One request per `Duration::MAX` ("once, ever"): the interval saturates to `u64::MAX` ns,
/// and so did the state after the first request; the second was allowed, and every later one.
#[test]
fn one_request_per_forever_is_one_request() {
    let clock = FakeClock::new();
    clock.set(Nanos::new(1 << 40));
    let gcra = Gcra::with_clock(Quota::new(1, Duration::MAX).unwrap(), clock.clone());
    assert!(gcra.check().is_allowed());
    clock.advance(Duration::from_secs(365 * 24 * 3600));
    let second = gcra.check();
    assert!(second.is_denied(), "{second:?}");
    assert!(second.retry_after() > Duration::from_secs(100 * 365 * 24 * 3600));
}

/// At the last instants of the clock (1 ns slices: the slice number is the clock), the
/// check "is this reading a whole ring behind the newest slice?" computed `slice + ring`,
/// which saturated at `u64::MAX` and compared as behind: the check re-read the clock forever.
#[test]
fn one_nanosecond_slices_answer_at_the_last_instant() {
    let (done, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for slices in [4, 1024] {
            let clock = FakeClock::new();
            let window = SlidingWindow::with_clock(
                1,
                Duration::from_nanos(u64::from(slices)),
                slices,
                clock.clone(),
            )
            .unwrap();
            clock.set(Nanos::new(u64::MAX - 3));
            for _ in 0..6 {
                let _ = window.check();
                let _ = window.peek();
                clock.advance(Duration::from_nanos(1));
            }
        }
        done.send(()).unwrap();
    });
    answered
        .recv_timeout(Duration::from_secs(20))
        .expect("the window answered at the clock's last instants");
}
