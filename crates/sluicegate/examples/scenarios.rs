//! The two problems sluicegate was made for, run live on this machine in a few seconds.
//!
//! 1. A runaway client: a timer bug doubles its requests every round. A client-side
//!    throttle keeps it to 4 calls in flight; then the kill switch (`set_max(0)`), a
//!    bypassed health check, and a reset.
//! 2. A slow API with 3 slots: 40 callers in a burst. Excess callers wait in a queue; callers
//!    that hang up leave it; callers who would time out anyway are told at once.
//!
//! `cargo run --release -p sluicegate --example scenarios`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sluicegate::concurrency::{ConcurrencyLimiter, Rejected, Snapshot};

/// A server that counts how many calls it serves at once.
#[derive(Default)]
struct CountingServer {
    now: AtomicUsize,
    peak: AtomicUsize,
    served: AtomicUsize,
}

impl CountingServer {
    async fn call(&self, work: Duration) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(work).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        self.served.fetch_add(1, Ordering::SeqCst);
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

/// The buggy client: round r fires 2^r requests at once.
async fn runaway_rounds(server: &Arc<CountingServer>, throttle: Option<&ConcurrencyLimiter>) {
    for round in 0..8 {
        let mut calls = Vec::new();
        for _ in 0..(1 << round) {
            let server = server.clone();
            let throttle = throttle.cloned();
            calls.push(tokio::spawn(async move {
                match throttle {
                    Some(t) => t.run(server.call(Duration::from_millis(20))).await.is_ok(),
                    None => {
                        server.call(Duration::from_millis(20)).await;
                        true
                    }
                }
            }));
        }
        for call in calls {
            call.await.unwrap();
        }
    }
}

fn show(s: &Snapshot) -> String {
    format!(
        "limit {} · in flight {} · queued {} · admitted {} · queue full {} · timed out {} · \
         predicted {} · cancelled {} · closed {} · bypassed {}",
        s.limit,
        s.in_flight,
        s.queued,
        s.admitted,
        s.rejected_queue_full,
        s.timed_out,
        s.rejected_predicted,
        s.cancelled,
        s.rejected_closed,
        s.bypassed
    )
}

async fn runaway_client() {
    println!("== 1. A runaway client (a timer bug doubles its calls every round: 1, 2, 4 … 128)");
    let unthrottled = Arc::new(CountingServer::default());
    runaway_rounds(&unthrottled, None).await;
    println!(
        "   without a throttle: the server saw {} calls at once",
        unthrottled.peak()
    );

    let throttle = ConcurrencyLimiter::builder(4)
        .max_queue(1000)
        .build()
        .unwrap();
    let server = Arc::new(CountingServer::default());
    let started = Instant::now();
    runaway_rounds(&server, Some(&throttle)).await;
    println!(
        "   with a throttle of 4: the server saw {} at once; all {} calls served in {:.1?}",
        server.peak(),
        server.served.load(Ordering::SeqCst),
        started.elapsed()
    );

    // The kill switch: the operator pauses all outgoing calls.
    throttle.set_max(0).unwrap();
    let stuck: Vec<_> = (0..10)
        .map(|_| {
            let (throttle, server) = (throttle.clone(), server.clone());
            tokio::spawn(async move { throttle.run(server.call(Duration::from_millis(20))).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    println!(
        "   kill switch on (set_max(0)): {}",
        show(&throttle.snapshot())
    );
    {
        let _health = throttle.acquire_bypass();
        server.call(Duration::from_millis(5)).await;
        println!("   the health check bypassed the throttle and got through");
    }
    // Reset: cancel everything that waits, wait for what runs, reopen with the configured 4.
    throttle.reset().await;
    let closed = futures_outcomes(stuck).await;
    println!(
        "   reset: {closed} queued calls cancelled, limit back to {}",
        throttle.max()
    );
    println!("   {}\n", show(&throttle.snapshot()));
}

async fn futures_outcomes(tasks: Vec<tokio::task::JoinHandle<Result<(), Rejected>>>) -> usize {
    let mut closed = 0;
    for t in tasks {
        if matches!(t.await.unwrap(), Err(Rejected::Closed { .. })) {
            closed += 1;
        }
    }
    closed
}

async fn slow_api() {
    println!("== 2. A slow API with 3 slots (200 ms a call); 40 callers arrive within 0.4 s");
    let api = ConcurrencyLimiter::builder(3)
        .max_queue(30)
        .queue_timeout(Duration::from_secs(1))
        .predictive(true)
        .build()
        .unwrap();
    let server = Arc::new(CountingServer::default());
    let mut callers = Vec::new();
    for i in 0..40 {
        let (api, server) = (api.clone(), server.clone());
        callers.push(tokio::spawn(async move {
            let call = api.run(server.call(Duration::from_millis(200)));
            if i % 10 == 9 {
                // This caller hangs up after 300 ms: it leaves the queue at once.
                tokio::time::timeout(Duration::from_millis(300), call)
                    .await
                    .ok()
            } else {
                Some(call.await)
            }
        }));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut served = 0;
    let mut why = std::collections::BTreeMap::new();
    for c in callers {
        match c.await.unwrap() {
            Some(Ok(())) => served += 1,
            Some(Err(r)) => *why.entry(r.reason()).or_insert(0) += 1,
            None => *why.entry("hung up").or_insert(0) += 1,
        }
    }
    println!(
        "   the API never saw more than {} calls at once",
        server.peak()
    );
    println!("   served {served}; not served: {why:?}");
    println!("   {}", show(&api.snapshot()));
}

#[tokio::main]
async fn main() {
    runaway_client().await;
    slow_api().await;
}
