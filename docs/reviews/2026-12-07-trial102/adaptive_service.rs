use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use sluicegate::adaptive::{AdaptiveLimiter, LittlesLaw, LittlesLawConfig};
use sluicegate::concurrency::ConcurrencyLimiter;
use sluicegate::middleware::HttpConcurrencyLimitLayer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn get_raw(addr: &str, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nhost: x\r\n\r\n").as_bytes()).await?;
    let mut out = String::new();
    s.read_to_string(&mut out).await?;
    Ok(out)
}

#[tokio::main]
async fn main() {
    let up = std::env::args().nth(1).unwrap_or("127.0.0.1:18901".into());
    let clients: usize = std::env::args().nth(2).map_or(32, |s| s.parse().unwrap());
    let secs: u64 = std::env::args().nth(3).map_or(8, |s| s.parse().unwrap());
    let limiter = ConcurrencyLimiter::builder(1).max_queue(100).queue_timeout(Duration::from_secs(1)).build().unwrap();
    let fixed: usize = std::env::args().nth(4).map_or(0, |s| s.parse().unwrap());
    let adaptive = if fixed > 0 {
        AdaptiveLimiter::new(limiter, sluicegate::adaptive::Fixed::new(fixed))
    } else {
        AdaptiveLimiter::new(limiter, LittlesLaw::new(LittlesLawConfig::default()))
    };
    let lat = Arc::new(std::sync::Mutex::new(Vec::<u128>::new()));
    let up2 = up.clone();
    let app: Router = Router::new()
        .route("/work", get(move || { let up = up2.clone(); async move {
            match get_raw(&up, "/work").await { Ok(_) => "ok".to_string(), Err(e) => e.to_string() }
        }}))
        .layer(HttpConcurrencyLimitLayer::adaptive(adaptive.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move { axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap() });
    let ok = Arc::new(AtomicU64::new(0));
    let e503 = Arc::new(AtomicU64::new(0));
    let other = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(secs);
    let mut hs = vec![];
    for _ in 0..clients {
        let (addr, ok, e503, other, lat) = (addr.clone(), ok.clone(), e503.clone(), other.clone(), lat.clone());
        hs.push(tokio::spawn(async move {
            while Instant::now() < end {
                let t = Instant::now();
                match get_raw(&addr, "/work").await {
                    Ok(r) if r.starts_with("HTTP/1.1 200") || r.starts_with("HTTP/1.0 200") => { ok.fetch_add(1, Ordering::Relaxed); lat.lock().unwrap().push(t.elapsed().as_millis()); }
                    Ok(r) if r.contains(" 503 ") => { e503.fetch_add(1, Ordering::Relaxed); tokio::time::sleep(Duration::from_millis(20)).await; }
                    Ok(r) => { other.fetch_add(1, Ordering::Relaxed); eprintln!("{}", r.lines().next().unwrap_or("")); }
                    Err(e) => { other.fetch_add(1, Ordering::Relaxed); eprintln!("{e}"); }
                }
            }
        }));
    }
    let mut limits = vec![];
    while Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let s = adaptive.limiter().snapshot();
        limits.push(format!("{}({}/{})", adaptive.limit(), s.in_flight, s.queued));
    }
    for h in hs { h.await.unwrap(); }
    let stats = get_raw(&up, "/stats").await.unwrap();
    println!("limits: {}", limits.join(" "));
    println!("ok {} 503 {} other {} goodput/s {:.1}; upstream peak/served: {}", ok.load(Ordering::Relaxed), e503.load(Ordering::Relaxed), other.load(Ordering::Relaxed), ok.load(Ordering::Relaxed) as f64 / secs as f64, stats.lines().last().unwrap());
    let mut l = lat.lock().unwrap().clone(); l.sort();
    if !l.is_empty() { println!("p50 {} p99 {} ms", l[l.len()/2], l[l.len()*99/100]); }
    println!("explain: {:?}", adaptive.explain());
}
