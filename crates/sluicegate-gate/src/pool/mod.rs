//! Pools: the limited resources. Each is an upstream with its concurrency limit and queue,
//! its rates, and its counters; routes name them, and many routes may share one.

mod admission;
mod global;
mod handover;
mod limit;
mod rate;
mod refusals;
mod stats;
mod tunnels;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sluicegate::rate::Gcra;

pub use admission::Admission;
pub use global::{Global, GlobalPerKey, GlobalRate, Store, TlsFiles};
pub use handover::{Counts, PoolCounts, Retired, hand_over};
pub use limit::{Bounds, Held, Limit};
pub use rate::{PerKey, check_global, global_policy};
pub use refusals::{RefusalLog, SUMMARY_EVERY};
pub use stats::{BUCKETS, Histogram, Outcome, Stats};
pub use tunnels::{TunnelEnd, Tunnels};

use crate::config::{self, UpstreamUrl};

/// One pool as the proxy uses it. Immutable: a reload or an admin change builds a new one
/// that shares the old one's limiter, rate state and counters where the settings allow
/// ([`Pool::prepare`], then [`Prepared::commit`] once every pool of the change prepared).
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
    /// Shared by every pool built on this limiter: while one is alive, a request routed to
    /// it may still come to the limiter (after a hand-over too, so it is not let go).
    limiter_users: Arc<()>,
    /// The pool-wide rate, if any and local.
    pub rate: Option<Arc<Gcra>>,
    /// The pool-wide rate, if any and global (kept in the store).
    pub global_rate: Option<Arc<GlobalRate>>,
    /// The store, for a global pool.
    pub store: Option<Store>,
    /// The per-client rate, if any and local.
    pub per_key: Option<PerKey>,
    /// The per-client rate, if any and global (kept in the store).
    pub global_per_key: Option<Arc<GlobalPerKey>>,
    /// `RateLimit` policy names: the pool-wide one and the per-client one.
    pub policy_names: (String, String),
    /// Counters and histograms, kept across reloads.
    pub stats: Arc<Stats>,
    /// Closed through the admin API (kept across reloads; only `open` undoes it).
    pub closed_by_admin: Arc<AtomicBool>,
    /// The settings it was built from.
    pub config: config::Pool,
    /// The read-ahead settings in force when it was built, and the gate-wide count.
    pub buffering: Arc<crate::buffers::Buffering>,
}

impl Pool {
    /// Gauges and counters over the pool's limiter and the old ones still busy after a
    /// change of queue settings (and, for a global pool, its queue for the store's slots).
    pub fn counts(&self) -> PoolCounts {
        let mut c = self.stats.retired.pool_counts(self.limit.limiter());
        c.queued += self.limit.global().map_or(0, |g| g.global.queued());
        c
    }

    /// Whether nothing runs or waits on the pool: on its limiter (bypasses included), on
    /// the old ones still busy after a change of queue settings, or for the store's slots.
    pub fn idle(&self) -> bool {
        handover::empty(&self.limit.limiter().snapshot())
            && self.limit.global().is_none_or(|g| g.global.queued() == 0)
            && self.stats.retired.idle()
    }

    /// Prepares the pool `cfg` asks for, carrying over from `old` (the pool of the same name
    /// before the change, or the removed one it carries on under a new name: see
    /// `State::build`) whatever can be kept without dropping a request.
    ///
    /// Everything that can fail is done here, and nothing that the live pools would see: the
    /// new limiter, global limits and rates are built, but `old`'s limiter, rates and closed
    /// state are changed only by [`Prepared::commit`], once every pool of the change has
    /// prepared, so that a refused change leaves the pools in force as they were.
    ///
    /// # Errors
    ///
    /// A limiter or a global rate that cannot be built, as text.
    pub fn prepare(
        cfg: &config::Pool,
        old: Option<&Pool>,
        store: Option<&Store>,
        buffering: &Arc<crate::buffers::Buffering>,
    ) -> Result<Prepared, String> {
        let any_store = store;
        let store = (cfg.scope == config::Scope::Global)
            .then_some(store)
            .flatten();
        // Global limits are rebuilt on a new store, or for new failure settings.
        // The same connection, not only the same settings: a reload makes a new one for TLS
        // files renewed in place.
        let same_store = |old: &Pool| {
            let same = match (old.store.as_ref(), store) {
                (Some(a), Some(b)) => a.is(b),
                (None, None) => true,
                _ => false,
            };
            same && old.config.on_redis_failure == cfg.on_redis_failure
        };
        let stats: Arc<Stats> = old.map_or_else(Default::default, |o| o.stats.clone());
        // Each arm that keeps the old limiter keeps its users.
        let mut limiter_users = old.map(|o| o.limiter_users.clone());
        let too_large = |max: usize| {
            (max > sluicegate::concurrency::ConcurrencyLimiter::MAX_PERMITS).then(|| {
                format!(
                    "pool `{}`: `max_concurrency` must be at most {}, not {max}",
                    cfg.name.get_ref(),
                    sluicegate::concurrency::ConcurrencyLimiter::MAX_PERMITS
                )
            })
        };
        let (limit, change) = match old {
            Some(old) if same_limiter(&old.config, cfg) && same_store(old) => {
                match (&old.limit, cfg.max_concurrency, store) {
                    (Limit::Static(l), Some(max), _) => {
                        // `set_max` refuses only this: checked now, applied at the commit.
                        too_large(max).map_or(Ok(()), Err)?;
                        (old.limit.clone(), Change::SetMax(l.clone(), max))
                    }
                    // The leases live in the store under the pool's name: a new limit on the
                    // same name counts the old one's permits.
                    (Limit::Global(g), Some(max), Some(store))
                        if old.config.max_concurrency != Some(max) =>
                    {
                        too_large(max).map_or(Ok(()), Err)?;
                        let global = Global::build(store, cfg, Some(g.shell.clone()))?;
                        (Limit::Global(global), Change::SetMax(g.shell.clone(), max))
                    }
                    _ => (old.limit.clone(), Change::None),
                }
            }
            Some(old) => {
                let new = Limit::build_replacing(cfg, store, &old.limit)?;
                let users = Arc::downgrade(&old.limiter_users);
                limiter_users = None;
                let change = Change::HandOver {
                    old: old.limit.clone(),
                    new: new.limiter().clone(),
                    users,
                };
                (new, change)
            }
            None => (Limit::build(cfg, store)?, Change::None),
        };
        let quota = cfg.rate.map(|r| r.quota(cfg.burst));
        let (rate, global_rate) = match (quota, store) {
            (None, _) => (None, None),
            (Some(q), None) => (
                Some(rate::global(q, old.and_then(|o| o.rate.as_ref()))),
                None,
            ),
            (Some(q), Some(store)) => {
                let kept = old.filter(|o| {
                    same_store(o)
                        && o.config.rate == cfg.rate
                        && o.config.burst == cfg.burst
                        && o.config.mode == cfg.mode
                });
                let g = match kept.and_then(|o| o.global_rate.clone()) {
                    Some(g) => g,
                    None => Arc::new(GlobalRate::build(store, cfg, q)?),
                };
                (None, Some(g))
            }
        };
        // A global per-client rate needs the store whatever the pool's scope.
        let (per_key, global_per_key) = match (&cfg.per_key_rate, any_store) {
            (Some(k), Some(s)) if k.is_global() => {
                let old = old.and_then(|o| o.global_per_key.as_ref());
                (None, Some(GlobalPerKey::keep_or_build(old, s, cfg, k)?))
            }
            (Some(k), _) => (
                Some(PerKey::build(k, old.and_then(|o| o.per_key.as_ref()))),
                None,
            ),
            (None, _) => (None, None),
        };
        let name = cfg.name.get_ref().clone();
        Ok(Prepared {
            pool: Pool {
                policy_names: (name.clone(), format!("{name}-per-client")),
                name,
                upstream: cfg.upstream.clone(),
                upstream_timeout: cfg.upstream_timeout.0,
                limit,
                limiter_users: limiter_users.unwrap_or_default(),
                rate: rate.as_ref().map(|(g, _)| g.clone()),
                global_rate,
                store: store.cloned(),
                per_key: per_key.as_ref().map(|(k, _)| k.clone()),
                global_per_key,
                stats,
                closed_by_admin: old.map_or_else(Default::default, |o| o.closed_by_admin.clone()),
                config: cfg.clone(),
                buffering: buffering.clone(),
            },
            change,
            rate_quota: rate.and_then(|(_, q)| q),
            per_key_quota: per_key.and_then(|(_, q)| q),
        })
    }

    /// Whether the kill switch is on: a static limit of 0.
    pub fn killed(&self) -> bool {
        self.config.adaptive.is_none() && self.config.max_concurrency == Some(0)
    }

    /// Turns away every request waiting for a slot (`503` `closed`), as a close does, and
    /// any that comes later: the drain does it when its grace period is over.
    pub fn turn_away_waiting(&self) {
        self.limit.limiter().close();
        self.stats.retired.set_open(false);
        self.stats.closing.notify_waiters();
    }

    /// Closes the pool while it is closed through the admin API or killed, and opens it
    /// otherwise; the old limiters still busy after a change of queue settings follow.
    ///
    /// A kill switch that only paused the limiter would let every request wait its whole
    /// queue timeout; closed, the pool answers `503` (`closed`) at once, turns away what
    /// waits, and lets what runs finish.
    pub fn apply_closed(&self) {
        let closed = self.closed_by_admin.load(Ordering::Relaxed) || self.killed();
        let limiter = self.limit.limiter();
        if closed {
            limiter.close();
        } else {
            limiter.open();
        }
        self.stats.retired.set_open(!closed);
        self.stats.closing.notify_waiters();
    }
}

/// A pool [`Pool::prepare`]d for a change and not yet in force: what it shares with the pool
/// in force (limiter, rates, counters) is as it was until [`commit`](Self::commit).
#[derive(Debug)]
pub struct Prepared {
    pool: Pool,
    change: Change,
    /// The new quota of the pool-wide rate kept from the old pool, when it changes.
    rate_quota: Option<sluicegate::rate::Quota>,
    /// The new quota of the per-client rate kept from the old pool.
    per_key_quota: Option<sluicegate::rate::Quota>,
}

/// What the commit does to the old pool's limiter.
#[derive(Debug)]
enum Change {
    /// Nothing: a new pool, or the old limiter kept as it is.
    None,
    /// The old limiter (a static one, or a global pool's shell) kept with a new limit.
    SetMax(sluicegate::concurrency::ConcurrencyLimiter, usize),
    /// The old limiter handed over to the new one (new queue settings, another kind of
    /// limit).
    HandOver {
        old: Limit,
        new: sluicegate::concurrency::ConcurrencyLimiter,
        users: std::sync::Weak<()>,
    },
}

impl Prepared {
    /// Puts the pool in force: sets the kept limiter's new limit (and shares it with the old
    /// limiters still busy), or hands the old limiter over to the new one; sets the kept
    /// rates' new quotas; closes or opens the pool as it should be. It cannot fail: call it
    /// once every pool of the change has prepared.
    pub fn commit(self) -> Pool {
        let Prepared {
            pool,
            change,
            rate_quota,
            per_key_quota,
        } = self;
        let stats = &pool.stats;
        match change {
            Change::None => {}
            Change::SetMax(l, max) => {
                // The old limiters' waiters ask for slots first: a raise serves them before
                // the new limiter's own.
                if max > l.max() {
                    stats.retired.rebalance();
                }
                // `prepare` checked the bound, the only thing `set_max` refuses.
                let _ = l.set_max(max);
                // Old limiters still busy share the new limit at once.
                stats.retired.rebalance();
            }
            Change::HandOver { old, new, users } => {
                // From here the hand-over sets the old limit (to the slots it may fill): an
                // adaptive algorithm that set it again as each old request ended started
                // waiters beyond the pool's limit (3 running under 2).
                if let Limit::Adaptive(a, _) = &old {
                    a.detach();
                }
                hand_over(old.limiter(), &new, users, stats);
            }
        }
        if let (Some(q), Some(g)) = (rate_quota, &pool.rate) {
            g.set_quota(q);
        }
        if let (Some(q), Some(k)) = (per_key_quota, &pool.per_key) {
            k.set_quota(q);
        }
        pool.apply_closed();
        pool
    }
}

/// Whether `new` can keep `old`'s limiter: same queue settings, and both static (the limit
/// changes through `set_max`) or both the same adaptive algorithm and bounds.
fn same_limiter(old: &config::Pool, new: &config::Pool) -> bool {
    let queue = old.max_queue == new.max_queue
        && old.queue_timeout == new.queue_timeout
        && old.queue_order == new.queue_order
        && old.predictive == new.predictive
        && old.scope == new.scope;
    let kind = match (&old.adaptive, &new.adaptive) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.algorithm == b.algorithm && a.initial == b.initial && a.min == b.min && a.max == b.max
        }
        _ => false,
    };
    queue && kind
}
