//! Global GCRA: the theoretical arrival time lives in Redis, one script call per decision.

use std::num::NonZeroU32;
use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use sluicegate::rate::gcra::{GcraParams, step};
use sluicegate::rate::{CheckError, Decision, Gcra, Quota};

use super::packed::{pack, unpack};
use super::{HybridGcra, Verdict, share};
use crate::store::key;
use crate::{Error, FailurePolicy, RedisStore, Source};

static SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("time.lua"),
        include_str!("gcra.lua"),
        include_str!("write.lua")
    ))
});

/// See [`GlobalGcra::MAX_HORIZON_NS`].
const MAX_HORIZON_NS: u64 = GlobalGcra::MAX_HORIZON_NS;

/// A GCRA rate limit shared by every instance that uses the same store and name.
///
/// Each decision is one `EVALSHA` (the script is sent again only after a `NOSCRIPT`): Redis
/// reads its own clock, runs the same step as [`sluicegate::rate::Gcra`], and the decision is
/// the same [`Decision`] the local limiter gives. When Redis does not answer within the
/// store's budget the limit's [`FailurePolicy`] decides.
///
/// # Examples
///
/// ```no_run
/// # use sluicegate_redis::{GlobalGcra, RedisStore};
/// # use sluicegate::rate::Quota;
/// # async fn demo(store: RedisStore) -> Result<(), sluicegate_redis::Error> {
/// let limit = GlobalGcra::builder(&store, "upstream", Quota::per_second(100)?).build()?;
/// let decision = limit.check().await;
/// println!("allowed: {}, retry after {:?}", decision.is_allowed(), decision.retry_after());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GlobalGcra {
    spec: Spec,
    key: String,
}

impl GlobalGcra {
    /// The largest `burst × interval` the scripts allow, 2^52 ns (about 52 days), for strict
    /// and hybrid limits alike; a builder refuses a longer one with [`Error::Range`]. The
    /// state is kept modulo 2^23 s (`time.lua`) and lies at most one horizon ahead of now, a
    /// span that must stay shorter than the modulus for the state to be read back without
    /// doubt. (The in-memory [`Gcra`] holds 2^62 ns: `GcraParams::MAX_HORIZON_NS`.)
    pub const MAX_HORIZON_NS: u64 = 1 << 52;
}

/// What every GCRA on Redis shares — strict, hybrid and keyed: the store, the quota in
/// script units, the failure policy and the local limit `L` it falls back to (this
/// instance's share: a [`Gcra`], or a keyed one for [`GlobalKeyedGcra`](super::GlobalKeyedGcra)).
/// The key is the limit's own (one per limit, or one per client).
#[derive(Debug)]
pub(super) struct Spec<L = Gcra> {
    pub(super) store: RedisStore,
    pub(super) params: GcraParams,
    pub(super) t_ns: u64,
    pub(super) burst: u32,
    /// `t_ns × burst`: how far ahead of now the state may run.
    pub(super) horizon_ns: u64,
    pub(super) quota: Quota,
    policy: FailurePolicy,
    pub(super) local: L,
}

/// Settings for a [`GlobalGcra`] or a [`HybridGcra`].
#[derive(Debug)]
#[must_use]
pub struct GcraBuilder<'a> {
    store: &'a RedisStore,
    name: String,
    quota: Quota,
    policy: FailurePolicy,
    instances: u32,
    lease: Option<Duration>,
}

impl GlobalGcra {
    /// A limit named `name` (unique per store prefix) with `quota`, shared through `store`.
    /// Strict ([`build`](GcraBuilder::build)) and hybrid
    /// ([`build_hybrid`](GcraBuilder::build_hybrid)) limits of one name share one bucket.
    pub fn builder<'a>(store: &'a RedisStore, name: &str, quota: Quota) -> GcraBuilder<'a> {
        GcraBuilder {
            store,
            name: name.to_owned(),
            quota,
            policy: FailurePolicy::default(),
            instances: 1,
            lease: None,
        }
    }

    /// Checks one request.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes may or may not have counted the request in
    /// Redis (the script may already have run); it never counts it twice.
    pub async fn check(&self) -> Decision {
        let verdict = self.decide(1).await;
        verdict.map_or_else(|_| self.spec.fresh(0), |v| v.decision)
    }

    /// Checks `n` requests at once: all are allowed or none.
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the burst.
    pub async fn check_n(&self, n: u32) -> Result<Decision, CheckError> {
        Ok(self.decide(n).await?.decision)
    }

    /// Like [`check_n`](Self::check_n), saying who decided and at what Redis time.
    ///
    /// # Errors
    ///
    /// As [`check_n`](Self::check_n).
    pub async fn decide(&self, n: u32) -> Result<Verdict, CheckError> {
        self.spec
            .strict(&self.key, n, |local| local.check_n(n))
            .await
    }
}

impl GlobalGcra {
    /// The quota, shared by every instance.
    pub fn quota(&self) -> Quota {
        self.spec.quota
    }
}

impl<L> Spec<L> {
    /// One strict decision on `key`: the script (one `EVALSHA`), or the failure policy, which
    /// asks `local` (this instance's share) under `Local`.
    pub(super) async fn strict(
        &self,
        key: &str,
        n: u32,
        local: impl FnOnce(&L) -> Result<Decision, CheckError>,
    ) -> Result<Verdict, CheckError> {
        // Impossible requests are refused here, without a round trip.
        let (fresh, _) = step(self.params, 0, 0, n)?;
        if self.params.denies_all() {
            return Ok(Verdict::new(fresh, Source::Redis));
        }
        let mut call = SCRIPT.key(key);
        call.arg(pack([self.t_ns * u64::from(n), self.horizon_ns]));
        let reply: Option<Vec<u8>> = self.store.call(&call).await;
        match reply.as_deref().and_then(unpack).as_deref() {
            Some(&[tat, sec, usec]) => Ok(Verdict::from_redis(self.step(tat, n)?, sec, usec)),
            _ => self.fall_back_to(n, local),
        }
    }

    /// The step the script took, from the state it read (ns after Redis's now): the same
    /// decision.
    pub(super) fn step(&self, tat: i64, n: u32) -> Result<Decision, CheckError> {
        let (tat, now) = (u64::try_from(tat).unwrap_or(0), 0);
        // A state beyond this instance's horizon (another instance wrote it with a longer
        // burst or period) is denied until it is back within reach: `step` handles it.
        Ok(step(self.params, tat, now, n)?.0)
    }

    /// A fresh bucket's answer to `n` (nothing consumed): allowed, or denied on a 0 quota.
    pub(super) fn fresh(&self, n: u32) -> Decision {
        step(self.params, 0, 0, n).map_or_else(|_| self.fresh(0), |(d, _)| d)
    }

    /// The failure policy's decision on `n`; under `Local`, `local`'s (this instance's share).
    pub(super) fn fall_back_to(
        &self,
        n: u32,
        local: impl FnOnce(&L) -> Result<Decision, CheckError>,
    ) -> Result<Verdict, CheckError> {
        let decision = match self.policy {
            FailurePolicy::Local => local(&self.local)?,
            FailurePolicy::Allow => self.fresh(0),
            FailurePolicy::Deny => {
                // Denied, to be retried when the store next asks Redis (before that a retry
                // gets the same denial; after it, Redis's answer, whatever the quota's
                // interval): a bucket state put so far ahead that `n` fits again exactly
                // then. At most 2^40 ns (18 min) ahead: a backoff is seconds.
                let full = self.t_ns * u64::from(self.burst);
                let own = self.t_ns.saturating_mul(u64::from(n.max(1)));
                let hint = self.store.retry_hint().as_nanos().min(1 << 40) as u64;
                let tat = full.saturating_sub(own).saturating_add(hint.max(1));
                step(self.params, tat, 0, n.max(1))?.0
            }
        };
        Ok(Verdict::new(decision, Source::Fallback(self.policy)))
    }
}

impl Spec {
    /// The failure policy's decision on `n`, from the pool-wide local share.
    pub(super) fn fall_back(&self, n: u32) -> Result<Verdict, CheckError> {
        self.fall_back_to(n, |local| local.check_n(n))
    }
}

impl GcraBuilder<'_> {
    crate::policy::failure_settings!();

    /// Hybrid mode only: how long leased tokens may be spent (default: 1/50 of the quota's
    /// period, so the overshoot bound is 2 % of the quota; see [`HybridGcra`]). At most 2^52
    /// ns (52 days): [`build_hybrid`](Self::build_hybrid) refuses a longer one.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// Builds a strict limit: one Redis call per decision.
    ///
    /// # Errors
    ///
    /// [`Error::Name`] for a name that cannot sit in a hash tag; [`Error::Range`] when
    /// `burst × interval` exceeds about 52 days.
    pub fn build(self) -> Result<GlobalGcra, Error> {
        Ok(GlobalGcra {
            key: self.key()?,
            spec: self.spec(Gcra::new)?,
        })
    }

    /// Builds a hybrid limit: tokens leased from Redis in batches and spent locally.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build); [`Error::Range`] for a zero lease time or one longer than
    /// 2^52 ns (about 52 days, the longest horizon too).
    pub fn build_hybrid(self) -> Result<HybridGcra, Error> {
        let lease = self.lease.unwrap_or(self.quota.period() / 50);
        if lease.is_zero() {
            return Err(Error::Range("the lease time must be longer than zero"));
        }
        // A lease is a deadline on the clock (`sent + lease`): `Duration::MAX` would panic
        // the first lease. No lease longer than the longest horizon means anything.
        if lease > Duration::from_nanos(MAX_HORIZON_NS) {
            return Err(Error::Range(
                "the lease time must be at most 2^52 ns (52 days)",
            ));
        }
        Ok(HybridGcra::new(self.spec(Gcra::new)?, self.key()?, lease))
    }

    pub(super) fn prefix(&self) -> &str {
        self.store.prefix()
    }

    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// The key of the limit's state, `{prefix:name}:tatf64`: the state modulo 2^23 s as one
    /// packed double (a new name each time the format changed, so that instances of two
    /// versions never misread each other's state during a rolling upgrade;
    /// docs/global-limits.md).
    fn key(&self) -> Result<String, Error> {
        key(self.store.prefix(), &self.name, "tatf64")
    }

    /// The quota in script units and the failure settings, with `local` made from this
    /// instance's share of the quota (for the `Local` policy).
    pub(super) fn spec<L>(&self, local: impl FnOnce(Quota) -> L) -> Result<Spec<L>, Error> {
        let q = self.quota;
        let t_ns = q.emission_interval().map_or(0, |t| {
            u64::try_from(t.as_nanos()).unwrap_or(u64::MAX).max(1)
        });
        if t_ns.saturating_mul(u64::from(q.burst())) > MAX_HORIZON_NS {
            return Err(Error::Range(
                "burst × interval must be at most 2^52 ns (52 days)",
            ));
        }
        let horizon_ns = t_ns * u64::from(q.burst());
        let share = match q.count() {
            0 => Quota::deny_all(),
            count => {
                let burst =
                    NonZeroU32::new(share(q.burst(), self.instances)).unwrap_or(NonZeroU32::MIN);
                Quota::new(share(count, self.instances), q.period())?.with_burst(burst)
            }
        };
        Ok(Spec {
            store: self.store.clone(),
            params: GcraParams::from_quota(&q),
            t_ns,
            burst: q.burst(),
            horizon_ns,
            quota: q,
            policy: self.policy,
            local: local(share),
        })
    }
}
