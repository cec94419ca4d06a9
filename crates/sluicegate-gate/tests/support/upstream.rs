//! A real HTTP upstream on an ephemeral loopback port: `/hold` waits until the test
//! releases it, `/fast` (any other path) answers at once echoing what it was sent (the
//! request target, then headers), `/body` reads the whole request body. It counts requests
//! in flight and the most ever in flight.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// The upstream's view of what reached it.
pub struct Seen {
    current: AtomicUsize,
    max: AtomicUsize,
    /// `x-id` of every request that arrived, in order.
    ids: Mutex<Vec<String>>,
    release: Semaphore,
    /// Requests whose handler ended (answered or dropped).
    ended: AtomicUsize,
}

/// A running upstream.
#[derive(Clone)]
pub struct Upstream {
    pub addr: SocketAddr,
    seen: Arc<Seen>,
}

struct InFlight(Arc<Seen>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.current.fetch_sub(1, SeqCst);
        self.0.ended.fetch_add(1, SeqCst);
    }
}

impl Upstream {
    pub async fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Seen {
            current: AtomicUsize::new(0),
            max: AtomicUsize::new(0),
            ids: Mutex::new(Vec::new()),
            release: Semaphore::new(0),
            ended: AtomicUsize::new(0),
        });
        let s = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let s = s.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| serve(s.clone(), req));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Upstream { addr, seen }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Lets `n` held requests answer.
    pub fn release(&self, n: usize) {
        self.seen.release.add_permits(n);
    }

    pub fn current(&self) -> usize {
        self.seen.current.load(SeqCst)
    }

    pub fn max(&self) -> usize {
        self.seen.max.load(SeqCst)
    }

    pub fn ended(&self) -> usize {
        self.seen.ended.load(SeqCst)
    }

    pub fn ids(&self) -> Vec<String> {
        self.seen.ids.lock().unwrap().clone()
    }
}

async fn serve(
    seen: Arc<Seen>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let id = req
        .headers()
        .get("x-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    seen.ids.lock().unwrap().push(id.clone());
    let now = seen.current.fetch_add(1, SeqCst) + 1;
    seen.max.fetch_max(now, SeqCst);
    let _guard = InFlight(seen.clone());
    let body = match req.uri().path() {
        "/hold" => {
            seen.release.acquire().await.unwrap().forget();
            id
        }
        "/body" => {
            let b = req.into_body().collect().await.map(|c| c.to_bytes().len());
            format!("{}", b.unwrap_or(0))
        }
        _ => {
            let h = req.headers();
            let get = |n: &str| {
                h.get(n)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("-")
                    .to_owned()
            };
            format!(
                "target={} host={} xff={} forwarded={} connection={} bypass={} te={} conn={}",
                req.uri(),
                get("host"),
                get("x-forwarded-for"),
                get("forwarded"),
                get("x-hop"),
                get("x-bypass"),
                get("te"),
                get("connection")
            )
        }
    };
    Ok(Response::new(Full::new(Bytes::from(body))))
}
