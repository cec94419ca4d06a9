//! review124 (docs/reviews/2026-12-07-review124): a global permit's release ordered after an
//! in-flight renewal (221b80a), where the renewal's task does not run.

mod support;

use std::time::Duration;

use sluicegate_redis::GlobalConcurrency;
use sluicegate_redis::concurrency::AcquireError;
use support::RedisServer;

/// A synchronous program's permit: acquired inside `block_on` of a current-thread runtime
/// (which runs only inside `block_on`), its renewal task on that runtime, the limit and its
/// store on a runtime that runs. The permit is dropped outside `block_on` while a renewal
/// waits for Redis (paused for writes here, as a slow Redis would keep it). Before 221b80a
/// the drop sent the release from the limit's runtime, queued behind the renewal: back as
/// soon as Redis answered. Since, the release is the renewal task's to send once the
/// renewal is over — and that task runs only when its runtime runs again: the permit stayed
/// out for the lease time the renewal had just given it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permit_dropped_during_a_renewal_outside_its_runtime_is_released() {
    let redis = RedisServer::start();
    let store = support::store(&redis).await;
    // A renewal 2 s after the acquire; a lease it renews outlives the check below by far.
    let ttl = Duration::from_secs(6);
    let limit = GlobalConcurrency::builder(&store, "sync", 1)
        .ttl(ttl)
        .queue_timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut admin = client.get_connection().unwrap();
    let held = limit.clone();
    let (runtime, admin) = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let permit = runtime.block_on(held.acquire()).unwrap();
        assert!(permit.is_global());
        // Writes (and scripts) wait; this connection's `CLIENT UNPAUSE` does not.
        redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(30_000)
            .arg("WRITE")
            .query::<()>(&mut admin)
            .unwrap();
        // The program's next call: its runtime runs past the renewal (at a third of the
        // TTL), whose script now waits for Redis.
        runtime.block_on(tokio::time::sleep(ttl / 3 + Duration::from_millis(500)));
        // Outside `block_on`, outside any runtime.
        drop(permit);
        redis::cmd("CLIENT")
            .arg("UNPAUSE")
            .query::<()>(&mut admin)
            .unwrap();
        (runtime, admin)
    })
    .await
    .unwrap();
    let next = tokio::time::timeout(ttl / 2, limit.acquire()).await;
    let released = matches!(&next, Ok(Ok(p)) if p.is_global());
    drop(next);
    // The program's runtime ends (its renewal task with it, which sends the release then).
    tokio::task::spawn_blocking(move || drop((runtime, admin)))
        .await
        .unwrap();
    assert!(
        released,
        "the permit stayed out after its drop: its release waited for a renewal task whose \
         runtime does not run"
    );
}

/// The other way round (review104's case): a limit built on a runtime that has shut down
/// since has no runtime to make its renewals' calls on — a call spawned there is dropped
/// unrun — and the permit's own task makes them: a held permit is still renewed past its
/// lease time (a third of it between two renewals: one would have to come two thirds of a
/// TTL late for the lease to lapse).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permit_of_a_limit_whose_runtime_ended_is_still_renewed() {
    let redis = RedisServer::start();
    let (a, b) = (support::store(&redis).await, support::store(&redis).await);
    let ttl = Duration::from_millis(900);
    let holder = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _in_it = runtime.enter();
        GlobalConcurrency::builder(&a, "ended", 1)
            .ttl(ttl)
            .build()
            .unwrap()
    })
    .join()
    .unwrap();
    let other = GlobalConcurrency::builder(&b, "ended", 1)
        .ttl(ttl)
        .queue_timeout(4 * ttl)
        .build()
        .unwrap();
    let held = holder.acquire().await.unwrap();
    assert!(held.is_global());
    // Over four TTLs: only renewal keeps the lease alive.
    assert!(matches!(
        other.acquire().await,
        Err(AcquireError::Timeout { .. })
    ));
    drop(held);
    assert!(other.acquire().await.unwrap().is_global());
}
