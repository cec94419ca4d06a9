//! The futures of an acquire and of a drain.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use super::core::{Inner, Start};
use super::error::Rejected;
use super::permit::{OwnedPermit, Permit, PermitKind};
use super::queue::{Priority, Ticket};
use crate::sync::Arc;

/// Where one acquire is: not started, in the queue (with its timer), or finished.
#[derive(Debug)]
enum Phase {
    Start,
    Waiting {
        ticket: Ticket,
        timer: Option<Timer>,
    },
    Done,
}

/// The queue timeout of one waiter: tokio's timer, or in loom models a timer the model
/// fires by hand (loom has no time).
#[derive(Debug)]
enum Timer {
    Tokio(Pin<Box<tokio::time::Sleep>>),
    #[cfg(sluicegate_loom)]
    Manual(super::loom_timer::ManualTimer),
}

impl Timer {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self {
            Timer::Tokio(sleep) => sleep.as_mut().poll(cx),
            #[cfg(sluicegate_loom)]
            Timer::Manual(timer) => timer.poll(cx),
        }
    }
}

/// The part of an acquire shared by the borrowed and the owned future.
#[derive(Debug)]
pub(crate) struct Wait {
    priority: Priority,
    timeout: Option<Duration>,
    past_a_full_queue: bool,
    phase: Phase,
    /// Set by a loom model: the timer to use instead of tokio's.
    #[cfg(sluicegate_loom)]
    manual_timer: Option<super::loom_timer::ManualTimer>,
}

impl Wait {
    pub(crate) fn new(timeout: Option<Duration>) -> Self {
        Wait {
            priority: Priority::NORMAL,
            timeout,
            past_a_full_queue: false,
            phase: Phase::Start,
            #[cfg(sluicegate_loom)]
            manual_timer: None,
        }
    }

    /// The timer of a caller that has just queued. Created only then: no clock read on the
    /// fast path.
    fn timer(&mut self) -> Option<Timer> {
        #[cfg(sluicegate_loom)]
        if let Some(timer) = self.manual_timer.take() {
            return Some(Timer::Manual(timer));
        }
        self.timeout
            .map(|t| Timer::Tokio(Box::pin(tokio::time::sleep(t))))
    }

    pub(crate) fn poll(
        &mut self,
        inner: &Inner,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Rejected>> {
        if let Phase::Start = self.phase {
            match inner.start(
                self.priority,
                self.timeout,
                Some(cx.waker()),
                self.past_a_full_queue,
            ) {
                Start::Admitted => return self.finish(Ok(())),
                Start::Rejected(r) => return self.finish(Err(r)),
                Start::Queued(ticket) => {
                    let timer = self.timer();
                    self.phase = Phase::Waiting { ticket, timer };
                    // Just queued with this waker: only the timer needs registering.
                    return self.poll_timer(inner, cx);
                }
            }
        }
        let Phase::Waiting { ticket, .. } = &mut self.phase else {
            panic!("acquire future polled after it completed");
        };
        if let Poll::Ready(result) = inner.poll_ticket(ticket, cx) {
            return self.finish(result);
        }
        self.poll_timer(inner, cx)
    }

    /// Gives up if the queue timeout has passed.
    fn poll_timer(&mut self, inner: &Inner, cx: &mut Context<'_>) -> Poll<Result<(), Rejected>> {
        if let Phase::Waiting {
            timer: Some(timer), ..
        } = &mut self.phase
            && timer.poll(cx).is_ready()
        {
            let Phase::Waiting { ticket, .. } = std::mem::replace(&mut self.phase, Phase::Done)
            else {
                unreachable!()
            };
            return Poll::Ready(inner.time_out(ticket));
        }
        Poll::Pending
    }

    fn finish(&mut self, result: Result<(), Rejected>) -> Poll<Result<(), Rejected>> {
        self.phase = Phase::Done;
        Poll::Ready(result)
    }

    /// Called when the future is dropped: leave the queue, or pass on a permit granted at
    /// the same instant.
    pub(crate) fn cancel(&mut self, inner: &Inner) {
        if let Phase::Waiting { ticket, .. } = std::mem::replace(&mut self.phase, Phase::Done) {
            inner.cancel(ticket);
        }
    }
}

macro_rules! acquire_options {
    () => {
        /// Sets how urgent this call is (default [`Priority::NORMAL`]). Only matters while
        /// it waits.
        pub fn priority(mut self, priority: Priority) -> Self {
            self.wait.priority = priority;
            self
        }

        /// Overrides the limiter's queue timeout for this call (`None`: wait as long as it
        /// takes).
        pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
            self.wait.timeout = timeout;
            self
        }

        /// Waits even when the queue holds `max_queue` waiters already, instead of being
        /// refused with [`Rejected::QueueFull`](super::Rejected::QueueFull) (it still takes
        /// a place in the queue, which new callers then find taken). For a caller that
        /// stands in for one already waiting elsewhere — a request handed over from another
        /// limiter, whose place in line it keeps — not for new work: nothing bounds how many
        /// such callers wait.
        pub fn past_a_full_queue(mut self) -> Self {
            self.wait.past_a_full_queue = true;
            self
        }

        /// loom models only: time out when `timer` is fired, instead of on tokio's timer.
        #[cfg(sluicegate_loom)]
        #[doc(hidden)]
        pub fn manual_timer(mut self, timer: super::loom_timer::ManualTimer) -> Self {
            self.wait.manual_timer = Some(timer);
            self
        }
    };
}

/// Future of [`ConcurrencyLimiter::acquire`](super::ConcurrencyLimiter::acquire).
///
/// # Cancel safety
///
/// Dropping it leaves the queue at once; a permit granted to it at the same instant passes
/// on to the next waiter.
#[must_use = "futures do nothing unless polled"]
pub struct Acquire<'a> {
    pub(crate) inner: &'a Inner,
    pub(crate) wait: Wait,
}

impl Acquire<'_> {
    acquire_options!();
}

impl<'a> Future for Acquire<'a> {
    type Output = Result<Permit<'a>, Rejected>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let inner = this.inner;
        this.wait.poll(inner, cx).map_ok(|()| Permit { inner })
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        self.wait.cancel(self.inner);
    }
}

impl fmt::Debug for Acquire<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acquire").field("wait", &self.wait).finish()
    }
}

/// Future of [`ConcurrencyLimiter::acquire_owned`](super::ConcurrencyLimiter::acquire_owned):
/// `'static`, so it can live in a tower service or a spawned task.
///
/// # Cancel safety
///
/// As [`Acquire`].
#[must_use = "futures do nothing unless polled"]
pub struct AcquireOwned {
    /// Handed on to the permit when one is granted.
    pub(crate) inner: Option<Arc<Inner>>,
    pub(crate) wait: Wait,
}

impl AcquireOwned {
    acquire_options!();
}

impl Future for AcquireOwned {
    type Output = Result<OwnedPermit, Rejected>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let inner = this
            .inner
            .as_ref()
            .expect("acquire future polled after it completed");
        let result = ready!(this.wait.poll(inner, cx));
        let inner = this.inner.take().expect("checked above");
        Poll::Ready(result.map(|()| OwnedPermit {
            inner,
            kind: PermitKind::Throttled,
        }))
    }
}

impl Drop for AcquireOwned {
    fn drop(&mut self) {
        if let Some(inner) = &self.inner {
            self.wait.cancel(inner);
        }
    }
}

impl fmt::Debug for AcquireOwned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AcquireOwned")
            .field("wait", &self.wait)
            .finish()
    }
}

/// Future of [`ConcurrencyLimiter::drain`](super::ConcurrencyLimiter::drain).
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Drain<'a> {
    inner: &'a Inner,
    /// Registered with the limiter under this key while it waits.
    key: Option<u64>,
    /// For a reset's drain, which close was the reset's own: a reopen after it ends the
    /// drain too.
    reset: Option<u64>,
}

impl<'a> Drain<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        Drain {
            inner,
            key: None,
            reset: None,
        }
    }

    /// The drain of the reset whose close was `its_close`.
    pub(crate) fn of_reset(inner: &'a Inner, its_close: u64) -> Self {
        Drain {
            reset: Some(its_close),
            ..Drain::new(inner)
        }
    }
}

impl Future for Drain<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        this.inner.poll_drain(cx, &mut this.key, this.reset)
    }
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.inner.forget_drainer(key);
        }
    }
}
