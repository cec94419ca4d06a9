//! Global rate limits on one real `redis-server`: strict GCRA, hybrid GCRA and a hand-written
//! `INCR` + `EXPIRE` fixed window, measured in interleaved rounds of the same run, with a
//! bare `PING` as the round-trip baseline. Run it through `scripts/bench-redis`.
//!
//! Three instances (a store, so a connection, each) with `TASKS` callers each ask as fast as
//! they can for `ROUND` per round, against a limit of `RATE`/s (burst `RATE / 100`), so every
//! limit is overloaded. Reported per mode: decisions per second per instance, Redis round
//! trips per decision, latency p50 / p99, and the overshoot: the most admissions in any 1 s
//! window over what strict GCRA allows there (`burst + RATE`).

#[path = "../tests/support/mod.rs"]
mod support;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sluicegate::rate::Quota;
use sluicegate_redis::{GlobalGcra, HybridGcra, RedisStore};

const RATE: u32 = 20_000;
const INSTANCES: usize = 3;
const TASKS: usize = 8;
const ROUND: Duration = Duration::from_secs(3);
const ROUNDS: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Ping,
    Strict,
    Hybrid,
    FixedWindow,
}

#[allow(clippy::large_enum_variant)] // four values per run
enum Limit {
    Ping(redis::aio::ConnectionManager),
    Strict(GlobalGcra),
    Hybrid(HybridGcra),
    Fixed(redis::aio::ConnectionManager),
}

#[derive(Default)]
struct Tally {
    decisions: u64,
    round_trips: u64,
    latencies_ns: Vec<u64>,
    admitted_ns: Vec<u64>,
}

fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

impl Limit {
    /// One decision: (allowed, round trips, admission time in ns on a clock shared by all
    /// instances).
    async fn decide(&self, key: &str) -> (bool, u64, u64) {
        match self {
            Limit::Ping(con) => {
                let mut con = con.clone();
                let _: () = redis::cmd("PING").query_async(&mut con).await.unwrap();
                (false, 1, 0)
            }
            Limit::Strict(l) => {
                let v = l.decide(1).await.unwrap();
                let t = v.server_time.map_or(0, |t| t.as_nanos() as u64);
                (v.decision.is_allowed(), 1, t)
            }
            Limit::Hybrid(l) => {
                let v = l.decide(1).await.unwrap();
                let t = v.server_time.map_or(0, |t| t.as_nanos() as u64);
                (v.decision.is_allowed(), 0, t) // round trips from the limiter's stats
            }
            Limit::Fixed(con) => {
                // What most users hand-write: INCR the second's counter, EXPIRE it when new.
                let mut con = con.clone();
                let second = wall_ns() / 1_000_000_000;
                let k = format!("{key}:{second}");
                let n: u64 = redis::cmd("INCR")
                    .arg(&k)
                    .query_async(&mut con)
                    .await
                    .unwrap();
                let mut trips = 1;
                if n == 1 {
                    let _: () = redis::cmd("EXPIRE")
                        .arg(&k)
                        .arg(2)
                        .query_async(&mut con)
                        .await
                        .unwrap();
                    trips += 1;
                }
                (n <= u64::from(RATE), trips, wall_ns())
            }
        }
    }
}

async fn round(redis: &support::RedisServer, mode: Mode, n: usize) -> Tally {
    let quota = Quota::per_second(RATE).with_burst(NonZeroU32::new(RATE / 100).unwrap());
    let name = format!("bench-{mode:?}-{n}");
    let mut limits = Vec::new();
    for _ in 0..INSTANCES {
        let store = RedisStore::builder(&redis.url()).connect().await.unwrap();
        let client = redis::Client::open(redis.url()).unwrap();
        let limit = match mode {
            Mode::Ping => Limit::Ping(redis::aio::ConnectionManager::new(client).await.unwrap()),
            Mode::Strict => {
                Limit::Strict(GlobalGcra::builder(&store, &name, quota).build().unwrap())
            }
            Mode::Hybrid => Limit::Hybrid(
                GlobalGcra::builder(&store, &name, quota)
                    .build_hybrid()
                    .unwrap(),
            ),
            Mode::FixedWindow => {
                Limit::Fixed(redis::aio::ConnectionManager::new(client).await.unwrap())
            }
        };
        limits.push(Arc::new(limit));
    }
    let end = Instant::now() + ROUND;
    let mut tasks = Vec::new();
    for limit in &limits {
        for _ in 0..TASKS {
            let (limit, name) = (limit.clone(), name.clone());
            tasks.push(tokio::spawn(async move {
                let mut t = Tally::default();
                while Instant::now() < end {
                    let start = Instant::now();
                    let (allowed, trips, at) = limit.decide(&name).await;
                    t.latencies_ns.push(start.elapsed().as_nanos() as u64);
                    t.decisions += 1;
                    t.round_trips += trips;
                    if allowed {
                        t.admitted_ns.push(at);
                    }
                    tokio::task::yield_now().await;
                }
                t
            }));
        }
    }
    let mut all = Tally::default();
    for task in tasks {
        let t = task.await.unwrap();
        all.decisions += t.decisions;
        all.round_trips += t.round_trips;
        all.latencies_ns.extend(t.latencies_ns);
        all.admitted_ns.extend(t.admitted_ns);
    }
    for l in &limits {
        if let Limit::Hybrid(h) = &**l {
            all.round_trips += h.stats().redis_calls;
        }
    }
    all
}

/// The most admissions in any window of `w` ns.
fn most_in_window(times: &mut [u64], w: u64) -> u64 {
    times.sort_unstable();
    let (mut i, mut most) = (0, 0);
    for j in 0..times.len() {
        while times[j] - times[i] >= w {
            i += 1;
        }
        most = most.max(j - i + 1);
    }
    most as u64
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p) as usize] as f64 / 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let redis = support::RedisServer::start();
    let modes = [Mode::Ping, Mode::Strict, Mode::Hybrid, Mode::FixedWindow];
    let mut totals: Vec<Tally> = modes.iter().map(|_| Tally::default()).collect();
    let mut overshoot: Vec<f64> = vec![f64::MIN; modes.len()];
    let strict_bound = (RATE / 100 + RATE) as f64;
    for n in 0..ROUNDS {
        for (i, mode) in modes.iter().enumerate() {
            let mut t = round(&redis, *mode, n).await;
            eprintln!("round {n} {mode:?}: {} decisions", t.decisions);
            if *mode != Mode::Ping {
                let most = most_in_window(&mut t.admitted_ns, 1_000_000_000) as f64;
                overshoot[i] = overshoot[i].max(most / strict_bound - 1.0);
            }
            let all = &mut totals[i];
            all.decisions += t.decisions;
            all.round_trips += t.round_trips;
            all.latencies_ns.extend(t.latencies_ns);
        }
    }
    let secs = (ROUND * ROUNDS as u32).as_secs_f64();
    println!(
        "| mode | decisions/s per instance | Redis round trips per decision | decisions per round trip | p50 µs | p99 µs | overshoot (most in any 1 s ÷ strict bound − 1) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (i, mode) in modes.iter().enumerate() {
        let t = &mut totals[i];
        t.latencies_ns.sort_unstable();
        let per_trip = t.decisions as f64 / t.round_trips.max(1) as f64;
        let over = if *mode == Mode::Ping {
            "—".to_owned()
        } else {
            format!("{:+.2} %", overshoot[i] * 100.0)
        };
        println!(
            "| {:?} | {:.0} | {:.4} | {:.1} | {:.0} | {:.0} | {} |",
            mode,
            t.decisions as f64 / secs / INSTANCES as f64,
            t.round_trips as f64 / t.decisions.max(1) as f64,
            per_trip,
            percentile(&t.latencies_ns, 0.50),
            percentile(&t.latencies_ns, 0.99),
            over,
        );
    }
    println!(
        "\nlimit {RATE}/s (burst {}), {INSTANCES} instances × {TASKS} callers, {ROUNDS} interleaved rounds of {ROUND:?}",
        RATE / 100
    );
}
