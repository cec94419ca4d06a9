//! One request through the gate.

use std::convert::Infallible;
use std::pin::pin;
use std::sync::Arc;

use futures_util::future::poll_immediate;
use http::{Request, Response, StatusCode};
use http_body_util::Either;
use hyper::body::Incoming;
use sluicegate::adaptive::Outcome as Sample;
use sluicegate::http::RejectionMapping;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::answer::{self, GateBody};
use super::body::PermitBody;
use super::conn::Conn;
use super::headers;
use crate::gate::Gate;
use crate::pool::{Held, Outcome, Pool, check_global, global_policy};

/// The upstream's response head, or why there is none.
type Exchange = Result<Response<PermitBody>, Outcome>;

/// Answers one request: routes it to a pool, applies the bypass rules, the pool's rates and
/// its concurrency limit, and forwards it.
///
/// # Cancel safety
///
/// Dropping the future (the client went away) while the request waits in the queue takes
/// it out of the queue; once forwarded, the exchange runs on in its own task and keeps the
/// permit until the upstream is done.
pub async fn handle(
    gate: Arc<Gate>,
    conn: Arc<Conn>,
    mut req: Request<Incoming>,
) -> Result<Response<GateBody>, Infallible> {
    let routed = gate.with_state(|s| {
        let pool = s.route(&req)?.clone();
        let bypass = s.bypass.allows(&req, conn.peer.ip());
        if let Some((name, _)) = &s.bypass.header {
            req.headers_mut().remove(name);
        }
        Some((pool, bypass))
    });
    let Some((pool, bypass)) = routed else {
        tracing::info!(path = req.uri().path(), reason = "no_route", "rejected");
        return Ok(answer::plain(
            StatusCode::NOT_FOUND,
            "no_route",
            "no route for this request\n",
        ));
    };
    let held = if bypass {
        pool.stats
            .bypassed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Held::Plain(pool.limit.limiter().acquire_bypass())
    } else {
        if let Some(denied) = check_rates(&pool, &req, &conn) {
            return Ok(denied);
        }
        match admit(&pool, &conn).await {
            Ok(held) => held,
            Err(answer) => return Ok(answer),
        }
    };
    Ok(forward(&gate, pool, &conn, req, held).await)
}

fn check_rates(pool: &Pool, req: &Request<Incoming>, conn: &Conn) -> Option<Response<GateBody>> {
    // Per client first, so a client over its own rate does not use up the pool's.
    let denied = pool
        .per_key
        .as_ref()
        .map(|k| (k.check(req, conn.peer), &pool.policy_names.1, k.policy()))
        .filter(|(d, _, _)| d.is_denied())
        .or_else(|| {
            let g = pool.rate.as_ref()?;
            let d = check_global(g);
            d.is_denied()
                .then(|| (d, &pool.policy_names.0, global_policy(g)))
        });
    let (decision, name, quota) = denied?;
    reject(pool, Outcome::RateLimited);
    Some(answer::rate_limited(
        &RejectionMapping::default(),
        name,
        &decision,
        quota,
    ))
}

fn reject(pool: &Pool, outcome: Outcome) {
    pool.stats.count(outcome);
    tracing::info!(pool = %pool.name, reason = outcome.name(), "rejected");
}

/// Waits for a slot, leaving the queue as soon as the client hangs up.
async fn admit(pool: &Pool, conn: &Conn) -> Result<Held, Response<GateBody>> {
    let limiter = pool.limit.limiter();
    let mut acquire = pin!(limiter.acquire_owned());
    // The first poll takes the fast path: no clock read, no watcher, when a slot is free.
    let result = match poll_immediate(acquire.as_mut()).await {
        Some(r) => r,
        None => {
            let start = Instant::now();
            let r = tokio::select! {
                biased;
                r = acquire.as_mut() => Some(r),
                () = conn.closed() => None,
            };
            pool.stats.queue_wait.observe(start.elapsed());
            match r {
                Some(r) => r,
                None => {
                    // Counted by the limiter as a cancellation when `acquire` drops.
                    tracing::debug!(pool = %pool.name, "client left the queue");
                    return Err(answer::plain(
                        StatusCode::SERVICE_UNAVAILABLE,
                        Outcome::ClientGone.name(),
                        "client gone\n",
                    ));
                }
            }
        }
    };
    match result {
        Ok(permit) => Ok(pool.limit.hold(permit)),
        Err(rejected) => {
            reject(pool, Outcome::of(&rejected));
            Err(answer::overloaded(&RejectionMapping::default(), &rejected))
        }
    }
}

/// Sends the request upstream from a task that owns the permit, and relays the answer.
async fn forward(
    gate: &Gate,
    pool: Arc<Pool>,
    conn: &Conn,
    req: Request<Incoming>,
    held: Held,
) -> Response<GateBody> {
    let (mut parts, body) = req.into_parts();
    headers::to_upstream(&mut parts, &pool.upstream, conn.peer);
    let req = Request::from_parts(parts, body);
    let (tx, rx) = oneshot::channel();
    let client = gate.upstream.clone();
    tokio::spawn(exchange(client, pool, req, held, tx));
    match rx.await {
        Ok(Ok(response)) => {
            let (mut parts, body) = response.into_parts();
            headers::strip_hop_by_hop(&mut parts.headers);
            Response::from_parts(parts, Either::Right(body))
        }
        Ok(Err(outcome)) => answer::upstream_failed(outcome),
        Err(_) => answer::upstream_failed(Outcome::UpstreamError),
    }
}

/// The upstream exchange. Owns the permit: whether or not the client is still there, the
/// slot is held until the upstream has answered (and, through [`PermitBody`], sent its
/// whole body), failed, or overrun the upstream timeout.
async fn exchange(
    client: super::Upstream,
    pool: Arc<Pool>,
    req: Request<Incoming>,
    held: Held,
    tx: oneshot::Sender<Exchange>,
) {
    let start = Instant::now();
    let result = tokio::time::timeout(pool.upstream_timeout, client.client.request(req)).await;
    let failed = match result {
        Ok(Ok(response)) => {
            pool.stats.upstream_latency.observe(start.elapsed());
            pool.stats.count(Outcome::Forwarded);
            let sample = match response.status() {
                StatusCode::SERVICE_UNAVAILABLE
                | StatusCode::TOO_MANY_REQUESTS
                | StatusCode::GATEWAY_TIMEOUT => Sample::Dropped,
                _ => Sample::Success,
            };
            let (parts, body) = response.into_parts();
            let body = PermitBody::new(body, held, sample, pool.upstream_timeout);
            // If the client is gone, the returned body drops here and finishes reading the
            // upstream's answer in the background before it frees the slot.
            let _ = tx.send(Ok(Response::from_parts(parts, body)));
            return;
        }
        Ok(Err(e)) => {
            held.finish(Sample::Ignored);
            let outcome = if e.is_connect() {
                Outcome::UpstreamUnreachable
            } else {
                Outcome::UpstreamError
            };
            tracing::info!(pool = %pool.name, reason = outcome.name(), error = %e, "rejected");
            outcome
        }
        Err(_) => {
            // Dropping the request future closes its upstream connection: the upstream
            // sees the request end, and the slot is free again.
            held.finish(Sample::Dropped);
            tracing::info!(pool = %pool.name, reason = Outcome::UpstreamTimeout.name(), "rejected");
            Outcome::UpstreamTimeout
        }
    };
    pool.stats.count(failed);
    let _ = tx.send(Err(failed));
}
