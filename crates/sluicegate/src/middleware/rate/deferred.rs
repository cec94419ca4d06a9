//! Rate checks that answer later (a limit kept in Redis): the trait, an adapter for the
//! synchronous checks, and the service that waits for the decision before calling inward.

use std::future::{Future, Ready, ready};
use std::mem;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_service::Service;

use super::check::RateCheck;
use super::future::ResponseFuture;
use super::key::KeyExtractor;
use super::missing::MissingKey;
use super::service::{Settings, respond};
use crate::http::RatePolicy;
use crate::middleware::body::LimitBody;
use crate::rate::Decision;

/// A rate limiter whose decision may take a round trip (a global limit in Redis), as the
/// rate layer built by [`RateLimitLayer::deferred`](super::RateLimitLayer::deferred) sees it.
///
/// The key is passed by value, since the decision may outlive the request's borrow. A
/// synchronous [`RateCheck`] plugs in through [`Immediate`], whose future is ready at once.
pub trait AsyncRateCheck<K> {
    /// The pending decision.
    type Future: Future<Output = Decision>;

    /// Decides on one request with key `key`, counting it if allowed.
    fn check(&self, key: K) -> Self::Future;

    /// The quota announced in `RateLimit-Policy`, as [`RateCheck::policy`].
    fn policy(&self) -> Option<RatePolicy> {
        None
    }
}

impl<K, C: AsyncRateCheck<K> + ?Sized> AsyncRateCheck<K> for Arc<C> {
    type Future = C::Future;

    #[inline]
    fn check(&self, key: K) -> Self::Future {
        (**self).check(key)
    }

    #[inline]
    fn policy(&self) -> Option<RatePolicy> {
        (**self).policy()
    }
}

/// A synchronous [`RateCheck`] as an [`AsyncRateCheck`] (a ready future), so one deferred
/// layer type can hold either kind of limit.
#[derive(Clone, Copy, Debug, Default)]
pub struct Immediate<C>(pub C);

impl<K, C: RateCheck<K>> AsyncRateCheck<K> for Immediate<C> {
    type Future = Ready<Decision>;

    #[inline]
    fn check(&self, key: K) -> Self::Future {
        ready(self.0.check(&key))
    }

    #[inline]
    fn policy(&self) -> Option<RatePolicy> {
        self.0.policy()
    }
}

/// [`RateLimit`](super::RateLimit) for an [`AsyncRateCheck`]: the inner service is called
/// only once the decision has come, so it must be `Clone` (the service made ready by
/// `poll_ready` goes into the response future; a clone stays behind).
#[derive(Clone, Debug)]
pub struct DeferredRateLimit<S, C, X> {
    inner: S,
    check: C,
    extractor: X,
    settings: Arc<Settings>,
}

impl<S, C, X> DeferredRateLimit<S, C, X> {
    pub(crate) fn new(inner: S, check: C, extractor: X, settings: Arc<Settings>) -> Self {
        DeferredRateLimit {
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

impl<S, C, X, ReqBody, ResBody> Service<Request<ReqBody>> for DeferredRateLimit<S, C, X>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    X: KeyExtractor<ReqBody>,
    C: AsyncRateCheck<X::Key>,
{
    type Response = Response<LimitBody<ResBody>>;
    type Error = S::Error;
    type Future = DeferredFuture<C::Future, S, Request<ReqBody>>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let settings = self.settings.clone();
        let Some(key) = self.extractor.extract(&req) else {
            settings.warn_missing_key(|| self.extractor.missing_key_hint());
            let answer = match settings.missing {
                MissingKey::Reject => ResponseFuture::answered(settings.mapping.missing_key()),
                MissingKey::Allow => ResponseFuture::called(self.inner.call(req), None),
            };
            return DeferredFuture::then(answer);
        };
        let clone = self.inner.clone();
        let ready_inner = mem::replace(&mut self.inner, clone);
        DeferredFuture {
            state: State::Checking {
                check: self.check.check(key),
                call: Some((ready_inner, req, settings, self.check.policy())),
            },
        }
    }
}

pin_project! {
    /// Future of [`DeferredRateLimit`]: the decision, then the inner call or a ready `429`.
    pub struct DeferredFuture<D, S, R> where S: Service<R> {
        #[pin]
        state: State<D, S, R>,
    }
}

/// What the inner call needs once the decision is in.
type Pending<S, R> = Option<(S, R, Arc<Settings>, Option<RatePolicy>)>;

pin_project! {
    #[project = StateProj]
    enum State<D, S, R> where S: Service<R> {
        Checking { #[pin] check: D, call: Pending<S, R> },
        Then { #[pin] future: ResponseFuture<S::Future> },
    }
}

impl<D, S: Service<R>, R> DeferredFuture<D, S, R> {
    fn then(future: ResponseFuture<S::Future>) -> Self {
        DeferredFuture {
            state: State::Then { future },
        }
    }
}

impl<D, S, R, B> Future for DeferredFuture<D, S, R>
where
    D: Future<Output = Decision>,
    S: Service<R, Response = Response<B>>,
{
    type Output = Result<Response<LimitBody<B>>, S::Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let next = match self.as_mut().project().state.project() {
                StateProj::Then { future } => return future.poll(cx),
                StateProj::Checking { check, call } => {
                    let decision = ready!(check.poll(cx));
                    let (mut inner, req, settings, policy) =
                        call.take().expect("polled after the decision was taken");
                    respond(&settings, decision, || policy, || inner.call(req))
                }
            };
            self.as_mut()
                .project()
                .state
                .set(State::Then { future: next });
        }
    }
}

impl<D, S: Service<R>, R> std::fmt::Debug for DeferredFuture<D, S, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredFuture").finish_non_exhaustive()
    }
}
