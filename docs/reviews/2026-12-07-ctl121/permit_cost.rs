//! Throwaway (ctl121): what a GlobalConcurrency permit costs the client, acquire + drop, one
//! caller back to back against a local Redis. Usage: permit_cost REDIS_URL [CYCLES]
use std::time::{Duration, Instant};

use sluicegate_redis::{GlobalConcurrency, RedisStore};

/// This process's CPU time so far (user + system), from /proc (10 ms ticks).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let url = args.next().expect("REDIS_URL");
    let cycles: u32 = args.next().map_or(20_000, |n| n.parse().unwrap());
    let store = RedisStore::builder(&url)
        .budget(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    let limit = GlobalConcurrency::builder(&store, "cost", 64)
        .ttl(Duration::from_secs(60))
        .build()
        .unwrap();
    for _ in 0..2_000 {
        drop(limit.acquire().await.unwrap());
    }
    let (wall, cpu0) = (Instant::now(), cpu());
    for _ in 0..cycles {
        drop(limit.acquire().await.unwrap());
    }
    let (wall, cpu) = (wall.elapsed(), cpu() - cpu0);
    println!(
        "{cycles} permits: {:.1} us wall, {:.1} us client CPU per permit",
        wall.as_secs_f64() * 1e6 / f64::from(cycles),
        cpu.as_secs_f64() * 1e6 / f64::from(cycles)
    );
}
