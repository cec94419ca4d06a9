//! A request's wait for a slot of its pool, which counts the client as gone when it leaves
//! the queue: the departure is counted where it happens, once, by the request itself; and
//! which, turned away `queue_full` or `predicted_timeout` while a hand-over is on, asks once more with the
//! hand-over's asks brought in step first (some may stand for waiters gone since: see the
//! `handover` module).
//!
//! The limiters' own `cancelled` counters cannot say it: during a hand-over the gate's own
//! asks for slots wait in a limiter's queue too, and one given up as a release grants it
//! counts there as admitted and completed instead (review 4, finding 5: subtracting the
//! asks given up from the limiters' cancellations ran below zero and wrapped).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use sluicegate::concurrency::{AcquireOwned, ConcurrencyLimiter, OwnedPermit, Rejected};

use super::{Outcome, Pool, Stats};

/// The future of [`Pool::admission`]: a slot of the pool's limiter, or why not.
///
/// # Cancel safety
///
/// Dropped while it waits in the queue (the client went away), it leaves the queue and
/// counts one [`Outcome::ClientGone`]; dropped before its first poll or after it finished,
/// it counts nothing.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Admission {
    acquire: AcquireOwned,
    stats: Arc<Stats>,
    /// In the queue: polled, not finished.
    waiting: bool,
    /// While a hand-over is on, the limiter, to ask once more after a `queue_full` with the
    /// asks brought in step (one clone of it per request only then).
    again: Option<ConcurrencyLimiter>,
}

impl Pool {
    /// Asks the pool's limiter for a slot.
    pub fn admission(&self) -> Admission {
        let limiter = self.limit.limiter();
        Admission {
            acquire: limiter.acquire_owned(),
            stats: self.stats.clone(),
            waiting: false,
            again: self.stats.retired.on().then(|| limiter.clone()),
        }
    }
}

impl Future for Admission {
    type Output = Result<OwnedPermit, Rejected>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let mut polled = Pin::new(&mut this.acquire).poll(cx);
        // The queue may hold asks for old waiters served or gone since the last rebalance:
        // brought in step, it is asked once more. So too after a `predicted_timeout`, whose
        // place in line counts those asks (review127: one ahead turned away the request that
        // would have been the first to wait, which always may). Both come only at the start,
        // before the request waits: a fresh acquire takes no one's place in line.
        if let Poll::Ready(Err(Rejected::QueueFull { .. } | Rejected::PredictedTimeout { .. })) =
            polled
            && let Some(limiter) = this.again.take()
        {
            this.stats.retired.rebalance();
            this.acquire = limiter.acquire_owned();
            polled = Pin::new(&mut this.acquire).poll(cx);
        }
        this.waiting = polled.is_pending();
        polled
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        if self.waiting {
            self.stats.count(Outcome::ClientGone);
        }
    }
}
