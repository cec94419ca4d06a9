//! Global GCRA: the theoretical arrival time lives in Redis, one script call per decision.

use std::sync::LazyLock;

use redis::Script;
use sluicegate::rate::gcra::{GcraParams, step};
use sluicegate::rate::{CheckError, Decision, Gcra, Quota};

use super::{Verdict, share};
use crate::store::key;
use crate::{Error, FailurePolicy, RedisStore, Source};

static SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("gcra.lua")));

/// The largest `burst × interval` the script keeps exact (2^52 ns, about 52 days).
const MAX_HORIZON_NS: u64 = 1 << 52;

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
/// let limit = GlobalGcra::builder(&store, "upstream", Quota::per_second(100)).build()?;
/// let decision = limit.check().await;
/// println!("allowed: {}, retry after {:?}", decision.is_allowed(), decision.retry_after());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GlobalGcra {
    store: RedisStore,
    key: String,
    params: GcraParams,
    t_ns: u64,
    burst: u32,
    policy: FailurePolicy,
    local: Gcra,
}

/// Settings for a [`GlobalGcra`].
#[derive(Debug)]
#[must_use]
pub struct GcraBuilder<'a> {
    store: &'a RedisStore,
    name: String,
    quota: Quota,
    policy: FailurePolicy,
    instances: u32,
}

impl GlobalGcra {
    /// A limit named `name` (unique per store prefix) with `quota`, shared through `store`.
    pub fn builder<'a>(store: &'a RedisStore, name: &str, quota: Quota) -> GcraBuilder<'a> {
        GcraBuilder {
            store,
            name: name.to_owned(),
            quota,
            policy: FailurePolicy::default(),
            instances: 1,
        }
    }

    /// Checks one request.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes may or may not have counted the request in
    /// Redis (the script may already have run); it never counts it twice.
    pub async fn check(&self) -> Decision {
        match self.check_n(1).await {
            Ok(d) => d,
            // Unreachable: a quota that allows anything allows one at a time.
            Err(_) => step(self.params, 0, 0, 0).map_or_else(|_| unreachable!(), |(d, _)| d),
        }
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
        // Impossible requests are refused here, without a round trip.
        let (fresh, _) = step(self.params, 0, 0, n)?;
        if self.params.denies_all() {
            return Ok(Verdict::new(fresh, Source::Redis));
        }
        let mut conn = self.store.connection();
        let mut call = SCRIPT.key(&self.key);
        call.arg(self.t_ns).arg(self.burst).arg(n);
        let reply: Option<Vec<i64>> = self.store.call(call.invoke_async(&mut conn)).await;
        match reply.as_deref() {
            Some(&[allowed, tat, now, sec, usec]) => {
                let now = u64::try_from(now).unwrap_or(0);
                // A state beyond this instance's horizon (another instance wrote it with a
                // longer burst or period) reads as a full bucket here.
                let horizon = self.t_ns * u64::from(self.burst);
                let tat = u64::try_from(tat).unwrap_or(0).min(now + horizon);
                let (decision, _) = step(self.params, tat, now, n)?;
                debug_assert_eq!(decision.is_allowed(), allowed == 1, "script and step agree");
                Ok(Verdict::from_redis(decision, sec, usec))
            }
            _ => self.fall_back(n),
        }
    }

    fn fall_back(&self, n: u32) -> Result<Verdict, CheckError> {
        let decision = match self.policy {
            FailurePolicy::Local => self.local.check_n(n)?,
            FailurePolicy::Allow => step(self.params, 0, 0, 0)?.0,
            FailurePolicy::Deny => {
                let full = self.t_ns * u64::from(self.burst);
                step(self.params, full, 0, n.max(1))?.0
            }
        };
        Ok(Verdict::new(decision, Source::Fallback(self.policy)))
    }
}

impl GcraBuilder<'_> {
    /// What to decide while Redis cannot answer (default [`FailurePolicy::Local`]).
    pub fn on_failure(mut self, policy: FailurePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How many instances share the limit: the [`Local`](FailurePolicy::Local) fallback
    /// allows `1 / instances` of the quota (default 1).
    pub fn instances(mut self, instances: u32) -> Self {
        self.instances = instances.max(1);
        self
    }

    /// Builds the limit.
    ///
    /// # Errors
    ///
    /// [`Error::Name`] for a name that cannot sit in a hash tag; [`Error::Range`] when
    /// `burst × interval` exceeds about 52 days.
    pub fn build(self) -> Result<GlobalGcra, Error> {
        let key = key(self.store.prefix(), &self.name, "gcra")?;
        let q = self.quota;
        let t_ns = q.emission_interval().map_or(0, |t| {
            u64::try_from(t.as_nanos()).unwrap_or(u64::MAX).max(1)
        });
        if t_ns.saturating_mul(u64::from(q.burst())) > MAX_HORIZON_NS {
            return Err(Error::Range(
                "burst × interval must be at most 2^52 ns (52 days)",
            ));
        }
        let local = match q.count() {
            0 => Quota::deny_all(),
            count => {
                let burst = std::num::NonZeroU32::new(share(q.burst(), self.instances))
                    .unwrap_or(std::num::NonZeroU32::MIN);
                Quota::new(share(count, self.instances), q.period())?.with_burst(burst)
            }
        };
        Ok(GlobalGcra {
            store: self.store.clone(),
            key,
            params: GcraParams::from_quota(&q),
            t_ns,
            burst: q.burst(),
            policy: self.policy,
            local: Gcra::new(local),
        })
    }
}
