//! The log of refused requests, sized for a flood: the first refusal of each reason at
//! `info` at once, then a summary at most once a second while refusals go on, and every
//! single one at `debug`. The counters (`/metrics`, `/status`) count each one regardless.
//!
//! A line per refusal (review 4, finding 6) wrote 674 000 lines in two minutes of
//! overload: the disk fills just when the gate is doing its job.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::Outcome;

/// How often a run of refusals is summed up.
pub const SUMMARY_EVERY: Duration = Duration::from_secs(1);

/// One pool's refusals (or the gate's own, for requests no pool takes) since the last
/// summary.
#[derive(Debug)]
pub struct RefusalLog {
    /// The reasons' names, by index (at most 64).
    names: Vec<&'static str>,
    /// Whose refusals: a pool's (logged with `pool = NAME`), or the gate's.
    pools: bool,
    /// Refusals not logged yet, by reason.
    counts: Box<[AtomicU64]>,
    /// Reasons logged once already in this run of refusals (bit `i`: `names[i]`).
    seen: AtomicU64,
    /// Whether a task sums this run up.
    summing: AtomicBool,
}

/// A pool's: its outcomes' names.
impl Default for RefusalLog {
    fn default() -> Self {
        RefusalLog::new(Outcome::ALL.iter().map(|o| o.name()).collect(), true)
    }
}

impl RefusalLog {
    /// A log of refusals for reasons `names` (at most 64), a pool's if `pools`.
    pub fn new(names: Vec<&'static str>, pools: bool) -> RefusalLog {
        assert!(names.len() <= 64, "at most 64 reasons");
        RefusalLog {
            counts: names.iter().map(|_| AtomicU64::new(0)).collect(),
            names,
            pools,
            seen: AtomicU64::new(0),
            summing: AtomicBool::new(false),
        }
    }

    /// Logs one refusal for reason `i` by pool `who` (ignored for the gate's own).
    pub fn refused(self: &Arc<Self>, who: &str, i: usize) {
        self.refused_because(who, i, None);
    }

    /// As [`refused`](Self::refused), with what went wrong (an upstream's error, say): in
    /// the first line of a run and in every `debug` line.
    pub fn refused_because(
        self: &Arc<Self>,
        who: &str,
        i: usize,
        error: Option<&dyn std::fmt::Display>,
    ) {
        let reason = self.names[i];
        let error = error.map(tracing::field::display);
        let bit = 1 << i;
        // Read before the write: in a flood the bit is set, and a `fetch_or` on every refusal
        // would write the shared word each time.
        let first = self.seen.load(Ordering::Relaxed) & bit == 0
            && self.seen.fetch_or(bit, Ordering::Relaxed) & bit == 0;
        if first {
            if self.pools {
                tracing::info!(
                    pool = who,
                    reason,
                    error,
                    "rejected (more are summed up each second)"
                );
            } else {
                tracing::info!(reason, error, "rejected (more are summed up each second)");
            }
        } else {
            if self.pools {
                tracing::debug!(pool = who, reason, error, "rejected");
            } else {
                tracing::debug!(reason, error, "rejected");
            }
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
        if !self.summing.load(Ordering::Relaxed) && !self.summing.swap(true, Ordering::AcqRel) {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => drop(rt.spawn(Arc::clone(self).sum_up(who.to_owned()))),
                // No runtime to sum up on (not the gate's case): each stays a first.
                Err(_) => self.end_run(),
            }
        }
    }

    /// Sums the run up each [`SUMMARY_EVERY`] until a whole period passes without a refusal.
    async fn sum_up(self: Arc<Self>, who: String) {
        loop {
            tokio::time::sleep(SUMMARY_EVERY).await;
            let counts: Vec<u64> = self
                .counts
                .iter()
                .map(|c| c.swap(0, Ordering::Relaxed))
                .collect();
            let total: u64 = counts.iter().sum();
            if total > 0 {
                let by_reason = self
                    .names
                    .iter()
                    .zip(&counts)
                    .filter(|(_, n)| **n > 0)
                    .map(|(name, n)| format!("{name} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                if self.pools {
                    tracing::info!(
                        pool = %who,
                        refused = total,
                        "pool {who}: {total} more refused in the last {SUMMARY_EVERY:?}: {by_reason}"
                    );
                } else {
                    tracing::info!(
                        refused = total,
                        "{total} more requests refused in the last {SUMMARY_EVERY:?}: {by_reason}"
                    );
                }
                continue;
            }
            // A quiet period: the run is over, the next refusal is logged at once. One that
            // came as the run ended found a task summing and started none: go on for it.
            self.end_run();
            let late = self.counts.iter().any(|c| c.load(Ordering::Relaxed) > 0);
            if !late || self.summing.swap(true, Ordering::AcqRel) {
                return;
            }
        }
    }

    fn end_run(&self) {
        self.seen.store(0, Ordering::Relaxed);
        self.summing.store(false, Ordering::Release);
    }
}
