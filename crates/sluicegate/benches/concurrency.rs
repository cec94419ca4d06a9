//! Concurrency limiter cost, each row beside its baseline and its peer in the same run:
//! the physical floor (`AtomicU64::fetch_add`) and tokio's `Semaphore`.
//!
//! `cargo bench -p sluicegate --bench concurrency`; `scripts/bench-concurrency` turns the
//! results into the ratios of BENCHMARKS.md.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
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
        b.iter_custom(|iters| runtime.block_on(ping_pong_sluicegate(iters)))
    });
    group.bench_function("tokio_semaphore", |b| {
        b.iter_custom(|iters| runtime.block_on(ping_pong_tokio(iters)))
    });
    group.finish();
}

/// A line of waiting tasks behind one permit on a current-thread runtime: the timer starts
/// when the permit is released, and each waiter, once it runs, releases at once, handing the
/// permit to the next. Time per hand-off (release → waiting task runs), the queue already
/// formed.
fn hand_off_chain(c: &mut Criterion) {
    let mut group = c.benchmark_group("hand_off_chain");
    group.throughput(Throughput::Elements(1));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    group.bench_function("sluicegate", |b| {
        b.iter_custom(|iters| runtime.block_on(in_batches(iters, line_sluicegate)))
    });
    group.bench_function("tokio_semaphore", |b| {
        b.iter_custom(|iters| runtime.block_on(in_batches(iters, line_tokio)))
    });
    // The floor (see `oneshot_line`).
    group.bench_function("floor_oneshot", |b| {
        b.iter_custom(|iters| runtime.block_on(in_batches(iters, oneshot_line)))
    });
    group.finish();
}

/// One line of `n` waiters behind our limiter; the time from the release to the last waiter.
async fn line_sluicegate(n: usize) -> Duration {
    let limiter = ConcurrencyLimiter::builder(1).max_queue(n).build().unwrap();
    let held = limiter.acquire_owned().await.unwrap();
    let line = spawn_line(n, move || {
        let limiter = limiter.clone();
        async move { drop(limiter.acquire().await.unwrap()) }
    })
    .await;
    let start = Instant::now();
    drop(held);
    line.await.unwrap();
    start.elapsed()
}

/// The same line behind tokio's `Semaphore`.
async fn line_tokio(n: usize) -> Duration {
    let semaphore = Arc::new(Semaphore::new(1));
    let held = semaphore.clone().acquire_owned().await.unwrap();
    let line = spawn_line(n, move || {
        let semaphore = semaphore.clone();
        async move { drop(semaphore.acquire().await.unwrap()) }
    })
    .await;
    let start = Instant::now();
    drop(held);
    line.await.unwrap();
    start.elapsed()
}

/// `iters` rounds of two tasks ping-ponging one permit of our limiter.
async fn ping_pong_sluicegate(iters: u64) -> Duration {
    let limiter = ConcurrencyLimiter::new(1);
    ping_pong(iters, move || {
        let limiter = limiter.clone();
        async move {
            let permit = limiter.acquire().await.unwrap();
            tokio::task::yield_now().await;
            drop(permit);
        }
    })
    .await
}

/// The same with tokio's `Semaphore`.
async fn ping_pong_tokio(iters: u64) -> Duration {
    let semaphore = Arc::new(Semaphore::new(1));
    ping_pong(iters, move || {
        let semaphore = semaphore.clone();
        async move {
            let permit = semaphore.acquire().await.unwrap();
            tokio::task::yield_now().await;
            drop(permit);
        }
    })
    .await
}

/// The floor: the same line of tasks woken one after another by a bare oneshot channel each
/// (no queue, no permits). No limiter's hand-off on tokio can cost less than this.
async fn oneshot_line(n: usize) -> Duration {
    let (first, mut rx) = tokio::sync::oneshot::channel::<()>();
    let mut last = None;
    for _ in 0..n {
        let (tx, next_rx) = tokio::sync::oneshot::channel::<()>();
        let wait = std::mem::replace(&mut rx, next_rx);
        last = Some(tokio::spawn(async move {
            wait.await.unwrap();
            let _ = tx.send(());
        }));
    }
    tokio::task::yield_now().await;
    let start = Instant::now();
    first.send(()).unwrap();
    last.expect("at least one waiter").await.unwrap();
    start.elapsed()
}

/// Runs `batch` over `iters` elements in lines of at most 1 000 waiters (the default queue
/// bound is 1 024); sums their times.
async fn in_batches<F, Fut>(iters: u64, batch: F) -> Duration
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Duration>,
{
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(1_000);
        total += batch(n as usize).await;
        left -= n;
    }
    total
}

/// Spawns `n` tasks that each run `waiter` and lets them all start waiting; returns the
/// handle of the last in line (the tasks finish in order).
async fn spawn_line<F, Fut>(n: usize, waiter: F) -> tokio::task::JoinHandle<()>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut last = None;
    for _ in 0..n {
        last = Some(tokio::spawn(waiter()));
    }
    // Every spawned task runs once (and joins the line) before this task runs again.
    tokio::task::yield_now().await;
    last.expect("at least one waiter")
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

/// Nanoseconds per element of `run(iters)`, which returns the time `iters` elements took.
fn per_element(iters: u64, run: impl FnOnce(u64) -> Duration) -> f64 {
    run(iters).as_nanos() as f64 / iters as f64
}

/// The targets' ratios, measured interleaved: every subject runs once per round, in turn, and
/// keeps its fastest round (two-thread rows: the median round). On this shared 2-core machine a neighbour's burst then slows one
/// round of everybody rather than every round of one subject (criterion's separate groups
/// drift apart by ±30 % between runs); the minimum is the undisturbed cost.
fn interleaved_ratios() {
    const ITERS: u64 = 200_000;
    const ROUNDS: usize = 30;
    let counter = AtomicU64::new(0);
    let limiter = ConcurrencyLimiter::new(1000);
    let semaphore = Semaphore::new(1000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    // Hand-off rows: 20 000 hand-offs a round, on one current-thread runtime.
    let rt = &runtime;
    let chain_ours = || per_element(20_000, |n| rt.block_on(in_batches(n, line_sluicegate)));
    let chain_tokio = || per_element(20_000, |n| rt.block_on(in_batches(n, line_tokio)));
    let floor = || per_element(20_000, |n| rt.block_on(in_batches(n, oneshot_line)));
    let pp_ours = || per_element(20_000, |n| rt.block_on(ping_pong_sluicegate(n)));
    let pp_tokio = || per_element(20_000, |n| rt.block_on(ping_pong_tokio(n)));
    let subjects: [(&str, &dyn Fn() -> f64); 11] = [
        ("fetch_add", &|| {
            per_element(ITERS, |iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(counter.fetch_add(1, Ordering::AcqRel));
                }
                start.elapsed()
            })
        }),
        ("sluicegate", &|| {
            per_element(ITERS, |iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    drop(black_box(&limiter).try_acquire().unwrap());
                }
                start.elapsed()
            })
        }),
        ("tokio_semaphore", &|| {
            per_element(ITERS, |iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    drop(black_box(&semaphore).try_acquire().unwrap());
                }
                start.elapsed()
            })
        }),
        ("2 threads fetch_add", &|| {
            per_element(ITERS, |iters| {
                two_threads(&counter, iters, |c| {
                    black_box(c.fetch_add(1, Ordering::AcqRel));
                })
            })
        }),
        ("2 threads sluicegate", &|| {
            per_element(ITERS, |iters| {
                two_threads(&limiter, iters, |l| drop(l.try_acquire().unwrap()))
            })
        }),
        ("2 threads tokio_semaphore", &|| {
            per_element(ITERS, |iters| {
                two_threads(&semaphore, iters, |s| drop(s.try_acquire().unwrap()))
            })
        }),
        ("hand-off chain sluicegate", &chain_ours),
        ("hand-off chain tokio", &chain_tokio),
        ("hand-off chain floor", &floor),
        ("ping-pong sluicegate", &pp_ours),
        ("ping-pong tokio", &pp_tokio),
    ];
    let mut rounds = vec![Vec::with_capacity(ROUNDS); subjects.len()];
    for _ in 0..ROUNDS {
        for (times, (_, run)) in rounds.iter_mut().zip(&subjects) {
            times.push(run());
        }
    }
    // The fastest round is the undisturbed cost of one thread; for two threads it is the
    // round in which they overlapped least, so those rows take the median round instead.
    let best: Vec<f64> = rounds
        .iter_mut()
        .zip(&subjects)
        .map(|(times, (name, _))| {
            times.sort_by(f64::total_cmp);
            if name.starts_with("2 threads") {
                times[times.len() / 2]
            } else {
                times[0]
            }
        })
        .collect();
    println!(
        "interleaved, {ROUNDS} rounds (ns per operation, per thread; fastest round, median for 2 threads):"
    );
    for ((name, _), b) in subjects.iter().zip(&best) {
        println!("  {name:<28} {b:7.2}");
    }
    println!("ratios:");
    for (what, a, b, target) in [
        ("uncontended ÷ fetch_add", 1, 0, "≤ 2.5×"),
        ("  tokio Semaphore ÷ fetch_add", 2, 0, "(peer)"),
        ("2 threads ÷ shared fetch_add", 4, 3, "≤ 3×"),
        ("  tokio Semaphore ÷ shared fetch_add", 5, 3, "(peer)"),
        ("hand-off chain ÷ tokio Semaphore", 6, 7, "≤ 0.8×"),
        (
            "  floor (bare oneshot wake) ÷ tokio Semaphore",
            8,
            7,
            "(floor)",
        ),
        ("ping-pong hand-off ÷ tokio Semaphore", 9, 10, "≤ 0.8×"),
    ] {
        println!("  {what:<40} {:5.2}×   target {target}", best[a] / best[b]);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = uncontended, contended, hand_off, hand_off_chain
}

fn main() {
    // `SKIP_INTERLEAVED=1 cargo bench ... -- hand_off` runs criterion's groups alone.
    if std::env::var_os("SKIP_INTERLEAVED").is_none() {
        interleaved_ratios();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
