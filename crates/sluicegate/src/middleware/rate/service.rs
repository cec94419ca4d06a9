//! The service: ask the rate limiter in `call`, answer `429` or pass the request on.

use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use tower_service::Service;

use super::check::RateCheck;
use super::future::ResponseFuture;
use super::key::KeyExtractor;
use super::missing::{MissingKey, WarnOnce};
use crate::http::{RatePolicy, RejectionMapping};
use crate::middleware::body::LimitBody;
use crate::rate::Decision;

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) policy: String,
    pub(crate) mapping: RejectionMapping,
    pub(crate) headers_when_allowed: bool,
    pub(crate) missing: MissingKey,
    pub(crate) warned: WarnOnce,
}

impl Settings {
    /// Logs, the first time only, that a request had no key, why, and what the layer does.
    #[cold]
    pub(crate) fn warn_missing_key(&self, hint: impl FnOnce() -> String) {
        if !self.warned.first() {
            return;
        }
        let doing = match self.missing {
            MissingKey::Reject => format!(
                "such requests are answered {} (fail closed); `.on_missing_key(MissingKey::Allow)` \
                 lets them through unlimited instead",
                self.mapping.missing_key_status_code()
            ),
            MissingKey::Allow => "such requests go through unlimited (fail open, \
                                  `MissingKey::Allow`)"
                .to_owned(),
        };
        tracing::warn!(
            policy = %self.policy,
            "sluicegate rate limit {:?}: {}; {}. Logged once per layer.",
            self.policy,
            hint(),
            doing
        );
    }
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
        let Some(key) = self.extractor.extract(&req) else {
            settings.warn_missing_key(|| self.extractor.missing_key_hint());
            return match settings.missing {
                MissingKey::Reject => ResponseFuture::answered(settings.mapping.missing_key()),
                MissingKey::Allow => ResponseFuture::called(self.inner.call(req), None),
            };
        };
        let decision = self.check.check(&key);
        let check = &self.check;
        respond(
            settings,
            decision,
            || check.policy(),
            || self.inner.call(req),
        )
    }
}

/// The response to a decision: a `429` answered here, or the inner call (with the
/// `RateLimit` headers to add to its response). The policy is asked for only when a
/// response carries it.
#[inline]
pub(crate) fn respond<F>(
    settings: &Arc<Settings>,
    decision: Decision,
    policy: impl FnOnce() -> Option<RatePolicy>,
    call: impl FnOnce() -> F,
) -> ResponseFuture<F> {
    if decision.is_denied() {
        let answer = settings
            .mapping
            .rate_limited(&settings.policy, &decision, policy());
        return ResponseFuture::answered(answer);
    }
    let headers = settings
        .headers_when_allowed
        .then(|| (settings.clone(), decision, policy()));
    ResponseFuture::called(call(), headers)
}
