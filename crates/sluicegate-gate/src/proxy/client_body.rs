//! A client's request body on its way to the upstream, watched for the client's own faults:
//! a body that breaks its framing, a client that leaves in the middle of it, a client that
//! stops sending it, a body longer than `client_max_body_size`. Those end the exchange as the
//! client's doing (never an upstream error or timeout, never a drop for an adaptive limit),
//! and while the gate waits for the client's next bytes the upstream timeout does not run:
//! it is for the upstream's answer.
//!
//! The bound on a body's size (`client_max_body_size`) is held at three points, the earliest
//! that knows:
//!
//! 1. A `Content-Length` past it: `413` as soon as the request is routed (`handle`), before
//!    the body is read, the request meets a rate or asks for a slot — one compare, paid by
//!    every request (with no bound set the bound is `u64::MAX`, which no length passes).
//!    The body is not read for the gate's sake; what the client sends anyway is read and
//!    thrown away for 2 s at most (`handle::LINGER`, the gate's other early refusals'
//!    lingering close: closed on unread bytes, the kernel resets, and a client still sending
//!    may lose the answer) and the connection is closed after (`Connection: close`, as nginx
//!    closes after its `413`).
//! 2. A chunked body that passes it while it is read ahead (`read_ahead`): the same `413`,
//!    nothing forwarded, no slot taken.
//! 3. A chunked body that passes it while it is streamed (past `client_body_buffer_size`, or
//!    with nothing read ahead): [`ClientBody`] counts what the client may still send and,
//!    at the frame that passes it, fails the body as [`ClientFault::TooLarge`]. hyper's
//!    client connection then ends without the last chunk and is closed, so the upstream sees
//!    a request broken off, never a short body passed off as whole; the rest of the client's
//!    body is read away as in 1. An upstream that has not answered yet is not waited for:
//!    the client gets the `413` (with `Connection: close`), the slot is freed and the pool
//!    counts `body_too_large`. One that answered already (early, before the whole body) has
//!    its answer cut, and the client's connection with it; counted `body_too_large` too, not
//!    as the upstream's broken body.
//!
//! A body with a `Content-Length` within the bound cannot pass it (hyper reads no more than
//! the length), so the count in 3 only ever trips for a chunked one.

use std::error::Error;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::Instant;

use super::body::Stall;
use super::read_ahead::{ReadAhead, RequestBody};
use super::upstream::BodyError;

/// How a client failed to send its request body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ClientFault {
    /// The body broke its framing (a bad chunk size, a bare LF, oversized trailers): `400`.
    Malformed,
    /// The client left, or its connection broke, in the middle of the body.
    Gone,
    /// Nothing came for `client_body_timeout` while the upstream waited for it: `408`.
    Stalled,
    /// The body is longer than `client_max_body_size`: `413`, and the connection closed.
    TooLarge,
}

/// What a client's request body is held to.
#[derive(Clone, Copy, Debug)]
pub(super) struct BodyRules {
    /// The longest wait for the client's next bytes (`client_body_timeout`).
    pub(super) timeout: Duration,
    /// The most bytes the whole body may have (`client_max_body_size`; `u64::MAX`: none).
    pub(super) max: u64,
}

impl ClientFault {
    /// The status the client gets, when it is still there to get one.
    pub(super) fn status(self) -> StatusCode {
        match self {
            ClientFault::Malformed => StatusCode::BAD_REQUEST,
            ClientFault::Gone => StatusCode::SERVICE_UNAVAILABLE,
            ClientFault::Stalled => StatusCode::REQUEST_TIMEOUT,
            ClientFault::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }

    /// The name in `X-Sluicegate-Reason` and the log.
    pub(super) fn name(self) -> &'static str {
        match self {
            ClientFault::Malformed => "bad_request_body",
            ClientFault::Gone => "client_gone",
            ClientFault::Stalled => "client_body_timeout",
            ClientFault::TooLarge => "body_too_large",
        }
    }

    /// The body text of the gate's answer.
    pub(super) fn text(self) -> &'static str {
        match self {
            ClientFault::Malformed => "bad request body: its framing is broken\n",
            ClientFault::Gone => "client gone\n",
            ClientFault::Stalled => "request body timeout: the client stopped sending it\n",
            ClientFault::TooLarge => {
                "request body too large: it is longer than this gate takes (client_max_body_size)\n"
            }
        }
    }

    /// How the pool counts it.
    pub(super) fn outcome(self) -> crate::pool::Outcome {
        use crate::pool::Outcome;
        match self {
            ClientFault::Gone => Outcome::ClientGone,
            ClientFault::Malformed => Outcome::BadRequestBody,
            ClientFault::Stalled => Outcome::ClientBodyTimeout,
            ClientFault::TooLarge => Outcome::BodyTooLarge,
        }
    }

    /// The gate's answer, to a client still there to get one. After a body too large the
    /// connection is closed: its rest is unread (only thrown away for a while, see the
    /// module's notes), and nginx closes after its `413` too.
    pub(super) fn answer(self) -> http::Response<super::answer::GateBody> {
        let mut answer = super::answer::plain(self.status(), self.name(), self.text());
        if self == ClientFault::TooLarge {
            answer.headers_mut().insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
        }
        answer
    }

    /// What a read of hyper's server body failed on: broken framing is the client's
    /// request (hyper reports it as invalid input or data); anything else (an early end, a
    /// reset, a connection error) means the client is gone.
    pub(super) fn of(e: &hyper::Error) -> ClientFault {
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

/// How far the client's body has come, shared by the body (polled by the upstream
/// connection) and the exchange that times the upstream.
#[derive(Debug)]
pub(super) struct Progress(Mutex<Sent>);

#[derive(Debug)]
struct Sent {
    /// Since when the upstream connection waits for the client's next bytes, if it does.
    waiting: Option<Instant>,
    /// When the upstream last got something of the body (or the exchange started).
    last: Instant,
    /// The waits for the client's bytes that have ended, added up.
    waited: Duration,
    fault: Option<ClientFault>,
    /// The body has given its last frame to the upstream connection.
    ended: bool,
}

impl Progress {
    /// A body the upstream has had nothing of yet: its clock runs from now.
    pub(super) fn new() -> Progress {
        Progress(Mutex::new(Sent {
            waiting: None,
            last: Instant::now(),
            waited: Duration::ZERO,
            fault: None,
            ended: false,
        }))
    }

    /// The upstream waits for the client's next bytes: its clock stands still.
    pub(super) fn waits(&self) {
        self.update(|s| {
            s.waiting.get_or_insert_with(Instant::now);
        });
    }

    /// The client's bytes moved (a frame, the end, or a failure; `ended` when the body has
    /// nothing more to give): the upstream's clock runs again from now.
    pub(super) fn moved(&self, fault: Option<ClientFault>, ended: bool) {
        let now = Instant::now();
        self.update(|s| {
            if let Some(since) = s.waiting.take() {
                s.waited += now.saturating_duration_since(since);
            }
            s.last = now;
            s.fault = s.fault.or(fault);
            s.ended |= ended || fault.is_some();
        });
    }

    /// Whether the body has been handed whole to the upstream connection, or failed (the
    /// connection then ends by itself).
    pub(super) fn ended(&self) -> bool {
        self.update(|s| s.ended)
    }

    /// How long the upstream has waited for the client's bytes so far: the client's time,
    /// which is no part of the upstream's latency.
    pub(super) fn client_time(&self) -> Duration {
        self.update(|s| s.waited + s.waiting.map_or(Duration::ZERO, |since| since.elapsed()))
    }

    fn update<R>(&self, f: impl FnOnce(&mut Sent) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// When the upstream has had `timeout` since it last got something of the body, or
    /// `None` while it waits for the client (whose own timeout then runs).
    pub(super) fn upstream_deadline(&self, timeout: Duration) -> Option<Instant> {
        self.update(|s| s.waiting.is_none().then(|| s.last + timeout))
    }

    /// How the client failed to send its body, if it did.
    pub(super) fn fault(&self) -> Option<ClientFault> {
        self.update(|s| s.fault)
    }
}

/// A client's request body, as hyper's client connection sends it upstream: what was read
/// ahead first ([`super::read_ahead`]), then the rest from the client's connection.
#[derive(Debug)]
pub(crate) struct ClientBody {
    /// What was read before the request took its slot, until given; kept once given when
    /// it was the whole body (the client's connection is then never polled again).
    ahead: Option<Box<ReadAhead>>,
    /// The client's connection's part of the body; `None` in a copy of a body read whole
    /// ([`ClientBody::again`]), which has nothing there.
    inner: Option<Incoming>,
    progress: Arc<Progress>,
    /// `client_body_timeout`.
    timeout: Duration,
    /// What the client's connection may still give before the body passes
    /// `client_max_body_size` (what was read ahead is within it already).
    left: u64,
    stall: Stall,
    /// The last poll found nothing (saves a lock per poll while the client dawdles).
    waiting: bool,
}

impl ClientBody {
    /// Wraps `body`, held to `rules`; the exchange watches the returned progress.
    pub(super) fn new(body: RequestBody, rules: BodyRules) -> (ClientBody, Arc<Progress>) {
        let progress = Arc::new(Progress::new());
        let read = body.ahead.as_deref().map_or(0, |a| a.len() as u64);
        let body = ClientBody {
            ahead: body.ahead,
            inner: Some(body.rest),
            progress: progress.clone(),
            timeout: rules.timeout,
            left: rules.max.saturating_sub(read),
            stall: Stall::default(),
            waiting: false,
        };
        if body.is_end_stream() {
            // Never polled (a handshake without a body, an empty one read whole): given
            // whole from the start.
            progress.update(|s| s.ended = true);
        }
        (body, progress)
    }

    /// The same body once more, to send it again on a new connection: only a body read
    /// whole (nothing of it left in the client's connection), before it is given, whose
    /// bytes the copy shares ([`ReadAhead::copy`]); its progress is this one's.
    pub(super) fn again(&self) -> Option<ClientBody> {
        let ahead = self.ahead.as_deref()?.copy()?;
        Some(ClientBody {
            ahead: Some(ahead),
            inner: None,
            progress: self.progress.clone(),
            timeout: self.timeout,
            left: self.left,
            stall: Stall::default(),
            waiting: false,
        })
    }

    /// The client's bytes moved (see [`Progress::moved`]).
    /// `last`: the frame given was the body's last one (trailers, or the end).
    ///
    /// A copy's bytes ([`ClientBody::again`]) are the gate's, given once more: the client's
    /// did not move, and the upstream's clock runs on from where the first try left it — a
    /// request sent again has what is left of its one `upstream_timeout`, as one without a
    /// body sent again on the gate's own path has (review124: the copy started the clock
    /// again, and the client waited up to twice the timeout). Its end still counts: the
    /// new connection has had the whole body.
    fn moved(&mut self, fault: Option<ClientFault>, last: bool) {
        self.waiting = false;
        self.stall.moved();
        // hyper stops polling a body that says it has ended (a length's last bytes).
        let ended = last || self.is_end_stream();
        if self.inner.is_none() {
            self.progress.update(|s| s.ended |= ended);
            return;
        }
        self.progress.moved(fault, ended);
    }

    /// The body has passed `client_max_body_size`: it fails (the upstream connection is
    /// closed on a request broken off), and the rest of it in the client's connection is
    /// read away for a while, so that the client, still sending, gets its `413`.
    fn too_large(&mut self) -> BodyError {
        self.moved(Some(ClientFault::TooLarge), true);
        if let Some(rest) = self.inner.take() {
            super::handle::discard(rest);
        }
        tracing::debug!("a request body passed client_max_body_size; cut");
        "the client's body passed client_max_body_size".into()
    }

    /// The next frame of what was read ahead; `None` once the rest is the client's
    /// connection's to give.
    fn ahead_frame(&mut self) -> Option<Option<Frame<Bytes>>> {
        let ahead = self.ahead.as_mut()?;
        let whole = ahead.is_whole();
        match ahead.next() {
            Some(frame) => {
                if !whole {
                    self.ahead = None;
                }
                let last = frame.is_trailers();
                self.moved(None, last);
                Some(Some(frame))
            }
            None if whole => {
                self.moved(None, true);
                Some(None)
            }
            None => {
                self.ahead = None;
                None
            }
        }
    }
}

impl Body for ClientBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        if let Some(frame) = self.ahead_frame() {
            return Poll::Ready(frame.map(Ok));
        }
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match Pin::new(inner).poll_frame(cx) {
            Poll::Ready(Some(Err(e))) => {
                let fault = ClientFault::of(&e);
                self.moved(Some(fault), true);
                Poll::Ready(Some(Err(e.into())))
            }
            // hyper ends a body whose connection it dropped without a word: short of its
            // length, that is a client gone, never a whole body.
            Poll::Ready(None)
                if self
                    .inner
                    .as_ref()
                    .is_some_and(|i| i.size_hint().lower() > 0) =>
            {
                self.moved(Some(ClientFault::Gone), true);
                Poll::Ready(Some(Err(
                    "the client's body ended short of its length".into()
                )))
            }
            Poll::Ready(None) => {
                self.moved(None, true);
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(frame))) => {
                let len = frame.data_ref().map_or(0, |d| d.len() as u64);
                if len > self.left {
                    return Poll::Ready(Some(Err(self.too_large())));
                }
                self.left -= len;
                self.moved(None, frame.is_trailers());
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => {
                if !self.waiting {
                    self.waiting = true;
                    self.progress.waits();
                }
                let timeout = self.timeout;
                ready!(self.stall.poll_expired(cx, timeout));
                self.moved(Some(ClientFault::Stalled), true);
                // At `debug`, as every single refusal: the refusal log (`408`,
                // `client_body_timeout`) logs the first of a run and sums up the rest, and a
                // line per stall here would undo that for clients that stall many at once.
                tracing::debug!(after = ?timeout, "client stopped sending a request body; cut");
                Poll::Ready(Some(Err(format!(
                    "client sent nothing of its body for {timeout:?}"
                )
                .into())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self.ahead.as_deref() {
            Some(ahead) if ahead.is_whole() => ahead.is_spent(),
            // A part read ahead is never empty (it stopped at a bound above 0).
            Some(_) => false,
            None => self.inner.as_ref().is_none_or(Incoming::is_end_stream),
        }
    }

    /// The whole body's: hyper's client connection frames the body by it when the head
    /// says nothing (a chunked request). A body read whole has its length (but one with
    /// trailers, which only chunks carry); a part read ahead adds to the rest's.
    fn size_hint(&self) -> SizeHint {
        let Some(ahead) = self.ahead.as_deref() else {
            return self
                .inner
                .as_ref()
                .map_or(SizeHint::with_exact(0), Incoming::size_hint);
        };
        let read = ahead.len() as u64;
        if ahead.is_whole() {
            return match ahead.has_trailers() {
                true => SizeHint::default(),
                false => SizeHint::with_exact(read),
            };
        }
        let rest = self
            .inner
            .as_ref()
            .map_or(SizeHint::with_exact(0), Incoming::size_hint);
        let mut hint = SizeHint::new();
        if let Some(upper) = rest.upper() {
            hint.set_upper(upper.saturating_add(read));
        }
        hint.set_lower(rest.lower().saturating_add(read));
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's time is every wait for its bytes, ended or still going, and nothing
    /// else: not the time its bytes flow, nor the time before the first wait.
    #[tokio::test(start_paused = true)]
    async fn the_client_time_adds_up_the_waits_for_its_bytes() {
        let ms = Duration::from_millis;
        let body = Progress::new();
        tokio::time::advance(ms(5)).await;
        body.waits();
        tokio::time::advance(ms(300)).await;
        body.waits(); // a second Pending in the same wait starts nothing new
        tokio::time::advance(ms(200)).await;
        body.moved(None, false);
        tokio::time::advance(ms(40)).await;
        assert_eq!(body.client_time(), ms(500));
        body.waits();
        tokio::time::advance(ms(70)).await;
        assert_eq!(body.client_time(), ms(570), "a wait still going counts");
        body.moved(None, false);
        tokio::time::advance(ms(1000)).await;
        assert_eq!(body.client_time(), ms(570));
    }
}
