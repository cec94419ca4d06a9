//! Tunnels: a handshake the upstream answers `101 Switching Protocols` (WebSocket, or any
//! `Upgrade` but `h2c`) turns the client's connection and the upstream's into one tunnel,
//! which copies bytes both ways until either side closes its end; the other side is then
//! shut down and both are closed (a half-closed tunnel is not kept).
//!
//! The tunnel keeps its request's permit for its whole life, as HAProxy's `maxconn` counts
//! a WebSocket: the upstream is busy with it. It is no latency sample: its length is the
//! application's, not the upstream's answer time (the handshake's time to the `101` is in
//! the latency histogram; the adaptive limit learns nothing from a tunnel). A tunnel through
//! which no byte moves either way for its pool's `tunnel_idle_timeout` is closed (as nginx's
//! `proxy_read_timeout`, HAProxy's `timeout tunnel`): a peer that vanished without a word
//! would otherwise hold the slot until TCP noticed. Closing the pool (or the kill switch)
//! leaves open tunnels running, as it leaves running requests; the drain lets them run
//! through the grace period and closes those still open when it ends
//! ([`Gate::end_tunnels`](crate::gate::Gate::end_tunnels)).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use bytes::Bytes;
use http::{Response, header, request};
use http_body_util::{Either, Full};
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use sluicegate::adaptive::Outcome as Sample;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;
use tokio::time::Instant;

use super::answer::GateBody;
use super::headers::Added;
use super::upstream::UpstreamBody;
use crate::gate::Gate;
use crate::pool::{Held, Pool, Stats, TunnelEnd};

/// The client's side of a handshake for a tunnel.
#[derive(Debug)]
pub(super) struct ClientSide {
    /// The client's connection, once hyper's server has sent it the `101`.
    pub(super) upgrade: OnUpgrade,
    /// Turns true (or is dropped with the gate) when open tunnels must end: the drain's
    /// grace period is over.
    pub(super) end: watch::Receiver<bool>,
}

/// The client's side of a handshake [`to_upstream`](super::headers::to_upstream) found
/// ([`Added::upgrade`]): the connection hyper's server hands over after a `101`. `None`,
/// and the request goes on as a plain one without its `Upgrade`, when hyper's server
/// offers none (it does for every HTTP/1.1 request with an `Upgrade`).
pub(super) fn client_side(
    gate: &Gate,
    parts: &mut request::Parts,
    added: &mut Added,
) -> Option<Box<ClientSide>> {
    let Some(upgrade) = parts.extensions.remove::<OnUpgrade>() else {
        added.upgrade = false;
        parts.headers.remove(header::UPGRADE);
        return None;
    };
    Some(Box::new(ClientSide {
        upgrade,
        end: gate.tunnels_end(),
    }))
}

/// Starts the tunnel of a `101` the upstream sent, and returns the `101` for the client.
/// The tunnel runs in a task of its own with `held` until a side closes; without a client
/// (it left before the answer came) the upstream's connection is closed and the permit
/// released at once.
pub(super) fn open(
    pool: &Pool,
    mut response: Response<UpstreamBody>,
    held: Held,
    client: Option<Box<ClientSide>>,
) -> Response<GateBody> {
    let upstream = hyper::upgrade::on(&mut response);
    let (parts, body) = response.into_parts();
    let response = Response::from_parts(parts, Either::Left(Full::new(Bytes::new())));
    let Some(client) = client else {
        held.finish(Sample::Ignored);
        return response;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        held.finish(Sample::Ignored);
        return response;
    };
    pool.stats.tunnels.opened();
    let mut open = Open {
        stats: pool.stats.clone(),
        ended: TunnelEnd::Shutdown,
    };
    let name = pool.name.clone();
    // The pool's setting when the tunnel opens: a reload changes it for later tunnels.
    let idle = pool.config.tunnel_idle_timeout.0;
    runtime.spawn(async move {
        let since = Instant::now();
        open.ended = run(*client, upstream, body, idle).await;
        tracing::debug!(pool = %name, after = ?since.elapsed(), ended = open.ended.name(), "tunnel closed");
        // Its length says nothing about the upstream's load.
        held.finish(Sample::Ignored);
        drop(open);
    });
    response
}

/// Counts a tunnel open until dropped, then closed for `ended` (`Shutdown` when its task is
/// dropped with its runtime).
struct Open {
    stats: std::sync::Arc<Stats>,
    ended: TunnelEnd,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.stats.tunnels.closed(self.ended);
    }
}

/// Takes both connections and copies between them until one side closes, either fails,
/// no byte moves for `idle`, or the tunnels must end; says which.
async fn run(
    client: ClientSide,
    upstream: OnUpgrade,
    body: UpstreamBody,
    idle: Duration,
) -> TunnelEnd {
    let ClientSide { upgrade, mut end } = client;
    let tunnel = async move {
        let (client, upstream) = tokio::join!(upgrade, upstream);
        // The upstream's connection has handed its socket over: its sender can go.
        drop(body);
        match (client, upstream) {
            (Ok(c), Ok(u)) => copy_until_a_side_closes(c, u, idle).await,
            _ => TunnelEnd::NotOpened,
        }
    };
    tokio::select! {
        ended = tunnel => ended,
        // `Err`: the gate is gone.
        _ = end.wait_for(|e| *e) => TunnelEnd::Shutdown,
    }
}

/// Copies both ways until either side ends its stream or fails, or no byte moves either
/// way for `idle`. What a side sent before its end is written to the other, whose sending
/// side is then shut down.
async fn copy_until_a_side_closes(
    client: Upgraded,
    upstream: Upgraded,
    idle: Duration,
) -> TunnelEnd {
    let (mut from_client, mut to_client) = tokio::io::split(TokioIo::new(client));
    let (mut from_upstream, mut to_upstream) = tokio::io::split(TokioIo::new(upstream));
    let moved = Moved::new();
    tokio::select! {
        r = pass(&mut from_client, &mut to_upstream, &moved) => match r {
            Ok(()) => TunnelEnd::ClientClosed,
            Err(Failed::Read) => TunnelEnd::ClientError,
            Err(Failed::Write) => TunnelEnd::UpstreamError,
        },
        r = pass(&mut from_upstream, &mut to_client, &moved) => match r {
            Ok(()) => TunnelEnd::UpstreamClosed,
            Err(Failed::Read) => TunnelEnd::UpstreamError,
            Err(Failed::Write) => TunnelEnd::ClientError,
        },
        () = moved.still_for(idle) => TunnelEnd::IdleTimeout,
    }
}

/// Which half of a [`pass`] failed.
enum Failed {
    Read,
    Write,
}

/// The size of each direction's buffer, as [`tokio::io::copy`]'s.
const BUFFER: usize = 8 * 1024;

/// Copies `from` into `to` until `from` ends, then shuts `to` down; notes in `moved` every
/// read and write that moved bytes.
async fn pass<R, W>(from: &mut R, to: &mut W, moved: &Moved) -> Result<(), Failed>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; BUFFER];
    loop {
        let n = from.read(&mut buf).await.map_err(|_| Failed::Read)?;
        if n == 0 {
            return to.shutdown().await.map_err(|_| Failed::Write);
        }
        moved.now();
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            match to.write(rest).await {
                Ok(0) | Err(_) => return Err(Failed::Write),
                Ok(w) => rest = &rest[w..],
            }
            moved.now();
        }
        to.flush().await.map_err(|_| Failed::Write)?;
    }
}

/// When bytes last moved through a tunnel, either way (an atomic, not a `Cell`: the
/// tunnel's future must be `Send`).
struct Moved {
    start: Instant,
    /// Nanoseconds after `start`.
    last: AtomicU64,
}

impl Moved {
    fn new() -> Moved {
        Moved {
            start: Instant::now(),
            last: AtomicU64::new(0),
        }
    }

    /// Bytes moved now.
    fn now(&self) {
        let after = Instant::now().saturating_duration_since(self.start);
        let nanos = u64::try_from(after.as_nanos()).unwrap_or(u64::MAX);
        self.last.store(nanos, Relaxed);
    }

    /// Resolves once no byte has moved for `idle`.
    async fn still_for(&self, idle: Duration) {
        loop {
            let last = self.start + Duration::from_nanos(self.last.load(Relaxed));
            let deadline = last + idle;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}
