//! The response future: the inner call holding its permit, or a ready rejection.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http::Response;
use pin_project_lite::pin_project;

use crate::adaptive::Outcome;
use crate::middleware::body::{Answer, LimitBody};
use crate::middleware::permit::HeldPermit;

pin_project! {
    /// Future of [`HttpConcurrencyLimit`](super::HttpConcurrencyLimit): the inner call
    /// holding its permit, or the answer to a rejected request.
    ///
    /// Dropping it before the response is ready releases the permit.
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project! {
    #[project = KindProj]
    #[derive(Debug)]
    enum Kind<F> {
        Called { #[pin] future: F, permit: Option<HeldPermit>, hold_through_body: Hold },
        // Boxed: rejections are rare, and a whole response inline would make every
        // request's future (moved on each call) several times larger.
        Answered { answer: Answer },
    }
}

/// How long a called request keeps its permit. Word-sized on purpose: a `bool` beside the
/// permit turned every move of this future into byte-sized partial copies (measured).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
enum Hold {
    ToHead,
    ToBodyEnd,
}

impl<F> ResponseFuture<F> {
    #[inline]
    pub(crate) fn called(future: F, permit: HeldPermit, hold_through_body: bool) -> Self {
        ResponseFuture {
            kind: Kind::Called {
                future,
                permit: Some(permit),
                hold_through_body: if hold_through_body {
                    Hold::ToBodyEnd
                } else {
                    Hold::ToHead
                },
            },
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
            KindProj::Called {
                future,
                permit,
                hold_through_body,
            } => {
                let output = ready!(future.poll(cx));
                let mut permit = permit.take();
                if let Some(permit) = &mut permit {
                    permit.set_outcome(outcome_of(&output));
                }
                // On an error, or when the body does not matter, the work is over now.
                if (*hold_through_body == Hold::ToHead || output.is_err())
                    && let Some(permit) = permit.take()
                {
                    permit.complete();
                }
                Poll::Ready(output.map(|response| response.map(|b| LimitBody::inner(b, permit))))
            }
            KindProj::Answered { answer } => Poll::Ready(Ok(answer.take())),
        }
    }
}

/// How a response speaks of load, for an adaptive limit: `503` and `504` are the resource
/// (or something below it) giving up under load; other server errors say nothing about load
/// (a bug is not congestion); everything else is a success whose latency counts.
fn outcome_of<B, E>(output: &Result<Response<B>, E>) -> Outcome {
    match output {
        Ok(response) => match response.status().as_u16() {
            503 | 504 => Outcome::Dropped,
            500..=599 => Outcome::Ignored,
            _ => Outcome::Success,
        },
        Err(_) => Outcome::Ignored,
    }
}
