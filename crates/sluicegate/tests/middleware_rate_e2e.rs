//! The rate layer on a real axum server (loopback, ephemeral port): keyed by the peer
//! address from axum's `ConnectInfo`, stacked with the concurrency layer.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::routing::get;
use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sluicegate::concurrency::ConcurrencyLimiter;
use sluicegate::http::RatePolicy;
use sluicegate::middleware::http_concurrency::HttpConcurrencyLimitLayer;
use sluicegate::middleware::rate::{PeerIp, RateCheck, RateLimitLayer};
use sluicegate::rate::Decision;
use tower::ServiceBuilder;

/// `limit` requests per key, never reset: enough to see the layer's answers.
struct PerKey {
    limit: u32,
    used: Mutex<HashMap<IpAddr, u32>>,
}

impl RateCheck<IpAddr> for PerKey {
    fn check(&self, key: &IpAddr) -> Decision {
        let mut used = self.used.lock().unwrap();
        let n = used.entry(*key).or_default();
        let window = Duration::from_secs(60);
        if *n < self.limit {
            *n += 1;
            Decision::allow(self.limit, self.limit - *n, window)
        } else {
            Decision::deny(self.limit, 0, Duration::from_millis(30_500), window)
        }
    }

    fn policy(&self) -> Option<RatePolicy> {
        Some(RatePolicy::new(
            u64::from(self.limit),
            Duration::from_secs(60),
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_layer_answers_429_per_client_ip_over_real_http() {
    let rate = Arc::new(PerKey {
        limit: 3,
        used: Mutex::new(HashMap::new()),
    });
    let app = Router::new().route("/", get(|| async { "hello" })).layer(
        ServiceBuilder::new()
            .layer(
                RateLimitLayer::new(rate.clone())
                    .keyed_by(PeerIp::from_extension(|c: &ConnectInfo<SocketAddr>| {
                        c.0.ip()
                    }))
                    .policy_name("per-ip"),
            )
            .layer(HttpConcurrencyLimitLayer::new(ConcurrencyLimiter::new(4))),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let service = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, service).await.unwrap()
    });

    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let uri: http::Uri = format!("http://{addr}/").parse().unwrap();
    let mut seen = Vec::new();
    for _ in 0..5 {
        let response = tokio::time::timeout(Duration::from_secs(30), client.get(uri.clone()))
            .await
            .unwrap()
            .unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        seen.push((parts, body));
    }

    for (i, (parts, body)) in seen.iter().take(3).enumerate() {
        assert_eq!(parts.status, StatusCode::OK);
        assert_eq!(body.as_ref(), b"hello");
        assert_eq!(
            parts.headers["ratelimit"],
            format!("\"per-ip\";r={};t=60", 2 - i)
        );
        assert_eq!(parts.headers["ratelimit-policy"], "\"per-ip\";q=3;w=60");
    }
    for (parts, body) in &seen[3..] {
        assert_eq!(parts.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(parts.headers["retry-after"], "31");
        assert_eq!(parts.headers["ratelimit"], "\"per-ip\";r=0;t=60");
        assert!(body.starts_with(b"rate limited"));
    }
    let used = rate.used.lock().unwrap();
    assert_eq!(used.get(&"127.0.0.1".parse::<IpAddr>().unwrap()), Some(&3));
}
