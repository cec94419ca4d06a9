//! End to end, the sweep of idle upstream connections when the gate serves on a runtime of
//! its caller's with many threads (the library's `Started::serve` with `workers = 1`, as
//! `sluicegate demo` starts the gate inside its own multi-thread runtime): connections the
//! upstream has closed are dropped whichever thread pooled them.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::get;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Barrier, watch};

/// Client requests at once, each on an upstream connection of its own.
const CONNECTIONS: usize = 32;
/// The gate sweeps every 10 s; within this, every closed idle connection must be gone.
/// Four sweeps: the defect swept one runtime thread per sweep, at most 4 of the 8.
const WITHIN: Duration = Duration::from_secs(45);

/// An upstream that answers one request per connection once [`CONNECTIONS`] requests are
/// in (so that each has a connection of its own), then, once `release` turns true, closes
/// its side of every connection and counts those the gate then closes.
async fn upstream(release: watch::Receiver<bool>, closed: Arc<AtomicUsize>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let all_in = Arc::new(Barrier::new(CONNECTIONS));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (all_in, mut release, closed) = (all_in.clone(), release.clone(), closed.clone());
            tokio::spawn(async move {
                answer_then_close(stream, &all_in, &mut release).await;
                closed.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    addr
}

async fn answer_then_close(
    mut stream: TcpStream,
    all_in: &Barrier,
    release: &mut watch::Receiver<bool>,
) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    all_in.wait().await;
    let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    if stream.write_all(answer).await.is_err() {
        return;
    }
    let _ = release.wait_for(|r| *r).await;
    // The upstream closes its side of the idle connection (a keep-alive timeout): the
    // gate's socket is left in CLOSE_WAIT until the gate closes it, which this end then
    // reads as the end of the stream.
    let _ = stream.shutdown().await;
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            return;
        }
    }
}

/// Defect pinned: each runtime thread swept only the idle connections it had pooled
/// itself, and the gate ran one sweeper per worker thread of its own; serving on a
/// caller's multi-thread runtime, the sweeper swept the one thread it ran on at each tick,
/// and connections pooled on the others stayed in CLOSE_WAIT for as long as no request
/// came to take them.
#[test]
fn idle_connections_pooled_on_every_thread_of_a_foreign_runtime_are_swept() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (release, released) = watch::channel(false);
        let closed = Arc::new(AtomicUsize::new(0));
        let up = upstream(released, closed.clone()).await;
        let config = format!(
            "listen = [\"127.0.0.1:0\"]\nworkers = 1\n\n[[pools]]\nname = \"p\"\n\
             upstream = \"http://{up}\"\nmax_concurrency = 1000\n\n[[routes]]\npool = \"p\"\n"
        );
        let config = sluicegate_gate::config::parse(&config, "<test>").unwrap();
        let started = sluicegate_gate::server::Started::bind(config, None)
            .await
            .unwrap();
        let proxy = started.proxy_addrs()[0];
        let (stop, stopped) = watch::channel(false);
        let serving = tokio::spawn(started.serve(stopped));

        let requests: Vec<_> = (0..CONNECTIONS)
            .map(|i| tokio::spawn(async move { get(proxy, "/", &i.to_string()).await }))
            .collect();
        for r in requests {
            let reply = r.await.unwrap();
            assert_eq!((reply.status.as_u16(), reply.body.as_str()), (200, "ok"));
        }
        release.send(true).unwrap();
        let deadline = tokio::time::Instant::now() + WITHIN;
        while closed.load(Ordering::SeqCst) < CONNECTIONS {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} of {CONNECTIONS} idle connections the upstream closed are still open",
                CONNECTIONS - closed.load(Ordering::SeqCst)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        stop.send(true).unwrap();
        serving.await.unwrap();
    });
}
