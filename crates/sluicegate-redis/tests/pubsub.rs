//! The pub/sub connection of a store, seen from Redis: one per `RedisStore`, however many
//! global concurrency limits are built on it, subscribed to each limit's channel while a limit
//! on it lives, closed when none is left, and subscribed again after Redis restarts.
//!
//! (It was one connection per limit: the gate builds one limit per pool with a global
//! concurrency limit, so 2000 such pools opened 2000 connections per gate process, and a few
//! gates reached Redis's `maxclients`.)

mod support;

use std::time::{Duration, Instant};

use sluicegate_redis::{FailurePolicy, GlobalConcurrency, GlobalPermit, RedisStore};
use support::RedisServer;

/// Long enough for a loaded 2-core machine; a wait that ends early costs nothing.
const PATIENCE: Duration = Duration::from_secs(30);

/// Redis's `CLIENT LIST` of its pub/sub connections (clients in subscriber mode).
fn pubsub_list(redis: &RedisServer) -> String {
    redis::cmd("CLIENT")
        .arg("LIST")
        .arg("TYPE")
        .arg("pubsub")
        .query(&mut redis.connection())
        .unwrap()
}

/// How many pub/sub connections Redis has.
fn pubsub_clients(redis: &RedisServer) -> usize {
    pubsub_list(redis)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

/// The channel of the limit `name`, as the limits name it.
fn channel(name: &str) -> String {
    format!("{{sluicegate:{name}}}:released")
}

/// How many subscribers the limit `name`'s channel has.
fn subscribers(redis: &RedisServer, name: &str) -> u64 {
    let (_, n): (String, u64) = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channel(name))
        .query(&mut redis.connection())
        .unwrap();
    n
}

/// Polls `what` until it holds, failing with `why` after [`PATIENCE`].
async fn until(why: &str, mut what: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !what() {
        assert!(Instant::now() < deadline, "{why}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn limit(store: &RedisStore, name: &str) -> GlobalConcurrency {
    GlobalConcurrency::builder(store, name, 1)
        // Only a release message (or a resubscription) wakes a waiter, never an expiry.
        .ttl(Duration::from_secs(60))
        .queue_timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A waiter on `limit` that has asked Redis, was told all permits are out, and sleeps: a
/// release from now on can reach it only as a wake (its next ask would find the permit free,
/// but it asks again only when woken). Waited for on the limit's count of sleeps, not a
/// pause: on a slow machine a pause can end before the waiter's ask, which then takes the
/// released permit without any wake, and the test proves nothing.
async fn waiting(limit: &GlobalConcurrency) -> tokio::task::JoinHandle<GlobalPermit> {
    let (mine, before) = (limit.clone(), limit.sleeps());
    let waiter = tokio::spawn(async move { mine.acquire().await.unwrap() });
    until("the waiter did not go to sleep", || limit.sleeps() > before).await;
    assert_eq!(limit.queued(), 1);
    waiter
}

/// The permit `waiter` gets once a release wakes it (within [`PATIENCE`], else fails with
/// `why`): a lease in Redis, not the failure policy's.
async fn woken_global(waiter: tokio::task::JoinHandle<GlobalPermit>, why: &str) -> GlobalPermit {
    let got = tokio::time::timeout(PATIENCE, waiter)
        .await
        .expect(why)
        .unwrap();
    assert!(got.is_global());
    got
}

/// A permit of `limit` that is a lease in Redis (after an outage the store may still be
/// down for a probe's backoff: those permits come from the failure policy).
async fn global_permit(limit: &GlobalConcurrency) -> GlobalPermit {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(p) = limit.acquire().await
            && p.is_global()
        {
            return p;
        }
        assert!(Instant::now() < deadline, "Redis never decided again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// 2000 limits on one store (the gate's 2000 pools with a global concurrency limit): Redis
/// sees one pub/sub connection subscribed to 2000 channels (it saw one connection per limit:
/// 50 for 50 before this version), and a second store adds one more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_limits_on_one_store_share_one_pubsub_connection() {
    let redis = RedisServer::start();
    let store = support::store(&redis).await;
    let names: Vec<String> = (0..2000).map(|i| format!("l{i}")).collect();
    let limits: Vec<_> = names.iter().map(|n| limit(&store, n)).collect();
    until("not every channel was subscribed", || {
        let mut numsub = redis::cmd("PUBSUB");
        numsub.arg("NUMSUB");
        for n in &names {
            numsub.arg(channel(n));
        }
        let counts: Vec<(String, u64)> = numsub.query(&mut redis.connection()).unwrap();
        counts.iter().all(|(_, n)| *n == 1)
    })
    .await;
    assert_eq!(pubsub_clients(&redis), 1, "one connection for the store");

    let other = support::store(&redis).await;
    let more = limit(&other, "l0");
    until("the second store did not subscribe", || {
        subscribers(&redis, "l0") == 2
    })
    .await;
    assert_eq!(pubsub_clients(&redis), 2, "one connection per store");
    drop((limits, more));
}

/// Two limits on one connection: a release on each wakes its own waiter, and the other
/// waiter sleeps on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_wakes_the_waiter_of_its_own_limit() {
    let redis = RedisServer::start();
    let (a, b) = (support::store(&redis).await, support::store(&redis).await);
    let (x, y) = (limit(&a, "x"), limit(&a, "y"));
    let (held_x, held_y) = {
        let (x, y) = (limit(&b, "x"), limit(&b, "y"));
        (x.acquire().await.unwrap(), y.acquire().await.unwrap())
    };
    // Both stores listen: `b`'s permits keep its limits.
    until("not subscribed", || {
        subscribers(&redis, "x") == 2 && subscribers(&redis, "y") == 2
    })
    .await;
    assert_eq!(pubsub_clients(&redis), 2);
    let (wait_x, wait_y) = (waiting(&x).await, waiting(&y).await);

    drop(held_x);
    let _got = woken_global(wait_x, "x's release woke x's waiter").await;
    // No pause needed: y's waiter cannot end while y's only permit is held, woken or not.
    assert!(!wait_y.is_finished(), "y's permit is still held");
    assert_eq!(y.queued(), 1);

    drop(held_y);
    let _got = woken_global(wait_y, "y's release woke y's waiter").await;
}

/// A channel is unsubscribed when the last limit on it is dropped, the connection closed
/// when the store's last limit is, and opened again by the next limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_every_limit_closes_the_connection_and_a_new_limit_opens_it() {
    let redis = RedisServer::start();
    let (store, other) = (support::store(&redis).await, support::store(&redis).await);
    let (a1, a2, b) = (limit(&store, "a"), limit(&store, "a"), limit(&store, "b"));
    until("not subscribed", || {
        subscribers(&redis, "a") == 1 && subscribers(&redis, "b") == 1
    })
    .await;
    assert_eq!(pubsub_clients(&redis), 1);

    drop(a1);
    // A barrier rather than a pause: the listener brings its subscriptions to the
    // registrations in one pass, so once `c` (registered after the drop) is subscribed, an
    // unsubscription of `a` for a1's drop would have been made too.
    let c = limit(&store, "c");
    until("`c` not subscribed", || subscribers(&redis, "c") == 1).await;
    assert_eq!(subscribers(&redis, "a"), 1, "a2 still listens on `a`");
    drop(c);
    until("`c` was not unsubscribed", || subscribers(&redis, "c") == 0).await;
    drop(a2);
    until("`a` was not unsubscribed", || subscribers(&redis, "a") == 0).await;
    assert_eq!(subscribers(&redis, "b"), 1);
    assert_eq!(pubsub_clients(&redis), 1);

    drop(b);
    until("the connection was not closed", || {
        pubsub_clients(&redis) == 0
    })
    .await;

    // The next limit opens it again, and its waiter is woken by a release.
    let again = limit(&store, "a");
    let held = limit(&other, "a").acquire().await.unwrap();
    // `other`'s permit keeps its limit, and its subscription.
    until("not subscribed again", || subscribers(&redis, "a") == 2).await;
    let waiter = waiting(&again).await;
    drop(held);
    let _got = woken_global(waiter, "the release woke the waiter").await;
    // `other`'s last limit went with its permit: its connection closes, `store`'s stays.
    until("`other`'s connection was not closed", || {
        pubsub_clients(&redis) == 1
    })
    .await;
    assert_eq!(subscribers(&redis, "a"), 1);
}

/// Redis restarted: the store is marked down by its subscription alone (no call of its
/// own), subscribes every channel again on one connection, is marked up by the next
/// decision, and a release wakes a waiter again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_every_channel_is_subscribed_again_on_one_connection() {
    let mut redis = RedisServer::start();
    let store = RedisStore::builder(&redis.url())
        .budget(Duration::from_secs(5))
        .backoff(Duration::from_millis(20), Duration::from_millis(200))
        .connect()
        .await
        .unwrap();
    let build = |name| {
        GlobalConcurrency::builder(&store, name, 1)
            .ttl(Duration::from_secs(60))
            .queue_timeout(Duration::from_secs(30))
            .on_failure(FailurePolicy::Deny)
            .build()
            .unwrap()
    };
    let (x, y) = (build("x"), build("y"));
    until("not subscribed", || {
        subscribers(&redis, "x") == 1 && subscribers(&redis, "y") == 1
    })
    .await;

    redis.kill();
    until("the subscription's end did not mark the store down", || {
        !store.health().up
    })
    .await;
    redis.restart();
    until("not subscribed again", || {
        subscribers(&redis, "x") == 1 && subscribers(&redis, "y") == 1
    })
    .await;
    assert_eq!(pubsub_clients(&redis), 1);

    // The next decisions probe Redis and find it up.
    drop(global_permit(&y).await);
    let health = store.health();
    assert!(health.up);
    assert!(health.recoveries >= 1, "{health:?}");

    let other = support::store(&redis).await;
    let held = limit(&other, "x").acquire().await.unwrap();
    let waiter = waiting(&x).await;
    drop(held);
    let _got = woken_global(waiter, "the release woke the waiter").await;
}

/// The listener runs on the runtime of the store's first limit. When that runtime shuts down
/// while a limit built on another, live runtime has a waiter, the waiter must still be woken
/// by a release (its limit's own listener lived on its own runtime before one connection was
/// shared; here nothing woke it before its permit's holder expired, a TTL later).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_is_woken_after_the_listeners_runtime_shut_down() {
    let redis = RedisServer::start();
    let (store, other) = (support::store(&redis).await, support::store(&redis).await);
    let (built, first) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let elsewhere = store.clone();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            built.send(limit(&elsewhere, "first")).unwrap();
            let _ = stopped.await;
        });
        // The runtime, and the listener task on it, are dropped here.
    });
    let first = first.recv().unwrap();
    let x = limit(&store, "x");
    until("not subscribed", || {
        subscribers(&redis, "first") == 1 && subscribers(&redis, "x") == 1
    })
    .await;
    let held = limit(&other, "x").acquire().await.unwrap();
    let waiter = waiting(&x).await;

    stop.send(()).unwrap();
    thread.join().unwrap();
    drop(held);
    let _got = woken_global(waiter, "the release woke the waiter").await;
    drop(first);
}

/// Whether Redis's ACL log holds a refused SUBSCRIBE of the limit `name`'s channel.
fn refused(redis: &RedisServer, name: &str) -> bool {
    let log: Vec<redis::Value> = redis::cmd("ACL")
        .arg("LOG")
        .query(&mut redis.connection())
        .unwrap();
    let object = format!("{:?}", channel(name));
    log.iter()
        .any(|entry| format!("{entry:?}").contains(&object))
}

/// Closing note of review 24, defect 3: a user whose ACL grants keys and commands but not
/// every channel (here only `x`'s) counts fine, but a SUBSCRIBE of another limit's channel is
/// refused (`NOPERM`). That marked the whole store down, every limit on it falling back, and
/// again after every reconnect. The store stays up now (its limits decide by Redis; waiters
/// of the refused channel fall back to lease expiry or their queue timeout), the refusal is
/// logged once, and the channels it may subscribe stay subscribed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_subscription_does_not_mark_the_store_down() {
    let redis = RedisServer::start();
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("counter")
        .arg("on")
        .arg(">pw")
        .arg("~*")
        .arg("resetchannels")
        .arg(format!("&{}", channel("x")))
        .arg("+@all")
        .query(&mut redis.connection())
        .unwrap();
    let url = format!("redis://counter:pw@127.0.0.1:{}/", redis.port);
    let store = RedisStore::builder(&url)
        .budget(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    let x = limit(&store, "x");
    until("x not subscribed", || subscribers(&redis, "x") == 1).await;
    let y = limit(&store, "y");
    until("y's SUBSCRIBE was not refused", || refused(&redis, "y")).await;
    // The listener has handled y's refusal when it asks for z.
    let z = limit(&store, "z");
    until("z's SUBSCRIBE was not refused", || refused(&redis, "z")).await;
    let health = store.health();
    assert!(health.up, "{health:?}");
    assert_eq!(health.outages, 0, "{health:?}");
    assert_eq!(subscribers(&redis, "x"), 1, "x stays subscribed");
    let permit = y.acquire().await.unwrap();
    assert!(permit.is_global(), "y decided by Redis");
    drop((x, y, z, permit));
}

/// Review 24, item 3: the first limit of a store built inside `block_on` of a current-thread
/// runtime that is kept but not driven again. The listener task it started sat queued there,
/// neither running nor dropped, and every concurrency limit of the store waited for lease
/// expiries, not releases. The listener now runs on a thread of its own: a release on
/// another instance wakes the waiter (the TTL is 60 s, the queue timeout 30 s: only the
/// release can wake it in time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_is_woken_while_the_runtime_that_built_the_first_limit_is_not_driven() {
    let redis = RedisServer::start();
    let store = support::store(&redis).await;
    let elsewhere = store.clone();
    let (idle, first) = std::thread::spawn(move || {
        let idle = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let first = idle.block_on(async { limit(&elsewhere, "first") });
        (idle, first)
    })
    .join()
    .unwrap();
    let x = limit(&store, "x");
    let other = support::store(&redis).await;
    let held = global_permit(&limit(&other, "x")).await;
    // Subscribed before the release (else the subscription's wake would stand in for it).
    until("x not subscribed", || subscribers(&redis, "x") == 2).await;
    let waiter = waiting(&x).await;
    drop(held);
    let got = woken_global(waiter, "the release woke the waiter").await;
    drop((got, first));
    std::thread::spawn(move || drop(idle)).join().unwrap();
}

/// The id of the one pub/sub connection of `user`, as Redis numbers its clients.
fn pubsub_client_id(redis: &RedisServer, user: &str) -> u64 {
    let list = pubsub_list(redis);
    let ids: Vec<u64> = list
        .lines()
        .filter(|l| l.contains(&format!(" user={user} ")))
        .filter_map(|l| l.strip_prefix("id=")?.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(ids.len(), 1, "{list}");
    ids[0]
}

/// Left by redis25: a channel an ACL refused was asked for again only at the next reconnect,
/// so after the operator granted it (`ACL SETUSER ... &pattern`) its waiters went on waiting
/// for lease expiries, Redis answering every other call, until something broke the
/// connection. The refused channel is asked for again on the live connection (from a
/// keepalive on, backing off): once granted, it is subscribed on the same connection, its
/// waiters are woken, and a release on another instance wakes the next waiter (TTL 60 s,
/// queue timeout 30 s: only the release can).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_granted_after_a_refusal_is_subscribed_without_a_reconnect() {
    let redis = RedisServer::start();
    let acl = |rules: &[String]| {
        let () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg("counter")
            .arg(rules)
            .query(&mut redis.connection())
            .unwrap();
    };
    acl(&[
        "on".into(),
        ">pw".into(),
        "~*".into(),
        "resetchannels".into(),
        format!("&{}", channel("x")),
        "+@all".into(),
    ]);
    let url = format!("redis://counter:pw@127.0.0.1:{}/", redis.port);
    let store = RedisStore::builder(&url)
        .budget(Duration::from_secs(5))
        .keepalive(Duration::from_millis(200))
        .connect()
        .await
        .unwrap();
    let (x, y) = (limit(&store, "x"), limit(&store, "y"));
    until("y's SUBSCRIBE was not refused", || refused(&redis, "y")).await;
    until("x not subscribed", || subscribers(&redis, "x") == 1).await;
    let connection = pubsub_client_id(&redis, "counter");

    // Another instance, allowed every channel, holds y's only permit.
    let other = support::store(&redis).await;
    let held = global_permit(&limit(&other, "y")).await;
    until("the other instance did not subscribe", || {
        subscribers(&redis, "y") == 1
    })
    .await;
    let waiter = waiting(&y).await;
    let slept = y.sleeps();

    acl(&[format!("&{}", channel("y"))]);
    until("y was not subscribed after the grant", || {
        subscribers(&redis, "y") == 2
    })
    .await;
    // The subscription woke the waiter (a release may have gone unheard): it asked again,
    // found the permit held, and sleeps again.
    until("the subscription did not wake the waiter", || {
        y.sleeps() > slept
    })
    .await;
    drop(held);
    let _got = woken_global(waiter, "the release woke the waiter").await;
    assert_eq!(
        pubsub_client_id(&redis, "counter"),
        connection,
        "no reconnect"
    );
    let health = store.health();
    assert_eq!(health.outages, 0, "{health:?}");
    drop(x);
}
