//! Moving a pool to a fresh limiter (new queue settings, static ↔ adaptive) while requests
//! run and wait on the old one, without the two together running more than the pool's
//! limit, without dropping the old one's queue, and without its counters going back.
//!
//! The new limiter holds a slot (a throttled permit, the "placeholder") for each request the
//! old one runs, so the new limit counts them: raising it later admits only what the two
//! together may run. The old limiter's own limit is kept at the number of slots held for
//! it, so it starts a queued request only in a slot the new one holds for it. Slots for its
//! waiters are asked of the new limiter at [`Priority::HIGH`]: they queued before anything
//! that waits on the new one, so they are served first. Slots go back as the old
//! limiter's requests end (none is reused when the pool's limit was lowered under what
//! runs). The old limiter is rebalanced right after every change of the pool's limit, when
//! a slot comes, and every [`TICK`] (an adaptive limit moves on its own) until it is
//! empty; then its counters are folded into the pool's and it is let go.
//!
//! One gap remains: an old *adaptive* limiter sets its own limit again when one of its
//! requests ends, and may start waiters beyond its slots until the next rebalance, at most
//! a [`TICK`] later.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use sluicegate::concurrency::{ConcurrencyLimiter, OwnedPermit, Priority, Snapshot};

use super::stats::Stats;

/// How often an old limiter with requests left is rebalanced.
const TICK: Duration = Duration::from_millis(20);

/// The limiters a pool has moved off that still run or queue requests, and what the
/// finished ones counted.
#[derive(Debug, Default)]
pub struct Retired {
    inner: Mutex<Inner>,
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
    /// Waits for a slot given up (the old waiter left first): counted by the new limiter as
    /// cancelled, but no client left.
    withdrawn: u64,
    /// Slots asked of a new limiter and not yet answered: they wait in its queue, but no
    /// request does.
    asking: usize,
    /// The id of the next hand-over.
    next_id: u64,
    /// The largest counts reported, so that they never go back.
    reported: Counts,
}

#[derive(Debug)]
struct Handover {
    id: u64,
    old: ConcurrencyLimiter,
    new: ConcurrencyLimiter,
    /// Slots of `new` held for requests of `old`.
    slots: Vec<OwnedPermit>,
}

/// Counters of the limiters a pool has used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests that got a slot.
    pub admitted: u64,
    /// Requests that gave their slot back.
    pub completed: u64,
    /// Requests whose client left the queue.
    pub cancelled: u64,
}

impl Counts {
    fn of(s: &Snapshot) -> Counts {
        Counts {
            admitted: s.admitted,
            completed: s.completed,
            cancelled: s.cancelled,
        }
    }

    fn add(self, o: Counts) -> Counts {
        Counts {
            admitted: self.admitted.wrapping_add(o.admitted),
            completed: self.completed.wrapping_add(o.completed),
            cancelled: self.cancelled.wrapping_add(o.cancelled),
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

/// Moves the pool of `stats` from `old` to `new`, a limiter nobody else uses yet.
pub fn hand_over(old: &ConcurrencyLimiter, new: &ConcurrencyLimiter, stats: &Arc<Stats>) {
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
    let id = inner.next_id;
    inner.next_id += 1;
    inner.handovers.push(Handover {
        id,
        old: old.clone(),
        new: new.clone(),
        slots,
    });
    inner.rebalance();
    drop(inner);
    tokio::spawn(serve_old_queue(id, new.clone(), stats.clone()));
}

/// Asks `new` for slots while the old limiter of hand-over `id` has waiters without one,
/// and rebalances every [`TICK`], until the old limiter is empty.
async fn serve_old_queue(id: u64, new: ConcurrencyLimiter, stats: Arc<Stats>) {
    let mut asking = None;
    let mut slot = None;
    while let Some(wants) = stats.retired.step(id, slot.take()) {
        if !wants && asking.take().is_some() {
            stats.retired.asked(-1, 1);
        }
        if wants && asking.is_none() {
            stats.retired.asked(1, 0);
            asking = Some(Box::pin(
                new.acquire_owned().priority(Priority::HIGH).timeout(None),
            ));
        }
        let Some(ask) = asking.as_mut() else {
            tokio::time::sleep(TICK).await;
            continue;
        };
        tokio::select! {
            r = ask => {
                asking = None;
                stats.retired.asked(-1, 0);
                match r {
                    Ok(permit) => slot = Some(permit),
                    // Closed, or its queue full: ask again later.
                    Err(_) => tokio::time::sleep(TICK).await,
                }
            }
            () = tokio::time::sleep(TICK) => {}
        }
    }
    if asking.take().is_some() {
        stats.retired.asked(-1, 1);
    }
}

impl Retired {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Shares the pool's current limit between the old limiters and the new one (call it
    /// after a change of the limit); `true` while an old limiter is still busy.
    pub fn rebalance(&self) -> bool {
        self.lock().rebalance()
    }

    /// Adds `slot` (of hand-over `id`'s new limiter) to that hand-over's slots and
    /// rebalances: `None` once it is over, else whether its old limiter has waiters without
    /// a slot.
    fn step(&self, id: u64, slot: Option<OwnedPermit>) -> Option<bool> {
        let mut inner = self.lock();
        if let Some(slot) = slot {
            inner.taken += 1;
            match inner.handovers.iter_mut().find(|h| h.id == id) {
                Some(h) => h.slots.push(slot),
                None => {
                    inner.returned += 1;
                    drop(slot);
                }
            }
        }
        inner.rebalance();
        let h = inner.handovers.iter().find(|h| h.id == id)?;
        let old = h.old.snapshot();
        Some(old.queued > 0 && h.slots.len() < old.in_flight + old.queued)
    }

    /// Counts slots asked (`+1`) or answered or given up (`-1`), `withdrawn` of them given up.
    fn asked(&self, change: isize, withdrawn: u64) {
        let mut inner = self.lock();
        inner.asking = inner.asking.saturating_add_signed(change);
        inner.withdrawn += withdrawn;
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

    /// The pool's gauges and counters, `current` being its current limiter's snapshot.
    pub fn pool_counts(&self, current: &Snapshot) -> PoolCounts {
        let mut inner = self.lock();
        let mut in_flight = current.in_flight;
        let mut queued = current.queued;
        let mut counts = inner.done.add(Counts::of(current));
        counts.cancelled = counts.cancelled.wrapping_sub(inner.withdrawn);
        let mut held = 0;
        for h in &inner.handovers {
            let s = h.old.snapshot();
            in_flight += s.in_flight;
            queued += s.queued;
            held += h.slots.len();
            counts = counts.add(Counts::of(&s));
        }
        counts.admitted = counts.admitted.wrapping_sub(inner.taken);
        counts.completed = counts.completed.wrapping_sub(inner.returned);
        let r = &mut inner.reported;
        r.admitted = r.admitted.max(counts.admitted);
        r.completed = r.completed.max(counts.completed);
        r.cancelled = r.cancelled.max(counts.cancelled);
        PoolCounts {
            in_flight: in_flight.saturating_sub(held),
            queued: queued.saturating_sub(inner.asking),
            counts: inner.reported,
        }
    }
}

impl Inner {
    fn rebalance(&mut self) -> bool {
        let mut returned = 0;
        let mut i = 0;
        while i < self.handovers.len() {
            let h = &mut self.handovers[i];
            let (given_back, busy) = h.rebalance(&mut self.taken);
            returned += given_back;
            if busy {
                i += 1;
            } else {
                let h = self.handovers.remove(i);
                self.done = self.done.add(Counts::of(&h.old.snapshot()));
            }
        }
        self.returned += returned;
        !self.handovers.is_empty()
    }
}

impl Handover {
    /// Takes slots for the old limiter's waiters where the new one has room, gives back
    /// those it no longer needs or the pool's limit no longer allows, and sets the old
    /// limit to the slots it may fill. Returns how many slots went back, and whether the
    /// old limiter still has requests.
    fn rebalance(&mut self, taken: &mut u64) -> (u64, bool) {
        let old = self.old.snapshot();
        let wanted = old.in_flight + old.queued;
        while self.slots.len() < wanted {
            let Ok(slot) = self.new.try_acquire_owned() else {
                break;
            };
            self.slots.push(slot);
            *taken += 1;
        }
        // A lowered limit: the new limiter counts more than it allows. The old limiter
        // gives up that many slots as its requests end, and starts nothing meanwhile.
        let over = self.new.snapshot().in_flight.saturating_sub(self.new.max());
        let fill = self.slots.len().saturating_sub(over).min(wanted);
        let _ = self.old.set_max(fill);
        // From here on the old limiter starts nothing beyond `fill`; what runs only ends.
        let keep = fill.max(self.old.snapshot().in_flight);
        let given_back = self.slots.len().saturating_sub(keep);
        self.slots.truncate(keep);
        // Bypassed requests hold no slot, but the drain waits for them here too.
        (given_back as u64, keep > 0 || !empty(&self.old.snapshot()))
    }
}
