//! Global GCRA per client against a real `redis-server`: a client's quota shared by every
//! instance, clients kept apart, hostile keys, keys that expire, and the failure policies.

mod support;

use std::num::{NonZeroU32, NonZeroUsize};
use std::time::{Duration, Instant};

use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::{CheckError, Quota};
use sluicegate_redis::{FailurePolicy, GlobalGcra, GlobalKeyedGcra, RedisStore, Source};
use support::RedisServer;

/// One token per 100 s, bursts of `burst`: none comes back while a test runs, however slow
/// the machine.
fn slow(burst: u32) -> Quota {
    Quota::per_hour(36).with_burst(NonZeroU32::new(burst).unwrap())
}

fn keyed(store: &RedisStore, name: &str, quota: Quota) -> GlobalKeyedGcra {
    GlobalGcra::builder(store, name, quota)
        .build_keyed(NonZeroUsize::new(1000).unwrap())
        .unwrap()
}

fn keys(redis: &RedisServer) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query(&mut redis.connection())
        .unwrap();
    keys.sort();
    keys
}

/// Two instances (two stores, two limits of one name), one client whose requests alternate
/// between them: it gets its burst once, not once per instance, with the local keyed
/// limiter's numbers; another client's bucket is its own.
#[tokio::test]
async fn a_client_gets_its_quota_once_across_instances_and_each_client_its_own() {
    let redis = RedisServer::start();
    let (a, b) = (support::store(&redis).await, support::store(&redis).await);
    let q = slow(3);
    let (first, second) = (keyed(&a, "api", q), keyed(&b, "api", q));
    let local = KeyedGcra::<&[u8]>::new(q, NonZeroUsize::new(10).unwrap());
    let client: &[u8] = b"203.0.113.7";
    let mut allowed = 0;
    for i in 0..10 {
        let limit = if i % 2 == 0 { &first } else { &second };
        let v = limit.decide(client, 1).await.unwrap();
        assert_eq!(v.source, Source::Redis);
        let l = local.check(&client);
        assert_eq!(v.decision.is_allowed(), l.is_allowed(), "request {i}");
        assert_eq!(v.decision.remaining(), l.remaining(), "request {i}");
        assert_eq!(v.decision.limit(), 3);
        allowed += u32::from(v.decision.is_allowed());
    }
    assert_eq!(allowed, 3, "the burst once, across both instances");
    let denied = second.check(client).await;
    assert!(denied.retry_after() > Duration::ZERO);
    assert!(
        denied.retry_after() <= Duration::from_secs(100),
        "{denied:?}"
    );

    // Another client, and the same bytes under another limit name, start full.
    assert_eq!(first.check(b"203.0.113.8").await.remaining(), 2);
    assert_eq!(keyed(&a, "other", q).check(client).await.remaining(), 2);
    // `n` at once: all or nothing; more than the burst is impossible.
    assert!(first.decide(b"n", 3).await.unwrap().decision.is_allowed());
    assert!(first.decide(b"n", 1).await.unwrap().decision.is_denied());
    assert_eq!(
        first.decide(b"n", 4).await,
        Err(CheckError::InsufficientCapacity {
            requested: 4,
            capacity: 3
        })
    );
    assert_eq!(keys(&redis).len(), 4, "{:?}", keys(&redis));
}

/// Whatever a key holds — 16 KiB, braces, colons, NULs, newlines, no bytes at all — Redis
/// gets one small key of the same length under the limit's tag, and two keys that differ
/// anywhere count apart.
#[tokio::test]
async fn hostile_keys_make_small_keys_of_their_own() {
    let redis = RedisServer::start();
    let store = support::store(&redis).await;
    let limit = keyed(&store, "api", slow(1));
    let long = vec![b'a'; 16 * 1024];
    let mut long_other = long.clone();
    long_other[16 * 1024 - 1] = b'b';
    let hostile: Vec<Vec<u8>> = vec![
        long,
        long_other,
        b"}:ktatf64".to_vec(),
        b"{sluicegate:api}:tatf64".to_vec(),
        b"a}b{c:d\0e\r\nf".to_vec(),
        vec![0xff; 100],
        Vec::new(),
    ];
    for key in &hostile {
        let v = limit.decide(key, 1).await.unwrap();
        assert!(v.decision.is_allowed(), "a fresh bucket for each: {key:?}");
    }
    for key in &hostile {
        assert!(limit.check(key).await.is_denied(), "its own state: {key:?}");
    }
    let stored = keys(&redis);
    assert_eq!(stored.len(), hostile.len(), "{stored:?}");
    let mut conn = redis.connection();
    for k in &stored {
        assert_eq!(k.len(), "{sluicegate:api:}:ktatf64".len() + 32, "{k}");
        assert!(
            k.starts_with("{sluicegate:api:") && k.ends_with("}:ktatf64"),
            "{k}"
        );
        assert_eq!(k.matches(['{', '}']).count(), 2, "{k}");
        // The key, its 8-byte value and Redis's own bookkeeping.
        let bytes: u64 = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(k)
            .query(&mut conn)
            .unwrap();
        assert!(bytes <= 160, "{k}: {bytes} bytes");
    }
}

/// A client's key expires once its bucket is full again (and about 2 s more): its expiry
/// follows its own state, and a client that stops sending costs Redis nothing.
#[tokio::test]
async fn each_client_key_expires_when_its_bucket_is_full_again() {
    let redis = RedisServer::start();
    let store = support::store(&redis).await;
    // 100 s per token: one admission puts the state 100 s ahead, so the key lives
    // about 102 s.
    let limit = keyed(&store, "slow", slow(3));
    assert!(limit.check(b"c").await.is_allowed());
    let [key] = &keys(&redis)[..] else {
        panic!("one key: {:?}", keys(&redis));
    };
    let pttl: i64 = redis::cmd("PTTL")
        .arg(key)
        .query(&mut redis.connection())
        .unwrap();
    assert!(
        (100_000..=102_001).contains(&pttl),
        "the key outlives its state by at most about 2 s: {pttl} ms"
    );

    // 1 ms per token: the key of one admission is gone about 2 s later. Waited for (a
    // state, not a measured time), within a bound only a broken expiry reaches.
    let fast = keyed(&store, "fast", Quota::per_second(1000).unwrap());
    assert!(fast.check(b"c").await.is_allowed());
    assert_eq!(keys(&redis).len(), 2);
    let deadline = Instant::now() + Duration::from_secs(60);
    while keys(&redis).len() > 1 {
        assert!(
            Instant::now() < deadline,
            "never expired: {:?}",
            keys(&redis)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        keys(&redis),
        std::slice::from_ref(key),
        "only the slow limit's key is left"
    );
}

/// Redis killed: `local` gives each client `1 / instances` of its quota in this instance
/// (its own share per client), `allow` everything, `deny` nothing, saying so.
#[tokio::test]
async fn while_redis_is_down_each_client_gets_its_share_in_each_instance() {
    let mut redis = RedisServer::start();
    let store = support::store(&redis).await;
    let build = |name, policy| {
        GlobalGcra::builder(&store, name, slow(10))
            .on_failure(policy)
            .instances(2)
            .build_keyed(NonZeroUsize::new(100).unwrap())
            .unwrap()
    };
    let (local, allow, deny) = (
        build("l", FailurePolicy::Local),
        build("a", FailurePolicy::Allow),
        build("d", FailurePolicy::Deny),
    );
    // Before the outage, one request of client `x` counted in Redis.
    assert_eq!(local.decide(b"x", 1).await.unwrap().source, Source::Redis);
    redis.kill();
    let mut allowed = [0; 4];
    for _ in 0..20 {
        allowed[0] += u32::from(local.check(b"x").await.is_allowed());
        allowed[1] += u32::from(local.check(b"y").await.is_allowed());
        allowed[2] += u32::from(allow.check(b"x").await.is_allowed());
        allowed[3] += u32::from(deny.check(b"x").await.is_allowed());
    }
    // Local: half of the burst of 10 for each client, its own; allow: all; deny: none.
    assert_eq!(allowed, [5, 5, 20, 0]);
    assert_eq!(local.fallback_keys(), 2);
    let v = deny.decide(b"x", 1).await.unwrap();
    assert_eq!(v.source, Source::Fallback(FailurePolicy::Deny));
    assert!(v.decision.retry_after() > Duration::ZERO);

    // Redis back: the state of `x` in Redis decides again (its one request counted).
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(60);
    let back = loop {
        let v = local.decide(b"x", 1).await.unwrap();
        if v.source == Source::Redis {
            break v;
        }
        assert!(Instant::now() < deadline, "redis never decided again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // A restarted Redis without persistence starts empty: a fresh bucket, one taken now.
    assert_eq!(back.decision.remaining(), 9);
}
