//! A client connection: hyper reads and writes the accepted socket; the proxy watches a
//! duplicate of it while a request waits in the queue, so a client that hangs up leaves the
//! queue at once. The duplicate is registered with the reactor only while a request waits:
//! registered all the time, every request's arrival would be reported twice.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::io::Interest;
use tokio::net::TcpStream;

use super::headers::Forwarding;
use crate::pool::Pool;

/// One accepted client connection.
#[derive(Debug)]
pub struct Conn {
    /// The client's address.
    pub peer: SocketAddr,
    /// What its requests add to `X-Forwarded-For` and `Forwarded`.
    pub forwarding: Forwarding,
    /// A duplicate handle on the client's socket (same connection), so hyper keeps the
    /// plain `TcpStream` and its reads stay as cheap as tokio makes them; shared with the
    /// connection's [`TurnWrites`](super::TurnWrites), which sends answers on it.
    stream: Arc<std::net::TcpStream>,
    /// The pool of the request forwarded last: the answer being sent, when a write waits
    /// `send_timeout`, is its (a connection's answers go out one after another). Weak, so
    /// that a connection kept open does not keep a pool a reload removed.
    answering: Mutex<Weak<Pool>>,
    /// The client of the request read last, as the trusted proxies named it
    /// ([`ClientAddress`](crate::client_address::ClientAddress)); `None` while no proxy is
    /// trusted (the client is the peer). Behind a balancer, one connection carries many
    /// clients' requests one after another: the log of a cut names the last one's.
    client: Mutex<Option<IpAddr>>,
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
        Ok((
            Conn {
                peer,
                forwarding: Forwarding::new(peer),
                stream: Arc::new(dup),
                answering: Mutex::new(Weak::new()),
                client: Mutex::new(None),
            },
            stream,
        ))
    }

    /// Notes that `pool` answers the request forwarded now (see [`Conn::cut_at_send_timeout`]).
    pub(crate) fn answers_for(&self, pool: &Arc<Pool>) {
        let mut last = self
            .answering
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // The same pool as the last request's, the usual case: nothing to write.
        if !std::ptr::eq(last.as_ptr(), Arc::as_ptr(pool)) {
            *last = Arc::downgrade(pool);
        }
    }

    /// Notes `client`, the client of the request read now as the trusted proxies name it,
    /// for the log line of a cut ([`Conn::cut_at_send_timeout`]). Called only while some
    /// proxy is trusted.
    pub(crate) fn reads_for(&self, client: IpAddr) {
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) = Some(client);
    }

    /// Counts and logs the connection's end at `send_timeout` (`timeout`) on the pool of the
    /// request forwarded last ([`Stats::cut_at_send_timeout`]): a client cut off in the
    /// middle of an answer was otherwise seen only as a request `forwarded` and `completed`
    /// (trial34, finding 7). With no such pool (only the gate's own answers were sent, or a
    /// reload removed it), the line is logged without one.
    ///
    /// [`Stats::cut_at_send_timeout`]: crate::pool::Stats::cut_at_send_timeout
    pub(crate) fn cut_at_send_timeout(&self, timeout: Duration) {
        let pool = self
            .answering
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .upgrade();
        let client = *self.client.lock().unwrap_or_else(PoisonError::into_inner);
        match pool {
            Some(p) => p
                .stats
                .cut_at_send_timeout(&p.name, self.peer, client, timeout),
            None => tracing::info!(
                peer = %self.peer,
                client = client.map(tracing::field::display),
                "a client took none of its answer for {timeout:?} (send_timeout): its connection was cut"
            ),
        }
    }

    /// The duplicate handle on the client's socket.
    pub fn duplicate(&self) -> Arc<std::net::TcpStream> {
        Arc::clone(&self.stream)
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
        let watch = match self.stream.try_clone().and_then(TcpStream::from_std) {
            Ok(w) => w,
            Err(e) => {
                // Out of file descriptors: the request waits without the watch.
                tracing::debug!(peer = %self.peer, error = %e, "cannot watch the connection");
                return std::future::pending().await;
            }
        };
        let mut byte = [0u8; 1];
        loop {
            match watch.peek(&mut byte).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            match watch.ready(Interest::READABLE).await {
                Ok(r) if r.is_read_closed() => return,
                Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                Err(_) => return,
            }
        }
    }

    /// Whether the client has closed its side already, asked of the socket now (one
    /// non-blocking peek): the reactor may not have reported a close that has arrived.
    /// Bytes still unread (a body, a pipelined request) hide a close; then this says no.
    pub fn is_closed_now(&self) -> bool {
        let mut byte = [std::mem::MaybeUninit::<u8>::uninit(); 1];
        match socket2::SockRef::from(&*self.stream).peek(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    #[tokio::test]
    async fn a_close_is_seen_at_once_without_the_reactor() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (accepted, peer) = listener.accept().await.unwrap();
        let (conn, _hyper_side) = Conn::new(accepted, peer).unwrap();
        assert!(!conn.is_closed_now(), "an open, quiet connection");
        client.shutdown().await.unwrap();
        drop(client);
        // Loopback delivers the FIN during the close: no waiting, no reactor turn.
        assert!(conn.is_closed_now(), "the client's close");
    }
}
