//! [`AdaptiveLimiter`]: a [`ConcurrencyLimiter`] whose limit a [`LimitAlgorithm`] moves.

use super::algorithm::{LimitAlgorithm, Outcome, Sample};
use super::explanation::Explanation;
use crate::clock::{Clock, Nanos};
use crate::concurrency::{ConcurrencyLimiter, OwnedPermit, Rejected};
use crate::sync::{Arc, Mutex, lock};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

/// A concurrency limiter driven by a limit algorithm: the seam the tower middleware, the
/// gate and the simulator use.
///
/// Each [`AdaptivePermit`] remembers when it started and how many permits were out; when it
/// is finished with an [`Outcome`], that sample goes to the algorithm (behind a mutex) and the
/// limiter's limit follows through [`ConcurrencyLimiter::set_max`]. Queueing, timeouts and
/// fairness are the wrapped limiter's.
///
/// # Examples
///
/// ```
/// use sluicegate::adaptive::{AdaptiveLimiter, Aimd, AimdConfig};
/// use sluicegate::concurrency::ConcurrencyLimiter;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let limiter = ConcurrencyLimiter::builder(1).max_queue(100).build().unwrap();
/// let adaptive = AdaptiveLimiter::new(limiter, Aimd::new(AimdConfig::default()));
/// assert_eq!(adaptive.limit(), 20); // the algorithm's initial limit
///
/// let permit = adaptive.acquire().await.unwrap();
/// // ... call the resource ...
/// permit.success();
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct AdaptiveLimiter {
    limiter: ConcurrencyLimiter,
    shared: Arc<Shared>,
}

struct Shared {
    steering: Mutex<Steering>,
    /// The wrapped limiter's clock: one time source for the queue and the samples.
    clock: std::sync::Arc<dyn Clock>,
    in_flight: AtomicUsize,
    /// Callers of [`AdaptiveLimiter::acquire`] that found every permit taken: the demand the
    /// limit held back, for [`LimitAlgorithm::on_demand`].
    blocked: AtomicU64,
    /// Of those, the callers turned away without waiting, for
    /// [`LimitAlgorithm::on_turned_away`].
    turned_away: AtomicU64,
}

/// The algorithm, and whether it still sets the limit: one lock over both, so that a sample
/// that reads "attached" sets the limit before [`AdaptiveLimiter::detach`] returns, never
/// after the caller's own `set_max`.
struct Steering {
    algorithm: Box<dyn LimitAlgorithm>,
    /// Set by [`AdaptiveLimiter::detach`]: the algorithm no longer sets the limit.
    detached: bool,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("in_flight", &self.in_flight)
            .finish_non_exhaustive()
    }
}

impl AdaptiveLimiter {
    /// Wraps `limiter` and sets its limit to `algorithm`'s current one. From now on the
    /// algorithm owns the limit: [`ConcurrencyLimiter::reset`] returns to the algorithm's
    /// latest, not to the builder's. Samples are timed with the limiter's
    /// [clock](crate::concurrency::Builder::clock) (by default tokio's, virtual under a
    /// paused runtime), the same one its queue uses.
    pub fn new(limiter: ConcurrencyLimiter, algorithm: impl LimitAlgorithm + 'static) -> Self {
        let clock = limiter.inner().clock.clone();
        Self::with_sample_clock(limiter, algorithm, clock)
    }

    /// Like [`new`](Self::new), but times samples with `clock` rather than the limiter's.
    /// Only for a simulator that runs the algorithm on another time scale than the
    /// limiter's timers (`sluicegate-sim` slows tokio time 1000× for microsecond
    /// resolution); anywhere else use `new`, so that one clock drives the whole limiter.
    pub fn with_sample_clock(
        limiter: ConcurrencyLimiter,
        algorithm: impl LimitAlgorithm + 'static,
        clock: std::sync::Arc<dyn Clock>,
    ) -> Self {
        apply(&limiter, algorithm.limit());
        AdaptiveLimiter {
            limiter,
            shared: Arc::new(Shared {
                steering: Mutex::new(Steering {
                    algorithm: Box::new(algorithm),
                    detached: false,
                }),
                clock,
                in_flight: AtomicUsize::new(0),
                blocked: AtomicU64::new(0),
                turned_away: AtomicU64::new(0),
            }),
        }
    }

    /// The wrapped limiter (for snapshots, close, drain).
    ///
    /// Its [`set_max`](ConcurrencyLimiter::set_max) is no kill switch here: the algorithm
    /// owns the limit, and the next finished request sets it again (waiters held by a limit
    /// of 0 are then admitted). Use [`close`](ConcurrencyLimiter::close) to turn everything
    /// away, and [`open`](ConcurrencyLimiter::open) to let traffic in again, or
    /// [`detach`](Self::detach) the algorithm first.
    pub fn limiter(&self) -> &ConcurrencyLimiter {
        &self.limiter
    }

    /// Takes the limit away from the algorithm for good: from now on only
    /// [`set_max`](ConcurrencyLimiter::set_max) moves the wrapped limiter's limit — and
    /// [`reset`](ConcurrencyLimiter::reset), which still returns to the algorithm's last limit
    /// (it undoes a `set_max` made after `detach` too). Permits
    /// still out finish as before (they release, and their samples still reach the
    /// algorithm), but no sample sets the limit any more: a sample being taken when this is
    /// called sets its limit before `detach` returns, never after (the loom model
    /// `loom_adaptive.rs`), so a `set_max` made after it stands.
    ///
    /// For a limiter being retired while its requests finish (a pool moving to another
    /// limiter holds it at the slots it may fill), or held at a kill switch of
    /// `set_max(0)` while what runs ends; otherwise the next finished request would set the
    /// algorithm's limit again and start waiters beyond what the caller allowed.
    pub fn detach(&self) {
        lock(&self.shared.steering).detached = true;
    }

    /// Counts one caller that found every permit taken (it waits in the queue or is turned
    /// away): the demand the limit holds back, which the algorithm reads through
    /// [`LimitAlgorithm::on_demand`]. [`acquire`](Self::acquire) counts its own callers; a
    /// path that acquires from [`limiter`](Self::limiter) and [`wrap`](Self::wrap)s the permit
    /// itself (the tower layers, the gate's pools) calls
    /// [`first_try_failed`](Self::first_try_failed) when its first try found no permit, or the
    /// algorithm never sees the demand (a Little's-law start then grows by its slow start
    /// alone).
    #[inline]
    pub fn held_back(&self) {
        self.shared.blocked.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one caller held back that was turned away without waiting (the queue full or
    /// absent, or its wait predicted past its timeout), besides [`held_back`](Self::held_back):
    /// the algorithm reads it through [`LimitAlgorithm::on_turned_away`]. Without a queue
    /// (`max_queue` 0) these are the only callers held back, and a Little's-law limit that is
    /// not told of them cannot grow past its starting limit under a load below capacity.
    /// [`acquire`](Self::acquire) counts its own callers; a path that acquires from
    /// [`limiter`](Self::limiter) counts them through
    /// [`first_try_failed`](Self::first_try_failed).
    #[inline]
    pub fn turned_away(&self) {
        self.shared.turned_away.fetch_add(1, Ordering::Relaxed);
    }

    /// The callers held back so far ([`held_back`](Self::held_back), and those `acquire`
    /// counted itself) and, of them, those turned away without waiting
    /// ([`turned_away`](Self::turned_away)): the totals the algorithm is told.
    pub fn held_back_counts(&self) -> (u64, u64) {
        (
            self.shared.blocked.load(Ordering::Relaxed),
            self.shared.turned_away.load(Ordering::Relaxed),
        )
    }

    /// Counts a caller whose first try found no permit, for a path that acquires from
    /// [`limiter`](Self::limiter) itself: one that waits (`None`) is held back
    /// ([`held_back`](Self::held_back)); one refused at once (`Some`) is held back and turned
    /// away ([`turned_away`](Self::turned_away)) — unless the limiter is closed: its refusals
    /// say nothing of the demand the resource could serve, and counted as held back they read
    /// as callers that waited (review 30).
    pub fn first_try_failed(&self, refused: Option<&Rejected>) {
        if refused.is_some_and(Rejected::is_closed) {
            return;
        }
        self.held_back();
        if refused.is_some() {
            self.turned_away();
        }
    }

    /// The current limit.
    pub fn limit(&self) -> usize {
        self.limiter.max()
    }

    /// The algorithm's name.
    pub fn algorithm_name(&self) -> &'static str {
        lock(&self.shared.steering).algorithm.name()
    }

    /// Why the limit sits where it does, as the algorithm explains it now
    /// ([`LimitAlgorithm::explain`]; every field `None` for an algorithm that explains
    /// nothing). Reads the clock once and holds the lock the samples take for as long as the
    /// algorithm reads its state: for a status page, not for every request.
    pub fn explain(&self) -> Explanation {
        let now = self.shared.clock.now();
        lock(&self.shared.steering).algorithm.explain(now)
    }

    /// Waits for a permit as [`ConcurrencyLimiter::acquire`] does.
    ///
    /// # Errors
    ///
    /// The limiter's [`Rejected`] outcome.
    ///
    /// # Cancel safety
    ///
    /// As the limiter's: dropping the future leaves the queue at once.
    pub async fn acquire(&self) -> Result<AdaptivePermit, Rejected> {
        // A caller the lock-free path cannot serve waits or is turned away: demand the limit
        // holds back, counted for the algorithm (a relaxed add, off the fast path).
        if let Some(permit) = self.limiter.try_acquire_owned_fast() {
            return Ok(self.wrap(permit));
        }
        // The lock-free path also fails with permits free (a waiter, a moving limit): only a
        // first try in the queue that finds none counts.
        let mut acquire = self.limiter.acquire_owned();
        let mut first = true;
        let permit = std::future::poll_fn(|cx| {
            let polled = Pin::new(&mut acquire).poll(cx);
            if std::mem::take(&mut first) {
                match &polled {
                    Poll::Ready(Ok(_)) => {}
                    Poll::Ready(Err(rejected)) => self.first_try_failed(Some(rejected)),
                    Poll::Pending => self.first_try_failed(None),
                }
            }
            polled
        })
        .await?;
        Ok(self.wrap(permit))
    }

    /// Starts timing a permit acquired from [`limiter()`](Self::limiter) directly — for code
    /// that must poll a nameable future, such as a tower service's `poll_ready` holding an
    /// [`AcquireOwned`](crate::concurrency::AcquireOwned). Call it as soon as the permit is
    /// granted: the sample's start time and in-flight count are taken now.
    ///
    /// A bypass permit is not throttled work: it is released at once when the returned
    /// permit finishes and feeds no sample.
    pub fn wrap(&self, permit: OwnedPermit) -> AdaptivePermit {
        if permit.is_bypass() {
            return AdaptivePermit {
                permit: Some(permit),
                start: Nanos::ZERO,
                excluded: Duration::ZERO,
                in_flight: 0,
                ahead: 0,
                owner: None,
            };
        }
        // Permits out, this one included: the limiter's count too, which keeps the permits
        // released to waiters whose tasks have not run yet (this limiter's own count went
        // down with each release): a waiter handed a permit found every one taken.
        // Of those, the ones whose requests went ahead of this one: the waiters handed a
        // permit at the same moment whose tasks have not run yet go to the resource after it.
        let ahead = self.shared.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        let in_flight = ahead.max(self.limiter.in_flight_now());
        AdaptivePermit {
            permit: Some(permit),
            start: self.shared.clock.now(),
            excluded: Duration::ZERO,
            in_flight,
            ahead,
            owner: Some(self.clone()),
        }
    }

    fn finish(
        &self,
        start: Nanos,
        excluded: Duration,
        (in_flight, ahead): (usize, usize),
        outcome: Outcome,
    ) {
        self.shared.in_flight.fetch_sub(1, Ordering::Relaxed);
        let sample = Sample {
            start,
            latency: (self.shared.clock.now() - start).saturating_sub(excluded),
            in_flight,
            ahead,
            outcome,
        };
        let mut steering = lock(&self.shared.steering);
        steering
            .algorithm
            .on_demand(self.shared.blocked.load(Ordering::Relaxed));
        steering
            .algorithm
            .on_turned_away(self.shared.turned_away.load(Ordering::Relaxed));
        let limit = steering.algorithm.on_sample(&sample);
        // Under the lock: `detach` waits for this, so no limit is set after it returns.
        if !steering.detached && limit != self.limiter.max() {
            apply(&self.limiter, limit);
        }
    }
}

/// The algorithm owns the limit: `reset()` on the limiter returns to this one, not to the
/// builder's (defect 3 of issue 8).
fn apply(limiter: &ConcurrencyLimiter, limit: usize) {
    limiter.set_base_max(limit);
}

/// A permit from an [`AdaptiveLimiter`]. Say how the work ended with [`success`],
/// [`dropped`] or [`ignore`]; dropping it unfinished counts as [`Outcome::Ignored`] (a
/// cancellation says nothing about the resource).
///
/// [`success`]: AdaptivePermit::success
/// [`dropped`]: AdaptivePermit::dropped
/// [`ignore`]: AdaptivePermit::ignore
#[must_use = "dropping the permit releases it at once"]
#[derive(Debug)]
pub struct AdaptivePermit {
    permit: Option<OwnedPermit>,
    start: Nanos,
    /// Time that was not the service's (see [`exclude`](AdaptivePermit::exclude)).
    excluded: Duration,
    in_flight: usize,
    /// Of those, the permits whose requests went ahead of it ([`Sample::ahead`]).
    ahead: usize,
    /// `None` for a bypass permit: nothing to learn from it.
    owner: Option<AdaptiveLimiter>,
}

impl AdaptivePermit {
    /// Releases the permit and feeds the algorithm a sample with `outcome`.
    pub fn finish(mut self, outcome: Outcome) {
        self.release(outcome);
    }

    /// The work succeeded: its latency counts.
    pub fn success(self) {
        self.finish(Outcome::Success);
    }

    /// The work was dropped by overload (a timeout, an overload answer).
    pub fn dropped(self) {
        self.finish(Outcome::Dropped);
    }

    /// The work ended in a way that says nothing about load.
    pub fn ignore(self) {
        self.finish(Outcome::Ignored);
    }

    /// Leaves `time` out of this permit's latency sample: time the work spent waiting on
    /// something that is not the service, such as a client sending its request body slowly
    /// through a proxy. Calls add up; the sample never goes below zero.
    pub fn exclude(&mut self, time: Duration) {
        self.excluded = self.excluded.saturating_add(time);
    }

    /// Permits out when this one started, itself included.
    pub fn in_flight_at_start(&self) -> usize {
        self.in_flight
    }

    fn release(&mut self, outcome: Outcome) {
        if let Some(permit) = self.permit.take() {
            drop(permit);
            if let Some(owner) = &self.owner {
                let counts = (self.in_flight, self.ahead);
                owner.finish(self.start, self.excluded, counts, outcome);
            }
        }
    }
}

impl Drop for AdaptivePermit {
    fn drop(&mut self) {
        self.release(Outcome::Ignored);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive::{Aimd, AimdConfig, Fixed};

    #[tokio::test(start_paused = true)]
    async fn adaptive_limiter_sets_limit_from_algorithm_on_each_sample() {
        let limiter = ConcurrencyLimiter::builder(1).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, Aimd::new(AimdConfig::default()));
        assert_eq!(adaptive.limiter().max(), 20);
        let mut permits = Vec::new();
        for _ in 0..10 {
            permits.push(adaptive.acquire().await.unwrap());
        }
        assert_eq!(permits[9].in_flight_at_start(), 10);
        tokio::time::advance(Duration::from_millis(5)).await;
        // in_flight 10 × 2 ≥ 20 → +1.
        permits.pop().unwrap().success();
        assert_eq!(adaptive.limit(), 21);
        permits.pop().unwrap().dropped();
        assert_eq!(adaptive.limit(), 20); // floor(21 × 0.9) = 18, clamped to min 20
    }

    /// Polls `f` once, with a waker that does nothing.
    fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        Pin::new(f).poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    }

    /// A waiter handed a released permit found every permit taken, however late its task
    /// runs to take it. Defect pinned (review 27): the count of permits out was the adaptive
    /// limiter's own, lowered by each release before the waiters handed those permits had run;
    /// in front of a fixed 50 ms service, whose answers come in bursts, a third of the requests
    /// that had waited in a queue of 400 read as having found a permit free, the slow start
    /// never saw its limit bind, and the gate held 20 permits for 25 out, turning away 15 %
    /// of a load at half the upstream's capacity.
    #[test]
    fn a_waiter_handed_a_permit_found_every_permit_taken() {
        let limiter = ConcurrencyLimiter::builder(2).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, Fixed::new(2));
        let (mut a, mut b) = (Box::pin(adaptive.acquire()), Box::pin(adaptive.acquire()));
        let (Poll::Ready(Ok(a)), Poll::Ready(Ok(b))) = (poll_once(&mut a), poll_once(&mut b))
        else {
            panic!("two permits free");
        };
        let mut waiters = [Box::pin(adaptive.acquire()), Box::pin(adaptive.acquire())];
        assert!(waiters.iter_mut().all(|w| poll_once(w).is_pending()));
        // Both running requests end before either waiter's task runs.
        a.success();
        b.success();
        let mut held = Vec::new();
        for waiter in &mut waiters {
            let Poll::Ready(Ok(p)) = poll_once(waiter) else {
                panic!("handed a permit");
            };
            assert_eq!(
                p.in_flight_at_start(),
                2,
                "it waited: every permit was taken"
            );
            held.push(p);
        }
    }

    /// Waiters handed permits at one instant all found every permit taken, but go to the
    /// resource in the order their tasks run: each counts ahead of it only the permits whose
    /// tasks ran before its own (`Sample::ahead`), not the ones handed with it that run after.
    #[test]
    fn waiters_handed_permits_at_once_count_ahead_only_the_ones_that_ran_first() {
        let limiter = ConcurrencyLimiter::builder(3).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, Fixed::new(3));
        let mut running = Vec::new();
        for _ in 0..3 {
            let mut a = Box::pin(adaptive.acquire());
            let Poll::Ready(Ok(p)) = poll_once(&mut a) else {
                panic!("three permits free");
            };
            running.push(p);
        }
        let mut waiters = [Box::pin(adaptive.acquire()), Box::pin(adaptive.acquire())];
        assert!(waiters.iter_mut().all(|w| poll_once(w).is_pending()));
        // Two of the running requests end before either waiter's task runs.
        running.pop().unwrap().success();
        running.pop().unwrap().success();
        let mut held = Vec::new();
        for (i, waiter) in waiters.iter_mut().enumerate() {
            let Poll::Ready(Ok(p)) = poll_once(waiter) else {
                panic!("handed a permit");
            };
            assert_eq!(
                (p.in_flight_at_start(), p.ahead),
                (3, 2 + i),
                "waiter {i}: every permit taken, the ones ahead of it the one still running \
                 and the waiters that ran before it"
            );
            held.push(p);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn wrapped_permit_from_the_limiter_feeds_samples_and_bypass_does_not() {
        let limiter = ConcurrencyLimiter::builder(1).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, Aimd::new(AimdConfig::default()));
        let mut held = Vec::new();
        for _ in 0..9 {
            held.push(adaptive.wrap(adaptive.limiter().acquire_owned().await.unwrap()));
        }
        let p = adaptive.wrap(adaptive.limiter().acquire_owned().await.unwrap());
        assert_eq!(p.in_flight_at_start(), 10);
        p.success();
        assert_eq!(adaptive.limit(), 21);
        adaptive.wrap(adaptive.limiter().acquire_bypass()).dropped();
        assert_eq!(adaptive.limit(), 21, "a bypass permit teaches nothing");
        drop(held);
    }

    /// The kill switch of an adaptive limit is `close()`: the algorithm owns the limit, so a
    /// `set_max(0)` on the wrapped limiter lasts only until the next sample (a request that
    /// was running when it was set) and its waiters are then admitted; a closed limiter
    /// stays closed whatever the samples say.
    #[tokio::test(start_paused = true)]
    async fn close_holds_an_adaptive_limit_and_set_max_lasts_until_the_next_sample() {
        let limiter = ConcurrencyLimiter::builder(1).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, Aimd::new(AimdConfig::default()));
        let (a, b) = (
            adaptive.acquire().await.unwrap(),
            adaptive.acquire().await.unwrap(),
        );
        adaptive.limiter().set_max(0).unwrap();
        let mut waiter = tokio_test::task::spawn(adaptive.acquire());
        assert!(waiter.poll().is_pending());
        a.success();
        assert_eq!(adaptive.limit(), 20, "the algorithm's limit is back");
        assert!(waiter.poll().is_ready(), "and the waiter got in");

        adaptive.limiter().close();
        b.success();
        assert!(adaptive.limiter().is_closed());
        assert!(adaptive.limiter().try_acquire().unwrap_err().is_closed());
    }

    /// A detached limiter keeps the limit `set_max` gives it: a finished request's sample
    /// no longer raises it (it did, and started the waiters a limit of 0 held).
    #[tokio::test(start_paused = true)]
    async fn a_detached_limiter_keeps_the_limit_set_by_hand() {
        let limiter = ConcurrencyLimiter::builder(1).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, Aimd::new(AimdConfig::default()));
        let (a, b) = (
            adaptive.acquire().await.unwrap(),
            adaptive.acquire().await.unwrap(),
        );
        adaptive.detach();
        adaptive.limiter().set_max(0).unwrap();
        let mut waiter = tokio_test::task::spawn(adaptive.acquire());
        assert!(waiter.poll().is_pending());
        a.success();
        b.dropped();
        assert_eq!(adaptive.limit(), 0);
        assert!(
            waiter.poll().is_pending(),
            "nothing starts under a limit of 0"
        );
        adaptive.limiter().set_max(1).unwrap();
        assert!(waiter.poll().is_ready());
    }

    /// The limiter hands on the algorithm's explanation, timed on its own clock: Little's law
    /// names its phase and when the limit last moved; an algorithm that explains nothing
    /// gives an empty one.
    #[tokio::test(start_paused = true)]
    async fn explain_reads_the_algorithm_on_the_limiter_clock() {
        use crate::adaptive::{Explanation, LittlesLaw, LittlesLawConfig, Phase};
        let limiter = ConcurrencyLimiter::builder(1).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, Aimd::new(AimdConfig::default()));
        adaptive.acquire().await.unwrap().success();
        assert_eq!(adaptive.explain(), Explanation::default());

        let limiter = ConcurrencyLimiter::builder(1).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, LittlesLaw::new(LittlesLawConfig::default()));
        let e = adaptive.explain();
        assert_eq!(
            (e.phase, e.steered_limit, e.shared),
            (Some(Phase::WarmingUp), Some(20), Some(false))
        );
        assert_eq!(e.last_change, None);
    }

    #[tokio::test(start_paused = true)]
    async fn adaptive_permit_dropped_unfinished_counts_as_ignored_and_releases() {
        let limiter = ConcurrencyLimiter::builder(1).build().unwrap();
        let adaptive = AdaptiveLimiter::new(limiter, Fixed::new(3));
        let p = adaptive.acquire().await.unwrap();
        drop(p);
        let snap = adaptive.limiter().snapshot();
        assert_eq!((snap.in_flight, snap.completed, snap.limit), (0, 1, 3));
    }
}
