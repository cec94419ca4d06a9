//! Global sliding window: per-slice counts in one packed Redis string, one script call per
//! decision.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use sluicegate::clock::MonotonicClock;
use sluicegate::rate::sliding::{WindowParams, evaluate};
use sluicegate::rate::{CheckError, Decision, QuotaError, SlidingWindow};

use super::packed::{pack, unpack};
use super::{Verdict, share};
use crate::store::key;
use crate::{Error, FailurePolicy, RedisStore, Source};

static SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("sliding.lua")));

/// A sliding-window rate limit shared by every instance that uses the same store and name:
/// at most `limit` in any aligned window, `limit · (1 + 1/slices)` in any interval of the
/// window's length, like [`sluicegate::rate::SlidingWindow`].
///
/// Slices are aligned to Redis's clock and are whole microseconds long (the window is
/// rounded down to that). Each decision is one `EVALSHA`.
///
/// # Examples
///
/// ```no_run
/// # use sluicegate_redis::{GlobalWindow, RedisStore};
/// # use std::time::Duration;
/// # async fn demo(store: RedisStore) -> Result<(), sluicegate_redis::Error> {
/// let limit = GlobalWindow::builder(&store, "search", 600, Duration::from_secs(60))
///     .slices(12)
///     .build()?;
/// let _ = limit.check().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GlobalWindow {
    store: RedisStore,
    key: String,
    params: WindowParams,
    slice_us: u64,
    /// The ring's expiry, set at each slice's first admission: the window, a slice and a
    /// second.
    expiry_ms: u64,
    policy: FailurePolicy,
    local: SlidingWindow,
}

/// Settings for a [`GlobalWindow`].
#[derive(Debug)]
#[must_use]
pub struct WindowBuilder<'a> {
    store: &'a RedisStore,
    name: String,
    limit: u32,
    window: Duration,
    slices: u32,
    policy: FailurePolicy,
    instances: u32,
}

impl GlobalWindow {
    /// The most slices a global window may have (each decision reads all of them).
    pub const MAX_SLICES: u32 = 64;

    /// A limit named `name` of at most `limit` per `window`, in 10 slices by default.
    pub fn builder<'a>(
        store: &'a RedisStore,
        name: &str,
        limit: u32,
        window: Duration,
    ) -> WindowBuilder<'a> {
        WindowBuilder {
            store,
            name: name.to_owned(),
            limit,
            window,
            slices: SlidingWindow::<MonotonicClock>::DEFAULT_SLICES,
            policy: FailurePolicy::default(),
            instances: 1,
        }
    }

    /// Checks one request.
    ///
    /// # Cancel safety
    ///
    /// As [`GlobalGcra::check`](crate::GlobalGcra::check).
    pub async fn check(&self) -> Decision {
        match self.check_n(1).await {
            Ok(d) => d,
            // Unreachable: a limit of 0 denies without an error, any other allows one.
            Err(_) => self.full(),
        }
    }

    /// Checks `n` requests at once: all are allowed or none.
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the limit.
    pub async fn check_n(&self, n: u32) -> Result<Decision, CheckError> {
        Ok(self.decide(n).await?.decision)
    }

    /// Like [`check_n`](Self::check_n), saying who decided and at what Redis time.
    ///
    /// # Errors
    ///
    /// As [`check_n`](Self::check_n).
    pub async fn decide(&self, n: u32) -> Result<Verdict, CheckError> {
        let fresh = evaluate(self.params, |_| 0, 0, n)?;
        if self.params.limit == 0 {
            return Ok(Verdict::new(fresh, Source::Redis));
        }
        let (limit, slices) = (self.params.limit, self.params.slices);
        let mut call = SCRIPT.key(&self.key);
        call.arg(pack([
            u64::from(slices),
            self.slice_us,
            u64::from(limit - n),
            self.params.edge_cap() - u64::from(n),
            u64::from(n),
            self.expiry_ms,
        ]));
        let reply: Option<Vec<u8>> = self.store.call(&call).await;
        let decided = match reply.as_deref().and_then(unpack).as_deref() {
            // Admitted: the window's count and the leaving slice's, all the rule needs.
            Some(&[-1, us, window, oldest]) => {
                let slices = slices as usize;
                let count = |j: usize| match j {
                    0 => oldest,
                    j if j == slices => window,
                    _ => 0,
                };
                Some((us, self.evaluate_at(count, us, n)))
            }
            Some([age, us, stored @ ..])
                if stored.is_empty() || stored.len() == slices as usize + 1 =>
            {
                let age = usize::try_from(*age).unwrap_or(usize::MAX);
                let count = |j: usize| {
                    j.checked_add(age)
                        .and_then(|k| stored.get(k))
                        .map_or(0, |&c| c)
                };
                Some((*us, self.evaluate_at(count, *us, n)))
            }
            _ => None,
        };
        match decided {
            Some((us, decision)) => Ok(Verdict::from_redis(
                decision?,
                us / 1_000_000,
                us % 1_000_000,
            )),
            None => {
                let decision = match self.policy {
                    FailurePolicy::Local => self.local.check_n(n)?,
                    FailurePolicy::Allow => evaluate(self.params, |_| 0, 0, 0)?,
                    FailurePolicy::Deny => self.unavailable(),
                };
                Ok(Verdict::new(decision, Source::Fallback(self.policy)))
            }
        }
    }

    /// The rule on the counts the script read (`count(j)`, 0 = the slice about to leave) at
    /// Redis's time `us` (µs since 1970).
    fn evaluate_at(
        &self,
        count: impl Fn(usize) -> i64,
        us: i64,
        n: u32,
    ) -> Result<Decision, CheckError> {
        let into = u64::try_from(us).unwrap_or(0) % self.slice_us * 1000;
        evaluate(
            self.params,
            |j| u64::try_from(count(j)).unwrap_or(0),
            into,
            n,
        )
    }

    /// The most admitted per window.
    pub fn limit(&self) -> u32 {
        self.params.limit
    }

    /// The window (rounded down to whole microseconds per slice).
    pub fn window(&self) -> Duration {
        Duration::from_nanos(self.params.slice_ns * u64::from(self.params.slices))
    }

    /// `Deny`'s answer while Redis does not decide: retry when the store next asks Redis
    /// (before that a retry gets the same denial; after it Redis decides, however full the
    /// window). It answered as a window full in its current slice, "retry after the whole
    /// window", however soon Redis was back. Whole again (`reset_after`) once the counts
    /// made so far have left the window and its edge slice, as a full window's, or at the
    /// hint if later.
    fn unavailable(&self) -> Decision {
        let retry = self.store.retry_hint();
        let reset = self.full().reset_after().max(retry);
        Decision::deny(self.params.limit, 0, retry, reset)
    }

    /// The decision of a full window.
    fn full(&self) -> Decision {
        let (limit, slices) = (self.params.limit, self.params.slices as usize);
        let count = |j: usize| if j == slices { u64::from(limit) } else { 0 };
        evaluate(self.params, count, 0, 1).unwrap_or_else(|_| unreachable!("1 fits any limit"))
    }
}

impl WindowBuilder<'_> {
    /// Slices per window, 1 to [`GlobalWindow::MAX_SLICES`] (default 10; 1 is a fixed
    /// window).
    pub fn slices(mut self, slices: u32) -> Self {
        self.slices = slices;
        self
    }

    crate::policy::failure_settings!();

    /// Builds the limit.
    ///
    /// # Errors
    ///
    /// [`Error::Name`] for a name that cannot sit in a hash tag; [`Error::Slices`] for a
    /// slice count out of range; [`Error::Quota`] for a zero window; [`Error::Range`] for
    /// slices shorter than a microsecond or a window too long to count in microseconds.
    pub fn build(self) -> Result<GlobalWindow, Error> {
        let key = key(self.store.prefix(), &self.name, "ringsum")?;
        if self.window.is_zero() {
            return Err(QuotaError::ZeroPeriod.into());
        }
        if self.slices == 0 || self.slices > GlobalWindow::MAX_SLICES {
            return Err(Error::Slices {
                slices: self.slices,
                max: GlobalWindow::MAX_SLICES,
            });
        }
        let slice_us = u64::try_from(self.window.as_micros() / u128::from(self.slices))
            .map_err(|_| Error::Range("window too long"))?;
        if slice_us == 0 {
            // Not `QuotaError::WindowTooShort`: its text asks for a nanosecond per slice,
            // the local window's bound, which a window refused here has.
            return Err(Error::Range(
                "a global window needs at least a microsecond per slice (its slices are \
                 whole microseconds)",
            ));
        }
        // `ringsum`: one packed string with the counts' total in front (a new name for each
        // format, so that instances of two versions never misread each other's state
        // during a rolling upgrade; docs/global-limits.md). Its shape in the name too:
        // instances cut into different slices (a rolling change of the window) each read
        // the other's ring as empty and overwrote it, and the limit held nothing while both
        // ran; under keys of their own each shape holds its limit.
        let key = format!("{key}:{}x{slice_us}us", self.slices);
        let local = SlidingWindow::with_clock(
            share(self.limit, self.instances),
            self.window,
            self.slices,
            MonotonicClock,
        )?;
        Ok(GlobalWindow {
            store: self.store.clone(),
            key,
            params: WindowParams {
                limit: self.limit,
                slices: self.slices,
                slice_ns: slice_us.saturating_mul(1000),
            },
            slice_us,
            expiry_ms: (u64::from(self.slices) + 1)
                .saturating_mul(slice_us)
                .div_ceil(1000)
                .saturating_add(1000),
            policy: self.policy,
            local,
        })
    }
}
