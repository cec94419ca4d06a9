//! Global limits on a Redis that serves TLS (`rediss://`), as managed Redis services do: a
//! real `redis-server` with TLS, certificates made by the test. And what a user reads when
//! TLS fails: a CA this machine does not trust, a certificate for another name, TLS to the
//! plain port, plain Redis to the TLS port.

mod support;

use std::time::Duration;

use sluicegate::rate::Quota;
use sluicegate_redis::{GlobalConcurrency, GlobalGcra, RedisStore, Source};
use support::{RedisServer, TestCerts};

/// A Redis with TLS on its `tls_port`, with the certificate `certs` made.
fn tls_redis(certs: &TestCerts) -> RedisServer {
    RedisServer::start_tls(&certs.file("redis.crt"), &certs.file("redis.key"), None)
}

async fn store_with_ca(url: &str, certs: &TestCerts) -> RedisStore {
    RedisStore::builder(url)
        .budget(Duration::from_secs(5))
        .tls_ca(certs.ca_pem.clone())
        .connect()
        .await
        .unwrap()
}

/// tls115: a `rediss://` URL was refused ("can't connect with TLS, the feature is not
/// enabled"). A rate limit decides in Redis over TLS, the CA given, and a concurrency
/// limit's release reaches its waiter on the pub/sub connection, over TLS too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_global_limit_decides_over_tls_with_the_ca_given() {
    let certs = TestCerts::new();
    let redis = tls_redis(&certs);
    let store = store_with_ca(&redis.tls_url("localhost"), &certs).await;
    assert!(store.health().up, "{:?}", store.health());

    let quota = Quota::per_second(2).unwrap();
    let limit = GlobalGcra::builder(&store, "tls", quota).build().unwrap();
    let first = limit.decide(1).await.unwrap();
    let second = limit.decide(1).await.unwrap();
    let third = limit.decide(1).await.unwrap();
    assert_eq!(
        (first.source, second.source, third.source),
        (Source::Redis, Source::Redis, Source::Redis)
    );
    assert!(first.decision.is_allowed() && second.decision.is_allowed());
    assert!(!third.decision.is_allowed(), "{third:?}");
    // Stored in the Redis behind the TLS port (seen on its plain one).
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*tls*")
        .query(&mut redis.connection())
        .unwrap();
    assert!(!keys.is_empty(), "no key in redis");

    // The pub/sub connection (the store's `client()`) speaks TLS too: a release wakes the
    // waiter, which no lease expiry would within the test.
    let permits = GlobalConcurrency::builder(&store, "tls-conc", 1)
        .ttl(Duration::from_secs(60))
        .queue_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let held = permits.acquire().await.unwrap();
    assert!(held.is_global());
    let before = permits.sleeps();
    let mine = permits.clone();
    let waiter = tokio::spawn(async move { mine.acquire().await.unwrap() });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while permits.sleeps() == before {
        assert!(
            std::time::Instant::now() < deadline,
            "the waiter never slept"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(held);
    let woken = tokio::time::timeout(Duration::from_secs(30), waiter)
        .await
        .expect("the release did not wake the waiter over TLS")
        .unwrap();
    assert!(woken.is_global());
    assert!(store.health().up, "{:?}", store.health());
}

/// A connection is given a second to be made, whatever the budget. It was given the budget
/// (at least 100 ms): the gate's TLS tests failed on a loaded machine, where a handshake of
/// a debug build took longer (`check` said "no answer to PING over TLS" of a Redis that was
/// only slow), and a Redis across a WAN outlasts it for good (a round trip for TCP and one
/// or two for TLS, against a budget set just above one): the store never connected, every
/// decision fell back. Here Redis is stopped for the first 0.4 s of the handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_slower_than_the_budget_is_waited_for() {
    let certs = TestCerts::new();
    let redis = std::sync::Arc::new(tls_redis(&certs));
    redis.pause();
    let stopped = redis.clone();
    let resumed = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        stopped.resume();
    });
    let store = RedisStore::builder(&redis.tls_url("localhost"))
        .tls_ca(certs.ca_pem.clone())
        .connect()
        .await
        .unwrap();
    resumed.await.unwrap();
    assert!(store.health().up, "{:?}", store.health());
    let limit = GlobalGcra::builder(&store, "slow-handshake", Quota::per_second(100).unwrap())
        .build()
        .unwrap();
    assert_eq!(limit.decide(1).await.unwrap().source, Source::Redis);
}

/// The error of a PING on a store for `url`, and the store's words for it.
async fn refusal(url: &str, ca: Option<&TestCerts>) -> String {
    let mut builder = RedisStore::builder(url).budget(Duration::from_secs(2));
    if let Some(certs) = ca {
        builder = builder.tls_ca(certs.ca_pem.clone());
    }
    let store = builder.connect().await.unwrap();
    assert!(!store.health().up, "{url}: {:?}", store.health());
    let e = store.ping(Duration::from_secs(2)).await.unwrap_err();
    let said = store.describe(&e);
    eprintln!("{url}: {said}");
    said
}

/// tls115: each way TLS to Redis goes wrong says what is wrong and what to do, where
/// rustls's own words ("invalid peer certificate: UnknownIssuer") do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_failures_say_what_to_do() {
    let certs = TestCerts::new();
    let redis = tls_redis(&certs);

    // The system's CAs do not know the test CA.
    let untrusted = refusal(&redis.tls_url("localhost"), None).await;
    assert!(
        untrusted.contains("not signed by a CA this machine trusts")
            && untrusted.contains("tls_ca_file"),
        "{untrusted}"
    );
    // The certificate names `localhost`, not `127.0.0.1`.
    let other_name = refusal(&redis.tls_url("127.0.0.1"), Some(&certs)).await;
    assert!(
        other_name.contains("not made out for the host in the URL"),
        "{other_name}"
    );
    // TLS to the plain port.
    let plain_port = format!("rediss://localhost:{}/", redis.port);
    let to_plain = refusal(&plain_port, Some(&certs)).await;
    assert!(to_plain.contains("Redis's plain port"), "{to_plain}");
    // Plain Redis to the TLS port.
    let plain_to_tls = format!("redis://localhost:{}/", redis.tls_port.unwrap());
    let to_tls = refusal(&plain_to_tls, None).await;
    assert!(to_tls.contains("write `rediss://`"), "{to_tls}");
}

/// A CA for a plain URL, and a CA file without a certificate, are refused when the store is
/// built, not met as an outage.
#[tokio::test]
async fn tls_settings_that_cannot_work_are_refused() {
    let certs = TestCerts::new();
    let plain = RedisStore::builder("redis://127.0.0.1:1/")
        .tls_ca(certs.ca_pem.clone())
        .connect()
        .await
        .unwrap_err();
    assert!(plain.to_string().contains("`rediss://`"), "{plain}");
    let empty = RedisStore::builder("rediss://localhost:1/")
        .tls_ca("not a certificate")
        .connect()
        .await
        .unwrap_err();
    assert!(empty.to_string().contains("no certificate"), "{empty}");
}

/// Mutual TLS: a Redis that asks for a client certificate takes the one given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_certificate_is_presented_to_a_redis_that_asks() {
    let certs = TestCerts::new();
    let redis = RedisServer::start_tls(
        &certs.file("redis.crt"),
        &certs.file("redis.key"),
        Some(&certs.file("ca.crt")),
    );
    let url = redis.tls_url("localhost");
    let without = RedisStore::builder(&url)
        .tls_ca(certs.ca_pem.clone())
        .connect()
        .await
        .unwrap();
    assert!(!without.health().up, "redis asks for a client certificate");
    let read = |f: &str| std::fs::read(certs.file(f)).unwrap();
    let with = RedisStore::builder(&url)
        .budget(Duration::from_secs(5))
        .tls_ca(certs.ca_pem.clone())
        .tls_client_cert(read("client.crt"), read("client.key"))
        .connect()
        .await
        .unwrap();
    assert!(with.health().up, "{:?}", with.health());
}

/// `#insecure` (redis-rs's spelling) checks no certificate: allowed, with a warning logged.
#[tokio::test]
async fn insecure_connects_without_the_ca() {
    let certs = TestCerts::new();
    let redis = tls_redis(&certs);
    let url = format!("{}#insecure", redis.tls_url("127.0.0.1"));
    let store = RedisStore::builder(&url)
        .budget(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    assert!(store.health().up, "{:?}", store.health());
}
