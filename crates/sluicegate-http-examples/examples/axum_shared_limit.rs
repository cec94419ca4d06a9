//! An axum server whose two routes share one concurrency limit in front of a slow function:
//! limit the resource, not the route. In front of everything, a rate limit per client IP.
//!
//! `cargo run -p sluicegate-http-examples --example axum_shared_limit` starts the server on a free loopback port, sends
//! it a burst of 60 requests split over both routes, prints what came back, and exits.
//! Add `-- --serve` to keep it running and try it with curl.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, State};
use axum::routing::get;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sluicegate::concurrency::ConcurrencyLimiter;
use sluicegate::keyed::KeyedGcra;
use sluicegate::middleware::http_concurrency::HttpConcurrencyLimitLayer;
use sluicegate::middleware::rate::{PeerIp, RateLimitLayer};
use sluicegate::rate::Quota;
use sluicegate_examples::describe;

/// The slow resource both routes use: a report generator that can take four at a time.
#[derive(Clone, Default)]
struct Reports {
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl Reports {
    async fn generate(&self, what: &str) -> String {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        format!("{what} report\n")
    }
}

async fn daily(State(reports): State<Reports>) -> String {
    reports.generate("daily").await
}

async fn monthly(State(reports): State<Reports>) -> String {
    reports.generate("monthly").await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // One limiter for the resource: 4 at once, 20 more may wait up to 2 s, the rest get 503.
    let generator = ConcurrencyLimiter::builder(4)
        .max_queue(20)
        .queue_timeout(Duration::from_secs(2))
        .build()?;
    let reports = Reports::default();
    // 600 requests a minute per client address (IPv6 by /64), at most 100k clients tracked.
    let per_client: Arc<KeyedGcra<IpAddr>> = Arc::new(KeyedGcra::new(
        Quota::per_minute(600),
        NonZeroUsize::new(100_000).unwrap(),
    ));
    let app = Router::new()
        .route("/reports/daily", get(daily))
        .route("/reports/monthly", get(monthly))
        // `route_layer`: only the routes above are limited; a 404 costs no permit.
        .route_layer(HttpConcurrencyLimitLayer::new(generator.clone()))
        .route("/health", get(|| async { "ok\n" }))
        .with_state(reports.clone())
        .layer(
            RateLimitLayer::new(per_client)
                .keyed_by(PeerIp::from_extension(|c: &ConnectInfo<SocketAddr>| {
                    c.0.ip()
                }))
                .policy_name("per-client"),
        );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}");
    println!(
        "  /reports/daily and /reports/monthly share one limit: 4 at once, 20 more wait up to \
         2 s, the rest get 503"
    );
    println!("  every route: 600 requests a minute per client IP, or 429");
    // `with_connect_info` records each connection's peer address for `PeerIp`.
    let service = app.into_make_service_with_connect_info::<SocketAddr>();
    let server = tokio::spawn(async move { axum::serve(listener, service).await });

    if std::env::args().any(|a| a == "--serve") {
        server.await??;
        return Ok(());
    }

    let statuses = burst(addr, 60).await?;
    let ok = statuses.iter().filter(|(s, _)| *s == 200).count();
    println!(
        "60 requests over two routes: {ok} served, {} answered 503; the generator never ran more \
         than {} at once",
        statuses.len() - ok,
        reports.most.load(Ordering::SeqCst)
    );
    if let Some((_, Some(ratelimit))) = statuses.iter().find(|(s, _)| *s == 200) {
        println!("a served response said: RateLimit: {ratelimit}");
    }
    println!(
        "the generator's limiter:\n{}",
        describe(&generator.snapshot(), "  ")
    );
    Ok(())
}

async fn burst(
    addr: SocketAddr,
    n: usize,
) -> Result<Vec<(u16, Option<String>)>, Box<dyn std::error::Error + Send + Sync>> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..n {
        let client = client.clone();
        let route = if i % 2 == 0 { "daily" } else { "monthly" };
        let uri = format!("http://{addr}/reports/{route}").parse()?;
        calls.spawn(async move {
            let response = client.get(uri).await?;
            let status = response.status().as_u16();
            let ratelimit = response
                .headers()
                .get("ratelimit")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            response.into_body().collect().await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((status, ratelimit))
        });
    }
    let mut statuses = Vec::with_capacity(n);
    for result in calls.join_all().await {
        statuses.push(result?);
    }
    Ok(statuses)
}
