//! loom models of the adaptive limiter's control calls racing its samples. Run by
//! `scripts/test.sh` with the other `loom_*` models.
#![cfg(sluicegate_loom)]

mod loom_support;

use loom::thread;
use loom_support::settled;
use sluicegate::adaptive::{AdaptiveLimiter, LimitAlgorithm, Sample};
use sluicegate::concurrency::ConcurrencyLimiter;

/// An algorithm that asks for one more permit than it has with every sample.
#[derive(Debug)]
struct Grows(usize);

impl LimitAlgorithm for Grows {
    fn name(&self) -> &'static str {
        "grows"
    }

    fn limit(&self) -> usize {
        self.0
    }

    fn on_sample(&mut self, _sample: &Sample) -> usize {
        self.0 += 1;
        self.0
    }
}

/// A request ends while its limiter is detached and held at 0 (a gate pool's hand-over: the
/// old limiter starts nothing until the new one holds slots for it). Once `detach` has
/// returned, no sample may set the limit again: the ending request read "attached" and then
/// set its algorithm's limit after the caller's `set_max(0)`, which started waiters beyond
/// the slots held for them (session 19; loom finds the interleaving before the fix).
#[test]
fn a_sample_ending_as_the_algorithm_is_detached_leaves_the_callers_limit() {
    loom::model(|| {
        let limiter = ConcurrencyLimiter::builder(1).max_queue(4).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter.clone(), Grows(2));
        let permit = adaptive.wrap(limiter.try_acquire_owned().unwrap());
        let ender = thread::spawn(move || permit.success());
        // A point where loom may switch: `detach` runs at any moment of the sample.
        thread::yield_now();
        adaptive.detach();
        limiter.set_max(0).unwrap();
        ender.join().unwrap();
        assert_eq!(limiter.max(), 0, "a sample set the limit after detach()");
        settled(&limiter);
    });
}
