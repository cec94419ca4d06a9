//! Time sources: every limiter reads time through a [`Clock`], so tests and the simulator
//! can drive it.
//!
//! | clock | reads | use it for |
//! |---|---|---|
//! | [`MonotonicClock`] | `std::time::Instant` (~27 ns a read) | the default outside tokio |
//! | [`TokioClock`] | `tokio::time::Instant` | code under tokio; honours `tokio::time::pause` |
//! | [`CoarseClock`] | an atomic updated by a background thread | hot paths that can live with ~1 ms resolution |
//! | [`FakeClock`] | an atomic you move by hand | tests and simulations |

use std::fmt;
use std::ops::{Add, Sub};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A point in time: nanoseconds since the clock's epoch.
///
/// Only differences between two `Nanos` read from the same clock mean anything.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nanos(u64);

impl Nanos {
    /// The epoch itself.
    pub const ZERO: Nanos = Nanos(0);

    /// A point `nanos` nanoseconds after the epoch.
    #[inline]
    pub const fn new(nanos: u64) -> Self {
        Nanos(nanos)
    }

    /// Nanoseconds since the epoch.
    #[inline]
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// Time from `earlier` to `self`, or zero if `earlier` is later.
    #[inline]
    pub fn saturating_since(self, earlier: Nanos) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl fmt::Debug for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", Duration::from_nanos(self.0))
    }
}

impl From<Duration> for Nanos {
    #[inline]
    fn from(d: Duration) -> Self {
        Nanos(saturating_nanos(d))
    }
}

impl Add<Duration> for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, d: Duration) -> Nanos {
        Nanos(self.0.saturating_add(saturating_nanos(d)))
    }
}

impl Sub<Nanos> for Nanos {
    type Output = Duration;
    #[inline]
    fn sub(self, earlier: Nanos) -> Duration {
        self.saturating_since(earlier)
    }
}

/// `d` in nanoseconds, saturating at `u64::MAX` (about 584 years).
#[inline]
pub(crate) fn saturating_nanos(d: Duration) -> u64 {
    // Seconds and sub-second parts rather than `as_nanos()`: no 128-bit arithmetic on the
    // clock read path.
    d.as_secs()
        .checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(u64::from(d.subsec_nanos())))
        .unwrap_or(u64::MAX)
}

/// A monotonic time source.
///
/// Its readings are nanoseconds since an epoch of its own; the clocks here read 0 at the
/// process's first reading ([`FakeClock`] at its creation), [`TokioClock`] one hour (so that
/// a runtime paused before that reading still reads a time that moves). A clock of your own should
/// start near 0 too: the GCRA limiters keep their state on the same scale, and far along it they
/// stop limiting — past 2^63 ns (292 years) a [`KeyedGcra`](crate::keyed::KeyedGcra)
/// admits every request, and so does a [`Gcra`](crate::rate::Gcra) once the clock stands at
/// its last instant (`u64::MAX`). The clocks here take 292 years to get there.
pub trait Clock: Send + Sync + 'static {
    /// The current time. Never goes backwards.
    fn now(&self) -> Nanos;

    /// Whether time moves only when a test or simulation moves it ([`FakeClock`]), rather
    /// than with real time. Code that sleeps in real time until a deadline on this clock
    /// (the blocking acquire) then checks back often instead of sleeping the whole wait.
    fn is_manual(&self) -> bool {
        false
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    #[inline]
    fn now(&self) -> Nanos {
        (**self).now()
    }

    fn is_manual(&self) -> bool {
        (**self).is_manual()
    }
}

#[inline]
fn std_epoch() -> std::time::Instant {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// The operating system's monotonic clock (`std::time::Instant`).
#[derive(Clone, Copy, Debug, Default)]
pub struct MonotonicClock;

impl Clock for MonotonicClock {
    #[inline]
    fn now(&self) -> Nanos {
        Nanos::from(std_epoch().elapsed())
    }
}

/// tokio's clock (`tokio::time::Instant`): follows `tokio::time::pause` and `advance`, so code
/// under a paused runtime sees virtual time. Outside a runtime it reads the system clock.
///
/// Its readings start at one hour at the process's first reading, not 0: a paused runtime's
/// time starts at the real instant it was paused, which may come before the first reading
/// (set-up that takes real time), and from 0 such a reading could only saturate — time would
/// stand still until virtual time caught up. The hour is added to the readings rather than
/// taken off the epoch, so it holds on every platform, however soon after boot.
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioClock;

/// What [`TokioClock`] reads at the process's first reading: one hour, in nanoseconds.
const TOKIO_FIRST_READING_NS: u64 = 3_600_000_000_000;

impl Clock for TokioClock {
    #[inline]
    fn now(&self) -> Nanos {
        let first = tokio::time::Instant::from_std(std_epoch());
        let now = tokio::time::Instant::now();
        Nanos(match now.checked_duration_since(first) {
            Some(after) => TOKIO_FIRST_READING_NS.saturating_add(saturating_nanos(after)),
            None => TOKIO_FIRST_READING_NS.saturating_sub(saturating_nanos(first - now)),
        })
    }
}

/// A clock that moves only when told to. Clones share one time.
///
/// # Examples
///
/// ```
/// use sluicegate::clock::{Clock, FakeClock};
/// use std::time::Duration;
///
/// let clock = FakeClock::new();
/// let view = clock.clone();
/// clock.advance(Duration::from_millis(5));
/// assert_eq!(view.now().as_u64(), 5_000_000);
/// ```
#[derive(Clone, Debug, Default)]
pub struct FakeClock {
    nanos: Arc<AtomicU64>,
}

impl FakeClock {
    /// A fake clock at its epoch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves time forward by `d`, stopping at the last representable instant.
    pub fn advance(&self, d: Duration) {
        let d = saturating_nanos(d);
        let _ = self
            .nanos
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_add(d))
            });
    }

    /// Sets the time to `t`; ignored if `t` is earlier than now (the clock is monotonic).
    pub fn set(&self, t: Nanos) {
        self.nanos.fetch_max(t.as_u64(), Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    #[inline]
    fn now(&self) -> Nanos {
        Nanos(self.nanos.load(Ordering::SeqCst))
    }

    fn is_manual(&self) -> bool {
        true
    }
}

/// A cheap clock for hot paths: one relaxed atomic load a read. A background thread stores
/// the monotonic time every `resolution`, so readings lag real time by at most about that.
///
/// The thread stops once every clone of the clock has been dropped.
#[derive(Clone, Debug)]
pub struct CoarseClock {
    // The background thread holds only a weak handle, so it ends once the last clone is gone.
    nanos: Arc<AtomicU64>,
}

impl CoarseClock {
    /// A coarse clock updated every millisecond.
    pub fn new() -> Self {
        Self::with_resolution(Duration::from_millis(1))
    }

    /// A coarse clock updated every `resolution` (at least 100 µs).
    pub fn with_resolution(resolution: Duration) -> Self {
        let resolution = resolution.max(Duration::from_micros(100));
        let nanos = Arc::new(AtomicU64::new(MonotonicClock.now().as_u64()));
        let weak = Arc::downgrade(&nanos);
        std::thread::Builder::new()
            .name("sluicegate-coarse-clock".into())
            .spawn(move || {
                while let Some(nanos) = weak.upgrade() {
                    nanos.store(MonotonicClock.now().as_u64(), Ordering::Relaxed);
                    drop(nanos);
                    std::thread::sleep(resolution);
                }
            })
            .expect("spawning the coarse clock thread");
        CoarseClock { nanos }
    }
}

impl Default for CoarseClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for CoarseClock {
    #[inline]
    fn now(&self) -> Nanos {
        Nanos(self.nanos.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_clones_share_time_and_never_go_back() {
        let clock = FakeClock::new();
        let other = clock.clone();
        clock.advance(Duration::from_secs(2));
        other.set(Nanos::new(1));
        assert_eq!(clock.now(), Nanos::from(Duration::from_secs(2)));
    }

    #[tokio::test(start_paused = true)]
    async fn tokio_clock_follows_paused_time() {
        let before = TokioClock.now();
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(TokioClock.now() - before, Duration::from_secs(3600));
    }

    #[test]
    fn monotonic_clock_does_not_go_back() {
        let a = MonotonicClock.now();
        let b = MonotonicClock.now();
        assert!(b >= a);
    }
}
