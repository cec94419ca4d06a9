//! Hybrid GCRA: tokens leased from Redis in batches, spent locally until the lease runs out.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use redis::Script;
use sluicegate::rate::gcra::step;
use sluicegate::rate::{CheckError, Decision};
use tokio::time::Instant;

use super::Verdict;
use super::gcra::Spec;
use crate::Source;

static SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("time.lua"),
        include_str!("lease.lua"),
        include_str!("write.lua")
    ))
});

/// A global GCRA limit that leases batches of tokens from Redis and spends them locally, so
/// most decisions cost no round trip.
///
/// A lease may be spent for the [lease time](super::GcraBuilder::lease) `L` after it was
/// asked for; what is left then expires unused (never given back: see the guide for why
/// that would break the bound). The batch follows this
/// instance's traffic: about what it spent in the last `L`, so busy instances lease more.
/// While Redis says the bucket is empty, the instance denies locally until a batch's worth
/// has refilled (at most `L`), instead of asking on every request.
///
/// **Overshoot**: every admission spends a token Redis counted at most `L` earlier, so in any
/// interval of length `W` all instances together admit at most `burst + (W + L) / t` — the
/// strict bound plus `L / t` (the quota's rate × `L`; 2 % of the quota with the default
/// `L` of 1/50 of its period). `docs/global-limits.md` derives it.
///
/// # Examples
///
/// ```no_run
/// # use sluicegate_redis::{GlobalGcra, RedisStore};
/// # use sluicegate::rate::Quota;
/// # async fn demo(store: RedisStore) -> Result<(), sluicegate_redis::Error> {
/// let limit = GlobalGcra::builder(&store, "search", Quota::per_second(50_000)?).build_hybrid()?;
/// let _ = limit.check().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct HybridGcra {
    leaser: Leaser,
    decisions: AtomicU64,
}

/// What a lease call needs, shared with the task it runs in: the call outlives the caller
/// whose future is dropped meanwhile, and its batch still lands in the stock.
#[derive(Clone, Debug)]
struct Leaser {
    spec: Arc<Spec>,
    /// The limit's key (strict and hybrid limits of one name share it).
    key: Arc<str>,
    lease: Duration,
    stock: Arc<Mutex<Stock>>,
    calls: Arc<AtomicU64>,
    // One lease call at a time per instance; the others wait for its tokens. Held by the
    // lease call itself (a task of its own), not by the caller that sent it.
    refill: Arc<tokio::sync::Mutex<()>>,
}

/// What a [`HybridGcra`] has done so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HybridStats {
    /// Decisions made (any source).
    pub decisions: u64,
    /// Lease calls Redis answered.
    pub redis_calls: u64,
}

/// The tokens in hand and what Redis said when they were leased.
#[derive(Debug)]
struct Stock {
    tokens: u32,
    expires: Instant,
    global_room: u32,
    reset: Duration,
    server: Duration,
    received: Instant,
    denied_until: Option<(Instant, Decision)>,
    demand: Demand,
    /// Tests: for each put-back of an unclaimed check's tokens, whether the lease lock was
    /// held at the time.
    #[cfg(test)]
    put_backs: Vec<bool>,
}

/// The traffic a batch should cover: requests asked for, spent or not, since the last lease
/// was sent.
#[derive(Debug)]
struct Demand {
    count: u64,
    since: Instant,
    /// `count` when the lease in flight was sent.
    at_send: u64,
}

impl Demand {
    fn new(now: Instant) -> Self {
        Demand {
            count: 0,
            since: now,
            at_send: 0,
        }
    }

    fn add(&mut self, n: u32) {
        self.count += u64::from(n);
    }

    /// Requests per second since the last lease was sent, as a lease is sent at `now`.
    fn sending(&mut self, now: Instant) -> f64 {
        self.at_send = self.count;
        let elapsed = (now - self.since).as_secs_f64().max(1e-6);
        self.count as f64 / elapsed
    }

    /// The lease sent at `sent` was answered: the count starts again from its sending,
    /// keeping the requests that arrived while it was in flight.
    fn answered(&mut self, sent: Instant) {
        self.count -= self.at_send.min(self.count);
        self.at_send = 0;
        self.since = sent;
    }
}

impl HybridGcra {
    pub(super) fn new(spec: Spec, key: String, lease: Duration) -> Self {
        let now = Instant::now();
        HybridGcra {
            leaser: Leaser {
                spec: Arc::new(spec),
                key: key.into(),
                lease,
                stock: Arc::new(Mutex::new(Stock {
                    tokens: 0,
                    expires: now,
                    global_room: 0,
                    reset: Duration::ZERO,
                    server: Duration::ZERO,
                    received: now,
                    denied_until: None,
                    demand: Demand::new(now),
                    #[cfg(test)]
                    put_backs: Vec::new(),
                })),
                calls: Arc::new(AtomicU64::new(0)),
                refill: Arc::new(tokio::sync::Mutex::new(())),
            },
            decisions: AtomicU64::new(0),
        }
    }

    /// Checks one request.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future loses no token: a lease call in flight runs on in a task of its
    /// own (on the current tokio runtime), and its batch lands in the instance's stock for
    /// the next callers, the dropped caller's tokens included (while the batch's lease time
    /// lasts). Whoever waited for that call, waits for it still.
    pub async fn check(&self) -> Decision {
        let verdict = self.decide(1).await;
        verdict.map_or_else(|_| self.leaser.spec.fresh(0), |v| v.decision)
    }

    /// Checks `n` requests at once: all are allowed or none.
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the burst.
    pub async fn check_n(&self, n: u32) -> Result<Decision, CheckError> {
        Ok(self.decide(n).await?.decision)
    }

    /// Decisions made and Redis calls sent so far.
    pub fn stats(&self) -> HybridStats {
        HybridStats {
            decisions: self.decisions.load(Ordering::Relaxed),
            redis_calls: self.leaser.calls.load(Ordering::Relaxed),
        }
    }

    /// The quota, shared by every instance.
    pub fn quota(&self) -> sluicegate::rate::Quota {
        self.leaser.spec.quota
    }

    /// The lease time `L`.
    pub fn lease_time(&self) -> Duration {
        self.leaser.lease
    }

    /// Like [`check_n`](Self::check_n), saying who decided. For a decision from a lease,
    /// [`Verdict::server_time`] is Redis's time at the lease plus the local time since.
    ///
    /// # Errors
    ///
    /// As [`check_n`](Self::check_n).
    pub async fn decide(&self, n: u32) -> Result<Verdict, CheckError> {
        let leaser = &self.leaser;
        let (fresh, _) = step(leaser.spec.params, 0, 0, n)?;
        self.decisions.fetch_add(1, Ordering::Relaxed);
        leaser.lock().demand.add(n);
        if leaser.spec.params.denies_all() {
            return Ok(Verdict::new(fresh, Source::Redis));
        }
        if let Some(v) = leaser.spend(n) {
            return Ok(v);
        }
        let one_lease_at_a_time = leaser.refill.clone().lock_owned().await;
        if let Some(v) = leaser.spend(n) {
            return Ok(v);
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return leaser.lease(n).await.map(Granted::claim);
        };
        let call = leaser.clone();
        let (answer, answered) = tokio::sync::oneshot::channel();
        let lease = runtime.spawn(async move {
            let granted = call.lease(n).await;
            // The result goes with the lease lock. Not taken by the caller (its future was
            // dropped), it is dropped as a pair, in order: `Granted` puts its tokens back,
            // then the lock goes, so the next caller finds them in the stock (with the lock
            // released first, it could lease again and lose them with the old batch:
            // review 24, item 6).
            let _ = answer.send((granted, one_lease_at_a_time));
        });
        match answered.await {
            Ok((granted, _one_lease_at_a_time)) => granted.map(Granted::claim),
            Err(_) => match lease.await {
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                // Cancelled: the runtime is shutting down.
                _ => leaser.spec.fall_back(n),
            },
        }
    }
}

/// The verdict of a lease call for the caller that sent it, holding the tokens it took for
/// that caller from the batch just leased: put back in the stock when dropped unclaimed (the
/// caller's future was dropped while the call was in flight).
struct Granted {
    verdict: Verdict,
    /// The stock, the tokens taken and the expiry of the batch they came from.
    taken: Option<(Arc<Mutex<Stock>>, u32, Instant)>,
    /// Tests: the lease lock, to record whether a put-back happens under it.
    #[cfg(test)]
    refill: Option<Arc<tokio::sync::Mutex<()>>>,
}

impl Granted {
    fn claim(mut self) -> Verdict {
        self.taken = None;
        self.verdict
    }
}

impl Drop for Granted {
    fn drop(&mut self) {
        if let Some((stock, n, expires)) = self.taken.take() {
            let mut s = stock.lock().unwrap_or_else(PoisonError::into_inner);
            #[cfg(test)]
            if let Some(refill) = &self.refill {
                let held = refill.try_lock().is_err();
                s.put_backs.push(held);
            }
            // Only into the batch they came from: a later one expires later.
            if s.expires == expires {
                s.tokens = s.tokens.saturating_add(n);
            }
        }
    }
}

impl Leaser {
    fn lock(&self) -> MutexGuard<'_, Stock> {
        self.stock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Spends `n` leased tokens, or repeats a recent denial; `None`: ask Redis.
    fn spend(&self, n: u32) -> Option<Verdict> {
        let now = Instant::now();
        let mut s = self.lock();
        if now >= s.expires || s.tokens < n {
            // Out of tokens. Right after Redis said the bucket is (nearly) empty, deny here
            // until a batch has refilled rather than ask again for every request.
            return match s.denied_until {
                Some((until, denial)) if now < until => Some(Verdict::new(
                    Decision::deny(
                        self.spec.burst,
                        denial.remaining(),
                        until - now,
                        denial.reset_after().saturating_sub(now - s.received),
                    ),
                    Source::Lease,
                )),
                _ => None,
            };
        }
        s.tokens -= n;
        let since = now - s.received;
        let decision = Decision::allow(
            self.spec.burst,
            s.global_room.saturating_add(s.tokens),
            s.reset.saturating_sub(since),
        );
        Some(Verdict {
            decision,
            source: Source::Lease,
            server_time: Some(s.server + since),
        })
    }

    /// One lease call: a batch sized to recent traffic; what is left of the last one expires.
    async fn lease(&self, n: u32) -> Result<Granted, CheckError> {
        let spec = &self.spec;
        let sent = Instant::now();
        let want = {
            let rate = self.lock().demand.sending(sent);
            let batch = (rate * self.lease.as_secs_f64())
                .ceil()
                .min(f64::from(u32::MAX)) as u32;
            let max_batch = (spec.burst / 2).max(n);
            batch.clamp(n, max_batch)
        };
        let mut call = SCRIPT.key(&*self.key);
        call.arg(spec.t_ns).arg(spec.horizon_ns).arg(want).arg(n);
        let reply: Option<Vec<i64>> = spec.store.call(&call).await;
        let Some(&[got, tat, sec, usec]) = reply.as_deref() else {
            return spec.fall_back(n).map(|verdict| Granted {
                verdict,
                taken: None,
                #[cfg(test)]
                refill: None,
            });
        };
        self.calls.fetch_add(1, Ordering::Relaxed);
        let received = Instant::now();
        let verdict = Verdict::from_redis(Decision::allow(0, 0, Duration::ZERO), sec, usec);
        let server = verdict.server_time.unwrap_or_default();
        let got = u32::try_from(got).unwrap_or(0);
        let mut s = self.lock();
        s.server = server;
        s.received = received;
        if got >= n {
            let after = spec.step(tat, 0)?;
            // A partial batch means the bucket is drained: once it is spent, wait for a
            // batch to refill (at most `L`) instead of trickling one round trip per token.
            let denied_until = (got < want).then(|| {
                let refill = spec.step(tat, want).map_or(self.lease, |d| d.retry_after());
                let hold = refill.min(self.lease);
                let denial = Decision::deny(spec.burst, 0, hold, after.reset_after());
                (received + hold, denial)
            });
            s.demand.answered(sent);
            s.tokens = got - n;
            s.expires = sent + self.lease;
            s.global_room = after.remaining();
            s.reset = after.reset_after();
            s.denied_until = denied_until;
            let decision = Decision::allow(
                spec.burst,
                after.remaining().saturating_add(s.tokens),
                after.reset_after(),
            );
            return Ok(Granted {
                verdict: Verdict {
                    decision,
                    ..verdict
                },
                taken: Some((self.stock.clone(), n, s.expires)),
                #[cfg(test)]
                refill: Some(self.refill.clone()),
            });
        }
        // Empty: deny locally until `n` fits and a batch has refilled, at most one lease
        // time, so a denied instance asks Redis about once per `L`, not once per request.
        let denial = spec.step(tat, n)?;
        let batch_ready = spec.step(tat, want)?.retry_after().min(self.lease);
        let hold = denial.retry_after().max(batch_ready);
        let decision = Decision::deny(spec.burst, denial.remaining(), hold, denial.reset_after());
        s.denied_until = Some((received + hold, decision));
        s.expires = received;
        s.demand.answered(sent);
        Ok(Granted {
            verdict: Verdict {
                decision,
                ..verdict
            },
            taken: None,
            #[cfg(test)]
            refill: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::server::RedisServer;
    use crate::{GlobalGcra, RedisStore};

    const PATIENCE: Duration = Duration::from_secs(30);

    async fn until(why: &str, mut what: impl FnMut() -> bool) {
        let deadline = std::time::Instant::now() + PATIENCE;
        while !what() {
            assert!(std::time::Instant::now() < deadline, "{why}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Review 24, item 6: a check dropped while its lease call was in flight left the
    /// tokens taken for it to tokio, which dropped the call's unclaimed output (putting
    /// them back) only after the call's task had released the lease lock. A caller waiting
    /// for that lock could find the stock short, lease again, and the new batch replaced the
    /// old: those tokens were lost. They are put back while the lock is still held now.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_checks_tokens_are_put_back_under_the_lease_lock() {
        let redis = RedisServer::start();
        let store = RedisStore::builder(&redis.url())
            .budget(Duration::from_secs(20))
            .connect()
            .await
            .unwrap();
        let q = sluicegate::rate::Quota::per_hour(36)
            .with_burst(std::num::NonZeroU32::new(10).unwrap());
        let hybrid = Arc::new(
            GlobalGcra::builder(&store, "dropped", q)
                .lease(Duration::from_secs(60))
                .build_hybrid()
                .unwrap(),
        );
        redis.pause();
        let check = tokio::spawn({
            let hybrid = hybrid.clone();
            async move { hybrid.decide(1).await }
        });
        // The lease call runs (its task sized the batch): Redis, stopped, will answer later.
        until("the lease call did not start", || {
            hybrid.leaser.lock().demand.at_send == 1
        })
        .await;
        check.abort();
        assert!(check.await.unwrap_err().is_cancelled());
        redis.resume();
        until("the dropped check's tokens were not put back", || {
            !hybrid.leaser.lock().put_backs.is_empty()
        })
        .await;
        assert_eq!(
            hybrid.leaser.lock().put_backs,
            [true],
            "put back under the lease lock"
        );
        assert_eq!(hybrid.stats().redis_calls, 1);
    }

    /// Requests that arrive while a lease is in flight count toward the next batch. They
    /// were dropped when the answer came (the count went to 0, its clock back to the
    /// sending): callers queued behind a lease then sized the next one from nothing, asked
    /// for a single token, and the instance settled at one Redis call per decision.
    #[test]
    fn requests_during_a_lease_count_toward_the_next() {
        let t0 = Instant::now();
        let mut d = Demand::new(t0);
        d.add(10);
        let sent = t0 + Duration::from_millis(10);
        assert!((d.sending(sent) - 1000.0).abs() < 1e-6);
        // Eight callers arrive, and queue, during the round trip.
        d.add(8);
        d.answered(sent);
        let next = sent + Duration::from_millis(2);
        assert!(
            (d.sending(next) - 4000.0).abs() < 1e-6,
            "eight requests in the 2 ms since the last lease was sent"
        );
    }
}
