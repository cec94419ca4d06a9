//! The response future: holds the permit until the inner call is done.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;

use crate::adaptive::Outcome;
use crate::concurrency::Rejected;
use crate::middleware::BoxError;
use crate::middleware::permit::HeldPermit;

pin_project! {
    /// Future of [`ConcurrencyLimit`](super::ConcurrencyLimit): the inner call holding its
    /// permit (released when the call completes or this future is dropped), or a rejection.
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        // `None` when rejected.
        #[pin]
        future: Option<F>,
        permit: Option<HeldPermit>,
        rejected: Option<Rejected>,
    }
}

impl<F> ResponseFuture<F> {
    #[inline]
    pub(crate) fn called(future: F, permit: HeldPermit) -> Self {
        ResponseFuture {
            future: Some(future),
            permit: Some(permit),
            rejected: None,
        }
    }

    #[inline]
    pub(crate) fn rejected(rejected: Rejected) -> Self {
        ResponseFuture {
            future: None,
            permit: None,
            rejected: Some(rejected),
        }
    }
}

impl<F, T, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match this.future.as_pin_mut() {
            Some(future) => {
                let output = ready!(future.poll(cx));
                if let Some(permit) = this.permit.take() {
                    // For an adaptive limit: an error (a timeout below, an overload answer)
                    // is the resource saying "too much".
                    permit.finish(|| match output {
                        Ok(_) => Outcome::Success,
                        Err(_) => Outcome::Dropped,
                    });
                }
                Poll::Ready(output.map_err(Into::into))
            }
            None => {
                let rejected = this.rejected.take().expect("polled after completion");
                Poll::Ready(Err(Box::new(rejected)))
            }
        }
    }
}
