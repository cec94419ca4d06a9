//! End to end, the gate's upstream connections: kept alive and reused, per worker thread;
//! an upstream that closes its connections is reconnected to, nothing lost.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use support::{Gate, get};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the raw upstream treats a connection after answering on it.
#[derive(Clone, Copy)]
enum AfterAnswer {
    KeepOpen,
    /// Close without saying so (no `Connection: close`), as a server whose keep-alive
    /// timeout is shorter than the gate's does.
    CloseSilently,
    /// `Connection: close`, then close.
    SayCloseAndClose,
}

/// A raw HTTP/1.1 upstream answering `200 ok` to every request, counting the connections
/// it accepts.
async fn raw_upstream(after: AfterAnswer) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(answer_each(stream, after));
        }
    });
    (addr, accepted)
}

async fn answer_each(mut stream: TcpStream, after: AfterAnswer) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        // Requests without bodies: one ends at its blank line.
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        buf.drain(..end);
        let close = match after {
            AfterAnswer::SayCloseAndClose => "Connection: close\r\n",
            _ => "",
        };
        let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n{close}\r\nok");
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
        if !matches!(after, AfterAnswer::KeepOpen) {
            return;
        }
    }
}

async fn gate_for(upstream: SocketAddr, workers: &str) -> Gate {
    let url = format!("http://{upstream}");
    Gate::start(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &url,
        "--max-concurrency",
        "100",
        "--max-queue",
        "100",
        "--queue-timeout",
        "5s",
        "--workers",
        workers,
    ])
    .await
}

#[tokio::test]
async fn one_upstream_connection_serves_request_after_request() {
    let (up, accepted) = raw_upstream(AfterAnswer::KeepOpen).await;
    let gate = gate_for(up, "1").await;
    for i in 0..30 {
        let reply = get(gate.proxy, "/", &i.to_string()).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body, "ok");
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "one worker, one request at a time: one kept-alive upstream connection"
    );
}

#[tokio::test]
async fn each_worker_thread_keeps_its_own_connections() {
    let (up, accepted) = raw_upstream(AfterAnswer::KeepOpen).await;
    let gate = gate_for(up, "2").await;
    for i in 0..30 {
        assert_eq!(get(gate.proxy, "/", &i.to_string()).await.status, 200);
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 2, "one per worker");
}

#[tokio::test]
async fn an_upstream_that_closes_after_each_answer_is_connected_to_again() {
    for after in [AfterAnswer::CloseSilently, AfterAnswer::SayCloseAndClose] {
        let (up, accepted) = raw_upstream(after).await;
        let gate = gate_for(up, "1").await;
        for i in 0..20 {
            let reply = get(gate.proxy, "/", &i.to_string()).await;
            assert_eq!(reply.status, 200, "request {i}: {reply:?}");
            assert_eq!(reply.body, "ok");
        }
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            20,
            "a connection per request"
        );
    }
}
