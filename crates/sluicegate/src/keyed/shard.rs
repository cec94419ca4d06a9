//! One shard of a keyed limiter: a hash table of key → GCRA state with a hard size cap.

use hashbrown::HashTable;

/// The top bit of an entry's word: denied since its bucket was last full.
const DENIED: u64 = 1 << 63;

/// A tracked key: its GCRA state and whether it was denied since it last refilled, in one
/// word so that an entry costs no more than a key and a `u64`.
#[derive(Debug)]
pub(crate) struct Entry<K> {
    key: K,
    // `tat` (theoretical arrival time, ns, below 2^63: ~292 years of clock) | `DENIED`.
    word: u64,
}

impl<K> Entry<K> {
    fn new(key: K, tat: u64) -> Self {
        Entry {
            key,
            word: tat.min(DENIED - 1),
        }
    }

    /// Theoretical arrival time, ns: the key is idle (as good as fresh) once it is `<= now`.
    #[inline]
    pub(crate) fn tat(&self) -> u64 {
        self.word & !DENIED
    }

    /// Denied since its bucket was last full: forgetting it would lift a limit in force, so
    /// it is the last to be evicted.
    #[cfg(test)]
    fn denied(&self) -> bool {
        self.word & DENIED != 0
    }

    /// Records one check at `now`: the new state when allowed, the denial otherwise.
    #[inline]
    pub(crate) fn record(&mut self, next: Option<u64>, now: u64) {
        match next {
            // A key that had refilled starts over, as a fresh key would.
            Some(next) if self.tat() <= now => self.word = next.min(DENIED - 1),
            Some(next) => self.word = next.min(DENIED - 1) | (self.word & DENIED),
            None => self.word |= DENIED,
        }
    }

    fn set_tat(&mut self, tat: u64) {
        self.word = tat.min(DENIED - 1) | (self.word & DENIED);
    }

    /// The eviction order when no key is idle: keys never denied first, and within each
    /// group the one owing least (closest to refilled). The word itself sorts so.
    fn eviction_rank(&self) -> u64 {
        self.word
    }
}

/// Keys and their GCRA state, at most `cap` of them.
#[derive(Debug)]
pub(crate) struct Shard<K> {
    entries: HashTable<Entry<K>>,
    cap: usize,
}

impl<K: Eq> Shard<K> {
    pub(crate) fn new(cap: usize) -> Self {
        Shard {
            entries: HashTable::new(),
            cap,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entry of `key`, if it is tracked.
    pub(crate) fn get_mut(&mut self, hash: u64, key: &K) -> Option<&mut Entry<K>> {
        self.entries.find_mut(hash, |e| e.key == *key)
    }

    /// Starts tracking a key not tracked yet, making room first if the shard is full.
    pub(crate) fn insert(
        &mut self,
        hash: u64,
        key: K,
        tat: u64,
        now: u64,
        rehash: impl Fn(&K) -> u64,
    ) {
        if self.entries.len() >= self.cap {
            self.make_room(now);
        }
        self.entries
            .insert_unique(hash, Entry::new(key, tat), |e| rehash(&e.key));
    }

    /// Drops idle keys (state at or before `now`); returns how many.
    pub(crate) fn evict_idle(&mut self, now: u64) -> usize {
        let before = self.entries.len();
        self.entries.retain(|e| e.tat() > now);
        before - self.entries.len()
    }

    /// Rewrites every key's state.
    pub(crate) fn for_each_state(&mut self, mut f: impl FnMut(u64) -> u64) {
        for e in self.entries.iter_mut() {
            e.set_tat(f(e.tat()));
        }
    }

    /// Frees at least an eighth of the shard: idle keys first (forgetting them changes
    /// nothing), then keys never denied, owing the least first, and denied keys only when
    /// nothing else is left.
    fn make_room(&mut self, now: u64) {
        self.evict_idle(now);
        let target = self.cap - (self.cap / 8).max(1);
        if self.entries.len() <= target {
            return;
        }
        let excess = self.entries.len() - target;
        let mut ranks: Vec<u64> = self.entries.iter().map(Entry::eviction_rank).collect();
        let (below, &mut threshold, _) = ranks.select_nth_unstable(excess - 1);
        // Keys checked at the same instant share a rank, so drop only as many of those tied
        // at the threshold as needed: dropping them all could empty the shard.
        let mut tied_to_drop = excess - below.iter().filter(|&&r| r < threshold).count();
        self.entries.retain(|e| {
            let rank = e.eviction_rank();
            if rank < threshold {
                false
            } else if rank == threshold && tied_to_drop > 0 {
                tied_to_drop -= 1;
                false
            } else {
                true
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_shard_drops_idle_keys_then_the_least_owing() {
        let mut shard = Shard::new(8);
        for k in 0..8u64 {
            shard.insert(k, k, 100 + k, 0, |k| *k);
        }
        assert_eq!(shard.len(), 8);
        shard.insert(99, 99, 1_000, 0, |k| *k);
        assert!(shard.len() <= 8);
        assert!(
            shard.get_mut(0, &0).is_none(),
            "the least owing key goes first"
        );
        assert!(shard.get_mut(7, &7).is_some(), "the most owing key stays");
        assert!(shard.get_mut(99, &99).is_some());
        let tracked = shard.len();
        assert_eq!(shard.evict_idle(10_000), tracked);
        assert_eq!(shard.len(), 0);
    }

    #[test]
    fn a_denied_key_goes_after_every_key_never_denied() {
        let mut shard = Shard::new(8);
        for k in 0..8u64 {
            shard.insert(k, k, 100 + k, 0, |k| *k);
        }
        shard.get_mut(0, &0).unwrap().record(None, 50);
        shard.insert(99, 99, 1_000, 60, |k| *k);
        assert!(shard.get_mut(0, &0).is_some(), "the denied key stays");
        assert!(
            shard.get_mut(1, &1).is_none(),
            "the least owing of the rest goes"
        );
        // Once its bucket is full again, an allowed check makes it an ordinary key.
        let denied = shard.get_mut(0, &0).unwrap();
        denied.record(Some(300), 200);
        assert!(!denied.denied());
        assert_eq!(denied.tat(), 300);
    }
}
