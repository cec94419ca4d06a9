//! Requests the gate answers before any pool takes them (no route, a bad `Host`, path or
//! method, a tunnel or transfer coding it does not handle): counted gate-wide, as they have
//! no pool, and logged as refusals.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::pool::RefusalLog;

/// Why the gate answered a request no pool took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unrouted {
    /// No route matches (`404`).
    NoRoute,
    /// More than one `Host`, one that is no `host[:port]`, a target naming a user, or none
    /// where one is needed (`400`).
    BadHost,
    /// A path the gate refuses to route (`400`).
    BadPath,
    /// A method with a lower-case letter (`400`).
    BadMethod,
    /// `CONNECT` (`501`).
    ConnectNotSupported,
    /// A request body in a transfer coding other than `chunked` (`501`).
    TransferCodingNotSupported,
}

impl Unrouted {
    /// Every reason, in metrics order.
    pub const ALL: [Unrouted; 6] = [
        Unrouted::NoRoute,
        Unrouted::BadHost,
        Unrouted::BadPath,
        Unrouted::BadMethod,
        Unrouted::ConnectNotSupported,
        Unrouted::TransferCodingNotSupported,
    ];

    /// The stable name used in `X-Sluicegate-Reason`, logs, status and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Unrouted::NoRoute => "no_route",
            Unrouted::BadHost => "bad_host",
            Unrouted::BadPath => "bad_path",
            Unrouted::BadMethod => "bad_method",
            Unrouted::ConnectNotSupported => "connect_not_supported",
            Unrouted::TransferCodingNotSupported => "transfer_coding_not_supported",
        }
    }
}

/// The gate's counts of requests no pool took, since it started (kept across reloads).
#[derive(Debug)]
pub struct UnroutedCounts {
    counts: [AtomicU64; Unrouted::ALL.len()],
    log: Arc<RefusalLog>,
}

impl Default for UnroutedCounts {
    fn default() -> Self {
        UnroutedCounts {
            counts: Default::default(),
            log: Arc::new(RefusalLog::new(
                Unrouted::ALL.iter().map(|u| u.name()).collect(),
                false,
            )),
        }
    }
}

impl UnroutedCounts {
    /// Counts and logs one request answered for `why`.
    pub fn count(&self, why: Unrouted) {
        self.counts[why as usize].fetch_add(1, Relaxed);
        self.log.refused("", why as usize);
    }

    /// Requests answered for `why`.
    pub fn get(&self, why: Unrouted) -> u64 {
        self.counts[why as usize].load(Relaxed)
    }
}
