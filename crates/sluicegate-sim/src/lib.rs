//! A deterministic overload simulator for sluicegate's limit algorithms.
//!
//! Time is virtual: every run happens on a single-threaded tokio runtime with paused time,
//! which jumps straight to the next timer whenever all tasks are idle. That makes tokio a
//! discrete-event engine in which the *real* [`ConcurrencyLimiter`], its queue and timeouts,
//! and the real algorithms run unchanged; with a seeded RNG a run is reproducible.
//!
//! | module | what it is |
//! |---|---|
//! | [`upstream`] | the resource: `c` workers, service-time distributions, contention, changes, failures |
//! | [`load`] | arrivals: open-loop Poisson (rate steps, bursts), closed-loop clients |
//! | [`scenario`] | scenarios as data: TOML files, the built-in set |
//! | [`algo`] | the algorithms under test, by name |
//! | [`engine`] | runs one scenario with one algorithm and records what happened |
//! | [`stats`] | the numbers a run is judged by |
//! | [`judge`] | ours against the best non-oracle baseline and the oracle, per scenario |
//! | [`ceiling`] | the best a fixed limit does in a scenario (a search over fixed limits) |
//! | [`report`] | scorecard tables, CSV and SVG charts |
//!
//! [`ConcurrencyLimiter`]: sluicegate::concurrency::ConcurrencyLimiter

pub mod algo;
pub mod ceiling;
pub mod engine;
pub mod judge;
pub mod load;
pub mod report;
pub mod scenario;
pub mod stats;
pub mod upstream;
