//! An adaptive pool's bounds in force: what is written, with the algorithm's defaults moved
//! out of its way.

use sluicegate::adaptive::{AimdConfig, Gradient2Config, LittlesLawConfig, VegasConfig};

use super::model::bounds::ADAPTIVE_MAX;
use super::model::{Adaptive, Algorithm};

/// An adaptive limit's bounds as in force: the config's, with the algorithm's defaults filled
/// in (`/status` and `/metrics` show them, so that a limit at its floor or its ceiling reads
/// as such: review 27, finding 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdaptiveBounds {
    /// The limit it started from.
    pub initial: usize,
    /// The least it goes to.
    pub min: usize,
    /// The most it goes to.
    pub max: usize,
}

/// How far a default bound moves from a written one it would contradict: the defaults' own
/// spread (gradient2 and aimd: 20 to 200), so that the limit keeps room to adapt.
const SPREAD: usize = 10;

impl Adaptive {
    /// The bounds in force: the written ones as written; a default one that a written value
    /// would contradict moved out of its way, never clamped onto it (trial 34, finding 4:
    /// gradient2 with `max = 10` was held at 10, its default floor of 20 cut to the ceiling;
    /// aimd's `min = 500` was cut to its default ceiling of 200).
    ///
    /// - a `max` below the default `min` lowers it to a tenth of `max` (at least 1);
    /// - a `min` above the default `max` raises it to ten times `min`;
    /// - an `initial` outside the default bounds moves the bound it passes to it;
    /// - the default `initial` is taken into the bounds.
    ///
    /// Vegas has a fixed floor of 1. Two written values that contradict each other are the
    /// config check's error (`load.rs`), never moved: the bounds here are clamped only so
    /// that a config built in code without that check cannot panic a clamp.
    pub fn in_force(&self) -> AdaptiveBounds {
        let (initial, min, max) = defaults(self.algorithm);
        let ceiling = usize::try_from(ADAPTIVE_MAX.max).unwrap_or(usize::MAX);
        let max = self.max.unwrap_or_else(|| {
            let raised = match self.min {
                Some(lo) if lo > max => lo.saturating_mul(SPREAD).min(ceiling),
                _ => max,
            };
            raised.max(self.initial.unwrap_or(0))
        });
        let min = match self.algorithm {
            Algorithm::Vegas => 1,
            _ => self
                .min
                .unwrap_or_else(|| {
                    let lowered = match self.max {
                        Some(hi) if hi < min => (hi / SPREAD).max(1),
                        _ => min,
                    };
                    lowered.min(self.initial.unwrap_or(usize::MAX))
                })
                .min(max),
        };
        AdaptiveBounds {
            initial: self.initial.unwrap_or(initial).clamp(min, max),
            min,
            max,
        }
    }
}

/// The library's defaults for `algorithm`: initial, min and max (vegas: a floor of 1).
fn defaults(algorithm: Algorithm) -> (usize, usize, usize) {
    match algorithm {
        Algorithm::Littles => {
            let c = LittlesLawConfig::default();
            (c.initial, c.min, c.max)
        }
        Algorithm::Gradient2 => {
            let c = Gradient2Config::default();
            (c.initial, c.min, c.max)
        }
        Algorithm::Aimd => {
            let c = AimdConfig::default();
            (c.initial, c.min, c.max)
        }
        Algorithm::Vegas => {
            let c = VegasConfig::default();
            (c.initial, 1, c.max)
        }
    }
}
