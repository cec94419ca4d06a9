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

/// A gate whose pool `api` gives each `X-Api-Key` 1 request a minute.
async fn per_key_gate(up: &Upstream, name: &str) -> Gate {
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
    serve(name, &text).await
}

#[tokio::test]
async fn a_per_client_rate_keyed_by_header_limits_each_client_apart() {
    let up = Upstream::start().await;
    let gate = per_key_gate(&up, "per-key").await;
    let call = |key: &'static str| request(gate.proxy, req("/fast", &[("x-api-key", key)]));
    assert_eq!(call("alice").await.status, 200);
    assert_eq!(call("bob").await.status, 200);
    let r = call("alice").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("ratelimit-policy"), "\"api-per-client\";q=1;w=60");
}

/// Review 26: a request with two lines of the keyed header was counted under the first and
/// forwarded with both, so a client could make up a new first line for each request while an
/// upstream that reads another line billed the real key: the quota was gone. A request with
/// more than one line now counts under no key, with the requests that have none (one quota
/// between them all).
#[tokio::test]
async fn a_per_client_rate_counts_a_request_with_two_key_lines_under_no_key() {
    let up = Upstream::start().await;
    let gate = per_key_gate(&up, "per-key-lines").await;
    let two = |first: &'static str| {
        request(
            gate.proxy,
            req("/fast", &[("x-api-key", first), ("x-api-key", "alice")]),
        )
    };
    assert_eq!(two("made-up-1").await.status, 200);
    assert_eq!(two("made-up-2").await.status, 429);
    // The requests without the header share that quota.
    assert_eq!(get(gate.proxy, "/fast", "no").await.status, 429);
    // Alice's own, one line, is hers.
    let alice = request(gate.proxy, req("/fast", &[("x-api-key", "alice")])).await;
    assert_eq!(alice.status, 200);
}

/// A pool rated `0/s` (traffic off) answers `429` with a `Retry-After` every client can
/// parse: it said 18446744073709551615 (u64::MAX seconds, "never"), beyond the signed 64-bit
/// integers Go's and Java's clients read it into, and they retried on their own backoff.
#[tokio::test]
async fn a_pool_rated_zero_says_never_in_a_retry_after_clients_can_read() {
    let up = Upstream::start().await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[[pools]]
name = "api"
upstream = "{}"
max_concurrency = 8
rate = "0/s"
[[routes]]
pool = "api"
"#,
        up.url()
    );
    let gate = serve("rate-zero", &text).await;
    let r = get(gate.proxy, "/fast", "x").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), "2147483647");
    assert!(r.header("retry-after").parse::<i32>().is_ok());
    // The `RateLimit` header agrees: no reset before "never" (it said `t=0`, retry now).
    assert_eq!(r.header("ratelimit"), r#""api";r=0;t=2147483647"#);
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
    // Its bounds are shown, so that a limit at one reads as such (review 27, finding 7).
    // AIMD explains nothing beyond its limit: an empty state.
    assert_eq!(
        s["adaptive"],
        serde_json::json!({ "initial": 3, "min": 2, "max": 5, "state": {} }),
        "{s}"
    );
    let metrics = gate.admin_call("GET", "/metrics", None, "").await.body;
    assert!(
        metrics.contains("sluicegate_pool_limit_min{pool=\"api\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("sluicegate_pool_limit_max{pool=\"api\"} 5"),
        "{metrics}"
    );
}

/// `GET /status` says why an adaptive pool's limit sits where it does (review 30): the state
/// its algorithm explains, inside the pool's `adaptive` object — for Little's law at least its
/// phase, the limit it steers and whether requests slow each other — and nothing for a static
/// pool, which has no `adaptive` object. `/metrics` has the cap gauge, with no series while
/// no cap is learnt.
#[tokio::test]
async fn status_explains_an_adaptive_limit_and_not_a_static_one() {
    let up = Upstream::start().await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
[[pools]]
name = "api"
upstream = "{0}"
[pools.adaptive]
algorithm = "littles"
initial = 4
min = 1
max = 50
[[pools]]
name = "fixed"
upstream = "{0}"
max_concurrency = 4
[[routes]]
path_prefix = "/fast"
pool = "api"
[[routes]]
pool = "fixed"
"#,
        up.url()
    );
    let gate = serve("status-state", &text).await;
    for i in 0..20 {
        assert_eq!(get(gate.proxy, "/fast", &i.to_string()).await.status, 200);
    }
    let s = gate.pool("api").await;
    assert_eq!(s["algorithm"], "littles", "{s}");
    let state = &s["adaptive"]["state"];
    let phases = [
        "warming_up",
        "starting",
        "restarting",
        "probing",
        "cooling_down",
        "steady",
    ];
    assert!(
        state["phase"].as_str().is_some_and(|p| phases.contains(&p)),
        "{s}"
    );
    assert_eq!(state["shared"], false, "{s}");
    let steered = state["steered_limit"].as_u64().expect("a steered limit");
    assert!((1..=50).contains(&steered), "{s}");
    assert!(state.get("cap").is_none(), "no cap learnt: {s}");

    let s = gate.pool("fixed").await;
    assert_eq!(s["algorithm"], "static", "{s}");
    assert!(s["adaptive"].is_null(), "{s}");

    let metrics = gate.admin_call("GET", "/metrics", None, "").await.body;
    assert!(
        metrics.contains("# TYPE sluicegate_pool_limit_cap gauge"),
        "{metrics}"
    );
    assert!(!metrics.contains("sluicegate_pool_limit_cap{"), "{metrics}");
}

/// A gate with one pool `api` in front of `up`, its queue timeout 20 s, and an admin API.
async fn serve_api(name: &str, up: &Upstream, max_concurrency: usize, max_queue: usize) -> Gate {
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
[[pools]]
name = "api"
upstream = "{}"
max_concurrency = {max_concurrency}
max_queue = {max_queue}
queue_timeout = "20s"
[[routes]]
pool = "api"
"#,
        up.url()
    );
    serve(name, &text).await
}

/// `n` requests to `/hold` (ids `{prefix}0`, `{prefix}1`, …), each in its own task.
fn hold(gate: &Gate, prefix: &str, n: usize) -> Vec<tokio::task::JoinHandle<support::Reply>> {
    (0..n)
        .map(|i| {
            let (proxy, id) = (gate.proxy, format!("{prefix}{i}"));
            tokio::spawn(async move { get(proxy, "/hold", &id).await })
        })
        .collect()
}

/// `PUT /pools/api/limits` with `body`; it must be taken.
async fn put(gate: &Gate, body: &str) {
    let r = gate
        .admin_call("PUT", "/pools/api/limits", None, body)
        .await;
    assert_eq!(r.status, 200, "{body}: {}", r.body);
}

/// New queue settings need a new limiter; the requests running and queued on the old one
/// carry on, and the two together never exceed the limit.
#[tokio::test]
async fn changing_queue_settings_keeps_waiting_requests_and_the_cap() {
    let up = Upstream::start().await;
    let gate = serve_api("handover", &up, 1, 5).await;
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
    // c waits on the new limiter, behind the slot asked for b (b queued first).
    eventually("c queued", || async {
        gate.pool("api").await["queued"] == 2
    })
    .await;
    assert_eq!(up.current(), 1);
    up.release(3);
    for (n, t) in [("a", a), ("b", b), ("c", c)] {
        let r = t.await.unwrap();
        assert_eq!(r.status, 200, "{n}: {} {:?}", r.body, up.ids());
    }
    assert_eq!(up.max(), 1, "old and new limiter together exceeded the cap");
    assert_eq!(up.ids(), ["a", "b", "c"]);
}

/// Pins the reviewer's defect 1 (cap exceeded across a hand-over): the limit lowered while
/// two run and four wait, the queue settings changed (a new limiter), the limit raised
/// again. The new limiter used to count at most `new max` of the old one's requests, so
/// after the raise it admitted a third while the old one still ran two.
#[tokio::test]
async fn a_limit_raised_after_a_hand_over_still_counts_the_old_limiters_requests() {
    let up = Upstream::start().await;
    let gate = serve_api("handover-raise", &up, 2, 50).await;
    let mut calls = hold(&gate, "old", 6);
    eventually("2 run, 4 wait", || async {
        up.current() == 2 && gate.pool("api").await["queued"] == 4
    })
    .await;
    put(&gate, r#"{"max_concurrency": 1}"#).await;
    put(&gate, r#"{"max_queue": 40}"#).await;
    put(&gate, r#"{"max_concurrency": 2}"#).await;
    calls.extend(hold(&gate, "new", 6));
    // The new six reached the gate: with two running, at least six wait (`queued` counts
    // the new limiter's queue, and the old one's once the two are reported together).
    eventually("the new six queued", || async {
        up.current() + gate.pool("api").await["queued"].as_u64().unwrap() as usize >= 8
    })
    .await;
    assert_eq!(
        up.max(),
        2,
        "old and new limiter together exceeded the limit of 2"
    );
    up.release(12);
    for c in calls {
        assert_eq!(c.await.unwrap().status, 200);
    }
    assert_eq!(
        up.max(),
        2,
        "old and new limiter together exceeded the limit of 2"
    );
    // The old limiter's queue is served before the requests that came after the change.
    let mut first = up.ids()[..6].to_vec();
    first.sort();
    assert_eq!(first, ["old0", "old1", "old2", "old3", "old4", "old5"]);
}

/// Defect 1 under load: limit and queue changes in quick succession while 32 clients keep
/// the pool busy and the upstream lets three requests answer per change. Each queue change
/// hands over to a new limiter while the old ones still run and queue requests; the limit
/// is never above 4, so neither is the upstream's count. A refusal is reported with the
/// gate's `/status` taken right after it (it failed once under load with a `queue_full` for 32
/// clients against queues of 40–46: the new queue held asks for waiters the old limiters had
/// served since the last rebalance, handover125; pinned by
/// `a_waiter_the_old_limiter_served_gives_its_place_in_the_new_queue_back` below).
#[tokio::test]
async fn limit_and_queue_changes_under_load_never_exceed_the_highest_limit() {
    changes_under_load("handover-load", 3).await;
}

/// The same with twelve requests answered per change: more of the requests that run on the
/// old limiters end between two rebalances, each letting an old waiter start in its slot.
/// Before handover125's fix their asks stayed in the new queue and this turned a client
/// away `queue_full` in 3 of 10 runs (`/status`: 22-28 waiting, queues of 41-44); 0 of 90
/// since.
#[tokio::test]
async fn limit_and_queue_changes_under_a_heavier_load_turn_no_client_away() {
    changes_under_load("handover-load-12", 12).await;
}

/// 32 clients on a pool of limit 2 and queue 50, 120 changes of the limit (1-4) and the
/// queue (40-46), `answered` requests let through the upstream after each.
async fn changes_under_load(name: &str, answered: usize) {
    let up = Upstream::start().await;
    let gate = serve_api(name, &up, 2, 50).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The first refusal a client met: the loop below reports it with the gate's `/status` as
    // near the moment as it can (the hand-over chain's queues, for a `queue_full`).
    let refused = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
    let clients: Vec<_> = (0..32)
        .map(|i| {
            let (proxy, stop, refused) = (gate.proxy, stop.clone(), refused.clone());
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let r = get(proxy, "/hold", &format!("c{i}")).await;
                    if r.status != 200 {
                        let mut first = refused.lock().unwrap();
                        first.get_or_insert(format!("c{i}: {} {}", r.status, r.body));
                        break;
                    }
                    n += 1;
                }
                n
            })
        })
        .collect();
    eventually("traffic", || async { up.current() == 2 }).await;
    for i in 0..120_usize {
        let body = if i % 2 == 0 {
            format!(
                r#"{{"max_concurrency": {}}}"#,
                [1, 4, 2, 3, 4, 1][i / 2 % 6]
            )
        } else {
            format!(r#"{{"max_queue": {}}}"#, 40 + i % 7)
        };
        let r = gate
            .admin_call("PUT", "/pools/api/limits", None, &body)
            .await;
        assert_eq!(r.status, 200, "{body}: {}", r.body);
        let first = refused.lock().unwrap().clone();
        if let Some(first) = first {
            let status = gate.admin_call("GET", "/status", None, "").await.body;
            panic!("after change {i} ({body}), 32 clients: {first}\n/status: {status}");
        }
        up.release(answered);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    up.release(1_000_000);
    let mut served = Vec::new();
    for c in clients {
        served.push(c.await.unwrap());
    }
    assert_eq!(*refused.lock().unwrap(), None, "every request is served");
    assert!(
        served.iter().all(|&n| n > 0),
        "every client served: {served:?}"
    );
    assert!(
        up.max() <= 4,
        "{} in flight with a limit never above 4",
        up.max()
    );
}

/// handover125, end to end: the old limiter serves a waiter when its running request ends,
/// in the slot that request held, and until the hand-over's next rebalance (every 20 ms)
/// that waiter's ask stayed in the new limiter's queue. A queue of 2 with one request
/// waiting turned the next one away `queue_full`, when it came before that rebalance. The
/// asks are brought in step when a queue turns a request away, which then asks once more.
#[tokio::test]
async fn a_waiter_the_old_limiter_served_gives_its_place_in_the_new_queue_back() {
    let up = Upstream::start().await;
    let gate = serve_api("handover-stale-ask", &up, 1, 3).await;
    let a = tokio::spawn(get(gate.proxy, "/hold", "a"));
    eventually("a held", || async { up.current() == 1 }).await;
    let waiting = hold(&gate, "w", 2);
    eventually("two queued", || async {
        gate.pool("api").await["queued"] == 2
    })
    .await;
    // A new limiter with a queue of 2: the two waiters' asks take both places.
    put(&gate, r#"{"max_queue": 2}"#).await;
    up.release(1);
    assert_eq!(a.await.unwrap().status, 200);
    eventually("a waiter served on the old limiter", || async {
        up.current() == 1 && gate.pool("api").await["queued"] == 1
    })
    .await;
    // One request waits, for a queue of 2.
    let b = tokio::spawn(get(gate.proxy, "/fast", "b"));
    eventually("b queued or answered", || async {
        b.is_finished() || gate.pool("api").await["queued"] == 2
    })
    .await;
    up.release(2);
    let b = b.await.unwrap();
    assert_eq!(
        b.status, 200,
        "one request waited, for a queue of 2: {}",
        b.body
    );
    for w in waiting {
        assert_eq!(w.await.unwrap().status, 200);
    }
}

/// Pins the reviewer's defect 2: a change of queue settings (a new limiter) set `admitted`,
/// `completed` and `client_gone` back to 0 (and `client_gone` in /metrics) while the other
/// counters went on. They carry over, count the old limiter's requests as they end, and do
/// not count the slots the new limiter holds for them.
#[tokio::test]
async fn counters_carry_over_a_change_of_queue_settings() {
    let up = Upstream::start().await;
    let gate = serve_api("handover-counters", &up, 1, 5).await;
    for id in ["f1", "f2"] {
        assert_eq!(get(gate.proxy, "/fast", id).await.status, 200);
    }
    let a = tokio::spawn(get(gate.proxy, "/hold", "a"));
    eventually("a held", || async { up.current() == 1 }).await;
    let gone = support::raw(gate.proxy, b"GET /hold HTTP/1.1\r\nhost: g\r\n\r\n").await;
    eventually("queued", || async { gate.pool("api").await["queued"] == 1 }).await;
    drop(gone);
    eventually("client_gone", || async {
        gate.pool("api").await["counters"]["client_gone"] == 1
    })
    .await;
    let counters = |admitted: u64, completed: u64| {
        let gate = &gate;
        async move {
            let c = gate.pool("api").await["counters"].clone();
            c["admitted"] == admitted && c["completed"] == completed && c["client_gone"] == 1
        }
    };
    assert!(counters(3, 2).await);
    let r = gate
        .admin_call("PUT", "/pools/api/limits", None, r#"{"max_queue": 3}"#)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let s = gate.pool("api").await;
    assert_eq!(s["max_queue"], 3);
    assert_eq!(s["in_flight"], 1, "{s}");
    assert!(counters(3, 2).await, "{s}");
    let metrics = gate.admin_call("GET", "/metrics", None, "").await.body;
    assert!(
        metrics.contains("sluicegate_requests_total{pool=\"api\",outcome=\"client_gone\"} 1"),
        "{metrics}"
    );
    up.release(1);
    assert_eq!(a.await.unwrap().status, 200);
    eventually("a counted", || counters(3, 3)).await;
    assert_eq!(get(gate.proxy, "/fast", "f3").await.status, 200);
    eventually("f3 counted", || counters(4, 4)).await;
    assert_eq!(gate.pool("api").await["counters"]["forwarded"], 4);
}

/// Pins the reviewer's defect 3: `max_concurrency` 0, the documented kill switch, made every
/// request wait its whole queue timeout and then answered `queue_timeout`. It answers at
/// once: `503`, reason `closed`, `Retry-After`, a body that says an operator closed it, also
/// for what already waited; a limit above 0 lifts it, but not a `close` of the admin API,
/// which only `open` undoes.
#[tokio::test]
async fn the_kill_switch_turns_requests_away_at_once() {
    let up = Upstream::start().await;
    let gate = serve_api("kill-switch", &up, 1, 5).await;
    let a = tokio::spawn(get(gate.proxy, "/hold", "a"));
    eventually("a held", || async { up.current() == 1 }).await;
    let waiting = tokio::spawn(get(gate.proxy, "/hold", "w"));
    eventually("queued", || async { gate.pool("api").await["queued"] == 1 }).await;
    put(&gate, r#"{"max_concurrency": 0}"#).await;
    let turned_away = |r: support::Reply| {
        assert_eq!(r.status, 503, "{}", r.body);
        assert_eq!(r.header("x-sluicegate-reason"), "closed");
        assert!(!r.header("retry-after").is_empty());
        // Not "overloaded: closed" (review 4, finding 10): nothing is overloaded.
        assert!(
            r.body.starts_with("closed: an operator closed"),
            "{}",
            r.body
        );
    };
    turned_away(waiting.await.unwrap());
    turned_away(get(gate.proxy, "/fast", "k").await);
    let s = gate.pool("api").await;
    assert_eq!(
        (s["limit"].as_u64(), s["closed"].as_bool()),
        (Some(0), Some(true)),
        "{s}"
    );
    // Running work is not interrupted.
    up.release(1);
    assert_eq!(a.await.unwrap().status, 200);
    put(&gate, r#"{"max_concurrency": 1}"#).await;
    assert_eq!(get(gate.proxy, "/fast", "b").await.status, 200);
    // A pool closed through the admin API stays closed across the kill switch.
    let r = gate.admin_call("POST", "/pools/api/close", None, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    put(&gate, r#"{"max_concurrency": 0}"#).await;
    put(&gate, r#"{"max_concurrency": 2}"#).await;
    turned_away(get(gate.proxy, "/fast", "c").await);
    let r = gate.admin_call("POST", "/pools/api/open", None, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(get(gate.proxy, "/fast", "d").await.status, 200);
    assert_eq!(up.ids(), ["a", "b", "d"]);
}

/// Defect pinned (review 4, finding 10): requests no pool takes (`404 no_route`, `400
/// bad_host`, `501` for `CONNECT`) were only logged, so a route mistyped in the config showed
/// in monitoring as silence. They are counted gate-wide, in `/status` and `/metrics`.
#[tokio::test]
async fn requests_no_pool_takes_are_counted_gate_wide() {
    let up = Upstream::start().await;
    let text = format!(
        "listen = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"127.0.0.1:0\"\n[[pools]]\nname = \"api\"\nupstream = \"{}\"\nmax_concurrency = 4\n[[routes]]\nhost = \"api.example\"\npool = \"api\"\n",
        up.url()
    );
    let gate = serve("unrouted", &text).await;
    for _ in 0..2 {
        let lost = raw_exchange(&gate, "GET /x HTTP/1.1\r\nHost: other.example\r\n\r\n").await;
        assert!(lost.starts_with("HTTP/1.1 404"), "{lost}");
    }
    let two = raw_exchange(&gate, "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").await;
    assert!(two.starts_with("HTTP/1.1 400"), "{two}");
    let connect = raw_exchange(&gate, "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n").await;
    assert!(connect.starts_with("HTTP/1.1 501"), "{connect}");
    assert_eq!(
        gate.status().await["unrouted"],
        serde_json::json!({
            "no_route": 2,
            "bad_host": 1,
            "bad_path": 0,
            "bad_method": 0,
            "connect_not_supported": 1,
            "transfer_coding_not_supported": 0
        })
    );
    let metrics = gate.admin_call("GET", "/metrics", None, "").await.body;
    for line in [
        "sluicegate_unrouted_total{reason=\"no_route\"} 2",
        "sluicegate_unrouted_total{reason=\"bad_host\"} 1",
        "sluicegate_unrouted_total{reason=\"connect_not_supported\"} 1",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in {metrics}");
    }
    assert_eq!(up.ids().len(), 0, "no upstream saw them");
}

/// Sends `head` on a fresh connection and reads the answer until the gate closes it (or
/// 10 s pass: the answers here say `Connection: close` or are read whole before).
async fn raw_exchange(gate: &Gate, head: &str) -> String {
    use tokio::io::AsyncReadExt;
    let mut s = support::raw(gate.proxy, head.as_bytes()).await;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    // The answer's head and its (short) body; the connection may stay open.
    while let Ok(Ok(n)) =
        tokio::time::timeout(std::time::Duration::from_secs(10), s.read(&mut buf)).await
    {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&out);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if body.len() >= len {
                break;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Defect pinned: `CONNECT` and `OPTIONS *` answered `404 no_route`, as if a route were
/// missing. `CONNECT` (a tunnel, which the gate does not make) is `501` with its reason,
/// and never reaches an upstream; `OPTIONS *` (about the server as a whole) goes to the
/// pool of the first route for its `Host` whose `path_prefix` is `/`.
#[tokio::test]
async fn connect_gets_501_and_options_star_goes_to_the_hosts_whole_route() {
    let echo = |target: &str| {
        let answer = format!(
            "HTTP/1.1 200 OK\r\nAllow: GET, OPTIONS\r\nContent-Length: {}\r\n\r\n{target}",
            target.len()
        );
        (answer.into_bytes(), false)
    };
    let api = support::RawUpstream::start(std::sync::Arc::new(echo)).await;
    let web = support::RawUpstream::start(std::sync::Arc::new(echo)).await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[[pools]]
name = "api"
upstream = "http://{}"
max_concurrency = 4
[[pools]]
name = "web"
upstream = "http://{}"
max_concurrency = 4
[[routes]]
host = "site.example"
path_prefix = "/api"
pool = "api"
[[routes]]
host = "site.example"
pool = "web"
"#,
        api.addr, web.addr
    );
    let gate = serve("connect-options", &text).await;
    let star = raw_exchange(&gate, "OPTIONS * HTTP/1.1\r\nHost: site.example\r\n\r\n").await;
    assert!(star.starts_with("HTTP/1.1 200"), "{star}");
    assert!(
        star.to_ascii_lowercase().contains("allow: get, options"),
        "{star}"
    );
    assert!(star.ends_with("\r\n\r\n*"), "the upstream saw `*`: {star}");
    assert_eq!((api.accepted(), web.accepted()), (0, 1));
    // A host without a route for its whole server: none.
    let other = raw_exchange(&gate, "OPTIONS * HTTP/1.1\r\nHost: other.example\r\n\r\n").await;
    assert!(other.starts_with("HTTP/1.1 404"), "{other}");
    let connect = raw_exchange(
        &gate,
        "CONNECT site.example:443 HTTP/1.1\r\nHost: site.example:443\r\n\r\n",
    )
    .await;
    assert!(connect.starts_with("HTTP/1.1 501"), "{connect}");
    assert!(
        connect
            .to_ascii_lowercase()
            .contains("x-sluicegate-reason: connect_not_supported"),
        "{connect}"
    );
    assert_eq!((api.accepted(), web.accepted()), (0, 1));
}

/// A WebSocket handshake (`Upgrade: websocket`) goes to the upstream like any request, and
/// an upstream that declines it with an ordinary answer (here `200`) has that answer reach
/// the client (`tests/tunnels.rs` has the tunnels a `101` makes). It was answered `501
/// upgrade_not_supported` while the gate made no tunnels; before that it reached the upstream
/// without its `Upgrade`. An `Upgrade` the server may ignore (`h2c`, which clients offer and
/// take no for) still goes through as a plain HTTP/1.1 request.
#[tokio::test]
async fn a_websocket_handshake_reaches_the_upstream_and_an_h2c_offer_goes_through() {
    let ok = |_: &str| {
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
            false,
        )
    };
    let up = support::RawUpstream::start(std::sync::Arc::new(ok)).await;
    let text = format!(
        "listen = [\"127.0.0.1:0\"]\n[[pools]]\nname = \"api\"\nupstream = \"http://{}\"\nmax_concurrency = 4\n[[routes]]\npool = \"api\"\n",
        up.addr
    );
    let gate = serve("websocket", &text).await;
    let ws = raw_exchange(
        &gate,
        "GET /chat HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .await;
    assert!(ws.starts_with("HTTP/1.1 200"), "{ws}");
    assert!(ws.ends_with("\r\n\r\nok"), "{ws}");
    assert_eq!(up.accepted(), 1);
    let h2c = raw_exchange(
        &gate,
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n\
         HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n",
    )
    .await;
    assert!(h2c.starts_with("HTTP/1.1 200"), "{h2c}");
    assert_eq!(up.accepted(), 2);
}

/// `GET target` written byte for byte (no client library to tidy the path), answered
/// whole: the status line, headers and body as text.
async fn raw_get(gate: &Gate, target: &str) -> String {
    use tokio::io::AsyncReadExt;
    let mut s = support::raw(
        gate.proxy,
        format!(
            "GET {target} HTTP/1.1\r\nhost: api.example\r\nx-id: {target}\r\nconnection: close\r\n\r\n"
        )
        .as_bytes(),
    )
    .await;
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// Pins review 4's finding 2: routes matched the raw path, so `/%70ay/x`, `//pay/x` and
/// `/./pay/x` skipped the `/pay` route (and its limits) for the catch-all pool, and the
/// upstream, which decodes and merges, served them as `/pay/x`. Every spelling of a path
/// must take the route of its normal form and reach the upstream in that form; a path
/// above `/`, or a `%2F` whose decoding would change the pool, is refused with 400.
#[tokio::test]
async fn every_spelling_of_a_path_takes_the_route_of_its_normal_form() {
    let pay = Upstream::start().await;
    let rest = Upstream::start().await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[[pools]]
name = "pay"
upstream = "{}"
max_concurrency = 10
[[pools]]
name = "rest"
upstream = "{}"
max_concurrency = 10
[[routes]]
path_prefix = "/pay"
pool = "pay"
[[routes]]
pool = "rest"
"#,
        pay.url(),
        rest.url()
    );
    let gate = serve("spellings", &text).await;
    let spellings = [
        "/pay/x?q=%70",
        "/%70ay/x?q=%70",
        "//pay/x?q=%70",
        "/./pay/x?q=%70",
        "/a/../pay/x?q=%70",
        "/%2e/pay//x?q=%70",
    ];
    for target in spellings {
        let answer = raw_get(&gate, target).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{target}: {answer}");
        // The upstream gets the path the route was chosen on, the query as it was sent.
        assert!(
            answer.contains("\r\n\r\ntarget=/pay/x?q=%70 "),
            "{target}: {answer}"
        );
    }
    assert_eq!(pay.ids(), spellings);
    assert!(rest.ids().is_empty(), "{:?}", rest.ids());

    for (target, why) in [
        ("/../pay/x", "climbs above"),
        ("/a/../../pay/x", "climbs above"),
        ("/%2Fpay/x", "encoded `/`"),
        ("/x/..%2Fpay/x", "encoded `/`"),
        // The authority form names no path; only CONNECT uses it (RFC 9112 §3.2.3): it was
        // routed as the path "" and answered `404 no_route`.
        ("api.example:80", "no path"),
    ] {
        let answer = raw_get(&gate, target).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{target}: {answer}");
        assert!(answer.contains("x-sluicegate-reason: bad_path"), "{answer}");
        assert!(answer.contains(why), "{target}: {answer}");
    }
    // An encoded `/` that leads to the same pool either way is an ordinary name.
    let answer = raw_get(&gate, "/files/a%2fb").await;
    assert!(answer.contains("\r\n\r\ntarget=/files/a%2Fb "), "{answer}");
    assert_eq!(pay.ids().len(), spellings.len());
}

/// A path an upstream reads another way than RFC 3986 does cannot take its request past
/// its route: a raw `\\` (a WHATWG URL parser — Deno, Bun, Next.js, `new URL` in Node — and
/// IIS read it as `/`: `/x\\..\\pay` is `/pay` there; IIS an encoded one, `%5C`, too) or a `;` parameter on a segment (Tomcat
/// and Jetty drop it before they resolve dots: `/x/..;/pay` is `/pay`). The gate routed both
/// on the catch-all, past the `/pay` route's limits, and the upstream served `/pay`. Where the
/// other reading leads to another pool the path is refused (`400 bad_path`), as a `%2F` is;
/// where it leads to the same pool (`/pay;jsessionid=1/x`, `/files/a\\b`) it goes through as
/// it came.
#[tokio::test]
async fn a_backslash_or_a_segment_parameter_cannot_take_a_path_past_its_route() {
    let pay = Upstream::start().await;
    let rest = Upstream::start().await;
    let text = format!(
        r#"listen = ["127.0.0.1:0"]
[[pools]]
name = "pay"
upstream = "{}"
max_concurrency = 10
[[pools]]
name = "rest"
upstream = "{}"
max_concurrency = 10
[[routes]]
path_prefix = "/pay"
pool = "pay"
[[routes]]
pool = "rest"
"#,
        pay.url(),
        rest.url()
    );
    let gate = serve("other-readings", &text).await;
    for (target, why) in [
        ("/x\\..\\pay/x", "`\\`"),
        ("/x/..\\pay/x", "`\\`"),
        ("/..\\pay/x", "`\\`"),
        ("/x/..;/pay/x", "`;`"),
        ("/x;a=b/..;c/pay/x", "`;`"),
        ("/..;/pay/x", "`;`"),
        // IIS decodes escapes before it reads `\` as `/`: `/x%5C..%5Cpay` is `/pay` there.
        ("/x%5C..%5Cpay/x", "`%5C`"),
        ("/x/..%5cpay/x", "`%5C`"),
    ] {
        let answer = raw_get(&gate, target).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{target}: {answer}");
        assert!(answer.contains("x-sluicegate-reason: bad_path"), "{answer}");
        assert!(answer.contains(why), "{target}: {answer}");
    }
    assert!(pay.ids().is_empty(), "{:?}", pay.ids());
    assert!(rest.ids().is_empty(), "{:?}", rest.ids());

    // The same characters where every reading takes the same route: forwarded as sent.
    for (target, pool) in [
        ("/pay;jsessionid=1/x", &pay),
        ("/pay/a\\b", &pay),
        ("/files/a\\b;v=2", &rest),
        ("/x/..;/files", &rest),
        ("/files/a%5Cb", &rest),
    ] {
        let answer = raw_get(&gate, target).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{target}: {answer}");
        assert!(
            answer.contains(&format!("\r\n\r\ntarget={target} ")),
            "{target}: {answer}"
        );
        assert_eq!(pool.ids().last().map(String::as_str), Some(target));
    }
}

/// Pins review 4's finding 4: on a dual-stack listener (`[::]`) an IPv4 client arrives as
/// `::ffff:127.0.0.1`, which no IPv4 `trusted_cidrs` contains, so trusted clients were
/// throttled, and the mapped form went upstream in `X-Forwarded-For` and `Forwarded`.
#[tokio::test]
async fn an_ipv4_client_of_a_dual_stack_listener_is_seen_as_ipv4() {
    let up = Upstream::start().await;
    let text = format!(
        r#"listen = ["[::]:0"]
[admin]
listen = "127.0.0.1:0"
[bypass]
trusted_cidrs = ["127.0.0.0/8"]
[[pools]]
name = "api"
upstream = "{}"
max_concurrency = 8
rate = "1/m"
[[routes]]
pool = "api"
"#,
        up.url()
    );
    let gate = serve("dual-stack", &text).await;
    let v4 = std::net::SocketAddr::from(([127, 0, 0, 1], gate.proxy.port()));
    for i in 0..3 {
        let r = get(v4, "/fast", &i.to_string()).await;
        assert_eq!(r.status, 200, "trusted, past the rate of 1/m: {}", r.body);
        assert!(r.body.contains("xff=127.0.0.1 "), "{}", r.body);
        assert!(r.body.contains("forwarded=for=127.0.0.1;"), "{}", r.body);
    }
    assert_eq!(gate.pool("api").await["counters"]["bypassed"], 3);
}

/// Defect pinned: a client's `Connection: host` made the gate drop `Host` as a header that
/// option names (RFC 9110 §7.6.1), after the route was chosen on it: the upstream got the
/// upstream's own address as `Host`, another host than the one the route and its limits
/// were picked for (a vhost-serving upstream would serve it as its default host). The
/// gate routes on `Host` and keeps it, whatever `Connection` lists.
#[tokio::test]
async fn a_connection_option_cannot_take_away_the_host_the_route_was_chosen_on() {
    let up = Upstream::start().await;
    let text = format!(
        "listen = [\"127.0.0.1:0\"]\n[[pools]]\nname = \"open\"\nupstream = \"{}\"\nmax_concurrency = 4\n\n[[routes]]\nhost = \"open.example\"\npool = \"open\"\n",
        up.url()
    );
    let gate = serve("connection-host", &text).await;
    for connection in ["host", "keep-alive, Host", "x-other, host"] {
        let r = request(
            gate.proxy,
            http::Request::get("/fast")
                .header("host", "open.example")
                .header("connection", connection)
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(
            r.body.contains("host=open.example "),
            "Connection: {connection}: {}",
            r.body
        );
    }
}

/// Defect pinned: a pool renamed by a reload (the same upstream under a new name) got a
/// fresh limiter, so the upstream saw the old name's requests and the new name's limit
/// together: `a` at 2 with 2 running, renamed `b`, forwarded 2 more at once (4). The new
/// pool now carries on the removed one's work, keeping its limiter when the queue
/// settings are the same, handing over to a new one when they change.
#[tokio::test]
async fn a_pool_renamed_by_a_reload_counts_what_the_old_name_runs() {
    for (case, queue) in [("same-queue", 10), ("new-queue", 20)] {
        let up = Upstream::start().await;
        let text = |name: &str, queue: usize| {
            format!(
                "listen = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"127.0.0.1:0\"\n[[pools]]\nname = \"{name}\"\nupstream = \"{}\"\nmax_concurrency = 2\nmax_queue = {queue}\nqueue_timeout = \"20s\"\n[[routes]]\npool = \"{name}\"\n",
                up.url()
            )
        };
        let path = write_config(case, &text("a", 10));
        let gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
        let mut calls = hold(&gate, "a", 2);
        eventually("two run on a", || async { up.current() == 2 }).await;
        support::rewrite(&path, &text("b", queue));
        let r = gate.admin_call("POST", "/reload", None, "").await;
        assert_eq!(r.status, 200, "{case}: {}", r.body);
        calls.extend(hold(&gate, "b", 2));
        eventually("the two new ones forwarded or queued", || async {
            let queued = gate.pool("b").await["queued"].as_u64().unwrap() as usize;
            up.current() + queued >= 4
        })
        .await;
        assert_eq!(
            up.current(),
            2,
            "{case}: the upstream sees the old name's and the new name's limit"
        );
        let b = gate.pool("b").await;
        assert_eq!(
            (b["in_flight"].as_u64(), b["queued"].as_u64()),
            (Some(2), Some(2)),
            "{case}: {b}"
        );
        up.release(4);
        for c in calls {
            assert_eq!(c.await.unwrap().status, 200, "{case}");
        }
        assert_eq!(up.max(), 2, "{case}");
        // The old name's first (they ran), then the new name's.
        let mut ids = up.ids();
        ids[..2].sort();
        ids[2..].sort();
        assert_eq!(ids, ["a0", "a1", "b0", "b1"], "{case}");
    }
}

/// Defect pinned (gate110): a reload that removed a pool while it ran one request and queued
/// two showed an idle gate — `/status` and `/metrics` dropped the pool at once while the gate
/// still ran and queued its requests (as the drain promises). A removed pool is now shown
/// under `removed_pools` and keeps its series until its last request ends.
#[tokio::test]
async fn a_pool_removed_by_a_reload_is_shown_until_its_requests_end() {
    let up = Upstream::start().await;
    let elsewhere = Upstream::start().await;
    let text = |name: &str, url: &str| {
        format!(
            "listen = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"127.0.0.1:0\"\n[[pools]]\nname = \"{name}\"\nupstream = \"{url}\"\nmax_concurrency = 1\nmax_queue = 10\nqueue_timeout = \"20s\"\n[[routes]]\npool = \"{name}\"\n"
        )
    };
    let path = write_config("removed-shown", &text("a", &up.url()));
    let gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
    let calls = hold(&gate, "a", 3);
    eventually("one runs and two wait on a", || async {
        gate.pool("a").await["queued"].as_u64() == Some(2)
    })
    .await;
    support::rewrite(&path, &text("other", &elsewhere.url()));
    let r = gate.admin_call("POST", "/reload", None, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let status = gate.status().await;
    assert!(status["pools"]["a"].is_null(), "{status}");
    let a = &status["removed_pools"]["a"];
    assert_eq!(
        (a["in_flight"].as_u64(), a["queued"].as_u64()),
        (Some(1), Some(2)),
        "{status}"
    );
    let metrics = gate.admin_call("GET", "/metrics", None, "").await.body;
    for line in [
        "sluicegate_pool_in_flight{pool=\"a\"} 1",
        "sluicegate_pool_queued{pool=\"a\"} 2",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
    up.release(3);
    for c in calls {
        assert_eq!(c.await.unwrap().status, 200);
    }
    eventually("the removed pool goes once idle", || async {
        gate.status().await["removed_pools"]
            .as_object()
            .is_some_and(serde_json::Map::is_empty)
    })
    .await;
    let metrics = gate.admin_call("GET", "/metrics", None, "").await.body;
    assert!(!metrics.contains("pool=\"a\""), "{metrics}");
}

/// As above, across two reloads: a pool removed while its requests run, then added back
/// (under its name or another, with its upstream) by the next reload while they still run,
/// carries on the removed one; it was built fresh and let the upstream see twice the limit.
#[tokio::test]
async fn a_pool_removed_then_added_back_counts_what_it_still_runs() {
    for back in ["a", "b"] {
        let up = Upstream::start().await;
        let elsewhere = Upstream::start().await;
        let text = |name: &str, url: &str| {
            format!(
                "listen = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"127.0.0.1:0\"\n[[pools]]\nname = \"{name}\"\nupstream = \"{url}\"\nmax_concurrency = 2\nmax_queue = 10\nqueue_timeout = \"20s\"\n[[routes]]\npool = \"{name}\"\n"
            )
        };
        let path = write_config(back, &text("a", &up.url()));
        let gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
        let mut calls = hold(&gate, "a", 2);
        eventually("two run on a", || async { up.current() == 2 }).await;
        for (name, url) in [("other", elsewhere.url()), (back, up.url())] {
            support::rewrite(&path, &text(name, &url));
            let r = gate.admin_call("POST", "/reload", None, "").await;
            assert_eq!(r.status, 200, "{back}: {}", r.body);
        }
        calls.extend(hold(&gate, "b", 2));
        eventually("the two new ones forwarded or queued", || async {
            let queued = gate.pool(back).await["queued"].as_u64().unwrap() as usize;
            up.current() + queued >= 4
        })
        .await;
        assert_eq!(up.current(), 2, "{back}: the upstream sees twice the limit");
        up.release(4);
        for c in calls {
            assert_eq!(c.await.unwrap().status, 200, "{back}");
        }
        assert_eq!(up.max(), 2, "{back}");
        assert!(elsewhere.ids().is_empty());
    }
}
