//! The rate limiters at arbitrary clock offsets: near 0, 2^31 and 2^32 slices, and far out
//! in nanoseconds, with idle gaps of whole 2^32-slice turns. Every other property test
//! starts its clock at zero, where no tag or epoch is near its wrap (issue 8: the sliding
//! window hung 2^31 slices into its clock's life and none of them could see it).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::num::{NonZeroU32, NonZeroUsize};
use std::time::Duration;

use proptest::prelude::*;
use sluicegate::clock::{Clock, FakeClock, Nanos};
use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::sliding::{WindowParams, evaluate};
use sluicegate::rate::{Gcra, Quota, SlidingWindow};

/// A starting slice number: near 0, or near one of the tag wrap points.
fn start_slice() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..4_096,
        (1u64 << 31) - 4_096..(1 << 31) + 4_096,
        (1u64 << 32) - 4_096..(1 << 32) + 4_096,
        (1u64 << 33) - 4_096..(1 << 33) + 4_096,
        (1u64 << 40)..(1 << 40) + 4_096,
    ]
}

/// A starting time in nanoseconds: near 0, near 2^31, 2^32, 2^40 ns, or ~146 years out.
fn start_ns() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..1_000_000,
        (1u64 << 31) - 1_000_000..(1 << 31) + 1_000_000,
        (1u64 << 32) - 1_000_000..(1 << 32) + 1_000_000,
        (1u64 << 40)..(1 << 40) + 1_000_000,
        (1u64 << 62)..(1 << 62) + 1_000_000,
    ]
}

/// How many slices to move forward before a step: mostly a few, sometimes a whole ring
/// and more, sometimes a whole 2^32-slice turn (± 1).
fn gap_slices() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0u64..3,
        2 => 3u64..40,
        1 => (1u64 << 32) - 1..=(1 << 32) + 1,
        1 => (1u64 << 31)..=(1 << 31) + 1,
    ]
}

proptest! {
    /// Single-threaded, the window decides exactly as the pure decision over an exact record
    /// of every admission by its full slice number, at any clock offset and after any gap.
    #[test]
    fn sliding_window_decides_as_an_exact_model_at_any_offset(
        start in start_slice(),
        limit in 1u32..20,
        slices in 1u32..12,
        slice_ns in 1u64..1_000,
        steps in prop::collection::vec((gap_slices(), 0u64..1_000, 0u32..6, any::<bool>()), 1..120),
    ) {
        let clock = FakeClock::new();
        clock.set(Nanos::new(start * slice_ns));
        let window = SlidingWindow::with_clock(
            limit, Duration::from_nanos(slice_ns * u64::from(slices)), slices, clock.clone(),
        ).unwrap();
        let params = WindowParams { limit, slices, slice_ns };
        let mut model: BTreeMap<u64, u64> = BTreeMap::new();
        for (gap, within, n, peek) in steps {
            clock.advance(Duration::from_nanos(gap * slice_ns + within % slice_ns));
            let now = clock.now().as_u64();
            let (slice, into) = (now / slice_ns, now % slice_ns);
            let n = n.min(limit);
            let count = |j: usize| {
                (slice + j as u64).checked_sub(u64::from(slices))
                    .and_then(|s| model.get(&s).copied())
                    .unwrap_or(0)
            };
            let expected = evaluate(params, count, into, n).unwrap();
            let got = if peek { window.peek_n(n) } else { window.check_n(n) }.unwrap();
            prop_assert_eq!(got, expected, "slice {} (start {}), n {}", slice, start, n);
            if !peek && got.is_allowed() && n > 0 {
                *model.entry(slice).or_default() += u64::from(n);
            }
        }
    }

    /// GCRA decides the same at any clock offset as at zero: only differences of time count.
    #[test]
    fn gcra_decides_the_same_at_any_offset(
        start in start_ns(),
        count in 1u32..20,
        period_us in 1u64..2_000,
        burst in 1u32..20,
        steps in prop::collection::vec((0u64..3_000_000, 1u32..20), 1..200),
    ) {
        let quota = Quota::new(count, Duration::from_micros(period_us)).unwrap()
            .with_burst(NonZeroU32::new(burst).unwrap());
        let (late_clock, early_clock) = (FakeClock::new(), FakeClock::new());
        late_clock.set(Nanos::new(start));
        // A fresh bucket is full at any time; a clock at zero has a bucket that was full
        // from the start too, so both begin alike.
        let late = Gcra::with_clock(quota, late_clock.clone());
        let early = Gcra::with_clock(quota, early_clock.clone());
        for (advance, n) in steps {
            late_clock.advance(Duration::from_nanos(advance));
            early_clock.advance(Duration::from_nanos(advance));
            let n = n.min(burst);
            prop_assert_eq!(late.check_n(n).unwrap(), early.check_n(n).unwrap(), "at {}", late_clock.now().as_u64());
        }
    }

    /// The keyed GCRA as well, with a key table small enough to be full.
    #[test]
    fn keyed_gcra_decides_the_same_at_any_offset(
        start in start_ns(),
        count in 1u32..10,
        steps in prop::collection::vec((0u64..300_000_000, 0u8..6), 1..200),
    ) {
        let quota = Quota::per_second(count).unwrap();
        let max_keys = NonZeroUsize::new(4).unwrap();
        let (late_clock, early_clock) = (FakeClock::new(), FakeClock::new());
        late_clock.set(Nanos::new(start));
        let late = KeyedGcra::<IpAddr, _>::with_clock(quota, max_keys, late_clock.clone());
        let early = KeyedGcra::<IpAddr, _>::with_clock(quota, max_keys, early_clock.clone());
        for (advance, key) in steps {
            late_clock.advance(Duration::from_nanos(advance));
            early_clock.advance(Duration::from_nanos(advance));
            let key = IpAddr::from([10, 0, 0, key]);
            prop_assert_eq!(late.check(&key), early.check(&key));
        }
    }

    /// "Never more than burst + elapsed × rate", counted from a start far from zero.
    #[test]
    fn gcra_never_admits_more_than_burst_plus_elapsed_rate_at_any_offset(
        start in start_ns(),
        count in 1u32..20,
        period_us in 1u64..2_000,
        steps in prop::collection::vec((0u64..100_000, 1u32..4), 1..300),
    ) {
        let quota = Quota::new(count, Duration::from_micros(period_us)).unwrap();
        let interval = quota.emission_interval().unwrap().as_nanos() as u64;
        let clock = FakeClock::new();
        clock.set(Nanos::new(start));
        let gcra = Gcra::with_clock(quota, clock.clone());
        let mut admitted = 0u64;
        for (advance, n) in steps {
            clock.advance(Duration::from_nanos(advance));
            let n = n.min(quota.burst());
            if gcra.check_n(n).unwrap().is_allowed() {
                admitted += u64::from(n);
            }
            let elapsed = clock.now().as_u64() - start;
            prop_assert!(admitted <= u64::from(quota.burst()) + elapsed / interval);
        }
    }
}
