//! One request through the gate.

use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::poll_immediate;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use sluicegate::http::{RatePolicy, RejectionMapping};
use sluicegate::rate::Decision;
use tokio::time::Instant;

use super::answer::{self, GateBody};
use super::client_body::{BodyRules, ClientFault};
use super::conn::Conn;
use super::exchange::{Exchange, Failed};
use super::global;
use super::headers;
use super::read_ahead::{self, RequestBody};
use super::tunnel;
use super::unrouted::Unrouted;
use crate::gate::Gate;
use crate::pool::{Held, Outcome, Pool, check_global, global_policy};

/// Answers one request: routes it to a pool, applies the bypass rules, reads its body ahead
/// (up to `client_body_buffer_size`, before any limit), applies the pool's rates and its
/// concurrency limit, and forwards it.
///
/// # Cancel safety
///
/// Dropping the future (the client went away) while its body is read ahead drops what was
/// read; while the request waits in the queue, takes it out of the queue; once forwarded, the exchange runs on in its own task and keeps the
/// permit until the upstream is done.
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn copies its arguments first"
)]
pub fn handle(
    gate: Arc<Gate>,
    conn: Arc<Conn>,
    mut req: Request<Incoming>,
) -> impl Future<Output = Result<Response<GateBody>, Infallible>> + Send {
    // An `async` block rather than an `async fn`: the block uses its captures where they lie,
    // where an `async fn` first copies its arguments (the request is 248 bytes) into locals.
    async move {
        if let Some(why) = headers::host_problem(&req) {
            gate.unrouted.count(Unrouted::BadHost);
            let mut answer = answer::plain(StatusCode::BAD_REQUEST, "bad_host", why);
            // A client that sends this is not one to keep a connection open for.
            answer.headers_mut().insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
            return Ok(answer);
        }
        headers::host_from_target(&mut req);
        if headers::foreign_transfer_coding(&req) {
            gate.unrouted.count(Unrouted::TransferCodingNotSupported);
            let mut answer = answer::plain(
                StatusCode::NOT_IMPLEMENTED,
                "transfer_coding_not_supported",
                "the gate relays request bodies in the chunked transfer coding only; send the body without other transfer codings (a Content-Encoding is relayed as it is)\n",
            );
            // The rest of the body cannot be told from the next request.
            answer.headers_mut().insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
            return Ok(answer);
        }
        if has_lower_case(req.method()) {
            gate.unrouted.count(Unrouted::BadMethod);
            let answer = answer::plain(
                StatusCode::BAD_REQUEST,
                Unrouted::BadMethod.name(),
                "the method has lower-case letters: methods are case-sensitive and every standard one is upper case; send it in upper case (POST, not post)\n",
            );
            return Ok(linger(req, answer));
        }
        if req.method() == http::Method::CONNECT {
            // A tunnel to wherever the client names: a forward proxy's job, not this one's.
            gate.unrouted.count(Unrouted::ConnectNotSupported);
            return Ok(answer::plain(
                StatusCode::NOT_IMPLEMENTED,
                "connect_not_supported",
                "CONNECT is not supported: the gate is a reverse proxy and makes no tunnels\n",
            ));
        }
        if let Err(bad) = crate::path::normalise_request(&gate, &mut req) {
            tracing::debug!(path = req.uri().path(), "bad path");
            gate.unrouted.count(Unrouted::BadPath);
            let answer = answer::plain(StatusCode::BAD_REQUEST, "bad_path", bad.message());
            return Ok(linger(req, answer));
        }
        let routed = gate.with_state(|s| {
            let pool = s.route(&req)?.clone();
            // The bypass rules read the peer, never a header: a secret or the network.
            let bypass = s.bypass.allows(&req, conn.peer.ip());
            if let Some((name, _)) = &s.bypass.header {
                req.headers_mut().remove(name);
            }
            let client = s.client_address.client(req.headers(), conn.peer.ip());
            if s.client_address.is_on() {
                conn.reads_for(client);
                if s.client_address.lacks_header(req.headers(), conn.peer.ip()) {
                    gate.without_header
                        .count(conn.peer.ip(), s.client_address.header());
                }
            }
            let rules = BodyRules {
                timeout: s.client_body_timeout,
                max: s.client_max_body_size,
            };
            Some((pool, bypass, client, rules, s.client_body_buffer_size))
        });
        let Some((pool, bypass, client, rules, body_buffer)) = routed else {
            tracing::debug!(path = req.uri().path(), "no route");
            gate.unrouted.count(Unrouted::NoRoute);
            let answer = answer::plain(
                StatusCode::NOT_FOUND,
                "no_route",
                "no route for this request\n",
            );
            return Ok(linger(req, answer));
        };
        // A body that says it is too large is refused before anything else: nothing of it
        // is read, and it meets no rate and no queue (bypassed or not). One compare for
        // every request; a chunked body, whose lower bound is 0, is counted as it comes.
        if http_body::Body::size_hint(req.body()).lower() > rules.max {
            pool.stats.refuse(&pool.name, Outcome::BodyTooLarge);
            return Ok(linger(req, ClientFault::TooLarge.answer()));
        }
        // The body first, up to the bound, before any limit: a body that arrives slowly
        // does so while the request holds no slot and no place in the queue. A request
        // without one passes by (no await, no allocation). Boxed so that its future does
        // not grow every request's.
        let ahead = if body_buffer == 0 || http_body::Body::is_end_stream(req.body()) {
            None
        } else {
            match Box::pin(read_ahead::read(
                &mut req,
                body_buffer,
                rules,
                &pool.buffering,
            ))
            .await
            {
                Ok(ahead) => ahead,
                Err(fault) => {
                    if fault == ClientFault::TooLarge {
                        // The client sends on (the read gave it its `100 Continue`, if
                        // it asked for one): the rest is read away, then the connection
                        // closed.
                        discard(req.into_body());
                    }
                    return Ok(body_failed(&pool, fault));
                }
            }
        };
        let held = if bypass {
            pool.stats
                .bypassed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Held::Plain(pool.limit.limiter().acquire_bypass())
        } else {
            // A global per-client rate first, as a local one is (in `check_rates`); boxed
            // as the global pool's checks below.
            if let Some(k) = &pool.global_per_key
                && let Some(denied) =
                    Box::pin(global::check_per_key(&pool, k, &k.key_of(&req, client))).await
            {
                return Ok(linger_rest(req, ahead.as_deref(), denied));
            }
            if let Some(denied) = check_rates(&pool, &req, client) {
                return Ok(linger_rest(req, ahead.as_deref(), denied));
            }
            // A global pool asks the store; a local one never takes these branches. Their
            // futures are boxed so that they do not grow every request's future.
            if let Some(g) = &pool.global_rate
                && let Some(denied) = Box::pin(global::check_rate(&pool, g)).await
            {
                return Ok(linger_rest(req, ahead.as_deref(), denied));
            }
            let admitted = match pool.limit.global() {
                None => admit(&pool, &conn).await,
                Some(g) => Box::pin(global::admit_global(&pool, g, &conn)).await,
            };
            match admitted {
                Ok(held) => held,
                Err(answer) if gate.is_stopping() => {
                    let answer = answer::shutting_down(&answer);
                    return Ok(linger_rest(req, ahead.as_deref(), answer));
                }
                Err(answer) => return Ok(linger_rest(req, ahead.as_deref(), answer)),
            }
        };
        Ok(forward(&gate, pool, &conn, req, ahead, held, rules).await)
    }
}

/// Whether `method` has a lower-case letter, which the gate refuses (`400 bad_method`, as
/// nginx does). A method is case-sensitive (RFC 9110 §9.1), so `post` is an extension method
/// that a route's `POST` does not match; but the frameworks behind a gate (Werkzeug, Django)
/// upper-case it and serve it as a `POST`: forwarded, it went past the limits of the route
/// for `POST` (trial34, finding 2). The gate cannot know how its upstream reads the case, so
/// it neither forwards such a method nor rewrites it. Every registered method is upper case
/// (and so are the usual extensions, `PURGE`, WebDAV's), so no well-behaved client is
/// turned away.
fn has_lower_case(method: &http::Method) -> bool {
    method.as_str().bytes().any(|b| b.is_ascii_lowercase())
}

/// The longest the gate reads and discards the body of a request it answered without it.
const LINGER: Duration = Duration::from_secs(2);

/// `answer`, to a request turned away before its body was read: when the body is still
/// coming (and the client is not waiting for a `100 Continue` before it sends it), it is
/// read and thrown away, for [`LINGER`] at most (nginx's discarded body and lingering
/// close): read to its end in time, the connection carries on (a client whose small `POST`s
/// are refused keeps its connection); else hyper closes it then. Dropped unread, a body
/// still coming made hyper close at once, with the body's bytes unread in its socket: the
/// kernel answered the client's next bytes with a reset, and a client still sending lost
/// the answer, `Retry-After` and all, 1 time in 13–20 (review 26).
fn linger(req: Request<Incoming>, answer: Response<GateBody>) -> Response<GateBody> {
    use http_body::Body as _;
    let waits_for_continue = req
        .headers()
        .get(http::header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if req.body().is_end_stream() || waits_for_continue {
        return answer;
    }
    discard(req.into_body());
    answer
}

/// [`linger`], for a request whose body may have been read ahead ([`read_ahead`]): of one
/// read whole nothing is left to discard; one read in part has had its `100 Continue`, and
/// its client sends the rest.
fn linger_rest(
    req: Request<Incoming>,
    ahead: Option<&read_ahead::ReadAhead>,
    answer: Response<GateBody>,
) -> Response<GateBody> {
    match ahead {
        None => linger(req, answer),
        Some(ahead) if ahead.is_whole() => answer,
        Some(_) => {
            discard(req.into_body());
            answer
        }
    }
}

/// Reads `body` and throws it away, for [`LINGER`] at most.
pub(super) fn discard(mut body: Incoming) {
    use http_body_util::BodyExt as _;
    tokio::spawn(async move {
        let discard = async { while let Some(Ok(_)) = body.frame().await {} };
        let _ = tokio::time::timeout(LINGER, discard).await;
    });
}

/// The answer to a client that failed to send the body the gate was reading ahead: counted
/// on the pool as the same failure while forwarding is. Nothing reached the upstream and no
/// slot was taken; the client that left gets nothing, a stalled one its `408`, and one whose
/// body passed `client_max_body_size` its `413`.
fn body_failed(pool: &Pool, fault: ClientFault) -> Response<GateBody> {
    pool.stats.refuse(&pool.name, fault.outcome());
    fault.answer()
}

fn check_rates(
    pool: &Pool,
    req: &Request<Incoming>,
    client: std::net::IpAddr,
) -> Option<Response<GateBody>> {
    // Per client first, so a client over its own rate does not use up the pool's.
    if let Some(k) = &pool.per_key {
        let d = k.check(req, client);
        if d.is_denied() {
            return Some(rate_limited(pool, &pool.policy_names.1, &d, k.policy()));
        }
    }
    let g = pool.rate.as_ref()?;
    let d = check_global(g);
    d.is_denied()
        .then(|| rate_limited(pool, &pool.policy_names.0, &d, global_policy(g)))
}

pub(super) fn rate_limited(
    pool: &Pool,
    name: &str,
    decision: &Decision,
    policy: Option<RatePolicy>,
) -> Response<GateBody> {
    reject(pool, Outcome::RateLimited);
    answer::rate_limited(&RejectionMapping::default(), name, decision, policy)
}

/// Counts and logs a request the pool turned away.
pub(super) fn reject(pool: &Pool, outcome: Outcome) {
    pool.stats.refuse(&pool.name, outcome);
}

/// Waits for a slot, leaving the queue as soon as the client hangs up.
pub(super) async fn admit(pool: &Pool, conn: &Conn) -> Result<Held, Response<GateBody>> {
    let mut acquire = pin!(pool.admission());
    // The first poll takes the fast path: no clock read, no watcher, when a slot is free.
    let result = match poll_immediate(acquire.as_mut()).await {
        Some(Ok(permit)) => Ok(permit),
        Some(Err(rejected)) => {
            pool.limit.first_try_failed(Some(&rejected));
            Err(rejected)
        }
        None => {
            pool.limit.first_try_failed(None);
            let start = Instant::now();
            let r = tokio::select! {
                biased;
                r = acquire.as_mut() => Some(r),
                () = conn.closed() => None,
            };
            pool.stats.queue_wait.observe(start.elapsed());
            match r {
                // A client that hung up just as its turn came: the close may be in the
                // socket before the reactor has said so. Checked only after a wait (one
                // syscall). The slot goes back unused.
                Some(Ok(_)) if conn.is_closed_now() => {
                    pool.stats.count(Outcome::ClientGone);
                    return Err(client_gone(pool));
                }
                Some(r) => r,
                // Counted as the client's departure when `acquire` drops, still queued.
                None => return Err(client_gone(pool)),
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

/// The answer nobody reads to a client that left the queue.
fn client_gone(pool: &Pool) -> Response<GateBody> {
    tracing::debug!(pool = %pool.name, "client left the queue");
    answer::plain(
        StatusCode::SERVICE_UNAVAILABLE,
        Outcome::ClientGone.name(),
        "client gone\n",
    )
}

/// Sends the request upstream and relays the answer. The exchange holds the permit; see
/// [`Exchange::finish`] for what happens when the client leaves first. A handshake for a
/// tunnel takes the client's side of it along ([`tunnel`]).
fn forward(
    gate: &Gate,
    pool: Arc<Pool>,
    conn: &Conn,
    req: Request<Incoming>,
    ahead: Option<Box<read_ahead::ReadAhead>>,
    held: Held,
    rules: BodyRules,
) -> impl Future<Output = Response<GateBody>> + Send + use<> {
    let (mut parts, rest) = req.into_parts();
    // Read before `to_upstream` makes the head HTTP/1.1.
    let http_1_0 = parts.version == http::Version::HTTP_10 && parts.method != http::Method::HEAD;
    let mut added = headers::to_upstream(&mut parts, &pool.upstream, &conn.forwarding);
    if let Some(ahead) = &ahead {
        ahead.frame(&mut parts.headers);
    }
    let body = RequestBody { rest, ahead };
    let tunnel = if added.upgrade {
        tunnel::client_side(gate, &mut parts, &mut added)
    } else {
        None
    };
    conn.answers_for(&pool);
    let exchange = Exchange::start(pool, parts, body, added, held, rules, tunnel);
    async move {
        match exchange.finish().await {
            Ok(response) if http_1_0 => ends_with_the_connection(response),
            Ok(response) => response,
            Err(Failed::Upstream(outcome)) => answer::upstream_failed(outcome),
            Err(Failed::Client(fault)) => fault.answer(),
        }
    }
}

/// An answer to an HTTP/1.0 request whose body has no known length (the upstream's was
/// close-delimited or chunked) can only be ended by closing the connection, as HTTP/1.0
/// has no chunks: it says `Connection: close`, and is sent as HTTP/1.0 so that hyper does
/// not add the `keep-alive` a client asked for (its server adds it to an HTTP/1.1 head
/// whatever the framing, then closes). An answer with a length, or without a body, is left
/// as it is: the connection is kept as promised.
fn ends_with_the_connection(mut response: Response<GateBody>) -> Response<GateBody> {
    use http_body::Body as _;
    let status = response.status();
    let bodiless = status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED;
    if bodiless || response.body().size_hint().exact().is_some() {
        return response;
    }
    *response.version_mut() = http::Version::HTTP_10;
    response.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use crate::pool::Limit;
    use tokio::net::{TcpListener, TcpStream};

    /// A gate with one adaptive pool `api` of 2 permits (its upstream never called) and
    /// `max_queue` places in its queue.
    async fn gate(max_queue: usize) -> Arc<Gate> {
        let text = format!(
            "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9\"\nmax_queue = {max_queue}\n\
             queue_timeout = \"1h\"\npredictive = false\n[pools.adaptive]\ninitial = 2\nmin = 1\n\
             max = 10\n\n[[routes]]\npool = \"api\"\n"
        );
        Arc::new(
            Gate::new(config::parse(&text, "adaptive.toml").unwrap(), None)
                .await
                .unwrap(),
        )
    }

    /// A client connection on loopback, kept open.
    async fn conn() -> (Conn, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (accepted, peer) = listener.accept().await.unwrap();
        let (conn, _hyper_side) = Conn::new(accepted, peer).unwrap();
        (conn, client)
    }

    /// Both permits of `pool`, held as running requests hold them.
    async fn fill(pool: &Pool, conn: &Conn) -> Vec<Held> {
        let mut running = Vec::new();
        for _ in 0..2 {
            running.push(admit(pool, conn).await.expect("a free permit"));
        }
        running
    }

    fn counts(pool: &Pool) -> (u64, u64) {
        match &pool.limit {
            Limit::Adaptive(a, _) => a.held_back_counts(),
            other => panic!("not adaptive: {other:?}"),
        }
    }

    /// The adaptive limit learns the demand it holds back from the pool's admission: a request
    /// turned away at its first try (no queue) is held back *and* turned away — without a
    /// queue these are the only demand above the limit it can see (review 28: the limit
    /// stayed at `initial`, 29–53 % turned away under capacity); one that waits is held back
    /// only; one refused by a closed pool is neither (review 30: held back, it read as a
    /// caller that waited).
    #[tokio::test]
    async fn admission_tells_the_adaptive_limit_who_was_held_back_and_turned_away() {
        let (conn, _client) = conn().await;

        let no_queue = gate(0).await;
        let pool = no_queue.state().pool("api").unwrap().clone();
        let running = fill(&pool, &conn).await;
        assert_eq!(counts(&pool), (0, 0), "free permits hold nobody back");
        for turned in 1..=3 {
            assert!(admit(&pool, &conn).await.is_err(), "no queue: turned away");
            assert_eq!(counts(&pool), (turned, turned));
        }
        no_queue.set_open("api", false).unwrap();
        assert!(admit(&pool, &conn).await.is_err(), "closed");
        assert_eq!(
            counts(&pool),
            (3, 3),
            "a closed pool's refusal is no demand"
        );
        drop(running);

        let queued = gate(4).await;
        let pool = queued.state().pool("api").unwrap().clone();
        let mut running = fill(&pool, &conn).await;
        let mut waiting = Box::pin(admit(&pool, &conn));
        assert!(
            poll_immediate(waiting.as_mut()).await.is_none(),
            "no permit free"
        );
        assert_eq!(counts(&pool), (1, 0), "waiting: held back, not turned away");
        running
            .pop()
            .unwrap()
            .finish(sluicegate::adaptive::Outcome::Success);
        let started = waiting.await;
        assert!(started.is_ok(), "its turn came");
        assert_eq!(counts(&pool), (1, 0));
    }
}
