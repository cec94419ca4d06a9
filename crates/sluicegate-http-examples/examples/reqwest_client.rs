//! reqwest behind the client layer: every call to a partner API goes through one limiter,
//! with per-request bypass and priority set as extensions of an `http::Request`.
//!
//! reqwest's `Client` is a tower `Service<reqwest::Request>`, but a `reqwest::Request` has no
//! extensions to carry `Bypass` or `Priority`. So the stack takes `http::Request`s, the
//! client layer reads their extensions, and a small adapter turns each into a
//! `reqwest::Request` at the bottom.
//!
//! `cargo run -p sluicegate-http-examples --example reqwest_client` runs it against a local server and exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use sluicegate::concurrency::{ConcurrencyLimiter, Priority};
use sluicegate::middleware::client::{Bypass, ClientLimitLayer};
use sluicegate_examples::describe;
use tower::{ServiceBuilder, ServiceExt, service_fn};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Default)]
struct Gauge {
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

async fn slow(State(g): State<Gauge>) -> &'static str {
    let now = g.now.fetch_add(1, Ordering::SeqCst) + 1;
    g.most.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(5)).await;
    g.now.fetch_sub(1, Ordering::SeqCst);
    "ok"
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let gauge = Gauge::default();
    let app = Router::new()
        .route("/quote", get(slow))
        .route("/health", get(|| async { "ok" }))
        .with_state(gauge.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    let partner_api = ConcurrencyLimiter::builder(4).max_queue(1000).build()?;
    let reqwest_client = reqwest::Client::new();
    let client = ServiceBuilder::new()
        .layer(ClientLimitLayer::new(partner_api.clone()))
        .service(service_fn(move |req: http::Request<reqwest::Body>| {
            let client = reqwest_client.clone();
            async move { client.execute(reqwest::Request::try_from(req)?).await }
        }));
    let request = |path: &str| {
        http::Request::get(format!("http://{addr}{path}")).body(reqwest::Body::from(""))
    };

    let mut calls = tokio::task::JoinSet::new();
    for i in 0..100 {
        let mut req = request("/quote")?;
        if i % 10 == 0 {
            req.extensions_mut().insert(Priority::HIGH);
        }
        calls.spawn(client.clone().oneshot(req));
    }
    let ok = calls
        .join_all()
        .await
        .into_iter()
        .filter(|r| r.as_ref().is_ok_and(|r| r.status().is_success()))
        .count();
    println!("the client layer: 4 calls in flight, up to 1000 more wait; every 10th is urgent");
    println!(
        "100 reqwest calls at once: {ok} succeeded, the server never saw more than {} at once",
        gauge.most.load(Ordering::SeqCst)
    );

    partner_api.set_max(0)?; // the kill switch
    let mut health = request("/health")?;
    health.extensions_mut().insert(Bypass);
    let status = client.clone().oneshot(health).await?.status();
    println!("kill switch on (set_max(0)): the health check (Bypass) still answered {status}");
    println!(
        "the client's limiter:\n{}",
        describe(&partner_api.snapshot(), "  ")
    );
    Ok(())
}
