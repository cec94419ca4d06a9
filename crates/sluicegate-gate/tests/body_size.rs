//! A bound on a request body's size (`client_max_body_size`; trial122, item 9: the gate took
//! `Content-Length: 10^18` and waited for it, where nginx answers `413` at once). A length
//! past it is `413` before anything is read or forwarded and before any slot; a chunked
//! body is cut where it passes it, `413` when nothing was forwarded yet, else the upstream
//! connection is closed on a request broken off. Real sockets both sides; each piece is
//! sent when the test says, never timed.

mod support;

use std::convert::Infallible;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use support::{
    Echo, Gate, answer_body, counter, eventually, in_flight, one_slot_gate as gate, raw,
    read_until, rewrite,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads what is left of `s` until the gate closes it (or resets it: what came before is
/// what the client got); what came.
async fn read_to_the_close(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(support::PATIENCE, async {
        while let Ok(n @ 1..) = s.read(&mut buf).await {
            got.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("the gate kept the connection open");
    String::from_utf8_lossy(&got).into_owned()
}

/// A chunk of `n` bytes of `x`, in the chunked coding.
fn chunk(n: usize) -> Vec<u8> {
    let mut c = format!("{n:x}\r\n").into_bytes();
    c.extend(std::iter::repeat_n(b'x', n));
    c.extend_from_slice(b"\r\n");
    c
}

/// The head of a chunked `POST` as `id`.
fn chunked_head(id: &str) -> Vec<u8> {
    format!("POST / HTTP/1.1\r\nhost: x\r\nx-id: {id}\r\ntransfer-encoding: chunked\r\n\r\n")
        .into_bytes()
}

/// Asserts that `answer` is the gate's `413`, which closes the connection.
fn is_413(answer: &str) {
    assert!(
        answer.starts_with("HTTP/1.1 413 Payload Too Large"),
        "{answer}"
    );
    assert!(
        answer.contains("x-sluicegate-reason: body_too_large"),
        "{answer}"
    );
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(answer.contains("client_max_body_size"), "{answer}");
}

/// A `Content-Length` past the bound is `413` at once, before the body is read and before
/// the request asks for a slot: with the pool's one slot held and no queue, it is not the
/// pool's `503`; the upstream never sees it, the limiter never counts it, and the
/// connection is closed after. trial122's request (`10^18` announced, 5 bytes sent) and
/// one that waits for `100 Continue` (which it never gets) alike.
#[tokio::test]
async fn a_content_length_past_the_bound_is_413_before_any_slot() {
    let up = Echo::start().await;
    let (gate, _config) = gate(
        up.addr,
        "too-long",
        "client_max_body_size = 1000\nclient_body_buffer_size = 0",
    )
    .await;
    // The pool's one slot, held while this body comes (nothing is read ahead).
    let mut holder = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: holder\r\ncontent-length: 10\r\n\r\nfive.",
    )
    .await;
    eventually("the holder forwarded", || async { up.ids() == ["holder"] }).await;

    let mut huge = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: huge\r\ncontent-length: 1000000000000000000\r\n\r\nhello",
    )
    .await;
    let answer = read_until(&mut huge, "client_max_body_size").await;
    is_413(&answer);
    read_to_the_close(&mut huge).await;

    let mut waits = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: waits\r\ncontent-length: 1001\r\nexpect: 100-continue\r\n\r\n",
    )
    .await;
    let answer = read_to_the_close(&mut waits).await;
    is_413(&answer);

    assert_eq!(counter(&gate, "body_too_large").await, 2);
    assert_eq!(counter(&gate, "admitted").await, 1, "only the holder's");
    assert_eq!(counter(&gate, "queue_full").await, 0);
    assert_eq!(up.ids(), ["holder"], "the upstream saw neither");
    let metrics = gate.admin_call("GET", "/metrics", None, "").await.body;
    assert!(
        metrics.contains("sluicegate_requests_total{pool=\"api\",outcome=\"body_too_large\"} 2"),
        "{metrics}"
    );

    holder.write_all(b"five.").await.unwrap();
    assert_eq!(
        answer_body(&mut holder).await,
        "id=holder cl=10 te=- expect=- len=10"
    );
}

/// A body of exactly the bound passes, whatever its framing and whether it is read ahead
/// (`65536`, the default), in part (`512`) or not at all (`0`): a `Content-Length` of 1000,
/// and chunks adding up to 1000.
#[tokio::test]
async fn a_body_of_exactly_the_bound_passes() {
    let up = Echo::start().await;
    for buffer in [65536, 512, 0] {
        let extra = format!("client_max_body_size = 1000\nclient_body_buffer_size = {buffer}");
        let (gate, _config) = gate(up.addr, "at-the-bound", &extra).await;
        let mut head =
            b"POST / HTTP/1.1\r\nhost: x\r\nx-id: cl\r\ncontent-length: 1000\r\n\r\n".to_vec();
        head.extend([b'x'; 1000]);
        let mut s = raw(gate.proxy, &head).await;
        assert_eq!(
            answer_body(&mut s).await,
            "id=cl cl=1000 te=- expect=- len=1000",
            "{extra}"
        );
        let mut chunked = chunked_head("te");
        chunked.extend(chunk(600));
        chunked.extend(chunk(400));
        chunked.extend_from_slice(b"0\r\n\r\n");
        let mut s = raw(gate.proxy, &chunked).await;
        let said = answer_body(&mut s).await;
        assert!(said.ends_with(" expect=- len=1000"), "{extra}: {said}");
        assert_eq!(counter(&gate, "body_too_large").await, 0, "{extra}");
        assert_eq!(counter(&gate, "forwarded").await, 2, "{extra}");
    }
}

/// A chunked body that passes the bound while it is read ahead: `413`, nothing forwarded,
/// no slot taken, and the connection closed after.
#[tokio::test]
async fn a_chunked_body_past_the_bound_while_read_ahead_is_413_with_nothing_forwarded() {
    let up = Echo::start().await;
    let (gate, _config) = gate(up.addr, "chunked-ahead", "client_max_body_size = 1000").await;
    let mut s = raw(gate.proxy, &chunked_head("a")).await;
    s.write_all(&chunk(600)).await.unwrap();
    s.write_all(&chunk(600)).await.unwrap();
    let answer = read_to_the_close(&mut s).await;
    is_413(&answer);
    assert_eq!(counter(&gate, "body_too_large").await, 1);
    assert_eq!(counter(&gate, "admitted").await, 0);
    assert!(up.ids().is_empty(), "forwarded: {:?}", up.ids());
}

/// A chunked body that passes the bound while it is streamed to the upstream (past
/// `client_body_buffer_size`, or with nothing read ahead): the upstream connection is closed
/// on a request broken off (the upstream's read of the body fails: never a short body passed
/// off as whole), the client gets `413` and its connection is closed, the slot is freed,
/// and the pool counts it as the client's doing, not the upstream's.
#[tokio::test]
async fn a_chunked_body_past_the_bound_while_streamed_is_cut_on_both_sides() {
    let up = Echo::start().await;
    for buffer in [0, 512] {
        let extra = format!("client_max_body_size = 1000\nclient_body_buffer_size = {buffer}");
        let (gate, _config) = gate(up.addr, "chunked-streamed", &extra).await;
        let id = format!("a{buffer}");
        let mut s = raw(gate.proxy, &chunked_head(&id)).await;
        s.write_all(&chunk(600)).await.unwrap();
        eventually("forwarded", || async { up.ids().contains(&id) }).await;
        s.write_all(&chunk(600)).await.unwrap();
        let answer = read_to_the_close(&mut s).await;
        is_413(&answer);
        eventually("the upstream saw the body end", || async {
            up.ends()
                .iter()
                .any(|e| e.starts_with(&format!("id={id} ")))
        })
        .await;
        let end = up
            .ends()
            .into_iter()
            .find(|e| e.starts_with(&format!("id={id} ")));
        let end = end.unwrap();
        assert!(end.contains("len=broken"), "{extra}: {end}");
        assert_eq!(counter(&gate, "body_too_large").await, 1, "{extra}");
        assert_eq!(counter(&gate, "upstream_error").await, 0, "{extra}");
        eventually("the slot back", || async { in_flight(&gate).await == 0 }).await;
        let next = support::get(gate.proxy, "/", "next").await;
        assert_eq!(next.status, 200, "{extra}: {next:?}");
    }
}

/// An upstream that answers at once and echoes the body as it comes: its answer is under
/// way when the body passes the bound. The answer is cut (no last chunk) and the client's
/// connection closed; counted `forwarded` at its head and `body_too_large`, not as a body
/// the upstream broke off.
#[tokio::test]
async fn an_answer_under_way_when_the_body_passes_the_bound_is_cut() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let echo = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    Ok::<_, Infallible>(hyper::Response::new(req.into_body()))
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), echo)
                    .await;
            });
        }
    });
    let (gate, _config) = gate(
        up,
        "answer-under-way",
        "client_max_body_size = 1000\nclient_body_buffer_size = 0",
    )
    .await;
    let mut s = raw(gate.proxy, &chunked_head("a")).await;
    s.write_all(&chunk(600)).await.unwrap();
    let head = read_until(&mut s, "\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    s.write_all(&chunk(600)).await.unwrap();
    let rest = head + &read_to_the_close(&mut s).await;
    assert!(!rest.ends_with("0\r\n\r\n"), "passed off as whole: {rest}");
    eventually("counted", || async {
        counter(&gate, "body_too_large").await == 1
    })
    .await;
    let pool = gate.pool("api").await;
    assert_eq!(pool["counters"]["forwarded"], 1, "{pool}");
    assert_eq!(pool["counters"]["broken_bodies"], 0, "{pool}");
    eventually("the slot back", || async { in_flight(&gate).await == 0 }).await;
}

/// A reload sets the bound for the requests read after it: none → 100 → 1000 → none.
/// Without the setting (the default) a body of any length is taken, as before: trial122's
/// `10^18` announced reaches the upstream.
#[tokio::test]
async fn a_reload_changes_the_bound_and_the_default_is_none() {
    let up = Echo::start().await;
    let (gate, config) = gate(up.addr, "reload", "").await;
    let text = std::fs::read_to_string(&config).unwrap();
    let post = |gate: &Gate, id: &str, len: usize| {
        let mut req = format!(
            "POST / HTTP/1.1\r\nhost: x\r\nx-id: {id}\r\ncontent-length: {len}\r\nconnection: close\r\n\r\n"
        )
        .into_bytes();
        req.extend(std::iter::repeat_n(b'x', len));
        let addr = gate.proxy;
        async move { read_to_the_close(&mut raw(addr, &req).await).await }
    };
    let mut huge = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: huge\r\ncontent-length: 1000000000000000000\r\nexpect: 100-continue\r\n\r\n",
    )
    .await;
    let go = read_until(&mut huge, "\r\n\r\n").await;
    assert!(go.starts_with("HTTP/1.1 100 Continue"), "{go}");
    eventually("forwarded", || async { up.ids() == ["huge"] }).await;
    drop(huge);
    eventually("its slot back", || async { in_flight(&gate).await == 0 }).await;

    for (bound, len, status) in [
        ("client_max_body_size = 100\n", 101, "413"),
        ("client_max_body_size = 100\n", 100, "200"),
        ("client_max_body_size = 1000\n", 101, "200"),
        ("", 5000, "200"),
    ] {
        rewrite(&config, &format!("{bound}{text}"));
        let r = gate.admin_call("POST", "/reload", None, "").await;
        assert_eq!(r.status, 200, "{}", r.body);
        let answer = post(&gate, "p", len).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{bound} {len}: {answer}"
        );
    }
    assert_eq!(counter(&gate, "body_too_large").await, 1);
}
