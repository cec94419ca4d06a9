//! A tour of the rate limiters on a fake clock (no waiting): a sliding window, GCRA, and a
//! limit per user.
//!
//! `cargo run -p sluicegate-examples --example rate_limits`

use std::num::NonZeroUsize;
use std::time::Duration;

use sluicegate::clock::FakeClock;
use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::{Decision, Gcra, Quota, SlidingWindow};

/// One decision in words.
fn said(d: &Decision) -> String {
    if d.is_allowed() {
        format!("allowed, {} left", d.remaining())
    } else {
        format!("refused, retry in {:?}", d.retry_after())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Every limiter reads this clock: time moves only when the example says so.
    let clock = FakeClock::new();

    println!("8 requests at the same instant:");
    let window = SlidingWindow::with_clock(5, Duration::from_secs(1), 10, clock.clone())?;
    let admitted = (0..8).filter(|_| window.check().is_allowed()).count();
    println!("  sliding window (at most 5 in any 1 s, counted in 10 slices): {admitted} admitted");

    let gcra = Gcra::with_clock(Quota::per_second(5), clock.clone());
    let admitted = (0..8).filter(|_| gcra.check().is_allowed()).count();
    println!(
        "  GCRA (5 a second, burst 5): {admitted} admitted; a 9th is {}",
        said(&gcra.check())
    );

    println!("per user, 2 a minute each (at most 10 000 users tracked):");
    let per_user = KeyedGcra::with_clock(
        Quota::per_minute(2),
        NonZeroUsize::new(10_000).unwrap(),
        clock.clone(),
    );
    for user in ["ann", "ann", "ann", "bob"] {
        println!("  {user}: {}", said(&per_user.check(&user)));
    }
    clock.advance(Duration::from_secs(30));
    println!(
        "  30 s later (one request's worth of quota back), ann: {}",
        said(&per_user.check(&"ann"))
    );
    Ok(())
}
