//! Is Redis up? One flag, a probe schedule with backoff, and counters that only grow.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// What a store has seen of Redis so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HealthSnapshot {
    /// Whether the last call reached Redis in time.
    pub up: bool,
    /// Times Redis was lost (up → down).
    pub outages: u64,
    /// Times Redis came back (down → up).
    pub recoveries: u64,
    /// Decisions made by a failure policy instead of by Redis.
    pub fallbacks: u64,
}

#[derive(Debug)]
pub(super) struct Health {
    down: AtomicBool,
    epoch: Instant,
    // Nanoseconds after `epoch` at which the next probe may go to a Redis that is down.
    next_probe: AtomicU64,
    backoff: AtomicU64,
    min_backoff: u64,
    max_backoff: u64,
    outages: AtomicU64,
    recoveries: AtomicU64,
    fallbacks: AtomicU64,
    /// Woken when Redis is marked down: callers waiting for a global permit then get their
    /// failure policy's answer at once.
    went_down: Notify,
}

impl Health {
    pub(super) fn new(min_backoff: Duration, max_backoff: Duration) -> Self {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Health {
            down: AtomicBool::new(false),
            epoch: Instant::now(),
            next_probe: AtomicU64::new(0),
            backoff: AtomicU64::new(nanos(min_backoff)),
            min_backoff: nanos(min_backoff),
            max_backoff: nanos(max_backoff),
            outages: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            went_down: Notify::new(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Whether this decision may ask Redis: always while it is up; while it is down, only the
    /// one caller that claims a due probe.
    pub(super) fn may_call(&self) -> bool {
        if !self.down.load(Ordering::Acquire) {
            return true;
        }
        let now = self.now();
        let due = self.next_probe.load(Ordering::Acquire);
        // Claim the probe by pushing the next one a backoff ahead; losers fall back.
        now >= due
            && self
                .next_probe
                .compare_exchange(
                    due,
                    now.saturating_add(self.backoff.load(Ordering::Relaxed)),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
    }

    pub(super) fn succeeded(&self) {
        if self.down.swap(false, Ordering::AcqRel) {
            self.recoveries.fetch_add(1, Ordering::Relaxed);
            self.backoff.store(self.min_backoff, Ordering::Relaxed);
            tracing::info!("redis reachable again: global limits are decided by redis");
        }
    }

    /// Marks Redis down after a failed call; `headline` says what kind of failure (the first
    /// one of an outage is logged as `headline: ...`, with `why` as its error).
    pub(super) fn failed(&self, headline: &str, why: &dyn Display) {
        let backoff = if self.down.swap(true, Ordering::AcqRel) {
            // A failed probe: wait twice as long before the next one.
            let b = self.backoff.load(Ordering::Relaxed);
            let b = b.saturating_mul(2).min(self.max_backoff);
            self.backoff.store(b, Ordering::Relaxed);
            b
        } else {
            self.outages.fetch_add(1, Ordering::Relaxed);
            self.went_down.notify_waiters();
            tracing::warn!(
                error = %why,
                "{headline}: global limits fall back to their failure policy"
            );
            self.backoff.load(Ordering::Relaxed)
        };
        self.next_probe
            .store(self.now().saturating_add(backoff), Ordering::Release);
    }

    /// Completes when Redis is next marked down (up → down).
    pub(super) fn went_down(&self) -> tokio::sync::futures::Notified<'_> {
        self.went_down.notified()
    }

    pub(super) fn fell_back(&self) {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn snapshot(&self) -> HealthSnapshot {
        HealthSnapshot {
            up: !self.down.load(Ordering::Acquire),
            outages: self.outages.load(Ordering::Relaxed),
            recoveries: self.recoveries.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_down_redis_is_probed_by_one_caller_at_a_time_with_growing_backoff() {
        let h = Health::new(Duration::from_millis(50), Duration::from_millis(150));
        assert!(h.may_call());
        h.failed("redis unreachable", &"boom");
        assert!(!h.may_call(), "no probe before the backoff");
        tokio::time::advance(Duration::from_millis(50)).await;
        assert!(h.may_call(), "the first caller after the backoff probes");
        assert!(!h.may_call(), "only one caller probes");
        h.failed("redis unreachable", &"still down");
        tokio::time::advance(Duration::from_millis(99)).await;
        assert!(!h.may_call(), "the backoff doubled");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(h.may_call());
        h.succeeded();
        assert!(h.may_call() && h.may_call(), "up: everyone calls");
        let s = h.snapshot();
        assert_eq!((s.up, s.outages, s.recoveries), (true, 1, 1));
    }
}
