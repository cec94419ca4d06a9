//! A client that stops taking its answer: the socket's send buffer fills, every write waits,
//! and the exchange behind it — with its slot in the pool — waits with it, for as long as the
//! client likes (six such clients held a pool of six). [`SendTimeout`] gives up on the
//! connection once a write has waited `send_timeout` without the client taking a byte, as
//! nginx's `send_timeout` does; hyper then drops the connection and the slot is freed.
//!
//! Only a write that waits arms the timer (one boxed `Sleep` per connection, made the first
//! time, reset after): a client that reads costs one flag per write.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `S` (the client's socket) whose writes fail with `TimedOut` once one has waited `timeout`
/// without progress.
#[derive(Debug)]
pub struct SendTimeout<S> {
    inner: S,
    timeout: Duration,
    /// Armed (reset to now + `timeout`) when a write starts to wait; kept for the next.
    timer: Option<Pin<Box<Sleep>>>,
    /// A write is waiting and the timer runs for it.
    waiting: bool,
}

impl<S> SendTimeout<S> {
    /// `inner`, its writes bounded by `timeout`.
    pub fn new(inner: S, timeout: Duration) -> Self {
        SendTimeout {
            inner,
            timeout,
            timer: None,
            waiting: false,
        }
    }

    /// What a write (or flush) returned: progress disarms the timer; a wait arms it, and one
    /// that has lasted `timeout` becomes an error.
    fn watch<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.waiting = false;
            return poll;
        }
        if !self.waiting {
            // The clock is read once per wait, not on every poll while it lasts.
            self.waiting = true;
            let deadline = Instant::now() + self.timeout;
            match self.timer.as_mut() {
                Some(timer) => timer.as_mut().reset(deadline),
                None => self.timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
        }
        let Some(timer) = self.timer.as_mut() else {
            return Poll::Pending; // armed just above or on an earlier wait
        };
        ready!(timer.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            SendTimedOut(self.timeout),
        )))
    }
}

/// What a write that waited `send_timeout` fails with (inside an `io::Error` of kind
/// `TimedOut`): the end of the connection tells it from other errors by its type
/// ([`send_timed_out`]).
#[derive(Debug, thiserror::Error)]
#[error("the client took none of its answer for {0:?} (send_timeout)")]
pub(crate) struct SendTimedOut(Duration);

/// The `send_timeout` that ended a connection with `error` (hyper's, or anything whose
/// chain of sources holds an [`SendTimedOut`]), if that is how it ended.
pub(crate) fn send_timed_out(error: &(dyn std::error::Error + 'static)) -> Option<Duration> {
    let mut next = Some(error);
    while let Some(e) = next {
        // An `io::Error`'s `source` skips the error it wraps: asked for with `get_ref`.
        let inner = e
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
            .map(|i| i as &(dyn std::error::Error + 'static));
        if let Some(t) = inner
            .or(Some(e))
            .and_then(|i| i.downcast_ref::<SendTimedOut>())
        {
            return Some(t.0);
        }
        next = e.source();
    }
    None
}

impl<S: AsyncRead + Unpin> AsyncRead for SendTimeout<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for SendTimeout<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(cx, poll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A reader that stops reading: the writer's wait turns into `TimedOut` after the
    /// timeout (paused time), not before; one that reads again in time resets it.
    #[tokio::test(start_paused = true)]
    async fn a_write_that_waits_the_whole_timeout_fails() {
        let (client, server) = tokio::io::duplex(1024);
        let mut w = SendTimeout::new(server, Duration::from_secs(60));
        let mut client = client;
        // Fill the pipe; the next write waits.
        w.write_all(&[0u8; 1024]).await.unwrap();
        let start = Instant::now();
        let waiting = tokio::spawn(async move {
            let r = w.write_all(&[1u8; 10]).await;
            (r, w)
        });
        // 59 s in, the client takes room for it: the write goes through.
        tokio::time::sleep(Duration::from_secs(59)).await;
        let mut taken = [0u8; 10];
        client.read_exact(&mut taken).await.unwrap();
        let (r, mut w) = waiting.await.unwrap();
        r.unwrap();
        // Full again: this one waits 60 s with nothing taken, and fails.
        let start_second = Instant::now();
        let err = w.write_all(&[2u8; 10]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(send_timed_out(&err), Some(Duration::from_secs(60)));
        let other = io::Error::new(io::ErrorKind::TimedOut, "another timeout");
        assert_eq!(send_timed_out(&other), None);
        assert_eq!(start_second.elapsed(), Duration::from_secs(60));
        assert!(start.elapsed() >= Duration::from_secs(119));
        drop(client);
    }
}
