//! Global rate limits on one real `redis-server`: strict GCRA, strict sliding window, hybrid
//! GCRA and a hand-written `INCR` + `EXPIRE` fixed window, measured in interleaved rounds of
//! the same run, with a bare `PING` as the round-trip baseline. Run it through
//! `scripts/bench-redis`.
//!
//! Two parts, one Redis:
//!
//! - **Latency** (Redis not saturated): three instances (a store, so a connection, each) with
//!   one caller each, once back to back (closed loop) and once paced at `PACE_RATE` calls/s
//!   per caller, against a limit high enough that every decision is an admission (the
//!   writing path). `LAT_ROUNDS` interleaved rounds of `LAT_ROUND`, every mode once per
//!   round. Reported: p50 / p99 / p99.9 per mode, p99 over `PING`'s p99, and the time Redis
//!   spent per decision (`INFO commandstats`, reset before each round).
//! - **Throughput and overshoot** (Redis overloaded): `TASKS` callers per instance ask as
//!   fast as they can for `ROUND` per round, against a limit of `RATE`/s (burst `RATE / 10`).
//!   Reported per mode: decisions per second per instance, Redis round trips per decision,
//!   latency p50 / p99, and the overshoot: the most admissions in any 1 s window over what
//!   strict GCRA allows there (`burst + RATE`).
//!
//! The store's budget is 1 s here: the benchmark measures Redis, not the failure policy
//! (fallbacks are counted and left out of the overshoot).

#[path = "../tests/support/mod.rs"]
mod support;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sluicegate::rate::Quota;
use sluicegate_redis::{GlobalGcra, GlobalWindow, HybridGcra, RedisStore};

const RATE: u32 = 5_000;
const INSTANCES: usize = 3;
const TASKS: usize = 8;
const ROUND: Duration = Duration::from_secs(3);
const ROUNDS: usize = 3;
/// Latency part: a limit no caller reaches, so every decision admits (and writes).
const LAT_RATE: u32 = 1_000_000;
const LAT_ROUND: Duration = Duration::from_millis(500);
const LAT_ROUNDS: usize = 20;
/// Calls per second per caller in the paced latency runs.
const PACE_RATE: u64 = 1_000;

/// How the callers of one round call.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Load {
    /// `TASKS` callers per instance, back to back: Redis saturated.
    Overload,
    /// One caller per instance, back to back.
    Closed,
    /// One caller per instance, one call every `1 / PACE_RATE` s.
    Paced,
}

impl Load {
    fn callers(self) -> usize {
        if self == Load::Overload { TASKS } else { 1 }
    }

    fn rate(self) -> u32 {
        if self == Load::Overload {
            RATE
        } else {
            LAT_RATE
        }
    }

    fn length(self) -> Duration {
        if self == Load::Overload {
            ROUND
        } else {
            LAT_ROUND
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Ping,
    Strict,
    Sliding,
    Hybrid,
    FixedWindow,
}

#[allow(clippy::large_enum_variant)] // four values per run
enum Limit {
    Ping(redis::aio::ConnectionManager),
    Strict(GlobalGcra),
    Sliding(GlobalWindow),
    Hybrid(HybridGcra),
    Fixed(redis::aio::ConnectionManager, u64),
}

#[derive(Default)]
struct Tally {
    decisions: u64,
    round_trips: u64,
    latencies_ns: Vec<u64>,
    admitted_ns: Vec<u64>,
    admitted: u64,
    fallbacks: u64,
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
                (false, 1, 1)
            }
            Limit::Strict(l) => {
                let v = l.decide(1).await.unwrap();
                let t = v.server_time.map_or(0, |t| t.as_nanos() as u64);
                (v.decision.is_allowed(), 1, t)
            }
            Limit::Sliding(l) => {
                let v = l.decide(1).await.unwrap();
                let t = v.server_time.map_or(0, |t| t.as_nanos() as u64);
                (v.decision.is_allowed(), 1, t)
            }
            Limit::Hybrid(l) => {
                let v = l.decide(1).await.unwrap();
                let t = v.server_time.map_or(0, |t| t.as_nanos() as u64);
                (v.decision.is_allowed(), 0, t) // round trips from the stats
            }
            Limit::Fixed(con, limit) => {
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
                (n <= *limit, trips, wall_ns())
            }
        }
    }
}

async fn round(redis: &support::RedisServer, mode: Mode, load: Load, n: usize) -> Tally {
    let rate = load.rate();
    let quota = Quota::per_second(rate)
        .unwrap()
        .with_burst(NonZeroU32::new(rate / 10).unwrap());
    let name = format!("bench-{mode:?}-{load:?}-{n}");
    let mut limits = Vec::new();
    for _ in 0..INSTANCES {
        let store = RedisStore::builder(&redis.url())
            .budget(Duration::from_secs(1))
            .connect()
            .await
            .unwrap();
        let client = redis::Client::open(redis.url()).unwrap();
        let limit = match mode {
            Mode::Ping => Limit::Ping(redis::aio::ConnectionManager::new(client).await.unwrap()),
            Mode::Strict => {
                Limit::Strict(GlobalGcra::builder(&store, &name, quota).build().unwrap())
            }
            Mode::Sliding => Limit::Sliding(
                GlobalWindow::builder(&store, &name, rate, Duration::from_secs(1))
                    .build()
                    .unwrap(),
            ),
            Mode::Hybrid => Limit::Hybrid(
                GlobalGcra::builder(&store, &name, quota)
                    .build_hybrid()
                    .unwrap(),
            ),
            Mode::FixedWindow => {
                let con = redis::aio::ConnectionManager::new(client).await.unwrap();
                Limit::Fixed(con, u64::from(rate))
            }
        };
        limits.push(Arc::new(limit));
    }
    let end = Instant::now() + load.length();
    let mut tasks = Vec::new();
    for limit in &limits {
        for _ in 0..load.callers() {
            let (limit, name) = (limit.clone(), name.clone());
            tasks.push(tokio::spawn(async move {
                let mut t = Tally::default();
                let mut pace =
                    tokio::time::interval(Duration::from_nanos(1_000_000_000 / PACE_RATE));
                pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                while Instant::now() < end {
                    if load == Load::Paced {
                        pace.tick().await;
                    }
                    let start = Instant::now();
                    let (allowed, trips, at) = limit.decide(&name).await;
                    t.latencies_ns.push(start.elapsed().as_nanos() as u64);
                    t.decisions += 1;
                    t.round_trips += trips;
                    if allowed && at == 0 {
                        t.fallbacks += 1;
                    } else if allowed {
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
        all.fallbacks += t.fallbacks;
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

/// Redis's own time per decision in a round: the `usec` of the commands a mode sends, from
/// `INFO commandstats` (reset before the round), over the decisions.
fn redis_usec(con: &mut redis::Connection, mode: Mode) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query(con).unwrap();
    let commands: &[&str] = match mode {
        Mode::Ping => &["ping"],
        Mode::FixedWindow => &["incr", "expire"],
        _ => &["evalsha", "eval"],
    };
    let mut usec = 0;
    for line in info.lines() {
        let Some((name, stats)) = line.split_once(':') else {
            continue;
        };
        if !commands.contains(&name.trim_start_matches("cmdstat_")) {
            continue;
        }
        let field = stats.split(',').find_map(|f| f.strip_prefix("usec="));
        usec += field.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    }
    usec
}

/// The latency part: Redis not saturated, p50 / p99 / p99.9 against `PING`'s.
async fn latency_table(redis: &support::RedisServer) {
    let modes = [Mode::Ping, Mode::Strict, Mode::Sliding, Mode::FixedWindow];
    let mut con = redis.connection();
    for load in [Load::Closed, Load::Paced] {
        let mut totals: Vec<Tally> = modes.iter().map(|_| Tally::default()).collect();
        let mut usec = vec![0u64; modes.len()];
        for n in 0..LAT_ROUNDS {
            for (i, mode) in modes.iter().enumerate() {
                let _: () = redis::cmd("CONFIG")
                    .arg("RESETSTAT")
                    .query(&mut con)
                    .unwrap();
                let mut t = round(redis, *mode, load, n).await;
                usec[i] += redis_usec(&mut con, *mode);
                t.latencies_ns.sort_unstable();
                eprintln!(
                    "{load:?} round {n} {mode:?}: {} decisions, p99 {:.0} µs",
                    t.decisions,
                    percentile(&t.latencies_ns, 0.99)
                );
                let all = &mut totals[i];
                all.decisions += t.decisions;
                all.latencies_ns.extend(t.latencies_ns);
                all.admitted += t.admitted_ns.len() as u64;
                all.fallbacks += t.fallbacks;
            }
        }
        for t in &mut totals {
            t.latencies_ns.sort_unstable();
        }
        let ping_p99 = percentile(&totals[0].latencies_ns, 0.99);
        println!(
            "\n{load:?}: {INSTANCES} instances × 1 caller{}, limit {LAT_RATE}/s (never reached), {LAT_ROUNDS} interleaved rounds of {LAT_ROUND:?}",
            if load == Load::Paced {
                format!(" at {PACE_RATE} calls/s")
            } else {
                " back to back".to_owned()
            }
        );
        println!(
            "| mode | decisions | admitted | p50 µs | p99 µs | p99.9 µs | p99 − PING p99 µs | Redis µs per decision | fallbacks |"
        );
        println!("|---|---|---|---|---|---|---|---|---|");
        for (i, mode) in modes.iter().enumerate() {
            let t = &totals[i];
            let p99 = percentile(&t.latencies_ns, 0.99);
            let admitted = if *mode == Mode::Ping {
                "—".to_owned()
            } else {
                format!(
                    "{:.1} %",
                    100.0 * t.admitted as f64 / t.decisions.max(1) as f64
                )
            };
            println!(
                "| {:?} | {} | {} | {:.0} | {:.0} | {:.0} | {:+.0} | {:.2} | {} |",
                mode,
                t.decisions,
                admitted,
                percentile(&t.latencies_ns, 0.50),
                p99,
                percentile(&t.latencies_ns, 0.999),
                p99 - ping_p99,
                usec[i] as f64 / t.decisions.max(1) as f64,
                t.fallbacks,
            );
        }
    }
}

/// `bench_redis [latency|throughput]`: one part, or both.
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let redis = support::RedisServer::start();
    let only = std::env::args().nth(1);
    if only.as_deref() != Some("throughput") {
        latency_table(&redis).await;
    }
    if only.as_deref() != Some("latency") {
        throughput_table(&redis).await;
    }
}

async fn throughput_table(redis: &support::RedisServer) {
    let modes = [Mode::Ping, Mode::Strict, Mode::Hybrid, Mode::FixedWindow];
    let mut totals: Vec<Tally> = modes.iter().map(|_| Tally::default()).collect();
    let mut overshoot: Vec<f64> = vec![f64::MIN; modes.len()];
    let strict_bound = (RATE / 10 + RATE) as f64;
    for n in 0..ROUNDS {
        for (i, mode) in modes.iter().enumerate() {
            let mut t = round(redis, *mode, Load::Overload, n).await;
            eprintln!("round {n} {mode:?}: {} decisions", t.decisions);
            if *mode != Mode::Ping {
                let most = most_in_window(&mut t.admitted_ns, 1_000_000_000) as f64;
                overshoot[i] = overshoot[i].max(most / strict_bound - 1.0);
            }
            let all = &mut totals[i];
            all.decisions += t.decisions;
            all.round_trips += t.round_trips;
            all.latencies_ns.extend(t.latencies_ns);
            all.fallbacks += t.fallbacks;
            all.admitted += t.admitted_ns.len() as u64;
        }
    }
    let secs = (ROUND * ROUNDS as u32).as_secs_f64();
    println!(
        "\nOverload: {INSTANCES} instances × {TASKS} callers, limit {RATE}/s (burst {}), {ROUNDS} interleaved rounds of {ROUND:?}",
        RATE / 10
    );
    println!(
        "| mode | decisions/s per instance | Redis round trips per decision | decisions per round trip | admissions per round trip | p50 µs | p99 µs | overshoot (most in any 1 s ÷ strict bound − 1) | fallbacks |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
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
            "| {:?} | {:.0} | {:.4} | {:.1} | {:.1} | {:.0} | {:.0} | {} | {} |",
            mode,
            t.decisions as f64 / secs / INSTANCES as f64,
            t.round_trips as f64 / t.decisions.max(1) as f64,
            per_trip,
            t.admitted as f64 / t.round_trips.max(1) as f64,
            percentile(&t.latencies_ns, 0.50),
            percentile(&t.latencies_ns, 0.99),
            over,
            t.fallbacks,
        );
    }
}
