//! What a rate limiter answers, and the one way a check can be impossible.

use std::fmt;
use std::time::Duration;

use crate::clock::saturating_nanos;

/// The answer to a check: allowed or denied, with the numbers an HTTP layer needs for
/// `Retry-After` and the `RateLimit` headers.
///
/// A denial is a decision, not an error: the request was possible, just not now.
#[derive(Clone, Copy, PartialEq, Eq)]
#[must_use = "a rate limit decision should be acted upon"]
pub struct Decision {
    // The limit (low 32 bits) and `ALLOWED`, in one word: a `bool` and a `u32` as two fields
    // are written with two narrow stores, and a copy of the decision reads them back with one
    // wide load, which the CPU cannot forward from the store buffer (a ~15-cycle stall,
    // measured as a third of a whole check in a loop that returns decisions).
    limit_allowed: u64,
    // `remaining` is `room / unit`, divided only when asked for: a division costs more than
    // the rest of a check.
    room: u64,
    unit: u64,
    retry_ns: u64,
    reset_ns: u64,
}

const ALLOWED: u64 = 1 << 32;

impl fmt::Debug for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decision")
            .field("allowed", &self.is_allowed())
            .field("limit", &self.limit())
            .field("remaining", &self.remaining())
            .field("retry_after", &self.retry_after())
            .field("reset_after", &self.reset_after())
            .finish()
    }
}

impl Decision {
    /// An allowed request under a limit of `limit`, with `remaining` single requests left
    /// after it and the limiter whole again after `reset_after`.
    ///
    /// The crate's limiters make their own decisions; this is for a limiter of yours (a
    /// remote store, a rule of your own) answering through the same type, e.g. to the rate
    /// layer of the `tower` feature.
    ///
    /// # Examples
    ///
    /// ```
    /// use sluicegate::rate::Decision;
    /// use std::time::Duration;
    ///
    /// let d = Decision::allow(100, 42, Duration::from_secs(17));
    /// assert!(d.is_allowed());
    /// assert_eq!((d.limit(), d.remaining()), (100, 42));
    /// assert_eq!(d.retry_after(), Duration::ZERO);
    /// ```
    pub fn allow(limit: u32, remaining: u32, reset_after: Duration) -> Self {
        Decision::allowed(
            limit,
            u64::from(remaining),
            1,
            saturating_nanos(reset_after),
        )
    }

    /// A denied request under a limit of `limit`, with `remaining` single requests available
    /// (fewer than were asked for), allowed after `retry_after` ([`Duration::MAX`]: never)
    /// and the limiter whole again after `reset_after`.
    ///
    /// # Examples
    ///
    /// ```
    /// use sluicegate::rate::Decision;
    /// use std::time::Duration;
    ///
    /// let d = Decision::deny(100, 0, Duration::from_millis(2_100), Duration::from_secs(60));
    /// assert!(d.is_denied());
    /// assert_eq!(d.retry_after(), Duration::from_millis(2_100));
    /// ```
    pub fn deny(limit: u32, remaining: u32, retry_after: Duration, reset_after: Duration) -> Self {
        Decision::denied(
            limit,
            u64::from(remaining),
            1,
            saturating_nanos(retry_after),
            saturating_nanos(reset_after),
        )
    }

    #[inline]
    pub(crate) fn allowed(limit: u32, room: u64, unit: u64, reset_ns: u64) -> Self {
        Decision {
            limit_allowed: u64::from(limit) | ALLOWED,
            room,
            unit,
            retry_ns: 0,
            reset_ns,
        }
    }

    #[inline]
    pub(crate) fn denied(limit: u32, room: u64, unit: u64, retry_ns: u64, reset_ns: u64) -> Self {
        Decision {
            limit_allowed: u64::from(limit),
            room,
            unit,
            retry_ns,
            reset_ns,
        }
    }

    /// The decision of a limiter whose limit is 0: denied, and no wait will help.
    #[inline]
    pub(crate) fn never() -> Self {
        Decision::denied(0, 0, 1, u64::MAX, 0)
    }

    /// Whether the request may go ahead.
    #[inline]
    pub fn is_allowed(&self) -> bool {
        self.limit_allowed & ALLOWED != 0
    }

    /// Whether the request was turned away.
    #[inline]
    pub fn is_denied(&self) -> bool {
        !self.is_allowed()
    }

    /// The limit in force: the window's `limit`, or GCRA's `burst`.
    #[inline]
    pub fn limit(&self) -> u32 {
        self.limit_allowed as u32
    }

    /// How many single requests would be allowed right after this decision, were nothing else
    /// to happen.
    #[inline]
    pub fn remaining(&self) -> u32 {
        u32::try_from(self.room / self.unit)
            .unwrap_or(u32::MAX)
            .min(self.limit())
    }

    /// How long to wait before the same request would be allowed (zero when allowed).
    ///
    /// [`Duration::MAX`] means never under the current quota (its limit is 0).
    #[inline]
    pub fn retry_after(&self) -> Duration {
        match self.retry_ns {
            u64::MAX => Duration::MAX,
            ns => Duration::from_nanos(ns),
        }
    }

    /// How long until the limiter is back to its full allowance, were nothing else to happen.
    #[inline]
    pub fn reset_after(&self) -> Duration {
        Duration::from_nanos(self.reset_ns)
    }
}

/// A check that can never succeed under the current quota, whatever the wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckError {
    /// `check_n(n)` asked for more than the limiter ever allows at once.
    InsufficientCapacity {
        /// The `n` asked for.
        requested: u32,
        /// The most the limiter allows at once (its `burst` or window `limit`).
        capacity: u32,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::InsufficientCapacity {
                requested,
                capacity,
            } => write!(
                f,
                "asked for {requested} at once but the limiter allows at most {capacity}"
            ),
        }
    }
}

impl std::error::Error for CheckError {}
