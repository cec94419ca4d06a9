//! End to end, the gate's upstream connections: kept alive and reused, per worker thread;
//! an upstream that closes its connections is reconnected to, nothing lost.

mod support;

use std::sync::Arc;

use support::{Gate, RawUpstream, get};

/// How the raw upstream treats a connection after answering `200 ok` on it.
#[derive(Clone, Copy)]
enum AfterAnswer {
    KeepOpen,
    /// Close without saying so (no `Connection: close`), as a server whose keep-alive
    /// timeout is shorter than the gate's does.
    CloseSilently,
    /// `Connection: close`, then close.
    SayCloseAndClose,
}

/// A raw HTTP/1.1 upstream answering `200 ok` to every request.
async fn raw_upstream(after: AfterAnswer) -> RawUpstream {
    RawUpstream::start(Arc::new(move |_path: &str| {
        let close = match after {
            AfterAnswer::SayCloseAndClose => "Connection: close\r\n",
            _ => "",
        };
        let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n{close}\r\nok");
        (answer.into_bytes(), !matches!(after, AfterAnswer::KeepOpen))
    }))
    .await
}

#[tokio::test]
async fn one_upstream_connection_serves_request_after_request() {
    let up = raw_upstream(AfterAnswer::KeepOpen).await;
    let gate = Gate::in_front_of(up.addr, "1").await;
    for i in 0..30 {
        let reply = get(gate.proxy, "/", &i.to_string()).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body, "ok");
    }
    assert_eq!(
        up.accepted(),
        1,
        "one worker, one request at a time: one kept-alive upstream connection"
    );
}

#[tokio::test]
async fn each_worker_thread_keeps_its_own_connections() {
    let up = raw_upstream(AfterAnswer::KeepOpen).await;
    let gate = Gate::in_front_of(up.addr, "2").await;
    for i in 0..30 {
        assert_eq!(get(gate.proxy, "/", &i.to_string()).await.status, 200);
    }
    assert_eq!(up.accepted(), 2, "one per worker");
}

#[tokio::test]
async fn an_upstream_that_closes_after_each_answer_is_connected_to_again() {
    for after in [AfterAnswer::CloseSilently, AfterAnswer::SayCloseAndClose] {
        let up = raw_upstream(after).await;
        let gate = Gate::in_front_of(up.addr, "1").await;
        for i in 0..20 {
            let reply = get(gate.proxy, "/", &i.to_string()).await;
            assert_eq!(reply.status, 200, "request {i}: {reply:?}");
            assert_eq!(reply.body, "ok");
        }
        assert_eq!(up.accepted(), 20, "a connection per request");
    }
}
