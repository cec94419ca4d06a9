//! Global concurrency: at most `max` permits across every instance, held as leases in Redis.

mod error;
mod limiter;
mod permit;
mod scripts;
mod share;

pub use error::AcquireError;
pub use limiter::{ConcurrencyBuilder, GlobalConcurrency};
pub use permit::GlobalPermit;
