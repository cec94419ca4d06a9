use std::time::{Duration, Instant};
use sluicegate::rate::Quota;
use sluicegate_redis::{FailurePolicy, GlobalConcurrency, GlobalGcra, GlobalWindow, RedisStore};

#[tokio::main]
async fn main() {
    let url = std::env::args().nth(1).unwrap();
    let t = Instant::now();
    let dead = RedisStore::connect("redis://127.0.0.1:1/").await;
    println!("connect to dead port: {:?} in {:?}", dead.as_ref().map(|_| ()).map_err(|e| e.to_string()), t.elapsed());
    println!("bad url: {:?}", RedisStore::connect("http://x").await.map(|_| ()).map_err(|e| e.to_string()));
    let p = RedisStore::builder(&url).prefix("a{b").connect().await;
    println!("prefix with brace: {:?}", p.map(|_| ()).map_err(|e| e.to_string()));
    let store = RedisStore::connect(&url).await.unwrap();
    println!("name '': {:?}", GlobalGcra::builder(&store, "", Quota::per_minute(1)).build().map(|_| ()).map_err(|e| e.to_string()));
    let z = GlobalGcra::builder(&store, "zero", Quota::deny_all()).build();
    match z { Ok(z) => println!("deny_all gcra: {:?}", z.check().await), Err(e) => println!("deny_all gcra err: {e}") }
    for period in [60u64, 3600] {
        let q = Quota::new(0, Duration::from_secs(period)).unwrap();
        let g = GlobalGcra::builder(&store, &format!("z{period}"), q).build().unwrap();
        let h = GlobalGcra::builder(&store, &format!("zh{period}"), q).build_hybrid().unwrap();
        println!("0 per {period}s: strict {:?} hybrid {:?}", g.check().await, h.check().await);
    }
    let w0 = GlobalWindow::builder(&store, "w0", 0, Duration::from_secs(60)).build();
    match w0 { Ok(w) => println!("window 0: {:?}", w.check().await), Err(e) => println!("window 0 err: {e}") }
    let c0 = GlobalConcurrency::builder(&store, "c0", 0).queue_timeout(Duration::from_millis(200)).build();
    match c0 {
        Ok(c) => { let t = Instant::now(); let r = c.acquire().await; println!("concurrency 0: {:?} after {:?}", r.map(|_| ()).map_err(|e| e.to_string()), t.elapsed()); }
        Err(e) => println!("concurrency 0 err: {e}"),
    }
    let c = GlobalConcurrency::builder(&store, "c1", 1).max_queue(0).build().unwrap();
    let a = c.acquire().await.unwrap();
    println!("second of 1 with max_queue 0: {:?}", c.acquire().await.map(|_| ()).map_err(|e| (e.to_string(), e.retry_after())));
    drop(a);
    // cancelled acquire racing release
    let c = GlobalConcurrency::builder(&store, "c2", 2).queue_timeout(Duration::from_secs(2)).build().unwrap();
    for round in 0..50 {
        let p1 = c.acquire().await.unwrap();
        let p2 = c.acquire().await.unwrap();
        let fut = c.acquire();
        let r = tokio::time::timeout(Duration::from_millis(round % 5), fut).await;
        drop(p1);
        drop(r);
        drop(p2);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let a = tokio::time::timeout(Duration::from_secs(1), c.acquire()).await;
    let b = tokio::time::timeout(Duration::from_secs(1), c.acquire()).await;
    println!("after 50 cancelled waiters: both permits free: {} {}", matches!(a, Ok(Ok(_))), matches!(b, Ok(Ok(_))));
    // permit moved into a task that panics
    let c3 = GlobalConcurrency::builder(&store, "c3", 1).queue_timeout(Duration::from_secs(2)).build().unwrap();
    let p = c3.acquire().await.unwrap();
    let h = tokio::spawn(async move { let _p = p; panic!("boom") });
    let _ = h.await;
    let t = Instant::now();
    let r = c3.acquire().await;
    println!("after a panic holding the permit: {:?} after {:?}", r.map(|_| ()).map_err(|e| e.to_string()), t.elapsed());
    let g = GlobalGcra::builder(&store, "fp", Quota::per_second(5).unwrap()).on_failure(FailurePolicy::Deny).build().unwrap();
    println!("gcra: {:?}", g.check().await);
}
