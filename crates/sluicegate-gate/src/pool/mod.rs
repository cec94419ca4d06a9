//! Pools: the limited resources. Each is an upstream with its concurrency limit and queue,
//! its rates, and its counters; routes name them, and many routes may share one.

mod limit;
mod rate;
mod stats;

use std::sync::Arc;
use std::time::Duration;

use sluicegate::rate::Gcra;

pub use limit::{Held, Limit, hand_over};
pub use rate::{PerKey, check_global, global_policy};
pub use stats::{BUCKETS, Histogram, Outcome, Stats};

use crate::config::{self, UpstreamUrl};

/// One pool as the proxy uses it. Immutable: a reload or an admin change builds a new one
/// that shares the old one's limiter, rate state and counters where the settings allow.
#[derive(Debug)]
pub struct Pool {
    /// The pool's name.
    pub name: String,
    /// Where its requests go.
    pub upstream: UpstreamUrl,
    /// Longest wait for the upstream's response head.
    pub upstream_timeout: Duration,
    /// The concurrency limit.
    pub limit: Limit,
    /// The pool-wide rate, if any.
    pub rate: Option<Arc<Gcra>>,
    /// The per-client rate, if any.
    pub per_key: Option<PerKey>,
    /// `RateLimit` policy names: the pool-wide one and the per-client one.
    pub policy_names: (String, String),
    /// Counters and histograms, kept across reloads.
    pub stats: Arc<Stats>,
    /// The settings it was built from.
    pub config: config::Pool,
}

impl Pool {
    /// Builds the pool `cfg` asks for, carrying over from `old` (the pool of the same name
    /// before the change) whatever can be kept without dropping a request.
    ///
    /// # Errors
    ///
    /// A limiter that cannot be built, as text.
    pub fn build(cfg: &config::Pool, old: Option<&Pool>) -> Result<Pool, String> {
        let limit = match old {
            Some(old) if same_limiter(&old.config, cfg) => {
                if let (Limit::Static(l), Some(max)) = (&old.limit, cfg.max_concurrency) {
                    l.set_max(max).map_err(|e| e.to_string())?;
                }
                old.limit.clone()
            }
            Some(old) => {
                let new = Limit::build(cfg)?;
                hand_over(old.limit.limiter(), new.limiter());
                new
            }
            None => Limit::build(cfg)?,
        };
        let rate = cfg
            .rate
            .map(|r| rate::global(r.quota(cfg.burst), old.and_then(|o| o.rate.as_ref())));
        let per_key = cfg
            .per_key_rate
            .as_ref()
            .map(|k| PerKey::build(k, old.and_then(|o| o.per_key.as_ref())));
        let name = cfg.name.get_ref().clone();
        Ok(Pool {
            policy_names: (name.clone(), format!("{name}-per-client")),
            name,
            upstream: cfg.upstream.clone(),
            upstream_timeout: cfg.upstream_timeout.0,
            limit,
            rate,
            per_key,
            stats: old.map_or_else(Default::default, |o| o.stats.clone()),
            config: cfg.clone(),
        })
    }
}

/// Whether `new` can keep `old`'s limiter: same queue settings, and both static (the limit
/// changes through `set_max`) or both the same adaptive algorithm and bounds.
fn same_limiter(old: &config::Pool, new: &config::Pool) -> bool {
    let queue = old.max_queue == new.max_queue
        && old.queue_timeout == new.queue_timeout
        && old.queue_order == new.queue_order
        && old.predictive == new.predictive;
    let kind = match (&old.adaptive, &new.adaptive) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.algorithm == b.algorithm && a.initial == b.initial && a.min == b.min && a.max == b.max
        }
        _ => false,
    };
    queue && kind
}
