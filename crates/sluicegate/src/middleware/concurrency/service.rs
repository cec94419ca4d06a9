//! The service: reserve a permit in `poll_ready`, consume it in `call`.

use std::task::{Context, Poll, ready};

use tower_service::Service;

use super::future::ResponseFuture;
use crate::adaptive::AdaptiveLimiter;
use crate::concurrency::ConcurrencyLimiter;
use crate::middleware::BoxError;
use crate::middleware::reserve::Reservation;

/// Runs at most the limiter's `max` calls of the inner service at once; more wait in the
/// limiter's queue inside `poll_ready`.
///
/// A permit is reserved in `poll_ready`, moved into the response future by `call` and
/// released when that future completes or is dropped; a reserved permit not yet used is
/// released when the service is dropped. A clone starts with no reservation.
///
/// A rejection ([`Rejected`](crate::concurrency::Rejected)) is delivered as the error of the
/// call's future, boxed in a [`BoxError`]; `downcast_ref::<Rejected>()` recovers it. For an
/// HTTP service that should answer `503` itself, use
/// [`HttpConcurrencyLimit`](crate::middleware::http_concurrency::HttpConcurrencyLimit).
#[derive(Debug)]
pub struct ConcurrencyLimit<S> {
    inner: S,
    limiter: ConcurrencyLimiter,
    adaptive: Option<AdaptiveLimiter>,
    reservation: Reservation,
}

impl<S> ConcurrencyLimit<S> {
    /// Wraps `inner` so its calls draw permits from `limiter`.
    pub fn new(inner: S, limiter: ConcurrencyLimiter) -> Self {
        ConcurrencyLimit {
            inner,
            limiter,
            adaptive: None,
            reservation: Reservation::default(),
        }
    }

    pub(super) fn with_adaptive(mut self, adaptive: Option<AdaptiveLimiter>) -> Self {
        self.adaptive = adaptive;
        self
    }

    /// The shared limiter.
    pub fn limiter(&self) -> &ConcurrencyLimiter {
        &self.limiter
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: Clone> Clone for ConcurrencyLimit<S> {
    /// A clone shares the limiter but not the reservation: it starts with none.
    fn clone(&self) -> Self {
        ConcurrencyLimit {
            adaptive: self.adaptive.clone(),
            ..ConcurrencyLimit::new(self.inner.clone(), self.limiter.clone())
        }
    }
}

impl<S, Req> Service<Req> for ConcurrencyLimit<S>
where
    S: Service<Req>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        ready!(
            self.reservation
                .poll_reserve(&self.limiter, self.adaptive.as_ref(), cx)
        );
        if self.reservation.is_reserved() {
            self.inner.poll_ready(cx).map_err(Into::into)
        } else {
            // Rejected: `call` answers without touching the inner service.
            Poll::Ready(Ok(()))
        }
    }

    #[inline]
    fn call(&mut self, req: Req) -> Self::Future {
        match self.reservation.take() {
            Ok(permit) => {
                let permit = permit.adapt(self.adaptive.as_ref());
                ResponseFuture::called(self.inner.call(req), permit)
            }
            Err(rejected) => ResponseFuture::rejected(rejected),
        }
    }
}
