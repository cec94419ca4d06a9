//! A request's wait for a slot of its pool, which counts the client as gone when it leaves
//! the queue: the departure is counted where it happens, once, by the request itself.
//!
//! The limiters' own `cancelled` counters cannot say it: during a hand-over the gate's own
//! asks for slots wait in a limiter's queue too, and one given up as a release grants it
//! counts there as admitted and completed instead (review 4, finding 5: subtracting the
//! asks given up from the limiters' cancellations ran below zero and wrapped).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use sluicegate::concurrency::{AcquireOwned, OwnedPermit, Rejected};

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
}

impl Pool {
    /// Asks the pool's limiter for a slot.
    pub fn admission(&self) -> Admission {
        Admission {
            acquire: self.limit.limiter().acquire_owned(),
            stats: self.stats.clone(),
            waiting: false,
        }
    }
}

impl Future for Admission {
    type Output = Result<OwnedPermit, Rejected>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let polled = Pin::new(&mut self.acquire).poll(cx);
        self.waiting = polled.is_pending();
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
