//! The service: ask the rate limiter in `call`, answer `429` or pass the request on.

use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use tower_service::Service;

use super::check::RateCheck;
use super::future::ResponseFuture;
use super::key::KeyExtractor;
use crate::http::RejectionMapping;
use crate::middleware::body::LimitBody;

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) policy: String,
    pub(crate) mapping: RejectionMapping,
    pub(crate) headers_when_allowed: bool,
}

/// Asks a rate limiter about each request: allowed requests go on to the inner service
/// (with `RateLimit` headers added to the response); denied ones are answered `429` +
/// `Retry-After` + `RateLimit-Policy` / `RateLimit` and never reach it.
///
/// The check happens in `call`, where the request (and so its key) is known; `poll_ready`
/// is the inner service's. Built by [`RateLimitLayer`](super::RateLimitLayer).
#[derive(Clone, Debug)]
pub struct RateLimit<S, C, X> {
    inner: S,
    check: C,
    extractor: X,
    settings: Arc<Settings>,
}

impl<S, C, X> RateLimit<S, C, X> {
    pub(crate) fn new(inner: S, check: C, extractor: X, settings: Arc<Settings>) -> Self {
        RateLimit {
            inner,
            check,
            extractor,
            settings,
        }
    }

    /// The rate limiter asked for each request.
    pub fn check(&self) -> &C {
        &self.check
    }
}

impl<S, C, X, ReqBody, ResBody> Service<Request<ReqBody>> for RateLimit<S, C, X>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    X: KeyExtractor<ReqBody>,
    C: RateCheck<X::Key>,
{
    type Response = Response<LimitBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    #[inline]
    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let settings = &self.settings;
        let mapping: &RejectionMapping = &settings.mapping;
        let Some(key) = self.extractor.extract(&req) else {
            return ResponseFuture::answered(mapping.missing_key());
        };
        let decision = self.check.check(&key);
        if decision.is_denied() {
            let policy = self.check.policy();
            return ResponseFuture::answered(mapping.rate_limited(
                &settings.policy,
                &decision,
                policy,
            ));
        }
        let headers = settings
            .headers_when_allowed
            .then(|| (settings.clone(), decision, self.check.policy()));
        ResponseFuture::called(self.inner.call(req), headers)
    }
}
