//! A client's request body on its way to the upstream, watched for the client's own faults:
//! a body that breaks its framing, a client that leaves in the middle of it. Those end the
//! exchange as the client's doing (never an upstream error, never a drop for an adaptive
//! limit).

use std::error::Error;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use super::upstream::BodyError;
use bytes::Bytes;
use http::StatusCode;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

/// How a client failed to send its request body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ClientFault {
    /// The body broke its framing (a bad chunk size, a bare LF, oversized trailers): `400`.
    Malformed,
    /// The client left, or its connection broke, in the middle of the body.
    Gone,
}

impl ClientFault {
    /// The status the client gets, when it is still there to get one.
    pub(super) fn status(self) -> StatusCode {
        match self {
            ClientFault::Malformed => StatusCode::BAD_REQUEST,
            ClientFault::Gone => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The name in `X-Sluicegate-Reason` and the log.
    pub(super) fn name(self) -> &'static str {
        match self {
            ClientFault::Malformed => "bad_request_body",
            ClientFault::Gone => "client_gone",
        }
    }

    /// The body text of the gate's answer.
    pub(super) fn text(self) -> &'static str {
        match self {
            ClientFault::Malformed => "bad request body: its framing is broken\n",
            ClientFault::Gone => "client gone\n",
        }
    }

    /// What a read of hyper's server body failed on: broken framing is the client's
    /// request (hyper reports it as invalid input or data); anything else (an early end, a
    /// reset, a connection error) means the client is gone.
    fn of(e: &hyper::Error) -> ClientFault {
        let mut source = e.source();
        while let Some(s) = source {
            if let Some(io) = s.downcast_ref::<io::Error>() {
                return match io.kind() {
                    io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
                        ClientFault::Malformed
                    }
                    _ => ClientFault::Gone,
                };
            }
            source = s.source();
        }
        ClientFault::Gone
    }
}

/// How the client's body went, shared by the body (polled by the upstream connection) and
/// the exchange.
#[derive(Debug, Default)]
pub(super) struct Progress(Mutex<Option<ClientFault>>);

impl Progress {
    /// How the client failed to send its body, if it did.
    pub(super) fn fault(&self) -> Option<ClientFault> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn failed(&self, fault: ClientFault) {
        let mut f = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *f = f.or(Some(fault));
    }
}

/// A client's request body, as hyper's client connection sends it upstream.
#[derive(Debug)]
pub(crate) struct ClientBody {
    inner: Incoming,
    progress: Arc<Progress>,
}

impl ClientBody {
    /// Wraps `inner`; the exchange watches the returned progress.
    pub(super) fn new(inner: Incoming) -> (ClientBody, Arc<Progress>) {
        let progress = Arc::new(Progress::default());
        let body = ClientBody {
            inner,
            progress: progress.clone(),
        };
        (body, progress)
    }
}

impl Body for ClientBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Err(e))) => {
                self.progress.failed(ClientFault::of(&e));
                Poll::Ready(Some(Err(e.into())))
            }
            // hyper ends a body whose connection it dropped without a word: short of its
            // length, that is a client gone, never a whole body.
            Poll::Ready(None) if self.inner.size_hint().lower() > 0 => {
                self.progress.failed(ClientFault::Gone);
                Poll::Ready(Some(Err(
                    "the client's body ended short of its length".into()
                )))
            }
            frame => frame.map(|f| f.map(|f| f.map_err(Into::into))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
