//! Tunnels: a handshake the upstream answers `101 Switching Protocols` (WebSocket, or any
//! `Upgrade` but `h2c`) turns the client's connection and the upstream's into one tunnel,
//! which copies bytes both ways until either side closes its end; the other side is then
//! shut down and both are closed (a half-closed tunnel is not kept).
//!
//! The tunnel keeps its request's permit for its whole life, as HAProxy's `maxconn` counts
//! a WebSocket: the upstream is busy with it. It is no latency sample: its length is the
//! application's, not the upstream's answer time (the handshake's time to the `101` is in
//! the latency histogram; the adaptive limit learns nothing from a tunnel). Closing the pool
//! (or the kill switch) leaves open tunnels running, as it leaves running requests; the
//! drain lets them run through the grace period and closes those still open when it ends
//! ([`Gate::end_tunnels`](crate::gate::Gate::end_tunnels)).

use std::io;

use bytes::Bytes;
use http::{Response, header, request};
use http_body_util::{Either, Full};
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use sluicegate::adaptive::Outcome as Sample;
use tokio::io::{AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::watch;
use tokio::time::Instant;

use super::answer::GateBody;
use super::headers::Added;
use super::upstream::UpstreamBody;
use crate::gate::Gate;
use crate::pool::{Held, Pool, Stats};

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
    let open = Open(pool.stats.clone());
    let name = pool.name.clone();
    runtime.spawn(async move {
        let since = Instant::now();
        let ended = run(*client, upstream, body).await;
        tracing::debug!(pool = %name, after = ?since.elapsed(), ended, "tunnel closed");
        // Its length says nothing about the upstream's load.
        held.finish(Sample::Ignored);
        drop(open);
    });
    response
}

/// Counts a tunnel open until dropped (also when its task is dropped with its runtime).
struct Open(std::sync::Arc<Stats>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.tunnels.closed();
    }
}

/// Takes both connections and copies between them until one side closes, either fails, or
/// the tunnels must end; says which.
async fn run(client: ClientSide, upstream: OnUpgrade, body: UpstreamBody) -> &'static str {
    let ClientSide { upgrade, mut end } = client;
    let tunnel = async move {
        let (client, upstream) = tokio::join!(upgrade, upstream);
        // The upstream's connection has handed its socket over: its sender can go.
        drop(body);
        match (client, upstream) {
            (Ok(c), Ok(u)) => copy_until_a_side_closes(c, u).await,
            _ => "a side left before the tunnel opened",
        }
    };
    tokio::select! {
        ended = tunnel => ended,
        // `Err`: the gate is gone.
        _ = end.wait_for(|e| *e) => "the drain's grace period is over",
    }
}

/// Copies both ways until either side ends its stream or fails. What a side sent before
/// its end is written to the other, whose sending side is then shut down.
async fn copy_until_a_side_closes(client: Upgraded, upstream: Upgraded) -> &'static str {
    let (mut from_client, mut to_client) = tokio::io::split(TokioIo::new(client));
    let (mut from_upstream, mut to_upstream) = tokio::io::split(TokioIo::new(upstream));
    tokio::select! {
        r = pass(&mut from_client, &mut to_upstream) => {
            if r.is_ok() { "the client closed" } else { "the client's side failed" }
        }
        r = pass(&mut from_upstream, &mut to_client) => {
            if r.is_ok() { "the upstream closed" } else { "the upstream's side failed" }
        }
    }
}

/// Copies `from` into `to` until `from` ends, then shuts `to` down.
async fn pass(
    from: &mut ReadHalf<TokioIo<Upgraded>>,
    to: &mut WriteHalf<TokioIo<Upgraded>>,
) -> io::Result<()> {
    tokio::io::copy(from, to).await?;
    to.shutdown().await
}
