//! The limiter's state machine: the lock-free fast path over the packed word and the locked
//! slow path over the wait queue. See the repository's `docs/concurrency-state-machine.md`.

use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::error::Rejected;
use super::queue::{self, Outcome, Priority, Queue, QueueOrder, Ticket};
use super::snapshot::Snapshot;
use super::state::{
    self, CLOSED, Completed, DRAINERS, RELEASE_COMPLETED, SLOW_ACQUIRE, SLOW_RELEASE, WAITERS,
};
use crate::clock::Clock;
use crate::sync::{AtomicU64, Mutex, Ordering, lock};

/// Settings fixed at construction; `reset()` returns to them.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) max: u64,
    pub(crate) max_queue: usize,
    pub(crate) queue_timeout: Option<Duration>,
    pub(crate) order: QueueOrder,
    pub(crate) predictive: bool,
}

/// The outcome of starting an acquire.
#[derive(Debug)]
pub(crate) enum Start {
    Admitted,
    Queued(Ticket),
    Rejected(Rejected),
}

/// Counters only the slow paths touch.
#[derive(Debug, Default)]
struct Counters {
    rejected_queue_full: AtomicU64,
    rejected_closed: AtomicU64,
    rejected_predicted: AtomicU64,
    timed_out: AtomicU64,
    cancelled: AtomicU64,
    bypassed: AtomicU64,
    bypass_in_flight: AtomicU64,
    /// The largest `admitted` a snapshot has reported, so the counter never goes back (see
    /// [`Inner::snapshot`]). Here, not next to `max`: snapshots write it.
    admitted_reported: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Fallback hint when the limiter has not yet seen enough releases to estimate.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

pub(crate) struct Inner {
    /// The packed word of `state.rs`; the only thing the fast path writes. On a cache line
    /// of its own: `max`, read right after each `fetch_add`, must not sit on the line that
    /// contending threads take from each other, or every such read fetches it back.
    state: CacheLine<AtomicU64>,
    /// The current limit. Written under the queue lock; the fast path reads it.
    max: AtomicU64,
    /// The limit `reset()` returns to: the builder's, or the last one an adaptive limiter
    /// set. Written under the queue lock.
    reset_max: AtomicU64,
    /// How many times the limiter was closed; written under the queue lock. A reset's own
    /// close is its number (see [Resets](Inner#resets)).
    closes: AtomicU64,
    /// `closes` as it was at the latest reopen (`open()`, a reset's end); written under the
    /// queue lock, read without it only to end a reset's drain early.
    opened_at: AtomicU64,
    /// Resets started and not yet ended: each closed the limiter after the latest reopen.
    /// Written under the queue lock.
    resets: AtomicU64,
    completed: Completed,
    counters: Counters,
    queue: Mutex<Queue>,
    pub(crate) config: Config,
    /// The limiter's one clock: predictive estimates, the blocking acquire's deadline and
    /// an adaptive limiter's samples read it (async queue timeouts use tokio's timer; see
    /// the builder's `clock`).
    pub(crate) clock: std::sync::Arc<dyn Clock>,
}

/// A value alone on its cache line (128 bytes: adjacent-line prefetchers fetch pairs).
#[derive(Debug)]
#[repr(align(128))]
struct CacheLine<T>(T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("state", &self.state)
            .field("max", &self.max)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// # Resets
///
/// A reset is its own close, a drain, and a reopen with the reset limit: its *end*. Reset
/// `c` (its close was the `c`-th) ends at the first of:
///
/// 1. **Nothing runs** (its drain is over), or **its future is dropped** (given up on): if
///    no close came after its own (`closes == c`), it reopens with the reset limit.
///    Otherwise a later close stands — the kill switch pressed during the drain, or a later
///    reset's own, whose end reopens — and it ends without a word.
/// 2. **A reopen after its close** (`opened_at >= c`): an `open()`, or a later reset's end
///    (1). That reopen is every running reset's end: it restores the reset limit (an
///    `open()` too, when `resets > 0`), and the resets' futures are woken and return
///    without doing anything more. A reset's drain would otherwise go on against an open,
///    busy limiter, end only once nothing ran (under steady traffic, never), and then
///    restore the limit over whatever was set since (a kill switch of 0).
///
/// So a reopen ends every reset counted in `resets` (all closed before it) and sets it to
/// 0; an end of kind 1 that does not reopen takes its own one off. `closes`, `opened_at` and
/// `resets` change only under the queue lock, where a reset's drain also registers, so a
/// reopen either comes before the drain looks (which sees `opened_at >= c`) or finds its
/// waker to wake.
impl Inner {
    pub(crate) fn new(config: Config, clock: std::sync::Arc<dyn Clock>) -> Self {
        Inner {
            state: CacheLine(AtomicU64::new(0)),
            max: AtomicU64::new(config.max),
            reset_max: AtomicU64::new(config.max),
            closes: AtomicU64::new(0),
            opened_at: AtomicU64::new(0),
            resets: AtomicU64::new(0),
            completed: Completed::new(),
            counters: Counters::default(),
            queue: Mutex::new(Queue::new(config.order)),
            config,
            clock,
        }
    }

    /// Tests only: a fresh limiter whose completed counter starts at `n`, to drive real
    /// operations across the 39-bit field's wraps.
    #[cfg(test)]
    pub(crate) fn start_completed_at(&self, n: u64) {
        let word = self.completed.start_at(n);
        self.state.store(word, Ordering::Relaxed);
        self.counters.admitted_reported.store(n, Ordering::Relaxed);
    }

    /// Takes a permit if one is free and nobody waits. One `fetch_add`; no lock, no clock.
    ///
    /// The increment is optimistic: if the word it returns shows the limiter full, closed or
    /// with waiters, the increment is taken back ([`Self::undo_fast`]). Until then other
    /// threads see one permit more in flight than is really held, which can only make them
    /// take the slow path, where everything is re-checked under the lock; and the undo runs
    /// the release hand-off whenever someone waits, so no waiter misses a freed permit. A
    /// `fetch_add` never fails, so two threads contending cost one cache-line transfer each
    /// per acquire, where a CAS loop may retry.
    #[inline]
    pub(crate) fn try_acquire_fast(&self) -> bool {
        // Acquire: the new holder sees what the previous holder did before releasing.
        let previous = self.state.fetch_add(1, Ordering::Acquire);
        if previous & SLOW_ACQUIRE == 0
            && state::in_flight(previous) < self.max.load(Ordering::Relaxed)
        {
            return true;
        }
        self.undo_fast();
        false
    }

    /// Takes back an optimistic increment that did not get a permit.
    #[cold]
    fn undo_fast(&self) {
        let previous = self.state.fetch_sub(1, Ordering::AcqRel);
        if previous & SLOW_RELEASE != 0 {
            self.release_slow(false);
        }
    }

    /// Whether the fast path can succeed, from a plain load: lets callers about to wait skip
    /// an optimistic increment that would only be taken back.
    fn looks_free(&self) -> bool {
        let current = self.state.load(Ordering::Relaxed);
        current & SLOW_ACQUIRE == 0 && state::in_flight(current) < self.max.load(Ordering::Relaxed)
    }

    /// `try_acquire`: the fast path, or a rejection without waiting.
    pub(crate) fn try_acquire(&self) -> Result<(), Rejected> {
        if self.try_acquire_fast() {
            return Ok(());
        }
        // Not the hot path any more: settle it under the lock so the answer is exact.
        match self.start(Priority::NORMAL, None, None, false) {
            Start::Admitted => Ok(()),
            Start::Rejected(r) => Err(r),
            Start::Queued(_) => unreachable!("a start without a waker never queues"),
        }
    }

    /// Starts an acquire: a permit now, a place in the queue, or a rejection.
    ///
    /// `waker` is `None` for callers that will not wait (`try_acquire`). `timeout` is the
    /// time the caller is prepared to wait, for predictive rejection.
    pub(crate) fn start(
        &self,
        priority: Priority,
        timeout: Option<Duration>,
        waker: Option<&Waker>,
        past_a_full_queue: bool,
    ) -> Start {
        if self.looks_free() && self.try_acquire_fast() {
            return Start::Admitted;
        }
        let mut queue = lock(&self.queue);
        let max_queue = match waker {
            None => 0,
            Some(_) if past_a_full_queue => usize::MAX,
            Some(_) => self.config.max_queue,
        };
        let key = queue.next_key(priority);
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            if current & CLOSED != 0 {
                bump(&self.counters.rejected_closed);
                return Start::Rejected(Rejected::Closed {
                    retry_after: self.retry_after(&queue),
                });
            }
            if queue.is_empty() && state::in_flight(current) < self.max.load(Ordering::Relaxed) {
                match self.state.compare_exchange(
                    current,
                    current + 1,
                    Ordering::Acquire,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return Start::Admitted,
                    Err(actual) => {
                        current = actual;
                        continue;
                    }
                }
            }
            if queue.len() >= max_queue {
                bump(&self.counters.rejected_queue_full);
                return Start::Rejected(Rejected::QueueFull {
                    retry_after: self.retry_after(&queue),
                });
            }
            if let Some(estimate) = self.predicted_wait(&queue, key, timeout) {
                bump(&self.counters.rejected_predicted);
                return Start::Rejected(Rejected::PredictedTimeout {
                    retry_after: estimate,
                });
            }
            if current & WAITERS != 0 {
                break;
            }
            // The first waiter raises the flag, but only if no permit came back since the
            // check above: from then on no fast-path acquire passes it and every release
            // looks at the queue.
            match self.state.compare_exchange(
                current,
                current | WAITERS,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if self.config.predictive {
                        queue.estimate().on_queue_start(self.clock.now());
                    }
                    break;
                }
                Err(actual) => current = actual,
            }
        }
        let waker = waker.expect("max_queue is 0 without a waker");
        Start::Queued(queue.push(key, waker.clone()))
    }

    /// The wait a new waiter at `key` can expect, if it exceeds `timeout`.
    fn predicted_wait(
        &self,
        queue: &Queue,
        key: queue::Key,
        timeout: Option<Duration>,
    ) -> Option<Duration> {
        let timeout = timeout.filter(|_| self.config.predictive)?;
        // Paused (max 0): nothing is released, so the estimate says nothing; wait for a raise.
        if self.max.load(Ordering::Relaxed) == 0 {
            return None;
        }
        // The first to wait always may: the estimate learns only from releases while someone
        // waits, and one left from long ago (a stall) would otherwise turn every caller away
        // for good, with no waiter left to correct it.
        if queue.is_empty() {
            return None;
        }
        let interval = queue.mean_interval()?;
        let position = u32::try_from(queue.position(key)).unwrap_or(u32::MAX);
        let estimate = interval.saturating_mul(position);
        (estimate > timeout).then_some(estimate)
    }

    /// Polls a queued waiter.
    pub(crate) fn poll_ticket(
        &self,
        ticket: &Ticket,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Rejected>> {
        let mut queue = lock(&self.queue);
        match queue.take_outcome(ticket) {
            Outcome::Granted => Poll::Ready(Ok(())),
            Outcome::Closed => Poll::Ready(Err(self.closed())),
            Outcome::Waiting => {
                queue.update_waker(ticket.key, cx.waker());
                Poll::Pending
            }
        }
    }

    fn closed(&self) -> Rejected {
        Rejected::Closed {
            retry_after: DEFAULT_RETRY_AFTER,
        }
    }

    /// A queued waiter's timeout passed. `Ok` if it was granted a permit at the same
    /// instant: it keeps it.
    pub(crate) fn time_out(&self, ticket: Ticket) -> Result<(), Rejected> {
        let mut queue = lock(&self.queue);
        if self.leave_queue(&mut queue, &ticket, &self.counters.timed_out) {
            return Err(Rejected::QueueTimeout {
                retry_after: self.retry_after(&queue),
            });
        }
        match queue.take_outcome(&ticket) {
            Outcome::Granted => Ok(()),
            Outcome::Closed | Outcome::Waiting => Err(self.closed()),
        }
    }

    /// A queued waiter went away (its future was dropped).
    pub(crate) fn cancel(&self, ticket: Ticket) {
        let mut queue = lock(&self.queue);
        if self.leave_queue(&mut queue, &ticket, &self.counters.cancelled) {
            return;
        }
        if queue.take_outcome(&ticket) == Outcome::Granted {
            // Handed a permit by a release racing the drop. It was granted, so it stays
            // counted as admitted (counters never go back) and comes back as a completed
            // release at once; the hand-off passes it to the next waiter.
            let previous = self.state.fetch_add(RELEASE_COMPLETED, Ordering::AcqRel);
            self.completed.on_release(previous);
            let current = previous.wrapping_add(RELEASE_COMPLETED);
            let wakers = self.after_release_locked(&mut queue, current);
            drop(queue);
            wakers.wake();
        }
    }

    /// Takes a waiter that gives up out of the queue, counting it under `why`; `false` if it
    /// had already left (granted or closed).
    fn leave_queue(&self, queue: &mut Queue, ticket: &Ticket, why: &AtomicU64) -> bool {
        if !queue.remove(ticket.key) {
            return false;
        }
        bump(why);
        if queue.is_empty() {
            self.state.fetch_and(!WAITERS, Ordering::AcqRel);
        }
        true
    }

    /// Releases one permit. `completed` is false for a permit returned unused.
    #[inline]
    pub(crate) fn release(&self) {
        // Release: the next holder sees this holder's work.
        let previous = self.state.fetch_add(RELEASE_COMPLETED, Ordering::AcqRel);
        self.completed.on_release(previous);
        if previous & SLOW_RELEASE != 0 {
            self.release_slow(true);
        }
    }

    /// A permit went back (`completed`: after use, rather than an undone optimistic
    /// increment) while someone waits for one or for the limiter to drain.
    #[cold]
    fn release_slow(&self, completed: bool) {
        let mut queue = lock(&self.queue);
        if completed && self.config.predictive && !queue.is_empty() {
            let now = self.clock.now();
            queue.estimate().on_release(now);
        }
        let current = self.state.load(Ordering::Acquire);
        let wakers = self.after_release_locked(&mut queue, current);
        drop(queue);
        wakers.wake();
    }

    /// Hands free permits to waiters in order and wakes drainers once nothing is in flight.
    fn after_release_locked(&self, queue: &mut Queue, mut current: u64) -> Wakers {
        let mut wakers = Wakers::default();
        while !queue.is_empty() && state::in_flight(current) < self.max.load(Ordering::Relaxed) {
            // Granting the last waiter lowers the flag in the same step.
            let mut next = current + 1;
            if queue.len() == 1 {
                next &= !WAITERS;
            }
            match self
                .state
                .compare_exchange(current, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    current = next;
                    wakers.push(queue.grant_next().expect("queue is not empty"));
                }
                Err(actual) => current = actual,
            }
        }
        if queue.is_empty() && current & WAITERS != 0 {
            current = self.state.fetch_and(!WAITERS, Ordering::AcqRel) & !WAITERS;
        }
        if state::in_flight(current) == 0 && queue.has_drainers() {
            self.state.fetch_and(!DRAINERS, Ordering::AcqRel);
            wakers.extend(queue.take_drainers());
        }
        wakers
    }

    /// Changes the limit; raising it admits waiters at once. With `remember`, `reset()`
    /// returns to this limit from now on (the adaptive limiter's changes), rather than to the
    /// builder's.
    pub(crate) fn set_max(&self, max: u64, remember: bool) {
        let mut queue = lock(&self.queue);
        self.max.store(max, Ordering::Relaxed);
        if remember {
            self.reset_max.store(max, Ordering::Relaxed);
        }
        // Publish the new limit through the permit word: every fast-path `fetch_add` later in
        // the word's order synchronises with this one and so reads the new `max`. After
        // `set_max` returns, nothing is admitted under the old limit.
        let current = self.state.fetch_add(0, Ordering::AcqRel);
        let wakers = self.after_release_locked(&mut queue, current);
        drop(queue);
        wakers.wake();
    }

    pub(crate) fn max(&self) -> u64 {
        self.max.load(Ordering::Relaxed)
    }

    /// Throttled permits held now, from one load of the permit word: permits handed to
    /// waiters whose tasks have not run yet included (a release hands its permit over
    /// without the count going down), and, for an instant, an optimistic increment about
    /// to be taken back.
    pub(crate) fn in_flight_now(&self) -> u64 {
        state::in_flight(self.state.load(Ordering::Relaxed))
    }

    /// Rejects every waiter and every later acquire with `Closed`.
    pub(crate) fn close(&self) {
        let queue = lock(&self.queue);
        self.close_locked(queue);
    }

    /// A reset's start: its close, and the reset counted as running. Returns which close
    /// it was, for [`Inner::end_reset`] and the reset's drain.
    pub(crate) fn start_reset(&self) -> u64 {
        let queue = lock(&self.queue);
        self.resets.fetch_add(1, Ordering::Relaxed);
        self.close_locked(queue)
    }

    /// Closes, and returns the count of closes so far (this one's number).
    fn close_locked(&self, mut queue: crate::sync::MutexGuard<'_, Queue>) -> u64 {
        let this_close = self.closes.fetch_add(1, Ordering::Relaxed) + 1;
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        let closed = queue.close_all();
        self.counters
            .rejected_closed
            .fetch_add(closed.len() as u64, Ordering::Relaxed);
        self.state.fetch_and(!WAITERS, Ordering::AcqRel);
        drop(queue);
        closed.into_iter().for_each(Waker::wake);
        this_close
    }

    /// `open()`: reopens a closed limiter, keeping its limit — unless a reset is running:
    /// then this is its end (see [Resets](Inner#resets)), with the reset limit.
    pub(crate) fn open(&self) {
        let queue = lock(&self.queue);
        self.reopen_locked(queue, false);
    }

    /// The end of reset `its_close`, finished or given up on (kind 1 in
    /// [Resets](Inner#resets)): nothing if a reopen since has ended it already; a reopen
    /// with the reset limit if no close came after its own; else (a later close stands, and
    /// the limiter is closed) it only stops counting itself.
    pub(crate) fn end_reset(&self, its_close: u64) {
        let queue = lock(&self.queue);
        if self.opened_at.load(Ordering::Relaxed) >= its_close {
            return;
        }
        if self.closes.load(Ordering::Relaxed) == its_close {
            self.reopen_locked(queue, true);
        } else {
            debug_assert!(
                self.is_closed(),
                "a reopen since would have ended the reset"
            );
            self.resets.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Reopens, with the limit `reset()` returns to if `restore_limit` or a reset is running
    /// (this reopen ends every running reset and wakes their drains).
    ///
    /// Callers may be queued at a raised limit here (issue 8's defect 2, when an `open()`
    /// during a reset let them queue at the kill switch's 0 and the reset's end raised it):
    /// run the hand-off as `set_max` does, or they wait for a release that may never come.
    fn reopen_locked(&self, mut queue: crate::sync::MutexGuard<'_, Queue>, restore_limit: bool) {
        let ends_resets = self.resets.swap(0, Ordering::Relaxed) > 0;
        if restore_limit || ends_resets {
            self.max
                .store(self.reset_max.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        self.opened_at
            .store(self.closes.load(Ordering::Relaxed), Ordering::Relaxed);
        // An RMW on the word: publishes the limit to the fast path as `set_max` does.
        let current = self.state.fetch_and(!CLOSED, Ordering::AcqRel) & !CLOSED;
        let mut wakers = self.after_release_locked(&mut queue, current);
        if ends_resets && queue.has_drainers() {
            // The resets' drains among them; a plain `drain()` woken here looks again and
            // registers anew.
            self.state.fetch_and(!DRAINERS, Ordering::AcqRel);
            wakers.extend(queue.take_drainers());
        }
        drop(queue);
        wakers.wake();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Ready once nothing throttled is in flight, or, for the drain of reset `reset`, once a
    /// reopen has ended that reset (see [Resets](Inner#resets)). `key`: the drain's
    /// registration, kept by its future for [`Inner::forget_drainer`].
    pub(crate) fn poll_drain(
        &self,
        cx: &mut Context<'_>,
        key: &mut Option<u64>,
        reset: Option<u64>,
    ) -> Poll<()> {
        let reopened = || reset.is_some_and(|c| self.opened_at.load(Ordering::Relaxed) >= c);
        if state::in_flight(self.state.load(Ordering::Acquire)) == 0 || reopened() {
            return Poll::Ready(());
        }
        let mut queue = lock(&self.queue);
        if reopened() {
            return Poll::Ready(());
        }
        *key = Some(queue.add_drainer(*key, cx.waker()));
        let current = self.state.fetch_or(DRAINERS, Ordering::AcqRel);
        if state::in_flight(current) == 0 {
            // The last permit went back before we got the lock. Other drainers may be
            // registered, and the release that saw their flag may not have reached the lock
            // yet; once it does it finds no drainer to wake, so wake them all here
            // (defect 1 of issue 8: they used to be dropped unwoken).
            let others = queue.take_drainers();
            self.state.fetch_and(!DRAINERS, Ordering::AcqRel);
            drop(queue);
            others.into_iter().for_each(Waker::wake);
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// A drain went away (its future was dropped: a reset given up on, a drain under a
    /// timeout): its waker is taken back, and with the last one the flag that sends every
    /// release to the slow path. Left, they stayed until nothing ran, which on a limiter the
    /// given-up reset reopened may be never.
    pub(crate) fn forget_drainer(&self, key: u64) {
        let mut queue = lock(&self.queue);
        queue.remove_drainer(key);
        if !queue.has_drainers() {
            self.state.fetch_and(!DRAINERS, Ordering::AcqRel);
        }
    }

    pub(crate) fn bypass_acquire(&self) {
        bump(&self.counters.bypassed);
        bump(&self.counters.bypass_in_flight);
    }

    pub(crate) fn bypass_release(&self) {
        self.counters
            .bypass_in_flight
            .fetch_sub(1, Ordering::Relaxed);
    }

    fn retry_after(&self, queue: &Queue) -> Duration {
        let position = u32::try_from(queue.len() + 1).unwrap_or(u32::MAX);
        queue
            .mean_interval()
            .map_or(DEFAULT_RETRY_AFTER, |interval| {
                interval.saturating_mul(position)
            })
    }

    /// Gauges and counters. Every counter only grows; see [`Snapshot`] for what the
    /// gauges may briefly show.
    ///
    /// `admitted` is `completed + in_flight`, exact in one word, except that `in_flight`
    /// may, for an instant, include optimistic increments about to be taken back (invariant
    /// 3 of the state machine doc). No reader can tell those apart, so the reported value is
    /// the largest ever reported: it never goes back, and it runs ahead of the true count only
    /// by increments a snapshot caught in passing (at most one per thread racing on a full
    /// limiter), until real admissions catch up.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let queue = lock(&self.queue);
        let epochs = self.completed.epochs();
        let current = self.state.load(Ordering::Acquire);
        let completed = Completed::extend(epochs, current);
        let in_flight = state::in_flight(current);
        let admitted = completed + in_flight;
        let admitted = admitted.max(
            self.counters
                .admitted_reported
                .fetch_max(admitted, Ordering::Relaxed),
        );
        let c = &self.counters;
        Snapshot {
            limit: self.max.load(Ordering::Relaxed) as usize,
            in_flight: in_flight as usize,
            queued: queue.len(),
            bypass_in_flight: c.bypass_in_flight.load(Ordering::Relaxed) as usize,
            closed: current & CLOSED != 0,
            admitted,
            completed,
            bypassed: c.bypassed.load(Ordering::Relaxed),
            rejected_queue_full: c.rejected_queue_full.load(Ordering::Relaxed),
            rejected_closed: c.rejected_closed.load(Ordering::Relaxed),
            rejected_predicted: c.rejected_predicted.load(Ordering::Relaxed),
            timed_out: c.timed_out.load(Ordering::Relaxed),
            cancelled: c.cancelled.load(Ordering::Relaxed),
            mean_release_interval: queue.mean_interval(),
        }
    }
}

/// Wakers collected under the lock and woken after it is released, so a woken task on
/// another thread does not run straight into the lock we still hold.
#[derive(Default)]
struct Wakers {
    first: Option<Waker>,
    rest: Vec<Waker>,
}

impl Wakers {
    fn push(&mut self, waker: Waker) {
        if self.first.is_none() {
            self.first = Some(waker);
        } else {
            self.rest.push(waker);
        }
    }

    fn extend(&mut self, wakers: Vec<Waker>) {
        wakers.into_iter().for_each(|w| self.push(w));
    }

    fn wake(self) {
        if let Some(first) = self.first {
            first.wake();
        }
        self.rest.into_iter().for_each(Waker::wake);
    }
}
