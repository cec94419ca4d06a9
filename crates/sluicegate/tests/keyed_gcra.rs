//! Keyed GCRA: keys are independent, memory is bounded, idle keys are forgotten safely.

use std::num::NonZeroUsize;
use std::time::Duration;

use sluicegate::clock::FakeClock;
use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::Quota;

fn limiter(quota: Quota, max_keys: usize) -> (KeyedGcra<u64, FakeClock>, FakeClock) {
    let clock = FakeClock::new();
    let limiter = KeyedGcra::with_clock(quota, NonZeroUsize::new(max_keys).unwrap(), clock.clone());
    (limiter, clock)
}

#[test]
fn each_key_has_its_own_bucket() {
    let (limiter, _clock) = limiter(Quota::per_second(2).unwrap(), 10);
    assert!(limiter.check_n(&1, 2).unwrap().is_allowed());
    assert!(limiter.check(&1).is_denied());
    assert!(limiter.check_n(&2, 2).unwrap().is_allowed());
}

#[test]
fn peek_neither_consumes_nor_starts_tracking_a_key() {
    let (limiter, _clock) = limiter(Quota::per_second(1).unwrap(), 10);
    assert!(limiter.peek(&7).is_allowed());
    assert!(limiter.is_empty());
    assert!(limiter.check(&7).is_allowed());
    assert!(limiter.peek(&7).is_denied());
}

#[test]
fn idle_keys_are_evicted_and_come_back_with_a_full_bucket() {
    let (limiter, clock) = limiter(Quota::per_second(10).unwrap(), 100);
    for key in 0..50 {
        assert!(limiter.check(&key).is_allowed());
    }
    assert_eq!(limiter.evict_idle(), 0, "nobody has refilled yet");
    clock.advance(Duration::from_millis(100));
    assert_eq!(limiter.evict_idle(), 50);
    assert!(limiter.check_n(&3, 10).unwrap().is_allowed());
}

#[test]
fn a_flood_of_new_keys_never_grows_past_the_bound_and_keeps_the_heaviest_spender() {
    let (limiter, clock) = limiter(Quota::per_minute(60), 1_000);
    // Key 0 spends its whole burst: it owes the most, so it is the last to be dropped.
    assert!(limiter.check_n(&0, 60).unwrap().is_allowed());
    for key in 1..100_000u64 {
        let _ = limiter.check(&key);
        if key % 1_000 == 0 {
            clock.advance(Duration::from_micros(1));
            assert!(limiter.len() <= 1_000);
        }
    }
    assert!(
        limiter.check(&0).is_denied(),
        "forgetting key 0 would have handed it a fresh burst"
    );
}

/// Defect 8 of issue 8: with `per_second(1)` (burst 1) every key that made one request owes
/// the same, and the one that owed least, the oldest, was dropped first when a flood of new
/// keys filled the table: an exhausted, denied key came back with a fresh bucket at once. A
/// denied key must not be the cheapest to evict.
#[test]
fn a_denied_key_stays_denied_under_a_flood_of_new_keys() {
    let (limiter, clock) = limiter(Quota::per_second(1).unwrap(), 1_000);
    assert!(limiter.check(&0).is_allowed());
    assert!(limiter.check(&0).is_denied());
    // 100 000 new keys in 0.1 s, a hundred times the table.
    for key in 1..100_000u64 {
        assert!(limiter.check(&key).is_allowed(), "a new key starts full");
        clock.advance(Duration::from_nanos(1_000));
        if key % 5_000 == 0 {
            assert!(
                limiter.check(&0).is_denied(),
                "forgotten after {key} new keys"
            );
            assert!(limiter.len() <= 1_000);
        }
    }
    assert!(limiter.check(&0).is_denied());
    // Its second is up: allowed again, once.
    clock.advance(Duration::from_secs(1));
    assert!(limiter.check(&0).is_allowed());
    assert!(limiter.check(&0).is_denied());
}

/// The same with `per_minute(1)` and many shards: a denied key keeps its place in whichever
/// shard holds it.
#[test]
fn a_denied_key_stays_denied_under_a_flood_across_shards() {
    let (limiter, clock) = limiter(Quota::per_minute(1), 40_000);
    for victim in 0..8u64 {
        assert!(limiter.check(&victim).is_allowed());
        assert!(limiter.check(&victim).is_denied());
    }
    for key in 8..400_000u64 {
        let _ = limiter.check(&key);
        if key % 1_000 == 0 {
            clock.advance(Duration::from_millis(1));
        }
    }
    for victim in 0..8u64 {
        assert!(limiter.check(&victim).is_denied(), "key {victim} forgotten");
    }
}

#[test]
fn quota_change_keeps_each_keys_state() {
    let (limiter, clock) = limiter(Quota::per_second(10).unwrap(), 10);
    assert!(limiter.check_n(&1, 10).unwrap().is_allowed());
    limiter.set_quota(Quota::per_second(100).unwrap());
    assert!(
        limiter.check(&1).is_denied(),
        "the change handed out a burst"
    );
    clock.advance(Duration::from_millis(10));
    assert!(limiter.check(&1).is_allowed(), "the new rate applies");
    assert!(
        limiter.check_n(&2, 100).unwrap().is_allowed(),
        "an untracked key starts full"
    );
    limiter.set_quota(Quota::deny_all());
    clock.advance(Duration::from_secs(10));
    assert!(limiter.check(&3).is_denied());
}
