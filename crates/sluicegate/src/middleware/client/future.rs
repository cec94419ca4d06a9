//! The response future: wait for a permit, then send and hold it until the response.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tower_service::Service;

use super::hold::{AtHead, CallPermit, Hold};
use crate::concurrency::AcquireOwned;
use crate::middleware::BoxError;
use crate::middleware::permit::HeldPermit;

pin_project! {
    /// Future of [`ClientLimit`](super::ClientLimit): waits for a permit, then sends.
    ///
    /// # Cancel safety
    ///
    /// Dropping it while it waits leaves the queue; dropping it while the request is in
    /// flight releases the permit.
    pub struct ResponseFuture<S, Req, H = AtHead>
    where
        S: Service<Req>,
    {
        #[pin]
        kind: Kind<S, S::Future, Req>,
        hold: PhantomData<fn() -> H>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<S, F, Req> {
        Waiting { acquire: AcquireOwned, inner: Option<S>, req: Option<Req> },
        Running { #[pin] future: F, permit: Option<HeldPermit> },
    }
}

impl<S: Service<Req>, Req, H> ResponseFuture<S, Req, H> {
    #[inline]
    pub(crate) fn waiting(acquire: AcquireOwned, inner: S, req: Req) -> Self {
        ResponseFuture {
            kind: Kind::Waiting {
                acquire,
                inner: Some(inner),
                req: Some(req),
            },
            hold: PhantomData,
        }
    }

    #[inline]
    pub(crate) fn running(future: S::Future, permit: HeldPermit) -> Self {
        ResponseFuture {
            kind: Kind::Running {
                future,
                permit: Some(permit),
            },
            hold: PhantomData,
        }
    }
}

impl<S, Req, H> Future for ResponseFuture<S, Req, H>
where
    S: Service<Req>,
    S::Error: Into<BoxError>,
    H: Hold<S::Response>,
{
    type Output = Result<H::Output, BoxError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut kind = self.project().kind;
        loop {
            match kind.as_mut().project() {
                KindProj::Waiting {
                    acquire,
                    inner,
                    req,
                } => {
                    let permit = ready!(Pin::new(acquire).poll(cx))?;
                    let (mut inner, req) = inner
                        .take()
                        .zip(req.take())
                        .expect("polled after completion");
                    let future = inner.call(req);
                    kind.set(Kind::Running {
                        future,
                        permit: Some(HeldPermit::owned(permit)),
                    });
                }
                KindProj::Running { future, permit } => {
                    let output = ready!(future.poll(cx));
                    let permit = permit.take().expect("polled after completion");
                    return Poll::Ready(match output {
                        Ok(response) => Ok(H::finish(response, CallPermit(permit))),
                        Err(e) => {
                            permit.complete();
                            Err(e.into())
                        }
                    });
                }
            }
        }
    }
}

impl<S: Service<Req>, Req, H> std::fmt::Debug for ResponseFuture<S, Req, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
