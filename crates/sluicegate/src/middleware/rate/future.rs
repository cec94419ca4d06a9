//! The response future: the inner call (its response gains `RateLimit` headers), or a ready
//! `429`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http::Response;
use pin_project_lite::pin_project;

use super::service::Settings;
use crate::http::{RatePolicy, set_ratelimit_headers};
use crate::middleware::body::{Answer, LimitBody};
use crate::rate::Decision;

pin_project! {
    /// Future of [`RateLimit`](super::RateLimit).
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

/// What the `RateLimit` headers of an allowed response are made of.
pub(crate) type Headers = (Arc<Settings>, Decision, Option<RatePolicy>);

pin_project! {
    #[project = KindProj]
    #[derive(Debug)]
    enum Kind<F> {
        Called { #[pin] future: F, headers: Option<Headers> },
        Answered { answer: Answer },
    }
}

impl<F> ResponseFuture<F> {
    #[inline]
    pub(crate) fn called(future: F, headers: Option<Headers>) -> Self {
        ResponseFuture {
            kind: Kind::Called { future, headers },
        }
    }

    #[inline]
    pub(crate) fn answered(response: Response<Bytes>) -> Self {
        ResponseFuture {
            kind: Kind::Answered {
                answer: Answer::new(response),
            },
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<LimitBody<B>>, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Called { future, headers } => {
                let mut response = ready!(future.poll(cx))?;
                if let Some((settings, decision, policy)) = headers.take() {
                    set_ratelimit_headers(
                        response.headers_mut(),
                        &settings.policy,
                        &decision,
                        policy,
                    );
                }
                Poll::Ready(Ok(response.map(|b| LimitBody::inner(b, None))))
            }
            KindProj::Answered { answer } => Poll::Ready(Ok(answer.take())),
        }
    }
}
