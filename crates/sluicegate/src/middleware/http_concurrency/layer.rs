//! The layer that wraps an HTTP service in an [`HttpConcurrencyLimit`].

use std::sync::Arc;

use tower_layer::Layer;

use super::service::{HttpConcurrencyLimit, Settings};
use crate::adaptive::AdaptiveLimiter;
use crate::concurrency::ConcurrencyLimiter;
use crate::http::RejectionMapping;

/// Wraps HTTP services in an [`HttpConcurrencyLimit`] sharing one [`ConcurrencyLimiter`].
///
/// Give the same limiter (a clone) to the layers of several routes and they share one limit:
/// limit the resource, not the route.
///
/// ```
/// use axum::{Router, routing::get};
/// use sluicegate::concurrency::ConcurrencyLimiter;
/// use sluicegate::middleware::http_concurrency::HttpConcurrencyLimitLayer;
///
/// let database = ConcurrencyLimiter::builder(4).max_queue(50).build().unwrap();
/// let app: Router = Router::new()
///     .route("/report", get(|| async { "report" }))
///     .route("/export", get(|| async { "export" }))
///     .route_layer(HttpConcurrencyLimitLayer::new(database));
/// # let _ = app;
/// ```
#[derive(Clone, Debug)]
pub struct HttpConcurrencyLimitLayer {
    settings: Arc<Settings>,
}

impl HttpConcurrencyLimitLayer {
    /// A layer drawing permits from `limiter`, answering rejections with the default
    /// [`RejectionMapping`] and holding each permit until the response body is done.
    pub fn new(limiter: ConcurrencyLimiter) -> Self {
        HttpConcurrencyLimitLayer {
            settings: Arc::new(Settings {
                limiter,
                mapping: RejectionMapping::default(),
                hold_through_body: true,
                adaptive: None,
            }),
        }
    }

    /// A layer under an adaptive limit: each request is timed from `call` to the end of its
    /// response (body included, unless [`hold_through_body(false)`](Self::hold_through_body))
    /// and fed to `adaptive`'s algorithm, which moves the limit. `503` / `504` answers count
    /// as dropped, other `5xx` are ignored (a bug is not congestion), the rest as successes;
    /// a request cancelled or a body dropped early is ignored.
    pub fn adaptive(adaptive: AdaptiveLimiter) -> Self {
        let mut layer = Self::new(adaptive.limiter().clone());
        Arc::make_mut(&mut layer.settings).adaptive = Some(adaptive);
        layer
    }

    /// How rejections are answered (statuses, body).
    pub fn mapping(mut self, mapping: RejectionMapping) -> Self {
        Arc::make_mut(&mut self.settings).mapping = mapping;
        self
    }

    /// Whether the permit is held until the response body has been streamed (default
    /// `true`: a streaming response still works while its body flows). With `false` it is
    /// released as soon as the response head is ready.
    pub fn hold_through_body(mut self, on: bool) -> Self {
        Arc::make_mut(&mut self.settings).hold_through_body = on;
        self
    }
}

impl<S> Layer<S> for HttpConcurrencyLimitLayer {
    type Service = HttpConcurrencyLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HttpConcurrencyLimit::with_settings(inner, self.settings.clone())
    }
}
