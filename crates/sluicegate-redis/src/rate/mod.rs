//! Global rate limits: GCRA (for the whole limit or per client) and the sliding window, each
//! one Lua script per decision.

mod gcra;
mod hybrid;
mod keyed;
mod packed;

mod sliding;
mod verdict;

pub use gcra::{GcraBuilder, GlobalGcra};

pub use hybrid::{HybridGcra, HybridStats};
pub use keyed::GlobalKeyedGcra;
pub use sliding::{GlobalWindow, WindowBuilder};
pub use verdict::Verdict;

/// How many instances share a limit, for the [`Local`](crate::FailurePolicy::Local)
/// fallback: this instance's share of `limit`, at least 1 unless `limit` is 0.
pub(crate) fn share(limit: u32, instances: u32) -> u32 {
    if limit == 0 {
        0
    } else {
        (limit / instances.max(1)).max(1)
    }
}
