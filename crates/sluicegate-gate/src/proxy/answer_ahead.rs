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
//!   A small answer comes whole with its head: its one frame, after which the body says it
//!   has ended, is given as it comes (hyper then drops the body, whose drop frees the slot,
//!   as before) — no queue, no task, no lock, no allocation, no gate-wide count. What is
//!   left in the queue after a poll is counted.
//! - **Pumped**: a poll that finds the upstream not ready (the answer comes in more than one
//!   go) hands the `PermitBody` and the queue to a task of its own, the pump, which reads at
//!   the upstream's pace while the client's task takes frames from the queue. The pump stops
//!   at the bound (counted `answers_at_bound`) or the gate-wide cap (`at_cap`) and goes on
//!   when the client has taken some — unless the upstream says it has ended: then it reads
//!   the end whatever the queue holds. The upstream's end frees the slot in the pump (counted
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
    /// Frames read and not yet given, while no pump has them; made when a frame first has to
    /// wait (the usual answer's never does).
    queue: Option<Box<Queue>>,
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
/// poll.
#[derive(Debug, Default)]
struct Queue {
    frames: VecDeque<Frame<Bytes>>,
    bytes: usize,
    /// Made the first time the queue keeps something.
    counted: Option<Counted>,
}

impl Queue {
    fn push(&mut self, frame: Frame<Bytes>) {
        self.bytes += frame.data_ref().map_or(0, Bytes::len);
        self.frames.push_back(frame);
    }

    fn pop(&mut self) -> Option<Frame<Bytes>> {
        let frame = self.frames.pop_front()?;
        self.bytes -= frame.data_ref().map_or(0, Bytes::len);
        Some(frame)
    }

    fn len(&self) -> usize {
        self.frames.len()
    }

    fn is_empty(&self) -> bool {
        self.frames.is_empty()
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

    /// Whether it may read another frame: see [`room`].
    fn has_room(&self, buffering: &Buffering) -> bool {
        room(Some(self), buffering)
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

/// Whether a queue (none: an empty one) may read another frame: below the bound and,
/// holding something, the cap.
fn room(queue: Option<&Queue>, buffering: &Buffering) -> bool {
    let (bytes, counted) = queue.map_or((0, 0), |q| {
        (q.bytes, q.counted.as_ref().map_or(0, Counted::n))
    });
    bytes < buffering.answer && buffering.may_grow(bytes, bytes.saturating_sub(counted))
}

impl AnswerBody {
    /// `body`, to be read ahead of its client up to its pool's `response_buffer_size`.
    pub(super) fn new(body: PermitBody) -> Self {
        AnswerBody {
            source: Source::Here(body),
            end: None,
            queue: None,
        }
    }

    /// Reads what the upstream has ready into the queue, up to the bound (one frame at a
    /// time with a bound of `0`, as it always was); hands the rest to a pump when the
    /// upstream is not ready and the answer may be read ahead. A frame that comes with
    /// nothing queued and needs nothing after it is handed back to be given as it is: the
    /// usual answer's one frame (its end is the body's own, which hyper then drops, freeing
    /// the slot), and every frame with a bound of `0`.
    fn read_here(&mut self, cx: &mut Context<'_>) -> Option<Frame<Bytes>> {
        let Source::Here(body) = &mut self.source else {
            return None;
        };
        while self.end.is_none()
            && (self.queue.as_deref().is_none_or(Queue::is_empty)
                || body.is_end_stream()
                || room(self.queue.as_deref(), body.buffering()))
        {
            match Pin::new(&mut *body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    if self.queue.as_deref().is_none_or(Queue::is_empty)
                        && (body.is_end_stream() || body.buffering().answer == 0)
                    {
                        return Some(frame);
                    }
                    self.queue.get_or_insert_with(Box::default).push(frame);
                }
                Poll::Ready(Some(Err(e))) => self.end = Some(Err(e)),
                Poll::Ready(None) => {
                    // One frame is given now: past it, the client still has some to take.
                    if self.queue.as_deref().is_some_and(|q| q.len() > 1) {
                        body.buffering().buffers.count(Event::AnswerFreedEarly);
                    }
                    self.end = Some(Ok(()));
                }
                Poll::Pending => {
                    let buffering = body.buffering();
                    if buffering.answer > 0 && room(self.queue.as_deref(), buffering) {
                        self.pump();
                    }
                    return None;
                }
            }
        }
        None
    }

    /// Hands the body and the queue to a pump of their own.
    fn pump(&mut self) {
        let Source::Here(body) = &self.source else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let queue = self.queue.take().map(|q| *q).unwrap_or_default();
        let remaining = body.size_hint().exact().map(|n| n + queue.bytes as u64);
        let shared = Arc::new(Pump::new(queue, remaining, body.buffering().clone()));
        let Source::Here(body) =
            std::mem::replace(&mut self.source, Source::Pumped(shared.clone()))
        else {
            unreachable!("matched above");
        };
        drop(runtime.spawn(pump(body, shared)));
    }
}

impl Body for AnswerBody {
    type Data = Bytes;
    type Error = BodyError;

    #[inline]
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        if let Some(frame) = this.read_here(cx) {
            return Poll::Ready(Some(Ok(frame)));
        }
        let body = match &this.source {
            Source::Pumped(pump) => return pump.take(cx),
            Source::Here(body) => body,
        };
        let next = this.queue.as_deref_mut().and_then(|q| {
            let next = q.pop();
            q.count(body.buffering());
            next
        });
        if let Some(frame) = next {
            return Poll::Ready(Some(Ok(frame)));
        }
        match this.end.take() {
            None => Poll::Pending,
            Some(end) => {
                this.end = Some(Ok(()));
                Poll::Ready(end.err().map(Err))
            }
        }
    }

    #[inline]
    fn is_end_stream(&self) -> bool {
        match &self.source {
            Source::Here(body) => {
                self.queue.as_deref().is_none_or(Queue::is_empty)
                    && match &self.end {
                        None => body.is_end_stream(),
                        Some(end) => end.is_ok(),
                    }
            }
            Source::Pumped(pump) => pump.is_end_stream(),
        }
    }

    #[inline]
    fn size_hint(&self) -> SizeHint {
        let exact = match &self.source {
            Source::Here(body) => body
                .size_hint()
                .exact()
                .map(|n| n + self.queue.as_deref().map_or(0, |q| q.bytes) as u64),
            Source::Pumped(pump) => pump.lock().remaining,
        };
        exact.map_or_else(SizeHint::default, SizeHint::with_exact)
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
    /// The bytes left to give, when the upstream said (its `Content-Length`).
    remaining: Option<u64>,
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
    /// A pump that starts with `queue`, `remaining` bytes left to give when known.
    fn new(queue: Queue, remaining: Option<u64>, buffering: Arc<Buffering>) -> Self {
        Pump {
            state: Mutex::new(Pumped {
                remaining,
                queue,
                end: None,
                client: None,
                pump: None,
                gone: false,
                full: false,
            }),
            buffering,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pumped> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The client's task takes the next frame, or waits for one.
    fn take(&self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let mut s = self.lock();
        if let Some(frame) = s.queue.pop() {
            s.queue.count(&self.buffering);
            if let (Some(r), Some(d)) = (s.remaining.as_mut(), frame.data_ref()) {
                *r = r.saturating_sub(d.len() as u64);
            }
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

    /// One turn of the pump: reads the upstream while there is room, or while the upstream
    /// says it has ended (its last read may have filled the queue: the read after it takes
    /// the end, which frees the slot, and waiting for room would hold the slot at the
    /// client's pace); ready once the upstream has ended or the client has gone.
    fn poll_pump<B>(&self, body: &mut B, cx: &mut Context<'_>) -> Poll<()>
    where
        B: Body<Data = Bytes, Error = BodyError> + Unpin,
    {
        loop {
            {
                let mut s = self.lock();
                if s.gone {
                    return Poll::Ready(());
                }
                if !body.is_end_stream() && !s.queue.has_room(&self.buffering) {
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

    /// A body of `bytes` in one frame, after which it says it has ended.
    fn whole(bytes: &'static str) -> impl Body<Data = Bytes, Error = BodyError> + Unpin {
        use http_body_util::BodyExt;
        http_body_util::Full::new(Bytes::from_static(bytes.as_bytes())).map_err(|e| match e {})
    }

    /// An upstream whose last read fills the queue to the bound, or brings the gate-wide
    /// count to the cap, has ended all the same: the pump takes its end (which frees the
    /// slot) rather than waiting for room the client may never make — a slow client is what
    /// the read-ahead is for. Neither is counted as a stop at the bound or the cap.
    #[test]
    fn an_answer_that_ends_as_the_queue_fills_is_not_held_for_room() {
        for (answer, total) in [(4, 1 << 20), (1 << 20, 4)] {
            let buffering = Arc::new(Buffering {
                answer,
                total,
                buffers: Arc::default(),
            });
            let pump = Pump::new(Queue::default(), Some(4), buffering.clone());
            let mut body = whole("abcd");
            let mut cx = Context::from_waker(Waker::noop());
            let turn = pump.poll_pump(&mut body, &mut cx);
            let s = pump.lock();
            assert!(
                turn.is_ready() && matches!(s.end, Some(Ok(()))),
                "bound {answer}, cap {total}: the pump waits for room with the upstream done \
                 ({} bytes queued, end {:?})",
                s.queue.bytes,
                s.end,
            );
            assert_eq!(s.queue.bytes, 4, "the answer stays queued for the client");
            let b = &buffering.buffers;
            assert_eq!((b.answers_at_bound(), b.at_cap()), (0, 0));
            assert_eq!(b.answers_freed_early(), 1);
        }
    }

    /// Frames leave in the order they came, and the bytes follow them.
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
    }
}
