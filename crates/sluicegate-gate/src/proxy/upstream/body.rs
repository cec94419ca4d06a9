//! An upstream's response body, read from the connection it came on, which goes back to
//! the idle connections once the body has been read to its end.

use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http::uri::Authority;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;

use super::super::client_body::ClientBody;
use super::decode::{Decoder, Step};
use super::wire::{READ_SIZE, Wire, WireError};

/// The error a body read from an upstream ends with.
pub(crate) type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// A response body on its way from an upstream connection.
#[derive(Debug)]
pub(crate) enum UpstreamBody {
    /// Read by the gate from its own connection ([`super::wire`]).
    Wire {
        wire: Wire,
        decoder: Decoder,
        /// Whether the connection can take another request once the body has ended.
        keep_alive: bool,
        /// How long the upstream keeps it idle, when it said.
        keep_for: Option<Duration>,
        authority: Authority,
    },
    /// Read by hyper's client connection (requests that carried a body).
    Hyper {
        body: Incoming,
        /// Whether `body` has given its last frame, the end or the trailers (`Incoming`
        /// never says a chunked body has ended).
        ended: bool,
        sender: SendRequest<ClientBody>,
        authority: Authority,
        /// How long the upstream keeps it idle, when it said.
        keep_for: Option<Duration>,
    },
}

impl UpstreamBody {
    /// The connection goes back to this thread's idle list, if the body was read to its end
    /// and the upstream can take another request on it.
    pub(crate) fn check_in(self) {
        match self {
            UpstreamBody::Wire {
                wire,
                decoder,
                keep_alive,
                keep_for,
                authority,
            } => {
                if keep_alive && decoder.is_done() && wire.buf.is_empty() {
                    super::with_idle(|idle| {
                        super::check_in(&mut idle.wires, authority, wire, keep_for);
                    });
                }
            }
            UpstreamBody::Hyper {
                body,
                ended,
                sender,
                authority,
                keep_for,
            } => {
                if (ended || body.is_end_stream()) && !sender.is_closed() {
                    super::with_idle(|idle| {
                        super::check_in(&mut idle.senders, authority, sender, keep_for);
                    });
                }
            }
        }
    }
}

impl Body for UpstreamBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match self.get_mut() {
            UpstreamBody::Wire { wire, decoder, .. } => loop {
                match decoder.decode(&mut wire.buf).map_err(WireError::from)? {
                    Step::Data(bytes) => return Poll::Ready(Some(Ok(Frame::data(bytes)))),
                    Step::Trailers(map) => return Poll::Ready(Some(Ok(Frame::trailers(map)))),
                    Step::Done => return Poll::Ready(None),
                    Step::More => {
                        wire.buf.reserve(READ_SIZE);
                        let n = ready!(tokio_util::io::poll_read_buf(
                            Pin::new(&mut wire.stream),
                            cx,
                            &mut wire.buf
                        ))?;
                        if n == 0 {
                            decoder.at_eof().map_err(WireError::from)?;
                        }
                    }
                }
            },
            UpstreamBody::Hyper { body, ended, .. } => {
                let frame = ready!(Pin::new(body).poll_frame(cx));
                // Trailers are a body's last frame: hyper's server stops polling after them.
                *ended = match &frame {
                    None => true,
                    Some(Ok(f)) => f.is_trailers(),
                    Some(Err(_)) => false,
                };
                Poll::Ready(frame.map(|r| r.map_err(BodyError::from)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            UpstreamBody::Wire { decoder, .. } => decoder.is_done(),
            UpstreamBody::Hyper { body, ended, .. } => *ended || body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            UpstreamBody::Wire { decoder, .. } => decoder
                .remaining()
                .map_or_else(SizeHint::default, SizeHint::with_exact),
            UpstreamBody::Hyper { body, .. } => body.size_hint(),
        }
    }
}
