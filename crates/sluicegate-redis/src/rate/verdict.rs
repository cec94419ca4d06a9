//! A decision together with who made it and when, by Redis's clock.

use std::time::Duration;

use sluicegate::rate::Decision;

use crate::Source;

/// A [`Decision`], who made it, and the Redis server time it was made at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The decision itself, as a local limiter answers it.
    pub decision: Decision,
    /// Redis, a lease, or the failure policy.
    pub source: Source,
    /// Redis's `TIME` when the script ran (since the Unix epoch); `None` when Redis did not
    /// decide.
    pub server_time: Option<Duration>,
}

impl Verdict {
    pub(crate) fn from_redis(decision: Decision, sec: i64, usec: i64) -> Self {
        let secs = u64::try_from(sec).unwrap_or(0);
        let micros = u32::try_from(usec).unwrap_or(0);
        Verdict {
            decision,
            source: Source::Redis,
            server_time: Some(Duration::new(secs, micros.saturating_mul(1000))),
        }
    }

    pub(crate) fn new(decision: Decision, source: Source) -> Self {
        Verdict {
            decision,
            source,
            server_time: None,
        }
    }
}
