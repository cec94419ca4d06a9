//! A measurement, not a check (`--ignored --nocapture`): how long a waiter on one store takes
//! to get a permit after a holder on another store releases it (release message → pub/sub
//! listener → waiter asks Redis again). Used to compare where the listener runs.

mod support;

use std::time::{Duration, Instant};

use sluicegate_redis::GlobalConcurrency;
use support::RedisServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn release_to_wake_latency() {
    let redis = RedisServer::start();
    let (a, b) = (support::store(&redis).await, support::store(&redis).await);
    let limit = |store| {
        GlobalConcurrency::builder(store, "l", 1)
            .ttl(Duration::from_secs(60))
            .queue_timeout(Duration::from_secs(30))
            .build()
            .unwrap()
    };
    let (holder, waiter) = (limit(&a), limit(&b));
    // Both listeners subscribed: a first permit taken and handed over once.
    let warm = holder.acquire().await.unwrap();
    drop(warm);
    let mut took = Vec::new();
    for _ in 0..300 {
        let held = holder.acquire().await.unwrap();
        assert!(held.is_global());
        let w = waiter.clone();
        let (asked, is_asking) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let _ = asked.send(());
            w.acquire().await.unwrap()
        });
        is_asking.await.unwrap();
        // Let the waiter ask Redis and go to sleep on its channel.
        while waiter.queued() == 0 {
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        let released = Instant::now();
        drop(held);
        let got = task.await.unwrap();
        took.push(released.elapsed());
        drop(got);
    }
    took.sort();
    let p = |q: f64| took[((took.len() as f64 - 1.0) * q) as usize];
    println!(
        "release to wake, {} rounds: p50 {:?}  p90 {:?}  p99 {:?}  max {:?}",
        took.len(),
        p(0.5),
        p(0.9),
        p(0.99),
        took[took.len() - 1]
    );
}
