//! End to end on ephemeral loopback ports: a real axum server behind the HTTP layer, and a
//! real hyper-util client behind the client layer, each under 200 concurrent requests.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};
use sluicegate::middleware::client::ClientLimitLayer;
use sluicegate::middleware::http_concurrency::HttpConcurrencyLimitLayer;
use tokio::task::JoinSet;
use tower::{Service, ServiceBuilder, ServiceExt};

const REQUESTS: usize = 200;
/// Every test here must finish well within this, or it fails instead of hanging.
const BOUND: Duration = Duration::from_secs(60);

/// How many requests a handler is running now, and the most ever seen at once.
#[derive(Clone, Default)]
struct Gauge {
    now: Arc<AtomicUsize>,
    max: Arc<AtomicUsize>,
    served: Arc<AtomicUsize>,
}

async fn slow(State(gauge): State<Gauge>) -> &'static str {
    let now = gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
    gauge.max.fetch_max(now, Ordering::SeqCst);
    // Long enough for requests to overlap; nothing here measures time.
    tokio::time::sleep(Duration::from_millis(5)).await;
    gauge.now.fetch_sub(1, Ordering::SeqCst);
    gauge.served.fetch_add(1, Ordering::SeqCst);
    "done"
}

async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

fn client() -> Client<HttpConnector, Empty<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

fn get_request(addr: SocketAddr, path: &str) -> Request<Empty<Bytes>> {
    Request::get(format!("http://{addr}{path}"))
        .body(Empty::new())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_layer_keeps_the_handler_at_four_and_answers_every_request_once() {
    let limiter = ConcurrencyLimiter::builder(4)
        .max_queue(50)
        .build()
        .unwrap();
    let gauge = Gauge::default();
    // Two routes, one limiter: they share the four permits.
    let app = Router::new()
        .route("/a", get(slow))
        .route("/b", get(slow))
        .route_layer(HttpConcurrencyLimitLayer::new(limiter.clone()))
        .with_state(gauge.clone());
    let addr = serve(app).await;
    let client = client();

    let mut calls = JoinSet::new();
    for i in 0..REQUESTS {
        let client = client.clone();
        let path = if i % 2 == 0 { "/a" } else { "/b" };
        calls.spawn(async move {
            let response = client.request(get_request(addr, path)).await.unwrap();
            let status = response.status();
            let retry_after = response.headers().get("retry-after").cloned();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, retry_after, body)
        });
    }
    let outcomes = tokio::time::timeout(BOUND, calls.join_all()).await.unwrap();

    assert_eq!(
        outcomes.len(),
        REQUESTS,
        "every request got exactly one response"
    );
    let ok = outcomes
        .iter()
        .filter(|(s, ..)| *s == StatusCode::OK)
        .count();
    let overloaded: Vec<_> = outcomes
        .iter()
        .filter(|(s, ..)| *s == StatusCode::SERVICE_UNAVAILABLE)
        .collect();
    assert_eq!(ok + overloaded.len(), REQUESTS, "only 200 or 503");
    for (_, retry_after, body) in &overloaded {
        let secs: u64 = retry_after
            .as_ref()
            .expect("503 carries Retry-After")
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(secs >= 1);
        assert!(body.starts_with(b"overloaded: "));
    }
    assert!(
        gauge.max.load(Ordering::SeqCst) <= 4,
        "handler saw {} at once",
        gauge.max.load(Ordering::SeqCst)
    );
    assert_eq!(gauge.served.load(Ordering::SeqCst), ok);

    let snap = limiter.snapshot();
    assert_eq!((snap.in_flight, snap.queued), (0, 0));
    assert_eq!(snap.admitted as usize, ok);
    assert_eq!(snap.completed, snap.admitted);
    assert_eq!(
        (snap.rejected() + snap.timed_out) as usize,
        overloaded.len()
    );
    assert_eq!(snap.arrived() as usize, REQUESTS, "counters balance");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_layer_keeps_a_real_server_at_four_and_every_call_ends_once() {
    let gauge = Gauge::default();
    let app = Router::new()
        .route("/", get(slow))
        .with_state(gauge.clone());
    let addr = serve(app).await;

    let limiter = ConcurrencyLimiter::builder(4)
        .max_queue(50)
        .build()
        .unwrap();
    let client = ServiceBuilder::new()
        .layer(ClientLimitLayer::new(limiter.clone()))
        .service(client());

    let mut calls = JoinSet::new();
    for _ in 0..REQUESTS {
        let client = client.clone();
        calls.spawn(async move {
            match client.oneshot(get_request(addr, "/")).await {
                Ok(response) => {
                    assert_eq!(response.status(), StatusCode::OK);
                    Ok(())
                }
                Err(e) => Err(*e.downcast::<Rejected>().expect("only rejections fail")),
            }
        });
    }
    let outcomes = tokio::time::timeout(BOUND, calls.join_all()).await.unwrap();

    assert_eq!(outcomes.len(), REQUESTS);
    let sent = outcomes.iter().filter(|o| o.is_ok()).count();
    let rejected = outcomes
        .iter()
        .filter(|o| matches!(o, Err(Rejected::QueueFull { .. })))
        .count();
    assert_eq!(
        sent + rejected,
        REQUESTS,
        "sent, or rejected because the queue was full"
    );
    assert!(
        gauge.max.load(Ordering::SeqCst) <= 4,
        "server saw {} at once",
        gauge.max.load(Ordering::SeqCst)
    );
    assert_eq!(gauge.served.load(Ordering::SeqCst), sent);

    let snap = limiter.snapshot();
    assert_eq!((snap.in_flight, snap.queued), (0, 0));
    assert_eq!(snap.admitted as usize, sent);
    assert_eq!(snap.completed, snap.admitted);
    assert_eq!(snap.rejected_queue_full as usize, rejected);
    assert_eq!(snap.arrived() as usize, REQUESTS);

    // The client is still usable afterwards.
    let mut client = client;
    let response = client
        .ready()
        .await
        .unwrap()
        .call(get_request(addr, "/"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}
