//! The service: reserve in `poll_ready`, consume in `call`, answer a rejection from `call`.

use std::sync::Arc;
use std::task::{Context, Poll, ready};

use http::{Request, Response};
use tower_service::Service;

use super::future::ResponseFuture;
use crate::adaptive::AdaptiveLimiter;
use crate::concurrency::ConcurrencyLimiter;
use crate::http::RejectionMapping;
use crate::middleware::body::LimitBody;
use crate::middleware::reserve::Reservation;

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) limiter: ConcurrencyLimiter,
    pub(crate) mapping: RejectionMapping,
    pub(crate) hold_through_body: bool,
    pub(crate) adaptive: Option<AdaptiveLimiter>,
}

/// Runs at most the limiter's `max` requests of the inner HTTP service at once; more wait
/// in the limiter's queue inside `poll_ready`. A request the limiter turns away (queue full,
/// queue timeout, closed, predicted timeout) is answered `503` + `Retry-After` with a short
/// body, and never reaches the inner service; the error type stays the inner one, so an
/// infallible service (axum) stays infallible.
///
/// The permit is reserved in `poll_ready`, moved into the response future by `call`, and
/// then into the response body ([`LimitBody`]) until the body is done or dropped. A clone
/// starts with no reservation.
#[derive(Debug)]
pub struct HttpConcurrencyLimit<S> {
    inner: S,
    /// The limiter and the layer's settings behind one handle: a clone per request (as axum
    /// and hyper make) costs one reference count, as tower's layer does.
    settings: Arc<Settings>,
    reservation: Reservation,
}

impl<S> HttpConcurrencyLimit<S> {
    /// Wraps `inner` with the default settings; see
    /// [`HttpConcurrencyLimitLayer`](super::HttpConcurrencyLimitLayer) to change them.
    pub fn new(inner: S, limiter: ConcurrencyLimiter) -> Self {
        super::HttpConcurrencyLimitLayer::new(limiter).into_service(inner)
    }

    pub(crate) fn with_settings(inner: S, settings: Arc<Settings>) -> Self {
        HttpConcurrencyLimit {
            inner,
            settings,
            reservation: Reservation::default(),
        }
    }

    /// The shared limiter.
    pub fn limiter(&self) -> &ConcurrencyLimiter {
        &self.settings.limiter
    }
}

impl super::HttpConcurrencyLimitLayer {
    fn into_service<S>(self, inner: S) -> HttpConcurrencyLimit<S> {
        tower_layer::Layer::layer(&self, inner)
    }
}

impl<S: Clone> Clone for HttpConcurrencyLimit<S> {
    /// A clone shares the limiter and settings but not the reservation: it starts with none.
    fn clone(&self) -> Self {
        HttpConcurrencyLimit::with_settings(self.inner.clone(), self.settings.clone())
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for HttpConcurrencyLimit<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
{
    type Response = Response<LimitBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let settings = &self.settings;
        ready!(
            self.reservation
                .poll_reserve(&settings.limiter, settings.adaptive.as_ref(), cx)
        );
        if self.reservation.is_reserved() {
            self.inner.poll_ready(cx)
        } else {
            // Rejected: `call` answers without touching the inner service.
            Poll::Ready(Ok(()))
        }
    }

    #[inline]
    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        match self.reservation.take() {
            Ok(permit) => ResponseFuture::called(
                self.inner.call(req),
                permit.adapt(self.settings.adaptive.as_ref()),
                self.settings.hold_through_body,
            ),
            Err(rejected) => ResponseFuture::answered(self.settings.mapping.overloaded(&rejected)),
        }
    }
}
