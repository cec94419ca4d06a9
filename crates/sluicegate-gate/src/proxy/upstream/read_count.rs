//! The TCP stream under one of hyper's client connections, counting the bytes read from it:
//! whether the upstream had begun to answer when the connection failed an exchange (see
//! [`super::send_hyper`]), which hyper's error does not say (a connection closed in the
//! middle of a head is an incomplete message, as one closed before any byte of it).

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A stream whose reads add up in a count shared with its connection's
/// [`HyperConn`](super::HyperConn). One relaxed add per read: the count is read by the
/// request's task after hyper's error reached it through the connection's channel, which
/// orders every read before it.
#[derive(Debug)]
pub(super) struct ReadCount {
    stream: TcpStream,
    read: Arc<AtomicU64>,
}

impl ReadCount {
    /// `stream`, and the count of the bytes read from it.
    pub(super) fn new(stream: TcpStream) -> (ReadCount, Arc<AtomicU64>) {
        let read = Arc::new(AtomicU64::new(0));
        (
            ReadCount {
                stream,
                read: read.clone(),
            },
            read,
        )
    }
}

impl AsyncRead for ReadCount {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.stream).poll_read(cx, buf))?;
        let n = buf.filled().len() - before;
        if n > 0 {
            this.read.fetch_add(n as u64, Ordering::Relaxed);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for ReadCount {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
