//! One hand-over of a chain: the slots an old limiter holds on the next one, the asks its
//! waiters keep in that one's queue, and the rebalance that keeps them in step.

use std::future::Future;
use std::pin::Pin;
use std::sync::Weak;
use std::task::{Context, Poll, Waker};

use sluicegate::concurrency::{AcquireOwned, ConcurrencyLimiter, OwnedPermit, Priority};

use super::{Counts, Inner, empty};

/// A limiter the pool moved off, and the one it moved to.
#[derive(Debug)]
pub(super) struct Handover {
    pub(super) id: u64,
    pub(super) old: ConcurrencyLimiter,
    pub(super) new: ConcurrencyLimiter,
    /// Slots of `new` held for requests of `old`.
    pub(super) slots: Vec<OwnedPermit>,
    /// Alive while a pool built on `old` is: a request may still come to `old`.
    pub(super) users: Weak<()>,
    /// Slots asked of `new` for waiters without one, at [`Priority::HIGH`]: they wait in
    /// its queue (where no request does), first in line.
    pub(super) asks: Vec<Pin<Box<AcquireOwned>>>,
    /// Wakes the hand-over's task when an ask is answered.
    pub(super) waker: Waker,
    /// Slots the hand-over before this one lacks on `old`, as of the last rebalance.
    pub(super) older: usize,
}

impl Inner {
    /// Shares the limit along the chain; `true` while an old limiter is still busy.
    pub(super) fn rebalance(&mut self) -> bool {
        let mut returned = 0;
        // Newest first: a limiter retired twice over is the `new` of an older hand-over, and
        // the newer one sets its limit (what the newest limiter allows) before the older one
        // gives slots back on it, which would start its waiters under a limit gone stale.
        // The hand-over before another, when it is still on, moved off the other's old
        // limiter: the slots its waiters lack are asked of the other's new limiter too, or
        // they would wait for a limiter whose limit nothing raises. Oldest first, so that
        // what a chain lacks reaches its newest limiter.
        for i in 0..self.handovers.len() {
            self.handovers[i].older = match i.checked_sub(1).map(|j| &self.handovers[j]) {
                Some(o) if o.id + 1 == self.handovers[i].id => o.lacking(),
                _ => 0,
            };
        }
        let mut busy = vec![false; self.handovers.len()];
        for i in (0..self.handovers.len()).rev() {
            let (given_back, on) = self.handovers[i].rebalance(&mut self.taken);
            returned += given_back;
            busy[i] = on;
        }
        self.returned += returned;
        // Let go oldest first, and only once the hand-over before it in the chain is gone:
        // its `new` is this one's `old`, so until then a request that comes to the older
        // limiter (a pool built on it is alive) would wait for a slot of a limiter folded
        // into `done` already, that nothing rebalances any more, and what it counted there
        // would be lost.
        let mut before: Option<(u64, bool)> = None;
        let mut i = 0;
        for on in busy {
            let id = self.handovers[i].id;
            let chained_to_one_kept = before.is_some_and(|(b, kept)| kept && b + 1 == id);
            let kept = on || chained_to_one_kept;
            before = Some((id, kept));
            if kept {
                i += 1;
                continue;
            }
            let h = self.handovers.remove(i);
            let waker = h.waker.clone();
            for ask in h.asks {
                withdraw(ask, &waker, &mut self.taken, &mut self.returned);
            }
            self.done = self.done.add(Counts::of(&h.old.snapshot()));
        }
        // The asks oldest first, each on what the one before left: an old limiter's queue
        // holds the asks of the hand-over before it, so asks set newest first would count
        // the older ones' asks before those were brought in step, and what they had too
        // many would add up along the chain (a chain of five held 40 asks in the newest
        // queue for 28 waiters, and turned requests away with `queue_full`).
        for i in 0..self.handovers.len() {
            self.handovers[i].older = match i.checked_sub(1).map(|j| &self.handovers[j]) {
                Some(o) if o.id + 1 == self.handovers[i].id => o.lacking(),
                _ => 0,
            };
            self.handovers[i].ask(&mut self.taken, &mut self.returned);
        }
        !self.handovers.is_empty()
    }
}

impl Handover {
    /// Slots of `new` the old limiter's requests (and the older hand-over's) lack, not
    /// counting those asked for.
    fn lacking(&self) -> usize {
        let old = self.old.snapshot();
        (old.in_flight + old.queued + self.older).saturating_sub(self.slots.len() + self.asks.len())
    }

    /// Takes slots for the old limiter's waiters (and the older hand-over's, which wait
    /// for room on the old limiter) where the new one has room, gives back those it no
    /// longer needs or the pool's limit no longer allows, and sets the old limit to the
    /// slots it may fill. Returns how many slots went back, and whether the hand-over goes
    /// on.
    fn rebalance(&mut self, taken: &mut u64) -> (u64, bool) {
        let older = self.older;
        self.take_answers(taken);
        let old = self.old.snapshot();
        let wanted = old.in_flight + old.queued + older;
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
        // Bypassed requests hold no slot, but the drain waits for them here too; and while a
        // pool built on `old` is alive, a request routed to it may still come.
        let busy =
            keep > 0 || older > 0 || !empty(&self.old.snapshot()) || self.users.strong_count() > 0;
        (given_back as u64, busy)
    }

    /// Takes the asks answered: a slot, or a refusal (closed, the queue full), asked again
    /// once every hand-over is rebalanced (`Inner::rebalance`).
    pub(super) fn take_answers(&mut self, taken: &mut u64) {
        let waker = self.waker.clone();
        let mut cx = Context::from_waker(&waker);
        let slots = &mut self.slots;
        self.asks
            .retain_mut(|ask| match ask.as_mut().poll(&mut cx) {
                Poll::Pending => true,
                Poll::Ready(r) => {
                    if let Ok(slot) = r {
                        slots.push(slot);
                        *taken += 1;
                    }
                    false
                }
            });
    }

    /// Keeps one ask in `new`'s queue for each waiter (of the old limiter, or of the older
    /// hand-over) that lacks a slot: when `new` has room, a request ending or the limit
    /// raised, the asks are served before its own waiters, which came later, however full
    /// its queue (a queue of 0 included).
    fn ask(&mut self, taken: &mut u64, returned: &mut u64) {
        let waker = self.waker.clone();
        let cx = &mut Context::from_waker(&waker);
        let old = self.old.snapshot();
        let waiting = old.queued + self.older;
        let lacking = (old.in_flight + waiting)
            .saturating_sub(self.slots.len())
            .min(waiting);
        for ask in self.asks.drain(lacking.min(self.asks.len())..) {
            withdraw(ask, &waker, taken, returned);
        }
        while self.asks.len() < lacking {
            let mut ask = Box::pin(
                self.new
                    .acquire_owned()
                    .priority(Priority::HIGH)
                    .timeout(None)
                    // In line for a request that already waits: a queue full of the new
                    // limiter's own waiters must not put it behind them.
                    .past_a_full_queue(),
            );
            match ask.as_mut().poll(cx) {
                Poll::Pending => self.asks.push(ask),
                Poll::Ready(Ok(slot)) => {
                    // Room at once: the next rebalance lets the old limiter fill it.
                    self.slots.push(slot);
                    *taken += 1;
                    cx.waker().wake_by_ref();
                }
                Poll::Ready(Err(_)) => break,
            }
        }
    }
}

/// Gives up an ask. One a release granted since it was last polled (on another thread) is
/// taken and given back here, so that the limiter's count of its admission and release is
/// matched by `taken` and `returned`. Dropped unanswered, it leaves `new`'s queue, counted
/// there as a cancellation, which the pool's counters do not read (a client's departure is
/// counted by its `Admission`). A grant in the instant between the poll and the drop
/// still passes the slot on, counted as admitted and completed by the limiter alone.
fn withdraw(mut ask: Pin<Box<AcquireOwned>>, waker: &Waker, taken: &mut u64, returned: &mut u64) {
    if let Poll::Ready(Ok(slot)) = ask.as_mut().poll(&mut Context::from_waker(waker)) {
        *taken += 1;
        *returned += 1;
        drop(slot);
    }
}
