//! The response body of the HTTP layers: the inner body, holding its permit until the body
//! ends, or the short text of a rejection.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::permit::HeldPermit;

pin_project! {
    /// A response body from a sluicegate HTTP layer.
    ///
    /// Either the inner service's body, which keeps the request's permit until it has
    /// streamed its last frame, failed or been dropped (the work of a streaming response
    /// goes on in its body), or the short body of a rejection.
    pub struct LimitBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<B> {
        Inner { #[pin] body: B, permit: Option<HeldPermit> },
        Message { message: Option<Bytes> },
    }
}

impl<B> LimitBody<B> {
    /// The inner service's body, holding `permit` (if any) until the body is done.
    #[inline]
    pub(crate) fn inner(body: B, permit: Option<HeldPermit>) -> Self {
        LimitBody {
            kind: Kind::Inner { body, permit },
        }
    }

    /// A body of the given text (a rejection).
    pub(crate) fn message(message: Bytes) -> Self {
        let message = (!message.is_empty()).then_some(message);
        LimitBody {
            kind: Kind::Message { message },
        }
    }

    /// Whether this body still holds a permit.
    pub fn holds_permit(&self) -> bool {
        matches!(
            &self.kind,
            Kind::Inner {
                permit: Some(_),
                ..
            }
        )
    }
}

impl<B> Body for LimitBody<B>
where
    B: Body,
    B::Data: From<Bytes>,
{
    type Data = B::Data;
    type Error = B::Error;

    #[inline]
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        match self.project().kind.project() {
            KindProj::Inner { mut body, permit } => {
                let frame = ready!(body.as_mut().poll_frame(cx));
                let done = !matches!(frame, Some(Ok(_))) || body.is_end_stream();
                if done {
                    // The work behind this response is over: let the next request start.
                    if let Some(permit) = permit.take() {
                        permit.complete();
                    }
                }
                Poll::Ready(frame)
            }
            KindProj::Message { message } => {
                Poll::Ready(message.take().map(|m| Ok(Frame::data(m.into()))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body, .. } => body.is_end_stream(),
            Kind::Message { message } => message.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body, .. } => body.size_hint(),
            Kind::Message { message } => {
                SizeHint::with_exact(message.as_ref().map_or(0, |m| m.len() as u64))
            }
        }
    }
}

impl<B> std::fmt::Debug for LimitBody<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.kind {
            Kind::Inner { .. } => "inner",
            Kind::Message { .. } => "message",
        };
        f.debug_struct("LimitBody")
            .field("kind", &kind)
            .field("holds_permit", &self.holds_permit())
            .finish()
    }
}

/// A response the layer made itself (a rejection), waiting to be handed out by a response
/// future. Boxed: it is rare, and inline it would make every response future larger.
#[derive(Debug)]
pub(crate) struct Answer(Option<Box<http::Response<Bytes>>>);

impl Answer {
    pub(crate) fn new(response: http::Response<Bytes>) -> Self {
        Answer(Some(Box::new(response)))
    }

    /// The response, with its body as a [`LimitBody`]; once only.
    pub(crate) fn take<B>(&mut self) -> http::Response<LimitBody<B>> {
        let response = self.0.take().expect("polled after completion");
        (*response).map(LimitBody::message)
    }
}
