//! Memory stays bounded: 10 million distinct keys through a limiter bounded at 100 000 keys.
//!
//! Alone in its own test binary so that the resident-set measurement sees no other test.

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use sluicegate::clock::FakeClock;
use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::Quota;

const MAX_KEYS: usize = 100_000;
const KEYS: u64 = 10_000_000;

/// Resident memory of this process in bytes, from `/proc/self/statm` (Linux).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

// ~50 s in a debug build (hashbrown unoptimised), ~1 s in release: the suite runs it in
// release from scripts/test.sh; `cargo test` in debug lists it as ignored, never shrunk.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "10M keys: run with --release (scripts/test.sh does)"
)]
fn ten_million_distinct_keys_leave_at_most_max_keys_entries_and_bounded_memory() {
    let clock = FakeClock::new();
    // One request per key per hour: no key goes idle during the run, so every insertion past
    // the bound takes the eviction path (the worst case).
    let limiter = KeyedGcra::<u64, _>::with_clock(
        Quota::per_hour(10),
        NonZeroUsize::new(MAX_KEYS).unwrap(),
        clock.clone(),
    );
    let started = Instant::now();
    let mut baseline = None;
    let mut peak_growth = 0u64;
    for key in 0..KEYS {
        assert!(limiter.check(&key).is_allowed());
        if key % 1_000_000 == 999_999 {
            clock.advance(Duration::from_micros(1));
            let len = limiter.len();
            assert!(
                len <= MAX_KEYS,
                "{len} keys tracked after {} distinct keys",
                key + 1
            );
            // The first million fills the table; from then on memory must stay flat.
            let now = resident_bytes();
            match (baseline, now) {
                (None, Some(now)) => baseline = Some(now),
                (Some(base), Some(now)) => peak_growth = peak_growth.max(now.saturating_sub(base)),
                _ => {}
            }
        }
    }
    assert!(limiter.len() <= MAX_KEYS);
    assert!(
        limiter.len() >= MAX_KEYS / 2,
        "the limiter should still hold recent keys"
    );
    // 100 000 entries are ~2-4 MB; the growth after the table filled must stay far below
    // what 9 million more entries would take (~150 MB).
    assert!(
        peak_growth < 16 << 20,
        "resident memory grew by {peak_growth} bytes after filling"
    );
    eprintln!(
        "{KEYS} keys in {:?}, {} tracked, resident growth after filling: {} KiB",
        started.elapsed(),
        limiter.len(),
        peak_growth / 1024
    );
}
