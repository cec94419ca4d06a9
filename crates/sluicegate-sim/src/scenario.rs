//! The scenarios of the scorecard. The upstream is the same in all: 50 workers, 50 ms mean
//! exponential service (capacity 1000 requests/s, unloaded p99 ≈ 230 ms), client deadline 1 s.

use crate::load::{Clients, Load};
use crate::upstream::UpstreamModel;
use std::time::Duration;

/// A named situation: an upstream, a load, a length, the limiter's queue settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Short name for tables and file names.
    pub name: &'static str,
    /// What it shows.
    pub description: &'static str,
    /// Virtual time during which requests arrive.
    pub duration: Duration,
    /// The resource.
    pub upstream: UpstreamModel,
    /// The clients.
    pub clients: Clients,
    /// The limiter's queue bound (same for every algorithm).
    pub max_queue: usize,
    /// The limiter's queue timeout (same for every algorithm).
    pub queue_timeout: Duration,
}

/// Workers of the standard upstream.
pub const WORKERS: usize = 50;
/// Mean service time of the standard upstream.
pub const MEAN: Duration = Duration::from_millis(50);

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn base(name: &'static str, description: &'static str, load: Load, duration: u64) -> Scenario {
    Scenario {
        name,
        description,
        duration: secs(duration),
        upstream: UpstreamModel::new(WORKERS, MEAN),
        clients: Clients {
            load,
            deadline: secs(1),
        },
        max_queue: 1000,
        queue_timeout: Duration::from_millis(100),
    }
}

impl Scenario {
    /// Open-loop Poisson at `factor` × capacity.
    fn poisson(factor: f64) -> Load {
        Load::Poisson {
            rate: factor * WORKERS as f64 / MEAN.as_secs_f64(),
        }
    }

    /// Every scenario of the scorecard.
    pub fn all() -> Vec<Scenario> {
        let cap = WORKERS as f64 / MEAN.as_secs_f64();
        let mut halves = base(
            "capacity_halves",
            "1.5x load; workers 50 -> 25 at t=30 s, back to 50 at t=60 s",
            Scenario::poisson(1.5),
            90,
        );
        halves.upstream = halves
            .upstream
            .change_at(secs(30), |s| s.workers = WORKERS / 2)
            .change_at(secs(60), |s| s.workers = WORKERS);
        let mut spike = base(
            "latency_spike",
            "1.5x load; service 3x slower from t=20 s to t=30 s",
            Scenario::poisson(1.5),
            50,
        );
        spike.upstream = spike
            .upstream
            .change_at(secs(20), |s| s.mean_service = MEAN * 3)
            .change_at(secs(30), |s| s.mean_service = MEAN);
        let mut failures = base(
            "failures",
            "1.5x load; 10% of requests fail fast",
            Scenario::poisson(1.5),
            40,
        );
        failures.upstream.initial.failure_rate = 0.1;
        vec![
            base(
                "steady_0.5x",
                "Poisson at 0.5x capacity",
                Scenario::poisson(0.5),
                40,
            ),
            base(
                "overload_3x",
                "Poisson at 3x capacity",
                Scenario::poisson(3.0),
                60,
            ),
            halves,
            spike,
            base(
                "bursty",
                "3x capacity for 1 s in every 4 s, 0.3x otherwise",
                Load::Bursty {
                    high: 3.0 * cap,
                    low: 0.3 * cap,
                    on: secs(1),
                    period: secs(4),
                },
                60,
            ),
            base(
                "closed_loop",
                "200 closed-loop clients, 20 ms mean think time",
                Load::Closed {
                    clients: 200,
                    think: Duration::from_millis(20),
                },
                40,
            ),
            failures,
        ]
    }

    /// The scenario called `name`, if any.
    pub fn by_name(name: &str) -> Option<Scenario> {
        Scenario::all().into_iter().find(|s| s.name == name)
    }

    /// Times at which the upstream changes (convergence is measured after each).
    pub fn change_times(&self) -> Vec<Duration> {
        self.upstream.changes.iter().map(|(t, _)| *t).collect()
    }
}
