//! End to end, `[pools.per_key_rate] scope = "global"`: two `sluicegate` processes sharing one
//! real `redis-server`, a client's requests spread over both (as a balancer spreads them),
//! and what they do while Redis is down.

mod support;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use support::{Gate, RedisServer, Reply, Upstream, request, write_config};

/// Per client: one a minute, bursts of `BURST` — nothing refills while a test runs.
const BURST: u32 = 4;

/// Two gates' config: pool `api` (local concurrency, no pool rate) with a per-client rate
/// of `scope` keyed on `key`, on the store `redis`; `extra` goes into the pool.
fn config(redis: &RedisServer, upstream: &Upstream, scope: &str, key: &str, extra: &str) -> String {
    format!(
        r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
[store]
redis = "{}"
instances = 2
budget = "5s"
[[pools]]
name = "api"
upstream = "{}"
max_concurrency = 100
{extra}
[pools.per_key_rate]
rate = "1/m"
burst = {BURST}
key = "{key}"
scope = "{scope}"
[[routes]]
pool = "api"
"#,
        redis.url(),
        upstream.url()
    )
}

async fn two_gates(name: &str, text: &str) -> [Gate; 2] {
    let path = write_config(name, text);
    let path = path.to_str().unwrap();
    [
        Gate::start(&["serve", "--config", path]).await,
        Gate::start(&["serve", "--config", path]).await,
    ]
}

/// `GET /fast` to `gate` with `x-api-key: key` (when given).
async fn send(gate: &Gate, key: Option<&str>) -> Reply {
    let mut req = Request::get("/fast").header("host", "gate.test");
    if let Some(key) = key {
        req = req.header("x-api-key", key);
    }
    request(gate.proxy, req.body(Full::new(Bytes::new())).unwrap()).await
}

/// Ten requests of one client, alternating between the gates (round robin, as nginx's
/// default): how many each gate answered `200`, every other answer checked to be the
/// per-client `429`.
async fn burst_of_ten(gates: &[Gate; 2], key: Option<&str>) -> [u32; 2] {
    let mut ok = [0; 2];
    for i in 0..10 {
        let r = send(&gates[i % 2], key).await;
        match r.status.as_u16() {
            200 => ok[i % 2] += 1,
            429 => {
                assert_eq!(r.header("x-sluicegate-reason"), "rate_limited");
                assert!(r.header("retry-after").parse::<u64>().unwrap() > 0);
                let policy = r.header("ratelimit-policy");
                assert!(
                    policy.starts_with("\"api-per-client\";q=1;w=60"),
                    "{policy}"
                );
            }
            other => panic!("unexpected {other}: {}", r.body),
        }
    }
    ok
}

/// The gap (trial117): behind a balancer spreading a client over two gates, a local
/// per-client rate gave the client its burst in each gate — 2 × 4 of 10. Global, it gets
/// its burst once, whichever gate answers; the counts and the store show where.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_burst_across_two_gates_gets_the_rate_once() {
    let redis = RedisServer::start();
    let upstream = Upstream::start().await;

    let local = two_gates(
        "local",
        &config(&redis, &upstream, "local", "client_ip", ""),
    )
    .await;
    assert_eq!(
        burst_of_ten(&local, None).await,
        [4, 4],
        "local: each gate's own"
    );
    drop(local);

    let text = config(&redis, &upstream, "global", "client_ip", "");
    let gates = two_gates("global", &text).await;
    let ok = burst_of_ten(&gates, None).await;
    assert_eq!(
        ok[0] + ok[1],
        BURST,
        "the burst once, across both gates: {ok:?}"
    );
    assert_eq!(ok, [2, 2], "alternating: each gate admits its turns");
    for g in &gates {
        let pool = g.pool("api").await;
        let k = &pool["per_key_rate"];
        assert_eq!(k["scope"], "global", "{k}");
        assert_eq!(k["rate"], "1/m", "{k}");
        assert_eq!(k["burst"], BURST, "{k}");
        assert_eq!(k["keys"], 0, "no fallback, no client kept here: {k}");
        assert_eq!(pool["scope"], "local", "the pool's own limits stay local");
        assert_eq!(pool["counters"]["rate_limited"], 3, "{pool}");
        let store = &g.status().await["store"];
        assert_eq!(store["fallbacks"], 0, "{store}");
        let metrics = g.admin_call("GET", "/metrics", None, "").await.body;
        assert!(
            metrics.contains(r#"sluicegate_requests_total{pool="api",outcome="rate_limited"} 3"#),
            "{metrics}"
        );
    }
    // One key in Redis for the one client (127.0.0.1), under the pool's name.
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query(&mut redis_conn(&redis))
        .unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(keys[0].starts_with("{sluicegate:api:") && keys[0].ends_with("}:ktatf64"));
}

/// Keyed on a header: a key longer than the 64 bytes the local rate keeps as they are (it
/// keeps a longer one as a digest under a secret of its own process, which another gate
/// cannot compute) is still one client in both gates; a hostile value (braces, colons, 8 KiB)
/// is a client of its own with a small key in Redis; two clients are apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_key_of_any_length_is_one_client_across_gates() {
    let redis = RedisServer::start();
    let upstream = Upstream::start().await;
    let text = config(&redis, &upstream, "global", "header:x-api-key", "");
    let gates = two_gates("header", &text).await;
    let long = "k".repeat(200);
    let ok = burst_of_ten(&gates, Some(&long)).await;
    assert_eq!(ok[0] + ok[1], BURST, "{ok:?}");
    let hostile = format!("{{sluicegate:api}}:{}", "}{:".repeat(2700));
    let ok = burst_of_ten(&gates, Some(&hostile)).await;
    assert_eq!(ok[0] + ok[1], BURST, "{ok:?}");
    // Another client, and requests without the header (one key for them all).
    assert_eq!(send(&gates[0], Some("other")).await.status, 200);
    assert_eq!(send(&gates[1], None).await.status, 200);
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query(&mut redis_conn(&redis))
        .unwrap();
    assert_eq!(keys.len(), 4, "{keys:?}");
    for k in keys {
        assert_eq!(k.len(), "{sluicegate:api:}:ktatf64".len() + 32, "{k}");
    }
}

/// Redis killed: the `local` policy (the default) gives the client `1 / instances` of its
/// burst in each gate — its rate once in all — without waiting on the dead Redis; `deny`
/// answers `503 store_unavailable`, not `429`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_redis_is_down_each_gate_admits_its_share_of_a_client() {
    let mut redis = RedisServer::start();
    let upstream = Upstream::start().await;
    let text = config(&redis, &upstream, "global", "client_ip", "");
    let gates = two_gates("outage", &text).await;
    redis.kill();
    let ok = burst_of_ten(&gates, None).await;
    assert_eq!(ok, [2, 2], "half the burst in each gate");
    for g in &gates {
        let pool = g.pool("api").await;
        assert_eq!(
            pool["per_key_rate"]["keys"], 1,
            "the client kept here: {pool}"
        );
        let store = &g.status().await["store"];
        assert_eq!(store["up"], false, "{store}");
        assert!(store["fallbacks"].as_u64().unwrap() >= 5, "{store}");
    }
    drop(gates);

    let text = config(
        &redis,
        &upstream,
        "global",
        "client_ip",
        "on_redis_failure = \"deny\"",
    );
    let gates = two_gates("outage-deny", &text).await;
    let r = send(&gates[0], None).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.header("x-sluicegate-reason"), "store_unavailable");
    assert_eq!(
        gates[0].pool("api").await["counters"]["store_unavailable"],
        1
    );
}

/// A reload moves a per-client rate between the gate and the store: to local, the client
/// starts afresh in the gate; back to global, Redis still holds what it spent there (its
/// key outlives the reload), so it is still limited — not given a new burst.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_moves_the_per_key_rate_between_the_gate_and_the_store() {
    let redis = RedisServer::start();
    let upstream = Upstream::start().await;
    let global = config(&redis, &upstream, "global", "client_ip", "");
    let file = write_config("reload-scope", &global);
    let gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    let statuses = |n: usize| {
        let gate = &gate;
        async move {
            let mut out = Vec::new();
            for _ in 0..n {
                out.push(send(gate, None).await.status.as_u16());
            }
            out
        }
    };
    assert_eq!(
        statuses(5).await,
        [200, 200, 200, 200, 429],
        "global: the burst of 4"
    );

    for (scope, expected, why) in [
        ("local", &[200, 200, 200, 200, 429][..], "local: afresh"),
        ("global", &[429, 429], "global again: Redis kept its state"),
    ] {
        support::rewrite(&file, &config(&redis, &upstream, scope, "client_ip", ""));
        let r = gate.admin_call("POST", "/reload", None, "").await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(gate.pool("api").await["per_key_rate"]["scope"], scope);
        assert_eq!(statuses(expected.len()).await, expected, "{why}");
    }
}

/// `check` refuses a global per-client rate without a store, at the setting, saying what to
/// add; and `on_redis_failure` on a local pool whose per-client rate is global is taken.
#[tokio::test]
async fn check_wants_a_store_for_a_global_per_key_rate() {
    let text = "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9\"\nmax_concurrency = 1\n\
                on_redis_failure = \"deny\"\n[pools.per_key_rate]\nrate = \"5/s\"\nscope = \"global\"\n\
                [[routes]]\npool = \"api\"\n";
    let path = write_config("no-store", text);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluicegate"))
        .args(["check", "--config", path.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{err}");
    assert!(err.contains(":8:9: "), "at `scope`'s value: {err}");
    assert!(
        err.contains("`[pools.per_key_rate] scope = \"global\"` keeps each client's rate in the store, and there is none: add `[store]`"),
        "{err}"
    );
}

fn redis_conn(redis: &RedisServer) -> redis::Connection {
    redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap()
}
