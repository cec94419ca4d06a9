//! trial102 probes (not committed).
use sluicegate::concurrency::ConcurrencyLimiter;
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn p_reset_cancelled_by_timeout() {
    let l = ConcurrencyLimiter::builder(2).build().unwrap();
    let held = l.acquire_owned().await.unwrap();
    let r = tokio::time::timeout(Duration::from_secs(5), l.reset()).await;
    println!("reset timed out: {}", r.is_err());
    println!("closed after cancelled reset: {}", l.is_closed());
    println!("try_acquire: {:?}", l.try_acquire().map(|_| ()));
    drop(held);
    tokio::time::sleep(Duration::from_secs(1)).await;
    println!("closed after holder done: {}", l.is_closed());
}

#[tokio::test(start_paused = true)]
async fn p_close_during_reset_undone() {
    let l = ConcurrencyLimiter::builder(2).build().unwrap();
    let held = l.acquire_owned().await.unwrap();
    let l2 = l.clone();
    let h = tokio::spawn(async move { l2.reset().await });
    tokio::task::yield_now().await;
    // operator presses the kill switch during the reset
    l.close();
    println!("closed (operator): {}", l.is_closed());
    drop(held);
    h.await.unwrap();
    println!("closed after reset finished: {}", l.is_closed());
}

#[tokio::test(start_paused = true)]
async fn p_setmax_zero_during_reset() {
    let l = ConcurrencyLimiter::builder(2).build().unwrap();
    let held = l.acquire_owned().await.unwrap();
    let l2 = l.clone();
    let h = tokio::spawn(async move { l2.reset().await });
    tokio::task::yield_now().await;
    l.set_max(0).unwrap();
    drop(held);
    h.await.unwrap();
    println!("max after reset: {}", l.max());
}

#[test]
fn p_errors() {
    use sluicegate::rate::*;
    println!(
        "{:?}",
        Quota::new(5, Duration::ZERO)
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        Quota::new(0, Duration::from_secs(1))
            .map(|q| (q.count(), q.burst()))
            .map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        Quota::per_second(0).map(|_| ()).map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        SlidingWindow::new(0, Duration::from_secs(1))
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        SlidingWindow::new(10, Duration::ZERO)
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        SlidingWindow::new(10, Duration::from_nanos(5))
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        SlidingWindow::new(u32::MAX, Duration::MAX)
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
    let w = SlidingWindow::new(10, Duration::from_secs(1)).unwrap();
    println!("{:?}", w.check_n(11).map_err(|e| e.to_string()));
    println!("{:?}", w.check_n(0).map_err(|e| e.to_string()));
    let g = Gcra::new(Quota::per_minute(10));
    println!("{:?}", g.check_n(11).map_err(|e| e.to_string()));
    println!("{:?}", g.check_n(0).map_err(|e| e.to_string()));
    let gz = Gcra::new(Quota::deny_all());
    println!("deny_all {:?}", gz.check());
    println!(
        "{:?}",
        ConcurrencyLimiter::builder(usize::MAX)
            .build()
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        ConcurrencyLimiter::builder(1)
            .queue_timeout(Duration::ZERO)
            .build()
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        ConcurrencyLimiter::builder(1)
            .predictive(true)
            .build()
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
    println!(
        "{:?}",
        ConcurrencyLimiter::new(1)
            .set_max(usize::MAX)
            .map_err(|e| e.to_string())
    );
}

#[tokio::test(start_paused = true)]
async fn p_huge_queue_timeout() {
    let l = ConcurrencyLimiter::builder(1)
        .queue_timeout(Duration::MAX)
        .build()
        .unwrap();
    let _a = l.acquire().await.unwrap();
    let r = tokio::time::timeout(Duration::from_secs(1), l.acquire()).await;
    println!("huge timeout waiter: {:?}", r.is_err());
    let l = ConcurrencyLimiter::builder(1)
        .queue_timeout(Duration::MAX)
        .predictive(true)
        .build()
        .unwrap();
    let _a = l.acquire().await.unwrap();
    let r = tokio::time::timeout(Duration::from_secs(1), l.acquire()).await;
    println!("huge timeout predictive waiter: {:?}", r.is_err());
}

#[tokio::test(start_paused = true)]
async fn p_zero_queue_timeout_per_call() {
    let l = ConcurrencyLimiter::builder(1).build().unwrap();
    let _a = l.acquire().await.unwrap();
    let r = tokio::time::timeout(
        Duration::from_secs(1),
        l.acquire().timeout(Some(Duration::ZERO)),
    )
    .await;
    println!("per-call zero timeout: {:?}", r.map(|x| x.map(|_| ())));
}

#[test]
fn p_blocking_zero() {
    let l = ConcurrencyLimiter::builder(0).max_queue(0).build().unwrap();
    println!(
        "blocking with max 0, queue 0: {:?}",
        l.acquire_blocking().map(|_| ())
    );
}

#[tokio::test(start_paused = true)]
async fn p_tokio_clock_epoch_after_pause() {
    use sluicegate::clock::{Clock, TokioClock};
    std::thread::sleep(Duration::from_millis(20)); // real setup work before the first read
    let a = TokioClock.now();
    tokio::time::advance(Duration::from_millis(10)).await;
    let b = TokioClock.now();
    println!("TokioClock: a={:?} b={:?} diff={:?}", a, b, b - a);
}

/// A closed loop against 4 workers of 20 ms, demand 40, driven in 1 ms steps, with the
/// algorithm's clock starting at `offset`.
fn run_littles(offset: Duration, ms: u64) -> Vec<usize> {
    use sluicegate::adaptive::{LimitAlgorithm, LittlesLaw, LittlesLawConfig, Sample};
    use sluicegate::clock::Nanos;
    let mut a = LittlesLaw::new(LittlesLawConfig::default());
    let base = Nanos::ZERO + offset;
    // running: (start, end, in_flight_at_start)
    let mut running: Vec<(u64, u64, usize)> = vec![];
    let mut worker_free = [0u64; 4];
    let mut blocked = 0u64;
    let mut out = vec![];
    for t in 0..ms {
        // finish
        let mut i = 0;
        while i < running.len() {
            if running[i].1 <= t {
                let (s, e, f) = running.swap_remove(i);
                a.on_demand(blocked);
                let lim = a.on_sample(&Sample::success(
                    base + Duration::from_millis(s),
                    Duration::from_millis(e - s),
                    f,
                ));
                let _ = lim;
            } else {
                i += 1;
            }
        }
        // admit up to limit, demand 40 in flight total
        while running.len() < a.limit() && running.len() < 40 {
            // FIFO worker queue inside the upstream
            let w = (0..4).min_by_key(|&w| worker_free[w]).unwrap();
            let start_service = worker_free[w].max(t);
            let end = start_service + 20;
            worker_free[w] = end;
            running.push((t, end, running.len() + 1));
        }
        if running.len() < 40 {
            blocked += (40 - running.len()) as u64 / 8;
        }
        if t % 500 == 0 {
            out.push(a.limit());
        }
    }
    out
}

#[test]
fn p_littles_clock_offset() {
    let zero = run_littles(Duration::ZERO, 30_000);
    let hour = run_littles(Duration::from_secs(3600), 30_000);
    println!("offset 0:  {zero:?}");
    println!("offset 1h: {hour:?}");
    println!("same: {}", zero == hour);
}

#[test]
fn p_rate_near_clock_end() {
    use sluicegate::clock::{FakeClock, Nanos};
    use sluicegate::keyed::KeyedGcra;
    use sluicegate::rate::{Gcra, Quota, SlidingWindow};
    for start_back in [
        Duration::from_secs(3600 * 24 * 365 * 100),
        Duration::from_secs(3600 * 24 * 365),
        Duration::from_secs(3600),
        Duration::from_secs(100),
        Duration::from_secs(10),
        Duration::ZERO,
    ] {
        let clock = FakeClock::new();
        clock.set(Nanos::new(u64::MAX - start_back.as_nanos() as u64));
        let g = Gcra::with_clock(Quota::per_second(10).unwrap(), clock.clone());
        let w = SlidingWindow::with_clock(10, Duration::from_secs(1), 10, clock.clone()).unwrap();
        let k = KeyedGcra::<u32, _>::with_clock(
            Quota::per_second(10).unwrap(),
            std::num::NonZeroUsize::new(4).unwrap(),
            clock.clone(),
        );
        let (mut ga, mut wa, mut ka) = (0, 0, 0);
        for _ in 0..20_000 {
            if g.check().is_allowed() {
                ga += 1;
            }
            if w.check().is_allowed() {
                wa += 1;
            }
            if k.check(&1).is_allowed() {
                ka += 1;
            }
            clock.advance(Duration::from_millis(1));
        }
        println!(
            "start {start_back:?} before the end, 20 s of checks at 1/ms: gcra {ga} window {wa} keyed {ka}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn p_panicking_service_releases() {
    use sluicegate::adaptive::{AdaptiveLimiter, Aimd, AimdConfig};
    use sluicegate::middleware::HttpConcurrencyLimitLayer;
    use tower::{Layer, ServiceExt};
    let limiter = ConcurrencyLimiter::builder(1).build().unwrap();
    let adaptive = AdaptiveLimiter::new(limiter, Aimd::new(AimdConfig::default()));
    let svc = HttpConcurrencyLimitLayer::adaptive(adaptive.clone()).layer(tower::service_fn(
        |_req: http::Request<String>| async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            if true {
                panic!("handler bug");
            }
            Ok::<_, std::convert::Infallible>(http::Response::new(String::new()))
        },
    ));
    for _ in 0..3 {
        let s = svc.clone();
        let r = tokio::spawn(async move {
            s.oneshot(http::Request::new(String::new()))
                .await
                .map(|_| ())
        })
        .await;
        println!("panicked: {}", r.is_err());
    }
    let snap = adaptive.limiter().snapshot();
    println!(
        "after panics: in_flight {} completed {} limit {}",
        snap.in_flight,
        snap.completed,
        adaptive.limit()
    );
}

#[tokio::test]
async fn p_two_rate_layers() {
    use sluicegate::keyed::KeyedGcra;
    use sluicegate::middleware::{HeaderKey, RateLimitLayer};
    use sluicegate::rate::{Gcra, Quota};
    use std::sync::Arc;
    use tower::{Layer, ServiceExt};
    let global = Arc::new(Gcra::new(Quota::per_minute(100)));
    let per_client = Arc::new(KeyedGcra::<http::HeaderValue>::new(
        Quota::per_minute(2),
        std::num::NonZeroUsize::new(100).unwrap(),
    ));
    let inner = tower::service_fn(|_req: http::Request<String>| async move {
        Ok::<_, std::convert::Infallible>(http::Response::new(String::from("ok")))
    });
    let svc = RateLimitLayer::new(global).policy_name("global").layer(
        RateLimitLayer::new(per_client)
            .keyed_by(HeaderKey(http::HeaderName::from_static("x-key")))
            .policy_name("per-client")
            .layer(inner),
    );
    for i in 0..3 {
        let req = http::Request::builder()
            .header("x-key", "alice")
            .body(String::new())
            .unwrap();
        let resp = svc.clone().oneshot(req).await.unwrap();
        println!(
            "{i}: {} retry-after={:?} ratelimit={:?} policy={:?}",
            resp.status(),
            resp.headers().get("retry-after"),
            resp.headers()
                .get_all("ratelimit")
                .iter()
                .collect::<Vec<_>>(),
            resp.headers()
                .get_all("ratelimit-policy")
                .iter()
                .collect::<Vec<_>>()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn p_detach_then_reset() {
    use sluicegate::adaptive::{AdaptiveLimiter, Fixed};
    let a = AdaptiveLimiter::new(ConcurrencyLimiter::new(1), Fixed::new(50));
    a.detach();
    a.limiter().set_max(5).unwrap();
    a.limiter().reset().await;
    println!("after detach, set_max(5), reset: limit {}", a.limit());
}
