//! The reservation a server service holds between `poll_ready` and `call`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::permit::HeldPermit;
use crate::adaptive::AdaptiveLimiter;
use crate::concurrency::{AcquireOwned, ConcurrencyLimiter, Rejected};

/// What `poll_ready` got for the next `call`: a permit, a place in the queue, or a
/// rejection to deliver from `call` (tower's rule: `poll_ready` errors mean the service is
/// broken, so a "not now" travels as the call's answer, like tower's `load_shed`).
///
/// Kept small on purpose: the permit sits in its own field and the rare states behind a
/// box, so the per-request fast path moves two words, not a whole acquire future.
#[derive(Debug, Default)]
pub(crate) struct Reservation {
    permit: Option<HeldPermit>,
    slow: Option<Box<Slow>>,
}

#[derive(Debug)]
enum Slow {
    Acquiring(AcquireOwned),
    Rejected(Rejected),
}

impl Reservation {
    /// Drives the acquire until there is a permit or a rejection: the lock-free path first,
    /// then the queue. An adaptive limit is told of a caller whose first try in the queue
    /// found no permit: the demand the limit holds back.
    #[inline]
    pub(crate) fn poll_reserve(
        &mut self,
        limiter: &ConcurrencyLimiter,
        adaptive: Option<&AdaptiveLimiter>,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        if self.permit.is_some() {
            return Poll::Ready(());
        }
        if self.slow.is_none()
            && let Some(permit) = HeldPermit::try_fast(limiter)
        {
            self.permit = Some(permit);
            return Poll::Ready(());
        }
        self.poll_slow(limiter, adaptive, cx)
    }

    #[cold]
    fn poll_slow(
        &mut self,
        limiter: &ConcurrencyLimiter,
        adaptive: Option<&AdaptiveLimiter>,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        let first = self.slow.is_none();
        let slow = self
            .slow
            .get_or_insert_with(|| Box::new(Slow::Acquiring(limiter.acquire_owned())));
        if let Slow::Acquiring(acquire) = &mut **slow {
            let polled = Pin::new(acquire).poll(cx);
            if first && let Some(adaptive) = adaptive {
                match &polled {
                    Poll::Ready(Ok(_)) => {}
                    Poll::Ready(Err(rejected)) => adaptive.first_try_failed(Some(rejected)),
                    Poll::Pending => adaptive.first_try_failed(None),
                }
            }
            match polled {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(permit)) => {
                    self.slow = None;
                    self.permit = Some(HeldPermit::owned(permit));
                }
                Poll::Ready(Err(rejected)) => **slow = Slow::Rejected(rejected),
            }
        }
        Poll::Ready(())
    }

    /// Whether a permit is held (so the inner service should be polled too).
    #[inline]
    pub(crate) fn is_reserved(&self) -> bool {
        self.permit.is_some()
    }

    /// Hands what `poll_ready` got to `call`, leaving nothing behind.
    ///
    /// # Panics
    ///
    /// When `poll_ready` did not return `Ready` before this `call` (the tower contract).
    #[inline]
    pub(crate) fn take(&mut self) -> Result<HeldPermit, Rejected> {
        if let Some(permit) = self.permit.take() {
            return Ok(permit);
        }
        match self.slow.take().map(|slow| *slow) {
            Some(Slow::Rejected(rejected)) => Err(rejected),
            _ => panic!("call without a ready poll_ready: poll_ready must return Ready first"),
        }
    }
}
