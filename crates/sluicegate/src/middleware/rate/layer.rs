//! The layer that wraps an HTTP service in a [`RateLimit`].

use std::sync::Arc;

use tower_layer::Layer;

use super::key::Global;
use super::service::{RateLimit, Settings};
use crate::http::RejectionMapping;

/// Wraps HTTP services in a [`RateLimit`] asking one rate limiter `C` (share it between
/// routes by giving each layer the same `Arc`).
///
/// Global by default; [`keyed_by`](Self::keyed_by) counts per client instead.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use sluicegate::middleware::rate::{PeerIp, RateCheck, RateLimitLayer};
/// use sluicegate::rate::Decision;
///
/// struct AllowAll;
/// impl<K> RateCheck<K> for AllowAll {
///     fn check(&self, _: &K) -> Decision {
///         Decision::allow(u32::MAX, u32::MAX, Duration::ZERO)
///     }
/// }
///
/// let per_client = RateLimitLayer::new(Arc::new(AllowAll))
///     .keyed_by(PeerIp::new())
///     .policy_name("per-client");
/// # let _ = per_client;
/// ```
#[derive(Clone, Debug)]
pub struct RateLimitLayer<C, X = Global> {
    check: C,
    extractor: X,
    settings: Arc<Settings>,
}

impl<C> RateLimitLayer<C> {
    /// A global limit: every request asks `check` with the key `()`. Policy name
    /// `"default"`, default [`RejectionMapping`], `RateLimit` headers on every response.
    pub fn new(check: C) -> Self {
        RateLimitLayer {
            check,
            extractor: Global,
            settings: Arc::new(Settings {
                policy: "default".to_owned(),
                mapping: RejectionMapping::default(),
                headers_when_allowed: true,
            }),
        }
    }
}

impl<C, X> RateLimitLayer<C, X> {
    /// Counts per key found by `extractor` (client IP, a header, a closure).
    pub fn keyed_by<Y>(self, extractor: Y) -> RateLimitLayer<C, Y> {
        RateLimitLayer {
            check: self.check,
            extractor,
            settings: self.settings,
        }
    }

    /// The policy name in the `RateLimit` and `RateLimit-Policy` headers.
    pub fn policy_name(mut self, name: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.settings).policy = name.into();
        self
    }

    /// How rejections are answered (statuses, body).
    pub fn mapping(mut self, mapping: RejectionMapping) -> Self {
        Arc::make_mut(&mut self.settings).mapping = mapping;
        self
    }

    /// Whether allowed responses carry the `RateLimit` headers too (default `true`), so
    /// clients can slow down before they are refused.
    pub fn headers_when_allowed(mut self, on: bool) -> Self {
        Arc::make_mut(&mut self.settings).headers_when_allowed = on;
        self
    }
}

impl<S, C: Clone, X: Clone> Layer<S> for RateLimitLayer<C, X> {
    type Service = RateLimit<S, C, X>;

    fn layer(&self, inner: S) -> Self::Service {
        RateLimit::new(
            inner,
            self.check.clone(),
            self.extractor.clone(),
            self.settings.clone(),
        )
    }
}
