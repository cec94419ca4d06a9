//! Runnable examples of sluicegate that need nothing but tokio, and the few lines they share
//! to print a limiter's state for a person.
//!
//! `cargo run -p sluicegate-examples --example scenarios` (the README's first command) and
//! `cargo run -p sluicegate-examples --example rate_limits`. The examples with axum, hyper
//! and reqwest are in `sluicegate-http-examples`, so that this crate compiles in seconds.

use sluicegate::concurrency::Snapshot;

/// A limiter's [`Snapshot`] in words, on two lines each starting with `indent`: what it
/// holds now, and how every call so far ended (outcomes with a count of zero left out).
///
/// ```
/// use sluicegate::concurrency::ConcurrencyLimiter;
///
/// let limiter = ConcurrencyLimiter::builder(4).build().unwrap();
/// let text = sluicegate_examples::describe(&limiter.snapshot(), "  ");
/// assert_eq!(text, "  now: limit 4, 0 running, 0 waiting, open\n  so far: 0 admitted");
/// ```
pub fn describe(s: &Snapshot, indent: &str) -> String {
    let state = if s.closed { "closed" } else { "open" };
    let mut outcomes = vec![format!("{} admitted", s.admitted)];
    let counted = [
        (s.rejected_queue_full, "turned away: queue full"),
        (
            s.rejected_predicted,
            "turned away at once: would have timed out in the queue",
        ),
        (s.timed_out, "timed out in the queue"),
        (s.cancelled, "left the queue: the caller hung up"),
        (s.rejected_closed, "turned away: limiter closed or reset"),
        (s.bypassed, "bypassed the limit"),
    ];
    for (n, what) in counted {
        if n > 0 {
            outcomes.push(format!("{n} {what}"));
        }
    }
    format!(
        "{indent}now: limit {}, {} running, {} waiting, {state}\n{indent}so far: {}",
        s.limit,
        s.in_flight,
        s.queued,
        outcomes.join(" · ")
    )
}
