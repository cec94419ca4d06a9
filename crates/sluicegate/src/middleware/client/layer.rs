//! The layer that wraps a client in a [`ClientLimit`].

use tower_layer::Layer;

use super::service::ClientLimit;
use crate::concurrency::ConcurrencyLimiter;

/// Wraps HTTP clients (a hyper-util `Client`, any `Service<http::Request<B>>`) in a
/// [`ClientLimit`] sharing one [`ConcurrencyLimiter`].
///
/// ```
/// use sluicegate::concurrency::ConcurrencyLimiter;
/// use sluicegate::middleware::client::ClientLimitLayer;
///
/// // At most 8 calls to the partner API in flight, whatever the rest of the program does.
/// let partner_api = ConcurrencyLimiter::builder(8).max_queue(100).build().unwrap();
/// let layer = ClientLimitLayer::new(partner_api.clone());
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct ClientLimitLayer {
    limiter: ConcurrencyLimiter,
}

impl ClientLimitLayer {
    /// A layer whose clients draw permits from `limiter`.
    pub fn new(limiter: ConcurrencyLimiter) -> Self {
        ClientLimitLayer { limiter }
    }
}

impl<S> Layer<S> for ClientLimitLayer {
    type Service = ClientLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ClientLimit::new(inner, self.limiter.clone())
    }
}
