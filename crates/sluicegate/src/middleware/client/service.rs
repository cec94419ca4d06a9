//! The service: wait for a permit in the response future, where the request's extensions
//! (bypass, priority) are known.

use std::marker::PhantomData;
use std::task::{Context, Poll};

use http::Request;
use tower_service::Service;

use super::future::ResponseFuture;
use super::hold::{AtHead, Hold};
use crate::concurrency::{ConcurrencyLimiter, Priority};
use crate::middleware::BoxError;
use crate::middleware::permit::HeldPermit;

/// A request extension: send this request without waiting for a permit (a health check, the
/// call that lifts a kill switch). Counted as bypassed by the limiter.
///
/// ```
/// use sluicegate::middleware::client::Bypass;
///
/// let mut health = http::Request::get("http://backend/health").body(()).unwrap();
/// health.extensions_mut().insert(Bypass);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bypass;

/// Sends at most the limiter's `max` requests at once; more wait in the limiter's queue.
///
/// Unlike the server layers, the wait happens in the response future, not in `poll_ready`:
/// whether a request waits (and at which [`Priority`]) depends on its extensions, which
/// `poll_ready` cannot see. A request with a [`Bypass`] extension never waits; a
/// [`Priority`] extension sets its place in the queue. The permit is released when the
/// response head arrives, on error, or when the future is dropped.
///
/// A rejection ([`Rejected`](crate::concurrency::Rejected), e.g. `Closed` or
/// `QueueTimeout`) is the call's error, boxed in a [`BoxError`]; the request is not sent.
///
/// `H` says when the permit goes back: [`AtHead`] (default) or
/// [`ThroughBody`](super::ThroughBody) (see
/// [`ClientLimitLayer::hold_through_body`](super::ClientLimitLayer::hold_through_body)).
#[derive(Debug)]
pub struct ClientLimit<S, H = AtHead> {
    inner: S,
    limiter: ConcurrencyLimiter,
    hold: PhantomData<fn() -> H>,
}

impl<S: Clone, H> Clone for ClientLimit<S, H> {
    fn clone(&self) -> Self {
        ClientLimit::with_hold(self.inner.clone(), self.limiter.clone())
    }
}

impl<S> ClientLimit<S> {
    /// Wraps `inner` so its requests draw permits from `limiter`, given back when the
    /// response head arrives.
    pub fn new(inner: S, limiter: ConcurrencyLimiter) -> Self {
        ClientLimit::with_hold(inner, limiter)
    }
}

impl<S, H> ClientLimit<S, H> {
    pub(crate) fn with_hold(inner: S, limiter: ConcurrencyLimiter) -> Self {
        ClientLimit {
            inner,
            limiter,
            hold: PhantomData,
        }
    }

    /// The shared limiter.
    pub fn limiter(&self) -> &ConcurrencyLimiter {
        &self.limiter
    }
}

impl<S, B, H> Service<Request<B>> for ClientLimit<S, H>
where
    S: Service<Request<B>> + Clone,
    S::Error: Into<BoxError>,
    H: Hold<S::Response>,
{
    type Response = H::Output;
    type Error = BoxError;
    type Future = ResponseFuture<S, Request<B>, H>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    #[inline]
    fn call(&mut self, req: Request<B>) -> Self::Future {
        if req.extensions().get::<Bypass>().is_some() {
            let permit = HeldPermit::owned(self.limiter.acquire_bypass());
            return ResponseFuture::running(self.inner.call(req), permit);
        }
        if let Some(permit) = HeldPermit::try_fast(&self.limiter) {
            // A permit is free and nobody waits: send now, no hand-over of the service.
            return ResponseFuture::running(self.inner.call(req), permit);
        }
        // No extension: `Priority::default()`, which is `NORMAL`.
        let priority = req
            .extensions()
            .get::<Priority>()
            .copied()
            .unwrap_or_default();
        // The ready service goes with the request; this one is a fresh clone that will be
        // made ready by the next `poll_ready` (tower's usual hand-over).
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        ResponseFuture::waiting(self.limiter.acquire_owned().priority(priority), ready, req)
    }
}
