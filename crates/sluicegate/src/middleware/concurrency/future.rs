//! The response future: holds the permit until the inner call is done.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;

use crate::concurrency::Rejected;
use crate::middleware::BoxError;
use crate::middleware::permit::HeldPermit;

pin_project! {
    /// Future of [`ConcurrencyLimit`](super::ConcurrencyLimit): the inner call holding its
    /// permit (released when the call completes or this future is dropped), or a rejection.
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
        Called { #[pin] future: F, permit: Option<HeldPermit> },
        Rejected { rejected: Option<Rejected> },
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn called(future: F, permit: HeldPermit) -> Self {
        ResponseFuture {
            kind: Kind::Called {
                future,
                permit: Some(permit),
            },
        }
    }

    pub(crate) fn rejected(rejected: Rejected) -> Self {
        ResponseFuture {
            kind: Kind::Rejected {
                rejected: Some(rejected),
            },
        }
    }
}

impl<F, T, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Called { future, permit } => {
                let output = ready!(future.poll(cx));
                permit.take();
                Poll::Ready(output.map_err(Into::into))
            }
            KindProj::Rejected { rejected } => {
                let rejected = rejected.take().expect("polled after completion");
                Poll::Ready(Err(Box::new(rejected)))
            }
        }
    }
}
