//! A pool's concurrency limit, static or adaptive, built from its config; and the permit a
//! forwarded request holds until the upstream is done with it.

use std::time::Duration;

use sluicegate::adaptive::{
    AdaptiveLimiter, AdaptivePermit, Aimd, AimdConfig, Explanation, Gradient2, Gradient2Config,
    LittlesLaw, LittlesLawConfig, Outcome, Vegas, VegasConfig,
};
use sluicegate::concurrency::{ConcurrencyLimiter, OwnedPermit, QueueOrder, Rejected};

use sluicegate_redis::GlobalPermit;

use super::global::{Global, Store};
use crate::config::{self, Algorithm};

/// A pool's concurrency limit.
#[derive(Clone, Debug)]
pub enum Limit {
    /// A limit set by config or the admin API.
    Static(ConcurrencyLimiter),
    /// A limit that follows the upstream's latency, within its bounds.
    Adaptive(AdaptiveLimiter, Bounds),
    /// A limit kept in the store, shared with other gates.
    Global(Global),
}

impl Limit {
    /// Builds the limit `pool` asks for.
    ///
    /// # Errors
    ///
    /// The limiter's refusal, as text (the config check rules most of them out).
    pub fn build(pool: &config::Pool, store: Option<&Store>) -> Result<Limit, String> {
        Limit::build_from(pool, store, None)
    }

    /// Builds the limit `pool` asks for in place of `old`. An adaptive limit that replaces an
    /// adaptive one (a reload that changed its queue settings, bounds or algorithm) starts
    /// from the limit the old one had learnt (the limit in force: in a probe, the probe's),
    /// within the new bounds, not from `initial`:
    /// under load a restart at 20 queued and turned callers away for seconds (review 28,
    /// finding 3).
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build).
    pub fn build_replacing(
        pool: &config::Pool,
        store: Option<&Store>,
        old: &Limit,
    ) -> Result<Limit, String> {
        let learnt = match old {
            Limit::Adaptive(a, _) => Some(a.limit()),
            Limit::Static(_) | Limit::Global(_) => None,
        };
        Limit::build_from(pool, store, learnt)
    }

    fn build_from(
        pool: &config::Pool,
        store: Option<&Store>,
        learnt: Option<usize>,
    ) -> Result<Limit, String> {
        if pool.scope == config::Scope::Global {
            let store = store.ok_or_else(|| {
                format!(
                    "pool `{}` is global but the gate has no store",
                    pool.name.get_ref()
                )
            })?;
            return Global::build(store, pool, None).map(Limit::Global);
        }
        let order = match pool.queue_order {
            config::QueueOrder::Fifo => QueueOrder::Fifo,
            config::QueueOrder::Lifo => QueueOrder::Lifo,
        };
        let builder = |max: usize| {
            ConcurrencyLimiter::builder(max)
                .max_queue(pool.max_queue)
                .queue_timeout(pool.queue_timeout.0)
                .order(order)
                .predictive(pool.predictive)
                .build()
                .map_err(|e| format!("pool `{}`: {e}", pool.name.get_ref()))
        };
        match (&pool.adaptive, pool.max_concurrency) {
            (Some(a), _) => {
                let bounds = a.in_force();
                let start = learnt.map_or(bounds.initial, |l| l.clamp(bounds.min, bounds.max));
                let limiter = builder(start)?;
                Ok(Limit::Adaptive(
                    adaptive(limiter, a.algorithm, bounds, start),
                    bounds,
                ))
            }
            (None, max) => Ok(Limit::Static(builder(max.unwrap_or(0))?)),
        }
    }

    /// The limiter itself (snapshots, close, open, set_max).
    pub fn limiter(&self) -> &ConcurrencyLimiter {
        match self {
            Limit::Static(l) => l,
            Limit::Adaptive(a, _) => a.limiter(),
            Limit::Global(g) => &g.shell,
        }
    }

    /// The limit kept in the store, for a global pool.
    pub fn global(&self) -> Option<&Global> {
        match self {
            Limit::Global(g) => Some(g),
            _ => None,
        }
    }

    /// Starts the work of a granted permit (an adaptive limit starts timing it).
    pub fn hold(&self, permit: OwnedPermit) -> Held {
        match self {
            Limit::Static(_) | Limit::Global(_) => Held::Plain(permit),
            Limit::Adaptive(a, _) => Held::Adaptive(a.wrap(permit)),
        }
    }

    /// A request found no slot free at its first try: it waits (`None`) or was refused at
    /// once (`Some`). An adaptive limit counts it as demand held back (a Little's-law start
    /// leaps to it) and, refused, as turned away — without a queue, the only demand above the
    /// limit it can see — unless the pool is closed
    /// ([`AdaptiveLimiter::first_try_failed`](sluicegate::adaptive::AdaptiveLimiter::first_try_failed));
    /// others ignore it.
    pub fn first_try_failed(&self, refused: Option<&Rejected>) {
        if let Limit::Adaptive(a, _) = self {
            a.first_try_failed(refused);
        }
    }

    /// The pool algorithm's name (`static` for a static limit).
    pub fn algorithm(&self) -> &'static str {
        match self {
            Limit::Static(_) => "static",
            Limit::Global(_) => "global",
            Limit::Adaptive(a, _) => a.algorithm_name(),
        }
    }

    /// Why an adaptive limit sits where it does, as its algorithm explains it
    /// ([`AdaptiveLimiter::explain`]: a brief hold of the lock the samples take); `None` for
    /// the others.
    pub fn explain(&self) -> Option<Explanation> {
        match self {
            Limit::Adaptive(a, _) => Some(a.explain()),
            _ => None,
        }
    }

    /// An adaptive limit's bounds; `None` for the others.
    pub fn bounds(&self) -> Option<Bounds> {
        match self {
            Limit::Adaptive(_, b) => Some(*b),
            _ => None,
        }
    }
}

/// An adaptive limit's bounds as in force: the config's, with the algorithm's defaults filled
/// in (`/status` and `/metrics` show them, so that a limit at its floor or its ceiling reads
/// as such: review 27, finding 7).
pub use crate::config::AdaptiveBounds as Bounds;

/// The adaptive limiter over `limiter`: `algorithm` within `bounds` (from
/// [`config::Adaptive::in_force`]), starting at `start` (within them).
fn adaptive(
    limiter: ConcurrencyLimiter,
    algorithm: Algorithm,
    bounds: Bounds,
    start: usize,
) -> AdaptiveLimiter {
    let Bounds { min, max, .. } = bounds;
    let initial = start;
    match algorithm {
        Algorithm::Littles => {
            let c = LittlesLawConfig {
                initial,
                min,
                max,
                ..LittlesLawConfig::default()
            };
            AdaptiveLimiter::new(limiter, LittlesLaw::new(c))
        }
        Algorithm::Gradient2 => {
            let c = Gradient2Config {
                initial,
                min,
                max,
                ..Gradient2Config::default()
            };
            AdaptiveLimiter::new(limiter, Gradient2::new(c))
        }
        Algorithm::Aimd => {
            let c = AimdConfig {
                initial,
                min,
                max,
                ..AimdConfig::default()
            };
            AdaptiveLimiter::new(limiter, Aimd::new(c))
        }
        Algorithm::Vegas => {
            let c = VegasConfig {
                initial,
                max,
                ..VegasConfig::default()
            };
            AdaptiveLimiter::new(limiter, Vegas::new(c))
        }
    }
}

/// The permit of a forwarded request, held until the upstream exchange ends.
#[derive(Debug)]
pub enum Held {
    /// A static pool's permit, or a bypass.
    Plain(OwnedPermit),
    /// An adaptive pool's permit, timed.
    Adaptive(AdaptivePermit),
    /// A global pool's permit and its slot in the local limiter in front.
    Global(GlobalPermit, OwnedPermit),
}

impl Held {
    /// Releases the permit; an adaptive limit learns from `outcome`.
    pub fn finish(self, outcome: Outcome) {
        match self {
            Held::Plain(p) => drop(p),
            Held::Global(g, p) => drop((g, p)),
            Held::Adaptive(p) => p.finish(outcome),
        }
    }

    /// Leaves `time` out of the latency an adaptive limit learns from (the client's, not
    /// the upstream's: see [`AdaptivePermit::exclude`]).
    pub fn exclude(&mut self, time: Duration) {
        if let Held::Adaptive(p) = self {
            p.exclude(time);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(adaptive: &str) -> config::Pool {
        let text = format!(
            "[[pools]]\nname = \"p\"\nupstream = \"http://127.0.0.1:1\"\n[pools.adaptive]\n{adaptive}\n[[routes]]\npool = \"p\"\n"
        );
        config::parse(&text, "t").unwrap().pools.remove(0)
    }

    #[tokio::test]
    async fn a_ceiling_below_the_default_floor_and_initial_is_obeyed() {
        for alg in ["littles", "gradient2", "vegas", "aimd"] {
            let p = pool(&format!("algorithm = \"{alg}\"\nmax = 5"));
            let limit = Limit::build(&p, None).unwrap();
            assert!(
                limit.limiter().max() <= 5,
                "{alg}: {}",
                limit.limiter().max()
            );
            assert_ne!(limit.algorithm(), "static");
        }
    }
}
