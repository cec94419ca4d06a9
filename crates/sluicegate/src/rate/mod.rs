//! Rate limiters: a lock-free sliding window and GCRA (a token bucket in one atomic word).
//!
//! | limiter | promise | state |
//! |---|---|---|
//! | [`SlidingWindow`] | at most `limit` in any aligned window, `limit · (1 + 1/slices)` in any interval of that length | `slices + 1` atomic counters (rounded up to a power of two) and a cached allowance |
//! | [`Gcra`] | a steady rate with bursts of up to `burst` | one atomic word |
//!
//! Both answer with a [`Decision`] (a denial is a value, not an error) and take their time
//! from a [`Clock`](crate::clock::Clock); use [`CoarseClock`](crate::clock::CoarseClock) on hot
//! paths where ~1 ms resolution is enough. The repository's guide `docs/rate-limiting.md`
//! says which to pick.

mod decision;
pub mod gcra;
mod quota;
pub mod sliding;

pub use decision::{CheckError, Decision};
pub use gcra::Gcra;
pub use quota::{Quota, QuotaError};
pub use sliding::SlidingWindow;

/// A value on a 128-byte line pair of its own (adjacent-line prefetchers fetch pairs), so a
/// word that threads write all the time does not drag read-mostly neighbours along with it.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct CacheLine<T>(pub(crate) T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}
