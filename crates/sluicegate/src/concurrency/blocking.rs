//! Acquiring from synchronous code: the same queue, with the thread parked instead of a task.

use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use super::core::{GiveUp, Start};
use super::error::Rejected;
use super::limiter::ConcurrencyLimiter;
use super::permit::Permit;
use super::queue::Priority;

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

impl ConcurrencyLimiter {
    /// Waits for a permit by blocking the current thread. The queue timeout is measured with
    /// the system clock. Do not call it from async code: it blocks the executor thread.
    ///
    /// # Errors
    ///
    /// The [`Rejected`] outcome, as for [`acquire`](Self::acquire).
    pub fn acquire_blocking(&self) -> Result<Permit<'_>, Rejected> {
        let inner = self.inner();
        let timeout = inner.config.queue_timeout;
        let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
        let ticket = match inner.start(Priority::NORMAL, timeout, Some(&waker)) {
            Start::Admitted => return Ok(Permit { inner }),
            Start::Rejected(r) => return Err(r),
            Start::Queued(ticket) => ticket,
        };
        // A timeout too long to represent as an instant means: wait as long as it takes.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(result) = inner.poll_ticket(&ticket, &mut cx) {
                return result.map(|()| Permit { inner });
            }
            match deadline {
                None => std::thread::park(),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return inner
                            .give_up(ticket, GiveUp::TimedOut)
                            .map(|_| Permit { inner });
                    }
                    std::thread::park_timeout(deadline - now);
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
