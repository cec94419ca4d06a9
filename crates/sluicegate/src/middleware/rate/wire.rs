//! The crate's own rate limiters as [`RateCheck`]s: [`SlidingWindow`] and [`Gcra`] for a
//! global limit, [`KeyedGcra`] for a keyed one.

use std::hash::{BuildHasher, Hash};

use super::check::{Policy, RateCheck, RateDecision};
use crate::clock::Clock;
use crate::keyed::KeyedGcra;
use crate::rate::{Decision, Gcra, Quota, SlidingWindow};

/// The layer's view of a limiter's decision, with the policy it was made against.
fn to_layer(decision: Decision, policy: Policy) -> RateDecision {
    let remaining = u64::from(decision.remaining());
    let answer = if decision.is_allowed() {
        RateDecision::allow(remaining, decision.reset_after())
    } else {
        RateDecision {
            remaining,
            ..RateDecision::deny(decision.retry_after(), decision.reset_after())
        }
    };
    answer.with_policy(policy)
}

fn policy_of(quota: Quota) -> Policy {
    Policy::new(u64::from(quota.count()), quota.period())
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
    fn check(&self, _: &()) -> RateDecision {
        let policy = Policy::new(u64::from(self.limit()), self.window());
        to_layer(SlidingWindow::check(self), policy)
    }
}

/// A global limit: a steady rate with bursts.
impl<C: Clock> RateCheck<()> for Gcra<C> {
    fn check(&self, _: &()) -> RateDecision {
        to_layer(Gcra::check(self), policy_of(self.quota()))
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
    fn check(&self, key: &K) -> RateDecision {
        to_layer(KeyedGcra::check(self, key), policy_of(self.quota()))
    }
}
