//! Moving a pool to a fresh limiter (new queue settings, static ↔ adaptive) while requests
//! run and wait on the old one, without the two together running more than the pool's
//! limit, without dropping the old one's queue, and without its counters going back.
//!
//! The new limiter holds a slot (a throttled permit, the "placeholder") for each request the
//! old one runs, so the new limit counts them: raising it later admits only what the two
//! together may run. The old limiter's own limit is kept at the number of slots held for
//! it, so it starts a queued request only in a slot the new one holds for it. Each of its
//! waiters without a slot has an ask in the new limiter's queue at `Priority::HIGH`
//! (kept by every rebalance; past a full queue, even a queue of 0, since each stands in for
//! a request that already waits — it takes a place new requests then find taken): they queued before anything
//! that waits on the new one, so they are served first, when a request ends and when the
//! limit is raised. Slots go back as the old limiter's requests end (none is reused when
//! the pool's limit was lowered under what runs). The old limiter is rebalanced right
//! after every change of the pool's limit (and before a raise), when an ask is answered,
//! and every [`TICK`] (an adaptive limit moves on its own) until it is empty and no pool
//! built on it is left (a request routed to one a moment before the change still comes to
//! the old limiter, and is served the same way); then its counters are folded into the
//! pool's and it is let go.
//!
//! The asks are brought in step with the waiters they stand for by the rebalances only, while
//! an old limiter serves a waiter whenever one of its requests ends (in the slot that request
//! held) and a client may leave its queue at any time: until the next rebalance, such a
//! waiter's ask stays in the new queue, standing for nobody, and a request could be turned
//! away `queue_full` by a queue that held fewer requests than places (handover125: one
//! `queue_full` for 32 clients against queues of 40-46, under load; a chain's rebalance
//! comes every [`TICK`] or sooner). A request a queue turns away while a hand-over is on
//! therefore has the asks brought in step at once ([`Retired::rebalance`]) and asks once
//! more (`Admission`): turned away again, the queue is full of requests that wait (or of
//! asks for them). Once more whatever that rebalance withdrew: another one (a tick, a change)
//! may have withdrawn the stale asks between the refusal and this one. Asks only hold
//! places, never slots: a stale one delays no one's start beyond the next rebalance and never
//! lets one start over the limit. The same holds for a `predicted_timeout`, which reads a
//! new request's place in line with the stale asks ahead of it (review127).
//!
//! Several changes in a row make a chain: each old limiter hands over to the next, the
//! newest rebalanced first (it sets the limit of the one before it), and what an old
//! limiter lacks is asked down the chain to the limiter in force. Hand-overs are let go
//! oldest first: a newer one's old limiter is the older one's new, which it may still ask.
//!
//! The pool's counters subtract the placeholders (slots taken and given back) from what
//! the limiters count; a client leaving the queue is counted by its request (`Admission`),
//! not here: a withdrawn ask a release had just granted is counted by the limiter as
//! admitted and completed, never as cancelled.
//!
//! An old *adaptive* limiter's algorithm is detached before the hand-over
//! (`AdaptiveLimiter::detach`): it used to set its own limit again when one of its requests
//! ended, starting waiters beyond its slots until the next rebalance (3 running under a
//! limit of 2: `tests/handover_adaptive.rs`).
//!
//! A change hands over only once every pool of it has been built (`Prepared::commit`): a
//! reload refused for a later pool leaves the old limiter in force, attached to its
//! algorithm and never handed to a limiter that does not come into force
//! (`tests/reload_atomic.rs`).
//!
//! `tests/handover_model.rs` checks all this on random interleavings.

mod chain;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Poll, Waker};
use std::time::Duration;

use sluicegate::concurrency::{ConcurrencyLimiter, OwnedPermit, Snapshot};

use self::chain::Handover;
use super::stats::Stats;

/// How often an old limiter with requests left is rebalanced.
const TICK: Duration = Duration::from_millis(20);

/// The limiters a pool has moved off that still run or queue requests, and what the
/// finished ones counted.
#[derive(Debug, Default)]
pub struct Retired {
    inner: Mutex<Inner>,
    /// Whether a hand-over is on (asks may wait in a queue), as of the last change under
    /// the lock: read without it by every request ([`Retired::on`]).
    on: AtomicBool,
}

#[derive(Debug, Default)]
struct Inner {
    /// Oldest first: a limiter retired twice over is the `new` of an earlier hand-over.
    handovers: Vec<Handover>,
    /// Counters of the old limiters already let go.
    done: Counts,
    /// Placeholders taken and given back, over all hand-overs: counted by the limiters as
    /// admitted and completed, but not requests.
    taken: u64,
    returned: u64,
    /// The limiter the pool moved to last: the one in force, even for a caller that holds
    /// a pool built before the change.
    current: Option<ConcurrencyLimiter>,
    /// The id of the next hand-over.
    next_id: u64,
    /// The largest counts reported, so that they never go back.
    reported: Counts,
}

/// Counters of the limiters a pool has used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests that got a slot.
    pub admitted: u64,
    /// Requests that gave their slot back.
    pub completed: u64,
}

impl Counts {
    /// What limiter snapshot `s` counts, with `admitted` as what was completed and what runs.
    /// The snapshot's own `admitted` keeps an increment it caught in passing (a refused
    /// attempt on the lock-free path takes it back) until real admissions make up for it,
    /// and a limiter the pool moved off admits nothing more: read from it, one such catch
    /// stayed in the pool's `admitted` for good (review 26, finding 7). Read this way, a
    /// catch is over as soon as the attempt is taken back; what the pool reports still
    /// never goes back (`Inner::reported`).
    fn of(s: &Snapshot) -> Counts {
        Counts {
            admitted: s.completed.wrapping_add(s.in_flight as u64),
            completed: s.completed,
        }
    }

    fn add(self, o: Counts) -> Counts {
        Counts {
            admitted: self.admitted.wrapping_add(o.admitted),
            completed: self.completed.wrapping_add(o.completed),
        }
    }
}

/// A pool's gauges and counters over its current limiter and the old ones still busy.
#[derive(Clone, Copy, Debug)]
pub struct PoolCounts {
    /// Requests running.
    pub in_flight: usize,
    /// Requests waiting in a limiter's queue.
    pub queued: usize,
    /// Counters since the gate started.
    pub counts: Counts,
}

/// Whether a limiter of snapshot `s` runs and queues nothing, bypasses included.
pub(super) fn empty(s: &Snapshot) -> bool {
    s.in_flight == 0 && s.queued == 0 && s.bypass_in_flight == 0
}

/// Moves the pool of `stats` from `old` to `new`, a limiter nobody else uses yet. `users`
/// lives as long as a pool built on `old` does: until then a request can still come to
/// `old`, and the hand-over goes on.
pub fn hand_over(
    old: &ConcurrencyLimiter,
    new: &ConcurrencyLimiter,
    users: Weak<()>,
    stats: &Arc<Stats>,
) {
    let mut inner = stats.retired.lock();
    // Nothing starts on the old limiter until its slots are held on the new one; from here
    // on what it runs only goes down.
    let _ = old.set_max(0);
    let running = old.snapshot().in_flight;
    // `new` is not in use yet: raising its limit for a moment takes a slot for every request
    // the old one runs, even beyond the new limit (which then admits nothing until they end).
    let limit = new.max();
    let _ = new.set_max(limit.max(running));
    let slots: Vec<OwnedPermit> = (0..running)
        .map_while(|_| new.try_acquire_owned().ok())
        .collect();
    let _ = new.set_max(limit);
    inner.taken += slots.len() as u64;
    if old.is_closed() {
        new.close();
    }
    inner.current = Some(new.clone());
    let id = inner.next_id;
    inner.next_id += 1;
    inner.handovers.push(Handover {
        id,
        old: old.clone(),
        new: new.clone(),
        slots,
        users,
        asks: Vec::new(),
        waker: Waker::noop().clone(),
        older: 0,
    });
    stats.retired.on.store(true, Ordering::Relaxed);
    stats.retired.rebalance_locked(&mut inner);
    drop(inner);
    tokio::spawn(serve_old_queue(id, old.clone(), stats.clone()));
}

/// Rebalances hand-over `id` when one of its asks is answered, when the last request
/// running on its `old` limiter ends, and every [`TICK`], until it is over.
async fn serve_old_queue(id: u64, old: ConcurrencyLimiter, stats: Arc<Stats>) {
    loop {
        // Only a rebalance gives back the slots held on the new limiter for the old one's
        // requests: when the last of them ends, the new limiter's waiters would otherwise
        // wait for the tick with nothing running (review 4 saw `in_flight 0, queued 48`).
        let running = old.snapshot().in_flight > 0;
        let mut stepped = false;
        // Rebalances, then waits to be woken by an answer (`Ready(true)`); `Ready(false)`
        // once the hand-over is over.
        let woken = std::future::poll_fn(|cx| {
            if std::mem::replace(&mut stepped, true) {
                return Poll::Ready(true);
            }
            if stats.retired.step(id, cx.waker()) {
                Poll::Pending
            } else {
                Poll::Ready(false)
            }
        });
        tokio::select! {
            on = woken => if !on { return },
            () = old.drain(), if running => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

impl Retired {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Shares the pool's current limit between the old limiters and the new one (call it
    /// after a change of the limit); `true` while an old limiter is still busy.
    pub fn rebalance(&self) -> bool {
        self.rebalance_locked(&mut self.lock())
    }

    /// [`Inner::rebalance`], and whether a hand-over is on after it for [`Retired::on`].
    fn rebalance_locked(&self, inner: &mut Inner) -> bool {
        let on = inner.rebalance();
        self.on.store(on, Ordering::Relaxed);
        on
    }

    /// Whether a hand-over is on: asks may wait in the pool's queues. Set under the lock as
    /// a hand-over starts, before it asks for anything, and cleared once the last one is
    /// let go; read with no lock, so a request may read it a moment late.
    pub fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Rebalances, with `waker` to wake hand-over `id`'s task when one of its asks is
    /// answered: `false` once that hand-over is over.
    fn step(&self, id: u64, waker: &Waker) -> bool {
        let mut inner = self.lock();
        let Some(h) = inner.handovers.iter_mut().find(|h| h.id == id) else {
            return false;
        };
        h.waker.clone_from(waker);
        self.rebalance_locked(&mut inner);
        inner.handovers.iter().any(|h| h.id == id)
    }

    /// Whether no old limiter runs or queues a request (bypasses included).
    pub fn idle(&self) -> bool {
        self.lock()
            .handovers
            .iter()
            .all(|h| empty(&h.old.snapshot()))
    }

    /// Closes or opens the old limiters with the pool.
    pub fn set_open(&self, open: bool) {
        for h in &self.lock().handovers {
            if open {
                h.old.open();
            } else {
                h.old.close();
            }
        }
    }

    /// The pool's gauges and counters, `limiter` being its limiter (the one in force is
    /// used if the pool has moved off it since).
    ///
    /// Read under the lock that every rebalance takes, with the asks answered meanwhile
    /// taken as slots, so that the slots and asks subtracted are those the snapshots
    /// count. The limiters are still read one after another while requests come and go:
    /// a request that starts or ends during the read may be missed or counted twice, never
    /// more than those.
    pub fn pool_counts(&self, limiter: &ConcurrencyLimiter) -> PoolCounts {
        let mut guard = self.lock();
        let inner = &mut *guard;
        for h in &mut inner.handovers {
            h.take_answers(&mut inner.taken);
        }
        let current = inner.current.as_ref().unwrap_or(limiter).snapshot();
        let mut in_flight = current.in_flight;
        let mut queued = current.queued;
        let mut counts = inner.done.add(Counts::of(&current));
        let (mut held, mut asks) = (0, 0);
        for h in &inner.handovers {
            let s = h.old.snapshot();
            in_flight += s.in_flight;
            queued += s.queued;
            held += h.slots.len();
            asks += h.asks.len();
            counts = counts.add(Counts::of(&s));
        }
        // Every placeholder taken or given back is in the limiters' counts already (taken
        // under this lock): the differences never go below zero. The limiters' `admitted`
        // may run ahead for an instant (see `Snapshot`): what is reported never goes back.
        counts.admitted = counts.admitted.saturating_sub(inner.taken);
        counts.completed = counts.completed.saturating_sub(inner.returned);
        let r = &mut inner.reported;
        r.admitted = r.admitted.max(counts.admitted);
        r.completed = r.completed.max(counts.completed);
        PoolCounts {
            in_flight: in_flight.saturating_sub(held),
            queued: queued.saturating_sub(asks),
            counts: inner.reported,
        }
    }
}
