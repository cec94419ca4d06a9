//! A keyed GCRA limiter: one bucket per key, in bounded shards.

use std::hash::{BuildHasher, Hash};
use std::num::NonZeroUsize;

use hashbrown::DefaultHashBuilder;

use crate::clock::{Clock, MonotonicClock};
use crate::rate::gcra::{GcraParams, ParamsCell, requote, step};
use crate::rate::{CheckError, Decision, Quota};
use crate::sync::{Mutex, lock};

use super::shard::Shard;

/// Keys per shard we aim for; more shards only for large limiters.
const KEYS_PER_SHARD: usize = 4096;
const MAX_SHARDS: usize = 64;

// A shard on a cache line pair of its own, so two threads on two shards do not share a line.
#[repr(align(128))]
#[derive(Debug)]
struct Padded<T>(T);

/// A GCRA rate limiter per key (client IP, header value, any `Hash + Eq + Clone` key), with at
/// most `max_keys` keys in memory. See the [module docs](crate::keyed) for what happens when
/// it is full.
///
/// # Examples
///
/// ```
/// use sluicegate::clock::FakeClock;
/// use sluicegate::keyed::KeyedGcra;
/// use sluicegate::rate::Quota;
/// use std::net::IpAddr;
/// use std::num::NonZeroUsize;
///
/// let limiter = KeyedGcra::<IpAddr, _>::with_clock(
///     Quota::per_second(1),
///     NonZeroUsize::new(100_000).unwrap(),
///     FakeClock::new(),
/// );
/// let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
/// assert!(limiter.check(&a).is_allowed());
/// assert!(limiter.check(&a).is_denied());
/// assert!(limiter.check(&b).is_allowed());
/// ```
#[derive(Debug)]
pub struct KeyedGcra<K, C: Clock = MonotonicClock, S = DefaultHashBuilder> {
    shards: Box<[Padded<Mutex<Shard<K>>>]>,
    params: ParamsCell,
    quota: Mutex<Quota>,
    max_keys: usize,
    hasher: S,
    clock: C,
}

impl<K: Hash + Eq + Clone> KeyedGcra<K, MonotonicClock, DefaultHashBuilder> {
    /// A limiter giving each key `quota`, tracking at most `max_keys` keys, on the system's
    /// monotonic clock.
    pub fn new(quota: Quota, max_keys: NonZeroUsize) -> Self {
        Self::with_clock(quota, max_keys, MonotonicClock)
    }
}

impl<K: Hash + Eq + Clone, C: Clock> KeyedGcra<K, C, DefaultHashBuilder> {
    /// A limiter giving each key `quota`, tracking at most `max_keys` keys, reading `clock`.
    pub fn with_clock(quota: Quota, max_keys: NonZeroUsize, clock: C) -> Self {
        Self::with_clock_and_hasher(quota, max_keys, clock, DefaultHashBuilder::default())
    }
}

impl<K: Hash + Eq + Clone, C: Clock, S: BuildHasher> KeyedGcra<K, C, S> {
    /// As [`with_clock`](KeyedGcra::with_clock), hashing keys with `hasher` (the default is
    /// foldhash, seeded per process; pass `std::hash::RandomState` for SipHash).
    pub fn with_clock_and_hasher(
        quota: Quota,
        max_keys: NonZeroUsize,
        clock: C,
        hasher: S,
    ) -> Self {
        let max_keys = max_keys.get();
        let shards = (max_keys / KEYS_PER_SHARD).clamp(1, MAX_SHARDS);
        let shards = if shards.is_power_of_two() {
            shards
        } else {
            shards.next_power_of_two() / 2
        };
        let (share, extra) = (max_keys / shards, max_keys % shards);
        KeyedGcra {
            shards: (0..shards)
                .map(|i| Padded(Mutex::new(Shard::new(share + usize::from(i < extra)))))
                .collect(),
            params: ParamsCell::new(GcraParams::from_quota(&quota)),
            quota: Mutex::new(quota),
            max_keys,
            hasher,
            clock,
        }
    }

    /// Checks for, and on success consumes, one request for `key`.
    pub fn check(&self, key: &K) -> Decision {
        self.check_n(key, 1).unwrap_or_else(|_| Decision::never())
    }

    /// Checks for, and on success consumes, `n` requests for `key` at once (all or nothing).
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the burst.
    pub fn check_n(&self, key: &K, n: u32) -> Result<Decision, CheckError> {
        self.run(key, n, true)
    }

    /// The decision [`check`](Self::check) would make now, without consuming anything (and
    /// without starting to track `key`).
    pub fn peek(&self, key: &K) -> Decision {
        self.peek_n(key, 1).unwrap_or_else(|_| Decision::never())
    }

    /// The decision [`check_n`](Self::check_n) would make now, without consuming anything.
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the burst.
    pub fn peek_n(&self, key: &K, n: u32) -> Result<Decision, CheckError> {
        self.run(key, n, false)
    }

    fn run(&self, key: &K, n: u32, consume: bool) -> Result<Decision, CheckError> {
        let now = self.clock.now().as_u64();
        let hash = self.hasher.hash_one(key);
        // Bits 32.. pick the shard: hashbrown uses the low bits and the top seven itself.
        let shard = &self.shards[(hash >> 32) as usize & (self.shards.len() - 1)].0;
        loop {
            // Read the quota before taking the shard lock: a quota change holds readers off
            // while it takes every shard lock in turn.
            let (seq, params) = self.params.read();
            let mut entries = lock(shard);
            if !self.params.unchanged_since(seq) {
                continue;
            }
            if let Some(tat) = entries.get_mut(hash, key) {
                let (decision, next) = step(params, *tat, now, n)?;
                if let (true, Some(next)) = (consume, next) {
                    *tat = next;
                }
                return Ok(decision);
            }
            // A key not tracked has a full bucket.
            let (decision, next) = step(params, 0, now, n)?;
            if let (true, Some(next)) = (consume, next)
                && next > now
            {
                entries.insert(hash, key.clone(), next, now, |k| self.hasher.hash_one(k));
            }
            return Ok(decision);
        }
    }

    /// Replaces every key's quota, keeping each key's state: what a key has left is kept
    /// (capped at the new burst), so the change hands out no burst. Keys not tracked start
    /// full, as before.
    pub fn set_quota(&self, quota: Quota) {
        let mut current = lock(&self.quota);
        let now = self.clock.now().as_u64();
        self.params
            .write(GcraParams::from_quota(&quota), |old, new| {
                for shard in self.shards.iter() {
                    lock(&shard.0).for_each_state(|tat| requote(old, new, tat, now));
                }
            });
        *current = quota;
    }

    /// The quota each key gets.
    pub fn quota(&self) -> Quota {
        *lock(&self.quota)
    }

    /// Drops every key whose bucket has refilled (forgetting it changes nothing); returns how
    /// many were dropped. Full shards do this by themselves; call it periodically to give
    /// memory back sooner.
    pub fn evict_idle(&self) -> usize {
        let now = self.clock.now().as_u64();
        self.shards
            .iter()
            .map(|shard| lock(&shard.0).evict_idle(now))
            .sum()
    }

    /// Keys tracked now (at most [`max_keys`](Self::max_keys)).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|shard| lock(&shard.0).len()).sum()
    }

    /// Whether no key is tracked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The most keys this limiter tracks at once.
    pub fn max_keys(&self) -> usize {
        self.max_keys
    }

    /// The clock this limiter reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}
