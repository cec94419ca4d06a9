//! A request body read before its request asks for a slot (`client_body_buffer_size`): a
//! body that arrives slowly does so while its request holds nothing, and one that ends
//! within the bound goes upstream whole, with a `Content-Length` (an HTTP/1.0 upstream reads
//! no chunks). Past the bound, what was read goes first and the rest is streamed while the
//! request holds its slot, as every body was before. What is read counts against the
//! gate-wide `max_buffered_bytes` ([`crate::buffers`]): a body that finds the buffers full
//! is not read ahead, and one that fills them stops there, as one past the bound.

use bytes::{Bytes, BytesMut};
use futures_util::future::poll_immediate;
use http::header::{CONTENT_LENGTH, EXPECT, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderValue, Request};
use http_body::{Body as _, Frame};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;

use super::client_body::{BodyRules, ClientFault};
use crate::buffers::{Buffering, Counted, Event};

/// What the gate read of a request body before the request asked for its slot.
#[derive(Debug)]
pub(crate) struct ReadAhead {
    /// The body's bytes read, not yet given to the upstream connection.
    data: Bytes,
    /// The trailer section of a chunked body that ended within the bound, until given.
    trailers: Option<HeaderMap>,
    /// The body ended within the bound: nothing of it is left in the client's connection.
    whole: bool,
    /// `data`'s bytes in the gate-wide count, given back when it goes upstream.
    counted: Counted,
}

/// A request body as the exchange takes it: what was read ahead, if anything, and the rest
/// in the client's connection.
#[derive(Debug)]
pub(crate) struct RequestBody {
    /// The client's body, past what was read ahead.
    pub(super) rest: Incoming,
    /// Boxed: a request without a body, most of them, carries a pointer, not the buffer's
    /// bookkeeping, through every future it passes.
    pub(super) ahead: Option<Box<ReadAhead>>,
}

impl RequestBody {
    /// Whether the request has no body at all: nothing was read ahead, nothing is to come.
    pub(super) fn is_none(&self) -> bool {
        self.ahead.is_none() && self.rest.is_end_stream()
    }
}

impl ReadAhead {
    /// The body ended within the bound.
    pub(super) fn is_whole(&self) -> bool {
        self.whole
    }

    /// Everything read has been given.
    pub(super) fn is_spent(&self) -> bool {
        self.data.is_empty() && self.trailers.is_none()
    }

    /// The bytes read, not yet given.
    pub(super) fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether a trailer section came (and has not been given yet).
    pub(super) fn has_trailers(&self) -> bool {
        self.trailers.is_some()
    }

    /// The next frame of what was read: the bytes, then the trailers.
    pub(super) fn next(&mut self) -> Option<Frame<Bytes>> {
        if !self.data.is_empty() {
            self.counted.set(0);
            return Some(Frame::data(std::mem::take(&mut self.data)));
        }
        self.trailers.take().map(Frame::trailers)
    }

    /// A copy of a body read whole that has not been given yet, to send it again on a new
    /// connection (the bytes are shared, not copied; counted in the gate-wide count once
    /// more while the copy lives); `None` for a body not read whole.
    pub(super) fn copy(&self) -> Option<Box<ReadAhead>> {
        if !self.whole {
            return None;
        }
        Some(Box::new(ReadAhead {
            data: self.data.clone(),
            trailers: self.trailers.clone(),
            whole: true,
            counted: self.counted.another(),
        }))
    }

    /// Sets the upstream's head for the body: one read whole goes with its length and no
    /// chunks (unless it had trailers, which only chunks carry); and no `Expect` is passed
    /// on, as nginx passes none: the client had its `100 Continue` from the gate when its
    /// body was read.
    pub(super) fn frame(&self, headers: &mut HeaderMap) {
        headers.remove(EXPECT);
        if self.whole && self.trailers.is_none() {
            headers.remove(TRANSFER_ENCODING);
            headers.insert(CONTENT_LENGTH, HeaderValue::from(self.data.len()));
        }
    }
}

/// Reads `req`'s body ahead, up to `bound` bytes (one read may carry it a little past),
/// waiting at most `rules.timeout` for each read as the upstream would, and refusing a body
/// that passes `rules.max` (chunked: a `Content-Length` past it was refused before); `None` for a body that
/// says it is longer than the bound and waits for a `100 Continue` (`Expect`): it gets its
/// go-ahead only with its slot, as before, so that a refused upload is not sent for nothing
/// (past the bound it holds its slot while it arrives however it is read); and `None` too
/// when the read-ahead buffers hold `max_buffered_bytes` already (`buffering`): the body is
/// then streamed as with a bound of `0`. One that fills them while it is read stops there,
/// as at the bound.
///
/// # Errors
///
/// How the client failed to send the body: it broke the framing, left, sent nothing for
/// `rules.timeout`, or sent more than `rules.max`.
///
/// # Cancel safety
///
/// Dropped, what was read is dropped with it; the request is then not forwarded.
pub(super) async fn read(
    req: &mut Request<Incoming>,
    bound: usize,
    rules: BodyRules,
    buffering: &Buffering,
) -> Result<Option<Box<ReadAhead>>, ClientFault> {
    let timeout = rules.timeout;
    let longer = req
        .body()
        .size_hint()
        .exact()
        .is_some_and(|n| n > bound as u64);
    if longer
        && req
            .headers()
            .get(EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
    {
        return Ok(None);
    }
    if buffering.buffers.held() >= buffering.total {
        buffering.buffers.count(Event::AtCap);
        return Ok(None);
    }
    let mut counted = Counted::new(buffering.buffers.clone());
    let body = req.body_mut();
    let mut read = Gathered::None;
    loop {
        // Most bodies come with their head: a read that is ready takes no clock read and no
        // timer.
        let frame = match poll_immediate(body.frame()).await {
            Some(frame) => frame,
            None => tokio::time::timeout(timeout, body.frame())
                .await
                .map_err(|_| {
                    tracing::debug!(after = ?timeout, "client stopped sending a request body before its slot; cut");
                    ClientFault::Stalled
                })?,
        };
        let frame = match frame {
            // hyper ends a body whose connection it dropped without a word: short of its
            // length, that is a client gone, never a whole body.
            None if body.size_hint().lower() > 0 => return Err(ClientFault::Gone),
            None => return Ok(Some(read.done(None, true, counted))),
            Some(Err(e)) => return Err(ClientFault::of(&e)),
            Some(Ok(frame)) => frame,
        };
        match frame.into_data() {
            Ok(data) => {
                read.push(data);
                if read.len() as u64 > rules.max {
                    return Err(ClientFault::TooLarge);
                }
                counted.set(read.len());
                // A length's last bytes: hyper would only say `None` on the next read.
                if body.is_end_stream() {
                    return Ok(Some(read.done(None, true, counted)));
                }
                if read.len() >= bound {
                    return Ok(Some(read.done(None, false, counted)));
                }
                if !buffering.may_grow(read.len(), 0) {
                    buffering.buffers.count(Event::AtCap);
                    return Ok(Some(read.done(None, false, counted)));
                }
            }
            // Trailers end a chunked body.
            Err(frame) => {
                return Ok(Some(read.done(frame.into_trailers().ok(), true, counted)));
            }
        }
    }
}

/// The bytes read so far: one frame as hyper gave it (the usual small body, no copy), or
/// several copied into one buffer (which holds no more than was sent: a frame of hyper's
/// may keep its whole read buffer alive).
enum Gathered {
    None,
    One(Bytes),
    Many(BytesMut),
}

impl Gathered {
    fn push(&mut self, data: Bytes) {
        if data.is_empty() {
            return;
        }
        *self = match std::mem::replace(self, Gathered::None) {
            Gathered::None => Gathered::One(data),
            Gathered::One(first) => {
                let mut all = BytesMut::with_capacity(first.len() + data.len());
                all.extend_from_slice(&first);
                all.extend_from_slice(&data);
                Gathered::Many(all)
            }
            Gathered::Many(mut all) => {
                all.extend_from_slice(&data);
                Gathered::Many(all)
            }
        };
    }

    fn len(&self) -> usize {
        match self {
            Gathered::None => 0,
            Gathered::One(b) => b.len(),
            Gathered::Many(b) => b.len(),
        }
    }

    fn done(self, trailers: Option<HeaderMap>, whole: bool, counted: Counted) -> Box<ReadAhead> {
        let data = match self {
            Gathered::None => Bytes::new(),
            Gathered::One(b) => b,
            Gathered::Many(b) => b.freeze(),
        };
        Box::new(ReadAhead {
            data,
            trailers,
            whole,
            counted,
        })
    }
}
