//! End to end, what a config file can say about pools: routes sharing a pool, bypass rules,
//! per-client rates, adaptive limits, and queue settings changed while requests wait.

mod support;

use bytes::Bytes;
use http_body_util::Full;
use support::{Gate, Upstream, eventually, get, request, write_config};

fn req(path: &str, headers: &[(&str, &str)]) -> http::Request<Full<Bytes>> {
    let mut b = http::Request::get(path).header("host", "api.example");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Full::new(Bytes::new())).unwrap()
}

async fn serve(name: &str, text: &str) -> Gate {
    let path = write_config(name, text);
    Gate::start(&["serve", "--config", path.to_str().unwrap()]).await
}

#[tokio::test]
async fn routes_pick_pools_and_two_routes_share_one_limit() {
    let a = Upstream::start().await;
    let b = Upstream::start().await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
[[pools]]
name = "slow"
upstream = "{}"
max_concurrency = 1
max_queue = 5
[[pools]]
name = "other"
upstream = "{}"
max_concurrency = 4
[[routes]]
path_prefix = "/hold"
pool = "slow"
[[routes]]
host = "API.example"
path_prefix = "/fast"
methods = ["GET"]
pool = "slow"
[[routes]]
host = "other.example"
pool = "other"
"#,
        a.url(),
        b.url()
    );
    let gate = serve("routes", &text).await;
    let held = tokio::spawn(get(gate.proxy, "/hold", "h"));
    eventually("held", || async { a.current() == 1 }).await;
    // /fast on api.example shares the slow pool's one slot: it queues.
    let shared = tokio::spawn(support::request(gate.proxy, req("/fast", &[("x-id", "s")])));
    eventually("queued", || async {
        gate.pool("slow").await["queued"] == 1
    })
    .await;
    let other = support::request(
        gate.proxy,
        http::Request::get("/fast")
            .header("host", "other.example:80")
            .header("x-id", "o")
            .body(Full::new(Bytes::new()))
            .unwrap(),
    )
    .await;
    assert_eq!(other.status, 200);
    assert_eq!(b.ids(), ["o"]);
    let none = support::request(
        gate.proxy,
        http::Request::post("/fast")
            .header("host", "api.example")
            .body(Full::new(Bytes::new()))
            .unwrap(),
    )
    .await;
    assert_eq!(none.status, 404);
    assert_eq!(none.header("x-sluicegate-reason"), "no_route");
    a.release(1);
    assert_eq!(held.await.unwrap().status, 200);
    assert_eq!(shared.await.unwrap().status, 200);
    assert_eq!(a.max(), 1);
}

#[tokio::test]
async fn bypass_by_secret_header_or_trusted_network_skips_a_closed_pool() {
    let up = Upstream::start().await;
    let secret = write_config("bypass-secret", "open-sesame\n");
    let text = |cidrs: &str| {
        format!(
            r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
[bypass]
trusted_cidrs = [{cidrs}]
header = "x-bypass"
secret_file = "{}"
[[pools]]
name = "api"
upstream = "{}"
max_concurrency = 0
max_queue = 0
[[routes]]
pool = "api"
"#,
            secret.display(),
            up.url()
        )
    };
    let gate = serve("bypass", &text("")).await;
    assert_eq!(get(gate.proxy, "/fast", "no").await.status, 503);
    let wrong = request(gate.proxy, req("/fast", &[("x-bypass", "open-sesamE")])).await;
    assert_eq!(wrong.status, 503);
    let right = request(gate.proxy, req("/fast", &[("x-bypass", "open-sesame")])).await;
    assert_eq!(right.status, 200);
    assert!(
        right.body.contains("bypass=-"),
        "the secret reached the upstream: {}",
        right.body
    );
    assert_eq!(gate.pool("api").await["counters"]["bypassed"], 1);
    drop(gate);

    let gate = serve("bypass-cidr", &text("\"127.0.0.0/8\"")).await;
    assert_eq!(get(gate.proxy, "/fast", "trusted").await.status, 200);
}

#[tokio::test]
async fn a_per_client_rate_keyed_by_header_limits_each_client_apart() {
    let up = Upstream::start().await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[[pools]]
name = "api"
upstream = "{}"
max_concurrency = 8
[pools.per_key_rate]
rate = "1/m"
key = "header:x-api-key"
[[routes]]
pool = "api"
"#,
        up.url()
    );
    let gate = serve("per-key", &text).await;
    let call = |key: &'static str| request(gate.proxy, req("/fast", &[("x-api-key", key)]));
    assert_eq!(call("alice").await.status, 200);
    assert_eq!(call("bob").await.status, 200);
    let r = call("alice").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("ratelimit-policy"), "\"api-per-client\";q=1;w=60");
}

#[tokio::test]
async fn an_adaptive_pool_forwards_within_its_bounds() {
    let up = Upstream::start().await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
[[pools]]
name = "api"
upstream = "{}"
[pools.adaptive]
algorithm = "aimd"
initial = 3
min = 2
max = 5
[[routes]]
pool = "api"
"#,
        up.url()
    );
    let gate = serve("adaptive", &text).await;
    for i in 0..20 {
        assert_eq!(get(gate.proxy, "/fast", &i.to_string()).await.status, 200);
    }
    let s = gate.pool("api").await;
    assert_eq!(s["algorithm"], "aimd");
    let limit = s["limit"].as_u64().unwrap();
    assert!((2..=5).contains(&limit), "{s}");
}

/// New queue settings need a new limiter; the requests running and queued on the old one
/// carry on, and the two together never exceed the limit.
#[tokio::test]
async fn changing_queue_settings_keeps_waiting_requests_and_the_cap() {
    let up = Upstream::start().await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
[[pools]]
name = "api"
upstream = "{}"
max_concurrency = 1
max_queue = 5
queue_timeout = "20s"
[[routes]]
pool = "api"
"#,
        up.url()
    );
    let gate = serve("handover", &text).await;
    let a = tokio::spawn(get(gate.proxy, "/hold", "a"));
    eventually("a held", || async { up.current() == 1 }).await;
    let b = tokio::spawn(get(gate.proxy, "/hold", "b"));
    eventually("b queued", || async {
        gate.pool("api").await["queued"] == 1
    })
    .await;
    let r = gate
        .admin_call("PUT", "/pools/api/limits", None, r#"{"max_queue": 3}"#)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(gate.pool("api").await["max_queue"], 3);
    let c = tokio::spawn(get(gate.proxy, "/hold", "c"));
    eventually("c queued", || async {
        gate.pool("api").await["queued"] == 1
    })
    .await;
    assert_eq!(up.current(), 1);
    up.release(3);
    for t in [a, b, c] {
        assert_eq!(t.await.unwrap().status, 200);
    }
    assert_eq!(up.max(), 1, "old and new limiter together exceeded the cap");
    assert_eq!(up.ids(), ["a", "b", "c"]);
}
