//! Connections to the upstreams: HTTP/1.1 keep-alive on hyper's client connections, kept
//! idle per thread.
//!
//! A request takes its thread's most recently returned idle connection to its upstream (a
//! warm socket, and no lock: the list belongs to the thread) or opens a new one. The
//! connection goes back to the idle list when the response body has been read to its end
//! ([`Conn::check_in`], called by `PermitBody`); an exchange that ends any other way closes
//! it. Idle connections are dropped once the upstream has closed them (the upstream's own
//! keep-alive timeout), past [`MAX_IDLE`] per upstream per thread, or when found older than
//! [`IDLE_TIMEOUT`] as the thread returns one (no timer: a thread without traffic
//! keeps its idle connections until the upstream closes them). A request that could not
//! be written on a reused connection (the upstream closed it just as it was picked) is sent
//! once more on a new one; a request that was written is never sent twice.
//!
//! Why not hyper-util's pooled client: its shared pool costs a lock, a SipHash of the
//! upstream's name and a few allocations per request, a fifth of the gate's own work per
//! request (BENCHMARKS.md, *The gate against nginx and HAProxy*).

use std::cell::RefCell;
use std::io;
use std::time::Duration;

use http::uri::Authority;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// How long an idle connection is kept.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// Idle connections kept per upstream per thread.
pub(super) const MAX_IDLE: usize = 1024;
/// An upstream that does not even answer the handshake within this is unreachable (502;
/// sooner a 504 when the pool's upstream timeout is shorter).
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How many idle connections a checkout looks at before opening a new one.
const SCAN: usize = 8;

/// A connection to an upstream, busy with one exchange.
#[derive(Debug)]
pub(super) struct Conn {
    sender: SendRequest<Incoming>,
    authority: Authority,
}

/// Why an upstream exchange failed.
#[derive(Debug)]
pub(super) enum SendError {
    /// No connection could be made.
    Connect(io::Error),
    /// The connection failed during the exchange.
    Http(hyper::Error),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Connect(e) => write!(f, "cannot connect: {e}"),
            SendError::Http(e) => write!(f, "{e}"),
        }
    }
}

struct Idle {
    sender: SendRequest<Incoming>,
    since: Instant,
}

thread_local! {
    /// This thread's idle connections, by upstream (a gate has a few upstreams: a list).
    static IDLE: RefCell<Vec<(Authority, Vec<Idle>)>> = const { RefCell::new(Vec::new()) };
}

impl Conn {
    /// Back to this thread's idle list, when the upstream can take another request on it.
    pub(super) fn check_in(self) {
        if self.sender.is_closed() {
            return;
        }
        let now = Instant::now();
        IDLE.with_borrow_mut(|idle| {
            let list = match idle.iter().position(|(a, _)| same(a, &self.authority)) {
                Some(i) => &mut idle[i].1,
                None => {
                    idle.push((self.authority, Vec::new()));
                    &mut idle.last_mut().expect("just pushed").1
                }
            };
            // The oldest sit at the front: drop those past the timeout, and make room.
            let stale = list
                .iter()
                .take_while(|c| now.duration_since(c.since) > IDLE_TIMEOUT)
                .count()
                .max((list.len() + 1).saturating_sub(MAX_IDLE));
            list.drain(..stale.min(list.len()));
            list.push(Idle {
                sender: self.sender,
                since: now,
            });
        });
    }
}

/// The same upstream, byte for byte (`Authority`'s own `==` ignores case, letter by letter;
/// every pool's authority comes from its config, spelled one way).
fn same(a: &Authority, b: &Authority) -> bool {
    a.as_str() == b.as_str()
}

/// This thread's freshest idle connection to `authority` that can take a request now.
fn check_out(authority: &Authority) -> Option<SendRequest<Incoming>> {
    IDLE.with_borrow_mut(|idle| {
        let (_, list) = idle.iter_mut().find(|(a, _)| same(a, authority))?;
        let mut i = list.len();
        let mut looked = 0;
        while i > 0 && looked < SCAN {
            i -= 1;
            looked += 1;
            if list[i].sender.is_closed() {
                list.remove(i);
            } else if list[i].sender.is_ready() {
                return Some(list.remove(i).sender);
            }
        }
        None
    })
}

/// Sends `req` (origin-form URI, `Host` set) to the upstream at `authority`: on an idle
/// connection of this thread, or a new one.
///
/// # Cancel safety
///
/// Dropping the future before the response head arrives closes the connection it was
/// using: the upstream sees the request end.
///
/// # Errors
///
/// [`SendError::Connect`] when no connection could be made, [`SendError::Http`] when the
/// exchange failed on one.
pub(super) async fn send(
    authority: Authority,
    mut req: Request<Incoming>,
) -> Result<(Response<Incoming>, Conn), SendError> {
    if let Some(mut sender) = check_out(&authority) {
        match sender.try_send_request(req).await {
            Ok(response) => return Ok((response, Conn { sender, authority })),
            Err(mut e) => match e.take_message() {
                // Never written: the connection closed as it was picked. A new one.
                Some(r) => req = r,
                None => return Err(SendError::Http(e.into_error())),
            },
        }
    }
    let mut sender = connect(&authority).await?;
    match sender.send_request(req).await {
        Ok(response) => Ok((response, Conn { sender, authority })),
        Err(e) => Err(SendError::Http(e)),
    }
}

async fn connect(authority: &Authority) -> Result<SendRequest<Incoming>, SendError> {
    // `[::1]` in a URL is `::1` to the resolver.
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = authority.port_u16().unwrap_or(80);
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((host, port)))
        .await
        .map_err(|_| {
            SendError::Connect(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no answer from {authority} within {CONNECT_TIMEOUT:?}"),
            ))
        })?
        .map_err(SendError::Connect)?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = http1::Builder::new()
        .writev(false)
        .handshake(TokioIo::new(stream))
        .await
        .map_err(SendError::Http)?;
    // Drives the socket; ends when the upstream closes it or every sender is gone.
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "upstream connection ended with an error");
        }
    });
    Ok(sender)
}
