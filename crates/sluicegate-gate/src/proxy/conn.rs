//! A client connection shared between hyper (which reads and writes it) and the proxy
//! (which watches it while a request waits in the queue, so a client that hangs up leaves
//! the queue at once).

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// One accepted client connection.
#[derive(Debug)]
pub struct Conn {
    /// The client's address.
    pub peer: SocketAddr,
    stream: Arc<TcpStream>,
}

impl Conn {
    /// Wraps an accepted stream; returns the connection and the I/O handle hyper drives.
    pub fn new(stream: TcpStream, peer: SocketAddr) -> (Conn, SharedStream) {
        let stream = Arc::new(stream);
        (
            Conn {
                peer,
                stream: stream.clone(),
            },
            SharedStream(stream),
        )
    }

    /// Resolves when the client has closed (or reset) its side of the connection.
    ///
    /// Uses readiness and `peek`, which never take bytes from hyper and wait through
    /// tokio's waiter list, not the single read waker hyper uses. When request bytes are
    /// already buffered (a body not yet read, a pipelined request), `peek` cannot see the
    /// end of the stream; then the socket's read-closed flag is polled every 50 ms.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only observes.
    pub async fn closed(&self) {
        let mut byte = [0u8; 1];
        loop {
            match self.stream.peek(&mut byte).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            match self.stream.ready(Interest::READABLE).await {
                Ok(r) if r.is_read_closed() => return,
                Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                Err(_) => return,
            }
        }
    }
}

/// The connection's I/O for hyper: reads and writes through a shared handle.
#[derive(Debug)]
pub struct SharedStream(Arc<TcpStream>);

impl AsyncRead for SharedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match self.0.try_read(unfilled) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for SharedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            match self.0.try_write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => return Poll::Ready(other),
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            match self.0.try_write_vectored(bufs) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => return Poll::Ready(other),
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        let sock = socket2::SockRef::from(&*self.0);
        match sock.shutdown(std::net::Shutdown::Write) {
            Err(e) if e.kind() != io::ErrorKind::NotConnected => Poll::Ready(Err(e)),
            _ => Poll::Ready(Ok(())),
        }
    }
}
