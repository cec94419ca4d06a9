//! Three instances on three connections share one global rate: never more than the limit in
//! any window, by Redis's own clock, and the limit is reached.

mod support;

use std::future::Future;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluicegate::rate::Quota;
use sluicegate_redis::{GlobalGcra, GlobalWindow, Source, Verdict};
use support::RedisServer;

const INSTANCES: usize = 3;
const RUN: Duration = Duration::from_millis(1500);

/// Runs `decide` from two tasks per instance for `RUN`; returns the Redis times (ns since the
/// epoch) of every admission, sorted.
async fn admissions<L, F, Fut>(limits: Vec<Arc<L>>, decide: F) -> Vec<u64>
where
    L: Send + Sync + 'static,
    F: Fn(Arc<L>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Verdict> + Send,
{
    let mut tasks = Vec::new();
    for limit in limits {
        for _ in 0..2 {
            let (limit, decide) = (limit.clone(), decide.clone());
            tasks.push(tokio::spawn(async move {
                let mut times = Vec::new();
                let end = Instant::now() + RUN;
                while Instant::now() < end {
                    let v = decide(limit.clone()).await;
                    assert_eq!(v.source, Source::Redis, "every decision by Redis");
                    if v.decision.is_allowed() {
                        times.push(v.server_time.unwrap().as_nanos() as u64);
                    }
                }
                times
            }));
        }
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_unstable();
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_never_exceed_a_global_gcra_and_reach_it() {
    let redis = RedisServer::start();
    let (rate, burst) = (300_u32, 20_u32);
    let quota = Quota::per_second(rate).with_burst(NonZeroU32::new(burst).unwrap());
    let mut limits = Vec::new();
    for _ in 0..INSTANCES {
        // A store each: separate connections, as separate processes would have.
        let store = support::store(&redis).await;
        limits.push(Arc::new(
            GlobalGcra::builder(&store, "shared", quota)
                .build()
                .unwrap(),
        ));
    }
    let times = admissions(limits, |l: Arc<GlobalGcra>| async move {
        l.decide(1).await.unwrap()
    })
    .await;

    // GCRA's promise: in any interval [a, b], at most burst + (b - a) / t admissions, i.e.
    // (j - i + 1)·t <= burst·t + (s_j - s_i) for every pair i <= j. Checked in one pass:
    // max over j of (j·t - s_j) - min over i <= j of (i·t - s_i) + t <= burst·t.
    let t = 1_000_000_000 / u64::from(rate);
    let mut lowest = i128::MAX;
    for (j, &s) in times.iter().enumerate() {
        let x = j as i128 * t as i128 - s as i128;
        lowest = lowest.min(x);
        assert!(
            x - lowest + i128::from(t) <= i128::from(burst) * t as i128,
            "more than burst + rate × interval ending at admission {j}"
        );
    }
    // Reached: the span of admissions was used at (nearly) the full rate.
    let span = times.last().unwrap() - times.first().unwrap();
    let expected = span / t + u64::from(burst);
    assert!(
        times.len() as u64 * 100 >= expected * 95,
        "{} admitted, the rate allows {expected}",
        times.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_never_exceed_a_global_sliding_window_and_reach_it() {
    let redis = RedisServer::start();
    let (limit, window, slices) = (100_u32, Duration::from_millis(200), 10_u32);
    let mut limits = Vec::new();
    for _ in 0..INSTANCES {
        let store = support::store(&redis).await;
        let w = GlobalWindow::builder(&store, "shared", limit, window)
            .slices(slices)
            .build()
            .unwrap();
        limits.push(Arc::new(w));
    }
    let times = admissions(limits, |l: Arc<GlobalWindow>| async move {
        l.decide(1).await.unwrap()
    })
    .await;

    let w = window.as_nanos() as u64;
    let slice = w / u64::from(slices);
    // At most `limit` in any aligned window (any `slices` consecutive slices).
    let (first, last) = (times[0] / slice, times[times.len() - 1] / slice);
    let mut per_slice = vec![0_u64; (last - first + 1) as usize];
    for s in &times {
        per_slice[(s / slice - first) as usize] += 1;
    }
    for (k, run) in per_slice.windows(slices as usize).enumerate() {
        let n: u64 = run.iter().sum();
        assert!(n <= u64::from(limit), "{n} admitted in aligned window {k}");
    }
    // At most limit·(1 + 1/slices) in any interval as long as the window.
    let cap = u64::from(limit + limit / slices);
    let mut i = 0;
    for j in 0..times.len() {
        while times[j] - times[i] >= w {
            i += 1;
        }
        assert!(
            (j - i + 1) as u64 <= cap,
            "{} admitted within one window",
            j - i + 1
        );
    }
    // Reached: under constant overload the window admits at least `limit` per `slices + 1`
    // slices (a burst fills it, the edge cap holds the next slice back); one such period is
    // lost to the start and the end of the run.
    let periods = per_slice.len() as u64 / u64::from(slices + 1);
    assert!(
        times.len() as u64 >= (periods - 1) * u64::from(limit),
        "{} admitted in {periods} periods",
        times.len()
    );
}
