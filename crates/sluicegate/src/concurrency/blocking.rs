//! Acquiring from synchronous code: the same queue, with the thread parked instead of a task.

use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use super::core::Start;
use super::error::Rejected;
use super::limiter::ConcurrencyLimiter;
use super::permit::Permit;
use super::queue::Priority;
use crate::sync::{self, Thread};

struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Longest real-time park while waiting on a clock that moves by hand: the thread checks
/// back this often for a deadline a test moved past.
const MANUAL_CLOCK_CHECK: Duration = Duration::from_millis(1);

impl ConcurrencyLimiter {
    /// Waits for a permit by blocking the current thread. The queue timeout is measured with
    /// the limiter's [clock](super::Builder::clock), so a `FakeClock` drives it too. Do not
    /// call it from async code: it blocks the executor thread.
    ///
    /// # Errors
    ///
    /// The [`Rejected`] outcome, as for [`acquire`](Self::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use sluicegate::concurrency::ConcurrencyLimiter;
    ///
    /// let limiter = ConcurrencyLimiter::new(1);
    /// let permit = limiter.acquire_blocking().unwrap();
    /// let worker = std::thread::spawn({
    ///     let limiter = limiter.clone();
    ///     move || limiter.run_blocking(|| "done").unwrap() // waits for the permit
    /// });
    /// drop(permit);
    /// assert_eq!(worker.join().unwrap(), "done");
    /// ```
    pub fn acquire_blocking(&self) -> Result<Permit<'_>, Rejected> {
        let inner = self.inner();
        let timeout = inner.config.queue_timeout;
        let waker = Waker::from(Arc::new(ThreadWaker(sync::current())));
        let ticket = match inner.start(Priority::NORMAL, timeout, Some(&waker), false) {
            Start::Admitted => return Ok(Permit { inner }),
            Start::Rejected(r) => return Err(r),
            Start::Queued(ticket) => ticket,
        };
        // A timeout too long for the clock saturates: wait as long as it takes.
        let deadline = timeout.map(|t| inner.clock.now() + t);
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(result) = inner.poll_ticket(&ticket, &mut cx) {
                return result.map(|()| Permit { inner });
            }
            match deadline {
                None => sync::park(),
                Some(deadline) => {
                    let now = inner.clock.now();
                    if now >= deadline {
                        return inner.time_out(ticket).map(|()| Permit { inner });
                    }
                    let mut wait = deadline - now;
                    if inner.clock.is_manual() {
                        wait = wait.min(MANUAL_CLOCK_CHECK);
                    }
                    sync::park_timeout(wait);
                }
            }
        }
    }

    /// Runs `work` under a permit, blocking the thread while it waits for one.
    ///
    /// # Errors
    ///
    /// The [`Rejected`] outcome if no permit was granted; `work` did not run.
    pub fn run_blocking<T>(&self, work: impl FnOnce() -> T) -> Result<T, Rejected> {
        let _permit = self.acquire_blocking()?;
        Ok(work())
    }
}
