//! Listening, serving and stopping: the proxy's accept loops on hyper's HTTP/1 server, the
//! admin listener, signals (SIGHUP reloads, SIGTERM/SIGINT drain and stop; the drain takes
//! no changes).
//!
//! # Threads
//!
//! With one worker (`workers = 1`) everything runs on the runtime that calls
//! [`Started::serve`] (the binary makes it single-threaded). With `N > 1`, `serve` starts N
//! single-threaded runtimes on threads of their own and the accept loops hand each new
//! connection to the next one in turn, as nginx spreads connections over worker processes:
//! a connection's requests, their upstream exchanges and the upstream connections they use
//! all stay on one thread, with no work stealing and no wake-ups across threads. The limits
//! are shared by every thread (the library's limiters are lock-free). The admin API, the
//! signals and the accept loops stay on the calling runtime.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::config::Config;
use crate::gate::Gate;
use crate::proxy::{Conn, SendTimeout, TurnWrites, handle, sweep_idle_upstreams};

/// Why the gate could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The config names something that cannot be set up (a secret file, a limiter).
    #[error("{0}")]
    Config(String),
    /// A listener could not be bound (exit 1, not a config error: the address may be in use).
    /// Said with what to do for the usual causes (the port in use, an address that is not
    /// this machine's, a privileged port).
    #[error("cannot listen on {addr}: {source}{}", bind_advice(.addr, .source))]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
}

/// The gate, started: its listeners bound, ready to serve.
#[derive(Debug)]
pub struct Started {
    /// The shared gate.
    pub gate: Arc<Gate>,
    proxy: Vec<TcpListener>,
    admin: Option<TcpListener>,
    http1: http1::Builder,
    workers: usize,
}

impl Started {
    /// Builds the gate for `config` and binds its listeners.
    ///
    /// # Errors
    ///
    /// [`StartError`]: a secret or token file that cannot be read, an address in use.
    pub async fn bind(config: Config, path: Option<PathBuf>) -> Result<Started, StartError> {
        // Read before binding, so that a bad token file is the error rather than a port.
        admin_token(&config).map_err(StartError::Config)?;
        // `header_read_timeout` and `max_header_bytes` are set per connection, from the
        // config in force when it is accepted (`Serving::connection`).
        let mut http1 = http1::Builder::new();
        // `half_close`: hyper does not read the client's socket while the answer is still
        // to come, where it otherwise reads it after every request head to catch an early
        // end of the stream. That read reserves a new 8 KiB read buffer per request (the
        // request still holds the old one): ~670 of the ~22k user-space instructions of a
        // proxied request (`scripts/callgrind-proxies`). Nothing leans on hyper's catch: a
        // request waiting for a slot is watched on the connection's duplicate handle
        // (`Conn::closed`), a forwarded one runs to the upstream's answer either way, whose
        // write then fails; and a client that only shut its sending side gets its answer
        // when its request is forwarded at once, as HAProxy gives it (queued, its end of
        // stream reads as gone: docs/gate.md).
        http1
            .timer(TokioTimer::new())
            .keep_alive(true)
            .half_close(true)
            .writev(false);
        let workers = config.workers.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let mut proxy = Vec::new();
        for l in &config.listen {
            proxy.push(listen(l.0)?);
        }
        let admin = match &config.admin.listen {
            Some(a) => Some(listen(*a.get_ref())?),
            None => None,
        };
        let gate = Arc::new(Gate::new(config, path).await.map_err(StartError::Config)?);
        Ok(Started {
            gate,
            proxy,
            admin,
            http1,
            workers,
        })
    }

    /// The proxy's bound addresses.
    pub fn proxy_addrs(&self) -> Vec<SocketAddr> {
        self.proxy
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// The admin API's bound address, when it has a listener.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.admin.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `stop` turns true, then stops accepting, lets queued and running
    /// requests finish within the grace period, and returns. From `stop` on, the gate takes
    /// no changes ([`Gate::start_draining`]). Tunnels (upgraded connections) run through the
    /// grace period too; those still open when it is over are closed
    /// ([`Gate::end_tunnels`]).
    pub async fn serve(self, mut stop: watch::Receiver<bool>) {
        let graceful = Arc::new(Connections::default());
        // The admin API stays up through the drain (an operator watches the requests finish)
        // and stops when `serve` returns.
        let (admin_done, mut admin_stop) = watch::channel(false);
        let mut admin_task = None;
        if let Some(listener) = self.admin {
            if let Ok(a) = listener.local_addr() {
                tracing::info!("admin listening on {a}");
            }
            let router = crate::admin::router(self.gate.clone());
            let gate = self.gate.clone();
            admin_task = Some(tokio::spawn(async move {
                serve_admin(listener, router, gate, &mut admin_stop).await;
            }));
        }
        for l in &self.proxy {
            if let Ok(a) = l.local_addr() {
                tracing::info!("proxy listening on {a}");
            }
        }
        let workers = if self.workers > 1 {
            match Workers::start(self.workers) {
                Ok(w) => Some(Arc::new(w)),
                Err(e) => {
                    tracing::error!(error = %e, "cannot start the worker threads: serving on one");
                    None
                }
            }
        } else {
            None
        };
        // One sweeper for the idle upstream connections of every thread: the worker threads',
        // or those of this runtime, however many threads it has.
        let _sweeper = AbortOnDrop(tokio::spawn(sweep_idle_upstreams()));
        let mut loops = Vec::new();
        let unwatched = Arc::default();
        for listener in self.proxy {
            loops.push(tokio::spawn(accept(
                listener,
                Serving {
                    gate: self.gate.clone(),
                    http1: self.http1.clone(),
                    unwatched: Arc::clone(&unwatched),
                },
                workers.clone(),
                graceful.clone(),
                stop.clone(),
            )));
        }
        let _ = stop.wait_for(|s| *s).await;
        // Before anything else: no reload or limit change lands in the drain.
        self.gate.start_draining();
        for l in loops {
            let _ = l.await;
        }
        let state = self.gate.state();
        let waiting: usize = state
            .pools
            .iter()
            .map(|p| {
                let c = p.counts();
                c.in_flight + c.queued + p.limit.limiter().snapshot().bypass_in_flight
            })
            .sum();
        let tunnels = || -> u64 { state.pools.iter().map(|p| p.stats.tunnels.open()).sum() };
        // The grace period of the config in force: a reload may have changed it.
        let grace = self.gate.state().grace_period;
        tracing::info!(requests = waiting, tunnels = tunnels(), grace = ?grace, "shutting down: no new connections; waiting for queued and running requests");
        let gate = self.gate.clone();
        let drained = async move {
            graceful.shutdown().await;
            gate.drained().await;
        };
        match tokio::time::timeout(grace, drained).await {
            Ok(()) => tracing::info!("shutdown complete"),
            Err(_) => {
                let running: usize = self
                    .gate
                    .every_pool()
                    .iter()
                    .map(|p| p.counts().in_flight)
                    .sum();
                // What still waits was never forwarded: a `503` tells its client that a
                // retry is safe, where a bare close (as for what is cut mid-exchange) does
                // not. A moment (1 s at most) for those answers to go out.
                let queued = self.gate.turn_away_queued();
                if queued > 0 {
                    let _ = tokio::time::timeout(Duration::from_secs(1), async {
                        self.gate.queues_emptied().await;
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    })
                    .await;
                }
                tracing::warn!(
                    running,
                    queued,
                    tunnels = tunnels(),
                    "grace period over: stopping; {running} requests running are cut, {queued} queued were turned away (503); closing open tunnels"
                );
            }
        }
        self.gate.end_tunnels();
        let _ = admin_done.send(true);
        if let Some(task) = admin_task {
            // Calls in progress finish; a client holding a connection open does not hold the
            // exit for long.
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
        // Dropping the last handle stops the worker threads (and what still runs on them).
        drop(workers);
    }
}

/// Open files the gate asks for: Linux's default ceiling per process (`fs.nr_open`).
const OPEN_FILES_WANTED: u64 = 1 << 20;
/// Below this many open files the gate says, at start, how few clients it can serve.
const OPEN_FILES_LOW: u64 = 4096;

/// Raises this process's soft limit on open files as far as its hard limit allows, as
/// HAProxy does: every client connection and every upstream connection is a file, and the
/// soft limit is often 1024 (systemd's default for services) where the hard limit allows
/// far more, which would leave a busy gate refusing connections at about 500 clients.
/// Logs what it did, and warns when the limit stays low.
pub fn raise_open_files_limit() {
    let before = rlimit::getrlimit(rlimit::Resource::NOFILE)
        .map(|(soft, _)| soft)
        .ok();
    let now = match rlimit::increase_nofile_limit(OPEN_FILES_WANTED) {
        Ok(now) => now,
        Err(e) => {
            tracing::warn!(error = %e, "cannot raise the limit on open files");
            // Not known either: nothing to say about how many clients it allows.
            let Some(before) = before else { return };
            before
        }
    };
    if let Some(before) = before
        && now > before
    {
        tracing::info!("limit on open files raised from {before} to {now}");
    }
    if now < OPEN_FILES_LOW {
        tracing::warn!(
            "at most {now} open files: each client connection and each upstream connection \
             takes one, so about {} clients at once; raise the hard limit (`ulimit -Hn`, \
             systemd's `LimitNOFILE=`) to serve more",
            now / 2
        );
    }
}

/// How many tasks a runtime of the gate runs between two looks at its sockets (tokio's
/// `event_interval`, 61 unless set).
///
/// A loaded worker always has tasks ready, so this sets how soon it picks up what has arrived
/// meanwhile: new requests, upstream answers. At 61 (about 0.3 ms of proxying) the load
/// generator's threads found their answers in thinner trickles and slept more often, and each
/// wake-up put one on the gate's core, where it preempted the gate: with one worker at 64
/// connections on 2 cores the gate was switched out 0.14-0.28 times per request, at 8
/// 0.05-0.15, and its p99 was lower in 11 of 13 interleaved repetitions (by up to 1.1 ms) at
/// the same throughput and CPU per request. It costs where the worker has more connections
/// than it needs to look at so often: at 256 connections 61 served ~2.5 % more requests at
/// ~2 % less CPU each (eight interleaved repetitions, each build in both slots) — still ahead
/// of nginx and HAProxy either way (BENCHMARKS.md, *The gate against nginx and HAProxy*).
/// 4, 6, 12, 16, 24 and 200 each had a higher p99 than 8 at 64 connections; 1 and 2 pay for
/// the extra `epoll_wait` calls.
pub const EVENT_INTERVAL: u32 = 8;

/// A single-threaded runtime as the gate's serving threads run (see [`EVENT_INTERVAL`]).
///
/// # Errors
///
/// The runtime's I/O driver or timer cannot be set up (out of file descriptors).
pub fn runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .event_interval(EVENT_INTERVAL)
        .build()
}

/// A task stopped when this is dropped (the sweeper when `serve` returns or is dropped, the
/// store's probe with the last clone of the store).
#[derive(Debug)]
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Single-threaded runtimes on threads of their own, each serving the connections handed
/// to it (see the module docs).
#[derive(Debug)]
struct Workers {
    handles: Vec<tokio::runtime::Handle>,
    next: AtomicUsize,
    /// Dropped with `Workers`: each thread's runtime then returns and shuts down.
    _stops: Vec<tokio::sync::oneshot::Sender<()>>,
}

impl Workers {
    fn start(n: usize) -> io::Result<Workers> {
        let mut handles = Vec::with_capacity(n);
        let mut stops = Vec::with_capacity(n);
        for i in 0..n {
            let runtime = runtime()?;
            handles.push(runtime.handle().clone());
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            stops.push(stop);
            std::thread::Builder::new()
                .name(format!("sluicegate-worker-{i}"))
                .spawn(move || {
                    runtime.block_on(async move {
                        let _ = stopped.await;
                    });
                })?;
        }
        Ok(Workers {
            handles,
            next: AtomicUsize::new(0),
            _stops: stops,
        })
    }

    /// The worker for the next connection, in turn.
    fn pick(&self) -> &tokio::runtime::Handle {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len();
        &self.handles[i]
    }
}

/// The client connections being served, counted from their accept, and told when the
/// drain starts: each then finishes the request it is on and closes (hyper's
/// `graceful_shutdown`). hyper-util's `GracefulShutdown` does the same for connections that
/// cannot be upgraded, and cannot watch one that can.
#[derive(Debug)]
struct Connections(watch::Sender<()>);

impl Default for Connections {
    fn default() -> Self {
        Connections(watch::Sender::new(()))
    }
}

impl Connections {
    /// Counts a connection until the returned watch is dropped.
    fn watcher(&self) -> watch::Receiver<()> {
        self.0.subscribe()
    }

    /// The connections counted now.
    fn open(&self) -> usize {
        self.0.receiver_count()
    }

    /// Tells every connection to finish, and resolves once every one has (or has been
    /// upgraded: a tunnel runs on without it).
    async fn shutdown(&self) {
        self.0.send_replace(());
        self.0.closed().await;
    }
}

/// What serving a client connection needs.
#[derive(Clone)]
struct Serving {
    gate: Arc<Gate>,
    http1: http1::Builder,
    /// Accepted connections closed because they could not be watched, told at a pace.
    unwatched: Arc<Mutex<PacedFailures>>,
}

impl Serving {
    /// Serves one accepted connection until it closes (or is upgraded), on the current
    /// runtime; once `draining` changes, it finishes the request it is on and closes.
    async fn connection(
        self,
        stream: TcpStream,
        peer: SocketAddr,
        mut draining: watch::Receiver<()>,
    ) {
        let _ = stream.set_nodelay(true);
        let (conn, io) = match Conn::new(stream, peer) {
            Ok(c) => c,
            Err(e) => {
                unwatched(&self.unwatched, peer, &e);
                return;
            }
        };
        let io = TurnWrites::new(io, conn.duplicate());
        let conn = Arc::new(conn);
        // The config in force when the connection is accepted: reloads reach new connections.
        let settings = self.gate.with_state(|s| s.conn);
        let mut http1 = self.http1;
        http1
            .header_read_timeout(settings.header_read_timeout)
            .max_buf_size(settings.max_header_bytes);
        let gate = self.gate;
        let watched = conn.clone();
        let service = service_fn(move |req| handle(gate.clone(), conn.clone(), req));
        let io = TokioIo::new(SendTimeout::new(io, settings.send_timeout));
        let mut connection = std::pin::pin!(http1.serve_connection(io, service).with_upgrades());
        let served = tokio::select! {
            // The connection first, and no random pick: this runs on every wake-up of every
            // connection, where an unbiased select would draw a random number each time.
            biased;
            r = connection.as_mut() => r,
            // `Err`: the server is gone; the same.
            _ = draining.changed() => {
                connection.as_mut().graceful_shutdown();
                connection.await
            }
        };
        drop(draining);
        if let Err(e) = served {
            match crate::proxy::send_timed_out(&e) {
                Some(timeout) => watched.cut_at_send_timeout(timeout),
                None => tracing::debug!(%peer, error = %e, "client connection ended with an error"),
            }
        }
    }
}

/// The admin token from `[admin] token_file`, if one is configured.
///
/// # Errors
///
/// A token file that cannot be read or is empty.
pub fn admin_token(config: &Config) -> Result<Option<String>, String> {
    let Some(file) = &config.admin.token_file else {
        return Ok(None);
    };
    crate::config::read_secret(file.get_ref(), "the admin token_file").map(Some)
}

/// What `check` adds to the file's own rules: the files it names can be read, and every
/// pool can be built.
///
/// # Errors
///
/// Why the gate could not start with `config`.
pub fn check_ready(config: &Config) -> Result<Vec<String>, String> {
    admin_token(config)?;
    let mut warnings = crate::gate::check_pools(config)?;
    warnings.extend(unresolved_upstreams(config));
    Ok(warnings)
}

/// A warning for each pool whose upstream's host is a name that does not resolve (a typo,
/// a name only another machine knows): the gate would start and answer every request of the
/// pool `502`. Each name is asked once, for 5 s at most.
fn unresolved_upstreams(config: &Config) -> Vec<String> {
    use std::net::ToSocketAddrs;
    let mut asked: std::collections::HashMap<String, Option<String>> = Default::default();
    let mut warnings = Vec::new();
    for pool in &config.pools {
        let authority = &pool.upstream.authority;
        let host = authority.host();
        // An address needs no lookup.
        if host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok()
        {
            continue;
        }
        let target = format!("{host}:{}", authority.port_u16().unwrap_or(80));
        let why = asked.entry(target.clone()).or_insert_with(|| {
            let (tx, rx) = std::sync::mpsc::channel();
            let lookup = target.clone();
            std::thread::spawn(move || {
                let _ = tx.send(lookup.to_socket_addrs().map(|mut a| a.next().is_some()));
            });
            match rx.recv_timeout(std::time::Duration::from_secs(5)) {
                Ok(Ok(true)) => None,
                Ok(Ok(false)) => Some("no address".to_owned()),
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some("no answer within 5 s".to_owned()),
            }
        });
        if let Some(why) = why {
            warnings.push(format!(
                "pool `{}`: the upstream's host `{host}` does not resolve ({why}): the gate would answer its requests 502 upstream_unreachable; check the name",
                pool.name.get_ref()
            ));
        }
    }
    warnings
}

/// What to do about `error`, binding `addr`, when it is one of the usual causes: the words
/// `StartError::Bind` ends with (empty for others).
fn bind_advice(addr: &SocketAddr, error: &io::Error) -> String {
    let (ip, port) = (addr.ip(), addr.port());
    match error.kind() {
        io::ErrorKind::AddrInUse => format!(
            "; another process listens there (`ss -ltnp 'sport = :{port}'` names it; a gate \
             started earlier?): stop it, or listen on another port"
        ),
        io::ErrorKind::AddrNotAvailable => format!(
            "; {ip} is not an address of this machine (`ip -brief address` lists them): listen \
             on one of them, or on {} for all of them",
            if ip.is_ipv4() { "0.0.0.0" } else { "[::]" }
        ),
        io::ErrorKind::PermissionDenied if port < 1024 => format!(
            "; port {port} is below 1024, which only root or a process with \
             CAP_NET_BIND_SERVICE may listen on (`AmbientCapabilities=CAP_NET_BIND_SERVICE` \
             under systemd, `setcap cap_net_bind_service=+ep` on the binary): grant it, or \
             listen on a port above 1023"
        ),
        _ => String::new(),
    }
}

/// The longest queue of connections the kernel keeps for a listener until the gate accepts
/// them (the kernel caps it at `net.core.somaxconn`, 4096 by default since Linux 5.4).
/// `TcpListener::bind` asks for mio's fixed 128: a burst of new connections (every client
/// reconnecting to a restarted gate) overflowed it, and each connection over it waited for
/// its SYN to be sent again, 1 s and then 3 s later (trial34, finding 5). nginx asks for 511,
/// HAProxy for its `maxconn`; 4096 is as much as a default kernel gives.
const BACKLOG: u32 = 4096;

fn listen(addr: SocketAddr) -> Result<TcpListener, StartError> {
    let bind = || {
        let socket = match addr {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        // As `TcpListener::bind` (mio) does: a restarted gate binds its port again while
        // the connections of the last run are in TIME_WAIT.
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(BACKLOG)
    };
    bind().map_err(|source| StartError::Bind { addr, source })
}

async fn accept(
    listener: TcpListener,
    serving: Serving,
    workers: Option<Arc<Workers>>,
    graceful: Arc<Connections>,
    mut stop: watch::Receiver<bool>,
) {
    let mut failures = PacedFailures::default();
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = stop.wait_for(|s| *s) => return,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                back_off(&mut failures, &e, "accept").await;
                continue;
            }
        };
        works_again(&mut failures, "accept");
        // An IPv4 client of a dual-stack (`[::]`) listener arrives as `::ffff:a.b.c.d`: seen
        // as the IPv4 address it is, by `trusted_cidrs`, the per-client rates and the
        // `X-Forwarded-For` / `Forwarded` headers alike.
        let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
        // Counted from now: a shutdown waits for this connection even before it is served.
        let watcher = graceful.watcher();
        let serving = serving.clone();
        match &workers {
            None => {
                tokio::spawn(serving.connection(stream, peer, watcher));
            }
            Some(workers) => {
                // Moved to the worker's own reactor: deregistered here, registered there.
                let stream = match stream.into_std() {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(%peer, error = %e, "cannot hand the connection over; closing it");
                        continue;
                    }
                };
                workers.pick().spawn(async move {
                    match TcpStream::from_std(stream) {
                        Ok(stream) => serving.connection(stream, peer, watcher).await,
                        Err(e) => tracing::warn!(%peer, error = %e, "cannot serve the connection; closing it"),
                    }
                });
            }
        }
    }
}

/// Serves the admin API on `listener` until `stop` turns true, then lets the calls in
/// progress finish and returns once every admin connection has closed.
///
/// Each connection is held to the `header_read_timeout` and `max_header_bytes` in force
/// when it is accepted, as the proxy's are: a client that never finishes a head, or leaves
/// a connection idle between calls, is hung up on. (axum's `serve` gives hyper no timer,
/// so it had no header read timeout at all: such connections stayed open for ever, each
/// holding one of the open files the proxy's clients need, from anyone who can reach an
/// admin API listening beyond loopback with a token.)
///
/// At most `[admin] max_connections` (of the config in force) are open at once: one
/// accepted beyond is closed at once, unanswered, so that connections opened and held
/// cannot take every open file. A burst of those is logged twice, when it starts and when
/// a connection is taken again (with how many were closed), not once per connection.
async fn serve_admin(
    listener: TcpListener,
    router: axum::Router,
    gate: Arc<Gate>,
    stop: &mut watch::Receiver<bool>,
) {
    let connections = Connections::default();
    // Connections closed at the cap since the last one taken.
    let mut turned_away: u64 = 0;
    let mut failures = PacedFailures::default();
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = stop.wait_for(|s| *s) => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                back_off(&mut failures, &e, "admin accept").await;
                continue;
            }
        };
        works_again(&mut failures, "admin accept");
        let (settings, cap) = gate.with_state(|s| (s.conn, s.admin_max_connections));
        if connections.open() >= cap {
            if turned_away == 0 {
                tracing::warn!(
                    "admin connections at the cap of {cap} (`[admin] max_connections`): new ones are closed at once until some close"
                );
            }
            turned_away += 1;
            drop(stream);
            continue;
        }
        if turned_away > 0 {
            tracing::info!(
                "admin connections under the cap of {cap} again: {turned_away} closed at the cap"
            );
            turned_away = 0;
        }
        let mut http1 = http1::Builder::new();
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(settings.header_read_timeout)
            .max_buf_size(settings.max_header_bytes);
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let mut draining = connections.watcher();
        tokio::spawn(async move {
            let conn = http1.serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = draining.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(listener);
    connections.shutdown().await;
}

/// The signals the gate acts on, listened to from start to exit (a signal between two
/// waits is not lost): SIGHUP reloads, SIGTERM and SIGINT stop.
#[derive(Debug)]
pub struct Signals {
    #[cfg(unix)]
    unix: Option<UnixSignals>,
}

#[cfg(unix)]
#[derive(Debug)]
struct UnixSignals {
    hup: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening (on a tokio runtime). Without signal handlers (an error logged)
    /// only Ctrl-C is heard.
    pub fn listen() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let unix = match (
                signal(SignalKind::hangup()),
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) {
                (Ok(hup), Ok(term), Ok(int)) => Some(UnixSignals { hup, term, int }),
                _ => {
                    tracing::error!("cannot install signal handlers");
                    None
                }
            };
            Signals { unix }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// Waits for the next SIGTERM or SIGINT. A SIGHUP meanwhile reloads `gate`'s config;
    /// once the gate drains it is logged and ignored (the drain takes no changes). A stop
    /// that comes during a reload returns at once, the reload abandoned before it installs
    /// anything (a reload installs in one step, at its end).
    pub async fn stop(&mut self, gate: &Arc<Gate>) {
        #[cfg(unix)]
        if let Some(s) = &mut self.unix {
            return until_stop(gate, s).await;
        }
        let _ = gate;
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// What the signal loop hears: a reload (SIGHUP) or a stop (SIGTERM, SIGINT, named for
/// the log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Heard {
    Reload,
    Stop(&'static str),
}

/// Where the signal loop hears from: the process's signals, or a test's script.
trait Hear {
    /// The next signal; a stop first when both have come.
    async fn next(&mut self) -> Heard;
}

#[cfg(unix)]
impl Hear for UnixSignals {
    async fn next(&mut self) -> Heard {
        tokio::select! {
            biased;
            Some(()) = self.term.recv() => Heard::Stop("SIGTERM"),
            Some(()) = self.int.recv() => Heard::Stop("SIGINT"),
            Some(()) = self.hup.recv() => Heard::Reload,
            else => std::future::pending().await,
        }
    }
}

/// Reloads `gate` on each reload heard, until a stop is heard.
///
/// A reload runs beside the signals, not in their place: a stop heard while it runs (it may
/// wait for reloads that started before it, and a changed store's connection, a second
/// each) returns at once and drops it. That is safe: a reload installs the new config in
/// one step, under the config lock, after its last wait, and its install (a blocking task,
/// which dropping does not stop) looks under that lock whether the reload was dropped: one
/// dropped before then changes nothing. A reload heard while one runs follows it (however many came, one: it
/// reads the file as it is then).
async fn until_stop(gate: &Arc<Gate>, heard: &mut impl Hear) {
    let mut again = false;
    loop {
        if !std::mem::take(&mut again) {
            match heard.next().await {
                Heard::Stop(name) => {
                    tracing::info!("{name} received");
                    return;
                }
                Heard::Reload => {}
            }
        }
        if gate.is_draining() {
            tracing::warn!(
                "SIGHUP ignored: the gate is draining and takes no changes until it exits"
            );
            continue;
        }
        let reload = crate::reload(gate);
        let mut reload = std::pin::pin!(reload);
        loop {
            tokio::select! {
                biased;
                h = heard.next() => match h {
                    Heard::Stop(name) => {
                        tracing::info!(
                            "{name} received during a reload: the reload is abandoned, the config in force stays"
                        );
                        return;
                    }
                    Heard::Reload => again = true,
                },
                _ = &mut reload => break,
            }
        }
    }
}

/// How long an accept loop waits after a failed accept, so that a listener out of open files
/// (whose pending connection stays pending) does not spin.
const BACK_OFF: Duration = Duration::from_millis(50);

/// At most one log line about a listener's failing accepts (or about connections that could
/// not be watched) per this long.
const TELL_EVERY: Duration = Duration::from_secs(5);

/// Failures told at a bounded pace, such as those of one listener's `accept`: out of open
/// files, every retry fails ([`BACK_OFF`] apart, twenty a second) for as long as it lasts, and a line
/// for each drowned the log. The first failure is told at once; those within [`TELL_EVERY`]
/// of a line are counted, and the next line (a failure, or an accept that works again)
/// says how many there were.
#[derive(Debug, Default)]
struct PacedFailures {
    /// When a line was last written.
    told_at: Option<Instant>,
    /// Failures since then, not told yet.
    untold: u64,
}

impl PacedFailures {
    /// One more failure, at `now`: the number to tell of now (this one and those not
    /// told), or `None` while the last line is recent.
    fn failed(&mut self, now: Instant) -> Option<u64> {
        self.untold += 1;
        self.tell(now)
    }

    /// An accept that worked, at `now` (read only when failures are left untold): the
    /// number of failures to tell of, when it is time.
    fn accepted(&mut self, now: impl FnOnce() -> Instant) -> Option<u64> {
        if self.untold == 0 {
            return None;
        }
        self.tell(now())
    }

    fn tell(&mut self, now: Instant) -> Option<u64> {
        if self
            .told_at
            .is_some_and(|t| now.duration_since(t) < TELL_EVERY)
        {
            return None;
        }
        self.told_at = Some(now);
        Some(std::mem::take(&mut self.untold))
    }
}

/// After a failed accept: tells of it when it is time ([`PacedFailures`]), then waits
/// [`BACK_OFF`]. `what` names the listener's accept in the log (`accept`, `admin accept`).
async fn back_off(failures: &mut PacedFailures, e: &io::Error, what: &str) {
    if let Some(n) = failures.failed(Instant::now()) {
        let why = crate::open_files::hint(e);
        if n == 1 {
            tracing::warn!(
                error = %e,
                "{what} failed{why}; while it keeps failing, one line every {}s says how often",
                TELL_EVERY.as_secs()
            );
        } else {
            tracing::warn!(error = %e, "{what} failed {n} times since the last line{why}");
        }
    }
    tokio::time::sleep(BACK_OFF).await;
}

/// An accepted connection closed because it could not be watched (out of open files, its
/// socket cannot be duplicated): told at once, then once every [`TELL_EVERY`] at most with how
/// many since — past the open-file limit it happens to every connection, and a line each
/// drowned the log (review 26, finding 13).
fn unwatched(failures: &Mutex<PacedFailures>, peer: SocketAddr, e: &io::Error) {
    let told = failures
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .failed(Instant::now());
    let why = crate::open_files::hint(e);
    match told {
        Some(1) => tracing::warn!(
            %peer,
            error = %e,
            "cannot watch the connection; closing it{why}; while this goes on, one line every {}s says how often",
            TELL_EVERY.as_secs()
        ),
        Some(n) => tracing::warn!(
            error = %e,
            "closed {n} connections it could not watch since the last line{why}"
        ),
        None => {}
    }
}

/// After an accept that worked: tells of the failures not told yet, when it is time.
fn works_again(failures: &mut PacedFailures, what: &str) {
    if let Some(n) = failures.accepted(Instant::now) {
        tracing::info!("{what} works again: it failed {n} times since the last line");
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use std::sync::Mutex;

    /// The log lines written while the guard of [`capture`] lives, on this thread.
    #[derive(Clone, Default)]
    pub(crate) struct Captured(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        pub(crate) fn lines(&self) -> Vec<String> {
            String::from_utf8_lossy(&self.0.lock().unwrap())
                .lines()
                .map(str::to_owned)
                .collect()
        }
    }

    pub(crate) fn capture() -> (Captured, tracing::subscriber::DefaultGuard) {
        // tracing-core, with a single live dispatcher, takes it for the global one: a log
        // line's first use anywhere then asks only the default of the thread it runs on
        // (`has_just_one` in tracing-core's callsite.rs). Another test's thread with no
        // subscriber met a line first and cached "never" for it, and this capture lost it
        // (a reload's lines, written on a blocking thread, in 1 of 10 runs beside another
        // reload test). A second dispatcher kept alive makes it ask every live one.
        static SECOND: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
        SECOND.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        (captured, tracing::subscriber::set_default(subscriber))
    }

    /// A script of signals, for [`until_stop`]: what the test sends, then nothing more.
    struct Script(tokio::sync::mpsc::UnboundedReceiver<Heard>);

    impl Hear for Script {
        async fn next(&mut self) -> Heard {
            match self.0.recv().await {
                Some(h) => h,
                None => std::future::pending().await,
            }
        }
    }

    fn script() -> (tokio::sync::mpsc::UnboundedSender<Heard>, Script) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (tx, Script(rx))
    }

    /// A gate serving a file whose pool `api` has limit `max`, and the file.
    async fn gate_on_file(name: &str, max: usize) -> (Arc<Gate>, PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("sluicegate-signals-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.toml");
        write_limit(&path, max);
        let config = crate::config::read(&path).unwrap();
        let gate = Gate::new(config, Some(path.clone())).await.unwrap();
        (Arc::new(gate), path)
    }

    fn write_limit(path: &std::path::Path, max: usize) {
        let text = format!(
            "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9\"\n\
             max_concurrency = {max}\n\n[[routes]]\npool = \"api\"\n"
        );
        std::fs::write(path, text).unwrap();
    }

    fn limit(gate: &Gate) -> usize {
        gate.state().pool("api").unwrap().limit.limiter().max()
    }

    /// Defect pinned (gate22 item 1): a SIGHUP's reload ran inline in the signal loop, so a
    /// SIGTERM that came during it was heard only once the reload was over — after the
    /// reloads queued before it (`POST /reload` connecting a new store, a second each) and
    /// its own store connection. The stop acts at once; the reload it cuts short is
    /// abandoned before it installs anything, so the config in force stays whole.
    #[tokio::test(start_paused = true)]
    async fn a_stop_during_a_reload_acts_at_once_and_the_reload_installs_nothing() {
        let (gate, path) = gate_on_file("stop", 1).await;
        // A reload under way (another's turn): the SIGHUP's reload waits behind it.
        let turn = gate.hold_reloads().await;
        write_limit(&path, 2);
        let (tx, mut heard) = script();
        tx.send(Heard::Reload).unwrap();
        tx.send(Heard::Stop("SIGTERM")).unwrap();
        let stopped =
            tokio::time::timeout(Duration::from_secs(3600), until_stop(&gate, &mut heard)).await;
        assert!(
            stopped.is_ok(),
            "SIGTERM waited (an hour) for the reload under way"
        );
        drop(turn);
        tokio::task::yield_now().await;
        assert_eq!(limit(&gate), 1, "the abandoned reload installed the file");
        // What the drain then does: no later change gets in.
        gate.start_draining();
        assert!(matches!(
            gate.reload().await,
            Err(crate::gate::ChangeError::Draining)
        ));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// A SIGHUP during a reload is not lost: another reload follows (reading the file as it
    /// is then), and a stop after it is heard.
    #[tokio::test(start_paused = true)]
    async fn a_reload_asked_for_during_a_reload_follows_it() {
        let (gate, path) = gate_on_file("again", 1).await;
        let (log, _guard) = capture();
        let turn = gate.hold_reloads().await;
        let (tx, mut heard) = script();
        tx.send(Heard::Reload).unwrap();
        let looping = {
            let gate = gate.clone();
            tokio::spawn(async move { until_stop(&gate, &mut heard).await })
        };
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        tx.send(Heard::Reload).unwrap();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        write_limit(&path, 2);
        drop(turn);
        let reloaded = |log: &Captured| {
            log.lines()
                .iter()
                .filter(|l| l.contains("config reloaded"))
                .count()
        };
        tokio::time::timeout(Duration::from_secs(3600), async {
            while reloaded(&log) < 2 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("not two reloads: {:#?}", log.lines()));
        assert_eq!(limit(&gate), 2);
        tx.send(Heard::Stop("SIGINT")).unwrap();
        tokio::time::timeout(Duration::from_secs(3600), looping)
            .await
            .expect("SIGINT not heard")
            .unwrap();
        assert_eq!(reloaded(&log), 2, "{:#?}", log.lines());
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// The gate20 notes: out of open files, an accept loop wrote a warning every 50 ms (each
    /// retry), 1200 lines a minute for as long as it lasted, drowning the rest of the log.
    /// Now: the first failure at once, with what to do, then one line every 5 s at most
    /// saying how many failed meanwhile, and one when accepting works again.
    #[tokio::test(start_paused = true)]
    async fn a_minute_out_of_open_files_is_a_dozen_log_lines_not_a_thousand() {
        let (log, _guard) = capture();
        let mut failures = PacedFailures::default();
        let emfile = io::Error::from_raw_os_error(libc::EMFILE);
        let start = tokio::time::Instant::now();
        let mut tries = 0u64;
        while start.elapsed() < Duration::from_secs(60) {
            back_off(&mut failures, &emfile, "accept").await;
            tries += 1;
        }
        assert_eq!(tries, 1200);
        let lines = log.lines();
        assert!(
            (12..=13).contains(&lines.len()),
            "{} lines: {lines:#?}",
            lines.len()
        );
        assert!(lines[0].contains("out of open files"), "{}", lines[0]);
        // Every failure is in a line: the first alone, then how many since.
        let counted: u64 = 1 + lines[1..]
            .iter()
            .map(|l| {
                let n = l.split("failed ").nth(1).and_then(|r| r.split(' ').next());
                n.and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or_else(|| panic!("no count in {l}"))
            })
            .sum::<u64>();
        assert_eq!(counted + failures.untold, tries);
        // Accepting again tells of the rest once it is time, once.
        let before = lines.len();
        tokio::time::advance(TELL_EVERY).await;
        works_again(&mut failures, "accept");
        works_again(&mut failures, "accept");
        let lines = log.lines();
        assert_eq!(lines.len(), before + 1, "{lines:#?}");
        let last = lines.last().unwrap();
        assert!(last.contains("accept works again"), "{last}");
        assert_eq!(failures.untold, 0);
    }

    /// Review 26, finding 13: past the open-file limit every accepted connection that
    /// cannot be watched wrote its own warning, hundreds of lines in the terminal the demo's
    /// live view draws on. Now told at the accept failures' pace: 1000 such connections over
    /// ten seconds are three lines, and every one is counted.
    #[tokio::test(start_paused = true)]
    async fn connections_that_cannot_be_watched_are_told_at_a_pace() {
        let (log, _guard) = capture();
        let failures = Mutex::default();
        let emfile = io::Error::from_raw_os_error(libc::EMFILE);
        let peer = SocketAddr::from(([127, 0, 0, 1], 40000));
        for _ in 0..1000 {
            unwatched(&failures, peer, &emfile);
            tokio::time::advance(Duration::from_millis(10)).await;
        }
        let lines = log.lines();
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].contains("cannot watch the connection"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("out of open files"), "{}", lines[0]);
        assert!(lines[1].contains("closed 500 connections"), "{}", lines[1]);
        assert_eq!(failures.lock().unwrap().untold, 499, "1 + 500 + 499 = 1000");
    }

    /// A listener that fails and works in turn (out of files, one freed, taken, out again)
    /// is told of at the same pace, and a failure long after the last line is told at once.
    #[test]
    fn failures_between_accepts_are_told_at_the_same_pace() {
        let t0 = Instant::now();
        let mut f = PacedFailures::default();
        assert_eq!(
            f.accepted(|| unreachable!("no clock read without failures")),
            None
        );
        assert_eq!(f.failed(t0), Some(1));
        let mut told = 0;
        for i in 1..100u32 {
            let now = t0 + BACK_OFF * i;
            told += u32::from(f.failed(now).is_some());
            told += u32::from(f.accepted(|| now).is_some());
        }
        // 5 s in all: one more line at most.
        assert!(told <= 1, "{told}");
        let later = t0 + Duration::from_secs(3600);
        let untold = f.untold;
        assert_eq!(f.failed(later), Some(untold + 1));
        assert_eq!(f.untold, 0);
    }
}
