//! The limit itself: a FIFO turnstile per instance in front of the leases in Redis.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use sluicegate::concurrency::ConcurrencyLimiter;

use super::AcquireError;
use super::permit::{GlobalPermit, Held, release};
use super::scripts::ACQUIRE;
use super::share::Share;
use crate::store::{Missed, Subscription, key};
use crate::{Error, FailurePolicy, RedisStore};

/// At most `max` permits at once across every instance that uses the same store and name.
///
/// A permit is a lease in Redis with a TTL: renewed (every TTL / 3) while held, released
/// when the [`GlobalPermit`] drops, and given back by Redis itself after the TTL when its
/// holder crashed. When all permits are out, callers wait in this instance's queue — FIFO,
/// at most `max_queue` of them, each at most `queue_timeout`, and a dropped `acquire` future
/// leaves the queue at once. A caller asks Redis at once while nobody waits; of the waiters,
/// only the first asks Redis again; it is woken by
/// a message on the limit's pub/sub channel when any instance releases a permit, when the
/// earliest lease would expire, or when the store marks Redis down (then every waiter gets
/// the failure policy's answer at once) — never by polling. With
/// [`FailurePolicy::Local`], a caller waiting on the local share when the store marks Redis
/// up again asks Redis again: after an outage only Redis grants, and the local permits
/// granted during it run to their end.
///
/// # Examples
///
/// ```no_run
/// # use sluicegate_redis::{GlobalConcurrency, RedisStore};
/// # use std::time::Duration;
/// # async fn demo(store: RedisStore) -> Result<(), Box<dyn std::error::Error>> {
/// let model = GlobalConcurrency::builder(&store, "model-server", 8)
///     .max_queue(100)
///     .queue_timeout(Duration::from_secs(10))
///     .build()?;
/// let permit = model.acquire().await?;
/// // ... call the model server; at most 8 calls run across all instances ...
/// drop(permit);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct GlobalConcurrency {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) store: RedisStore,
    pub(super) leases: String,
    pub(super) channel: String,
    max: u32,
    pub(super) ttl: Duration,
    max_queue: usize,
    queue_timeout: Duration,
    policy: FailurePolicy,
    pub(super) share: Share,
    turnstile: tokio::sync::Mutex<()>,
    queued: AtomicUsize,
    /// Times a waiter went to sleep, told by Redis that all permits were out
    /// ([`GlobalConcurrency::sleeps`]).
    sleeps: AtomicU64,
    /// How long this instance's leases were held, smoothed (ns; 0: none released yet), for
    /// the hint of a full queue ([`queue_full_hint`]).
    mean_hold: AtomicU64,
    /// Woken by a message on `channel` (on the store's one pub/sub connection).
    subscription: Subscription,
    instance: u64,
    next_id: AtomicU64,
    /// The runtime the limit was built on: releases go out from it wherever a permit is
    /// dropped (see [`release`]).
    pub(super) runtime: tokio::runtime::Handle,
    /// Tests: holds the next renewal between deciding to renew and sending the call.
    #[cfg(test)]
    pub(super) hold_renewal: std::sync::Mutex<Option<super::permit::HoldRenewal>>,
}

/// Settings for a [`GlobalConcurrency`].
#[derive(Debug)]
#[must_use]
pub struct ConcurrencyBuilder<'a> {
    store: &'a RedisStore,
    name: String,
    max: u32,
    ttl: Duration,
    max_queue: usize,
    queue_timeout: Duration,
    policy: FailurePolicy,
    instances: u32,
}

/// One try at Redis.
enum Try {
    Taken(String),
    Full {
        next_expiry: Duration,
    },
    /// No answer: the failure policy decides. `recoveries`: the store's count of recoveries
    /// when the call went out (a caller on the local share goes back to Redis once it grows).
    Down {
        recoveries: u64,
    },
}

impl GlobalConcurrency {
    /// The longest lease time (TTL) a limit accepts: 2^52 ms, about 142,000 years. The
    /// scripts give the lease set an expiry of twice the lease time, a Lua double, exact up
    /// to 2^53; from 10^17 on Redis's Lua passes it as `1e+17`, which `PEXPIRE` refuses
    /// (every acquire failed and marked the store down).
    pub const MAX_TTL: Duration = Duration::from_millis(1 << 52);

    /// A limit named `name` of at most `max` permits at once, shared through `store`.
    pub fn builder<'a>(store: &'a RedisStore, name: &str, max: u32) -> ConcurrencyBuilder<'a> {
        ConcurrencyBuilder {
            store,
            name: name.to_owned(),
            max,
            ttl: Duration::from_secs(10),
            max_queue: ConcurrencyLimiter::DEFAULT_MAX_QUEUE,
            queue_timeout: Duration::from_secs(30),
            policy: FailurePolicy::default(),
            instances: 1,
        }
    }

    /// Waits for a permit: at once if one is free, else in this instance's FIFO queue.
    ///
    /// A caller asks Redis at once when nobody waits here (the calls of a burst go out
    /// together); only when Redis answers that all permits are out does it join the queue,
    /// so `max_queue` counts callers that wait for a release, never callers still waiting
    /// for their answer.
    ///
    /// # Errors
    ///
    /// [`AcquireError::QueueFull`] when all permits are out and `max_queue` callers already
    /// wait here; [`AcquireError::Timeout`] after `queue_timeout`;
    /// [`AcquireError::Unavailable`] when Redis does not answer and the policy is
    /// [`FailurePolicy::Deny`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the queue at once. A lease Redis takes for a call in
    /// flight when the future is dropped is released, as is one whose answer comes after
    /// the store's budget (sent when Redis answers again; at worst it expires after the
    /// TTL).
    pub async fn acquire(&self) -> Result<GlobalPermit, AcquireError> {
        let timeout = self.inner.queue_timeout;
        tokio::time::timeout(timeout, self.take())
            .await
            .unwrap_or(Err(AcquireError::Timeout {
                retry_after: timeout,
            }))
    }

    /// Asks Redis until it decides or the failure policy answers: a caller waiting on the
    /// local share when Redis is marked up again asks Redis once more, as a newcomer.
    async fn take(&self) -> Result<GlobalPermit, AcquireError> {
        loop {
            if let Some(answer) = self.take_once().await {
                return answer;
            }
        }
    }

    /// Asks Redis at once when nobody waits here; queues when all permits are out (or others
    /// wait already: first come, first served). `None`: Redis was down, and marked up again
    /// while this caller waited on the local share.
    async fn take_once(&self) -> Option<Result<GlobalPermit, AcquireError>> {
        let inner = &self.inner;
        if inner.queued.load(Ordering::Acquire) == 0 {
            match self.try_once().await {
                Try::Taken(id) => {
                    return Some(Ok(GlobalPermit::new(inner.clone(), Held::Lease(id))));
                }
                Try::Down { recoveries } => return self.fall_back(recoveries).await,
                Try::Full { .. } => {}
            }
        }
        let ahead = inner.queued.fetch_add(1, Ordering::AcqRel);
        let in_queue = Queued(&inner.queued);
        if ahead >= inner.max_queue {
            return Some(Err(AcquireError::QueueFull {
                retry_after: queue_full_hint(
                    inner.mean_hold(),
                    inner.max,
                    ahead,
                    inner.queue_timeout,
                ),
            }));
        }
        let turn = self.wait_turn().await;
        drop(in_queue);
        match turn {
            Ok(id) => Some(Ok(GlobalPermit::new(inner.clone(), Held::Lease(id)))),
            Err(recoveries) => self.fall_back(recoveries).await,
        }
    }

    /// At the head of the queue: try Redis, then sleep until a release, the earliest expiry
    /// or Redis marked down, and try again. `Err`: Redis is down (with [`Try::Down`]'s count).
    async fn wait_turn(&self) -> Result<String, u64> {
        let inner = &self.inner;
        let _turn = inner.turnstile.lock().await;
        loop {
            // Listen before asking, so that a release, or Redis marked down (by any call of
            // this store), between the answer and the wait is not lost.
            let released = inner.subscription.wake().notified();
            let down = inner.store.went_down();
            tokio::pin!(released, down);
            released.as_mut().enable();
            down.as_mut().enable();
            match self.try_once().await {
                Try::Taken(id) => return Ok(id),
                Try::Full { next_expiry } => {
                    // Counted once Redis's answer is in: a release from now on is one this
                    // wait is woken for (`released` listens since before the ask).
                    inner.sleeps.fetch_add(1, Ordering::Release);
                    // The store's listener ran on a runtime that has shut down: start one on
                    // this one (it wakes this wait once it has subscribed).
                    inner.store.keep_listening();
                    // Down: the next try falls back at once (no call while Redis is down),
                    // and each waiter behind gets the policy's answer in turn.
                    tokio::select! {
                        () = released => {}
                        () = down => {}
                        () = tokio::time::sleep(next_expiry) => {}
                    }
                }
                Try::Down { recoveries } => return Err(recoveries),
            }
        }
    }

    /// The failure policy's answer, Redis being down, its recovery count `recoveries` when
    /// this caller asked. `None`: Redis has been marked up since, before or while this caller
    /// waited on the local share; it asks Redis again.
    async fn fall_back(&self, recoveries: u64) -> Option<Result<GlobalPermit, AcquireError>> {
        let inner = &self.inner;
        let answer = match inner.policy {
            FailurePolicy::Allow => Ok(GlobalPermit::new(inner.clone(), Held::Nothing)),
            FailurePolicy::Deny => Err(AcquireError::Unavailable {
                retry_after: inner.store.retry_hint(),
            }),
            FailurePolicy::Local => {
                // A local permit is granted only until Redis answers again: the callers
                // queued on the share would else be let in as local permits end, beside the
                // leases new callers take in Redis (trial34: 8 in flight with a limit of 4,
                // for seconds after a 2 s outage). Listening before looking, so that a
                // recovery between the look and the wait is not lost.
                let came_up = inner.store.came_up();
                tokio::pin!(came_up);
                came_up.as_mut().enable();
                if inner.store.recoveries() != recoveries {
                    return None;
                }
                let local = tokio::select! {
                    biased;
                    () = came_up => return None,
                    local = inner.share.acquire() => local,
                };
                match local {
                    Ok(p) => Ok(GlobalPermit::new(inner.clone(), Held::Local(p))),
                    Err(e) => Err(AcquireError::Timeout {
                        retry_after: e.retry_after(),
                    }),
                }
            }
        };
        Some(answer)
    }

    async fn try_once(&self) -> Try {
        let inner = &self.inner;
        // Read before the call, so that a recovery after its failure, before the fallback
        // looks, still sends the caller back to Redis.
        let recoveries = inner.store.recoveries();
        let id = format!(
            "{:016x}-{}",
            inner.instance,
            inner.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let mut call = ACQUIRE.key(&inner.leases);
        call.arg(inner.max).arg(millis(inner.ttl)).arg(&id);
        // Until the answer is read, Redis may hold a lease for `id` that nobody would: it is
        // released if the answer does not come in time, or if this future is dropped.
        let mut unclaimed = Unclaimed(Some((inner, id)));
        let reply = inner.store.attempt::<Vec<i64>>(&call).await;
        match reply.as_deref() {
            Ok([1, ..]) => Try::Taken(unclaimed.claim()),
            Ok([0, _, wait]) => {
                unclaimed.claim();
                Try::Full {
                    next_expiry: Duration::from_millis(u64::try_from(*wait).unwrap_or(1)),
                }
            }
            // Sent: the script may run yet; `unclaimed` releases what it may take.
            Err(Missed::Sent) => {
                inner.store.fell_back();
                Try::Down { recoveries }
            }
            Ok(_) | Err(Missed::Skipped) => {
                unclaimed.claim();
                inner.store.fell_back();
                Try::Down { recoveries }
            }
        }
    }

    /// The most permits out at once across all instances.
    pub fn max(&self) -> u32 {
        self.inner.max
    }

    /// How many callers wait in this instance's queue: told that all permits were out, they
    /// wait for a release (the first of them asks Redis again after each).
    pub fn queued(&self) -> usize {
        self.inner.queued.load(Ordering::Acquire)
    }

    /// How many times a waiter of this limit has gone to sleep, Redis having answered its
    /// last ask that all permits were out: what a test waits for to know that a release
    /// made from then on is one the waiter must be woken for (before it, the waiter's ask
    /// may still find the permit free, and prove nothing about the wake).
    #[doc(hidden)]
    pub fn sleeps(&self) -> u64 {
        self.inner.sleeps.load(Ordering::Acquire)
    }

    /// Tests: the shared state.
    #[cfg(test)]
    pub(super) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }
}

impl Inner {
    /// A lease of this instance was held for `held`: folded into the mean (weight 1/8; the
    /// first one taken as it is). Load and store rather than a CAS loop: two drops at once
    /// may lose one sample, and the mean only feeds a hint.
    pub(super) fn lease_held_for(&self, held: Duration) {
        let sample = u64::try_from(held.as_nanos()).unwrap_or(u64::MAX).max(1);
        let mean = self.mean_hold.load(Ordering::Relaxed);
        let mean = if mean == 0 {
            sample
        } else {
            (mean - mean / 8).saturating_add(sample / 8).max(1)
        };
        self.mean_hold.store(mean, Ordering::Relaxed);
    }

    fn mean_hold(&self) -> Option<Duration> {
        let mean = self.mean_hold.load(Ordering::Relaxed);
        (mean > 0).then(|| Duration::from_nanos(mean))
    }
}

/// The `retry_after` of a caller turned away because this instance's queue is full (with
/// `max_queue(0)`: because all permits are out), `ahead` callers waiting before it: the local
/// limiter's rule, the time between two releases times the caller's place in line
/// (`ahead + 1`). The time between two releases of the whole limit is taken as the mean
/// hold of this instance's leases ÷ `max`: with the queue full, all `max` permits are out,
/// and, held about that long wherever they are, about `max` of them come back per hold.
/// 1 s until a lease has been released here (the local limiter's fallback too); never more
/// than the queue timeout, the hint before (trial102 item 11: `max_queue(0)` told every
/// caller turned away to stay away 30 s); the queue timeout with a limit of 0.
fn queue_full_hint(
    mean_hold: Option<Duration>,
    max: u32,
    ahead: usize,
    queue_timeout: Duration,
) -> Duration {
    if max == 0 {
        return queue_timeout;
    }
    let place = u32::try_from(ahead.saturating_add(1)).unwrap_or(u32::MAX);
    mean_hold
        .map_or(Duration::from_secs(1), |hold| {
            (hold / max).saturating_mul(place)
        })
        .min(queue_timeout)
}

/// The id of a lease asked for whose answer is not in yet: released when dropped unclaimed
/// (the answer came too late, or the `acquire` future was dropped meanwhile).
struct Unclaimed<'a>(Option<(&'a Arc<Inner>, String)>);

impl Unclaimed<'_> {
    fn claim(&mut self) -> String {
        self.0.take().map(|(_, id)| id).unwrap_or_default()
    }
}

impl Drop for Unclaimed<'_> {
    fn drop(&mut self) {
        if let Some((inner, id)) = self.0.take() {
            release(inner, id);
        }
    }
}

/// Counts a caller in the queue until it leaves, however it leaves.
struct Queued<'a>(&'a AtomicUsize);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

pub(super) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl ConcurrencyBuilder<'_> {
    /// How long a lease lives without renewal: a crashed holder's permit comes back after
    /// this (default 10 s; at least 30 ms, at most [`GlobalConcurrency::MAX_TTL`]). Held
    /// permits are renewed every third of it.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(30));
        self
    }

    /// How many callers may wait in this instance's queue when all permits are out (default
    /// [`ConcurrencyLimiter::DEFAULT_MAX_QUEUE`],
    /// 1024, as a local limiter's; 0 rejects at once when all permits are out).
    pub fn max_queue(mut self, max_queue: usize) -> Self {
        self.max_queue = max_queue;
        self
    }

    /// How long a caller waits at most (default 30 s; not zero: use `max_queue(0)` to turn
    /// callers away at once when all permits are out).
    pub fn queue_timeout(mut self, timeout: Duration) -> Self {
        self.queue_timeout = timeout;
        self
    }

    crate::policy::failure_settings!();

    /// Builds the limit and subscribes its release channel on the store's one pub/sub
    /// connection; the first limit of a store starts that connection's listener on a thread
    /// of its own, with a runtime of its own, so that no caller's runtime can starve it (it
    /// ends, and the connection closes, when the store's last concurrency limit is dropped).
    ///
    /// # Errors
    ///
    /// [`Error::Name`] for a name that cannot sit in a hash tag; [`Error::Range`] for a lease
    /// time over [`GlobalConcurrency::MAX_TTL`]; [`Error::Limiter`] for settings the local
    /// share cannot take (a zero queue timeout); [`Error::Runtime`] outside a tokio runtime.
    pub fn build(self) -> Result<GlobalConcurrency, Error> {
        if self.ttl > GlobalConcurrency::MAX_TTL {
            return Err(Error::Range(
                "the lease time (ttl) must be at most 2^52 ms (about 142,000 years): Redis \
                 cannot expire the lease set after twice a longer one",
            ));
        }
        let leases = key(self.store.prefix(), &self.name, "leases")?;
        let channel = key(self.store.prefix(), &self.name, "released")?;
        // Permits renew their leases on the caller's runtime: a limit needs one.
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::Runtime)?;
        let share = crate::rate::share(self.max, self.instances) as usize;
        let local = ConcurrencyLimiter::builder(share)
            .max_queue(self.max_queue)
            .queue_timeout(self.queue_timeout)
            .build()?;
        Ok(GlobalConcurrency {
            inner: Arc::new(Inner {
                store: self.store.clone(),
                leases,
                subscription: self.store.subscribe(&channel),
                channel,
                max: self.max,
                ttl: self.ttl,
                max_queue: self.max_queue,
                queue_timeout: self.queue_timeout,
                policy: self.policy,
                share: Share::new(local),
                turnstile: tokio::sync::Mutex::new(()),
                queued: AtomicUsize::new(0),
                sleeps: AtomicU64::new(0),
                mean_hold: AtomicU64::new(0),
                instance: instance_id(),
                next_id: AtomicU64::new(0),
                runtime,
                #[cfg(test)]
                hold_renewal: std::sync::Mutex::new(None),
            }),
        })
    }
}

/// A random id for this limit object, so lease ids of different instances never collide.
fn instance_id() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new()
        .hash_one((std::process::id(), std::time::SystemTime::now()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// trial102 item 11: the hint of a full queue is a release's time times the place in
    /// line, not the queue timeout.
    #[test]
    fn a_full_queue_hints_the_time_to_a_release_for_each_place_ahead() {
        let ms = Duration::from_millis;
        let timeout = Duration::from_secs(30);
        assert_eq!(
            queue_full_hint(None, 4, 0, timeout),
            ms(1000),
            "no hold seen"
        );
        assert_eq!(queue_full_hint(Some(ms(800)), 4, 0, timeout), ms(200));
        assert_eq!(queue_full_hint(Some(ms(800)), 4, 9, timeout), ms(2000));
        assert_eq!(
            queue_full_hint(Some(Duration::from_secs(3600)), 1, 0, timeout),
            timeout,
            "never past the queue timeout"
        );
        assert_eq!(queue_full_hint(Some(ms(800)), 0, 0, timeout), timeout);
        assert_eq!(
            queue_full_hint(Some(Duration::MAX), 1, usize::MAX, timeout),
            timeout
        );
    }
}
