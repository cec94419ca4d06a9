//! The layer that wraps a client in a [`ClientLimit`].

use std::marker::PhantomData;

use tower_layer::Layer;

use super::hold::{AtHead, ThroughBody};
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
#[derive(Debug)]
pub struct ClientLimitLayer<H = AtHead> {
    limiter: ConcurrencyLimiter,
    hold: PhantomData<fn() -> H>,
}

impl<H> Clone for ClientLimitLayer<H> {
    fn clone(&self) -> Self {
        ClientLimitLayer {
            limiter: self.limiter.clone(),
            hold: PhantomData,
        }
    }
}

impl ClientLimitLayer {
    /// A layer whose clients draw permits from `limiter` and give them back when the
    /// response head arrives.
    pub fn new(limiter: ConcurrencyLimiter) -> Self {
        ClientLimitLayer {
            limiter,
            hold: PhantomData,
        }
    }

    /// Keep each permit until the response body has been read to its end (or dropped), for
    /// clients that answer `http::Response` (hyper-util): a call counts as in flight for as
    /// long as the remote is still sending. The response body becomes a
    /// [`LimitBody`](crate::middleware::LimitBody).
    pub fn hold_through_body(self) -> ClientLimitLayer<ThroughBody> {
        ClientLimitLayer {
            limiter: self.limiter,
            hold: PhantomData,
        }
    }
}

impl<S, H> Layer<S> for ClientLimitLayer<H> {
    type Service = ClientLimit<S, H>;

    fn layer(&self, inner: S) -> Self::Service {
        ClientLimit::with_hold(inner, self.limiter.clone())
    }
}
