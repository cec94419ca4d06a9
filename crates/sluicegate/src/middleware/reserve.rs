//! The reservation a server service holds between `poll_ready` and `call`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::concurrency::{AcquireOwned, ConcurrencyLimiter, OwnedPermit, Rejected};

/// What `poll_ready` got for the next `call`: nothing yet, a place in the queue, a permit,
/// or a rejection to deliver from `call` (tower's rule: `poll_ready` errors mean the service
/// is broken, so a "not now" travels as the call's answer, like tower's `load_shed`).
#[derive(Debug, Default)]
pub(crate) enum Reservation {
    #[default]
    Idle,
    Acquiring(AcquireOwned),
    Reserved(OwnedPermit),
    Rejected(Rejected),
}

impl Reservation {
    /// Drives the acquire until there is a permit or a rejection.
    pub(crate) fn poll_reserve(
        &mut self,
        limiter: &ConcurrencyLimiter,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        loop {
            match self {
                Reservation::Idle => *self = Reservation::Acquiring(limiter.acquire_owned()),
                Reservation::Acquiring(acquire) => {
                    *self = match Pin::new(acquire).poll(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Ok(permit)) => Reservation::Reserved(permit),
                        Poll::Ready(Err(rejected)) => Reservation::Rejected(rejected),
                    }
                }
                Reservation::Reserved(_) | Reservation::Rejected(_) => return Poll::Ready(()),
            }
        }
    }

    /// Whether a permit is held (so the inner service should be polled too).
    pub(crate) fn is_reserved(&self) -> bool {
        matches!(self, Reservation::Reserved(_))
    }

    /// Hands what `poll_ready` got to `call`, leaving nothing behind.
    ///
    /// # Panics
    ///
    /// When `poll_ready` did not return `Ready` before this `call` (the tower contract).
    pub(crate) fn take(&mut self) -> Result<OwnedPermit, Rejected> {
        match std::mem::take(self) {
            Reservation::Reserved(permit) => Ok(permit),
            Reservation::Rejected(rejected) => Err(rejected),
            Reservation::Idle | Reservation::Acquiring(_) => {
                panic!("call without a ready poll_ready: poll_ready must return Ready first")
            }
        }
    }
}
