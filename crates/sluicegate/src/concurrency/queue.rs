//! The wait queue: who waits, in which order, and how long the line is likely to take.
//!
//! Lives behind the limiter's mutex; nothing here is touched on the permit fast path.

use std::collections::VecDeque;
use std::task::Waker;
use std::time::Duration;

use crate::clock::Nanos;

/// The order in which waiters are served within one priority class.
///
/// # Examples
///
/// ```
/// use sluicegate::concurrency::{ConcurrencyLimiter, QueueOrder};
///
/// // Under overload, serve the newest caller: it is the one most likely still waiting.
/// let limiter = ConcurrencyLimiter::builder(4).order(QueueOrder::Lifo).build().unwrap();
/// # drop(limiter);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueOrder {
    /// First come, first served. Fair; the default.
    #[default]
    Fifo,
    /// Newest first. Under sustained overload the oldest waiters are the ones about to time
    /// out anyway; serving the newest keeps the latency of served calls low.
    Lifo,
}

/// How urgent a call is. Waiters of a higher priority are always served before waiters of a
/// lower one (strict priority); within one priority the queue order applies.
///
/// The default is [`Priority::NORMAL`], not 0: a call that says nothing about its priority
/// sits in the middle, above background work.
///
/// # Examples
///
/// ```
/// use sluicegate::concurrency::{ConcurrencyLimiter, Priority};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let limiter = ConcurrencyLimiter::new(4);
/// let permit = limiter.acquire().priority(Priority::HIGH).await.unwrap();
/// assert_eq!(Priority::default(), Priority::NORMAL);
/// assert!(Priority(200) > Priority::HIGH);
/// # drop(permit);
/// # });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub u8);

/// Written by hand: a derived `Default` gave 0, below [`Priority::LOW`] (defect 5 of
/// issue 8).
impl Default for Priority {
    fn default() -> Self {
        Priority::NORMAL
    }
}

impl Priority {
    /// Background work.
    pub const LOW: Priority = Priority(64);
    /// The default.
    pub const NORMAL: Priority = Priority(128);
    /// Served before everything else that waits.
    pub const HIGH: Priority = Priority(192);
}

/// A waiter's place: its priority class and its arrival number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    /// `u8::MAX - priority`, so more urgent classes sort first.
    class: u8,
    seq: u64,
}

/// What happened to a waiter, as its future learns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Waiting,
    Granted,
    Closed,
}

/// A waiter's claim on its place in line: its key, and the slot its outcome is written to.
#[derive(Debug)]
pub(crate) struct Ticket {
    pub(crate) key: Key,
    slot: u32,
}

#[derive(Debug)]
struct Waiter {
    seq: u64,
    slot: u32,
    waker: Waker,
}

/// The waiters of one priority, oldest first.
#[derive(Debug)]
struct Class {
    class: u8,
    waiters: VecDeque<Waiter>,
}

/// The waiters, the drainers and the service-time estimate.
///
/// Waiters sit in one deque per priority class, in arrival order; FIFO serves the front,
/// LIFO the back. A departure (cancel, timeout) is found by binary search on the arrival
/// number. Each waiter's outcome is written to a slot of a compact table that its future
/// reads (under the lock) and frees once it has seen the outcome. Deques, table and free list
/// keep their buffers, so the queue stops allocating once it has seen its working size, and a
/// hand-off touches no memory of its own beyond them (no node per waiter to miss in cache).
#[derive(Debug)]
pub(crate) struct Queue {
    order: QueueOrder,
    /// Sorted by class, most urgent first; classes stay once created (at most 256).
    classes: Vec<Class>,
    len: usize,
    next_seq: u64,
    outcomes: Vec<Outcome>,
    free_slots: Vec<u32>,
    /// The drains waiting, each under the key its future holds (to update or take back its
    /// waker), with the next key to give.
    drainers: Vec<(u64, Waker)>,
    next_drainer: u64,
    estimate: ReleaseInterval,
}

impl Queue {
    pub(crate) fn new(order: QueueOrder) -> Self {
        Queue {
            order,
            classes: Vec::new(),
            len: 0,
            next_seq: 0,
            outcomes: Vec::new(),
            free_slots: Vec::new(),
            drainers: Vec::new(),
            next_drainer: 0,
            estimate: ReleaseInterval::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The key a new waiter of `priority` would get (not yet inserted).
    pub(crate) fn next_key(&self, priority: Priority) -> Key {
        Key {
            class: u8::MAX - priority.0,
            seq: self.next_seq,
        }
    }

    /// How many waiters would be served before a new waiter with `key`, plus one.
    pub(crate) fn position(&self, key: Key) -> usize {
        let ahead: usize = self
            .classes
            .iter()
            .take_while(|c| c.class < key.class)
            .map(|c| c.waiters.len())
            .sum();
        let own = match self.order {
            QueueOrder::Fifo => self.class(key.class).map_or(0, |c| c.waiters.len()),
            QueueOrder::Lifo => 0,
        };
        ahead + own + 1
    }

    fn class(&self, class: u8) -> Option<&Class> {
        let i = self
            .classes
            .binary_search_by_key(&class, |c| c.class)
            .ok()?;
        Some(&self.classes[i])
    }

    fn class_mut(&mut self, class: u8) -> Option<&mut Class> {
        let i = self
            .classes
            .binary_search_by_key(&class, |c| c.class)
            .ok()?;
        Some(&mut self.classes[i])
    }

    pub(crate) fn push(&mut self, key: Key, waker: Waker) -> Ticket {
        debug_assert_eq!(key.seq, self.next_seq);
        self.next_seq += 1;
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.outcomes[slot as usize] = Outcome::Waiting;
                slot
            }
            None => {
                self.outcomes.push(Outcome::Waiting);
                u32::try_from(self.outcomes.len() - 1).expect("fewer than 2^32 waiters")
            }
        };
        let i = match self.classes.binary_search_by_key(&key.class, |c| c.class) {
            Ok(i) => i,
            Err(i) => {
                let class = Class {
                    class: key.class,
                    waiters: VecDeque::new(),
                };
                self.classes.insert(i, class);
                i
            }
        };
        self.classes[i].waiters.push_back(Waiter {
            seq: key.seq,
            slot,
            waker,
        });
        self.len += 1;
        Ticket { key, slot }
    }

    /// What happened to the waiter of `ticket`. Once it is no longer waiting, the slot is
    /// freed: call this at most once after it returns `Granted` or `Closed`.
    pub(crate) fn take_outcome(&mut self, ticket: &Ticket) -> Outcome {
        let outcome = self.outcomes[ticket.slot as usize];
        if outcome != Outcome::Waiting {
            self.free_slots.push(ticket.slot);
        }
        outcome
    }

    /// Grants a permit to the next waiter and returns its waker.
    pub(crate) fn grant_next(&mut self) -> Option<Waker> {
        let order = self.order;
        let class = self.classes.iter_mut().find(|c| !c.waiters.is_empty())?;
        let waiter = match order {
            QueueOrder::Fifo => class.waiters.pop_front(),
            QueueOrder::Lifo => class.waiters.pop_back(),
        }?;
        self.len -= 1;
        self.outcomes[waiter.slot as usize] = Outcome::Granted;
        Some(waiter.waker)
    }

    /// Removes a waiter that gave up; `false` if it was no longer queued.
    pub(crate) fn remove(&mut self, key: Key) -> bool {
        let Some(class) = self.class_mut(key.class) else {
            return false;
        };
        let Ok(i) = class.waiters.binary_search_by_key(&key.seq, |w| w.seq) else {
            return false;
        };
        let waiter = class.waiters.remove(i).expect("index from binary search");
        self.len -= 1;
        self.free_slots.push(waiter.slot);
        true
    }

    /// Replaces a waiter's waker if the task polling it changed.
    pub(crate) fn update_waker(&mut self, key: Key, waker: &Waker) {
        let Some(class) = self.class_mut(key.class) else {
            return;
        };
        if let Ok(i) = class.waiters.binary_search_by_key(&key.seq, |w| w.seq) {
            class.waiters[i].waker.clone_from(waker);
        }
    }

    /// Tells every waiter the limiter closed; returns their wakers.
    pub(crate) fn close_all(&mut self) -> Vec<Waker> {
        self.len = 0;
        let mut wakers = Vec::new();
        for class in &mut self.classes {
            for waiter in class.waiters.drain(..) {
                self.outcomes[waiter.slot as usize] = Outcome::Closed;
                wakers.push(waiter.waker);
            }
        }
        wakers
    }

    /// Registers a drain's waker, or updates it when the drain is still registered under
    /// `key`; returns the key it is registered under.
    pub(crate) fn add_drainer(&mut self, key: Option<u64>, waker: &Waker) -> u64 {
        if let Some((key, registered)) =
            key.and_then(|k| self.drainers.iter_mut().find(|d| d.0 == k))
        {
            if !registered.will_wake(waker) {
                registered.clone_from(waker);
            }
            return *key;
        }
        let key = self.next_drainer;
        self.next_drainer += 1;
        self.drainers.push((key, waker.clone()));
        key
    }

    /// Takes back the waker of a drain that went away (none if it was woken already).
    pub(crate) fn remove_drainer(&mut self, key: u64) {
        self.drainers.retain(|d| d.0 != key);
    }

    pub(crate) fn take_drainers(&mut self) -> Vec<Waker> {
        std::mem::take(&mut self.drainers)
            .into_iter()
            .map(|(_, waker)| waker)
            .collect()
    }

    pub(crate) fn has_drainers(&self) -> bool {
        !self.drainers.is_empty()
    }

    pub(crate) fn estimate(&mut self) -> &mut ReleaseInterval {
        &mut self.estimate
    }

    pub(crate) fn mean_interval(&self) -> Option<Duration> {
        self.estimate.mean()
    }
}

/// Smoothed time between releases while callers wait: the inverse of the throughput the
/// resource achieves when it is saturated. Waiting `position × interval` is then the
/// expected wait of a waiter at that position (Little's law: queue position × service time
/// ÷ limit).
#[derive(Debug, Default)]
pub(crate) struct ReleaseInterval {
    mean_nanos: Option<f64>,
    last: Option<Nanos>,
}

impl ReleaseInterval {
    /// Weight of the newest sample.
    const ALPHA: f64 = 0.1;

    /// A release happened at `now` while the queue was not empty.
    pub(crate) fn on_release(&mut self, now: Nanos) {
        if let Some(last) = self.last {
            let sample = (now - last).as_nanos() as f64;
            self.mean_nanos = Some(match self.mean_nanos {
                Some(mean) => mean + Self::ALPHA * (sample - mean),
                None => sample,
            });
        }
        self.last = Some(now);
    }

    /// The queue became non-empty at `now`: intervals restart here, so time spent idle is
    /// not mistaken for service time.
    pub(crate) fn on_queue_start(&mut self, now: Nanos) {
        self.last = Some(now);
    }

    pub(crate) fn mean(&self) -> Option<Duration> {
        self.mean_nanos.map(|n| Duration::from_nanos(n as u64))
    }
}
