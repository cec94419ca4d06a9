//! A request body read before the request asks for its slot (`client_body_buffer_size`):
//! a body on its way holds no slot, a body read whole goes upstream with a `Content-Length`,
//! a body past the bound is streamed as before, `0` keeps the old way, and a client that
//! leaves or stalls while its body is read leaves nothing behind. Real sockets both sides;
//! the trickle is the test's own (each piece sent when the test says), never timed.

mod support;

use support::{
    Echo, Gate, answer_body, counter, eventually, in_flight, one_slot_gate as gate, raw, read_until,
};
use tokio::io::AsyncWriteExt;

/// `GET /` as `id`: its status line and body.
async fn get(gate: &Gate, id: &str) -> support::Reply {
    support::get(gate.proxy, "/", id).await
}

/// gate110, section 2: a client that sent its body slowly held its slot the whole time, two
/// of them a pool of 2. The body is read before the request asks for its slot: while it
/// comes, the one slot serves others. `Expect: 100-continue` tells the test when the gate is
/// reading the body (the `100` comes with the first read), so nothing here is timed.
#[tokio::test]
async fn a_body_on_its_way_holds_no_slot() {
    let up = Echo::start().await;
    let (gate, _config) = gate(up.addr, "on-its-way", "").await;
    let mut a = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: a\r\ncontent-length: 20\r\nexpect: 100-continue\r\n\r\n",
    )
    .await;
    let go = read_until(&mut a, "\r\n\r\n").await;
    assert!(go.starts_with("HTTP/1.1 100 Continue"), "{go}");
    for (i, piece) in [&b"first five"[..], b"then five."].into_iter().enumerate() {
        a.write_all(&piece[..5]).await.unwrap();
        let b = get(&gate, &format!("b{i}")).await;
        assert_eq!(
            b.status, 200,
            "the slot was held by a body on its way: {b:?}"
        );
        a.write_all(&piece[5..]).await.unwrap();
        if i == 0 {
            let b = get(&gate, "b-between").await;
            assert_eq!(b.status, 200, "{b:?}");
        }
    }
    let said = answer_body(&mut a).await;
    assert_eq!(
        said, "id=a cl=20 te=- expect=- len=20",
        "Expect is the gate's, not passed on"
    );
    assert!(!up.ids().is_empty());
    assert_eq!(counter(&gate, "forwarded").await, 4);
    eventually("the slot back", || async { in_flight(&gate).await == 0 }).await;
}

/// A chunked body, sent a chunk at a time, is read whole before the request takes the slot
/// (another request is served between its chunks), and goes upstream with the length the
/// gate counted, not chunked: an HTTP/1.0 upstream (Python's `http.server`, some WSGI
/// set-ups) reads no chunks (nginx sends such a body with a `Content-Length` too).
#[tokio::test]
async fn a_small_chunked_body_goes_upstream_with_a_content_length() {
    let up = Echo::start().await;
    let (gate, _config) = gate(up.addr, "chunked", "").await;
    let mut a = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: a\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n",
    )
    .await;
    for i in 0..3 {
        let b = get(&gate, &format!("b{i}")).await;
        assert_eq!(b.status, 200, "{b:?}");
        a.write_all(b"6\r\n world\r\n").await.unwrap();
    }
    assert!(
        !up.ids().contains(&"a".to_owned()),
        "forwarded before its body ended: {:?}",
        up.ids()
    );
    a.write_all(b"0\r\n\r\n").await.unwrap();
    let said = answer_body(&mut a).await;
    assert_eq!(said, "id=a cl=23 te=- expect=- len=23");
}

/// Past the bound the body is not held back for good: what was read goes first, the rest is
/// streamed while the request holds its slot (as every body was before), so such a request
/// does hold the slot while its rest arrives. Both framings reach the upstream whole, a
/// chunked one still chunked (its length is not known before it ends).
#[tokio::test]
async fn a_body_past_the_bound_is_streamed_with_its_slot_held() {
    let up = Echo::start().await;
    let (gate, _config) = gate(up.addr, "past", "client_body_buffer_size = 1024").await;
    let mut a = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: a\r\ncontent-length: 5000\r\n\r\n",
    )
    .await;
    a.write_all(&[b'x'; 2000]).await.unwrap();
    eventually("forwarded past the bound", || async {
        up.ids().contains(&"a".to_owned())
    })
    .await;
    let b = get(&gate, "b").await;
    assert_eq!(b.status, 503, "the rest streams with the slot held: {b:?}");
    a.write_all(&[b'x'; 3000]).await.unwrap();
    assert_eq!(
        answer_body(&mut a).await,
        "id=a cl=5000 te=- expect=- len=5000"
    );

    let mut chunked =
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: c\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..5 {
        chunked.extend_from_slice(b"3e8\r\n");
        chunked.extend_from_slice(&[b'y'; 1000]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let mut c = raw(gate.proxy, &chunked).await;
    assert_eq!(
        answer_body(&mut c).await,
        "id=c cl=- te=chunked expect=- len=5000"
    );
}

/// `client_body_buffer_size = 0` keeps the old way: the body is streamed while its request
/// holds the slot (a body on its way keeps others out), and a chunked one goes chunked.
#[tokio::test]
async fn a_buffer_of_0_streams_every_body_as_before() {
    let up = Echo::start().await;
    let (gate, _config) = gate(up.addr, "zero", "client_body_buffer_size = 0").await;
    let mut a = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: a\r\ntransfer-encoding: chunked\r\nexpect: 100-continue\r\n\r\n",
    )
    .await;
    // The `100` comes when the request has its slot and its body is sent on.
    let go = read_until(&mut a, "\r\n\r\n").await;
    assert!(go.starts_with("HTTP/1.1 100 Continue"), "{go}");
    a.write_all(b"5\r\nhello\r\n").await.unwrap();
    let b = get(&gate, "b").await;
    assert_eq!(b.status, 503, "{b:?}");
    a.write_all(b"0\r\n\r\n").await.unwrap();
    assert_eq!(
        answer_body(&mut a).await,
        "id=a cl=- te=chunked expect=100-continue len=5"
    );
}

/// A client that leaves while its body is read: nothing reaches the upstream, no slot was
/// taken, and it is counted `client_gone` as one that leaves the queue or its body later is.
#[tokio::test]
async fn a_client_that_leaves_while_its_body_is_read_leaves_nothing_behind() {
    let up = Echo::start().await;
    let (gate, _config) = gate(up.addr, "leaves", "").await;
    let mut a = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: a\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n",
    )
    .await;
    let go = read_until(&mut a, "\r\n\r\n").await;
    assert!(go.starts_with("HTTP/1.1 100 Continue"), "{go}");
    a.write_all(b"ten bytes.").await.unwrap();
    drop(a);
    eventually("counted as gone", || async {
        counter(&gate, "client_gone").await == 1
    })
    .await;
    assert!(up.ids().is_empty(), "reached the upstream: {:?}", up.ids());
    assert_eq!(in_flight(&gate).await, 0);
    assert_eq!(counter(&gate, "forwarded").await, 0);
    let b = get(&gate, "b").await;
    assert_eq!(b.status, 200, "{b:?}");
    assert_eq!(up.ids(), ["b"]);
}

/// A client that stops sending while its body is read gets `408 client_body_timeout` after
/// `client_body_timeout` (the test waits for the answer, it times nothing), counted as
/// such; nothing reached the upstream and no slot was taken.
#[tokio::test]
async fn a_client_that_stalls_while_its_body_is_read_gets_408() {
    let up = Echo::start().await;
    let (gate, _config) = gate(up.addr, "stalls", "client_body_timeout = \"1s\"").await;
    let mut a = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\nx-id: a\r\ncontent-length: 100\r\n\r\nten bytes.",
    )
    .await;
    let answer = read_until(&mut a, "\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("x-sluicegate-reason: client_body_timeout"),
        "{answer}"
    );
    assert_eq!(counter(&gate, "client_body_timeout").await, 1);
    assert!(up.ids().is_empty(), "reached the upstream: {:?}", up.ids());
    assert_eq!(in_flight(&gate).await, 0);
}

/// A body that says it is longer than the bound and waits for `100 Continue` gets it only
/// with its slot, as before: one turned away has not sent its body for nothing. A shorter
/// one is read ahead, and so has its `100` before the pool decides.
#[tokio::test]
async fn a_long_body_that_waits_for_continue_gets_it_only_with_its_slot() {
    let up = Echo::start().await;
    let (gate, _config) = gate(up.addr, "continue", "client_body_buffer_size = 1024").await;
    gate.admin_call("POST", "/pools/api/close", None, "").await;
    let mut long = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 5000\r\nexpect: 100-continue\r\n\r\n",
    )
    .await;
    let answer = read_until(&mut long, "\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    let mut short = raw(
        gate.proxy,
        b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\nexpect: 100-continue\r\n\r\n",
    )
    .await;
    let go = read_until(&mut short, "\r\n\r\n").await;
    assert!(go.starts_with("HTTP/1.1 100 Continue"), "{go}");
    short.write_all(b"ten bytes.").await.unwrap();
    let answer = read_until(&mut short, "closed").await;
    assert!(answer.contains("HTTP/1.1 503"), "{answer}");
}

/// A small chunked body with trailers is read whole but goes upstream chunked, with its
/// trailers: only chunks carry them. The same with nothing read ahead.
#[tokio::test]
async fn a_small_body_with_trailers_goes_chunked_with_them() {
    let up = Echo::start().await;
    for (name, extra) in [
        ("trailers", ""),
        ("trailers-0", "client_body_buffer_size = 0"),
    ] {
        let (gate, _config) = gate(up.addr, name, extra).await;
        let mut a = raw(
            gate.proxy,
            b"POST / HTTP/1.1\r\nhost: x\r\nx-id: a\r\ntrailer: x-sum\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nx-sum: 5\r\n\r\n",
        )
        .await;
        assert_eq!(
            answer_body(&mut a).await,
            "id=a cl=- te=chunked expect=- len=5 trailers=x-sum:5",
            "{extra}"
        );
    }
}
