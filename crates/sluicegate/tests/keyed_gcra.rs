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
