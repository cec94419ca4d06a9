//! A global permit: a lease in Redis, renewed while held, released on drop.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use sluicegate::concurrency::OwnedPermit;
use tokio::task::JoinHandle;

use super::limiter::{Inner, millis};
use super::scripts::{RELEASE, RENEW};
use crate::store::Missed;

/// One of a [`GlobalConcurrency`](super::GlobalConcurrency)'s permits. Dropping it releases
/// the permit (the release is sent to Redis from a spawned task — after the lease's renewal,
/// when one is on its way — again and again while Redis is down, until Redis has it or the
/// lease has expired) and wakes the first waiter of every instance.
///
/// # Holding it outside the runtime
///
/// The lease is renewed (every TTL / 3) by a task on the runtime the permit was acquired
/// on (each renewal's call made on the limit's runtime), over the store's connection, which
/// the runtime the store was made on drives. Hold
/// the permit only while those runtimes run: a current-thread runtime driven by `block_on`
/// per call (a synchronous program) runs neither between its calls, so a permit held there
/// longer than the lease time outside `block_on` loses its lease while held, and another
/// instance may take it (the next renewal adds it back, with a warning: up to twice `max`
/// out meanwhile). A multi-thread runtime runs them while the permit is held anywhere,
/// a thread of its own included; or give the lease time ([`ttl`](super::ConcurrencyBuilder::ttl))
/// room for the longest hold (redis111).
#[must_use = "the permit is released as soon as it is dropped"]
#[derive(Debug)]
pub struct GlobalPermit {
    inner: Arc<Inner>,
    held: Held,
    renewal: Option<Renewal>,
    /// When the lease was taken: its hold feeds the hint of a full queue.
    taken: tokio::time::Instant,
}

/// A lease's renewal task, and where it stands.
#[derive(Debug)]
struct Renewal {
    task: JoinHandle<()>,
    lease: Arc<Lease>,
}

/// A held lease as its renewal task sees it: the id, and a [`RenewalState`] the permit's
/// drop and the task agree on who sends the release through.
#[derive(Debug)]
struct Lease {
    id: String,
    state: AtomicU8,
}

/// Where a lease's renewal stands. A release must never go out before a renewal already
/// decided on (redis111): aborting the task stops it only at the end of its poll, and the
/// renewal's `ZADD`, queued on the connection in that poll and written before the abort
/// dropped it, came after the release's `ZREM` and put back a lease nobody held — one
/// permit fewer for a lease time. So:
///
/// - `Idle` (the task sleeps) → `Renewing`, by the task deciding to renew; → `Released`, by
///   the drop, which aborts the task and sends the release itself.
/// - `Renewing` → `Idle`, by the renewal's call once Redis answered (or the call failed);
///   → `ReleaseDue`, by the drop, which then leaves the call running.
/// - `ReleaseDue` → `Released`, by the renewal's call once over (answered, failed, or
///   cancelled with its runtime): it sends the release after the renewal, and the task
///   ends.
///
/// The call runs on the limit's runtime, where releases go out, not on the task's (see
/// [`renew`]). No extra call to Redis (the task shares the lease rather than a copy of its
/// id; a renewal, every third of the TTL of a held permit, is a spawn on the limit's
/// runtime); a release waits at most for a renewal's answer (within the store's budget),
/// and only when the drop meets a renewal on its way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum RenewalState {
    Idle,
    Renewing,
    ReleaseDue,
    Released,
}

impl Lease {
    fn new(id: String) -> Self {
        Lease {
            id,
            state: AtomicU8::new(RenewalState::Idle as u8),
        }
    }

    /// Moves from `from` to `to`; `Err` with the state found otherwise.
    fn step(&self, from: RenewalState, to: RenewalState) -> Result<(), RenewalState> {
        self.state
            .compare_exchange(from as u8, to as u8, Ordering::AcqRel, Ordering::Acquire)
            .map(drop)
            .map_err(RenewalState::from_u8)
    }
}

impl RenewalState {
    fn from_u8(state: u8) -> Self {
        [Self::Idle, Self::Renewing, Self::ReleaseDue, Self::Released][usize::from(state)]
    }
}

impl Renewal {
    /// Stops the renewal as its permit drops: `true` if the release is the caller's to send
    /// now; `false` if a renewal is on its way, whose task sends the release after it.
    fn stop(self) -> bool {
        use RenewalState::{Idle, ReleaseDue, Released, Renewing};
        let mut from = Idle;
        loop {
            let to = if from == Idle { Released } else { ReleaseDue };
            match self.lease.step(from, to) {
                Ok(()) => break,
                Err(found @ (Idle | Renewing)) => from = found,
                Err(found) => unreachable!("only the drop leaves {found:?}"),
            }
        }
        if from == Idle {
            self.task.abort();
        }
        from == Idle
    }
}

/// What a permit holds.
#[derive(Debug)]
pub(super) enum Held {
    /// A lease in Redis, by id.
    Lease(String),
    /// A permit of this instance's share, taken while Redis was down (policy `Local`).
    Local(#[allow(dead_code)] OwnedPermit),
    /// Nothing: Redis was down and the policy is `Allow`.
    Nothing,
}

impl GlobalPermit {
    pub(super) fn new(inner: Arc<Inner>, held: Held) -> Self {
        let renewal = match &held {
            Held::Lease(id) => {
                inner.share.lease_taken();
                let lease = Arc::new(Lease::new(id.clone()));
                Some(Renewal {
                    task: tokio::spawn(renew(inner.clone(), lease.clone())),
                    lease,
                })
            }
            _ => None,
        };
        GlobalPermit {
            inner,
            held,
            renewal,
            taken: tokio::time::Instant::now(),
        }
    }

    /// Whether the permit is a lease in Redis (not a fallback taken while Redis was down).
    pub fn is_global(&self) -> bool {
        matches!(self.held, Held::Lease(_))
    }
}

/// Pushes the lease's expiry forward every third of the TTL until the permit drops. A lease
/// found gone (Redis flushed or restarted without persistence, or a renewal too late) is
/// added back: the permit is still held, and not counting it would let others exceed the
/// cap for as long as it is held. A drop during a renewal leaves the release to the
/// renewal, which sends it once over (see [`RenewalState`]).
///
/// The timer runs here, on the permit's runtime; each renewal's call, on the limit's
/// runtime, where releases go out: a release left to a renewal must not wait for this
/// task's runtime to run again. A synchronous program's current-thread runtime runs only
/// inside `block_on`: a permit dropped outside it while a renewal waited for Redis stayed
/// out for the lease time the renewal gave it (review124; before 221b80a the drop sent the
/// release from the limit's runtime at once). When the limit's runtime has shut down, the
/// renewal is made here.
async fn renew(inner: Arc<Inner>, lease: Arc<Lease>) {
    let period = inner.ttl / 3;
    loop {
        tokio::time::sleep(period).await;
        if lease
            .step(RenewalState::Idle, RenewalState::Renewing)
            .is_err()
        {
            return; // released (the abort on its way)
        }
        #[cfg(test)]
        let hold = HoldRenewal::deciding(&inner);
        #[cfg(not(test))]
        let hold = ();
        let renewing = Renewing(inner.clone(), lease.clone());
        let answer = match inner.runtime.spawn(renewal(renewing, hold)).await {
            Ok(answer) => answer,
            // Dropped with the limit's runtime, shut down (unrun, or mid-call): its
            // `Renewing` handed the lease back (or sent a release due). Once more here,
            // unless released.
            Err(e) if e.is_cancelled() => {
                if lease
                    .step(RenewalState::Idle, RenewalState::Renewing)
                    .is_err()
                {
                    return;
                }
                let renewing = Renewing(inner.clone(), lease.clone());
                #[cfg(test)]
                let hold = None;
                renewal(renewing, hold).await
            }
            // It panicked: its `Renewing` did its part on the way out. The next one, then.
            Err(_) => continue,
        };
        if lease.state.load(Ordering::Acquire) == RenewalState::Released as u8 {
            return;
        }
        if let Ok(0) = answer {
            tracing::warn!(
                lease = %lease.id,
                "global permit lease was gone from redis (flushed, restarted, or renewed too \
                 late): added back, as the permit is still held"
            );
        }
    }
}

/// One renewal's call: `ZADD`s the lease's expiry a TTL ahead. Its end, answered or failed
/// (or the call cancelled with its runtime), is `renewing`'s.
async fn renewal(renewing: Renewing, hold: Hold) -> Result<i64, Missed> {
    let Renewing(inner, lease) = &renewing;
    let mut call = RENEW.key(&inner.leases);
    call.arg(millis(inner.ttl)).arg(&lease.id);
    // `attempt`, not `call`: a renewal is no decision, and falls back to nothing.
    let answer = inner.store.attempt::<i64>(&call);
    #[cfg(test)]
    let answer = HoldRenewal::sending(hold, answer);
    #[cfg(not(test))]
    let () = hold;
    let answer = answer.await;
    drop(renewing);
    answer
}

/// Tests: the seam that may hold a renewal ([`HoldRenewal`]); nothing otherwise.
#[cfg(test)]
type Hold = Option<HoldRenewal>;
#[cfg(not(test))]
type Hold = ();

/// A renewal decided on and not over yet. Its end (or the call cancelled) hands the lease
/// back to the permit's drop, or sends the release that drop left to it.
struct Renewing(Arc<Inner>, Arc<Lease>);

impl Drop for Renewing {
    fn drop(&mut self) {
        let Renewing(inner, lease) = self;
        if lease
            .step(RenewalState::Renewing, RenewalState::Idle)
            .is_err()
        {
            // `ReleaseDue`: the permit dropped while this renewal was on its way.
            lease
                .state
                .store(RenewalState::Released as u8, Ordering::Release);
            release(inner, lease.id.clone());
        }
    }
}

impl Drop for GlobalPermit {
    fn drop(&mut self) {
        let renewal = self.renewal.take();
        if let Held::Lease(id) = std::mem::replace(&mut self.held, Held::Nothing) {
            self.inner.share.lease_dropped();
            self.inner.lease_held_for(self.taken.elapsed());
            if renewal.is_none_or(Renewal::stop) {
                release(&self.inner, id);
            }
        }
    }
}

/// Releases lease `id` from a spawned task, and keeps trying while the store is down (it
/// sends nothing then) or the call fails: again after 20 ms, doubling up to a second, until
/// Redis has the release or the lease has expired by itself (a TTL from now). A release is
/// harmless when the lease is gone already (it only wakes the waiters); a release not sent
/// keeps a free permit out for a lease time.
///
/// Sent from the runtime the limit was built on, wherever the permit is dropped: on a thread
/// outside any runtime (trial102), or in a runtime that may end before it runs the release
/// (a `block_on` on a thread of its own, review104). When that runtime has shut down (a
/// limit used on other runtimes since), the dropping thread's runtime sends it; with
/// neither, the lease expires after its TTL.
pub(super) fn release(inner: &Arc<Inner>, id: String) {
    let runtime = inner.runtime.clone();
    let fallback = tokio::runtime::Handle::try_current().ok();
    runtime.spawn(send_release(Release {
        inner: inner.clone(),
        id,
        sent: false,
        fallback,
    }));
}

/// A release on its way. Dropped unsent (its runtime shut down before or while running it),
/// it hands itself to the fallback runtime, once.
struct Release {
    inner: Arc<Inner>,
    id: String,
    sent: bool,
    fallback: Option<tokio::runtime::Handle>,
}

impl Drop for Release {
    fn drop(&mut self) {
        if let (false, Some(runtime)) = (self.sent, self.fallback.take()) {
            runtime.spawn(send_release(Release {
                inner: self.inner.clone(),
                id: std::mem::take(&mut self.id),
                sent: false,
                fallback: None,
            }));
        }
    }
}

async fn send_release(mut release: Release) {
    let inner = release.inner.clone();
    let expired = tokio::time::Instant::now() + inner.ttl;
    let mut pause = Duration::from_millis(20);
    loop {
        let mut call = RELEASE.key(&inner.leases);
        call.key(&inner.channel).arg(&release.id);
        let sent = inner.store.attempt::<i64>(&call);
        if sent.await.is_ok() || tokio::time::Instant::now() + pause >= expired {
            release.sent = true;
            return;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}

#[cfg(test)]
#[path = "permit_tests.rs"]
mod tests;
#[cfg(test)]
pub(super) use tests::HoldRenewal;
