//! A client connection: hyper reads and writes the accepted socket; the proxy watches a
//! duplicate of it while a request waits in the queue, so a client that hangs up leaves the
//! queue at once.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::Interest;
use tokio::net::TcpStream;

use super::headers::Forwarding;

/// One accepted client connection.
#[derive(Debug)]
pub struct Conn {
    /// The client's address.
    pub peer: SocketAddr,
    /// What its requests add to `X-Forwarded-For` and `Forwarded`.
    pub forwarding: Forwarding,
    /// A duplicate handle on the client's socket (same connection, own registration), so
    /// hyper keeps the plain `TcpStream` and its reads stay as cheap as tokio makes them.
    stream: TcpStream,
}

impl Conn {
    /// Wraps an accepted stream: returns the connection (with a duplicate handle to watch)
    /// and the stream hyper drives.
    ///
    /// # Errors
    ///
    /// When the socket cannot be duplicated (out of file descriptors).
    pub fn new(stream: TcpStream, peer: SocketAddr) -> io::Result<(Conn, TcpStream)> {
        let dup: std::net::TcpStream = socket2::SockRef::from(&stream).try_clone()?.into();
        let watch = TcpStream::from_std(dup)?;
        Ok((
            Conn {
                peer,
                forwarding: Forwarding::new(peer),
                stream: watch,
            },
            stream,
        ))
    }

    /// Resolves when the client has closed (or reset) its side of the connection.
    ///
    /// Uses readiness and `peek` on the duplicate handle, which never take bytes from
    /// hyper. When request bytes are already buffered (a body not yet read, a pipelined
    /// request), `peek` cannot see the end of the stream; then the socket's read-closed flag
    /// is polled every 50 ms.
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
