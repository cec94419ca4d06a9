//! Connections to the upstreams: HTTP/1.1 keep-alive, kept idle per thread.
//!
//! A request without a body (most of them) is written by the gate itself on a connection of
//! its own ([`wire`]); one with a body goes through hyper's client connection, which streams
//! both ways at once. Either way, a request takes its thread's most recently returned idle
//! connection to its upstream (a warm socket; the list belongs to the thread, so its lock is
//! never contended but by the sweep) or opens a new one. The connection goes back to the
//! idle list when the response body has been read to its end ([`UpstreamBody::check_in`],
//! called by `PermitBody`); an exchange that ends any other way closes it. Idle connections
//! are dropped past [`MAX_IDLE`] per upstream per thread, and by [`sweep`], which the gate
//! runs every [`SWEEP_EVERY`] over the idle lists of every thread that has one, whatever
//! runtime the thread belongs to (the gate's own worker threads, or every thread of a
//! caller's multi-thread runtime, where a task may run on any of them): those the upstream
//! has closed (no socket left in `CLOSE_WAIT` on a thread without traffic), those past the
//! upstream's own keep-alive timeout, and those idle longer than [`IDLE_TIMEOUT`]. A
//! checkout and a check-in drop what they find dead or stale on the way.
//!
//! A reused connection the upstream closed just as it was picked: a request without a body
//! that got no byte of an answer is sent once more on a new connection when its method is
//! idempotent (RFC 9110 §9.2.2); hyper's path sends again what it never wrote, and an
//! idempotent request whose body was read whole ahead (a copy of it kept, the bytes shared,
//! while it goes on a reused connection) when no byte of an answer came either. An answer
//! begun (part of a head, an interim `1xx`) says the upstream took the request: it is not
//! sent twice.
//!
//! A handshake for a tunnel (`Upgrade`, see [`upgrade`]) goes on a new hyper connection of
//! its own, which can be upgraded; after a `101` it is the tunnel's and never goes back to
//! the idle list.
//!
//! Why not hyper-util's pooled client: its shared pool costs a lock, a SipHash of the
//! upstream's name and a few allocations per request, a fifth of the gate's own work per
//! request (BENCHMARKS.md, *The gate against nginx and HAProxy*).

mod body;
mod decode;
mod read_count;
mod upgrade;
mod wire;

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use http::uri::Authority;
use http::{Method, Request, Response, StatusCode};

use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::client_body::{BodyRules, ClientBody, Progress};
use super::headers::Added;
use super::read_ahead::RequestBody;

pub(crate) use body::{BodyError, UpstreamBody};
use decode::Decoder;
use read_count::ReadCount;
use wire::Wire;
pub(crate) use wire::WireError;
pub(super) use wire::chunked_codings;

/// How long an idle connection is kept.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// Idle connections kept per upstream per thread.
pub(super) const MAX_IDLE: usize = 1024;
/// An upstream that does not even answer the handshake within this is unreachable (502;
/// sooner a 504 when the pool's upstream timeout is shorter).
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How many idle connections a checkout looks at before opening a new one.
const SCAN: usize = 8;
/// How often the gate sweeps the idle connections ([`sweep`]).
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(10);

/// Why an upstream exchange failed.
#[derive(Debug)]
pub(super) enum SendError {
    /// No connection could be made.
    Connect(io::Error),
    /// The exchange failed on hyper's connection.
    Http(hyper::Error),
    /// The exchange failed on the gate's own connection.
    Wire(WireError),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Connect(e) => {
                write!(f, "cannot connect: {e}{}", crate::open_files::hint(e))
            }
            SendError::Http(e) => write!(f, "{e}"),
            SendError::Wire(e) => write!(f, "{e}"),
        }
    }
}

/// An idle connection, since when, and until when its upstream said it would keep it.
struct Idle<C> {
    conn: C,
    since: Instant,
    /// From the upstream's `Keep-Alive: timeout=N` ([`keep_for`]), when it sent one.
    until: Option<Instant>,
}

/// Idle connections by upstream (a gate has a few upstreams: a list).
type IdleLists<C> = Vec<(Authority, Vec<Idle<C>>)>;

/// One thread's idle connections.
#[derive(Default)]
struct IdlePools {
    /// The gate's own connections.
    wires: IdleLists<Wire>,
    /// hyper's connections.
    senders: IdleLists<HyperConn>,
}

/// One of hyper's client connections: the handle to send on, and the task that drives it.
#[derive(Debug)]
pub(crate) struct HyperConn {
    pub(crate) sender: SendRequest<ClientBody>,
    /// Aborting it closes the connection: for one whose upstream answered and then stopped
    /// taking the rest of the request body ([`UpstreamBody::check_in`]).
    pub(crate) task: tokio::task::AbortHandle,
    /// Whether it may go back to the idle list: not one made for a handshake (hyper never
    /// finds one that can be upgraded ready again after an answer that declined).
    pub(crate) reusable: bool,
    /// The bytes read from the upstream so far ([`ReadCount`]): whether an answer had begun
    /// when an exchange failed.
    read: Arc<AtomicU64>,
}

/// Every thread's idle connections, for [`sweep`]; a thread that has ended leaves a dead
/// entry, forgotten at the next sweep.
static EVERY_THREAD: Mutex<Vec<Weak<Mutex<IdlePools>>>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's idle connections, registered in [`EVERY_THREAD`] at first use.
    static THIS_THREAD: Arc<Mutex<IdlePools>> = {
        let pools = Arc::default();
        lock(&EVERY_THREAD).push(Arc::downgrade(&pools));
        pools
    };
}

/// A lock that a panic elsewhere does not poison for good (the lists stay consistent: each
/// change to them is one call on a `Vec`).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on this thread's idle connections; `None` while the thread is ending (its
/// connections are gone with it).
fn with_idle<R>(f: impl FnOnce(&mut IdlePools) -> R) -> Option<R> {
    THIS_THREAD.try_with(|p| f(&mut lock(p))).ok()
}

/// Puts `conn` at the back of `authority`'s idle list, to be kept at most `keep_for` (the
/// upstream's own keep-alive timeout, when it said), dropping those past the timeout or the
/// cap from the front.
fn check_in<C>(idle: &mut IdleLists<C>, authority: Authority, conn: C, keep_for: Option<Duration>) {
    let now = Instant::now();
    let list = match idle.iter().position(|(a, _)| same(a, &authority)) {
        Some(i) => &mut idle[i].1,
        None => {
            idle.push((authority, Vec::new()));
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
        conn,
        since: now,
        until: keep_for.map(|d| now + d),
    });
}

/// The freshest idle connection to `authority` that `usable` accepts; those it calls dead
/// are dropped on the way.
fn check_out<C>(
    idle: &mut IdleLists<C>,
    authority: &Authority,
    mut usable: impl FnMut(&mut C) -> Usable,
) -> Option<C> {
    let (_, list) = idle.iter_mut().find(|(a, _)| same(a, authority))?;
    let mut i = list.len();
    let mut looked = 0;
    // Read only for upstreams that said how long they keep an idle connection.
    let mut now = None;
    while i > 0 && looked < SCAN {
        i -= 1;
        looked += 1;
        if let Some(until) = list[i].until
            && *now.get_or_insert_with(Instant::now) >= until
        {
            // The upstream closes it about now: a request sent on it could be lost.
            list.remove(i);
            continue;
        }
        match usable(&mut list[i].conn) {
            Usable::Dead => drop(list.remove(i)),
            Usable::Busy => {}
            Usable::Yes => return Some(list.remove(i).conn),
        }
    }
    None
}

/// Drops the idle connections of every thread that the upstream has closed, that are past
/// the keep-alive timeout their upstream gave, or that have been idle longer than
/// [`IDLE_TIMEOUT`], and forgets upstreams with none left (one a reload removed, say).
///
/// Each thread's lists are locked in turn, for as long as that thread's sweep takes.
pub(crate) fn sweep() {
    let threads: Vec<Arc<Mutex<IdlePools>>> = {
        let mut all = lock(&EVERY_THREAD);
        all.retain(|p| p.strong_count() > 0);
        all.iter().filter_map(Weak::upgrade).collect()
    };
    let now = Instant::now();
    for pools in threads {
        let pools = &mut *lock(&pools);
        sweep_lists(&mut pools.wires, now, |w| w.is_usable(false));
        sweep_lists(&mut pools.senders, now, |c| !c.sender.is_closed());
    }
}

/// Runs [`sweep`] every [`SWEEP_EVERY`], for as long as it is polled. One is enough for a
/// process: it sweeps every thread.
pub(crate) async fn sweep_forever() {
    let mut every = tokio::time::interval_at(Instant::now() + SWEEP_EVERY, SWEEP_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        sweep();
    }
}

fn sweep_lists<C>(idle: &mut IdleLists<C>, now: Instant, mut alive: impl FnMut(&mut C) -> bool) {
    for (_, list) in idle.iter_mut() {
        list.retain_mut(|c| {
            now.duration_since(c.since) <= IDLE_TIMEOUT
                && c.until.is_none_or(|until| now < until)
                && alive(&mut c.conn)
        });
    }
    idle.retain(|(_, list)| !list.is_empty());
}

/// How long to keep an idle connection whose upstream answered `Keep-Alive: timeout=N`
/// (RFC 9112 leaves the header to HTTP/1.0; Node, Apache and others still send it): a
/// little less than `N` seconds, so that a request is not sent just as the upstream closes
/// the connection (a request with a body, or one not idempotent, cannot be sent again).
pub(super) fn keep_for(keep_alive: &[u8]) -> Option<Duration> {
    let secs: u64 = keep_alive.split(|&b| b == b',').find_map(|param| {
        let param = param.trim_ascii();
        let (name, value) = param.split_at(param.iter().position(|&b| b == b'=')?);
        let value = value[1..].trim_ascii();
        (name.trim_ascii().eq_ignore_ascii_case(b"timeout")
            && !value.is_empty()
            && value.len() <= 9
            && value.iter().all(u8::is_ascii_digit))
        .then(|| value.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
    })?;
    let ms = secs * 1000;
    Some(Duration::from_millis(ms - ms.min(1000).min(ms / 4)))
}

/// What a checkout finds an idle connection to be.
enum Usable {
    Yes,
    /// Alive but not ready for a request yet.
    Busy,
    /// Closed by the upstream.
    Dead,
}

/// The same upstream, byte for byte (`Authority`'s own `==` ignores case, letter by letter;
/// every pool's authority comes from its config, spelled one way).
fn same(a: &Authority, b: &Authority) -> bool {
    a.as_str() == b.as_str()
}

/// Sends the request `parts` and `body` (origin-form URI, `Host` set, hop-by-hop headers
/// gone) and the headers this hop adds to the upstream at `authority`, on an idle connection
/// of this thread or a new one. The answer comes back without its hop-by-hop headers. A
/// body goes through a [`ClientBody`], which fails the exchange when the client sends
/// nothing of it for the rules' timeout, or more than their most; how far it has come is
/// returned with the future.
///
/// # Cancel safety
///
/// Dropping the future before the response head arrives closes the connection it was
/// using: the upstream sees the request end.
///
/// # Errors
///
/// [`SendError::Connect`] when no connection could be made, [`SendError::Http`] or
/// [`SendError::Wire`] when the exchange failed on one (the returned progress then says
/// whether the client's body was the cause).
pub(super) fn send(
    authority: Authority,
    parts: http::request::Parts,
    body: RequestBody,
    added: Added,
    rules: BodyRules,
) -> (Sending, Option<Arc<Progress>>) {
    // Not a body read whole: its connection has nothing left, but the read has the body.
    if body.is_none() && parts.method != Method::CONNECT && !added.upgrade {
        (Box::pin(send_wire(authority, parts, added)), None)
    } else {
        let upgrade = added.upgrade;
        let (body, progress) = ClientBody::new(body, rules);
        let mut req = Request::from_parts(parts, body);
        added.insert_into(req.headers_mut());
        let sending: Sending = if upgrade {
            Box::pin(upgrade::send(authority, req))
        } else {
            Box::pin(send_hyper(authority, req))
        };
        (sending, Some(progress))
    }
}

/// What [`send`] returns: one box, whichever path the request takes, so that neither path's
/// future sizes the request's.
pub(super) type Sending =
    Pin<Box<dyn Future<Output = Result<Response<UpstreamBody>, SendError>> + Send>>;

/// A request without a body, on the gate's own connection.
///
/// An `async` block rather than an `async fn`: the block uses its captures where they lie,
/// where an `async fn` first copies its arguments (the request's head is 224 bytes) into
/// locals of its own.
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn copies its arguments first"
)]
fn send_wire(
    authority: Authority,
    parts: http::request::Parts,
    added: Added,
) -> impl Future<Output = Result<Response<UpstreamBody>, SendError>> + Send {
    async move {
        let idle = with_idle(|idle| {
            check_out(&mut idle.wires, &authority, |w| {
                if w.is_usable(!parts.method.is_idempotent()) {
                    Usable::Yes
                } else {
                    Usable::Dead
                }
            })
        })
        .flatten();
        if let Some(mut wire) = idle {
            match wire.exchange(&parts, &added).await {
                Ok(head) => return Ok(answer(wire, head, authority)),
                // The upstream closed it while it sat idle: once more on a new one, if
                // sending the request twice cannot do harm.
                Err(WireError::Unanswered(_)) if parts.method.is_idempotent() => {}
                Err(e) => return Err(SendError::Wire(e)),
            }
        }
        let mut wire = Wire::new(connect(&authority).await?);
        match wire.exchange(&parts, &added).await {
            Ok(head) => Ok(answer(wire, head, authority)),
            Err(e) => Err(SendError::Wire(e)),
        }
    }
}

fn answer(wire: Wire, head: wire::Head, authority: Authority) -> Response<UpstreamBody> {
    head.response.map(|()| UpstreamBody::Wire {
        wire,
        decoder: Decoder::new(head.framing),
        keep_alive: head.keep_alive,
        keep_for: head.keep_for,
        authority,
    })
}

/// A request with a body, on hyper's client connection.
async fn send_hyper(
    authority: Authority,
    mut req: Request<ClientBody>,
) -> Result<Response<UpstreamBody>, SendError> {
    let idle = with_idle(|idle| {
        check_out(&mut idle.senders, &authority, |c| {
            if c.sender.is_closed() {
                Usable::Dead
            } else if c.sender.is_ready() {
                Usable::Yes
            } else {
                Usable::Busy
            }
        })
    })
    .flatten();
    if let Some(mut conn) = idle {
        let again = again(&req);
        let read = conn.read.load(Ordering::Relaxed);
        match conn.sender.try_send_request(req).await {
            Ok(response) => return relay(response, conn, authority, false),
            Err(mut e) => match (e.take_message(), again) {
                // Never written: the connection closed as it was picked. A new one.
                (Some(r), _) => req = r,
                // Written, and the upstream closed the connection on it without a byte of
                // an answer (it read the request as its keep-alive ran out): a new one, if
                // sending the request twice cannot do harm.
                (None, Some(r))
                    if unanswered(e.error()) && conn.read.load(Ordering::Relaxed) == read =>
                {
                    req = r;
                }
                (None, _) => return Err(SendError::Http(e.into_error())),
            },
        }
    }
    let mut conn = handshake(&authority, false).await?;
    match conn.sender.send_request(req).await {
        Ok(response) => relay(response, conn, authority, false),
        Err(e) => Err(SendError::Http(e)),
    }
}

/// `req` once more, to send it again on a new connection when the reused one it goes on
/// fails before an answer (see [`unanswered`]): a request with an idempotent method (RFC 9110
/// §9.2.2, as the gate's own path sends one without a body again) whose body was read whole
/// before it was sent ([`ClientBody::again`], its bytes shared); nginx sends such a
/// request to the next try too (`proxy_next_upstream error`, idempotent methods). `None`
/// for any other: its body, or part of it, was the client's connection's to give. The
/// second try has what is left of the exchange's `upstream_timeout`: the copy's bytes do
/// not start its clock again ([`ClientBody`]'s `moved`).
fn again(req: &Request<ClientBody>) -> Option<Request<ClientBody>> {
    if !req.method().is_idempotent() {
        return None;
    }
    let mut again = Request::new(req.body().again()?);
    *again.method_mut() = req.method().clone();
    *again.uri_mut() = req.uri().clone();
    *again.version_mut() = req.version();
    *again.headers_mut() = req.headers().clone();
    Some(again)
}

/// Whether hyper's client failed a request the upstream did not answer: the connection
/// closed or broke before the answer's head ended. Not an answer that did not parse, nor a
/// failure of the request's own body. hyper's error does not say whether a byte of the
/// answer had come (closed in the middle of a head, it is an incomplete message as before
/// the first byte): the connection's read count does ([`ReadCount`]).
fn unanswered(e: &hyper::Error) -> bool {
    e.is_incomplete_message()
        || (!e.is_parse()
            && !e.is_user()
            && !e.is_timeout()
            && !e.is_body_write_aborted()
            && std::error::Error::source(e).is_some_and(|s| s.is::<io::Error>()))
}

/// A new hyper connection to `authority`, driven by a task of its own until the upstream
/// closes it or every sender is gone; one that `upgrades` hands its socket over to the
/// response of a `101` ([`hyper::upgrade::on`]).
async fn handshake(authority: &Authority, upgrades: bool) -> Result<HyperConn, SendError> {
    let (stream, read) = ReadCount::new(connect(authority).await?);
    let (sender, connection) = http1::Builder::new()
        .writev(false)
        // The same limits as the gate's own path: 64 KiB of head, exact however it arrives
        // (the buffer's size alone is no exact limit), and 64 KiB of trailers (hyper's
        // default is 16 KiB). The read buffer stays at 64 KiB too (hyper's is ~400 KiB).
        .max_header_size(wire::MAX_HEAD)
        .max_buf_size(wire::MAX_HEAD)
        .handshake(TokioIo::new(stream))
        .await
        .map_err(SendError::Http)?;
    let task = if upgrades {
        tokio::spawn(drive(connection.with_upgrades()))
    } else {
        tokio::spawn(drive(connection))
    };
    Ok(HyperConn {
        sender,
        task: task.abort_handle(),
        reusable: !upgrades,
        read,
    })
}

async fn drive(connection: impl Future<Output = Result<(), hyper::Error>>) {
    if let Err(e) = connection.await {
        tracing::debug!(error = %e, "upstream connection ended with an error");
    }
}

/// The answer hyper read, without its hop-by-hop headers. A `101` is the start of a tunnel
/// for a request that asked for one (`upgrade`, see [`upgrade::switched`]), else an error
/// as on the gate's own path.
fn relay(
    response: Response<Incoming>,
    conn: HyperConn,
    authority: Authority,
    upgrade: bool,
) -> Result<Response<UpstreamBody>, SendError> {
    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        if upgrade {
            return upgrade::switched(response, conn, authority);
        }
        return Err(SendError::Wire(WireError::Head(wire::UNASKED_UPGRADE)));
    }
    let (mut parts, body) = response.into_parts();
    // The gate answers in its own version (RFC 9110 §6.2), as its own path does: an
    // HTTP/1.0 upstream's `HTTP/1.0` would tell an HTTP/1.1 client that the connection ends
    // with this answer (RFC 9112 §9.3). An HTTP/1.0 client's answer is made HTTP/1.0 later.
    parts.version = http::Version::HTTP_11;
    let codings = parts
        .headers
        .get_all(TRANSFER_ENCODING)
        .iter()
        .try_fold(0, |n, v| wire::chunked_codings(Some(n), v.as_bytes()));
    if !matches!(codings, Some(0 | 1))
        && parts.status != StatusCode::NO_CONTENT
        && parts.status != StatusCode::NOT_MODIFIED
    {
        // As on the gate's own path: a coding other than chunked would reach the client
        // undeclared.
        return Err(SendError::Wire(WireError::Head(wire::OTHER_CODING)));
    }
    if parts.headers.contains_key(TRANSFER_ENCODING) {
        // A length that came with transfer codings is not the relayed body's (RFC 9112
        // §6.3 item 3: removed before forwarding).
        parts.headers.remove(CONTENT_LENGTH);
    } else {
        // hyper reads a list of one value, or the same on two lines, as that one length:
        // relayed as it (strict clients refuse the list, RFC 9110 §8.6 lets it be replaced).
        let mut lengths = parts.headers.get_all(CONTENT_LENGTH).iter();
        if let Some(first) = lengths.next()
            && (lengths.next().is_some() || first.as_bytes().contains(&b','))
            && let Some(n) = wire::content_length(first.as_bytes())
        {
            parts
                .headers
                .insert(CONTENT_LENGTH, http::HeaderValue::from(n));
        }
    }
    let keep_for = parts
        .headers
        .get("keep-alive")
        .and_then(|v| keep_for(v.as_bytes()));
    super::headers::strip_hop_by_hop(&mut parts.headers);
    Ok(
        Response::from_parts(parts, body).map(|body| UpstreamBody::Hyper {
            body,
            ended: false,
            conn,
            authority,
            keep_for,
        }),
    )
}

/// A new TCP connection to `authority`, `TCP_NODELAY` set.
async fn connect(authority: &Authority) -> Result<TcpStream, SendError> {
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
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_alive_timeouts_are_read_and_shortened() {
        let secs = |v: &str| keep_for(v.as_bytes()).map(|d| d.as_millis());
        assert_eq!(secs("timeout=5"), Some(4000));
        assert_eq!(secs("timeout=5, max=1000"), Some(4000));
        assert_eq!(secs("max=1000, Timeout = 60"), Some(59_000));
        assert_eq!(secs("timeout=1"), Some(750));
        assert_eq!(secs("timeout=0"), Some(0));
        for bad in [
            "",
            "max=5",
            "timeout=",
            "timeout=-1",
            "timeout=5s",
            "timeout=9999999999",
        ] {
            assert_eq!(secs(bad), None, "{bad}");
        }
    }

    /// An idle connection whose upstream said how long it keeps it is not taken after that
    /// (the upstream closes it about then); one whose upstream said nothing is.
    #[tokio::test(start_paused = true)]
    async fn an_idle_connection_is_not_used_past_the_upstreams_keep_alive() {
        let up: Authority = "up:80".parse().unwrap();
        let mut idle: IdleLists<u32> = Vec::new();
        let take = |idle: &mut IdleLists<u32>| check_out(idle, &up, |_| Usable::Yes);
        check_in(&mut idle, up.clone(), 1, Some(Duration::from_secs(4)));
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(take(&mut idle), Some(1), "within what the upstream said");
        check_in(&mut idle, up.clone(), 1, Some(Duration::from_secs(4)));
        check_in(&mut idle, up.clone(), 2, None);
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(take(&mut idle), Some(2), "no word from the upstream: kept");
        check_in(&mut idle, up.clone(), 3, Some(Duration::from_secs(4)));
        tokio::time::advance(Duration::from_secs(4)).await;
        assert_eq!(
            take(&mut idle),
            None,
            "both past their upstream's keep-alive"
        );
        assert!(idle[0].1.is_empty(), "and dropped");
    }

    /// A sweep drops the idle connections found closed, those past their upstream's
    /// keep-alive, and those idle longer than the idle timeout, keeps the rest in order, and
    /// forgets an upstream with none left.
    #[tokio::test(start_paused = true)]
    async fn a_sweep_drops_closed_stale_and_expired_idle_connections() {
        let (a, b): (Authority, Authority) = ("a:80".parse().unwrap(), "b:80".parse().unwrap());
        let mut idle: IdleLists<u32> = Vec::new();
        check_in(&mut idle, a.clone(), 1, None);
        check_in(&mut idle, b.clone(), 2, None);
        tokio::time::advance(IDLE_TIMEOUT - Duration::from_secs(5)).await;
        check_in(&mut idle, a.clone(), 3, Some(Duration::from_secs(4)));
        check_in(&mut idle, a.clone(), 4, None);
        check_in(&mut idle, a.clone(), 5, None);
        // 5 is closed by its upstream.
        let alive = |c: &mut u32| *c != 5;
        sweep_lists(&mut idle, Instant::now(), alive);
        let ids = |idle: &IdleLists<u32>| -> Vec<Vec<u32>> {
            idle.iter()
                .map(|(_, l)| l.iter().map(|c| c.conn).collect())
                .collect()
        };
        assert_eq!(ids(&idle), [vec![1, 3, 4], vec![2]]);
        tokio::time::advance(Duration::from_secs(4)).await;
        sweep_lists(&mut idle, Instant::now(), alive);
        assert_eq!(ids(&idle), [vec![1, 4], vec![2]], "3: past its keep-alive");
        tokio::time::advance(Duration::from_secs(2)).await;
        sweep_lists(&mut idle, Instant::now(), alive);
        assert_eq!(ids(&idle), [vec![4]], "1 and 2: idle too long; b forgotten");
        assert!(same(&idle[0].0, &a));
    }

    /// A sweep reaches the idle connections of every thread, whichever thread runs it, and
    /// forgets a thread that has ended. Defect pinned (end to end in `tests/upstream_sweep.rs`):
    /// a sweep reached only its own thread's, so serving on a caller's multi-thread runtime
    /// left the connections pooled on its other threads unswept.
    #[test]
    fn a_sweep_reaches_the_idle_connections_of_every_thread() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let up: Authority = addr.to_string().parse().unwrap();
        let (pooled, on_pooled) = std::sync::mpsc::channel();
        let (swept, on_swept) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            // One past its upstream's keep-alive at once, one good for a minute.
            for keep in [Duration::ZERO, Duration::from_secs(60)] {
                let wire = Wire::new(rt.block_on(TcpStream::connect(addr)).unwrap());
                with_idle(|idle| check_in(&mut idle.wires, up.clone(), wire, Some(keep)));
            }
            let count = || with_idle(|idle| idle.wires.iter().map(|(_, l)| l.len()).sum());
            pooled
                .send((count(), THIS_THREAD.with(Arc::downgrade)))
                .unwrap();
            on_swept.recv().unwrap();
            count()
        });
        let (before, pools) = on_pooled.recv().unwrap();
        assert_eq!(before, Some(2));
        sweep();
        swept.send(()).unwrap();
        assert_eq!(other.join().unwrap(), Some(1), "swept from this thread");
        sweep();
        assert!(pools.upgrade().is_none(), "gone with its thread");
        assert!(
            !lock(&EVERY_THREAD).iter().any(|p| p.ptr_eq(&pools)),
            "and forgotten"
        );
        drop(listener);
    }
}
