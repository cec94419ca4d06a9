//! Rate limiter benchmarks: our sliding window, GCRA and keyed GCRA against governor (the
//! peer) and `fetch_add` (the physical floor), all in one run.
//!
//! Clocks are compared like with like: our `MonotonicClock` against governor's
//! `MonotonicClock` (both `std::time::Instant`), our `CoarseClock` against governor's
//! `QuantaUpkeepClock` (both a background thread storing the time every millisecond).
//!
//! Every check takes the "allowed" path in both libraries (a quota no benchmark reaches), and
//! each iteration does the same work: read the clock, decide, record, return the answer.
//!
//! Run: `cargo bench -p sluicegate --bench rate`. Printed first: bytes per key, then the
//! ratios of the targets measured interleaved (below), then criterion's groups.

use std::hint::black_box;
use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use governor::clock::{MonotonicClock as GovMonotonic, QuantaUpkeepClock};
use governor::{Quota as GovQuota, RateLimiter};
use sluicegate::clock::{CoarseClock, MonotonicClock};
use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::{Gcra, Quota, SlidingWindow};

/// A rate no benchmark reaches, so every check takes the "allowed" path in both libraries.
const RATE: u32 = 1_000_000_000;
const LIVE_KEYS: u64 = 1_000_000;

fn gov_quota() -> GovQuota {
    GovQuota::per_second(NonZeroU32::new(RATE).unwrap())
}

fn gov_coarse() -> QuantaUpkeepClock {
    QuantaUpkeepClock::from_interval(Duration::from_millis(1)).unwrap()
}

fn window<C: sluicegate::clock::Clock>(clock: C) -> SlidingWindow<C> {
    SlidingWindow::with_clock(u32::MAX, Duration::from_secs(1), 10, clock).unwrap()
}

fn single_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("check");
    g.throughput(Throughput::Elements(1));
    let counter = AtomicU64::new(0);
    g.bench_function("fetch_add", |b| {
        b.iter(|| counter.fetch_add(1, Ordering::AcqRel))
    });

    let gcra = Gcra::new(Quota::per_second(RATE).unwrap());
    g.bench_function("gcra/monotonic", |b| b.iter(|| black_box(gcra.check())));
    let sliding = window(MonotonicClock);
    g.bench_function("sliding/monotonic", |b| {
        b.iter(|| black_box(sliding.check()))
    });
    let gov = RateLimiter::direct_with_clock(gov_quota(), GovMonotonic);
    g.bench_function("governor/monotonic", |b| b.iter(|| black_box(gov.check())));

    let gcra = Gcra::with_clock(Quota::per_second(RATE).unwrap(), CoarseClock::new());
    g.bench_function("gcra/coarse", |b| b.iter(|| black_box(gcra.check())));
    let sliding = window(CoarseClock::new());
    g.bench_function("sliding/coarse", |b| b.iter(|| black_box(sliding.check())));
    let gov = RateLimiter::direct_with_clock(gov_quota(), gov_coarse());
    g.bench_function("governor/coarse", |b| b.iter(|| black_box(gov.check())));
    g.finish();
}

/// Time for each of two threads to run `iters` operations on shared state.
fn two_threads(iters: u64, op: impl Fn() + Sync) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..iters {
                    op();
                }
            });
        }
    });
    start.elapsed()
}

fn contended(c: &mut Criterion) {
    let mut g = c.benchmark_group("contended_2_threads");
    g.throughput(Throughput::Elements(2));
    let counter = AtomicU64::new(0);
    g.bench_function("fetch_add", |b| {
        b.iter_custom(|n| {
            two_threads(n, || {
                black_box(counter.fetch_add(1, Ordering::AcqRel));
            })
        })
    });
    let gcra = Gcra::with_clock(Quota::per_second(RATE).unwrap(), CoarseClock::new());
    g.bench_function("gcra/coarse", |b| {
        b.iter_custom(|n| {
            two_threads(n, || {
                let _ = black_box(gcra.check());
            })
        })
    });
    let sliding = window(CoarseClock::new());
    g.bench_function("sliding/coarse", |b| {
        b.iter_custom(|n| {
            two_threads(n, || {
                let _ = black_box(sliding.check());
            })
        })
    });
    let gov = RateLimiter::direct_with_clock(gov_quota(), gov_coarse());
    g.bench_function("governor/coarse", |b| {
        b.iter_custom(|n| {
            two_threads(n, || {
                let _ = black_box(gov.check());
            })
        })
    });
    g.finish();
}

/// A key among the live ones, spread over the table (a multiplicative hash of `i`).
fn key(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % LIVE_KEYS
}

fn keyed_quota() -> Quota {
    Quota::per_hour(RATE)
}

fn keyed(c: &mut Criterion) {
    let mut g = c.benchmark_group("keyed_1m_live_keys");
    g.throughput(Throughput::Elements(1));
    let max = NonZeroUsize::new(2 * LIVE_KEYS as usize).unwrap();

    let ours = KeyedGcra::<u64, _>::with_clock(keyed_quota(), max, CoarseClock::new());
    (0..LIVE_KEYS).for_each(|k| {
        let _ = ours.check(&k);
    });
    let mut i = 0;
    g.bench_function("sluicegate/coarse", |b| {
        b.iter(|| {
            i += 1;
            black_box(ours.check(&key(i)))
        })
    });
    drop(ours);

    let sip = KeyedGcra::<u64, _, _>::with_clock_and_hasher(
        keyed_quota(),
        max,
        CoarseClock::new(),
        std::hash::RandomState::new(),
    );
    (0..LIVE_KEYS).for_each(|k| {
        let _ = sip.check(&k);
    });
    g.bench_function("sluicegate_siphash/coarse", |b| {
        b.iter(|| {
            i += 1;
            black_box(sip.check(&key(i)))
        })
    });
    drop(sip);

    let gov = RateLimiter::<u64, _, _>::dashmap_with_clock(gov_quota(), gov_coarse());
    (0..LIVE_KEYS).for_each(|k| {
        let _ = gov.check_key(&k);
    });
    g.bench_function("governor_dashmap/coarse", |b| {
        b.iter(|| {
            i += 1;
            black_box(gov.check_key(&key(i)))
        })
    });
    g.finish();
}

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0)
        * 4096
}

/// Resident-set growth per key while filling each keyed limiter with 1M `u64` keys. Both stay
/// alive until the end, so neither reuses memory the other freed.
fn bytes_per_key() {
    let max = NonZeroUsize::new(2 * LIVE_KEYS as usize).unwrap();
    let before = resident_bytes();
    let ours = KeyedGcra::<u64, _>::with_clock(keyed_quota(), max, CoarseClock::new());
    (0..LIVE_KEYS).for_each(|k| {
        let _ = ours.check(&k);
    });
    let mid = resident_bytes();
    let gov = RateLimiter::<u64, _, _>::dashmap_with_clock(gov_quota(), gov_coarse());
    (0..LIVE_KEYS).for_each(|k| {
        let _ = gov.check_key(&k);
    });
    let after = resident_bytes();
    println!(
        "bytes per key (1M u64 keys, resident growth): sluicegate {:.1}, governor dashmap {:.1}",
        (mid - before) as f64 / LIVE_KEYS as f64,
        (after - mid) as f64 / LIVE_KEYS as f64,
    );
}

/// Nanoseconds per operation of `op` run `iters` times on this thread.
fn one_thread(iters: u64, op: impl Fn()) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        op();
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

/// The targets' ratios, measured interleaved: every subject runs once per round, in turn, and
/// each keeps its fastest round. On a shared machine a neighbour's burst then slows one round
/// of everybody instead of all rounds of one subject, which is what makes criterion's
/// separate groups drift apart by ±30 % between runs; the minimum is the undisturbed cost.
fn interleaved_ratios() {
    const ITERS: u64 = 200_000;
    const ROUNDS: usize = 40;
    let ours_quota = || Quota::per_second(RATE).unwrap();
    let gcra_mono = Gcra::new(ours_quota());
    let sliding_mono = window(MonotonicClock);
    let gov_mono = RateLimiter::direct_with_clock(gov_quota(), GovMonotonic);
    let gcra_coarse = Gcra::with_clock(ours_quota(), CoarseClock::new());
    let sliding_coarse = window(CoarseClock::new());
    let gov_coarse = RateLimiter::direct_with_clock(gov_quota(), gov_coarse());
    let counter = AtomicU64::new(0);
    // Longer runs with two threads, so spawning them stays under 1 % of the time.
    let per_op = |d: Duration| d.as_nanos() as f64 / (5 * ITERS) as f64;
    let subjects: [(&str, &dyn Fn() -> f64); 11] = [
        ("gcra/monotonic", &|| {
            one_thread(ITERS, || {
                let _ = black_box(gcra_mono.check());
            })
        }),
        ("sliding/monotonic", &|| {
            one_thread(ITERS, || {
                let _ = black_box(sliding_mono.check());
            })
        }),
        ("governor/monotonic", &|| {
            one_thread(ITERS, || {
                let _ = black_box(gov_mono.check());
            })
        }),
        ("gcra/coarse", &|| {
            one_thread(ITERS, || {
                let _ = black_box(gcra_coarse.check());
            })
        }),
        ("sliding/coarse", &|| {
            one_thread(ITERS, || {
                let _ = black_box(sliding_coarse.check());
            })
        }),
        ("governor/coarse", &|| {
            one_thread(ITERS, || {
                let _ = black_box(gov_coarse.check());
            })
        }),
        ("fetch_add", &|| {
            one_thread(ITERS, || {
                let _ = black_box(counter.fetch_add(1, Ordering::AcqRel));
            })
        }),
        ("2 threads gcra/coarse", &|| {
            per_op(two_threads(5 * ITERS, || {
                let _ = black_box(gcra_coarse.check());
            }))
        }),
        ("2 threads sliding/coarse", &|| {
            per_op(two_threads(5 * ITERS, || {
                let _ = black_box(sliding_coarse.check());
            }))
        }),
        ("2 threads governor/coarse", &|| {
            per_op(two_threads(5 * ITERS, || {
                let _ = black_box(gov_coarse.check());
            }))
        }),
        ("2 threads fetch_add", &|| {
            per_op(two_threads(5 * ITERS, || {
                let _ = black_box(counter.fetch_add(1, Ordering::AcqRel));
            }))
        }),
    ];
    let mut best = [f64::MAX; 11];
    for _ in 0..ROUNDS {
        for (b, (_, run)) in best.iter_mut().zip(&subjects) {
            *b = b.min(run());
        }
    }
    println!("interleaved, fastest of {ROUNDS} rounds of {ITERS} (ns per check, per thread):");
    for ((name, _), b) in subjects.iter().zip(best) {
        println!("  {name:<26} {b:6.2}");
    }
    let ratio = |a: usize, b: usize| best[a] / best[b];
    println!("ratios:");
    for (what, a, b) in [
        ("gcra ÷ governor, monotonic", 0, 2),
        ("sliding ÷ governor, monotonic", 1, 2),
        ("gcra ÷ governor, coarse", 3, 5),
        ("sliding ÷ governor, coarse", 4, 5),
        ("gcra (coarse) ÷ fetch_add", 3, 6),
        ("sliding (coarse) ÷ fetch_add", 4, 6),
        ("governor (coarse) ÷ fetch_add", 5, 6),
        ("2 threads gcra ÷ governor", 7, 9),
        ("2 threads sliding ÷ governor", 8, 9),
        ("2 threads gcra ÷ fetch_add", 7, 10),
        ("2 threads sliding ÷ fetch_add", 8, 10),
        ("2 threads governor ÷ fetch_add", 9, 10),
    ] {
        println!("  {what:<32} {:5.2}×", ratio(a, b));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = single_thread, contended, keyed
}

fn main() {
    bytes_per_key();
    interleaved_ratios();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
