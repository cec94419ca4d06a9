//! The two problems sluicegate was made for, run live on this machine in a few seconds.
//!
//! 1. A runaway client: a timer bug doubles its requests every round. A client-side
//!    throttle keeps it to 4 calls in flight; then the kill switch (`set_max(0)`), a
//!    bypassed health check, and a reset.
//! 2. A slow API with 3 slots: 40 callers in a burst. Excess callers wait in a queue; callers
//!    that hang up leave it; callers who would time out anyway are told at once.
//!
//! `cargo run -p sluicegate-examples --example scenarios`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};
use sluicegate_examples::describe;

/// How long one call to the runaway client's server takes.
const RUNAWAY_CALL: Duration = Duration::from_millis(20);
/// How long one call to the slow API takes.
const SLOW_CALL: Duration = Duration::from_millis(200);

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

/// The buggy client: round r fires 2^r requests at once, 8 rounds, 255 calls in all.
async fn runaway_rounds(server: &Arc<CountingServer>, throttle: Option<&ConcurrencyLimiter>) {
    for round in 0..8 {
        let mut calls = Vec::new();
        for _ in 0..(1 << round) {
            let server = server.clone();
            let throttle = throttle.cloned();
            calls.push(tokio::spawn(async move {
                match throttle {
                    Some(t) => t.run(server.call(RUNAWAY_CALL)).await.is_ok(),
                    None => {
                        server.call(RUNAWAY_CALL).await;
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

async fn runaway_client() {
    println!(
        "== 1. A runaway client: a timer bug doubles its calls every round (1, 2, 4 … 128: \
         255 calls of 20 ms)"
    );
    let unthrottled = Arc::new(CountingServer::default());
    runaway_rounds(&unthrottled, None).await;
    println!(
        "   without a throttle: the server saw {} calls at once",
        unthrottled.peak()
    );

    // Every call the client makes goes through this limiter: 4 at once, up to 1000 more
    // wait their turn (no timeout).
    let throttle = ConcurrencyLimiter::builder(4)
        .max_queue(1000)
        .build()
        .unwrap();
    let server = Arc::new(CountingServer::default());
    let started = Instant::now();
    runaway_rounds(&server, Some(&throttle)).await;
    println!(
        "   with a client-side throttle (4 at once, up to 1000 waiting): the server saw {} at \
         once;\n   all {} calls served in {:.1?}",
        server.peak(),
        server.served.load(Ordering::SeqCst),
        started.elapsed()
    );

    // The kill switch: the operator pauses all outgoing calls.
    throttle.set_max(0).unwrap();
    let stuck: Vec<_> = (0..10)
        .map(|_| {
            let (throttle, server) = (throttle.clone(), server.clone());
            tokio::spawn(async move { throttle.run(server.call(RUNAWAY_CALL)).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    println!("   kill switch on (set_max(0)): 10 new calls wait in the queue, none runs");
    println!("{}", describe(&throttle.snapshot(), "      "));
    {
        let _health = throttle.acquire_bypass();
        server.call(Duration::from_millis(5)).await;
        println!("   a health check bypassed the throttle (acquire_bypass) and got through");
    }
    // Reset: turn away everything that waits, wait for what runs, reopen with the
    // configured 4.
    throttle.reset().await;
    let refused = count_closed(stuck).await;
    println!(
        "   reset(): the {refused} waiting calls were turned away (Rejected::Closed); the \
         limit is back to {}",
        throttle.max()
    );
    println!("{}\n", describe(&throttle.snapshot(), "      "));
}

/// Waits for every task and counts those the limiter turned away as closed.
async fn count_closed(tasks: Vec<tokio::task::JoinHandle<Result<(), Rejected>>>) -> usize {
    let mut closed = 0;
    for t in tasks {
        if matches!(t.await.unwrap(), Err(Rejected::Closed { .. })) {
            closed += 1;
        }
    }
    closed
}

/// How one caller of the slow API fared.
enum Outcome {
    Served,
    Rejected(Rejected),
    HungUp,
}

async fn slow_api() {
    println!(
        "== 2. A slow API with 3 slots (200 ms a call); 40 callers arrive within 0.4 s, and \
         every 10th hangs up after 300 ms"
    );
    let api = ConcurrencyLimiter::builder(3)
        .max_queue(30)
        .queue_timeout(Duration::from_secs(1))
        .predictive(true)
        .build()
        .unwrap();
    println!(
        "   the limiter: 3 at once, up to 30 waiting, each for at most 1 s; predictive \
         rejection on:\n   whoever would wait longer than 1 s is turned away at once with a \
         retry hint, instead of timing out in the queue"
    );
    let server = Arc::new(CountingServer::default());
    let mut callers = Vec::new();
    for i in 0..40 {
        let (api, server) = (api.clone(), server.clone());
        callers.push(tokio::spawn(async move {
            let call = api.run(server.call(SLOW_CALL));
            let answer = if i % 10 == 9 {
                // This caller hangs up after 300 ms: if it is still queued, it leaves at once.
                tokio::time::timeout(Duration::from_millis(300), call)
                    .await
                    .ok()
            } else {
                Some(call.await)
            };
            match answer {
                Some(Ok(())) => Outcome::Served,
                Some(Err(r)) => Outcome::Rejected(r),
                None => Outcome::HungUp,
            }
        }));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (mut served, mut hung_up, mut rejected) = (0, 0, Vec::new());
    for c in callers {
        match c.await.unwrap() {
            Outcome::Served => served += 1,
            Outcome::HungUp => hung_up += 1,
            Outcome::Rejected(r) => rejected.push(r),
        }
    }
    println!(
        "   the API never saw more than {} calls at once",
        server.peak()
    );
    println!("   served: {served} of 40");
    let predicted: Vec<Duration> = rejected
        .iter()
        .filter(|r| matches!(r, Rejected::PredictedTimeout { .. }))
        .map(Rejected::retry_after)
        .collect();
    if let (Some(soonest), Some(latest)) = (predicted.iter().min(), predicted.iter().max()) {
        println!(
            "   turned away at once, since they would have timed out: {}, each told to retry \
             in {soonest:.1?} to {latest:.1?}",
            predicted.len()
        );
    }
    for r in rejected
        .iter()
        .filter(|r| !matches!(r, Rejected::PredictedTimeout { .. }))
    {
        println!("   not served: {r}");
    }
    println!("   hung up before an answer: {hung_up}");
    println!("{}", describe(&api.snapshot(), "      "));
}

#[tokio::main]
async fn main() {
    runaway_client().await;
    slow_api().await;
}
