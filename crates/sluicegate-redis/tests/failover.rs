//! Redis killed mid-load and restarted: decisions fall back per policy within the budget,
//! nothing hangs, and global limiting resumes by itself.

mod support;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluicegate::rate::Quota;
use sluicegate_redis::{FailurePolicy, GlobalGcra, GlobalWindow, RedisStore, Source};
use support::{RedisServer, ReservedPort};

/// Generous slack over the 20 ms budget for a loaded 2-core test machine; what this pins is
/// that no decision waits for Redis's reconnect (seconds) or hangs.
const SLACK: Duration = Duration::from_millis(400);

async fn store(redis: &RedisServer) -> RedisStore {
    RedisStore::builder(&redis.url())
        .backoff(Duration::from_millis(20), Duration::from_millis(200))
        .connect()
        .await
        .unwrap()
}

/// Checks `limit` from 4 tasks until `stop`, returning the slowest decision and the sources.
async fn load(limit: Arc<GlobalGcra>, for_: Duration) -> (Duration, Vec<Source>) {
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let limit = limit.clone();
        tasks.push(tokio::spawn(async move {
            let (mut slowest, mut sources) = (Duration::ZERO, Vec::new());
            let end = Instant::now() + for_;
            while Instant::now() < end {
                let t = Instant::now();
                let v = limit.decide(1).await.unwrap();
                slowest = slowest.max(t.elapsed());
                sources.push(v.source);
                tokio::task::yield_now().await;
            }
            (slowest, sources)
        }));
    }
    let mut out = (Duration::ZERO, Vec::new());
    for t in tasks {
        let (s, v) = t.await.unwrap();
        out.0 = out.0.max(s);
        out.1.extend(v);
    }
    out
}

async fn until_redis_decides(limit: &GlobalGcra) -> Duration {
    let start = Instant::now();
    loop {
        if limit.decide(1).await.unwrap().source == Source::Redis {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "global limiting did not resume"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_load_falls_back_within_the_budget_and_resumes_after_restart() {
    let mut redis = RedisServer::start();
    let store = store(&redis).await;
    let limit = Arc::new(
        GlobalGcra::builder(&store, "api", Quota::per_second(1_000_000).unwrap())
            .on_failure(FailurePolicy::Allow)
            .build()
            .unwrap(),
    );
    until_redis_decides(&limit).await;

    let loaded = tokio::spawn(load(limit.clone(), Duration::from_millis(600)));
    tokio::time::sleep(Duration::from_millis(200)).await;
    redis.kill();
    let (slowest, sources) = loaded.await.unwrap();
    assert!(
        slowest < RedisStore::DEFAULT_BUDGET + SLACK,
        "a decision took {slowest:?}"
    );
    assert!(sources.contains(&Source::Redis));
    assert!(sources.contains(&Source::Fallback(FailurePolicy::Allow)));
    let health = store.health();
    assert!(!health.up);
    // One outage, or more if two slow answers in a row before the kill already exceeded
    // the budget (a lone late answer is no outage).
    assert!(health.outages >= 1);
    assert!(health.fallbacks > 0);

    // Still down: every decision is the policy's, at once.
    let (slowest, sources) = load(limit.clone(), Duration::from_millis(200)).await;
    assert!(
        slowest < RedisStore::DEFAULT_BUDGET + SLACK,
        "a decision took {slowest:?}"
    );
    assert!(
        sources
            .iter()
            .all(|s| *s == Source::Fallback(FailurePolicy::Allow))
    );

    redis.restart();
    until_redis_decides(&limit).await;
    let health = store.health();
    assert!(health.up);
    assert_eq!(health.recoveries, health.outages);
}

#[tokio::test]
async fn each_policy_decides_by_itself_while_redis_is_down() {
    let mut redis = RedisServer::start();
    let store = store(&redis).await;
    let quota = Quota::per_hour(100).with_burst(NonZeroU32::new(100).unwrap());
    let build = |name, policy| {
        GlobalGcra::builder(&store, name, quota)
            .on_failure(policy)
            .instances(4)
            .build()
            .unwrap()
    };
    let (local, allow, deny) = (
        build("l", FailurePolicy::Local),
        build("a", FailurePolicy::Allow),
        build("d", FailurePolicy::Deny),
    );
    let window = GlobalWindow::builder(&store, "w", 100, Duration::from_secs(3600))
        .instances(4)
        .build()
        .unwrap();
    redis.kill();
    let mut allowed = [0; 4];
    for _ in 0..40 {
        allowed[0] += u32::from(local.check().await.is_allowed());
        allowed[1] += u32::from(allow.check().await.is_allowed());
        allowed[2] += u32::from(deny.check().await.is_allowed());
        allowed[3] += u32::from(window.check().await.is_allowed());
    }
    // Local: this instance's quarter of the quota; allow: all; deny: none.
    assert_eq!(allowed, [25, 40, 0, 25]);
    assert!(deny.check().await.retry_after() > Duration::ZERO);
}

#[tokio::test]
async fn an_instance_starts_while_redis_is_down_and_picks_it_up_when_it_comes() {
    // Held from here on: the store's reconnects are refused until our Redis listens on it.
    let port = ReservedPort::new();
    let store = RedisStore::builder(&port.url())
        .backoff(Duration::from_millis(20), Duration::from_millis(100))
        .connect()
        .await
        .unwrap();
    assert!(!store.health().up);
    let limit = GlobalGcra::builder(&store, "late", Quota::per_second(100).unwrap())
        .build()
        .unwrap();
    assert_eq!(
        limit.decide(1).await.unwrap().source,
        Source::Fallback(FailurePolicy::Local)
    );
    let _redis = RedisServer::start_on(port);
    until_redis_decides(&limit).await;
    assert!(store.health().up);
}

/// A budget longer than redis-rs's own response timeout (500 ms) is the budget: a decision
/// Redis answers in 0.8 s, under a 3 s budget, is Redis's. The store left the client's
/// default in place, so every budget above 500 ms was cut to 500 ms and fell back.
#[tokio::test]
async fn a_budget_over_half_a_second_waits_for_a_slow_redis() {
    let redis = RedisServer::start();
    let store = RedisStore::builder(&redis.url())
        .budget(Duration::from_secs(3))
        .connect()
        .await
        .unwrap();
    let limit = GlobalGcra::builder(&store, "slow", Quota::per_second(1000).unwrap())
        .build()
        .unwrap();
    assert_eq!(limit.decide(1).await.unwrap().source, Source::Redis);
    // Redis holds every other client's commands for 0.8 s from the OK on.
    let mut admin = redis.connection();
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(800)
        .arg("ALL")
        .query(&mut admin)
        .unwrap();
    let v = limit.decide(1).await.unwrap();
    assert_eq!(v.source, Source::Redis, "fell back within the 3 s budget");
}

/// Review 3, item 5: with the default 20 ms budget a busy host flapped — ONE late answer
/// marked the whole store down, and every decision fell back for the probe backoff (48
/// outages in 10 s with no fault injected; each let `local` admit on top of what Redis had
/// counted). Now a lone late answer falls back for its own decision only: the store stays
/// up and the next decision is Redis's. A second late answer in a row (a call sent after
/// the first was late) is an outage.
///
/// Redis is stopped (SIGSTOP), not slowed: a stopped Redis never answers, so each call is
/// late for certain, whatever the machine's load. The budget is long (250 ms) so that a
/// loaded machine adds no late answer of its own; the backoff is a second, so that a store
/// marked down by the first late answer (the defect) would still be down for the decision
/// after it.
#[tokio::test]
async fn a_lone_late_answer_falls_back_alone_and_two_in_a_row_mark_redis_down() {
    let redis = RedisServer::start();
    let store = RedisStore::builder(&redis.url())
        .budget(Duration::from_millis(250))
        .backoff(Duration::from_secs(1), Duration::from_secs(1))
        .connect()
        .await
        .unwrap();
    let limit = GlobalGcra::builder(&store, "hiccup", Quota::per_second(1_000_000).unwrap())
        .on_failure(FailurePolicy::Allow)
        .build()
        .unwrap();
    let redis_decides = || async { limit.decide(1).await.unwrap().source == Source::Redis };
    assert!(redis_decides().await);

    redis.pause();
    let late = limit.decide(1).await.unwrap();
    redis.resume();
    assert_eq!(late.source, Source::Fallback(FailurePolicy::Allow));
    let health = store.health();
    assert!(health.up, "one late answer marked redis down: {health:?}");
    assert_eq!((health.outages, health.late, health.fallbacks), (0, 1, 1));
    assert!(
        redis_decides().await,
        "the decision after a hiccup is redis's"
    );

    redis.pause();
    for _ in 0..2 {
        let v = limit.decide(1).await.unwrap();
        assert_eq!(v.source, Source::Fallback(FailurePolicy::Allow));
    }
    let health = store.health();
    assert!(!health.up, "two late answers in a row: {health:?}");
    assert_eq!((health.outages, health.late, health.fallbacks), (1, 3, 3));
    // Down: the next decision falls back at once, without asking the stopped Redis.
    let v = limit.decide(1).await.unwrap();
    assert_eq!(v.source, Source::Fallback(FailurePolicy::Allow));
    assert_eq!(store.health().late, 3, "nothing was sent");

    redis.resume();
    until_redis_decides(&limit).await;
    assert_eq!(store.health().recoveries, 1);
}

fn config_set(redis: &RedisServer, name: &str, value: &str) {
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query(&mut redis.connection())
        .unwrap();
}

/// An error reply is no hiccup: one marks Redis down at once (here a Redis out of memory
/// under `noeviction` refusing the decision's write), unlike a lone late answer.
#[tokio::test]
async fn an_error_reply_marks_redis_down_at_once() {
    let redis = RedisServer::start();
    let store = store(&redis).await;
    let limit = GlobalGcra::builder(&store, "oom", Quota::per_second(1000).unwrap())
        .on_failure(FailurePolicy::Allow)
        .build()
        .unwrap();
    assert_eq!(limit.decide(1).await.unwrap().source, Source::Redis);
    config_set(&redis, "maxmemory-policy", "noeviction");
    config_set(&redis, "maxmemory", "1");
    let v = limit.decide(1).await.unwrap();
    assert_eq!(v.source, Source::Fallback(FailurePolicy::Allow));
    let health = store.health();
    assert!(!health.up, "{health:?}");
    assert_eq!((health.outages, health.late), (1, 0));
    config_set(&redis, "maxmemory", "0");
    until_redis_decides(&limit).await;
}

/// redis111: a Redis that refuses the limits' calls but answers `PING` (out of memory under
/// `noeviction`; likewise a read-only replica, or an ACL user without the scripts) was
/// marked up by every ping and down again by the next decision: the gate, which pings each
/// second, logged an outage and a recovery a second, its `outages` counting seconds and
/// `up` flipping, for as long as the refusal lasted. A PONG says Redis answers, not that it
/// takes the calls it refused: the store stays down, one outage, until a decision's probe
/// is answered.
#[tokio::test]
async fn a_ping_does_not_mark_up_a_redis_that_refuses_the_limits_calls() {
    let redis = RedisServer::start();
    let store = store(&redis).await;
    let limit = GlobalGcra::builder(&store, "oom", Quota::per_second(1000).unwrap())
        .on_failure(FailurePolicy::Allow)
        .build()
        .unwrap();
    assert_eq!(limit.decide(1).await.unwrap().source, Source::Redis);
    config_set(&redis, "maxmemory-policy", "noeviction");
    config_set(&redis, "maxmemory", "1");
    for _ in 0..3 {
        let v = limit.decide(1).await.unwrap();
        assert_eq!(v.source, Source::Fallback(FailurePolicy::Allow));
        store
            .ping(Duration::from_secs(5))
            .await
            .expect("redis answers PING when out of memory");
        let health = store.health();
        assert!(!health.up, "a PONG marked a refusing redis up: {health:?}");
    }
    let health = store.health();
    assert_eq!((health.outages, health.recoveries), (1, 0), "{health:?}");
    config_set(&redis, "maxmemory", "0");
    until_redis_decides(&limit).await;
    let health = store.health();
    assert_eq!((health.up, health.outages, health.recoveries), (true, 1, 1));
}

/// The other side of the test above: a refusal that a `PING` meets as well — Redis asking
/// for a password (restarted with `requirepass`, or a password rotated) — is gone when a
/// PONG comes: the ping marks Redis up again, so that an idle instance (the gate while no
/// request passes) does not stay reported down after the password is right again.
#[tokio::test]
async fn a_ping_marks_up_a_redis_that_asked_for_a_password_once_it_no_longer_does() {
    let redis = RedisServer::start();
    let store = store(&redis).await;
    let limit = GlobalGcra::builder(&store, "auth", Quota::per_second(1000).unwrap())
        .on_failure(FailurePolicy::Allow)
        .build()
        .unwrap();
    assert_eq!(limit.decide(1).await.unwrap().source, Source::Redis);
    let mut admin = redis.connection();
    config_set(&redis, "requirepass", "rotated");
    let () = redis::cmd("AUTH").arg("rotated").query(&mut admin).unwrap();
    // The store's connection was made without a password: cut it, so that it reconnects.
    let _: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .arg("SKIPME")
        .arg("yes")
        .query(&mut admin)
        .unwrap();
    let start = Instant::now();
    while store.health().up || store.ping(Duration::from_secs(5)).await.is_ok() {
        assert!(start.elapsed() < Duration::from_secs(15), "never refused");
        let _ = limit.decide(1).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("")
        .query(&mut admin)
        .unwrap();
    let start = Instant::now();
    while store.ping(Duration::from_secs(5)).await.is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "PING still refused"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let health = store.health();
    assert!(health.up, "a PONG after a password refusal: {health:?}");
}

/// redis111: a Redis with an idle `timeout` (Azure's closes idle connections after 10
/// minutes, many configs set one) closes the store's connection between sparse decisions.
/// The next call failed on the dead connection ("broken pipe"): it fell back and marked
/// Redis down; the manager reconnected, and if the next call came after the timeout again
/// (a limit of 3 an hour, a job every 15 minutes) it found that connection closed too —
/// every decision fell back, the limit never global again. A call that finds its
/// connection dropped now asks once more, on the manager's new connection, within the
/// budget.
#[tokio::test]
async fn a_connection_redis_closed_while_idle_is_replaced_without_a_fallback() {
    let redis = RedisServer::start();
    config_set(&redis, "timeout", "1");
    let store = RedisStore::builder(&redis.url())
        .budget(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    let limit = GlobalGcra::builder(&store, "sparse", Quota::per_hour(3))
        .build()
        .unwrap();
    for _ in 0..2 {
        assert_eq!(limit.decide(1).await.unwrap().source, Source::Redis);
        // Redis closes the idle connection (its clients' cron, within about a second past
        // the timeout): nothing but the connection asking is left.
        let start = Instant::now();
        loop {
            let info: String = redis::cmd("INFO")
                .arg("clients")
                .query(&mut redis.connection())
                .unwrap();
            if info.contains("connected_clients:1\r\n") {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(15), "{info}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let v = limit.decide(1).await.unwrap();
    assert_eq!(v.source, Source::Redis, "{:?}", store.health());
    let health = store.health();
    assert_eq!((health.up, health.outages, health.fallbacks), (true, 0, 0));
}

/// An error about one key is no outage. A key of the wrong type under one limit's name (a
/// hash where the GCRA state lives: another program, or an old version, on the same
/// prefix) answered `WRONGTYPE`, which marked the whole store down: every other limit on it
/// fell back too, again after each probe the broken limit made. That limit alone falls
/// back now; Redis stays up, and the others decide as before.
#[tokio::test]
async fn a_key_of_the_wrong_type_fails_its_own_limit_not_the_store() {
    let redis = RedisServer::start();
    let store = store(&redis).await;
    let quota = Quota::per_hour(10);
    let broken = GlobalGcra::builder(&store, "broken", quota)
        .on_failure(FailurePolicy::Deny)
        .build()
        .unwrap();
    let other = GlobalGcra::builder(&store, "other", quota).build().unwrap();
    let () = redis::cmd("HSET")
        .arg("{sluicegate:broken}:tatf64")
        .arg("field")
        .arg("value")
        .query(&mut redis.connection())
        .unwrap();
    for _ in 0..3 {
        let v = broken.decide(1).await.unwrap();
        assert_eq!(v.source, Source::Fallback(FailurePolicy::Deny));
        assert_eq!(other.decide(1).await.unwrap().source, Source::Redis);
    }
    let health = store.health();
    assert!(health.up, "{health:?}");
    assert_eq!((health.outages, health.fallbacks), (0, 3), "{health:?}");
}

/// A GCRA key holding a string of another length than its 8 bytes (something else wrote
/// it) made the script fail unpacking it (`ERR ... data string too short`), an error reply
/// that marked the whole store down. It counts as absent now, like a window ring of another
/// shape, and the next admission writes the state over it.
#[tokio::test]
async fn a_garbled_gcra_key_counts_as_absent_and_the_store_stays_up() {
    let redis = RedisServer::start();
    let store = store(&redis).await;
    let limit = GlobalGcra::builder(&store, "garbled", Quota::per_hour(10))
        .build()
        .unwrap();
    let key = "{sluicegate:garbled}:tatf64";
    let () = redis::cmd("SET")
        .arg(key)
        .arg("abc")
        .query(&mut redis.connection())
        .unwrap();
    let v = limit.decide(1).await.unwrap();
    assert_eq!(v.source, Source::Redis);
    assert!(v.decision.is_allowed());
    assert!(store.health().up, "{:?}", store.health());
    let len: usize = redis::cmd("STRLEN")
        .arg(key)
        .query(&mut redis.connection())
        .unwrap();
    assert_eq!(len, 8, "the state written over it");
}

/// A store on `redis` that, once Redis is down, asks it again every 10 s.
async fn probing_every_10s(redis: &RedisServer) -> RedisStore {
    RedisStore::builder(&redis.url())
        .backoff(Duration::from_secs(10), Duration::from_secs(10))
        .connect()
        .await
        .unwrap()
}

/// Closing note, item 6: with Redis down, `Deny`'s answer said "retry after one emission
/// interval" (1 ms for 1000/s, 20 min for 3/h), though Redis is asked again at the store's
/// next probe, not before and not later: clients retried into the same denial, or waited
/// long after Redis was back. The hint is now the next probe: here up to 10 s away (the
/// store's backoff). Bounds only, no timing.
#[tokio::test]
async fn deny_while_redis_is_down_says_to_retry_when_the_store_asks_redis_again() {
    let mut redis = RedisServer::start();
    let store = probing_every_10s(&redis).await;
    let deny = GlobalGcra::builder(&store, "d", Quota::per_second(1000).unwrap())
        .on_failure(FailurePolicy::Deny)
        .build()
        .unwrap();
    redis.kill();
    // The first call fails and marks the store down: the next probe is 10 s away.
    let _ = deny.check().await;
    assert!(!store.health().up);
    let denied = deny.decide(1).await.unwrap();
    assert_eq!(denied.source, Source::Fallback(FailurePolicy::Deny));
    assert!(denied.decision.is_denied());
    let retry = denied.decision.retry_after();
    assert!(retry > Duration::from_secs(1), "{retry:?}");
    assert!(retry <= Duration::from_secs(10), "{retry:?}");
    assert!(denied.decision.reset_after() >= retry, "{denied:?}");

    // A slow quota (one admission per 20 min) is asked again at the same probe: its hint
    // was 20 minutes, however soon Redis would be back.
    let slow = GlobalGcra::builder(&store, "slow", Quota::per_hour(3))
        .on_failure(FailurePolicy::Deny)
        .build()
        .unwrap();
    let denied = slow.decide(1).await.unwrap();
    assert_eq!(denied.source, Source::Fallback(FailurePolicy::Deny));
    assert!(denied.decision.is_denied());
    let retry = denied.decision.retry_after();
    assert!(retry > Duration::from_secs(1), "{retry:?}");
    assert!(retry <= Duration::from_secs(10), "{retry:?}");
}

/// The concurrency limit's `Deny` (`AcquireError::Unavailable`) said to retry after the
/// store's budget (20 ms by default), though its docs said the probe backoff: it now gives
/// the same hint as GCRA's, the time to the store's next probe.
#[tokio::test]
async fn unavailable_says_to_retry_when_the_store_asks_redis_again() {
    let mut redis = RedisServer::start();
    let store = probing_every_10s(&redis).await;
    let deny = sluicegate_redis::GlobalConcurrency::builder(&store, "c", 1)
        .on_failure(FailurePolicy::Deny)
        .build()
        .unwrap();
    redis.kill();
    let _ = deny.acquire().await; // fails, marks the store down: next probe 10 s away
    assert!(!store.health().up);
    let refused = deny.acquire().await.unwrap_err();
    assert!(
        matches!(
            refused,
            sluicegate_redis::concurrency::AcquireError::Unavailable { .. }
        ),
        "{refused:?}"
    );
    let retry = refused.retry_after();
    assert!(retry > Duration::from_secs(1), "{retry:?}");
    assert!(retry <= Duration::from_secs(10), "{retry:?}");
}

/// Left by redis25: the sliding window's `Deny` answered as a window full to its limit in
/// the current slice ("retry after the whole window": 1 min for 100/min, 1 h for 3/h),
/// though Redis is asked again at the store's next probe and decides then. Its hint is now
/// the next probe's, as GCRA's and the concurrency limit's: here up to 10 s away. Bounds
/// only, no timing.
#[tokio::test]
async fn the_windows_deny_while_redis_is_down_says_to_retry_when_the_store_asks_redis_again() {
    let mut redis = RedisServer::start();
    let store = probing_every_10s(&redis).await;
    let build = |name, limit, window| {
        GlobalWindow::builder(&store, name, limit, window)
            .on_failure(FailurePolicy::Deny)
            .build()
            .unwrap()
    };
    let (minute, hour) = (
        build("m", 100, Duration::from_secs(60)),
        build("h", 3, Duration::from_secs(3600)),
    );
    redis.kill();
    // The first call fails and marks the store down: the next probe is 10 s away.
    let _ = minute.check().await;
    assert!(!store.health().up);
    for limit in [&minute, &hour] {
        let denied = limit.decide(1).await.unwrap();
        assert_eq!(denied.source, Source::Fallback(FailurePolicy::Deny));
        let d = denied.decision;
        assert!(d.is_denied());
        assert_eq!(d.remaining(), 0, "{d:?}");
        let retry = d.retry_after();
        assert!(retry > Duration::from_secs(1), "{d:?}");
        assert!(retry <= Duration::from_secs(10), "{d:?}");
        assert!(d.reset_after() >= retry, "{d:?}");
    }
}
