//! An upstream's response body, read from the connection it came on, which goes back to
//! the idle connections once the body has been read to its end.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http::uri::Authority;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::super::client_body::Progress;
use super::HyperConn;
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
        conn: HyperConn,
        authority: Authority,
        /// How long the upstream keeps it idle, when it said.
        keep_for: Option<Duration>,
    },
}

impl UpstreamBody {
    /// The connection goes back to this thread's idle list, if the body was read to its end
    /// and the upstream can take another request on it.
    ///
    /// An upstream that answered before it had the whole request body (`request`: how far
    /// that came) still gets the rest on this connection, which is then no idle one: it is
    /// closed once the upstream has taken nothing of the body for `timeout` (nginx's
    /// `proxy_send_timeout`), so that an upstream that neither reads nor closes cannot hold
    /// the connection, the client's connection and its body forever.
    pub(crate) fn check_in(self, request: Option<&Arc<Progress>>, timeout: Duration) {
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
                conn,
                authority,
                keep_for,
            } => {
                if let Some(request) = request.filter(|r| !r.ended()) {
                    // Rare (an early answer): a task of its own for it; outside a runtime
                    // (one shutting down) the connection goes at once.
                    match tokio::runtime::Handle::try_current() {
                        Ok(rt) => {
                            drop(rt.spawn(close_when_stalled(request.clone(), conn.task, timeout)))
                        }
                        Err(_) => conn.task.abort(),
                    }
                } else if conn.reusable
                    && (ended || body.is_end_stream())
                    && !conn.sender.is_closed()
                {
                    super::with_idle(|idle| {
                        super::check_in(&mut idle.senders, authority, conn, keep_for);
                    });
                }
            }
        }
    }
}

/// Closes a connection (aborts its task) once the upstream has taken nothing of the request
/// body for `timeout`; done when the body has gone whole, or failed. While the connection
/// waits for the client's bytes, the client's own `client_body_timeout` runs instead.
async fn close_when_stalled(request: Arc<Progress>, task: AbortHandle, timeout: Duration) {
    while !request.ended() && !task.is_finished() {
        match request.upstream_deadline(timeout) {
            Some(deadline) if deadline <= Instant::now() => {
                tracing::debug!(after = ?timeout, "upstream answered and stopped taking the request body; closed");
                task.abort();
                return;
            }
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => tokio::time::sleep(timeout).await,
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
