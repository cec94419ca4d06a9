//! End to end, global pools: three `sluicegate` processes sharing one real `redis-server`
//! through `[store]` and `scope = "global"`, and what they do when Redis dies and comes back.

mod support;

use std::time::{Duration, Instant};

use support::{Gate, RedisServer, Upstream, eventually, get, write_config};

/// Global concurrency limit of the shared pool.
const N: usize = 4;
/// Global rate of the shared pool: `RATE` per second, bursts of `BURST`.
const RATE: u32 = 10;
const BURST: u32 = 30;

/// The store and the shared pool (routes are up to the test); `extra` goes into `[store]`.
fn config(redis: &RedisServer, upstream: &Upstream, extra: &str) -> String {
    format!(
        r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
[store]
redis = "{}"
instances = 3
{extra}
[[pools]]
name = "shared"
upstream = "{}"
scope = "global"
max_concurrency = {N}
rate = "{RATE}/s"
burst = {BURST}
"#,
        redis.url(),
        upstream.url()
    )
}

async fn gates(n: usize, name: &str, text: &str) -> Vec<Gate> {
    let path = write_config(name, text);
    let mut gates = Vec::new();
    for _ in 0..n {
        gates.push(Gate::start(&["serve", "--config", path.to_str().unwrap()]).await);
    }
    gates
}

async fn queued(gates: &[Gate]) -> u64 {
    let mut sum = 0;
    for g in gates {
        sum += g.pool("shared").await["queued"].as_u64().unwrap();
    }
    sum
}

/// Sends `N` requests the upstream holds through `gate`, and waits until they are there.
async fn hold_all(
    gate: &Gate,
    upstream: &Upstream,
) -> Vec<tokio::task::JoinHandle<support::Reply>> {
    let mut held = Vec::new();
    for j in 0..N {
        let addr = gate.proxy;
        held.push(tokio::spawn(async move {
            get(addr, "/hold", &format!("h{j}")).await
        }));
    }
    eventually("N requests at the upstream", || async {
        upstream.current() == N
    })
    .await;
    held
}

/// A budget for tests about sharing, not about a slow machine's fallbacks (which assert that
/// none happened): 5 s, since a loaded CI machine can stall a gate process for over a
/// second, and it costs nothing while Redis answers.
const BUDGET: &str = "budget = \"5s\"";

/// Three gates, one Redis: the upstream never sees more than `N` at once and does see `N`;
/// the requests admitted by the rate over a measured span stay within GCRA's bound for
/// the global rate (three local limits would admit three bursts).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_gates_share_one_global_rate_and_one_global_concurrency_limit() {
    let redis = RedisServer::start();
    let upstream = Upstream::start().await;
    let text = config(&redis, &upstream, BUDGET) + "[[routes]]\npool = \"shared\"\n";
    let gates = gates(3, "shared", &text).await;

    // Concurrency: 5 held requests through each gate, 15 in all.
    let mut held = Vec::new();
    for (i, g) in gates.iter().enumerate() {
        for j in 0..5 {
            let addr = g.proxy;
            held.push(tokio::spawn(async move {
                get(addr, "/hold", &format!("{i}-{j}")).await
            }));
        }
    }
    eventually("N requests at the upstream and the rest queued", || async {
        upstream.current() == N && queued(&gates).await == 15 - N as u64
    })
    .await;
    // Let them through one at a time: each release frees a global permit for a waiter in
    // any gate, and the upstream never sees more than N.
    for done in 1..=15 {
        upstream.release(1);
        eventually("a released request ends", || async {
            upstream.ended() >= done
        })
        .await;
        assert!(upstream.max() <= N, "upstream saw {}", upstream.max());
    }
    for h in held {
        assert_eq!(h.await.unwrap().status, 200);
    }
    assert_eq!(
        upstream.max(),
        N,
        "the global limit was reached, never exceeded"
    );

    // Rate: 40 requests through each gate at once. Whatever the machine's speed, what the
    // rate let through between the first send and the last answer is at most
    // BURST + RATE × span (GCRA), far below what three local limits would allow.
    let start = Instant::now();
    let mut sent = Vec::new();
    for g in &gates {
        for i in 0..40 {
            let addr = g.proxy;
            sent.push(tokio::spawn(async move {
                get(addr, "/fast", &format!("r{i}")).await
            }));
        }
    }
    let (mut ok, mut limited) = (0u32, 0u32);
    for s in sent {
        let r = s.await.unwrap();
        match r.status.as_u16() {
            200 => ok += 1,
            429 => {
                assert_eq!(r.header("x-sluicegate-reason"), "rate_limited");
                limited += 1;
            }
            other => panic!("unexpected {other}: {}", r.body),
        }
    }
    let span = start.elapsed().as_secs_f64();
    let bound = f64::from(BURST) + f64::from(RATE) * span + 1.0;
    assert!(
        f64::from(ok) <= bound,
        "{ok} admitted in {span:.2} s; the global rate allows {bound:.1}"
    );
    // The 15 held requests above took 15 of the burst; what was left still went through.
    assert!(ok >= BURST - 15, "only {ok} admitted");
    assert_eq!(ok + limited, 120);
    assert!(upstream.max() <= N);
    for g in &gates {
        let store = &g.status().await["store"];
        assert_eq!(store["up"], true, "{store}");
        assert_eq!(store["fallbacks"], 0, "no decision fell back: {store}");
        assert_eq!(g.pool("shared").await["scope"], "global");
    }
}

/// Redis killed while the gates run: decisions fall back per policy at once (no request
/// waits longer than the budget on the dead Redis), counted in `/status` and `/metrics`;
/// Redis restarted on the same port: the gates find it by themselves and limits are global
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gates_fall_back_per_policy_while_redis_is_down_and_recover_by_themselves() {
    let mut redis = RedisServer::start();
    let upstream = Upstream::start().await;
    let text = format!(
        r#"{}
[[pools]]
name = "closed-on-failure"
upstream = "{}"
scope = "global"
max_concurrency = 2
rate = "1000/s"
on_redis_failure = "deny"
[[routes]]
path_prefix = "/deny/"
pool = "closed-on-failure"
[[routes]]
pool = "shared"
"#,
        config(&redis, &upstream, "budget = \"200ms\""),
        upstream.url()
    );
    let mut gates = gates(2, "failover", &text).await;
    assert_eq!(get(gates[0].proxy, "/deny/x", "a").await.status, 200);
    assert_eq!(get(gates[1].proxy, "/fast", "b").await.status, 200);

    redis.kill();
    // `deny` turns away, `local` (the default) lets this gate's share through; neither
    // waits on the dead Redis longer than the budget (200 ms) plus scheduling slack.
    for i in 0..5 {
        let start = Instant::now();
        let denied = get(gates[0].proxy, "/deny/x", &format!("d{i}")).await;
        let waited = start.elapsed();
        assert_eq!(
            denied.status, 503,
            "deny while redis is down: {}",
            denied.body
        );
        assert_eq!(denied.header("x-sluicegate-reason"), "store_unavailable");
        assert!(waited < Duration::from_secs(2), "waited {waited:?}");
        let start = Instant::now();
        let local = get(gates[1].proxy, "/fast", &format!("l{i}")).await;
        assert_eq!(local.status, 200, "local share while redis is down");
        assert!(start.elapsed() < Duration::from_secs(2));
    }
    gates[0].log_line("redis unreachable").await;
    for g in &gates {
        let store = &g.status().await["store"];
        assert_eq!(store["up"], false, "{store}");
        assert!(store["outages"].as_u64().unwrap() >= 1, "{store}");
        assert!(store["fallbacks"].as_u64().unwrap() >= 1, "{store}");
    }
    let metrics = gates[0].admin_call("GET", "/metrics", None, "").await.body;
    assert!(metrics.contains("sluicegate_store_up 0"), "{metrics}");
    // Late answers (alone, a fallback for one decision) are counted beside the outages.
    assert!(
        metrics.contains("\nsluicegate_store_late_total "),
        "{metrics}"
    );
    assert!(gates[0].status().await["store"]["late"].is_u64());

    // Back on the same port: no restart of the gates.
    redis.restart();
    for g in &gates {
        let addr = g.proxy;
        eventually("the deny pool answers from redis again", || async move {
            get(addr, "/deny/x", "again").await.status == 200
        })
        .await;
    }
    gates[0].log_line("redis reachable again").await;
    for g in &gates {
        let store = &g.status().await["store"];
        assert_eq!(store["up"], true, "{store}");
        assert!(store["recoveries"].as_u64().unwrap() >= 1, "{store}");
    }
    // Global again: 3 held requests through each gate, and the upstream sees N, not 2 × N.
    let before = upstream.ended();
    let mut held = Vec::new();
    for g in &gates {
        for j in 0..3 {
            let addr = g.proxy;
            held.push(tokio::spawn(async move {
                get(addr, "/hold", &format!("h{j}")).await
            }));
        }
    }
    eventually(
        "N at the upstream, the rest queued in the store",
        || async { upstream.current() == N && queued(&gates).await == 6 - N as u64 },
    )
    .await;
    upstream.release(6);
    for h in held {
        assert_eq!(h.await.unwrap().status, 200);
    }
    assert_eq!(upstream.ended(), before + 6);
}

/// A reload that names a new Redis which does not answer is refused and the store in force
/// stays; one whose new Redis answers moves the global pools to it (here also to hybrid
/// mode).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_to_a_redis_that_does_not_answer_keeps_the_store_in_force() {
    let first = RedisServer::start();
    let upstream = Upstream::start().await;
    let routes = "[[routes]]\npool = \"shared\"\n";
    let path = write_config(
        "reload-store",
        &(config(&first, &upstream, BUDGET) + routes),
    );
    let gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
    assert_eq!(get(gate.proxy, "/fast", "a").await.status, 200);

    // A port nothing listens on.
    let refusing = support::ReservedPort::new();
    let dead = refusing.port;
    let text = config(&first, &upstream, BUDGET) + routes;
    support::rewrite(
        &path,
        &text.replace(&first.url(), &format!("redis://127.0.0.1:{dead}/")),
    );
    let r = gate.admin_call("POST", "/reload", None, "").await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("does not answer"), "{}", r.body);
    let store = &gate.status().await["store"];
    assert_eq!(store["redis"], first.url().as_str());
    assert_eq!(store["up"], true);
    assert_eq!(get(gate.proxy, "/fast", "b").await.status, 200);

    let second = RedisServer::start();
    support::rewrite(
        &path,
        &(config(&second, &upstream, BUDGET).replace("burst = ", "mode = \"hybrid\"\nburst = ")
            + routes),
    );
    let r = gate.admin_call("POST", "/reload", None, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(gate.status().await["store"]["redis"], second.url().as_str());
    assert_eq!(get(gate.proxy, "/fast", "c").await.status, 200);
    assert_eq!(gate.status().await["store"]["fallbacks"], 0);
    let mode = &gate.pool("shared").await["rate_mode"];
    assert_eq!(mode["mode"], "hybrid", "{mode}");
    assert_eq!(mode["decisions"], 1, "{mode}");
    assert_eq!(mode["redis_calls"], 1, "{mode}");
}

/// A client that hangs up while it waits in the store's queue is counted as `client_gone`,
/// as one leaving a local queue is (the local limiter never sees a global pool's waiters).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_the_global_queue_is_counted_as_gone() {
    let redis = RedisServer::start();
    let upstream = Upstream::start().await;
    let text = config(&redis, &upstream, BUDGET) + "[[routes]]\npool = \"shared\"\n";
    let gates = gates(1, "gone", &text).await;
    let gate = &gates[0];
    let held = hold_all(gate, &upstream).await;
    let waiting = support::raw(gate.proxy, b"GET /hold HTTP/1.1\r\nhost: gate.test\r\n\r\n").await;
    eventually("one waiting in the store's queue", || async {
        queued(&gates).await == 1
    })
    .await;
    drop(waiting);
    eventually("the waiter gone from the queue", || async {
        queued(&gates).await == 0
    })
    .await;
    upstream.release(N);
    for h in held {
        assert_eq!(h.await.unwrap().status, 200);
    }
    assert_eq!(gate.pool("shared").await["counters"]["client_gone"], 1);
    assert_eq!(
        upstream.ids().len(),
        N,
        "the waiter never reached the upstream"
    );
}

/// Defect pinned (review 3, item 7): close and the kill switch did not turn away requests
/// waiting for a global slot. `admit_global` checked `closed` only before it waited, so after
/// `POST /pools/NAME/close`, or `max_concurrency = 0`, the waiters stayed in the store's queue
/// until a running request ended, and only then got their `503`. Now they get `503 closed` at
/// once, as a local pool's do: here while every running request is still held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_and_the_kill_switch_turn_away_what_waits_for_a_global_slot() {
    let redis = RedisServer::start();
    let upstream = Upstream::start().await;
    let text = config(&redis, &upstream, BUDGET) + "[[routes]]\npool = \"shared\"\n";
    let gates = gates(1, "close-global", &text).await;
    let gate = &gates[0];
    let held = hold_all(gate, &upstream).await;

    for (round, (method, path, body)) in [
        ("POST", "/pools/shared/close", ""),
        ("PUT", "/pools/shared/limits", r#"{"max_concurrency":0}"#),
    ]
    .into_iter()
    .enumerate()
    {
        let mut waiting = Vec::new();
        for j in 0..3 {
            let addr = gate.proxy;
            waiting.push(tokio::spawn(async move {
                get(addr, "/hold", &format!("w{round}-{j}")).await
            }));
        }
        eventually("three waiting in the store's queue", || async {
            queued(&gates).await == 3
        })
        .await;
        let r = gate.admin_call(method, path, None, body).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        for w in waiting {
            let r = w.await.unwrap();
            assert_eq!(r.status, 503, "{path}: {}", r.body);
            assert_eq!(r.header("x-sluicegate-reason"), "closed", "{path}");
        }
        // Turned away while the running requests still run.
        assert_eq!(upstream.current(), N, "{path}");
        assert_eq!(upstream.ended(), 0, "{path}");
        // Open again for the next round.
        let (method, path, body) = if round == 0 {
            ("POST", "/pools/shared/open", "")
        } else {
            ("PUT", "/pools/shared/limits", r#"{"max_concurrency":4}"#)
        };
        assert_eq!(gate.admin_call(method, path, None, body).await.status, 200);
    }
    upstream.release(N);
    for h in held {
        assert_eq!(h.await.unwrap().status, 200);
    }
    let counters = &gate.pool("shared").await["counters"];
    assert_eq!(counters["closed"], 6, "{counters}");
    assert_eq!(upstream.ids().len(), N, "no waiter reached the upstream");
}
