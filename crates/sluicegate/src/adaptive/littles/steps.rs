//! The slow start's last step judged by what it bought: the pass rate of the pinned buckets at
//! the limit it stands at against that at the limit it stepped from.

use super::bucket::Bucket;

/// The pinned buckets at one limit of the slow start: their answers, their time, and the most
/// workers an answer counted busy.
#[derive(Clone, Copy, Debug)]
struct Level {
    limit: usize,
    passes: u64,
    secs: f64,
    counted: usize,
}

impl Level {
    fn rate(&self) -> f64 {
        self.passes as f64 / self.secs.max(1e-9)
    }

    /// The variance of [`Self::rate`]: the count of its answers is taken as Poisson's.
    fn var(&self) -> f64 {
        self.passes.max(1) as f64 / self.secs.max(1e-9).powi(2)
    }
}

/// The pass rate at the limit the slow start stands at and at the one it stepped from.
#[derive(Clone, Debug, Default)]
pub(super) struct SlowSteps {
    before: Option<Level>,
    now: Option<Level>,
}

impl SlowSteps {
    pub(super) fn clear(&mut self) {
        *self = SlowSteps::default();
    }

    /// A pinned bucket `b`, under `limit` from its start to its end. A limit above the one it
    /// stands at is a step (that one becomes the limit before); one below starts anew.
    pub(super) fn add(&mut self, limit: usize, b: &Bucket) {
        match self.now {
            Some(ref mut l) if l.limit == limit => {
                l.passes += b.passes;
                l.secs += b.span.as_secs_f64();
                l.counted = l.counted.max(b.counted);
            }
            now => {
                self.before = now.filter(|l| l.limit < limit && l.passes > 0);
                self.now = Some(Level {
                    limit,
                    passes: b.passes,
                    secs: b.span.as_secs_f64(),
                    counted: b.counted,
                });
            }
        }
    }

    /// The limit the last step began at, where it bought nothing: at `limit`, the pass rate
    /// is no more than at the limit before by `significance` standard errors, and short of
    /// the step's share of it (the rate before × the step's growth) by as many; and no answer
    /// since the step counted as many workers busy as that limit before, so none idles there.
    pub(super) fn bought_nothing(&self, limit: usize, significance: f64) -> Option<usize> {
        let (before, now) = (self.before?, self.now?);
        if now.limit != limit || now.passes == 0 {
            return None;
        }
        let gain = now.rate() - before.rate();
        let se = (now.var() + before.var()).sqrt();
        let share = before.rate() * (now.limit as f64 / before.limit as f64 - 1.0);
        (gain < significance * se && gain < share - significance * se && now.counted < before.limit)
            .then_some(before.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pinned(passes: u64, ms: u64, counted: usize) -> Bucket {
        let mut b = Bucket::new(Duration::from_millis(ms));
        b.passes = passes;
        b.counted = counted;
        b
    }

    /// `demo_busy_2x` seed 214: 18 and 13 answers in 100 ms at 20 permits, 25 in 112 ms at 30,
    /// 13 in 113 ms at 45 (the answers counted 10–19 busy): the step to 45 bought nothing, back
    /// to 30. The step to 30 is not judged so (its 223/s is within the noise of a gain).
    #[test]
    fn a_step_that_bought_no_pass_rate_goes_back_to_the_limit_before() {
        let mut s = SlowSteps::default();
        s.add(20, &pinned(18, 100, 10));
        s.add(20, &pinned(13, 100, 12));
        s.add(30, &pinned(25, 112, 19));
        assert_eq!(s.bought_nothing(30, 1.0), None);
        s.add(45, &pinned(13, 113, 10));
        assert_eq!(s.bought_nothing(45, 1.0), Some(30));
        assert_eq!(
            s.bought_nothing(68, 1.0),
            None,
            "judged only at the limit it stands at"
        );
    }

    /// The same rates where an answer at 45 counted 30 busy (every permit of the limit before
    /// in service: a surge of slow requests in front of a pool of 50, `two_speeds_0.8x`), or
    /// where the step's share of the rate is within the noise (a few answers a bucket), or
    /// where the rate grew by more than its noise: no verdict.
    #[test]
    fn a_step_is_not_judged_on_a_count_that_reached_the_limit_before_or_on_noise() {
        let mut s = SlowSteps::default();
        s.add(30, &pinned(25, 112, 19));
        s.add(45, &pinned(13, 113, 30));
        assert_eq!(s.bought_nothing(45, 1.0), None);
        let mut s = SlowSteps::default();
        s.add(20, &pinned(3, 100, 10));
        s.add(30, &pinned(3, 100, 10));
        assert_eq!(s.bought_nothing(30, 1.0), None);
        let mut s = SlowSteps::default();
        s.add(20, &pinned(200, 100, 20));
        s.add(30, &pinned(250, 100, 19));
        assert_eq!(
            s.bought_nothing(30, 1.0),
            None,
            "a partial gain: the knee is past 20"
        );
    }
}
