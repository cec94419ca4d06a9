//! Arrivals: open-loop Poisson at a multiple of the upstream's capacity (changing over time,
//! with optional bursts) or closed-loop clients.

use crate::scenario::duration::de_duration;
use serde::Deserialize;
use std::time::Duration;

/// How requests arrive (`[load]`, tagged by `kind`).
///
/// ```toml
/// [load]
/// kind = "open"
/// rate = 1.5                                        # × the upstream's capacity at t = 0
/// change = [{ at = "20s", rate = 0.5 }]             # optional: new rate from `at` on
/// burst = { rate = 3.0, every = "4s", length = "1s" } # optional: `rate` inside bursts
///
/// [load]
/// kind = "closed"
/// clients = 200
/// think = "20ms"
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Load {
    /// Open loop: Poisson arrivals, whatever happens to them.
    Open {
        /// Arrival rate as a multiple of the upstream's capacity at `t = 0`.
        rate: f64,
        /// Later rates, in time order.
        #[serde(default, rename = "change")]
        changes: Vec<RateChange>,
        /// Periodic bursts on top of the rate.
        #[serde(default)]
        burst: Option<Burst>,
    },
    /// Closed loop: `clients` each send a request, wait for its answer (or deadline), think
    /// for an exponential time of mean `think`, and repeat.
    Closed {
        /// Number of clients.
        clients: usize,
        /// Mean think time.
        #[serde(deserialize_with = "de_duration")]
        think: Duration,
    },
}

/// A new open-loop rate from `at` on.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateChange {
    /// When, from the start of the run.
    #[serde(deserialize_with = "de_duration")]
    pub at: Duration,
    /// The rate from then on, × the capacity at `t = 0`.
    pub rate: f64,
}

/// Periodic bursts: the rate is `rate` for `length` out of every `every`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    /// Rate inside a burst, × the capacity at `t = 0`.
    pub rate: f64,
    /// Time from one burst's start to the next.
    #[serde(deserialize_with = "de_duration")]
    pub every: Duration,
    /// Burst length.
    #[serde(deserialize_with = "de_duration")]
    pub length: Duration,
}

impl Load {
    /// Open-loop arrival rate at `t` as a multiple of the capacity at `t = 0`; `None` for
    /// closed-loop load.
    pub fn factor_at(&self, t: Duration) -> Option<f64> {
        match self {
            Load::Open {
                rate,
                changes,
                burst,
            } => {
                if let Some(b) = burst {
                    let phase = t.as_nanos() % b.every.as_nanos().max(1);
                    if phase < b.length.as_nanos() {
                        return Some(b.rate);
                    }
                }
                let last = changes.iter().take_while(|c| c.at <= t).last();
                Some(last.map_or(*rate, |c| c.rate))
            }
            Load::Closed { .. } => None,
        }
    }

    /// Times at which the open-loop rate steps (burst edges excluded).
    pub fn change_times(&self) -> Vec<Duration> {
        match self {
            Load::Open { changes, .. } => changes.iter().map(|c| c.at).collect(),
            Load::Closed { .. } => Vec::new(),
        }
    }

    /// Why the load cannot be simulated, if it cannot.
    ///
    /// # Errors
    ///
    /// A rate that is negative or not finite, changes out of order, a burst longer than its
    /// period, no clients.
    pub fn validate(&self) -> Result<(), String> {
        let ok = |r: f64| r.is_finite() && r >= 0.0;
        match self {
            Load::Open {
                rate,
                changes,
                burst,
            } => {
                if !ok(*rate) || changes.iter().any(|c| !ok(c.rate)) {
                    return Err("load rates must be finite and >= 0".into());
                }
                if changes.windows(2).any(|w| w[1].at < w[0].at) {
                    return Err("load.change entries must be in time order".into());
                }
                if let Some(b) = burst {
                    if !ok(b.rate) || b.every.is_zero() || b.length > b.every {
                        return Err(
                            "load.burst needs rate >= 0, every > 0 and length <= every".into()
                        );
                    }
                }
                Ok(())
            }
            Load::Closed { clients, .. } if *clients == 0 => {
                Err("load.clients must be at least 1".into())
            }
            Load::Closed { .. } => Ok(()),
        }
    }
}
