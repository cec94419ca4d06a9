//! The answer read ahead of a slow client (`response_buffer_size`): the slot is the
//! upstream's, so it ends when the upstream has sent the answer, not when the client has
//! taken it. The gate reads the upstream's body up to the bound ahead of what the client
//! took; an answer that ends within it frees its slot (and gives the adaptive limit its
//! sample, timed by the upstream) at the upstream's last byte, while the gate goes on
//! writing it to the client under `send_timeout`. Past the bound the reading waits for the
//! client, and the slot with it, as every answer did before (nginx's `proxy_buffering`, less
//! its spool to disk).
//!
//! The states of an [`AnswerBody`]:
//!
//! - **Here**: the [`PermitBody`] (the upstream's body with the permit) is read by the
//!   client's own task, whenever hyper asks for a frame: each poll takes everything the
//!   upstream has ready, up to the bound, into a queue, and gives the queue's first frame.
//!   A small answer comes whole with its head: the first poll reads it to its end (the
//!   `PermitBody` frees the slot there) and nothing else happens — no task, no lock, no
//!   gate-wide count (what is left in the queue after a poll is counted; a one-frame answer
//!   leaves nothing).
//! - **Pumped**: a poll that finds the upstream not ready (the answer comes in more than one
//!   go) hands the `PermitBody` and the queue to a task of its own, the pump, which reads at
//!   the upstream's pace while the client's task takes frames from the queue. The pump stops
//!   at the bound (counted `answers_at_bound`) or the gate-wide cap (`at_cap`) and goes on
//!   when the client has taken some; the upstream's end frees the slot in the pump (counted
//!   `answers_freed_early` if the client still has part of it to take).
//! - **Ended**: the upstream sent its end (or broke off): what is queued goes to the client,
//!   then the end (or the error, so that hyper cuts the connection and a short body is never
//!   passed off as whole).
//!
//! A bound of `0` keeps the first state, queue-less: every answer streamed with its slot
//! held, as before. A client that leaves (or is cut at `send_timeout`) drops the queue; the
//! `PermitBody` then reads the rest of the upstream's answer and frees the slot at its end,
//! as it always did. An answer without a body (`HEAD`, `204`, `304`) is never polled.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use super::body::PermitBody;
use super::upstream::BodyError;
use crate::buffers::{Buffering, Counted, Event};

/// An answer's body on its way to the client, read ahead of it up to the bound.
#[derive(Debug)]
pub struct AnswerBody {
    source: Source,
    /// The upstream's end, while no pump reads it: `Ok` when whole, the error it broke off
    /// with until given.
    end: Option<Result<(), BodyError>>,
    /// Frames read and not yet given, while no pump has them.
    queue: Queue,
    /// The bytes left to give, when the upstream said (its `Content-Length`).
    remaining: Option<u64>,
}

#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "the answer is boxed whole (`GateBody`); a pump is rare, a box each for the usual answer is not"
)]
enum Source {
    /// Read when hyper asks for a frame (kept after its end: its pool's settings).
    Here(PermitBody),
    /// Read by the pump.
    Pumped(Arc<Pump>),
}

/// Frames read and not given, and their data's bytes, counted gate-wide when they outlive a
/// poll. The oldest frame is kept inline: the usual answer, one frame, allocates nothing.
#[derive(Debug, Default)]
struct Queue {
    first: Option<Frame<Bytes>>,
    /// Those after `first`, oldest first.
    more: VecDeque<Frame<Bytes>>,
    bytes: usize,
    /// Made the first time the queue keeps something.
    counted: Option<Counted>,
}

impl Queue {
    fn push(&mut self, frame: Frame<Bytes>) {
        self.bytes += frame.data_ref().map_or(0, Bytes::len);
        if self.first.is_none() && self.more.is_empty() {
            self.first = Some(frame);
        } else {
            self.more.push_back(frame);
        }
    }

    fn pop(&mut self) -> Option<Frame<Bytes>> {
        let frame = self.first.take().or_else(|| self.more.pop_front())?;
        self.bytes -= frame.data_ref().map_or(0, Bytes::len);
        Some(frame)
    }

    fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.more.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Brings the gate-wide count to what the queue holds.
    fn count(&mut self, buffering: &Buffering) {
        match &mut self.counted {
            Some(c) => c.set(self.bytes),
            None if self.bytes > 0 => {
                let mut c = Counted::new(buffering.buffers.clone());
                c.set(self.bytes);
                self.counted = Some(c);
            }
            None => {}
        }
    }

    /// Whether it may read another frame: below the bound and, holding something, the cap.
    fn has_room(&self, buffering: &Buffering) -> bool {
        let counted = self.counted.as_ref().map_or(0, Counted::n);
        self.bytes < buffering.answer
            && buffering.may_grow(self.bytes, self.bytes.saturating_sub(counted))
    }

    /// Counts why a queue without room has none: the bound, or the gate-wide cap.
    fn count_full(&self, buffering: &Buffering) {
        let event = if self.bytes >= buffering.answer {
            Event::AnswerAtBound
        } else {
            Event::AtCap
        };
        buffering.buffers.count(event);
    }
}

impl AnswerBody {
    /// `body`, to be read ahead of its client up to its pool's `response_buffer_size`.
    pub(super) fn new(body: PermitBody) -> Self {
        AnswerBody {
            remaining: body.size_hint().exact(),
            source: Source::Here(body),
            end: None,
            queue: Queue::default(),
        }
    }

    /// Reads what the upstream has ready into the queue, up to the bound (one frame at a
    /// time with a bound of `0`, as it always was); hands the rest to a pump when the
    /// upstream is not ready and the answer may be read ahead.
    fn read_here(&mut self, cx: &mut Context<'_>) {
        let Source::Here(body) = &mut self.source else {
            return;
        };
        while self.end.is_none()
            && (self.queue.is_empty()
                || body.is_end_stream()
                || self.queue.has_room(body.buffering()))
        {
            match Pin::new(&mut *body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => self.queue.push(frame),
                Poll::Ready(Some(Err(e))) => self.end = Some(Err(e)),
                Poll::Ready(None) => {
                    // One frame is given now: past it, the client still has some to take.
                    if self.queue.len() > 1 {
                        body.buffering().buffers.count(Event::AnswerFreedEarly);
                    }
                    self.end = Some(Ok(()));
                }
                Poll::Pending => {
                    let buffering = body.buffering();
                    if buffering.answer > 0 && self.queue.has_room(buffering) {
                        self.pump();
                    }
                    return;
                }
            }
        }
    }

    /// Hands the body and the queue to a pump of their own.
    fn pump(&mut self) {
        let Source::Here(body) = &self.source else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = Arc::new(Pump {
            state: Mutex::new(Pumped {
                queue: std::mem::take(&mut self.queue),
                end: None,
                client: None,
                pump: None,
                gone: false,
                full: false,
            }),
            buffering: body.buffering().clone(),
        });
        let Source::Here(body) =
            std::mem::replace(&mut self.source, Source::Pumped(shared.clone()))
        else {
            unreachable!("matched above");
        };
        drop(runtime.spawn(pump(body, shared)));
    }
}

/// Gives `frame`, its bytes fewer to go.
fn give(
    remaining: &mut Option<u64>,
    frame: Frame<Bytes>,
) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
    if let (Some(r), Some(d)) = (remaining.as_mut(), frame.data_ref()) {
        *r = r.saturating_sub(d.len() as u64);
    }
    Poll::Ready(Some(Ok(frame)))
}

impl Body for AnswerBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        this.read_here(cx);
        let body = match &this.source {
            Source::Pumped(pump) => {
                return match pump.take(cx) {
                    Poll::Ready(Some(Ok(frame))) => give(&mut this.remaining, frame),
                    other => other,
                };
            }
            Source::Here(body) => body,
        };
        let next = this.queue.pop();
        this.queue.count(body.buffering());
        if let Some(frame) = next {
            return give(&mut this.remaining, frame);
        }
        match this.end.take() {
            None => Poll::Pending,
            Some(end) => {
                this.end = Some(Ok(()));
                Poll::Ready(end.err().map(Err))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.source {
            Source::Here(body) => {
                self.queue.is_empty()
                    && match &self.end {
                        None => body.is_end_stream(),
                        Some(end) => end.is_ok(),
                    }
            }
            Source::Pumped(pump) => pump.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self.remaining {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}

impl Drop for AnswerBody {
    fn drop(&mut self) {
        if let Source::Pumped(pump) = &self.source {
            pump.client_gone();
        }
    }
}

/// The queue between the pump and the client's task.
#[derive(Debug)]
struct Pump {
    state: Mutex<Pumped>,
    buffering: Arc<Buffering>,
}

#[derive(Debug)]
struct Pumped {
    queue: Queue,
    /// The upstream's end: `Ok` when whole, the error it broke off with.
    end: Option<Result<(), BodyError>>,
    /// The client's task, waiting for a frame.
    client: Option<Waker>,
    /// The pump, waiting for room.
    pump: Option<Waker>,
    /// The client is gone: nothing more is queued.
    gone: bool,
    /// The pump has waited for room once (counted once).
    full: bool,
}

impl Pump {
    fn lock(&self) -> MutexGuard<'_, Pumped> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The client's task takes the next frame, or waits for one.
    fn take(&self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let mut s = self.lock();
        if let Some(frame) = s.queue.pop() {
            s.queue.count(&self.buffering);
            if let Some(pump) = s.pump.take() {
                pump.wake();
            }
            return Poll::Ready(Some(Ok(frame)));
        }
        match s.end.take() {
            Some(end) => {
                s.end = Some(Ok(()));
                Poll::Ready(end.err().map(Err))
            }
            None => {
                set_waker(&mut s.client, cx);
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        let s = self.lock();
        s.queue.is_empty() && matches!(s.end, Some(Ok(())))
    }

    /// The client left: its queue goes, and the pump stops.
    fn client_gone(&self) {
        let mut s = self.lock();
        s.gone = true;
        s.queue = Queue::default();
        if let Some(pump) = s.pump.take() {
            pump.wake();
        }
    }

    /// One turn of the pump: reads the upstream while there is room; ready once the
    /// upstream has ended or the client has gone.
    fn poll_pump(&self, body: &mut PermitBody, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            {
                let mut s = self.lock();
                if s.gone {
                    return Poll::Ready(());
                }
                if !s.queue.has_room(&self.buffering) {
                    if !s.full {
                        s.full = true;
                        s.queue.count_full(&self.buffering);
                    }
                    set_waker(&mut s.pump, cx);
                    return Poll::Pending;
                }
            }
            // Read outside the lock: the client's task takes frames meanwhile.
            let read = Pin::new(&mut *body).poll_frame(cx);
            let mut s = self.lock();
            let end = match read {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(frame))) => {
                    if !s.gone {
                        s.queue.push(frame);
                        s.queue.count(&self.buffering);
                    }
                    None
                }
                Poll::Ready(Some(Err(e))) => Some(Err(e)),
                Poll::Ready(None) => {
                    if !s.queue.is_empty() {
                        self.buffering.buffers.count(Event::AnswerFreedEarly);
                    }
                    Some(Ok(()))
                }
            };
            let ended = end.is_some();
            if ended {
                s.end = end;
            }
            if let Some(client) = s.client.take() {
                client.wake();
            }
            if ended {
                return Poll::Ready(());
            }
        }
    }
}

/// Keeps `cx`'s waker in `slot`, cloning it only when it is another task's.
fn set_waker(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) => w.clone_from(cx.waker()),
        None => *slot = Some(cx.waker().clone()),
    }
}

/// The pump's task: reads `body` into the queue until the upstream's end (which frees the
/// slot) or the client's departure; dropped then, an unfinished `body` reads the rest of
/// the upstream's answer and frees the slot at its end ([`PermitBody`]'s drop).
async fn pump(mut body: PermitBody, shared: Arc<Pump>) {
    std::future::poll_fn(|cx| shared.poll_pump(&mut body, cx)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(s: &'static str) -> Frame<Bytes> {
        Frame::data(Bytes::from_static(s.as_bytes()))
    }

    fn popped(q: &mut Queue) -> Option<Bytes> {
        q.pop().map(|f| f.into_data().unwrap())
    }

    /// Frames leave in the order they came, the first kept inline or not, and the bytes
    /// follow them.
    #[test]
    fn the_queue_keeps_the_order_and_its_bytes() {
        let mut q = Queue::default();
        q.push(data("a"));
        q.push(data("bb"));
        q.push(data("ccc"));
        assert_eq!((q.len(), q.bytes), (3, 6));
        assert_eq!(popped(&mut q).as_deref(), Some(&b"a"[..]));
        q.push(data("dddd"));
        assert_eq!(popped(&mut q).as_deref(), Some(&b"bb"[..]));
        assert_eq!(popped(&mut q).as_deref(), Some(&b"ccc"[..]));
        q.push(Frame::trailers(http::HeaderMap::new()));
        assert_eq!(popped(&mut q).as_deref(), Some(&b"dddd"[..]));
        assert_eq!(q.bytes, 0, "trailers have no bytes");
        assert!(q.pop().unwrap().is_trailers());
        assert!(q.is_empty() && q.pop().is_none());
        q.push(data("e"));
        assert!(q.first.is_some() && q.more.is_empty(), "inline again");
    }
}
