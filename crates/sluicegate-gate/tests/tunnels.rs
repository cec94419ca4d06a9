//! End to end, HTTP/1.1 upgrades (WebSocket) through the gate, served in this process: the
//! handshake goes to the upstream with its `Upgrade`, a `101` turns both connections into
//! one tunnel that carries bytes both ways until a side closes, and the tunnel holds its
//! pool's slot for its whole life without being a latency sample. An upstream that declines
//! the upgrade gives an ordinary answer.

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use sluicegate_gate::config::Config;
use sluicegate_gate::gate::Gate;
use sluicegate_gate::server::Started;
use support::eventually;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the upstream greets every tunnel with, before the client says anything.
const GREETING: &[u8] = b"hello\n";
/// Sent through a tunnel, makes the upstream close it.
const CLOSE: &[u8] = b"close";

/// A WebSocket-ish upstream on hyper: `/echo` accepts the upgrade, greets and echoes until
/// the client closes (or sends [`CLOSE`]); `/decline` answers `400` to the upgrade;
/// anything else is a plain `200 ok`. It keeps the heads it got and counts the tunnels it
/// saw end.
#[derive(Clone)]
struct Upstream {
    addr: SocketAddr,
    heads: Arc<Mutex<Vec<HeaderMap>>>,
    ended: Arc<std::sync::atomic::AtomicUsize>,
}

impl Upstream {
    async fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let up = Upstream {
            addr: listener.local_addr().unwrap(),
            heads: Arc::default(),
            ended: Arc::default(),
        };
        let this = up.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let this = this.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let this = this.clone();
                        async move { Ok::<_, std::convert::Infallible>(this.answer(req)) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .with_upgrades()
                        .await;
                });
            }
        });
        up
    }

    fn answer(&self, mut req: Request<Incoming>) -> Response<Full<Bytes>> {
        self.heads.lock().unwrap().push(req.headers().clone());
        match req.uri().path() {
            "/echo" => {
                let upgrade = hyper::upgrade::on(&mut req);
                let ended = self.ended.clone();
                tokio::spawn(async move {
                    if let Ok(io) = upgrade.await {
                        echo(TokioIo::new(io)).await;
                    }
                    ended.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                });
                Response::builder()
                    .status(StatusCode::SWITCHING_PROTOCOLS)
                    .header("connection", "Upgrade")
                    .header("upgrade", "websocket")
                    .header("sec-websocket-accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
                    .body(Full::default())
                    .unwrap()
            }
            "/decline" => Response::builder()
                .status(StatusCode::BAD_REQUEST)
                .body(Full::new(Bytes::from_static(b"no upgrade here")))
                .unwrap(),
            _ => Response::new(Full::new(Bytes::from_static(b"ok"))),
        }
    }

    fn ended(&self) -> usize {
        self.ended.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Greets, then echoes what comes until the client closes or sends [`CLOSE`].
async fn echo(mut io: TokioIo<Upgraded>) {
    if io.write_all(GREETING).await.is_err() {
        return;
    }
    let mut buf = [0u8; 1024];
    loop {
        match io.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) if &buf[..n] == CLOSE => return,
            Ok(n) => {
                if io.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A gate served in this process, stopped (without waiting) when dropped.
struct InProcess {
    proxy: SocketAddr,
    /// The admin API's address, when `top` gave it a `[admin]` table.
    admin: Option<SocketAddr>,
    gate: Arc<Gate>,
    stop: watch::Sender<bool>,
    serving: JoinHandle<()>,
}

impl InProcess {
    /// The gate with one pool `ws` in front of `up`, `pool` adding to its table and `top`
    /// to the file's top level. Under paused time, `top` must say `workers = 1`: the gate
    /// then runs on the test's runtime, whose clock is the paused one (on worker threads of
    /// its own, the test's clock would jump ahead while they work).
    async fn start(up: SocketAddr, top: &str, pool: &str) -> InProcess {
        let config = sluicegate_gate::config::parse(&config(up, top, pool), "<test>").unwrap();
        InProcess::serve(config, None).await
    }

    /// The gate of [`start`](Self::start), read from the file `path` that
    /// [`Gate::reload`] reads again.
    async fn start_from(up: SocketAddr, top: &str, pool: &str, path: &Path) -> InProcess {
        std::fs::write(path, config(up, top, pool)).unwrap();
        let config = sluicegate_gate::config::read(path).unwrap();
        InProcess::serve(config, Some(path.to_owned())).await
    }

    async fn serve(config: Config, path: Option<PathBuf>) -> InProcess {
        let started = Started::bind(config, path).await.unwrap();
        let proxy = started.proxy_addrs()[0];
        let admin = started.admin_addr();
        let gate = started.gate.clone();
        let (stop, stopped) = watch::channel(false);
        let serving = tokio::spawn(started.serve(stopped));
        InProcess {
            proxy,
            admin,
            gate,
            stop,
            serving,
        }
    }

    /// `(in_flight, queued)` of the pool.
    fn load(&self) -> (usize, usize) {
        let c = self.gate.state().pool("ws").unwrap().counts();
        (c.in_flight, c.queued)
    }

    /// The pool's tunnels: `(open, total)`.
    fn tunnels(&self) -> (u64, u64) {
        let state = self.gate.state();
        let t = &state.pool("ws").unwrap().stats.tunnels;
        (t.open(), t.total())
    }
}

/// The config of a gate with one pool `ws` in front of `up`, `pool` adding to its table
/// and `top` to the file's top level.
fn config(up: SocketAddr, top: &str, pool: &str) -> String {
    format!(
        "listen = [\"127.0.0.1:0\"]\n{top}\n[[pools]]\nname = \"ws\"\n\
         upstream = \"http://{up}\"\n{pool}\n[[routes]]\npool = \"ws\"\n"
    )
}

impl Drop for InProcess {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// A client connection that has sent a WebSocket handshake for `path`.
async fn handshake(gate: SocketAddr, path: &str) -> (Response<Incoming>, Client) {
    let stream = TcpStream::connect(gate).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn.with_upgrades());
    let req = Request::get(path)
        .header("host", "gate.test")
        .header("connection", "Upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .header("sec-websocket-version", "13")
        .body(Empty::<Bytes>::new())
        .unwrap();
    let resp = send.send_request(req).await.unwrap();
    (resp, Client { send })
}

/// The client's side of a connection after its handshake.
struct Client {
    send: hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
}

/// Opens a tunnel to `/echo` and reads the upstream's greeting through it.
async fn tunnel(gate: SocketAddr) -> TokioIo<Upgraded> {
    let (resp, _client) = handshake(gate, "/echo").await;
    assert_eq!(resp.status(), StatusCode::SWITCHING_PROTOCOLS);
    let mut io = TokioIo::new(hyper::upgrade::on(resp).await.unwrap());
    let mut greeting = [0u8; GREETING.len()];
    io.read_exact(&mut greeting).await.unwrap();
    assert_eq!(greeting, GREETING);
    io
}

/// Sends `msg` through the tunnel and reads the echo.
async fn round_trip(io: &mut TokioIo<Upgraded>, msg: &[u8]) {
    io.write_all(msg).await.unwrap();
    let mut back = vec![0u8; msg.len()];
    io.read_exact(&mut back).await.unwrap();
    assert_eq!(back, msg);
}

/// That the gate has closed the client's side of the tunnel (now: within a second of
/// paused time, which passes only once nothing else is left to run).
async fn assert_closed(io: &mut TokioIo<Upgraded>) {
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(1), io.read_to_end(&mut rest))
        .await
        .expect("the tunnel is still open");
    assert_eq!(read.unwrap_or(0), 0, "{rest:?}");
}

/// A plain `GET path` on a connection of its own: the status and the body.
async fn plain(gate: SocketAddr, path: &str) -> (u16, String) {
    let r = support::get(gate, path, "plain").await;
    (r.status.as_u16(), r.body)
}

/// The handshake reaches the upstream with `Upgrade: websocket` and `Connection: upgrade`
/// (besides the gate's own forwarding headers), the client gets the upstream's `101` with
/// its `Upgrade` and `Sec-WebSocket-Accept`, and bytes pass both ways, the upstream's first.
/// Counted as one tunnel open while it is, and given back when the client closes. Served
/// on two worker threads. Defect pinned: the handshake was answered `501
/// upgrade_not_supported`.
#[tokio::test]
async fn bytes_pass_both_ways_through_a_websocket_tunnel() {
    let up = Upstream::start().await;
    let gate = InProcess::start(up.addr, "workers = 2", "max_concurrency = 4").await;
    let (resp, _client) = handshake(gate.proxy, "/echo").await;
    assert_eq!(resp.status(), StatusCode::SWITCHING_PROTOCOLS);
    assert_eq!(resp.headers()["upgrade"], "websocket");
    assert!(
        resp.headers()["connection"]
            .to_str()
            .unwrap()
            .eq_ignore_ascii_case("upgrade")
    );
    assert_eq!(
        resp.headers()["sec-websocket-accept"],
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );
    let mut io = TokioIo::new(hyper::upgrade::on(resp).await.unwrap());
    let mut greeting = [0u8; GREETING.len()];
    io.read_exact(&mut greeting).await.unwrap();
    assert_eq!(greeting, GREETING);
    round_trip(&mut io, b"ping").await;
    round_trip(&mut io, &[7u8; 100_000]).await;

    let head = up.heads.lock().unwrap()[0].clone();
    assert_eq!(head["upgrade"], "websocket");
    assert!(
        head["connection"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("upgrade"),
        "{head:?}"
    );
    assert_eq!(head["sec-websocket-key"], "dGhlIHNhbXBsZSBub25jZQ==");
    assert!(head.contains_key("x-forwarded-for"), "{head:?}");
    assert_eq!(gate.tunnels(), (1, 1));
    assert_eq!(gate.load().0, 1, "the tunnel holds a slot");
    let metrics = sluicegate_gate::metrics::render(
        &gate.gate.state(),
        &[],
        &gate.gate.unrouted,
        &gate.gate.admin_refused,
    );
    assert!(
        metrics.contains("sluicegate_tunnels_open{pool=\"ws\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("sluicegate_tunnels_total{pool=\"ws\"} 1"),
        "{metrics}"
    );

    drop(io);
    eventually("the upstream sees the tunnel end", || async {
        up.ended() == 1
    })
    .await;
    eventually("the slot is given back", || async {
        gate.load().0 == 0 && gate.tunnels() == (0, 1)
    })
    .await;
}

/// A pool of one slot: while a tunnel is open, a plain request waits in the queue, and it
/// goes through once the client closes the tunnel (which gives the slot back).
#[tokio::test]
async fn a_tunnel_holds_its_slot_until_the_client_closes_it() {
    let up = Upstream::start().await;
    let gate = InProcess::start(
        up.addr,
        "",
        "max_concurrency = 1\nmax_queue = 5\nqueue_timeout = \"60s\"",
    )
    .await;
    let mut io = tunnel(gate.proxy).await;
    let proxy = gate.proxy;
    let waiting = tokio::spawn(async move { plain(proxy, "/plain").await });
    eventually("the plain request queues", || async {
        gate.load() == (1, 1)
    })
    .await;
    // The tunnel still works while the other waits.
    round_trip(&mut io, b"still here").await;
    assert!(!waiting.is_finished());
    drop(io);
    assert_eq!(waiting.await.unwrap(), (200, "ok".to_owned()));
    eventually("nothing held", || async { gate.load() == (0, 0) }).await;
}

/// With no queue, a request that comes while the only slot is a tunnel's is turned away at
/// once (`503 queue_full`), a second handshake too; after the tunnel ends both pass.
#[tokio::test]
async fn a_tunnel_takes_the_slot_a_queueless_pool_turns_others_away_for() {
    let up = Upstream::start().await;
    let gate = InProcess::start(up.addr, "", "max_concurrency = 1\nmax_queue = 0").await;
    let io = tunnel(gate.proxy).await;
    assert_eq!(plain(gate.proxy, "/plain").await.0, 503);
    let (second, _c) = handshake(gate.proxy, "/echo").await;
    assert_eq!(second.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(second.headers()["x-sluicegate-reason"], "queue_full");
    drop(io);
    eventually("the slot is free", || async { gate.load() == (0, 0) }).await;
    assert_eq!(plain(gate.proxy, "/plain").await.0, 200);
    drop(tunnel(gate.proxy).await);
}

/// The upstream closing the tunnel closes the client's side (after what it sent before),
/// and the slot comes back without the client doing anything.
#[tokio::test]
async fn an_upstream_that_closes_the_tunnel_closes_the_clients_side() {
    let up = Upstream::start().await;
    let gate = InProcess::start(up.addr, "", "max_concurrency = 1").await;
    let mut io = tunnel(gate.proxy).await;
    round_trip(&mut io, b"one").await;
    io.write_all(CLOSE).await.unwrap();
    let mut rest = Vec::new();
    let n = tokio::time::timeout(support::PATIENCE, io.read_to_end(&mut rest))
        .await
        .expect("the client's side stays open")
        .unwrap_or(0);
    assert_eq!(n, 0, "nothing after the close: {rest:?}");
    eventually("the slot is given back", || async {
        gate.load() == (0, 0) && gate.tunnels().0 == 0
    })
    .await;
    // The client still holds its side open: the gate did not wait for it.
    drop(io);
}

/// An upstream that answers an upgrade with anything but `101` gives an ordinary answer:
/// the client gets it whole, no tunnel is counted, the slot is given back, and the client's
/// connection takes its next request.
#[tokio::test]
async fn an_upgrade_the_upstream_declines_is_an_ordinary_answer() {
    let up = Upstream::start().await;
    let gate = InProcess::start(up.addr, "", "max_concurrency = 1").await;
    let (resp, mut client) = handshake(gate.proxy, "/decline").await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"no upgrade here");
    assert_eq!(gate.tunnels(), (0, 0));
    eventually("the slot is given back", || async { gate.load() == (0, 0) }).await;
    // The same connection, a plain request.
    client.send.ready().await.unwrap();
    let next = client
        .send
        .send_request(
            Request::get("/plain")
                .header("host", "gate.test")
                .body(Empty::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(next.status(), StatusCode::OK);
    assert_eq!(gate.tunnels(), (0, 0));
}

/// The tunnel's life is no latency sample: an adaptive pool (AIMD, which takes a success
/// slower than 5 s for a drop) keeps its limit after a tunnel open for two minutes, and the
/// latency histogram has the handshake's time only.
#[tokio::test(start_paused = true)]
async fn a_tunnel_is_no_latency_sample() {
    let up = Upstream::start().await;
    let gate = InProcess::start(
        up.addr,
        "workers = 1",
        "tunnel_idle_timeout = \"5m\"\n[pools.adaptive]\nalgorithm = \"aimd\"\ninitial = 30\nmin = 1\nmax = 40",
    )
    .await;
    let limit = || gate.gate.state().pool("ws").unwrap().limit.limiter().max();
    assert_eq!(limit(), 30);
    let mut io = tunnel(gate.proxy).await;
    tokio::time::advance(Duration::from_secs(120)).await;
    round_trip(&mut io, b"late").await;
    drop(io);
    eventually("the slot is given back", || async {
        gate.load() == (0, 0) && gate.tunnels() == (0, 1)
    })
    .await;
    assert_eq!(limit(), 30, "the tunnel was taken for a slow answer");
    let state = gate.gate.state();
    let (counts, sum) = state.pool("ws").unwrap().stats.upstream_latency.read();
    assert_eq!(*counts.last().unwrap(), 1, "one sample: the handshake's");
    assert!(sum < 1.0, "the handshake took {sum} s");
}

/// Closing the pool (the admin API; the kill switch closes it too) turns new handshakes
/// away, like any request, and leaves the open tunnel running, like a running request.
#[tokio::test]
async fn closing_the_pool_turns_new_tunnels_away_and_keeps_the_open_one() {
    let up = Upstream::start().await;
    let gate = InProcess::start(up.addr, "", "max_concurrency = 4").await;
    let mut io = tunnel(gate.proxy).await;
    gate.gate.set_open("ws", false).unwrap();
    let (refused, _c) = handshake(gate.proxy, "/echo").await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["x-sluicegate-reason"], "closed");
    round_trip(&mut io, b"still open").await;
    assert_eq!(gate.tunnels(), (1, 1));
}

/// The drain (SIGTERM) lets an open tunnel run through the grace period and ends it when
/// the period is over: the client's and the upstream's sides are closed, and the drain does
/// not wait longer.
#[tokio::test(start_paused = true)]
async fn the_drain_ends_open_tunnels_when_the_grace_period_is_over() {
    let up = Upstream::start().await;
    let top = "workers = 1\ngrace_period = \"30s\"";
    let mut gate = InProcess::start(up.addr, top, "max_concurrency = 4").await;
    let mut io = tunnel(gate.proxy).await;
    let start = tokio::time::Instant::now();
    gate.stop.send(true).unwrap();
    eventually("the drain starts", || async { gate.gate.is_draining() }).await;
    round_trip(&mut io, b"draining").await;
    tokio::time::advance(Duration::from_secs(29)).await;
    round_trip(&mut io, b"still draining").await;
    assert!(!gate.serving.is_finished());
    (&mut gate.serving).await.unwrap();
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(30) && took < Duration::from_secs(31),
        "{took:?}"
    );
    let mut rest = Vec::new();
    assert_eq!(io.read_to_end(&mut rest).await.unwrap_or(0), 0, "{rest:?}");
    eventually("the upstream's side is closed", || async {
        up.ended() == 1
    })
    .await;
}

/// A `101` that names no protocol (no `Upgrade`, RFC 9110 §15.2.2) is no tunnel: the client
/// gets `502 upstream_error`, the slot is given back, and no tunnel is counted.
#[tokio::test]
async fn a_101_without_upgrade_is_an_upstream_error() {
    let script = |_: &str| {
        (
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n\r\n".to_vec(),
            true,
        )
    };
    let up = support::RawUpstream::start(Arc::new(script)).await;
    let gate = InProcess::start(up.addr, "", "max_concurrency = 1").await;
    let (resp, _client) = handshake(gate.proxy, "/echo").await;
    assert_eq!(resp.status(), StatusCode::BAD_GATEWAY);
    assert_eq!(resp.headers()["x-sluicegate-reason"], "upstream_error");
    eventually("the slot is given back", || async { gate.load() == (0, 0) }).await;
    assert_eq!(gate.tunnels(), (0, 0));
}

/// Defect pinned: a tunnel had no idle timeout, so a peer that vanished without a word
/// (no FIN, no RST: a pulled cable, a suspended laptop) held its pool's slot until TCP
/// noticed, possibly hours. A tunnel through which no byte moves either way for
/// `tunnel_idle_timeout` is closed on both sides, and its slot goes to the request waiting
/// for it; bytes either way keep it open. The close is counted by reason in `/metrics` and
/// `/status`.
#[tokio::test(start_paused = true)]
async fn an_idle_tunnel_is_closed_after_tunnel_idle_timeout_and_its_slot_freed() {
    let up = Upstream::start().await;
    let gate = InProcess::start(
        up.addr,
        "workers = 1\n[admin]\nlisten = \"127.0.0.1:0\"",
        "max_concurrency = 1\nmax_queue = 5\nqueue_timeout = \"10m\"\npredictive = false\n\
         tunnel_idle_timeout = \"30s\"",
    )
    .await;
    let mut io = tunnel(gate.proxy).await;
    // Traffic keeps it open well past the timeout.
    for _ in 0..3 {
        tokio::time::advance(Duration::from_secs(20)).await;
        round_trip(&mut io, b"still here").await;
    }
    let proxy = gate.proxy;
    let waiting = tokio::spawn(async move { plain(proxy, "/plain").await });
    eventually("the plain request queues", || async {
        gate.load() == (1, 1)
    })
    .await;
    tokio::time::advance(Duration::from_secs(25)).await;
    assert_eq!(gate.tunnels(), (1, 1), "closed before its idle timeout");
    assert!(!waiting.is_finished());

    tokio::time::advance(Duration::from_secs(6)).await;
    assert_closed(&mut io).await;
    eventually("the upstream's side is closed", || async {
        up.ended() == 1
    })
    .await;
    assert_eq!(waiting.await.unwrap(), (200, "ok".to_owned()));
    eventually("nothing held", || async {
        gate.load() == (0, 0) && gate.tunnels() == (0, 1)
    })
    .await;

    let metrics = sluicegate_gate::metrics::render(
        &gate.gate.state(),
        &[],
        &gate.gate.unrouted,
        &gate.gate.admin_refused,
    );
    for (reason, n) in [("idle_timeout", 1), ("client_closed", 0)] {
        let line =
            format!("sluicegate_tunnels_closed_total{{pool=\"ws\",reason=\"{reason}\"}} {n}");
        assert!(metrics.contains(&line), "{line}\n{metrics}");
    }
    let admin = gate.admin.unwrap();
    let req = Request::get("/status")
        .header("host", admin.to_string())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let status = support::request(admin, req).await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.body);
    let status: serde_json::Value = serde_json::from_str(&status.body).unwrap();
    let tunnels = &status["pools"]["ws"]["tunnels"];
    assert_eq!(tunnels["open"], 0, "{tunnels}");
    assert_eq!(tunnels["closed"]["idle_timeout"], 1, "{tunnels}");
    assert_eq!(tunnels["closed"]["upstream_closed"], 0, "{tunnels}");
}

/// A reload gives tunnels opened after it the file's new `tunnel_idle_timeout`, as it gives
/// new connections the new `send_timeout`; a tunnel already open keeps the one it opened
/// with.
#[tokio::test(start_paused = true)]
async fn a_reload_gives_new_tunnels_the_new_idle_timeout() {
    let dir = std::env::temp_dir().join(format!("sluicegate-tunnels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gate.toml");
    let up = Upstream::start().await;
    let pool = |idle: &str| format!("max_concurrency = 4\ntunnel_idle_timeout = \"{idle}\"");
    let gate = InProcess::start_from(up.addr, "workers = 1", &pool("10m"), &path).await;
    let mut before = tunnel(gate.proxy).await;
    std::fs::write(&path, config(up.addr, "workers = 1", &pool("30s"))).unwrap();
    assert!(gate.gate.reload().await.unwrap().is_empty());
    let mut after = tunnel(gate.proxy).await;
    // Both idle since they opened.
    tokio::time::advance(Duration::from_secs(31)).await;
    assert_closed(&mut after).await;
    round_trip(&mut before, b"opened before the reload").await;
    eventually("one tunnel left", || async { gate.tunnels() == (1, 2) }).await;
    std::fs::remove_dir_all(&dir).unwrap();
}
