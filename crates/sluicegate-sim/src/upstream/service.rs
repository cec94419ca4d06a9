//! Service-time distributions: exponential (with an optional floor), uniform, log-normal and
//! weighted mixtures of these.

use crate::scenario::duration::de_duration;
use rand::Rng;
use serde::Deserialize;
use std::time::Duration;

/// How long one request keeps a worker busy, with no contention.
///
/// In a scenario file this is a table tagged by `dist`:
///
/// ```toml
/// service = { dist = "exponential", mean = "50ms", min = "5ms" }
/// service = { dist = "uniform", min = "10ms", max = "30ms" }
/// service = { dist = "lognormal", median = "20ms", sigma = 1.0 }
/// service = { dist = "mixture", of = [
///     { weight = 0.9, dist = "exponential", mean = "10ms" },
///     { weight = 0.1, dist = "exponential", mean = "500ms" },
/// ] }
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum Service {
    /// `min + Exp(mean − min)`: exponential above a floor (the floor is 0 unless given).
    Exponential {
        /// Mean, floor included.
        #[serde(deserialize_with = "de_duration")]
        mean: Duration,
        /// No request is faster than this.
        #[serde(default, deserialize_with = "de_duration")]
        min: Duration,
    },
    /// Uniform on `[min, max]`.
    Uniform {
        /// Shortest.
        #[serde(deserialize_with = "de_duration")]
        min: Duration,
        /// Longest.
        #[serde(deserialize_with = "de_duration")]
        max: Duration,
    },
    /// `median × e^(sigma·Z)`, `Z` standard normal: heavy-tailed for `sigma` ≳ 1.
    #[serde(rename = "lognormal")]
    LogNormal {
        /// The median.
        #[serde(deserialize_with = "de_duration")]
        median: Duration,
        /// Standard deviation of the logarithm.
        sigma: f64,
    },
    /// One of several distributions, chosen by weight for each request.
    Mixture {
        /// The parts; weights need not sum to 1.
        of: Vec<Part>,
    },
}

/// One part of a [`Service::Mixture`].
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Part {
    /// Relative weight (> 0).
    pub weight: f64,
    /// The part's distribution.
    #[serde(flatten)]
    pub service: Service,
}

impl Service {
    /// Exponential with mean `mean` and no floor.
    pub fn exponential(mean: Duration) -> Self {
        Service::Exponential {
            mean,
            min: Duration::ZERO,
        }
    }

    /// The mean service time.
    pub fn mean(&self) -> Duration {
        match self {
            Service::Exponential { mean, .. } => *mean,
            Service::Uniform { min, max } => (*min + *max) / 2,
            Service::LogNormal { median, sigma } => median.mul_f64((sigma * sigma / 2.0).exp()),
            Service::Mixture { of } => {
                let total: f64 = of.iter().map(|p| p.weight).sum();
                let secs: f64 = of
                    .iter()
                    .map(|p| p.weight * p.service.mean().as_secs_f64())
                    .sum();
                Duration::from_secs_f64(secs / total)
            }
        }
    }

    /// One draw.
    pub fn sample(&self, rng: &mut impl Rng) -> Duration {
        match self {
            Service::Exponential { mean, min } => {
                let u: f64 = rng.random();
                *min + (*mean - *min).mul_f64(-(1.0 - u).ln())
            }
            Service::Uniform { min, max } => *min + (*max - *min).mul_f64(rng.random::<f64>()),
            Service::LogNormal { median, sigma } => {
                // Box–Muller: one standard normal from two uniforms.
                let (u, v): (f64, f64) = (rng.random(), rng.random());
                let z = (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                median.mul_f64((sigma * z).exp().min(1e6))
            }
            Service::Mixture { of } => {
                let total: f64 = of.iter().map(|p| p.weight).sum();
                let mut pick = rng.random::<f64>() * total;
                for p in of {
                    if pick < p.weight {
                        return p.service.sample(rng);
                    }
                    pick -= p.weight;
                }
                of.last().map_or(Duration::ZERO, |p| p.service.sample(rng))
            }
        }
    }

    /// Why the distribution cannot be used, if it cannot.
    ///
    /// # Errors
    ///
    /// A zero mean, a floor not below the mean, `min > max`, a negative or non-finite sigma,
    /// an empty mixture or a weight that is not positive.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Service::Exponential { mean, min } if mean.is_zero() || min >= mean => Err(format!(
                "exponential service needs 0 <= min < mean (mean {mean:?}, min {min:?})"
            )),
            Service::Uniform { min, max } if min > max || max.is_zero() => Err(format!(
                "uniform service needs min <= max and max > 0 (min {min:?}, max {max:?})"
            )),
            Service::LogNormal { median, sigma }
                if median.is_zero() || !sigma.is_finite() || *sigma < 0.0 || *sigma > 4.0 =>
            {
                Err(format!(
                    "lognormal service needs median > 0 and 0 <= sigma <= 4 (median {median:?}, sigma {sigma})"
                ))
            }
            Service::Mixture { of } => {
                if of.is_empty() {
                    return Err("mixture service needs at least one part in `of`".into());
                }
                for p in of {
                    if !(p.weight.is_finite() && p.weight > 0.0) {
                        return Err(format!("mixture weight must be > 0, got {}", p.weight));
                    }
                    p.service.validate()?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
