//! A bucket of samples: counts, RT sum and the smallest RTs.

use std::time::Duration;

/// Smallest RTs a bucket keeps.
const LOWS: usize = 16;

/// One bucket's worth of samples.
#[derive(Clone, Debug, Default)]
pub(super) struct Bucket {
    /// The smallest RTs seen, ascending (at most `LOWS`).
    pub(super) lows: Vec<Duration>,
    pub(super) passes: u64,
    pub(super) rt_sum: Duration,
    pub(super) drops: u64,
    /// Some request started with every permit taken: demand reached the limit.
    pub(super) saturated: bool,
    /// A min-RT probe was under way: its pass rate understates the resource.
    pub(super) probed: bool,
}

impl Bucket {
    /// The bucket's 5th-percentile RT (the 16th smallest in buckets of over 320): low
    /// quantiles move with queueing delay and hardly with service-time noise.
    pub(super) fn low_rt(&self, min_samples: usize) -> Option<Duration> {
        if self.passes < min_samples.max(1) as u64 {
            return None;
        }
        let k = usize::try_from(self.passes / 20)
            .unwrap_or(LOWS)
            .clamp(1, LOWS);
        self.lows.get(k - 1).copied()
    }

    pub(super) fn add(&mut self, rt: Duration) {
        self.passes += 1;
        self.rt_sum += rt;
        if self.lows.len() < LOWS || rt < self.lows[LOWS - 1] {
            let at = self.lows.partition_point(|&x| x <= rt);
            self.lows.insert(at, rt);
            self.lows.truncate(LOWS);
        }
    }
}

/// Mean of `n` RTs summing to `rt_sum`, if there are at least `min_samples`.
pub(super) fn mean(rt_sum: Duration, n: u64, min_samples: usize) -> Option<Duration> {
    (n >= min_samples.max(1) as u64).then(|| rt_sum / u32::try_from(n).unwrap_or(u32::MAX))
}
