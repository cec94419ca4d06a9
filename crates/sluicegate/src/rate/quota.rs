//! Quotas: how many per period, with what burst; validated once, at construction.

use std::fmt;
use std::num::NonZeroU32;
use std::time::Duration;

/// A GCRA quota: `count` requests per `period`, in bursts of at most `burst` (default:
/// `count`).
///
/// A count of 0 is valid and denies everything (the kill switch).
///
/// A [`Gcra`](crate::rate::Gcra) refills a full bucket in at most about 146 years (2^62 ns,
/// [`GcraParams::MAX_HORIZON_NS`](crate::rate::gcra::GcraParams::MAX_HORIZON_NS)): where
/// `burst × period / count` is longer, the burst is cut to fit (never below `count`, so the
/// rate holds), and only then the interval shortened. A budget meant never to refill
/// (`Quota::new(100, Duration::MAX)`) in practice still never does.
///
/// # Examples
///
/// ```
/// use sluicegate::rate::Quota;
/// use std::num::NonZeroU32;
/// use std::time::Duration;
///
/// let steady = Quota::per_second(100)?;
/// let bursty = Quota::new(600, Duration::from_secs(60))?.with_burst(NonZeroU32::new(20).unwrap());
/// assert_eq!(bursty.emission_interval(), Some(Duration::from_millis(100)));
/// assert_eq!(steady.burst(), 100);
/// # Ok::<(), sluicegate::rate::QuotaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    count: u32,
    period: Duration,
    burst: u32,
}

impl Quota {
    /// `count` requests per `period`.
    ///
    /// # Errors
    ///
    /// [`QuotaError::ZeroPeriod`] if `period` is zero; [`QuotaError::RateTooHigh`] if it
    /// would mean more than one request per nanosecond.
    pub fn new(count: u32, period: Duration) -> Result<Self, QuotaError> {
        if period.is_zero() {
            return Err(QuotaError::ZeroPeriod);
        }
        if count > 0 && period.as_nanos() < u128::from(count) {
            return Err(QuotaError::RateTooHigh);
        }
        Ok(Quota {
            count,
            period,
            burst: count,
        })
    }

    /// `count` requests per second.
    ///
    /// # Errors
    ///
    /// [`QuotaError::RateTooHigh`] for more than 10^9 (one request per nanosecond).
    pub fn per_second(count: u32) -> Result<Self, QuotaError> {
        Self::new(count, Duration::from_secs(1))
    }

    /// `count` requests per minute. Never fails: a minute holds more nanoseconds than any
    /// `u32`.
    pub fn per_minute(count: u32) -> Self {
        Self::per_period(count, 60)
    }

    /// `count` requests per hour. Never fails, as [`per_minute`](Self::per_minute).
    pub fn per_hour(count: u32) -> Self {
        Self::per_period(count, 3600)
    }

    /// `count` per `secs` seconds, for periods of at least 5 s (`u32::MAX` ns is ~4.3 s),
    /// which no count can exceed one per nanosecond.
    fn per_period(count: u32, secs: u64) -> Self {
        Quota {
            count,
            period: Duration::from_secs(secs),
            burst: count,
        }
    }

    /// A quota that denies everything.
    pub fn deny_all() -> Self {
        Quota {
            count: 0,
            period: Duration::from_secs(1),
            burst: 0,
        }
    }

    /// The same rate with bursts of at most `burst` (ignored when the count is 0).
    pub fn with_burst(self, burst: NonZeroU32) -> Self {
        let burst = if self.count == 0 { 0 } else { burst.get() };
        Quota { burst, ..self }
    }

    /// Requests per period.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The most requests allowed at once (0 when the quota denies everything).
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// Time between two requests at the steady rate; `None` when the quota denies everything.
    pub fn emission_interval(&self) -> Option<Duration> {
        (self.count > 0).then(|| self.period / self.count)
    }
}

/// A quota or window that cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuotaError {
    /// The period or window is zero.
    ZeroPeriod,
    /// More than one request per nanosecond.
    RateTooHigh,
    /// A sliding window's slice count is 0 or above [`SlidingWindow::MAX_SLICES`](crate::rate::SlidingWindow::MAX_SLICES).
    SliceCount(u32),
    /// A sliding window shorter than one nanosecond per slice.
    WindowTooShort,
}

impl fmt::Display for QuotaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuotaError::ZeroPeriod => f.write_str("the period must be longer than zero"),
            QuotaError::RateTooHigh => {
                f.write_str("the rate must be at most one request per nanosecond")
            }
            QuotaError::SliceCount(n) => write!(
                f,
                "a sliding window needs between 1 and {} slices, not {n}",
                crate::rate::SlidingWindow::<crate::clock::MonotonicClock>::MAX_SLICES
            ),
            QuotaError::WindowTooShort => {
                f.write_str("the window must be at least one nanosecond per slice")
            }
        }
    }
}

impl std::error::Error for QuotaError {}
