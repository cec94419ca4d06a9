//! An upstream that echoes what it got of each request, and reading a raw connection's
//! answer: for the tests of request bodies (`read_ahead`, `body_size`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

use super::{ConfigFile, Gate, PATIENCE, write_config};

/// An upstream that notes every request's head as it arrives (`x-id`, `content-length`,
/// `transfer-encoding`, `expect`), reads the body whole and answers with the head it noted
/// and the body's length: `id=a cl=10 te=- expect=- len=10`; the same line is noted again
/// when the body has been read (or broke: `len=broken (…)`).
#[derive(Clone)]
pub struct Echo {
    pub addr: SocketAddr,
    notes: Arc<Notes>,
}

#[derive(Default)]
struct Notes {
    heads: Mutex<Vec<String>>,
    ends: Mutex<Vec<String>>,
}

impl Echo {
    pub async fn start() -> Echo {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let notes = Arc::new(Notes::default());
        let seen = notes.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let seen = seen.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| serve(seen.clone(), req));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Echo { addr, notes }
    }

    /// The `x-id` of every request whose head reached the upstream.
    pub fn ids(&self) -> Vec<String> {
        let heads = self.notes.heads.lock().unwrap();
        heads
            .iter()
            .map(|h| h.split(' ').next().unwrap()[3..].to_owned())
            .collect()
    }

    /// What the upstream made of each body it has read to its end or seen break, in order.
    pub fn ends(&self) -> Vec<String> {
        self.notes.ends.lock().unwrap().clone()
    }
}

async fn serve(
    notes: Arc<Notes>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let get = |n: &str| {
        req.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned()
    };
    let head = format!(
        "id={} cl={} te={} expect={}",
        get("x-id"),
        get("content-length"),
        get("transfer-encoding"),
        get("expect")
    );
    notes.heads.lock().unwrap().push(head.clone());
    let len = match req.into_body().collect().await {
        Ok(b) => match b.trailers().cloned() {
            None => b.to_bytes().len().to_string(),
            Some(t) => {
                let t: Vec<String> = t
                    .iter()
                    .map(|(k, v)| format!("{k}:{}", v.to_str().unwrap()))
                    .collect();
                format!("{} trailers={}", b.to_bytes().len(), t.join(","))
            }
        },
        Err(e) => format!("broken ({e})"),
    };
    let said = format!("{head} len={len}");
    notes.ends.lock().unwrap().push(said.clone());
    Ok(Response::new(Full::new(Bytes::from(said))))
}

/// Reads from `s` until `until` has come (or the connection ends); all that came.
pub async fn read_until(s: &mut TcpStream, until: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(PATIENCE, async {
        while !String::from_utf8_lossy(&got).contains(until) {
            match s.read(&mut buf).await.unwrap() {
                0 => break,
                n => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .expect("nothing more came");
    String::from_utf8_lossy(&got).into_owned()
}

/// The answer's body (of a `Content-Length`): what the upstream said it got.
pub async fn answer_body(s: &mut TcpStream) -> String {
    let mut got = read_until(s, "\r\n\r\n").await;
    let (head, _) = got.split_once("\r\n\r\n").unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .unwrap_or_else(|| panic!("no length: {got}"))
        .parse()
        .unwrap();
    while got.split_once("\r\n\r\n").unwrap().1.len() < length {
        let mut buf = [0u8; 4096];
        let n = tokio::time::timeout(PATIENCE, s.read(&mut buf))
            .await
            .expect("nothing more came")
            .unwrap();
        assert!(n > 0, "the answer ended short: {got}");
        got.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    got.split_once("\r\n\r\n").unwrap().1.to_owned()
}

/// A gate of one pool of one slot and no queue in front of the upstream at `up`, with `extra` top-level
/// settings: any request that held the slot turns every other away at once (`503`).
pub async fn one_slot_gate(up: SocketAddr, name: &str, extra: &str) -> (Gate, ConfigFile) {
    let config = write_config(
        name,
        &format!(
            "listen = [\"127.0.0.1:0\"]\n{extra}\n\n[admin]\nlisten = \"127.0.0.1:0\"\n\n[[pools]]\nname = \"api\"\nupstream = \"http://{}\"\nmax_concurrency = 1\nmax_queue = 0\n\n[[routes]]\npool = \"api\"\n",
            up
        ),
    );
    let gate = Gate::start(&["serve", "--config", config.to_str().unwrap()]).await;
    (gate, config)
}

/// Pool `api`'s counter `name`, and its requests in flight, from `/status`.
pub async fn counter(gate: &Gate, name: &str) -> u64 {
    gate.pool("api").await["counters"][name].as_u64().unwrap()
}

pub async fn in_flight(gate: &Gate) -> u64 {
    gate.pool("api").await["in_flight"].as_u64().unwrap()
}
