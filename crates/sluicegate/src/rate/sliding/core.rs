//! The pure sliding-window decision over the counts of the last `slices + 1` slices.

use crate::rate::{CheckError, Decision};

/// A window's shape and limit: at most `limit` in any `slices` consecutive slices of
/// `slice_ns` nanoseconds, and at most `limit + limit / slices` in any `slices + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowParams {
    /// The most admitted in one window of `slices` slices.
    pub limit: u32,
    /// Slices per window (N).
    pub slices: u32,
    /// Length of one slice in nanoseconds.
    pub slice_ns: u64,
}

impl WindowParams {
    /// The most admitted in `slices + 1` consecutive slices: `limit · (1 + 1/slices)`, rounded
    /// down. Any interval as long as the window touches at most that many slices, so this is
    /// what bounds the edge burst.
    pub fn edge_cap(&self) -> u64 {
        u64::from(self.limit) + u64::from(self.limit) / u64::from(self.slices)
    }
}

/// May `n` go ahead now? `count(j)` for `j` in `0..=slices` is the number admitted in the
/// slice `slices - j` slices before the current one (`j == slices` is the current slice);
/// `into_slice` is how far `now` is into the current slice, in nanoseconds.
///
/// # Errors
///
/// [`CheckError::InsufficientCapacity`] when `n` exceeds the limit (and the limit is not 0).
pub fn evaluate(
    params: WindowParams,
    count: impl Fn(usize) -> u64,
    into_slice: u64,
    n: u32,
) -> Result<Decision, CheckError> {
    if params.limit == 0 {
        return Ok(Decision::never());
    }
    if n > params.limit {
        return Err(CheckError::InsufficientCapacity {
            requested: n,
            capacity: params.limit,
        });
    }
    let slices = params.slices as usize;
    let (limit, cap) = (u64::from(params.limit), params.edge_cap());
    let n = u64::from(n);
    let mut in_window = 0; // the last `slices` slices
    let mut newest = None; // newest slice holding anything
    let oldest = count(0);
    for j in 1..=slices {
        let c = count(j);
        in_window += c;
        if c > 0 {
            newest = Some(j);
        }
    }
    if newest.is_none() && oldest > 0 {
        newest = Some(0);
    }
    let at = |k: usize| {
        (k as u64)
            .saturating_mul(params.slice_ns)
            .saturating_sub(into_slice)
    };
    let room = |window: u64, edge: u64| limit.saturating_sub(window).min(cap.saturating_sub(edge));
    if in_window + n <= limit && in_window + oldest + n <= cap {
        let (window, edge) = (in_window + n, in_window + oldest + n);
        let newest = if n > 0 { Some(slices) } else { newest };
        let reset = newest.map_or(0, |i| at(i + 1));
        return Ok(Decision::allowed(
            params.limit,
            room(window, edge),
            1,
            reset,
        ));
    }
    // Denied: find the first slice boundary at which the oldest counts have aged out far
    // enough, were nothing else admitted meanwhile.
    let (mut window, mut edge) = (in_window, in_window + oldest);
    let mut retry = slices + 1;
    for k in 1..=slices {
        edge -= count(k - 1).min(edge);
        window -= count(k).min(window);
        if window + n <= limit && edge + n <= cap {
            retry = k;
            break;
        }
    }
    let reset = newest.map_or(0, |i| at(i + 1));
    let room = room(in_window, in_window + oldest);
    Ok(Decision::denied(params.limit, room, 1, at(retry), reset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const P: WindowParams = WindowParams {
        limit: 10,
        slices: 2,
        slice_ns: 100,
    };

    #[test]
    fn full_window_denies_until_its_oldest_slice_ages_out() {
        let counts = [0, 6, 4];
        let d = evaluate(P, |j| counts[j], 30, 1).unwrap();
        assert!(d.is_denied());
        assert_eq!(d.retry_after(), Duration::from_nanos(70));
        assert_eq!(d.reset_after(), Duration::from_nanos(270));
    }

    #[test]
    fn edge_cap_holds_even_when_the_aligned_window_has_room() {
        // 10 in the slice about to leave, 5 in the current one: the aligned window (last two
        // slices) holds 5, but the last three hold 15 = limit · (1 + 1/2).
        let counts = [10, 0, 5];
        assert!(evaluate(P, |j| counts[j], 0, 1).unwrap().is_denied());
    }

    #[test]
    fn more_than_the_limit_at_once_is_an_error() {
        assert!(evaluate(P, |_| 0, 0, 11).is_err());
    }
}
