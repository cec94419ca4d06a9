//! End to end, findings of the 2026-12-04 trial of the gate's request path with unusual
//! upstreams and misbehaving clients (docs/reviews/2026-12-04-gate-trial/REPORT.md): each
//! test pins a defect found there.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use support::{Gate, RawUpstream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An upstream that answers every request with the bytes of the head it received (after
/// reading a `Content-Length` body), on a kept-alive connection.
async fn head_echo() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match s.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = buf[..end + 4].to_vec();
                    let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
                    let len: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap());
                    while buf.len() < end + 4 + len {
                        match s.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buf.drain(..end + 4 + len);
                    let mut answer =
                        format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", head.len())
                            .into_bytes();
                    answer.extend_from_slice(&head);
                    if s.write_all(&answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Reads one answer with a `Content-Length` from `s`: its head (lower case) and body bytes.
async fn read_answer(s: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buf.len() >= end + 4 + len {
                return (head, buf[end + 4..end + 4 + len].to_vec());
            }
        }
        let n = tokio::time::timeout(support::PATIENCE, s.read(&mut chunk))
            .await
            .expect("no answer")
            .unwrap();
        assert!(n > 0, "closed after: {}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The `X-Forwarded-For` lines in an echoed head, as bytes.
fn xff_lines(head: &[u8]) -> Vec<Vec<u8>> {
    head.split(|&b| b == b'\n')
        .filter_map(|l| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            let colon = l.iter().position(|&b| b == b':')?;
            l[..colon]
                .eq_ignore_ascii_case(b"x-forwarded-for")
                .then(|| l[colon + 1..].trim_ascii().to_vec())
        })
        .collect()
}

/// The request head the upstream got for a request with the header lines `sent`, sent on
/// both upstream paths: the gate's own (a `GET`, no body) and hyper's (a `POST` with a body),
/// each with its body.
async fn echoed_both_ways(gate: &Gate, sent: &[u8]) -> [(&'static [u8], Vec<u8>); 2] {
    let mut echoed = [(&b""[..], Vec::new()), (&b"abc"[..], Vec::new())];
    for (body, got) in &mut echoed {
        let mut s = TcpStream::connect(gate.proxy).await.unwrap();
        let mut req = if body.is_empty() {
            b"GET /x HTTP/1.1\r\nhost: gate.test\r\n".to_vec()
        } else {
            b"POST /x HTTP/1.1\r\nhost: gate.test\r\ncontent-length: 3\r\n".to_vec()
        };
        req.extend_from_slice(sent);
        req.extend_from_slice(b"\r\n");
        req.extend_from_slice(body);
        s.write_all(&req).await.unwrap();
        let (head, echo) = read_answer(&mut s).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        *got = echo;
    }
    echoed
}

/// Defect pinned: a client's `X-Forwarded-For` that was not visible ASCII (one byte of
/// obs-text, which HTTP allows in a value and hyper takes) made the gate leave the header as
/// the client sent it, without the client's address: the upstream's last entry, the one a
/// server that trusts one proxy reads, was the client's own choice. And of two
/// `X-Forwarded-For` lines, the second was dropped. nginx (`$proxy_add_x_forwarded_for`)
/// appends the address to whatever came; HAProxy adds a line of its own. Now every line the
/// client sent reaches the upstream, in order, and the client's address ends the list.
#[tokio::test]
async fn x_forwarded_for_always_ends_with_the_clients_address() {
    let gate = Gate::in_front_of(head_echo().await, "1").await;
    let cases: [(&[u8], &[u8]); 3] = [
        (
            b"x-forwarded-for: 6.6.6.6, \xff\r\n",
            b"6.6.6.6, \xff, 127.0.0.1",
        ),
        (
            b"x-forwarded-for: 1.1.1.1\r\nx-forwarded-for: 2.2.2.2\r\n",
            b"1.1.1.1, 2.2.2.2, 127.0.0.1",
        ),
        (b"x-forwarded-for: 1.1.1.1\r\n", b"1.1.1.1, 127.0.0.1"),
    ];
    for (sent, expected) in cases {
        for (body, echoed) in echoed_both_ways(&gate, sent).await {
            assert_eq!(
                xff_lines(&echoed),
                vec![expected.to_vec()],
                "sent {:?} (body {body:?}), upstream got {:?}",
                String::from_utf8_lossy(sent),
                String::from_utf8_lossy(&echoed)
            );
        }
    }
}

/// trial122: a client's `X_Forwarded_For` (or `X-Forwarded_For`: `X-Forwarded-For` with a
/// `_` for a `-`) went upstream beside the gate's own `X-Forwarded-For`. A server that maps
/// header names to CGI's (`HTTP_X_FORWARDED_FOR`: Puma before 6.4.3, CVE-2024-45614; a WSGI
/// server that does not drop such names) reads the two as one, and may take the client's
/// value for the gate's. nginx drops every name with a `_` (`underscores_in_headers off`).
/// Now the gate drops such spellings of the header it writes; every other header, `_` or
/// not, goes through.
#[tokio::test]
async fn a_forwarding_header_spelt_with_an_underscore_never_reaches_the_upstream() {
    let gate = Gate::in_front_of(head_echo().await, "1").await;
    let sent: &[u8] = b"x_forwarded_for: 6.6.6.6\r\nX-Forwarded_For: 6.6.6.7\r\nx_api_key: k\r\n";
    for (body, echoed) in echoed_both_ways(&gate, sent).await {
        let echoed = String::from_utf8_lossy(&echoed).to_ascii_lowercase();
        assert!(
            !echoed.contains("6.6.6."),
            "body {body:?}: the upstream got {echoed}"
        );
        assert!(echoed.contains("x_api_key: k"), "{echoed}");
        assert_eq!(xff_lines(echoed.as_bytes()), vec![b"127.0.0.1".to_vec()]);
    }
}

fn http_1_0_script(path: &str) -> (Vec<u8>, bool) {
    match path {
        "/length" => (
            b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nold".to_vec(),
            true,
        ),
        "/until-close" => (b"HTTP/1.0 200 OK\r\n\r\nold, to the end".to_vec(), true),
        _ => (
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
            false,
        ),
    }
}

/// Reads what the gate sends until it closes the connection or `marker` has come.
async fn read_until(s: &mut TcpStream, marker: &str) -> String {
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&out).contains(marker) {
        let n = tokio::time::timeout(support::PATIENCE, s.read(&mut chunk))
            .await
            .expect("no answer")
            .unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&out).to_ascii_lowercase()
}

/// Defect pinned: the answer of an HTTP/1.0 upstream to a request with a body (hyper's
/// client path) reached an HTTP/1.1 client with the upstream's `HTTP/1.0` status line, where
/// the gate's own path (no body) says `HTTP/1.1`. An intermediary sends its own version
/// (RFC 9110 §6.2), and an HTTP/1.1 client reads an `HTTP/1.0` answer without `keep-alive`
/// as the end of the connection (RFC 9112 §9.3), so every such answer cost the client its
/// connection. Now both paths answer `HTTP/1.1`, a length kept, no length chunked, and the
/// connection serves the next request.
#[tokio::test]
async fn an_http_1_0_upstreams_answer_reaches_an_http_1_1_client_as_http_1_1() {
    let up = RawUpstream::start(Arc::new(http_1_0_script)).await;
    let gate = Gate::in_front_of(up.addr, "1").await;
    for (path, framing, body) in [
        ("/length", "content-length: 3", "old"),
        ("/until-close", "transfer-encoding: chunked", "old"),
    ] {
        for with_body in [false, true] {
            let mut s = TcpStream::connect(gate.proxy).await.unwrap();
            for round in 0..2 {
                let req = if with_body {
                    format!("POST {path} HTTP/1.1\r\nhost: gate.test\r\ncontent-length: 1\r\n\r\nx")
                } else {
                    format!("GET {path} HTTP/1.1\r\nhost: gate.test\r\n\r\n")
                };
                s.write_all(req.as_bytes()).await.unwrap();
                let end = if framing.starts_with("transfer") {
                    "\r\n0\r\n\r\n"
                } else {
                    body
                };
                let out = read_until(&mut s, end).await;
                let what = format!("{path}, body {with_body}, round {round}: {out}");
                assert!(out.starts_with("http/1.1 200 ok\r\n"), "{what}");
                assert!(out.contains(framing), "{what}");
                assert!(out.contains(body), "{what}");
                assert!(!out.contains("connection: close"), "{what}");
            }
        }
    }
}

/// An upstream that answers every request at once, before reading its body, and then
/// neither reads nor closes the connection.
async fn answers_and_stops_reading() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                    .await;
                // Holds the connection, reading nothing more.
                std::future::pending::<()>().await;
                drop(s);
            });
        }
    });
    addr
}

/// Defect pinned: an upstream that answered a request before taking its whole body, and
/// then neither read the rest nor closed, held the gate's upstream connection, the client's
/// connection and the client's body forever: no timeout ran once the answer had ended (its
/// slot was free, `upstream_timeout` was over, and `client_body_timeout` waits on the
/// client, which was not the one stalling). nginx bounds it with `proxy_send_timeout`. Now
/// such a connection is closed once the upstream has taken nothing of the body for
/// `upstream_timeout`, and with it the client's.
#[tokio::test]
async fn an_upstream_that_answers_early_and_stops_reading_cannot_hold_the_connection() {
    let gate = Gate::in_front_of_with(
        answers_and_stops_reading().await,
        &[
            ("--upstream-timeout", "1s"),
            ("--admin-listen", "127.0.0.1:0"),
        ],
    )
    .await;
    const LEN: usize = 64 << 20;
    let s = TcpStream::connect(gate.proxy).await.unwrap();
    let (mut read, mut write) = s.into_split();
    write
        .write_all(
            format!("POST /up HTTP/1.1\r\nhost: gate.test\r\ncontent-length: {LEN}\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    // The client sends its body for as long as the gate takes it.
    tokio::spawn(async move {
        let chunk = vec![b'x'; 64 << 10];
        for _ in 0..LEN / chunk.len() {
            if write.write_all(&chunk).await.is_err() {
                return;
            }
        }
    });
    let mut out = Vec::new();
    let mut chunk = [0u8; 1024];
    let ended = tokio::time::timeout(support::PATIENCE, async {
        loop {
            match read.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    let out = String::from_utf8_lossy(&out).to_ascii_lowercase();
    assert!(out.starts_with("http/1.1 200 ok"), "{out}");
    assert!(
        ended.is_ok(),
        "the client's connection is still open after {:?}: {out}",
        support::PATIENCE
    );
    let pool = gate.pool("default").await;
    assert_eq!(pool["in_flight"], 0, "{pool}");
}

/// Defect pinned: an upstream's `429` counted as a drop for an adaptive limit, so one
/// client whose requests the upstream throttles (a per-client or per-key quota, what `429`
/// says: "the user has sent too many requests", RFC 6585 §4) pulled the pool's limit down
/// for every client: 20 connections of such requests took a `littles` limit from 41 to 1
/// in 2 s, and the others queued behind it. A `429` says nothing about the upstream's load
/// (a `503` does, RFC 9110 §15.6.4): now it is no sample, as an unreachable upstream.
#[tokio::test]
async fn an_upstreams_429_does_not_lower_an_adaptive_limit() {
    let up = RawUpstream::start(Arc::new(|path: &str| match path {
        "/quota" => (
            b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 5\r\n\r\nslow\n".to_vec(),
            false,
        ),
        _ => (
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n".to_vec(),
            false,
        ),
    }))
    .await;
    let text = format!(
        "listen = [\"127.0.0.1:0\"]\n\n[admin]\nlisten = \"127.0.0.1:0\"\n\n[[pools]]\nname = \"api\"\nupstream = \"http://{}\"\n[pools.adaptive]\nalgorithm = \"aimd\"\ninitial = 40\n\n[[routes]]\npool = \"api\"\n",
        up.addr
    );
    let path = support::write_config("upstream-429", &text);
    let gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
    for i in 0..30 {
        let r = support::get(gate.proxy, "/quota", &i.to_string()).await;
        assert_eq!(r.status, 429, "relayed as the upstream's answer");
    }
    let pool = gate.pool("api").await;
    assert!(
        pool["limit"].as_u64().unwrap() >= 40,
        "a client's quota lowered everyone's limit: {pool}"
    );
}

/// An upstream that answers every request `200` (declining any upgrade) on a kept-alive
/// connection, and counts the connections it has open.
async fn counting_upstream() -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let open = Arc::new(AtomicUsize::new(0));
    let count = open.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            count.fetch_add(1, SeqCst);
            let count = count.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        if s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                            .await
                            .is_err()
                        {
                            break;
                        }
                        continue;
                    }
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                count.fetch_sub(1, SeqCst);
            });
        }
    });
    (addr, open)
}

/// Defect pinned: each WebSocket handshake goes on a new upstream connection, and one the
/// upstream declined (an ordinary answer) went to the idle list, where hyper never found it
/// ready again: it sat there unused until the 90 s idle sweep. One client sending handshake
/// after handshake, never more than one at a time, made the gate hold an idle upstream
/// connection for each (300 in a row: 300 open to the upstream), up to 1024 per worker
/// thread — a load on upstreams that spend a thread or a process per connection, which the
/// concurrency limit does not see. Now a declined handshake's connection is closed after
/// its answer.
#[tokio::test]
async fn a_declined_upgrade_leaves_no_idle_upstream_connection_behind() {
    use std::sync::atomic::Ordering::SeqCst;
    let (up, open) = counting_upstream().await;
    let gate = Gate::in_front_of(up, "1").await;
    let mut s = TcpStream::connect(gate.proxy).await.unwrap();
    for _ in 0..20 {
        s.write_all(
            b"GET /chat HTTP/1.1\r\nhost: gate.test\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n",
        )
        .await
        .unwrap();
        let (head, body) = read_answer(&mut s).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert_eq!(body, b"ok");
    }
    support::eventually(
        "the declined handshakes' upstream connections closed",
        || {
            let open = open.load(SeqCst);
            async move { open <= 1 }
        },
    )
    .await;
}
