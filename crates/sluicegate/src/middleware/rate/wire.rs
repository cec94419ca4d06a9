//! The crate's own rate limiters as [`RateCheck`]s: [`SlidingWindow`] and [`Gcra`] for a
//! global limit, [`KeyedGcra`] for a keyed one.

use std::hash::{BuildHasher, Hash};

use super::check::RateCheck;
use crate::clock::Clock;
use crate::http::RatePolicy;
use crate::keyed::KeyedGcra;
use crate::rate::{Decision, Gcra, Quota, SlidingWindow};

fn policy_of(quota: Quota) -> RatePolicy {
    RatePolicy::new(u64::from(quota.count()), quota.period())
}

/// A global limit: at most `limit` requests in any `window` (at slice resolution).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use sluicegate::middleware::rate::RateLimitLayer;
/// use sluicegate::rate::SlidingWindow;
///
/// let api = Arc::new(SlidingWindow::new(100, Duration::from_secs(60)).unwrap());
/// let layer = RateLimitLayer::new(api).policy_name("api");
/// # let _ = layer;
/// ```
impl<C: Clock> RateCheck<()> for SlidingWindow<C> {
    #[inline]
    fn check(&self, _: &()) -> Decision {
        SlidingWindow::check(self)
    }

    fn policy(&self) -> Option<RatePolicy> {
        Some(RatePolicy::new(u64::from(self.limit()), self.window()))
    }
}

/// A global limit: a steady rate with bursts.
impl<C: Clock> RateCheck<()> for Gcra<C> {
    #[inline]
    fn check(&self, _: &()) -> Decision {
        Gcra::check(self)
    }

    fn policy(&self) -> Option<RatePolicy> {
        Some(policy_of(self.quota()))
    }
}

/// A limit per key (client IP, API key, ...), with bounded memory.
///
/// ```
/// use std::net::IpAddr;
/// use std::sync::Arc;
/// use sluicegate::keyed::KeyedGcra;
/// use sluicegate::middleware::rate::{PeerIp, RateLimitLayer};
/// use sluicegate::rate::Quota;
///
/// let max_clients = std::num::NonZeroUsize::new(100_000).unwrap();
/// let per_client: Arc<KeyedGcra<IpAddr>> = Arc::new(KeyedGcra::new(Quota::per_minute(60), max_clients));
/// let layer = RateLimitLayer::new(per_client).keyed_by(PeerIp::new());
/// # let _ = layer;
/// ```
impl<K, C, S> RateCheck<K> for KeyedGcra<K, C, S>
where
    K: Hash + Eq + Clone,
    C: Clock,
    S: BuildHasher,
{
    #[inline]
    fn check(&self, key: &K) -> Decision {
        KeyedGcra::check(self, key)
    }

    fn policy(&self) -> Option<RatePolicy> {
        Some(policy_of(self.quota()))
    }
}
