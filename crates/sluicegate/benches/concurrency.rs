//! Concurrency limiter cost, each row beside its baseline and its peer in the same run:
//! the physical floor (`AtomicU64::fetch_add`) and tokio's `Semaphore`.
//!
//! `cargo bench -p sluicegate --bench concurrency`; `scripts/bench-concurrency` turns the
//! results into the ratios of BENCHMARKS.md.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluicegate::concurrency::ConcurrencyLimiter;
use tokio::sync::Semaphore;

fn uncontended(c: &mut Criterion) {
    let mut group = c.benchmark_group("uncontended");
    group.throughput(Throughput::Elements(1));
    let counter = AtomicU64::new(0);
    group.bench_function("fetch_add", |b| {
        b.iter(|| black_box(&counter).fetch_add(1, Ordering::AcqRel))
    });
    let limiter = ConcurrencyLimiter::new(1000);
    group.bench_function("sluicegate", |b| {
        b.iter(|| drop(black_box(&limiter).try_acquire().unwrap()))
    });
    let semaphore = Semaphore::new(1000);
    group.bench_function("tokio_semaphore", |b| {
        b.iter(|| drop(black_box(&semaphore).try_acquire().unwrap()))
    });
    group.finish();
}

/// Runs `op` `iters` times on each of two threads at once; returns the wall time, so the
/// per-element figure is the time per operation per thread.
fn two_threads<S: Sync>(shared: &S, iters: u64, op: impl Fn(&S) + Sync) -> Duration {
    let barrier = Barrier::new(2);
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            barrier.wait();
            for _ in 0..iters {
                op(shared);
            }
        });
        barrier.wait();
        let start = Instant::now();
        for _ in 0..iters {
            op(shared);
        }
        worker.join().unwrap();
        start.elapsed()
    })
}

fn contended(c: &mut Criterion) {
    let mut group = c.benchmark_group("contended_2_threads");
    group.throughput(Throughput::Elements(1));
    let counter = AtomicU64::new(0);
    group.bench_function("fetch_add", |b| {
        b.iter_custom(|iters| {
            two_threads(&counter, iters, |c| {
                black_box(c.fetch_add(1, Ordering::AcqRel));
            })
        })
    });
    let limiter = ConcurrencyLimiter::new(1000);
    group.bench_function("sluicegate", |b| {
        b.iter_custom(|iters| two_threads(&limiter, iters, |l| drop(l.try_acquire().unwrap())))
    });
    let semaphore = Semaphore::new(1000);
    group.bench_function("tokio_semaphore", |b| {
        b.iter_custom(|iters| two_threads(&semaphore, iters, |s| drop(s.try_acquire().unwrap())))
    });
    group.finish();
}

/// Two tasks share one permit on a current-thread runtime: every release hands the permit
/// to the task waiting for it, which then runs. Time per hand-off.
fn hand_off(c: &mut Criterion) {
    let mut group = c.benchmark_group("hand_off");
    group.throughput(Throughput::Elements(1));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();

    group.bench_function("sluicegate", |b| {
        b.iter_custom(|iters| {
            let limiter = ConcurrencyLimiter::new(1);
            runtime.block_on(ping_pong(iters, move || {
                let limiter = limiter.clone();
                async move {
                    let permit = limiter.acquire().await.unwrap();
                    tokio::task::yield_now().await;
                    drop(permit);
                }
            }))
        })
    });
    group.bench_function("tokio_semaphore", |b| {
        b.iter_custom(|iters| {
            let semaphore = Arc::new(Semaphore::new(1));
            runtime.block_on(ping_pong(iters, move || {
                let semaphore = semaphore.clone();
                async move {
                    let permit = semaphore.acquire().await.unwrap();
                    tokio::task::yield_now().await;
                    drop(permit);
                }
            }))
        })
    });
    group.finish();
}

/// Two tasks each run `round` until `iters` rounds have run between them.
async fn ping_pong<F, Fut>(iters: u64, round: F) -> Duration
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let per_task = iters.div_ceil(2);
    let start = Instant::now();
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let round = round.clone();
            tokio::spawn(async move {
                for _ in 0..per_task {
                    round().await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    start.elapsed()
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = uncontended, contended, hand_off
}
criterion_main!(benches);
