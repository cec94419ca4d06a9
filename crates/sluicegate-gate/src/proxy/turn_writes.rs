//! Answers to clients leave once per scheduler turn, together, instead of one `send` each as
//! it is ready.
//!
//! Why: on a machine whose cores the gate shares with its clients (and its upstream), each
//! `send` on a loopback socket wakes the client's thread, and Linux places a thread woken
//! that way on the waker's core, expecting the waker to sleep soon (a "sync" wake-up). The
//! gate does not sleep: it goes on with the other requests of the turn, and the client takes
//! its core in the middle of them (BENCHMARKS.md, *The gate against nginx and HAProxy*: the
//! gate was switched out 47 % more often than HAProxy, whose answers leave in one burst at
//! the end of its loop). Here an answer is copied into its connection's buffer and the
//! buffer is queued on the thread's flusher, a task that runs after every task ready when
//! it was woken (tokio's run queue is first in, first out): the turn's answers go out one
//! after the other, just before the thread sleeps in `epoll_wait`.
//!
//! A connection's buffer is, under its lock:
//!
//! - **empty**;
//! - **queued**: bytes the flusher sends this turn (`poll_flush` reports them flushed: they
//!   leave before the thread sleeps);
//! - **stuck**: bytes the flusher could not send (the client's receive window is full); it
//!   wakes the connection's task, whose next read, write, flush or shutdown sends them on its
//!   own socket, waiting for room through the reactor like any write. (A read too: once an
//!   answer is out, hyper — or a tunnel — goes back to reading, and polls nothing else.)
//!
//! The connection takes its bytes back from the flusher (queued → stuck, by clearing the
//! flag) before a write that does not fit in [`LIMIT`] and before a shutdown, so bytes never
//! leave out of order and a close never overtakes an answer; the flusher skips a buffer that
//! is no longer queued. The flusher sends on a duplicate of the socket, so a connection
//! dropped with bytes queued (hyper closing after its last answer) still delivers them, and
//! closes when the flusher lets go.
//!
//! One flusher per thread, started by the first queued answer and started again should its
//! runtime end (a test's runtime, say); on a multi-thread runtime it may run on another
//! worker, which its lock allows.

use std::io::{self, IoSlice, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Bytes a connection holds for the flusher; a write that would take it past this first
/// sends what is held on the connection's own socket (large answers gain nothing from the
/// batch, and every idle connection's buffer stays small).
pub(crate) const LIMIT: usize = 16 * 1024;

/// A client's socket whose writes leave with the thread's turn (see the module docs).
#[derive(Debug)]
pub struct TurnWrites {
    socket: TcpStream,
    held: Arc<Held>,
}

/// What a connection shares with the flusher.
#[derive(Debug)]
struct Held {
    /// A duplicate of the socket (same connection), for the flusher's sends.
    socket: Arc<std::net::TcpStream>,
    state: Mutex<Bytes>,
    /// The flusher left bytes (read without the lock on every read of the connection).
    stuck: AtomicBool,
}

#[derive(Debug, Default)]
struct Bytes {
    bytes: Vec<u8>,
    /// On the flusher's list for this turn.
    queued: bool,
    /// The task that last wrote: woken when the flusher leaves bytes stuck.
    writer: Option<Waker>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl TurnWrites {
    /// `socket`, its writes batched per turn and sent by the flusher on `duplicate`, a
    /// duplicate handle on the same connection ([`Conn::duplicate`](super::Conn::duplicate)).
    pub fn new(socket: TcpStream, duplicate: Arc<std::net::TcpStream>) -> TurnWrites {
        TurnWrites {
            socket,
            held: Arc::new(Held {
                socket: duplicate,
                state: Mutex::new(Bytes::default()),
                stuck: AtomicBool::new(false),
            }),
        }
    }

    /// Takes the bytes back from the flusher and sends them on the connection's socket;
    /// ready when none are left.
    fn poll_send_held(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = lock(&self.held.state);
        state.queued = false;
        let mut sent = 0;
        let result = loop {
            if sent == state.bytes.len() {
                break Poll::Ready(Ok(()));
            }
            match Pin::new(&mut self.socket).poll_write(cx, &state.bytes[sent..]) {
                Poll::Ready(Ok(0)) => break Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => sent += n,
                Poll::Ready(Err(e)) => break Poll::Ready(Err(e)),
                Poll::Pending => break Poll::Pending,
            }
        };
        state.bytes.drain(..sent);
        release_room(&mut state.bytes);
        if state.bytes.is_empty() {
            self.held.stuck.store(false, Ordering::Relaxed);
        }
        result
    }

    /// Holds `bufs` for the flusher when they fit; `None` when they do not.
    fn hold(&mut self, cx: &Context<'_>, bufs: &[IoSlice<'_>]) -> Option<usize> {
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        let mut state = lock(&self.held.state);
        if state.bytes.len() + len > LIMIT || (!state.queued && !state.bytes.is_empty()) {
            return None;
        }
        for b in bufs {
            state.bytes.extend_from_slice(b);
        }
        match &state.writer {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => state.writer = Some(cx.waker().clone()),
        }
        if !state.queued {
            state.queued = true;
            drop(state);
            FLUSHER.with(|f| f.queue(Arc::clone(&self.held)));
        }
        Some(len)
    }

    fn poll_write_slices(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(n) = self.hold(cx, bufs) {
            return Poll::Ready(Ok(n));
        }
        // Too much to hold, or bytes stuck: what is held goes first, on this socket.
        ready!(self.poll_send_held(cx))?;
        if let Some(n) = self.hold(cx, bufs) {
            return Poll::Ready(Ok(n));
        }
        Pin::new(&mut self.socket).poll_write_vectored(cx, bufs)
    }
}

/// A buffer grown by a large answer goes back to nothing once empty: thousands of idle
/// connections keep no memory for it.
fn release_room(bytes: &mut Vec<u8>) {
    if bytes.is_empty() && bytes.capacity() > 4096 {
        *bytes = Vec::new();
    }
}

impl AsyncRead for TurnWrites {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.held.stuck.load(Ordering::Relaxed) {
            // Waiting for room registers this task with the reactor; a failure shows at the
            // next write.
            let _ = self.poll_send_held(cx);
        }
        Pin::new(&mut self.socket).poll_read(cx, buf)
    }
}

impl AsyncWrite for TurnWrites {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_slices(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_slices(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    /// Ready when every byte is sent or queued for this turn's flush.
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        {
            let state = lock(&self.held.state);
            if state.queued || state.bytes.is_empty() {
                return Poll::Ready(Ok(()));
            }
        }
        self.poll_send_held(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_send_held(cx))?;
        Pin::new(&mut self.socket).poll_shutdown(cx)
    }
}

/// This thread's flusher (see the module docs).
#[derive(Default)]
struct Flusher(Arc<Mutex<Turn>>);

#[derive(Default)]
struct Turn {
    queued: Vec<Arc<Held>>,
    /// The flusher task, while it waits for the next turn's first answer.
    waker: Option<Waker>,
    /// A flusher task exists (cleared when its runtime drops it).
    running: bool,
}

thread_local! {
    static FLUSHER: Flusher = Flusher::default();
}

impl Flusher {
    fn queue(&self, held: Arc<Held>) {
        let mut turn = lock(&self.0);
        turn.queued.push(held);
        if let Some(w) = turn.waker.take() {
            w.wake();
        } else if !turn.running {
            turn.running = true;
            let shared = Arc::clone(&self.0);
            drop(turn);
            tokio::spawn(FlushTask(shared));
        }
    }
}

/// The flusher task: each time it is polled, sends every queued buffer.
struct FlushTask(Arc<Mutex<Turn>>);

impl std::future::Future for FlushTask {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let queued = {
            let mut turn = lock(&self.0);
            turn.waker = Some(cx.waker().clone());
            std::mem::take(&mut turn.queued)
        };
        for held in &queued {
            send_queued(held);
        }
        // Hand the list's room back for the next turn.
        let mut turn = lock(&self.0);
        if turn.queued.is_empty() {
            let mut list = queued;
            list.clear();
            turn.queued = list;
        }
        Poll::Pending
    }
}

impl Drop for FlushTask {
    /// The runtime is ending: what is queued goes out now, as far as the sockets take it,
    /// and the next answer on this thread starts a new flusher.
    fn drop(&mut self) {
        let queued = {
            let mut turn = lock(&self.0);
            turn.running = false;
            turn.waker = None;
            std::mem::take(&mut turn.queued)
        };
        for held in &queued {
            send_queued(held);
        }
    }
}

/// Sends a queued buffer on the duplicate socket; what the socket does not take is left for
/// the connection's task, which is woken.
fn send_queued(held: &Held) {
    let mut state = lock(&held.state);
    if !state.queued {
        return; // taken back by its connection
    }
    state.queued = false;
    let mut sent = 0;
    while sent < state.bytes.len() {
        match (&*held.socket).write(&state.bytes[sent..]) {
            Ok(0) => break,
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // Full (`WouldBlock`) or failed: the connection's own write finds out which.
            Err(_) => break,
        }
    }
    state.bytes.drain(..sent);
    release_room(&mut state.bytes);
    if !state.bytes.is_empty() {
        held.stuck.store(true, Ordering::Relaxed);
        if let Some(w) = state.writer.take() {
            w.wake();
        }
    }
}

#[cfg(test)]
mod tests;
