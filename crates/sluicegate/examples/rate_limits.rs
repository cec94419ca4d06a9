//! A tour of the rate limiters on a fake clock: a sliding window, GCRA, a per-key limit.

use std::num::NonZeroUsize;
use std::time::Duration;

use sluicegate::clock::FakeClock;
use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::{Gcra, Quota, SlidingWindow};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let clock = FakeClock::new();

    let window = SlidingWindow::with_clock(5, Duration::from_secs(1), 10, clock.clone())?;
    let admitted = (0..8).filter(|_| window.check().is_allowed()).count();
    println!("sliding window, 5/s: {admitted} of 8 admitted at once");

    let gcra = Gcra::with_clock(Quota::per_second(5).unwrap(), clock.clone());
    let admitted = (0..8).filter(|_| gcra.check().is_allowed()).count();
    let next = gcra.check();
    println!(
        "gcra, 5/s: {admitted} of 8 admitted, next in {:?}",
        next.retry_after()
    );

    let per_user = KeyedGcra::with_clock(
        Quota::per_minute(2),
        NonZeroUsize::new(10_000).unwrap(),
        clock.clone(),
    );
    for user in ["ann", "ann", "ann", "bob"] {
        let d = per_user.check(&user);
        println!(
            "{user}: allowed={} remaining={}",
            d.is_allowed(),
            d.remaining()
        );
    }
    clock.advance(Duration::from_secs(30));
    println!(
        "ann after 30 s: allowed={}",
        per_user.check(&"ann").is_allowed()
    );
    Ok(())
}
