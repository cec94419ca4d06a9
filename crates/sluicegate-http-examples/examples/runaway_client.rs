//! The runaway client: a timer bug fires thousands of requests at a partner API. The client
//! layer keeps them to 4 in flight; the kill switch (`set_max(0)`) stops them outright while
//! a bypassed health request still gets through.
//!
//! `cargo run -p sluicegate-http-examples --example runaway_client` runs the whole story against a local server that
//! counts how many requests it is serving at once, and exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use bytes::Bytes;
use http::Request;
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sluicegate::concurrency::{ConcurrencyLimiter, Priority, Rejected};
use sluicegate::middleware::client::{Bypass, ClientLimitLayer};
use sluicegate_examples::describe;
use tower::{ServiceBuilder, ServiceExt};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The partner API: counts what it serves at once.
#[derive(Clone, Default)]
struct Partner {
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    served: Arc<AtomicUsize>,
}

async fn quote(State(p): State<Partner>) -> &'static str {
    let now = p.now.fetch_add(1, Ordering::SeqCst) + 1;
    p.most.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2)).await;
    p.now.fetch_sub(1, Ordering::SeqCst);
    p.served.fetch_add(1, Ordering::SeqCst);
    "42"
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let partner = Partner::default();
    let app = Router::new()
        .route("/quote", get(quote))
        .route("/health", get(|| async { "ok" }))
        .with_state(partner.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    // Every outgoing call to the partner goes through this limiter: 4 in flight, the rest
    // queue (up to 5000, each for at most 5 s).
    let partner_api = ConcurrencyLimiter::builder(4)
        .max_queue(5000)
        .queue_timeout(Duration::from_secs(5))
        .build()?;
    let client = ServiceBuilder::new()
        .layer(ClientLimitLayer::new(partner_api.clone()))
        .service(Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>());
    let request = |path: &str| Request::get(format!("http://{addr}{path}")).body(Empty::new());

    // 1. The bug: a timer that should fire once a minute fires 2000 times at once.
    let mut storm = tokio::task::JoinSet::new();
    for _ in 0..2000 {
        let call = client.clone().oneshot(request("/quote")?);
        storm.spawn(call);
    }
    let results = storm.join_all().await;
    let sent = results.iter().filter(|r| r.is_ok()).count();
    println!("the client layer: 4 calls in flight, up to 5000 more wait (5 s at most each)");
    println!(
        "storm (a timer bug fires 2000 calls at once): {sent} of 2000 calls sent, the partner \
         never saw more than {} at once",
        partner.most.load(Ordering::SeqCst)
    );

    // 2. The kill switch: stop every call to the partner, without a deploy.
    partner_api.set_max(0)?;
    let served_before = partner.served.load(Ordering::SeqCst);
    let held = tokio::spawn(client.clone().oneshot(request("/quote")?));

    // 3. The health check still goes through: it bypasses the limit.
    let mut health = request("/health")?;
    health.extensions_mut().insert(Bypass);
    let status = client.clone().oneshot(health).await?.status();
    println!(
        "kill switch on (set_max(0)): a quote call waits in the queue; the health check \
         (Bypass) answered {status}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(partner.served.load(Ordering::SeqCst), served_before);

    // 4. Fixed: lift the switch; the held call goes out, urgent calls first.
    let mut urgent = request("/quote")?;
    urgent.extensions_mut().insert(Priority::HIGH);
    let urgent = tokio::spawn(client.clone().oneshot(urgent));
    partner_api.set_max(4)?;
    let held = held.await??.status();
    let urgent = urgent.await??.status();
    println!(
        "kill switch off (set_max(4)): the held call answered {held}, an urgent call \
         (Priority::HIGH) answered {urgent}"
    );

    // A closed limiter turns calls away with a value the caller can match.
    partner_api.close();
    let err = client
        .clone()
        .oneshot(request("/quote")?)
        .await
        .unwrap_err();
    if let Some(rejected) = err.downcast_ref::<Rejected>() {
        println!("after close(): the call was refused locally, never sent: {rejected}");
    }
    println!(
        "the client's limiter:\n{}",
        describe(&partner_api.snapshot(), "  ")
    );
    Ok(())
}
