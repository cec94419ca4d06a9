//! A request without a rate limit key: fail closed or fail open, and say so once, loudly.

use std::sync::atomic::{AtomicBool, Ordering};

/// What the rate layer does with a request in which its key extractor finds no key — a
/// misconfiguration, such as an axum server not served with connect info under a
/// [`PeerIp`](super::PeerIp) key. Either way the first such request logs a `tracing`
/// warning that names the fix.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use sluicegate::middleware::{MissingKey, PeerIp, RateLimitLayer, SlidingWindow};
///
/// let window = Arc::new(SlidingWindow::new(100, std::time::Duration::from_secs(60)).unwrap());
/// // Rather serve unlimited than refuse everything if the peer address goes missing.
/// let layer = RateLimitLayer::new(window)
///     .keyed_by(PeerIp::new())
///     .on_missing_key(MissingKey::Allow);
/// # let _ = layer;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MissingKey {
    /// Fail closed (the default): answer with the mapping's missing-key status (`500`,
    /// see [`RejectionMapping::missing_key_status`](crate::http::RejectionMapping::missing_key_status)),
    /// so a broken key never lifts the limit.
    #[default]
    Reject,
    /// Fail open: pass the request on, unlimited and without `RateLimit` headers, so a
    /// broken key never takes the service down.
    Allow,
}

/// Whether a layer has warned about a missing key yet: one flag per layer, shared by every
/// service the layer makes. A copy of the settings starts unwarned.
#[derive(Debug, Default)]
pub(crate) struct WarnOnce(AtomicBool);

impl WarnOnce {
    /// True the first time only.
    #[inline]
    pub(crate) fn first(&self) -> bool {
        !self.0.load(Ordering::Relaxed) && !self.0.swap(true, Ordering::Relaxed)
    }
}

impl Clone for WarnOnce {
    fn clone(&self) -> Self {
        WarnOnce::default()
    }
}
