use std::time::{Duration, Instant};
use sluicegate_redis::{GlobalConcurrency, RedisStore};

#[tokio::main]
async fn main() {
    let url = std::env::args().nth(1).unwrap();
    let store = RedisStore::connect(&url).await.unwrap();
    let c = GlobalConcurrency::builder(&store, &format!("thr{}", std::process::id()), 1).ttl(Duration::from_secs(3)).queue_timeout(Duration::from_secs(10)).build().unwrap();
    let permit = c.acquire().await.unwrap();
    // CPU work on a plain thread, the permit moved with it
    std::thread::spawn(move || { std::thread::sleep(Duration::from_millis(50)); drop(permit); }).join().unwrap();
    let t = Instant::now();
    let p2 = c.acquire().await;
    println!("next acquire after a permit dropped on a std thread: {:?} after {:?}", p2.is_ok(), t.elapsed());
    drop(p2);
    let permit = c.acquire().await.unwrap();
    tokio::task::spawn_blocking(move || drop(permit)).await.unwrap();
    let t = Instant::now();
    let p3 = c.acquire().await;
    println!("next acquire after a permit dropped in spawn_blocking: {:?} after {:?}", p3.is_ok(), t.elapsed());
}
