//! A pool's tunnels (connections the upstream switched to another protocol with a `101`,
//! WebSocket): how many are open, and why those that closed did.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Why a tunnel closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunnelEnd {
    /// The client ended its stream.
    ClientClosed,
    /// The upstream ended its stream.
    UpstreamClosed,
    /// Reading from or writing to the client failed (a reset, `send_timeout`).
    ClientError,
    /// Reading from or writing to the upstream failed.
    UpstreamError,
    /// A side left between the `101` and the tunnel's start.
    NotOpened,
    /// No byte passed either way for the pool's `tunnel_idle_timeout`.
    IdleTimeout,
    /// The gate closed it on its way out: the drain's grace period was over.
    Shutdown,
}

impl TunnelEnd {
    /// Every reason, in metrics order.
    pub const ALL: [TunnelEnd; 7] = [
        TunnelEnd::ClientClosed,
        TunnelEnd::UpstreamClosed,
        TunnelEnd::ClientError,
        TunnelEnd::UpstreamError,
        TunnelEnd::NotOpened,
        TunnelEnd::IdleTimeout,
        TunnelEnd::Shutdown,
    ];

    /// The stable name used in logs, status and metrics.
    pub fn name(self) -> &'static str {
        match self {
            TunnelEnd::ClientClosed => "client_closed",
            TunnelEnd::UpstreamClosed => "upstream_closed",
            TunnelEnd::ClientError => "client_error",
            TunnelEnd::UpstreamError => "upstream_error",
            TunnelEnd::NotOpened => "not_opened",
            TunnelEnd::IdleTimeout => "idle_timeout",
            TunnelEnd::Shutdown => "shutdown",
        }
    }
}

/// A pool's tunnels, each holding its request's slot while it is open. Every tunnel opened
/// is open or closed for one reason: `total = open + Σ closed`.
#[derive(Debug, Default)]
pub struct Tunnels {
    open: AtomicU64,
    total: AtomicU64,
    closed: [AtomicU64; TunnelEnd::ALL.len()],
}

impl Tunnels {
    /// Tunnels open now.
    pub fn open(&self) -> u64 {
        self.open.load(Relaxed)
    }

    /// Tunnels opened since the gate started.
    pub fn total(&self) -> u64 {
        self.total.load(Relaxed)
    }

    /// Tunnels closed for `why` since the gate started.
    pub fn closed_for(&self, why: TunnelEnd) -> u64 {
        self.closed[why as usize].load(Relaxed)
    }

    /// One more is open.
    pub(crate) fn opened(&self) {
        self.open.fetch_add(1, Relaxed);
        self.total.fetch_add(1, Relaxed);
    }

    /// One has closed, for `why`.
    pub(crate) fn closed(&self, why: TunnelEnd) {
        self.closed[why as usize].fetch_add(1, Relaxed);
        self.open.fetch_sub(1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reason_counts_on_its_own_counter() {
        let t = Tunnels::default();
        for (i, why) in TunnelEnd::ALL.iter().enumerate() {
            assert_eq!(*why as usize, i);
            t.opened();
        }
        t.closed(TunnelEnd::IdleTimeout);
        assert_eq!(t.closed_for(TunnelEnd::IdleTimeout), 1);
        assert_eq!(t.closed_for(TunnelEnd::Shutdown), 0);
        let closed: u64 = TunnelEnd::ALL.iter().map(|&w| t.closed_for(w)).sum();
        assert_eq!(t.total(), t.open() + closed);
    }
}
