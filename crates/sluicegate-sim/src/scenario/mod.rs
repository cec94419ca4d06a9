//! Scenarios as data: an upstream, a load, a length, client deadlines and the limiter's queue
//! settings, read from TOML files (the format is documented in `docs/adaptive.md`). The
//! built-in set lives in `crates/sluicegate-sim/scenarios/` and is compiled into the binary.

mod builtin;
pub mod duration;

use crate::load::Load;
use crate::upstream::{UpstreamModel, UpstreamState};
use duration::{de_duration, de_opt_duration};
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// A named situation: an upstream, a load, a length, the limiter's queue settings.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name for tables and file names: the file's name without `.toml`.
    #[serde(skip)]
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Virtual time during which requests arrive.
    #[serde(deserialize_with = "de_duration")]
    pub duration: Duration,
    /// A request answered later than this after it arrived is not goodput (the client has
    /// gone); a request still queued at its deadline leaves the queue.
    #[serde(deserialize_with = "de_duration")]
    pub deadline: Duration,
    /// The resource.
    pub upstream: UpstreamModel,
    /// The clients.
    pub load: Load,
    /// The limiter's queue (the same for every algorithm).
    #[serde(default)]
    pub limiter: LimiterSettings,
    /// Unloaded p99 of each upstream state, from its start: `(from, p99)`.
    #[serde(skip)]
    unloaded: Vec<(Duration, Duration)>,
}

/// The limiter's queue settings (`[limiter]`).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimiterSettings {
    /// Callers that may wait (1000).
    pub max_queue: usize,
    /// How long one may wait ("100ms").
    #[serde(deserialize_with = "de_duration")]
    pub queue_timeout: Duration,
    /// Turn away at once a caller whose predicted wait exceeds its timeout (true).
    pub predictive: bool,
    /// A proxy's upstream timeout (none): a caller gives up on its upstream this long after
    /// it got its permit and frees the permit as a drop, while the upstream works on, as an
    /// upstream that does not notice a closed connection does.
    #[serde(deserialize_with = "de_opt_duration")]
    pub upstream_timeout: Option<Duration>,
}

impl Default for LimiterSettings {
    fn default() -> Self {
        LimiterSettings {
            max_queue: 1000,
            queue_timeout: Duration::from_millis(100),
            predictive: true,
            upstream_timeout: None,
        }
    }
}

/// Whether a scenario's load stays below capacity (the rejection and latency targets apply)
/// or goes above it (the goodput targets apply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// Offered load never above 0.85 × capacity.
    Under,
    /// Offered load above capacity at some point.
    Over,
}

impl Scenario {
    /// Parses the TOML text of scenario `name` and checks it.
    ///
    /// # Errors
    ///
    /// A TOML or schema error (with line and column) or a value the simulator cannot use.
    pub fn parse(name: &str, text: &str) -> Result<Scenario, String> {
        let mut s: Scenario = toml::from_str(text).map_err(|e| e.to_string())?;
        s.name = name.to_string();
        s.upstream.validate()?;
        s.load.validate()?;
        if s.duration.is_zero() || s.deadline.is_zero() {
            return Err("duration and deadline must be > 0".into());
        }
        if s.upstream.changes.iter().any(|c| c.at >= s.duration) {
            return Err("upstream.change after the end of the run".into());
        }
        let mut starts = vec![Duration::ZERO];
        starts.extend(s.upstream.changes.iter().map(|c| c.at));
        s.unloaded = starts
            .into_iter()
            .map(|t| (t, s.upstream.unloaded_p99(&s.upstream.state_at(t))))
            .collect();
        Ok(s)
    }

    /// The scenario in file `path`, named after the file.
    ///
    /// # Errors
    ///
    /// The file cannot be read or parsed; the message names the file.
    pub fn from_file(path: &Path) -> Result<Scenario, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into());
        Scenario::parse(&name, &text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The scenario in file `path`, or every `*.toml` in directory `path` (by name).
    ///
    /// # Errors
    ///
    /// Anything [`from_file`](Self::from_file) reports, or a directory with no `.toml` file.
    pub fn load(path: &Path) -> Result<Vec<Scenario>, String> {
        if !path.is_dir() {
            return Scenario::from_file(path).map(|s| vec![s]);
        }
        let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut files: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(format!("{}: no .toml scenario files", path.display()));
        }
        files.iter().map(|p| Scenario::from_file(p)).collect()
    }

    /// The built-in scenarios (`crates/sluicegate-sim/scenarios/*.toml`, compiled in).
    ///
    /// # Panics
    ///
    /// If a built-in file is broken (a test parses them all).
    pub fn builtin() -> Vec<Scenario> {
        builtin::FILES
            .iter()
            .map(|(name, text)| {
                Scenario::parse(name, text).unwrap_or_else(|e| panic!("built-in {name}: {e}"))
            })
            .collect()
    }

    /// The built-in scenario called `name`, if any.
    pub fn by_name(name: &str) -> Option<Scenario> {
        let (name, text) = builtin::FILES.iter().find(|(n, _)| *n == name)?;
        Scenario::parse(name, text).ok()
    }

    /// Times at which the upstream changes (convergence is measured after each).
    pub fn change_times(&self) -> Vec<Duration> {
        self.upstream.changes.iter().map(|c| c.at).collect()
    }

    /// The upstream's state at `t`.
    pub fn state_at(&self, t: Duration) -> UpstreamState {
        self.upstream.state_at(t)
    }

    /// The upstream's unloaded p99 at `t`.
    pub fn unloaded_p99_at(&self, t: Duration) -> Duration {
        let at = self
            .unloaded
            .iter()
            .take_while(|(from, _)| *from <= t)
            .last();
        at.or(self.unloaded.first())
            .map_or(Duration::ZERO, |(_, p)| *p)
    }

    /// The upstream's capacity (all requests, per second) at `t = 0`: what load factors
    /// multiply.
    pub fn nominal_capacity(&self) -> f64 {
        self.upstream.capacity(&self.upstream.initial())
    }

    /// Open-loop arrivals per second at `t`; `None` for closed-loop load.
    pub fn rate_at(&self, t: Duration) -> Option<f64> {
        self.load.factor_at(t).map(|f| f * self.nominal_capacity())
    }

    /// Offered load ÷ capacity at `t` (closed loop: clients ÷ (think + unloaded mean RT)).
    pub fn demand_at(&self, t: Duration) -> f64 {
        let state = self.state_at(t);
        let cap = self.upstream.capacity(&state);
        match &self.load {
            Load::Closed { clients, think } => {
                let rt = self.upstream.mean_busy(&state)
                    + self.upstream.mean_outside(&state).as_secs_f64();
                *clients as f64 / (think.as_secs_f64() + rt) / cap
            }
            Load::Open { .. } => self.rate_at(t).unwrap_or(0.0) / cap,
        }
    }

    /// Under or over capacity (sampled every 10 ms).
    pub fn regime(&self) -> Regime {
        let over = self
            .steps(Duration::ZERO, self.duration)
            .any(|(t, _)| self.demand_at(t) > 0.85);
        if over { Regime::Over } else { Regime::Under }
    }

    fn steps(&self, from: Duration, to: Duration) -> impl Iterator<Item = (Duration, f64)> {
        let dt = Duration::from_millis(10);
        let n = ((to.saturating_sub(from)).as_nanos() / dt.as_nanos()) as u32;
        (0..n).map(move |i| (from + dt * i, dt.as_secs_f64()))
    }

    /// Successful requests the upstream could have served over `[from, to)` given the
    /// offered load: ∫ min(capacity, offered) × (1 − failure rate) dt, in 10 ms steps
    /// (closed loop: ∫ capacity). Goodput is measured against this.
    pub fn possible_between(&self, from: Duration, to: Duration) -> f64 {
        self.steps(from, to)
            .map(|(t, dt)| {
                let state = self.state_at(t);
                let cap = self.upstream.capacity(&state);
                let offered = self.rate_at(t).unwrap_or(f64::INFINITY);
                cap.min(offered) * (1.0 - state.failure_rate) * dt
            })
            .sum()
    }
}
