//! Adaptive concurrency limits: algorithms that move a limit from latency samples.
//!
//! A [`LimitAlgorithm`] is pure: it is fed [`Sample`]s (start time, latency, in-flight at
//! start, [`Outcome`]) and answers with a new limit. It reads no clock and does no I/O, so the
//! same code runs in unit tests, in the simulator and behind the middleware and the gate.
//!
//! | algorithm | idea | role |
//! |---|---|---|
//! | [`LittlesLaw`] | `limit = max pass rate × min RT`, with warm-up, floor/ceiling, cool-down, min-RT re-probe | ours, the default |
//! | [`Gradient2`] | long vs short RTT gradient (Netflix) | baseline |
//! | [`Vegas`] | estimated queue from RTT vs no-load RTT (Netflix) | baseline |
//! | [`Aimd`] | additive increase, multiplicative decrease on drops (Netflix) | baseline |
//! | [`Fixed`] | a constant (or no limit at all) | baseline |
//!
//! [`AdaptiveLimiter`] puts an algorithm in charge of a
//! [`ConcurrencyLimiter`](crate::concurrency::ConcurrencyLimiter)'s limit: the seam the
//! middleware, the gate and the simulator share. [`Windowed`] aggregates samples into Netflix-style windows before an inner algorithm sees
//! them. [`LimitAlgorithm::explain`] (and [`AdaptiveLimiter::explain`]) say why a limit sits
//! where it does, as an [`Explanation`] for a status page. The repository's guide
//! `docs/adaptive.md` gives the reasoning behind each formula.

mod aimd;
mod algorithm;
mod explanation;
mod fixed;
mod gradient2;
mod limiter;
mod littles;
mod vegas;
mod windowed;

pub use aimd::{Aimd, AimdConfig};
pub use algorithm::{LimitAlgorithm, Outcome, Sample};
pub use explanation::{Cap, CapSource, ChangeCause, Explanation, LimitChange, Phase};
pub use fixed::Fixed;
pub use gradient2::{Gradient2, Gradient2Config};
pub use limiter::{AdaptiveLimiter, AdaptivePermit};
pub use littles::{LittlesLaw, LittlesLawConfig};
pub use vegas::{Vegas, VegasConfig};
pub use windowed::{Windowed, WindowedConfig};
