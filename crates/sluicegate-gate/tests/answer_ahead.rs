//! The answer read ahead of a slow client (`response_buffer_size`): an answer within the
//! bound frees its slot when the upstream has sent it, however slowly its client reads
//! (review gate110's `slowread.py`); one past the bound holds its slot until the client has
//! caught up, as every answer did before; `0` keeps the old way; a client that leaves
//! mid-answer drops what was read for it. Real sockets both sides: the slow client is a
//! socket with a small receive buffer that the test reads when it says, never timed.

mod support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use support::{Gate, eventually, write_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::Notify;

/// More than the sockets between the gate and a client hold (Linux lets a send buffer grow
/// to 4 MiB, `tcp_wmem`; the slow client's receive buffer is 4 KiB): the gate cannot hand
/// it all to the kernel while the client does not read.
const BIG: usize = 8 << 20;

/// The byte at `i` of every answer: a pattern a lost or doubled frame would break.
fn byte(i: usize) -> u8 {
    (i % 251) as u8
}

type Frames =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send>>;
type Body = http_body_util::Either<Full<Bytes>, StreamBody<Frames>>;

/// An upstream: `GET /big/N` answers N bytes of the pattern with a `Content-Length`;
/// `GET /held/N` sends N bytes, waits for `go`, then 1 KiB more (chunked); anything else
/// `ok`.
async fn upstream(go: Arc<Notify>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let go = go.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| answer(go.clone(), req));
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

async fn answer(go: Arc<Notify>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path().to_owned();
    // A body is read whole before the answer.
    let _ = http_body_util::BodyExt::collect(req.into_body()).await;
    let pattern = |from: usize, to: usize| Bytes::from((from..to).map(byte).collect::<Vec<u8>>());
    if let Some(n) = path.strip_prefix("/big/") {
        let n: usize = n.parse().unwrap();
        return Ok(Response::new(http_body_util::Either::Left(Full::new(
            pattern(0, n),
        ))));
    }
    if let Some(n) = path.strip_prefix("/held/") {
        let n: usize = n.parse().unwrap();
        let parts = futures_util::stream::unfold(0, move |step| {
            let go = go.clone();
            async move {
                match step {
                    0 => Some((Ok(Frame::data(pattern(0, n))), 1)),
                    1 => {
                        go.notified().await;
                        Some((Ok(Frame::data(pattern(n, n + 1024))), 2))
                    }
                    _ => None,
                }
            }
        });
        let frames: Frames = Box::pin(parts);
        return Ok(Response::new(http_body_util::Either::Right(
            StreamBody::new(frames),
        )));
    }
    Ok(Response::new(http_body_util::Either::Left(Full::new(
        Bytes::from_static(b"ok"),
    ))))
}

/// A gate of one pool of one slot in front of `up`, with a queue of `queue` places (their
/// timeout 10 s) and `extra` top-level settings.
async fn gate(
    up: SocketAddr,
    name: &str,
    queue: usize,
    extra: &str,
) -> (Gate, support::ConfigFile) {
    gate_of(up, name, 1, queue, extra).await
}

/// [`gate`], with `slots` slots.
async fn gate_of(
    up: SocketAddr,
    name: &str,
    slots: usize,
    queue: usize,
    extra: &str,
) -> (Gate, support::ConfigFile) {
    let config = write_config(
        name,
        &format!(
            "listen = [\"127.0.0.1:0\"]\n{extra}\n\n[admin]\nlisten = \"127.0.0.1:0\"\n\n[[pools]]\nname = \"api\"\nupstream = \"http://{up}\"\nmax_concurrency = {slots}\nmax_queue = {queue}\nqueue_timeout = \"10s\"\npredictive = false\n\n[[routes]]\npool = \"api\"\n"
        ),
    );
    let gate = Gate::start(&["serve", "--config", config.to_str().unwrap()]).await;
    (gate, config)
}

/// A client that asks for `path` and reads only the answer's head: its receive buffer is
/// small, so the rest of a big answer waits in the gate.
struct SlowReader {
    stream: TcpStream,
    /// What was read past the head.
    body: Vec<u8>,
    status: String,
}

impl SlowReader {
    async fn ask(gate: SocketAddr, path: &str) -> SlowReader {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut stream = socket.connect(gate).await.unwrap();
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        let end = loop {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed before the head");
            got.extend_from_slice(&buf[..n]);
            if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&got[..end]).into_owned();
        SlowReader {
            stream,
            body: got[end..].to_vec(),
            status: head.lines().next().unwrap_or("").to_owned(),
        }
    }

    /// Reads the rest of an answer of `len` bytes and checks every byte.
    async fn read_all(mut self, len: usize) {
        let mut rest = vec![0u8; len - self.body.len()];
        self.stream.read_exact(&mut rest).await.unwrap();
        self.body.extend_from_slice(&rest);
        assert!(
            self.body.iter().enumerate().all(|(i, b)| *b == byte(i)),
            "the answer arrived whole and in order"
        );
    }
}

/// `GET /` through the gate: its status.
async fn status_of_another(gate: &Gate) -> u16 {
    support::get(gate.proxy, "/", "other").await.status.as_u16()
}

async fn buffers(gate: &Gate, what: &str) -> u64 {
    gate.status().await["buffers"][what].as_u64().unwrap()
}

/// gate110's slow reader: two clients take a pool of 1 (the second queued behind the
/// first) and read none of their 8 MiB answers; with the answers within
/// `response_buffer_size` the gate reads both at the upstream's pace, the slot comes free,
/// and a third request is served while both still hold their connections. Was: the first
/// held the slot as long as it did not read, the second and third `503` at the queue's
/// timeout.
#[tokio::test]
async fn a_slow_reader_of_an_answer_within_the_bound_holds_no_slot() {
    let up = upstream(Arc::new(Notify::new())).await;
    let (gate, _config) = gate(up, "within", 2, "response_buffer_size = 16777216").await;
    let path = format!("/big/{BIG}");
    let first = SlowReader::ask(gate.proxy, &path).await;
    assert_eq!(first.status, "HTTP/1.1 200 OK");
    let second = SlowReader::ask(gate.proxy, &path).await;
    assert_eq!(second.status, "HTTP/1.1 200 OK", "the first freed the slot");
    assert_eq!(status_of_another(&gate).await, 200, "the slot is free");
    let pool = gate.pool("api").await;
    assert_eq!(pool["in_flight"], 0, "{pool}");
    assert!(buffers(&gate, "held_bytes").await > 0);
    // Counted by the pump just after it freed the slot, maybe on the other worker thread.
    eventually("both counted as freed early", || async {
        buffers(&gate, "answers_freed_early").await == 2
    })
    .await;
    first.read_all(BIG).await;
    second.read_all(BIG).await;
    eventually("the buffers given back", || async {
        buffers(&gate, "held_bytes").await == 0
    })
    .await;
    assert_eq!(buffers(&gate, "answers_at_bound").await, 0);
}

/// An answer past `response_buffer_size` is read ahead only up to it: its slot is held
/// until the client has taken enough, another request turned away meanwhile (`503`, no
/// queue), as every answer was before; once it has read, the slot is free.
#[tokio::test]
async fn an_answer_past_the_bound_holds_its_slot_until_the_client_catches_up() {
    let up = upstream(Arc::new(Notify::new())).await;
    let (gate, _config) = gate(up, "past", 0, "response_buffer_size = 65536").await;
    let slow = SlowReader::ask(gate.proxy, &format!("/big/{BIG}")).await;
    assert_eq!(status_of_another(&gate).await, 503, "the slot is held");
    eventually("reading stopped at the bound", || async {
        buffers(&gate, "answers_at_bound").await == 1
    })
    .await;
    slow.read_all(BIG).await;
    eventually("the slot freed", || async {
        gate.pool("api").await["in_flight"] == 0
    })
    .await;
    assert_eq!(status_of_another(&gate).await, 200);
}

/// `response_buffer_size = 0` reads no answer ahead: a slow reader of a big answer holds
/// its slot, as before.
#[tokio::test]
async fn a_buffer_of_0_streams_every_answer_as_before() {
    let up = upstream(Arc::new(Notify::new())).await;
    let (gate, _config) = gate(up, "zero", 0, "response_buffer_size = 0").await;
    let slow = SlowReader::ask(gate.proxy, &format!("/big/{BIG}")).await;
    assert_eq!(status_of_another(&gate).await, 503, "the slot is held");
    slow.read_all(BIG).await;
    eventually("the slot freed", || async {
        gate.pool("api").await["in_flight"] == 0
    })
    .await;
    assert_eq!(buffers(&gate, "answers_at_bound").await, 0);
    assert_eq!(buffers(&gate, "held_bytes").await, 0);
}

/// `max_buffered_bytes` caps what every buffer holds together: with a cap below one
/// answer, a slow reader's answer stops at the cap and holds its slot, as past the bound.
#[tokio::test]
async fn past_the_gate_wide_cap_answers_stream_as_before() {
    let up = upstream(Arc::new(Notify::new())).await;
    let (gate, _config) = gate(
        up,
        "cap",
        0,
        "response_buffer_size = 16777216\nmax_buffered_bytes = 1048576",
    )
    .await;
    let slow = SlowReader::ask(gate.proxy, &format!("/big/{BIG}")).await;
    assert_eq!(status_of_another(&gate).await, 503, "the slot is held");
    eventually("reading stopped at the cap", || async {
        buffers(&gate, "at_cap").await == 1
    })
    .await;
    // The kernel may take more of what was read as the socket's buffer grows: the gate
    // then reads on, up to the cap again.
    eventually("the buffers full", || async {
        buffers(&gate, "held_bytes").await >= 1 << 20
    })
    .await;
    let held = buffers(&gate, "held_bytes").await;
    assert!(
        (1 << 20..(1 << 20) + (1 << 17)).contains(&held),
        "held {held}: the cap and at most one read past it"
    );
    slow.read_all(BIG).await;
    eventually("the slot freed", || async {
        gate.pool("api").await["in_flight"] == 0
    })
    .await;
}

/// The cap is both ways: while the buffers hold it (a slow reader's answer), a request
/// body is not read ahead either, and its request holds its slot while the body comes, as
/// with `client_body_buffer_size = 0`; once they hold less, a body is read ahead again and
/// holds no slot while it comes.
#[tokio::test]
async fn past_the_cap_request_bodies_stream_too() {
    let up = upstream(Arc::new(Notify::new())).await;
    let (gate, _config) = gate_of(
        up,
        "cap-bodies",
        2,
        0,
        "response_buffer_size = 16777216\nmax_buffered_bytes = 1048576",
    )
    .await;
    let slow = SlowReader::ask(gate.proxy, &format!("/big/{BIG}")).await;
    eventually("the buffers full", || async {
        buffers(&gate, "held_bytes").await >= 1 << 20
    })
    .await;
    let post = b"POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234";
    let mut upload = support::raw(gate.proxy, post).await;
    eventually("the upload holds the second slot", || async {
        gate.pool("api").await["in_flight"] == 2
    })
    .await;
    assert_eq!(status_of_another(&gate).await, 503, "both slots held");
    assert_eq!(
        buffers(&gate, "at_cap").await,
        2,
        "the answer, then the body"
    );
    upload.write_all(b"56789").await.unwrap();
    let mut answer = [0u8; 12];
    upload.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    slow.read_all(BIG).await;
    eventually("the buffers given back", || async {
        buffers(&gate, "held_bytes").await == 0
    })
    .await;
    // Below the cap again: a body on its way holds no slot.
    let mut upload = support::raw(gate.proxy, post).await;
    eventually("the body read ahead", || async {
        buffers(&gate, "held_bytes").await == 5
    })
    .await;
    assert_eq!(
        gate.pool("api").await["in_flight"],
        0,
        "no slot while it comes"
    );
    upload.write_all(b"56789").await.unwrap();
    upload.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
}

/// A client that leaves in the middle of its answer drops what was read for it at once,
/// while the slot stays held until the upstream has finished (the upstream is still
/// working on the request), then is freed.
#[tokio::test]
async fn a_client_that_leaves_mid_answer_drops_its_buffer() {
    let go = Arc::new(Notify::new());
    let up = upstream(go.clone()).await;
    let (gate, _config) = gate(up, "leaves", 0, "response_buffer_size = 16777216").await;
    let slow = SlowReader::ask(gate.proxy, &format!("/held/{BIG}")).await;
    eventually("half the answer read ahead", || async {
        buffers(&gate, "held_bytes").await > 0
    })
    .await;
    drop(slow);
    eventually("the buffer dropped", || async {
        buffers(&gate, "held_bytes").await == 0
    })
    .await;
    assert_eq!(
        gate.pool("api").await["in_flight"],
        1,
        "the upstream still works"
    );
    go.notify_one();
    eventually("the slot freed at the upstream's end", || async {
        gate.pool("api").await["in_flight"] == 0
    })
    .await;
}
