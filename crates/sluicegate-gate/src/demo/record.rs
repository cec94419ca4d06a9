//! Bounded records of a run, however long it goes on: a list that keeps its first entries
//! ([`Kept`]; a counter beside it counts them all), and a latency histogram of fixed relative precision
//! ([`Latencies`]).

use std::time::Duration;

/// The entries a list keeps; beyond, they are only counted. 100 000 pairs of `u128` are
/// 3.2 MB, and more than the benchmark's runs make (a few thousand give-ups in 10 s).
pub(super) const KEEP: usize = 100_000;

/// The first [`KEEP`] entries of a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Kept<T> {
    first: Vec<T>,
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept { first: Vec::new() }
    }
}

impl<T> Kept<T> {
    /// Adds `entry` while fewer than [`KEEP`] are kept.
    pub(super) fn push(&mut self, entry: T) {
        if self.first.len() < KEEP {
            self.first.push(entry);
        }
    }

    /// The entries kept, in the order they came.
    pub(super) fn kept(&self) -> &[T] {
        &self.first
    }
}

/// Linear buckets below `2^SUB` µs (exact to the microsecond up to about 1 ms), then
/// `2^(SUB-1)` buckets per power of two: a bucket is at most 1/512 (0.2 %) of its values.
const SUB: u32 = 10;
/// Buckets for every `u32` of microseconds (up to 71 minutes): 96 KiB of counts at most.
#[cfg(test)]
const BUCKETS: usize = bucket(u32::MAX as u64) + 1;

/// The bucket of `us` microseconds.
const fn bucket(us: u64) -> usize {
    if us < 1 << SUB {
        return us as usize;
    }
    let shift = 64 - us.leading_zeros() - SUB;
    ((shift as usize) << (SUB - 1)) + (us >> shift) as usize
}

/// The smallest value in bucket `i`.
const fn lowest(i: usize) -> u64 {
    if i < 1 << SUB {
        return i as u64;
    }
    let shift = (i >> (SUB - 1)) - 1;
    ((i - (shift << (SUB - 1))) as u64) << shift
}

/// Latencies counted in buckets of fixed relative precision: memory that does not grow
/// with the number of requests, quantiles within 0.2 % (exact below about 1 ms).
#[derive(Clone, Debug, Default)]
pub(super) struct Latencies {
    /// Counts per bucket, grown to the highest bucket seen (at most [`BUCKETS`]).
    counts: Vec<u64>,
    total: u64,
}

impl Latencies {
    /// Counts one latency (at most `u32::MAX` µs; longer counts as that).
    pub(super) fn record(&mut self, latency: Duration) {
        let us = u64::try_from(latency.as_micros())
            .map_or(u64::from(u32::MAX), |us| us.min(u64::from(u32::MAX)));
        let i = bucket(us);
        if self.counts.len() <= i {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.total += 1;
    }

    /// The `q` quantile (`0.0..=1.0`): the smallest value of the bucket holding the
    /// `ceil(q × n)`-th smallest latency (at least the first); zero with none recorded.
    pub(super) fn quantile(&self, q: f64) -> Duration {
        if self.total == 0 {
            return Duration::ZERO;
        }
        let rank = ((self.total as f64 * q).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Duration::from_micros(lowest(i));
            }
        }
        unreachable!("the counts add up to the total")
    }

    /// How many buckets are held (for the memory bound).
    #[cfg(test)]
    fn buckets(&self) -> usize {
        self.counts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_kept_list_keeps_the_first() {
        let mut k = Kept::default();
        for i in 0..KEEP as u64 + 10 {
            k.push(i);
        }
        assert_eq!(k.kept().len(), KEEP);
        assert_eq!(k.kept()[KEEP - 1], KEEP as u64 - 1);
    }

    #[test]
    fn buckets_cover_every_value_in_order() {
        assert_eq!(BUCKETS, 12_288);
        let mut last = 0;
        for us in (0..1 << 20).chain([u64::from(u32::MAX) - 1, u64::from(u32::MAX)]) {
            let i = bucket(us);
            assert!(
                i == last || i == last + 1 || us > 1 << 20,
                "{us}: {last} then {i}"
            );
            assert!(lowest(i) <= us && bucket(lowest(i)) == i, "{us}");
            last = i;
        }
        assert_eq!(bucket(u64::from(u32::MAX)), BUCKETS - 1);
    }

    /// The histogram never holds more than [`BUCKETS`] counts, whatever it records.
    #[test]
    fn the_histogram_stays_bounded() {
        let mut l = Latencies::default();
        for us in [0, 1, 999_999, u64::MAX] {
            l.record(Duration::from_micros(us));
        }
        l.record(Duration::MAX);
        assert_eq!(l.buckets(), BUCKETS);
        assert_eq!(l.quantile(1.0), Duration::from_micros(lowest(BUCKETS - 1)));
    }

    proptest! {
        /// Quantiles are the exact ones (the list's `ceil(q × n)`-th) below 1024 µs, and
        /// within 0.2 % under them above.
        #[test]
        fn quantiles_are_within_a_fifth_of_a_percent(
            mut us in prop::collection::vec(0u64..20_000_000, 1..400),
            q in 0.0f64..=1.0,
        ) {
            let mut l = Latencies::default();
            for &v in &us {
                l.record(Duration::from_micros(v));
            }
            us.sort_unstable();
            let rank = ((us.len() as f64 * q).ceil() as usize).clamp(1, us.len());
            let exact = us[rank - 1];
            let got = l.quantile(q).as_micros() as u64;
            prop_assert!(got <= exact, "{got} > {exact}");
            if exact < 1 << SUB {
                prop_assert_eq!(got, exact);
            } else {
                prop_assert!((exact - got) as f64 <= exact as f64 / 512.0, "{got} for {exact}");
            }
        }
    }
}
