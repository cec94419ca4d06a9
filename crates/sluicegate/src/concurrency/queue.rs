//! The wait queue: who waits, in which order, and how long the line is likely to take.
//!
//! Lives behind the limiter's mutex; nothing here is touched on the permit fast path.

use std::collections::BTreeMap;
use std::task::Waker;
use std::time::Duration;

use crate::clock::Nanos;
use crate::sync::{Arc, AtomicU64, Ordering};

/// The order in which waiters are served within one priority class.
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub u8);

impl Priority {
    /// Background work.
    pub const LOW: Priority = Priority(64);
    /// The default.
    pub const NORMAL: Priority = Priority(128);
    /// Served before everything else that waits.
    pub const HIGH: Priority = Priority(192);
}

/// Position in the queue: the smallest key is served next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    /// `u8::MAX - priority`, so higher priorities sort first.
    class: u8,
    /// Arrival sequence (FIFO) or its complement (LIFO).
    seq: u64,
}

/// What happened to one waiter; written under the queue lock, read by its future without it.
#[derive(Debug)]
pub(crate) struct Node {
    state: AtomicU64,
}

pub(crate) const WAITING: u64 = 0;
pub(crate) const GRANTED: u64 = 1;
pub(crate) const CLOSED: u64 = 2;

impl Node {
    pub(crate) fn state(&self) -> u64 {
        // Acquire pairs with the Release in `finish`: a granted waiter sees everything the
        // previous permit holder did.
        self.state.load(Ordering::Acquire)
    }

    fn finish(&self, outcome: u64) {
        self.state.store(outcome, Ordering::Release);
    }
}

/// A waiter's claim on its place in line.
#[derive(Debug)]
pub(crate) struct Ticket {
    pub(crate) key: Key,
    pub(crate) node: Arc<Node>,
}

#[derive(Debug)]
struct Waiter {
    node: Arc<Node>,
    waker: Waker,
}

/// The waiters, the drainers and the service-time estimate.
#[derive(Debug)]
pub(crate) struct Queue {
    order: QueueOrder,
    waiters: BTreeMap<Key, Waiter>,
    next_seq: u64,
    drainers: Vec<Waker>,
    estimate: ReleaseInterval,
}

impl Queue {
    pub(crate) fn new(order: QueueOrder) -> Self {
        Queue {
            order,
            waiters: BTreeMap::new(),
            next_seq: 0,
            drainers: Vec::new(),
            estimate: ReleaseInterval::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.waiters.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.waiters.is_empty()
    }

    /// The key a new waiter of `priority` would get (not yet inserted).
    pub(crate) fn next_key(&self, priority: Priority) -> Key {
        let seq = match self.order {
            QueueOrder::Fifo => self.next_seq,
            QueueOrder::Lifo => u64::MAX - self.next_seq,
        };
        Key {
            class: u8::MAX - priority.0,
            seq,
        }
    }

    /// How many waiters would be served before (and including) a waiter with `key`.
    pub(crate) fn position(&self, key: Key) -> usize {
        if self
            .waiters
            .last_key_value()
            .is_none_or(|(last, _)| *last < key)
        {
            self.waiters.len() + 1
        } else {
            self.waiters.range(..key).count() + 1
        }
    }

    pub(crate) fn push(&mut self, key: Key, waker: Waker) -> Ticket {
        self.next_seq += 1;
        let node = Arc::new(Node {
            state: AtomicU64::new(WAITING),
        });
        let waiter = Waiter {
            node: node.clone(),
            waker,
        };
        self.waiters.insert(key, waiter);
        Ticket { key, node }
    }

    /// Grants a permit to the next waiter and returns its waker.
    pub(crate) fn grant_next(&mut self) -> Option<Waker> {
        let (_, waiter) = self.waiters.pop_first()?;
        waiter.node.finish(GRANTED);
        Some(waiter.waker)
    }

    /// Removes a waiter that gave up; `false` if it was no longer queued.
    pub(crate) fn remove(&mut self, key: Key) -> bool {
        self.waiters.remove(&key).is_some()
    }

    /// Replaces a waiter's waker if the task polling it changed.
    pub(crate) fn update_waker(&mut self, key: Key, waker: &Waker) {
        if let Some(waiter) = self.waiters.get_mut(&key) {
            if !waiter.waker.will_wake(waker) {
                waiter.waker = waker.clone();
            }
        }
    }

    /// Tells every waiter the limiter closed; returns their wakers and how many there were.
    pub(crate) fn close_all(&mut self) -> Vec<Waker> {
        std::mem::take(&mut self.waiters)
            .into_values()
            .map(|waiter| {
                waiter.node.finish(CLOSED);
                waiter.waker
            })
            .collect()
    }

    pub(crate) fn add_drainer(&mut self, waker: &Waker) {
        if !self.drainers.iter().any(|w| w.will_wake(waker)) {
            self.drainers.push(waker.clone());
        }
    }

    pub(crate) fn take_drainers(&mut self) -> Vec<Waker> {
        std::mem::take(&mut self.drainers)
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
