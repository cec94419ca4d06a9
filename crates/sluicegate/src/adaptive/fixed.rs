//! [`Fixed`]: a limit that never moves, the baseline every adaptive algorithm must beat.

use super::algorithm::{LimitAlgorithm, Sample};

/// A constant limit, or no limit at all ([`Fixed::unlimited`]).
///
/// # Examples
///
/// ```
/// use sluicegate::adaptive::{Fixed, LimitAlgorithm};
/// assert_eq!(Fixed::new(8).limit(), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixed {
    limit: usize,
    name: &'static str,
}

impl Fixed {
    /// The limit the simulator and the gate treat as "no limit" (large enough never to bind).
    pub const UNLIMITED: usize = crate::concurrency::ConcurrencyLimiter::MAX_PERMITS;

    /// A limit of `limit`, forever.
    pub fn new(limit: usize) -> Self {
        Fixed {
            limit,
            name: "fixed",
        }
    }

    /// No limit: [`Fixed::UNLIMITED`] permits, named `"none"`.
    pub fn unlimited() -> Self {
        Fixed {
            limit: Self::UNLIMITED,
            name: "none",
        }
    }

    /// The same limit under another name (for tables that show several fixed limits).
    pub fn named(self, name: &'static str) -> Self {
        Fixed { name, ..self }
    }
}

impl LimitAlgorithm for Fixed {
    fn name(&self) -> &'static str {
        self.name
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn on_sample(&mut self, _sample: &Sample) -> usize {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Nanos;
    use std::time::Duration;

    #[test]
    fn fixed_limit_ignores_every_sample() {
        let mut fixed = Fixed::new(7);
        let s = Sample::dropped(Nanos::ZERO, Duration::from_secs(9), 100);
        assert_eq!(fixed.on_sample(&s), 7);
        assert_eq!(Fixed::unlimited().name(), "none");
    }
}
