//! The layer that wraps a service in a [`ConcurrencyLimit`].

use tower_layer::Layer;

use super::service::ConcurrencyLimit;
use crate::adaptive::AdaptiveLimiter;
use crate::concurrency::ConcurrencyLimiter;

/// Wraps services in a [`ConcurrencyLimit`] sharing one [`ConcurrencyLimiter`].
///
/// ```
/// use sluicegate::concurrency::ConcurrencyLimiter;
/// use sluicegate::middleware::concurrency::ConcurrencyLimitLayer;
///
/// let limiter = ConcurrencyLimiter::builder(4).max_queue(50).build().unwrap();
/// let layer = ConcurrencyLimitLayer::new(limiter.clone());
/// let service = tower::ServiceBuilder::new()
///     .layer(layer)
///     .service(tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) }));
/// # let _ = service;
/// ```
#[derive(Clone, Debug)]
pub struct ConcurrencyLimitLayer {
    limiter: ConcurrencyLimiter,
    adaptive: Option<AdaptiveLimiter>,
}

impl ConcurrencyLimitLayer {
    /// A layer whose services all draw permits from `limiter` (and from any other layer or
    /// code holding a clone of it).
    pub fn new(limiter: ConcurrencyLimiter) -> Self {
        ConcurrencyLimitLayer {
            limiter,
            adaptive: None,
        }
    }

    /// A layer under an adaptive limit: each call is timed and its outcome (success, or
    /// dropped on an error) fed to `adaptive`'s algorithm, which moves the limit.
    pub fn adaptive(adaptive: AdaptiveLimiter) -> Self {
        ConcurrencyLimitLayer {
            limiter: adaptive.limiter().clone(),
            adaptive: Some(adaptive),
        }
    }
}

impl<S> Layer<S> for ConcurrencyLimitLayer {
    type Service = ConcurrencyLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ConcurrencyLimit::new(inner, self.limiter.clone()).with_adaptive(self.adaptive.clone())
    }
}
