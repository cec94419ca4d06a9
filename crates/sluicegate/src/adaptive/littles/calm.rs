//! The failure share the resource shows when it is not loaded: the background against which
//! drops are read as overload.
//!
//! A drop backs the limit off because overload makes failures (answers past the client's
//! deadline, a queue that sheds). But some services fail a share of requests whatever their
//! load — a dependency down for some keys, a flaky path — and answer those failures with a
//! latency like their successes' (faster than the unqueued answers they are left out
//! already: `littles.rs`, `on_sample`). Read as overload, 5 % of requests failing at 2 % of
//! their service time backed the limit off every few buckets and turned away a third of a
//! load the service carried (`random_drops_0.8x`). So the buckets in which the resource kept
//! no queue of its own beyond the queue target (calm ones, probes left out) give the share of
//! drops it shows anyway, and only drops beyond that share, by more than chance explains, are
//! overload.
//!
//! Calm is "no queue beyond the target", not "unloaded": at the steering's set point in
//! overload most buckets are calm, and drops there join the background (review 30b: late
//! answers past a deadline shorter than the queueing delay, a service's own `503`s that come
//! later than the floor). A rule that took calm to need unpinned buckets lost the change
//! altogether (failures at any load at 1.5×: 0.97 → 0.08 of capacity): in overload nearly
//! every bucket is pinned, and the background was never learnt. What keeps true overload in
//! view is the queue: drops that overload causes come with one, in buckets that are not calm.
//! Before a probe the floor is the least of the buckets' low RTs, and the bucket that set it
//! reads calm however queued it is: hence [`LEAST_SAMPLES`].

use std::collections::VecDeque;

/// Samples of calm buckets remembered, at most (the newest whole buckets): the background
/// share to within ±0.7 % at a share of 5 % (one standard error), and a new background is
/// learnt within this many calm answers.
const MEMORY: u64 = 1000;

/// Calm samples needed before their share counts: a background of a few dozen samples is no
/// share (before a probe, the bucket whose low RT set the floor reads calm queued or not: in
/// front of 5 workers of 500 ms, 36 late answers of 67 in two such buckets made a background
/// of 54 %, and the back-off after the workers fell to 2 waited 35 s; review 30b).
const LEAST_SAMPLES: u64 = 200;

/// Standard errors (Poisson) of the background by which the drops of the window judged must
/// exceed it, on top of the drop fraction: one-sided, a back-off on chance alone about once
/// in 700 judgements.
const SIGNIFICANCE: f64 = 3.0;

/// The drops and samples of the recent calm buckets.
#[derive(Clone, Debug, Default)]
pub(super) struct CalmDrops {
    /// `(drops, samples)` of each calm bucket remembered, oldest first.
    buckets: VecDeque<(u64, u64)>,
    drops: u64,
    samples: u64,
}

impl CalmDrops {
    /// A calm bucket's drops and samples (passes and drops).
    pub(super) fn add(&mut self, drops: u64, samples: u64) {
        if samples == 0 {
            return;
        }
        self.buckets.push_back((drops, samples));
        self.drops += drops;
        self.samples += samples;
        while self.samples - self.buckets.front().map_or(0, |&(_, n)| n) >= MEMORY {
            let (d, n) = self.buckets.pop_front().expect("front seen above");
            self.drops -= d;
            self.samples -= n;
        }
    }

    /// The share of calm samples that were drops (0 with fewer than [`LEAST_SAMPLES`] samples).
    /// One drop makes a share: its error goes into the judgement ([`Self::overload`]). (Five
    /// were needed before, as two read as exact held back a back-off that should have come; but
    /// failures that flap — 30 % for 3 s in every 6 s — left two to four calm drops in the
    /// memory between bursts, and each burst's first buckets backed off on 2 % fresh drops
    /// before five were seen: `flapping_failures_1.5x` 0.91–0.95 of capacity, 0.97 since.)
    pub(super) fn share(&self) -> f64 {
        if self.samples < LEAST_SAMPLES {
            0.0
        } else {
            self.drops as f64 / self.samples as f64
        }
    }

    /// Whether `drops` of `samples` are overload: at least `fraction` of them beyond the
    /// background share, and more than [`SIGNIFICANCE`] standard errors beyond: the error of
    /// the drops judged (Poisson, `n p`) and that of the share itself, learnt from the calm
    /// samples `N` (`n² p ÷ N`: a share of one drop in a thousand is not exact). With no
    /// background, `fraction` of them, as before there was one.
    pub(super) fn overload(&self, drops: u64, samples: u64, fraction: f64) -> bool {
        if samples == 0 {
            return false;
        }
        let (n, p) = (samples as f64, self.share());
        let variance = if p > 0.0 {
            n * p * (1.0 + n / self.samples as f64)
        } else {
            0.0
        };
        drops as f64 >= n * (p + fraction) + SIGNIFICANCE * variance.sqrt()
    }

    /// The samples the window judged should hold to resolve `fraction` beyond the background:
    /// `1 ÷ fraction` with none, more as it grows (its noise then hides a small excess).
    pub(super) fn window(&self, fraction: f64) -> f64 {
        (1.0 + self.share() / fraction) / fraction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_background_one_drop_in_a_hundred_is_overload() {
        let calm = CalmDrops::default();
        assert!(calm.overload(1, 100, 0.01));
        assert!(!calm.overload(0, 100, 0.01));
        assert_eq!(calm.window(0.01), 100.0);
    }

    #[test]
    fn a_steady_background_share_is_not_overload_but_a_rise_over_it_is() {
        let mut calm = CalmDrops::default();
        for _ in 0..20 {
            calm.add(5, 100); // 5 % fail whatever the load
        }
        assert!((calm.share() - 0.05).abs() < 1e-9);
        let n = calm.window(0.01); // 600 samples
        assert_eq!(n, 600.0);
        // The background itself, and a chance excess of two standard errors: not overload.
        assert!(!calm.overload(30, 600, 0.01));
        assert!(!calm.overload(30 + 11, 600, 0.01));
        // A tenth of the answers failing: overload.
        assert!(calm.overload(60, 600, 0.01));
    }

    #[test]
    fn it_remembers_only_the_newest_calm_samples() {
        let mut calm = CalmDrops::default();
        for _ in 0..20 {
            calm.add(10, 100);
        }
        for _ in 0..10 {
            calm.add(0, 100);
        }
        // The last 1000 samples are the ten clean buckets: the old failures are forgotten.
        assert_eq!(calm.share(), 0.0);
        calm.add(0, 0);
        assert_eq!(calm.share(), 0.0);
        // One drop in a thousand is a share.
        calm.add(1, 100);
        assert!((calm.share() - 0.001).abs() < 1e-9);
    }

    #[test]
    fn a_share_learnt_from_few_drops_is_not_taken_as_exact() {
        // Five drops in a thousand calm samples: a share of 0.5 %, give or take 0.22 %.
        let mut calm = CalmDrops::default();
        for k in 0..10 {
            calm.add(u64::from(k % 2 == 0), 100);
        }
        assert!((calm.share() - 0.005).abs() < 1e-9);
        // A thousand judged: 15 expected at the share and the fraction, and 3 standard
        // errors of both the judged drops and the share (9.5) on top. 22 would pass with the
        // share taken as exact (3 × √5 = 6.7); they are not overload, 25 are.
        assert!(!calm.overload(22, 1000, 0.01));
        assert!(calm.overload(25, 1000, 0.01));
    }

    #[test]
    fn a_few_dozen_calm_samples_are_no_share() {
        // Review 30b: before a probe, two queued buckets of 67 answers, 36 of them late, read
        // calm and made a background of 54 %; the back-off a fall in capacity called for then
        // waited 35 s.
        let mut calm = CalmDrops::default();
        calm.add(36, 67);
        assert_eq!(calm.share(), 0.0);
        assert!(calm.overload(36, 67, 0.01));
        calm.add(60, 140);
        assert!((calm.share() - 96.0 / 207.0).abs() < 1e-9);
    }
}
