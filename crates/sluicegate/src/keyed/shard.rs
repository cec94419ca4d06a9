//! One shard of a keyed limiter: a hash table of key → GCRA state with a hard size cap.

use hashbrown::HashTable;

/// Keys and their GCRA state (`tat`, ns), at most `cap` of them.
#[derive(Debug)]
pub(crate) struct Shard<K> {
    entries: HashTable<(K, u64)>,
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

    /// The state of `key`, if it is tracked.
    pub(crate) fn get_mut(&mut self, hash: u64, key: &K) -> Option<&mut u64> {
        self.entries
            .find_mut(hash, |(k, _)| k == key)
            .map(|(_, tat)| tat)
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
            .insert_unique(hash, (key, tat), |(k, _)| rehash(k));
    }

    /// Drops idle keys (state at or before `now`); returns how many.
    pub(crate) fn evict_idle(&mut self, now: u64) -> usize {
        let before = self.entries.len();
        self.entries.retain(|(_, tat)| *tat > now);
        before - self.entries.len()
    }

    /// Rewrites every key's state.
    pub(crate) fn for_each_state(&mut self, mut f: impl FnMut(u64) -> u64) {
        for (_, tat) in self.entries.iter_mut() {
            *tat = f(*tat);
        }
    }

    /// Frees at least an eighth of the shard: idle keys first, then those owing the least.
    fn make_room(&mut self, now: u64) {
        self.evict_idle(now);
        let target = self.cap - (self.cap / 8).max(1);
        if self.entries.len() <= target {
            return;
        }
        let excess = self.entries.len() - target;
        let mut states: Vec<u64> = self.entries.iter().map(|(_, tat)| *tat).collect();
        let (below, &mut threshold, _) = states.select_nth_unstable(excess - 1);
        // Keys checked at the same instant share a state, so drop only as many of those tied
        // at the threshold as needed: dropping them all could empty the shard.
        let mut tied_to_drop = excess - below.iter().filter(|&&tat| tat < threshold).count();
        self.entries.retain(|(_, tat)| {
            if *tat < threshold {
                false
            } else if *tat == threshold && tied_to_drop > 0 {
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
}
