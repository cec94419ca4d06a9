//! End to end, what trial122 (an operator trying the gate against upstreams unlike the
//! demo's, docs/reviews/2026-12-07-trial122) found.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use support::{Gate, RawUpstream, request};

/// `method /path` with `body` to the gate, on a fresh client connection.
async fn send(gate: &Gate, method: &str, path: &str, body: impl Into<Bytes>) -> u16 {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "gate.test")
        .body(Full::new(body.into()))
        .unwrap();
    request(gate.proxy, req).await.status.as_u16()
}

/// An upstream that closes a kept-alive connection as a request arrives on it (it read the
/// request, as a server whose keep-alive timeout ran out just then, or that serves so many
/// requests per connection, does): a request with a body the gate read whole is sent once
/// more on a new connection when its method is idempotent (`PUT`, `DELETE`, a `GET` with a
/// body), as one without a body is, and as nginx sends it again; a `POST` is sent once, and
/// so is a body past `client_body_buffer_size` (its rest was streamed from the client; 2 MiB
/// cannot come in the one read that may carry a body past the bound).
#[tokio::test]
async fn an_idempotent_request_with_a_body_read_whole_is_sent_again() {
    // The first request on `/drop` of each round is read and dropped; the next is answered.
    let drops = Arc::new(AtomicUsize::new(0));
    let hits = Arc::new(AtomicUsize::new(0));
    let (dropping, counted) = (drops.clone(), hits.clone());
    let up = RawUpstream::start(Arc::new(move |path: &str| {
        if path == "/drop" {
            counted.fetch_add(1, Ordering::SeqCst);
            if dropping.swap(0, Ordering::SeqCst) == 1 {
                return (Vec::new(), true);
            }
        }
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
            false,
        )
    }))
    .await;
    let gate = Gate::in_front_of_with(up.addr, &[("--admin-listen", "127.0.0.1:0")]).await;
    let large = "x".repeat(2 << 20);
    for (method, body, again) in [
        ("PUT", "hello", true),
        ("DELETE", "hello", true),
        ("GET", "hello", true),
        ("POST", "hello", false),
        ("PUT", large.as_str(), false),
    ] {
        // A kept-alive connection of hyper's path (a request with a body) to reuse.
        assert_eq!(send(&gate, "POST", "/warm", "warm").await, 200);
        drops.store(1, Ordering::SeqCst);
        hits.store(0, Ordering::SeqCst);
        let status = send(&gate, method, "/drop", body.to_owned()).await;
        let sent = hits.load(Ordering::SeqCst);
        if again {
            assert_eq!((status, sent), (200, 2), "{method}: status, times sent");
        } else {
            assert_eq!(
                (status, sent),
                (502, 1),
                "{method} of {}: status, times sent",
                body.len()
            );
        }
    }
    assert_eq!(gate.pool("default").await["in_flight"], 0);
}
