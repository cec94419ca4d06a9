//! The global rate limits in sluicegate's HTTP rate layer (feature `tower`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use sluicegate::http::RatePolicy;
use sluicegate::middleware::rate::AsyncRateCheck;
use sluicegate::rate::Decision;

use crate::{GlobalGcra, GlobalWindow, HybridGcra};

/// A global rate limit as the check of
/// [`RateLimitLayer::deferred`](sluicegate::middleware::rate::RateLimitLayer::deferred): one
/// global limit for every request (key `()`), announced in `RateLimit-Policy`.
///
/// # Examples
///
/// ```no_run
/// # use sluicegate_redis::{GlobalGcra, RedisStore, RedisCheck};
/// # use sluicegate::middleware::rate::RateLimitLayer;
/// # use sluicegate::rate::Quota;
/// # async fn demo(store: RedisStore) -> Result<(), sluicegate_redis::Error> {
/// let limit = GlobalGcra::builder(&store, "api", Quota::per_second(100)?).build()?;
/// let layer = RateLimitLayer::deferred(RedisCheck::new(limit)).policy_name("api");
/// # let _ = layer;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct RedisCheck<L>(Arc<L>);

impl<L> RedisCheck<L> {
    /// The check of `limit`.
    pub fn new(limit: L) -> Self {
        RedisCheck(Arc::new(limit))
    }

    /// The limit itself.
    pub fn limit(&self) -> &L {
        &self.0
    }
}

// Written by hand: a derive would ask for `L: Clone`.
impl<L> Clone for RedisCheck<L> {
    fn clone(&self) -> Self {
        RedisCheck(self.0.clone())
    }
}

/// What the layer needs from each global limit.
trait Limit: Send + Sync + 'static {
    fn decide_one(&self) -> impl Future<Output = Decision> + Send;
    fn policy(&self) -> RatePolicy;
}

impl Limit for GlobalGcra {
    fn decide_one(&self) -> impl Future<Output = Decision> + Send {
        self.check()
    }
    fn policy(&self) -> RatePolicy {
        RatePolicy::new(u64::from(self.quota().count()), self.quota().period())
    }
}

impl Limit for HybridGcra {
    fn decide_one(&self) -> impl Future<Output = Decision> + Send {
        self.check()
    }
    fn policy(&self) -> RatePolicy {
        RatePolicy::new(u64::from(self.quota().count()), self.quota().period())
    }
}

impl Limit for GlobalWindow {
    fn decide_one(&self) -> impl Future<Output = Decision> + Send {
        self.check()
    }
    fn policy(&self) -> RatePolicy {
        RatePolicy::new(u64::from(self.limit()), self.window())
    }
}

#[allow(private_bounds)] // `Limit` is implemented for the three global rate limits only
impl<L: Limit> AsyncRateCheck<()> for RedisCheck<L> {
    type Future = Pin<Box<dyn Future<Output = Decision> + Send>>;

    fn check(&self, _: ()) -> Self::Future {
        let limit = self.0.clone();
        Box::pin(async move { limit.decide_one().await })
    }

    fn policy(&self) -> Option<RatePolicy> {
        Some(self.0.policy())
    }
}
