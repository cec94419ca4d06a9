//! The limiter handle and its builder.

use std::future::Future;
use std::time::Duration;

use super::core::{Config, Inner};
use super::error::{ConfigError, Rejected};
use super::future::{Acquire, AcquireOwned, Drain, Wait};
use super::permit::{OwnedPermit, Permit, PermitKind};
use super::queue::QueueOrder;
use super::snapshot::Snapshot;
use super::state::MAX_PERMITS;
use crate::clock::{Clock, TokioClock};
use crate::sync::Arc;

/// Limits how much work runs at once; callers beyond the limit wait in a bounded queue.
///
/// A cheap handle: clones share one limit, so two routes (or three calls fanned out from
/// one request) that use the same resource share its permits. See the
/// [module docs](super) for the semantics in full.
///
/// # Examples
///
/// ```
/// use sluicegate::concurrency::ConcurrencyLimiter;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let db = ConcurrencyLimiter::new(2);
/// let report = db.clone(); // shares the two permits
///
/// let a = db.acquire().await.unwrap();
/// let b = report.try_acquire().unwrap();
/// assert!(db.try_acquire().is_err()); // both permits are out
/// drop((a, b));
///
/// db.set_max(0).unwrap(); // kill switch: nothing new starts
/// assert!(db.try_acquire().is_err());
/// db.reset().await; // back to the configured 2
/// assert_eq!(db.max(), 2);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct ConcurrencyLimiter {
    inner: Arc<Inner>,
}

/// Settings for a [`ConcurrencyLimiter`], from [`ConcurrencyLimiter::builder`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use sluicegate::concurrency::{ConcurrencyLimiter, QueueOrder};
///
/// let limiter = ConcurrencyLimiter::builder(8)
///     .max_queue(100)
///     .queue_timeout(Duration::from_millis(500))
///     .order(QueueOrder::Lifo)
///     .predictive(true)
///     .build()?;
/// assert_eq!(limiter.max(), 8);
/// # Ok::<_, sluicegate::concurrency::ConfigError>(())
/// ```
#[must_use = "call build() to get a limiter"]
pub struct Builder {
    config: Config,
    clock: std::sync::Arc<dyn Clock>,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Builder {
    /// How many callers may wait when every permit is taken (default
    /// [`ConcurrencyLimiter::DEFAULT_MAX_QUEUE`]); `0` rejects at once.
    pub fn max_queue(mut self, max_queue: usize) -> Self {
        self.config.max_queue = max_queue;
        self
    }

    /// How long a caller waits in the queue before giving up with
    /// [`Rejected::QueueTimeout`] (default: no timeout). An async caller waits on a tokio
    /// timer: it needs a runtime with time enabled (see the [module docs](super#runtime)).
    pub fn queue_timeout(mut self, timeout: Duration) -> Self {
        self.config.queue_timeout = Some(timeout);
        self
    }

    /// The order waiters are served in within one priority (default FIFO).
    pub fn order(mut self, order: QueueOrder) -> Self {
        self.config.order = order;
        self
    }

    /// Turn away at once a caller whose expected wait exceeds its timeout
    /// ([`Rejected::PredictedTimeout`]), instead of letting it time out later. Off by
    /// default; needs a queue timeout. The first caller to wait (an empty queue) is never
    /// turned away: the estimate learns only from releases while someone waits, so it
    /// always gets a waiter to correct it.
    pub fn predictive(mut self, on: bool) -> Self {
        self.config.predictive = on;
        self
    }

    /// The limiter's clock (default [`TokioClock`]). It times everything the limiter
    /// measures: release intervals for predictive rejection, the deadline of
    /// [`acquire_blocking`](ConcurrencyLimiter::acquire_blocking), and the samples of an
    /// [`AdaptiveLimiter`](crate::adaptive::AdaptiveLimiter) wrapped around it.
    ///
    /// The queue timeout of an async [`acquire`](ConcurrencyLimiter::acquire) is a tokio
    /// timer, which must wake a task that sleeps; it follows tokio's time, and the default
    /// `TokioClock` reads that same time, so a paused runtime (`tokio::time::pause` /
    /// `advance`) drives the timeouts and everything above together. A [`FakeClock`]
    /// drives everything above but not async queue timeouts.
    ///
    /// [`FakeClock`]: crate::clock::FakeClock
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = std::sync::Arc::new(clock);
        self
    }

    /// Builds the limiter.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when the settings cannot work: a limit beyond what can be counted, a
    /// zero queue timeout, predictive rejection without a timeout.
    pub fn build(self) -> Result<ConcurrencyLimiter, ConfigError> {
        let config = self.config;
        check_max(config.max)?;
        if config.queue_timeout == Some(Duration::ZERO) {
            return Err(ConfigError::ZeroQueueTimeout);
        }
        if config.predictive && config.queue_timeout.is_none() {
            return Err(ConfigError::PredictiveWithoutTimeout);
        }
        Ok(ConcurrencyLimiter {
            inner: Arc::new(Inner::new(config, self.clock)),
        })
    }
}

/// The end of a [`ConcurrencyLimiter::reset`], run also when its future is dropped during
/// the drain: a reset given up on must not leave the limiter closed for good. Holds which
/// close was the reset's own: a later one stands, and a reopen since has ended it already.
struct EndOfReset<'a>(&'a Inner, u64);

impl Drop for EndOfReset<'_> {
    fn drop(&mut self) {
        self.0.end_reset(self.1);
    }
}

fn check_max(max: u64) -> Result<(), ConfigError> {
    if max > MAX_PERMITS {
        return Err(ConfigError::MaxTooLarge {
            requested: usize::try_from(max).unwrap_or(usize::MAX),
            allowed: MAX_PERMITS as usize,
        });
    }
    Ok(())
}

impl ConcurrencyLimiter {
    /// The largest limit a limiter can have.
    pub const MAX_PERMITS: usize = MAX_PERMITS as usize;

    /// The queue bound when none is set.
    pub const DEFAULT_MAX_QUEUE: usize = 1024;

    /// A limiter of `max` permits with the default queue (up to [`Self::DEFAULT_MAX_QUEUE`]
    /// waiters, no timeout, FIFO).
    ///
    /// # Panics
    ///
    /// If `max` exceeds [`Self::MAX_PERMITS`]; use [`builder`](Self::builder) to get an
    /// error instead.
    pub fn new(max: usize) -> Self {
        Self::builder(max)
            .build()
            .unwrap_or_else(|e| panic!("invalid concurrency limit: {e}"))
    }

    /// Starts configuring a limiter of `max` permits.
    pub fn builder(max: usize) -> Builder {
        Builder {
            config: Config {
                max: u64::try_from(max).unwrap_or(u64::MAX),
                max_queue: Self::DEFAULT_MAX_QUEUE,
                queue_timeout: None,
                order: QueueOrder::Fifo,
                predictive: false,
            },
            clock: std::sync::Arc::new(TokioClock),
        }
    }

    /// Takes a permit if one is free and nobody waits; never waits.
    ///
    /// # Errors
    ///
    /// [`Rejected::QueueFull`] when no permit is free (as if `max_queue` were 0),
    /// [`Rejected::Closed`] when closed.
    #[inline]
    pub fn try_acquire(&self) -> Result<Permit<'_>, Rejected> {
        if self.inner.try_acquire_fast() {
            return Ok(Permit { inner: &self.inner });
        }
        self.inner
            .try_acquire()
            .map(|()| Permit { inner: &self.inner })
    }

    /// As [`try_acquire`](Self::try_acquire), with a permit that owns a handle to the
    /// limiter (for response futures, bodies and spawned tasks).
    ///
    /// # Errors
    ///
    /// As [`try_acquire`](Self::try_acquire).
    #[inline]
    pub fn try_acquire_owned(&self) -> Result<OwnedPermit, Rejected> {
        if !self.inner.try_acquire_fast() {
            self.inner.try_acquire()?;
        }
        Ok(OwnedPermit {
            inner: self.inner.clone(),
            kind: PermitKind::Throttled,
        })
    }

    /// The lock-free path alone: a permit if one is free and nobody waits, else `None`
    /// with nothing counted (for callers that go on to wait in the queue).
    #[inline]
    pub(crate) fn try_acquire_owned_fast(&self) -> Option<OwnedPermit> {
        self.inner.try_acquire_fast().then(|| OwnedPermit {
            inner: self.inner.clone(),
            kind: PermitKind::Throttled,
        })
    }

    /// Waits for a permit, in the queue if every permit is taken.
    ///
    /// The future resolves to the permit, or to why there is none ([`Rejected`]). Use
    /// `.priority(..)` and `.timeout(..)` on it to change this call's priority and timeout.
    ///
    /// # Panics
    ///
    /// When it has to wait with a queue timeout outside a tokio runtime with time enabled
    /// (as `tokio::time::sleep` does; see the [module docs](super#runtime)).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the queue at once; nothing is leaked and no wake-up is lost.
    pub fn acquire(&self) -> Acquire<'_> {
        Acquire {
            inner: &self.inner,
            wait: Wait::new(self.inner.config.queue_timeout),
        }
    }

    /// As [`acquire`](Self::acquire), with a permit that owns a handle to the limiter.
    pub fn acquire_owned(&self) -> AcquireOwned {
        AcquireOwned {
            inner: Some(self.inner.clone()),
            wait: Wait::new(self.inner.config.queue_timeout),
        }
    }

    /// A permit that skips the limit: for work that must never be throttled (a health
    /// check, the request that turns the kill switch back off). Counted separately; never
    /// takes a throttled permit and never delays throttled work. Works while closed.
    pub fn acquire_bypass(&self) -> OwnedPermit {
        self.inner.bypass_acquire();
        OwnedPermit {
            inner: self.inner.clone(),
            kind: PermitKind::Bypass,
        }
    }

    /// Runs `work` under a permit: acquire, run, release. The "limit the function, not the
    /// route" helper.
    ///
    /// # Errors
    ///
    /// The [`Rejected`] outcome if no permit was granted; `work` did not run.
    pub async fn run<F: Future>(&self, work: F) -> Result<F::Output, Rejected> {
        let _permit = self.acquire().await?;
        Ok(work.await)
    }

    /// Changes the limit at run time. Raising it admits waiters at once; lowering it never
    /// interrupts running work (new admissions wait until in-flight falls below the new
    /// limit); `0` pauses: nothing new starts, and queued callers wait until their timeout
    /// or a raise.
    ///
    /// On a limiter an [`AdaptiveLimiter`](crate::adaptive::AdaptiveLimiter) drives, the
    /// algorithm sets the limit again at its next sample: there the kill switch is
    /// [`close`](Self::close), or [`detach`](crate::adaptive::AdaptiveLimiter::detach) the
    /// algorithm first.
    ///
    /// # Errors
    ///
    /// [`ConfigError::MaxTooLarge`] beyond [`Self::MAX_PERMITS`]; the limit is unchanged.
    pub fn set_max(&self, max: usize) -> Result<(), ConfigError> {
        let max = u64::try_from(max).unwrap_or(u64::MAX);
        check_max(max)?;
        self.inner.set_max(max, false);
        Ok(())
    }

    /// Sets the limit and makes it the one [`reset`](Self::reset) returns to: for the
    /// adaptive limiter, whose algorithm owns the limit. Clamped to [`Self::MAX_PERMITS`].
    pub(crate) fn set_base_max(&self, max: usize) {
        let max = u64::try_from(max).unwrap_or(u64::MAX).min(MAX_PERMITS);
        self.inner.set_max(max, true);
    }

    /// The current limit.
    pub fn max(&self) -> usize {
        self.inner.max() as usize
    }

    /// Throttled permits held now (see `Inner::in_flight_now`).
    pub(crate) fn in_flight_now(&self) -> usize {
        self.inner.in_flight_now() as usize
    }

    /// Rejects every waiter and every later acquire with [`Rejected::Closed`]. Permits
    /// already held stay valid.
    pub fn close(&self) {
        self.inner.close();
    }

    /// Opens a closed limiter again, keeping its current limit. While a
    /// [`reset`](Self::reset) drains, the open is that reset's end: the limiter opens with the
    /// reset's limit, and the reset returns at once (see there).
    pub fn open(&self) {
        self.inner.open();
    }

    /// Whether the limiter is closed.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Resolves once no throttled permit is held. Does not stop new ones: close first for
    /// that (or use [`reset`](Self::reset)).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future takes its registration back: the limiter keeps no waker of a
    /// drain given up on.
    pub fn drain(&self) -> Drain<'_> {
        Drain::new(&self.inner)
    }

    /// Cancels everything that waits, waits for everything that runs, then opens again with
    /// the configured limit: the one given at construction or, for a limiter an
    /// [`AdaptiveLimiter`](crate::adaptive::AdaptiveLimiter) drives, the algorithm's latest.
    /// A limit set with [`set_max`](Self::set_max) (a kill switch of 0, say) is an override
    /// that `reset` undoes. Callers that queued meanwhile (after an [`open`](Self::open)
    /// during the drain) are served as soon as the limit allows.
    ///
    /// # Overlapping control calls
    ///
    /// The later word stands, and a reset whose limiter is open again is over:
    ///
    /// - An [`open`](Self::open) while a reset drains is the reset's end: the limiter opens
    ///   with the reset's limit and the reset returns, though work still runs. It no longer
    ///   waits for that work, and a [`set_max`](Self::set_max) after the open stands.
    /// - Two resets may overlap: the end of the later one (finished, or given up on) reopens,
    ///   and is the earlier one's end too. The earlier one ending first (given up on, or
    ///   finished with the later) leaves the limiter closed to the later one.
    /// - A [`close`](Self::close) while a reset drains is the later word: the reset
    ///   finishes once nothing runs, and the limiter stays closed, at the limit it had —
    ///   unless an `open` lifts that close, which ends the reset as above.
    /// - A reset may overlap a [`drain`](Self::drain), which finishes once nothing runs.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before the drain ends (a reset under `tokio::time::timeout`,
    /// say) reopens at once, with the configured limit, as the end of the reset would: it
    /// only gives up waiting for what runs. It never leaves the limiter closed, unless
    /// [`close`](Self::close) was called meanwhile (and not lifted), or another reset
    /// started since is still draining (its end reopens).
    pub async fn reset(&self) {
        let its_close = self.inner.start_reset();
        let _end = EndOfReset(&self.inner, its_close);
        Drain::of_reset(&self.inner, its_close).await;
    }

    /// Gauges and counters as of now.
    pub fn snapshot(&self) -> Snapshot {
        self.inner.snapshot()
    }

    /// Tests only: see [`Inner::start_completed_at`].
    #[cfg(test)]
    pub(crate) fn start_completed_at(&self, n: u64) {
        self.inner.start_completed_at(n);
    }

    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }
}
