use super::*;
use proptest::prelude::*;

const MS: u64 = 1_000_000;

/// Feeds `n` samples ending inside bucket `idx` (100 ms buckets), each with latency `rt_ms`.
fn feed(l: &mut LittlesLaw, idx: u64, n: u64, rt_ms: u64, outcome: Outcome) -> usize {
    let mut limit = l.limit();
    for i in 0..n {
        let end = idx * 100 * MS + (i * 100 * MS) / n.max(1);
        let start = Nanos::new(end.saturating_sub(rt_ms * MS));
        let s = Sample {
            start,
            latency: Duration::from_nanos(end - start.as_u64()),
            in_flight: 1,
            outcome,
        };
        limit = l.on_sample(&s);
    }
    limit
}

fn no_probe() -> LittlesLawConfig {
    LittlesLawConfig {
        probe_interval: Duration::from_secs(3600),
        ..LittlesLawConfig::default()
    }
}

#[test]
fn littles_keeps_initial_limit_until_a_bucket_has_enough_samples() {
    let mut l = LittlesLaw::new(no_probe());
    feed(&mut l, 1, 5, 20, Outcome::Success);
    assert_eq!(feed(&mut l, 2, 5, 20, Outcome::Success), 20);
    assert_eq!(l.min_rt(), None);
}

#[test]
fn littles_limit_is_max_pass_rate_times_min_rt_with_gain_and_sqrt_headroom() {
    let mut l = LittlesLaw::new(no_probe());
    feed(&mut l, 1, 100, 20, Outcome::Success);
    // Closing bucket 1: pass rate 1000/s, min RT 20 ms → bdp 20; RT at its minimum → g = 1.5;
    // ceil(20 × 1.5 + √20) = ceil(34.47) = 35.
    assert_eq!(feed(&mut l, 2, 100, 60, Outcome::Success), 35);
    // Closing bucket 2 (RT 60 ms, inflated): g = clamp(1.5 × 20/60, 1, 2) = 1 → ceil(24.47).
    assert_eq!(feed(&mut l, 3, 1, 60, Outcome::Success), 25);
}

#[test]
fn littles_backs_off_on_drops_and_does_not_rise_during_cool_down() {
    let mut l = LittlesLaw::new(no_probe());
    feed(&mut l, 1, 100, 20, Outcome::Success);
    feed(&mut l, 2, 98, 20, Outcome::Success); // closes 1 → 35
    feed(&mut l, 2, 2, 20, Outcome::Dropped);
    // Closing bucket 2: 2 % drops → min(35, floor(35 × 0.9)) = 31.
    assert_eq!(feed(&mut l, 3, 100, 20, Outcome::Success), 31);
    // Bucket 3 was clean and the formula says 35, but the cool-down (1 s) holds 31.
    assert_eq!(feed(&mut l, 4, 100, 20, Outcome::Success), 31);
    // An idle second moves nothing; after the cool-down the formula rules again.
    assert_eq!(feed(&mut l, 15, 100, 20, Outcome::Success), 31);
    assert_eq!(feed(&mut l, 16, 1, 20, Outcome::Success), 35);
}

#[test]
fn littles_probe_lowers_limit_then_replaces_min_rt_with_the_probed_rt() {
    let mut l = LittlesLaw::new(LittlesLawConfig {
        probe_interval: Duration::from_millis(1000),
        ..LittlesLawConfig::default()
    });
    for idx in 1..10 {
        feed(&mut l, idx, 100, 20, Outcome::Success);
    }
    assert_eq!(l.limit(), 35);
    // Bucket 9 closes at t = 1 s: a probe starts, limit = floor(35 × 0.75) = 26.
    assert_eq!(feed(&mut l, 10, 100, 40, Outcome::Success), 26);
    assert!(l.probing());
    // The resource got slower (40 ms). Requests that started in the probe report 40 ms.
    for idx in 11..16 {
        feed(&mut l, idx, 100, 40, Outcome::Success);
    }
    assert!(!l.probing());
    assert_eq!(l.min_rt(), Some(Duration::from_millis(40)));
}

#[test]
fn littles_skips_ignored_samples() {
    let mut l = LittlesLaw::new(no_probe());
    feed(&mut l, 1, 100, 20, Outcome::Ignored);
    feed(&mut l, 2, 100, 20, Outcome::Ignored);
    assert_eq!(l.min_rt(), None);
    assert_eq!(l.limit(), 20);
}

proptest! {
    #[test]
    fn littles_limit_stays_within_min_and_max(
        samples in prop::collection::vec((0u64..5_000, 1u64..2_000, 0u8..3), 1..400),
        min in 1usize..10,
        span in 0usize..100,
    ) {
        let max = min + span;
        let mut l = LittlesLaw::new(LittlesLawConfig { min, max, ..LittlesLawConfig::default() });
        let mut t = 0u64;
        for (gap_us, rt_us, o) in samples {
            t += gap_us * 1000;
            let outcome = [Outcome::Success, Outcome::Dropped, Outcome::Ignored][o as usize];
            let s = Sample {
                start: Nanos::new(t),
                latency: Duration::from_micros(rt_us * 100),
                in_flight: 3,
                outcome,
            };
            let limit = l.on_sample(&s);
            prop_assert!((min..=max).contains(&limit), "limit {} not in [{}, {}]", limit, min, max);
        }
    }
}
