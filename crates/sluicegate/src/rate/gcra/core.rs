//! The pure GCRA step: a decision and the next state from the current state and `now`.

use crate::rate::{CheckError, Decision, Quota};

/// A quota in the form the algorithm uses: the emission interval `t` (ns between two requests
/// at the steady rate) and the burst. `t == 0` means the quota denies everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcraParams {
    pub(crate) t: u64,
    pub(crate) burst: u32,
}

impl GcraParams {
    /// The longest a full bucket may take to refill, `burst × t`: 2^62 ns, about 146 years.
    /// With clocks that have run for less than 2^63 ns, `now + burst × t` and every state
    /// then fit a `u64` exactly; beyond it they saturated at `u64::MAX`, where every request
    /// looked within reach and was allowed.
    pub const MAX_HORIZON_NS: u64 = 1 << 62;

    /// The parameters of `quota`. The interval is rounded down to whole nanoseconds. Where
    /// `burst × interval` would exceed [`Self::MAX_HORIZON_NS`] (about 146 years), the burst
    /// is cut first, to what fits but never below the quota's count, so the steady rate holds
    /// (`1/h` with a burst of ten million: 1.28 million, then one an hour); only then is the
    /// interval shortened (`Quota::new(100, Duration::MAX)`, a budget that never refills:
    /// 100, then one every 1.46 years).
    pub fn from_quota(quota: &Quota) -> Self {
        match quota.emission_interval() {
            Some(t) => {
                let t = crate::clock::saturating_nanos(t).max(1);
                let fits = u32::try_from(Self::MAX_HORIZON_NS / t).unwrap_or(u32::MAX);
                let burst = quota.burst().min(fits.max(quota.count()));
                let longest = Self::MAX_HORIZON_NS / u64::from(burst.max(1));
                GcraParams {
                    t: t.min(longest),
                    burst,
                }
            }
            None => GcraParams { t: 0, burst: 0 },
        }
    }

    /// Whether the quota denies everything.
    #[inline]
    pub fn denies_all(&self) -> bool {
        self.t == 0
    }

    /// How far ahead of `now` the state may run: `burst × t`.
    #[inline]
    fn horizon(&self) -> u64 {
        self.t.saturating_mul(u64::from(self.burst))
    }

    /// Whole requests still available at `now` for state `tat`.
    pub(crate) fn remaining(&self, tat: u64, now: u64) -> u32 {
        if self.denies_all() {
            return 0;
        }
        let base = tat.max(now);
        let room = now.saturating_add(self.horizon()).saturating_sub(base);
        u32::try_from(room / self.t)
            .unwrap_or(u32::MAX)
            .min(self.burst)
    }
}

/// One GCRA step: may `n` requests go ahead at `now` given state `tat`?
///
/// Returns the decision and, when allowed, the new state. State and `now` are nanoseconds on
/// the same clock; a state of 0 is a fresh (full) bucket.
///
/// # Errors
///
/// [`CheckError::InsufficientCapacity`] when `n` exceeds the burst (and the quota does not
/// deny everything): no wait would ever let it through.
#[inline]
pub fn step(
    params: GcraParams,
    tat: u64,
    now: u64,
    n: u32,
) -> Result<(Decision, Option<u64>), CheckError> {
    if params.denies_all() {
        return Ok((Decision::never(), None));
    }
    if n > params.burst {
        return Err(CheckError::InsufficientCapacity {
            requested: n,
            capacity: params.burst,
        });
    }
    let base = tat.max(now);
    let next = base.saturating_add(params.t.saturating_mul(u64::from(n)));
    let limit_at = now.saturating_add(params.horizon());
    if next <= limit_at {
        let decision = Decision::allowed(params.burst, limit_at - next, params.t, next - now);
        Ok((decision, Some(next)))
    } else {
        // `base` may lie beyond `limit_at` (a state written under a longer quota, or read from
        // a shared store): then nothing remains, and the wait covers the whole distance.
        let decision = Decision::denied(
            params.burst,
            limit_at.saturating_sub(base),
            params.t,
            next - limit_at,
            base - now,
        );
        Ok((decision, None))
    }
}

/// The state to carry over when the quota changes from `old` to `new` at `now`.
///
/// The change hands out nothing: what remains is kept (capped at the new burst), and from then
/// on the bucket refills at the new rate. From a deny-all quota the bucket starts empty; to a
/// deny-all quota the state is kept as it is.
pub fn requote(old: GcraParams, new: GcraParams, tat: u64, now: u64) -> u64 {
    if new.denies_all() {
        return tat;
    }
    let kept = old.remaining(tat, now).min(new.burst);
    let owed = u64::from(new.burst - kept);
    now.saturating_add(owed.saturating_mul(new.t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn params(count: u32, burst: u32) -> GcraParams {
        GcraParams::from_quota(
            &Quota::per_second(count)
                .unwrap()
                .with_burst(std::num::NonZeroU32::new(burst).unwrap()),
        )
    }

    #[test]
    fn fresh_state_allows_the_whole_burst_then_denies() {
        let p = params(10, 3);
        let mut tat = 0;
        for left in [2, 1, 0] {
            let (d, next) = step(p, tat, 0, 1).unwrap();
            assert!(d.is_allowed());
            assert_eq!(d.remaining(), left);
            tat = next.unwrap();
        }
        let (d, next) = step(p, tat, 0, 1).unwrap();
        assert!(d.is_denied() && next.is_none());
        assert_eq!(d.retry_after(), Duration::from_millis(100));
        assert_eq!(d.reset_after(), Duration::from_millis(300));
    }

    /// Pins a defect: a state beyond `now + burst × t` (written under another quota on the
    /// same key, or read from a shared store such as Redis) made the denial's `remaining`
    /// underflow — a panic in debug builds, a huge count in release builds.
    #[test]
    fn state_beyond_the_horizon_is_denied_until_it_is_back_within_reach() {
        let p = params(10, 3); // t = 100 ms, horizon 300 ms
        let tat = 10_000_000_000; // 10 s ahead of now
        let (d, next) = step(p, tat, 0, 1).unwrap();
        assert!(d.is_denied() && next.is_none());
        assert_eq!(d.remaining(), 0);
        // Back within reach when tat + t ≤ now + horizon, i.e. at 9.8 s.
        assert_eq!(d.retry_after(), Duration::from_millis(9800));
        assert_eq!(d.reset_after(), Duration::from_secs(10));
        let (d, _) = step(p, tat, 9_800_000_000, 1).unwrap();
        assert!(d.is_allowed());
        // At the far end of the clock nothing wraps either.
        let (d, _) = step(p, u64::MAX, 0, 3).unwrap();
        assert!(d.is_denied() && d.remaining() == 0);
    }

    #[test]
    fn more_than_the_burst_is_an_error_not_a_denial() {
        assert_eq!(
            step(params(10, 3), 0, 0, 4),
            Err(CheckError::InsufficientCapacity {
                requested: 4,
                capacity: 3
            })
        );
    }

    #[test]
    fn requote_keeps_what_remains_and_caps_it_at_the_new_burst() {
        let old = params(10, 10);
        let tat = 700_000_000; // 7 used of 10 at time 0: 3 remain
        let bigger = params(100, 100);
        assert_eq!(bigger.remaining(requote(old, bigger, tat, 0), 0), 3);
        let smaller = params(1, 2);
        assert_eq!(smaller.remaining(requote(old, smaller, tat, 0), 0), 2);
    }
}
