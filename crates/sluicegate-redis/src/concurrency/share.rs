//! This instance's local share of a global concurrency limit, in which its leases count.
//!
//! While Redis is down, the `Local` policy hands out permits of this instance's share
//! (`max / instances`) from a local limiter. The leases this instance still holds in Redis
//! are permits too: if the share ignored them, an instance holding its whole share in leases
//! would get its share once more locally, and the limit would be exceeded by the fallback
//! alone (review 3, item 5a: A held 2 of 2 leases, Redis stopped, A got a third permit).
//! So each lease takes a slot of the local limiter while one is free, and the slots are kept
//! here, by the share, not by the permits (so that whichever lease ends, the count is right):
//!
//! - a lease taken: `leases += 1`, and slots are taken, never waiting (Redis decided: the
//!   lease is granted), while fewer are kept than there are leases and one is free;
//! - a lease dropped: `leases -= 1`, and if more slots are kept than there are leases, one
//!   is given back — which admits the next local waiter during an outage;
//! - a local permit (the fallback) first tops the kept slots up the same way, then waits
//!   in the local limiter's queue for a slot;
//! - the store marked up again: every caller still in that queue leaves it and asks Redis
//!   again, as a newcomer (`GlobalConcurrency`'s `fall_back`, on the store's `came_up`), and a
//!   caller that fell back before the recovery but reaches the queue after it does not wait
//!   in it. The local permits already granted run to their end; their slots stay taken
//!   until then.
//!
//! So during an outage a local permit is granted only while this instance's leases and its
//! local permits together are fewer than its share, and after it only Redis grants: across
//! instances, at most `max` leases plus the local permits each instance granted before its
//! store was marked up again, for as long as those are held. (Each store learns of the
//! recovery from its own next answered call — a decision, a release, a renewal, a `ping`, its
//! pub/sub connection — and grants local permits until then: they count in the bound too.)
//! Until trial34 the queue stayed: its callers were let in as local permits ended, for up to
//! a queue timeout after Redis answered again, beside the leases new callers took (2 gates, a
//! limit of 4: 7–8 in flight for 1–3.5 s after a 2 s outage). Where it stays short: slots are
//! taken only when free, so leases beyond the share, or taken while local permits of an
//! earlier outage still filled it, count only as slots free up at the next lease or fallback;
//! other instances do not know of this one's leases (each counts its own against its own
//! share); and a caller that fell back for a lone late answer, the store still up, waits in
//! the queue as before: no recovery comes to send it back (nor would asking Redis again help
//! a caller whose key Redis refuses, the store up too: it would ask again and again).

use std::sync::{Mutex, PoisonError};

use sluicegate::concurrency::{ConcurrencyLimiter, OwnedPermit, Rejected};

#[derive(Debug)]
pub(super) struct Share {
    local: ConcurrencyLimiter,
    backing: Mutex<Backing>,
}

/// The leases this instance holds, and the local slots kept for them.
#[derive(Debug, Default)]
struct Backing {
    leases: usize,
    slots: Vec<OwnedPermit>,
}

impl Share {
    pub(super) fn new(local: ConcurrencyLimiter) -> Self {
        Share {
            local,
            backing: Mutex::new(Backing::default()),
        }
    }

    fn backing(&self) -> std::sync::MutexGuard<'_, Backing> {
        self.backing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes free slots while fewer are kept than there are leases.
    fn top_up(&self, backing: &mut Backing) {
        while backing.slots.len() < backing.leases {
            match self.local.try_acquire_owned() {
                Ok(slot) => backing.slots.push(slot),
                Err(_) => break,
            }
        }
    }

    /// A lease was taken in Redis.
    pub(super) fn lease_taken(&self) {
        let mut backing = self.backing();
        backing.leases += 1;
        self.top_up(&mut backing);
    }

    /// A lease was dropped (its release is on its way to Redis).
    pub(super) fn lease_dropped(&self) {
        let spare = {
            let mut backing = self.backing();
            backing.leases = backing.leases.saturating_sub(1);
            if backing.slots.len() > backing.leases {
                backing.slots.pop()
            } else {
                None
            }
        };
        // Given back outside the lock: it may wake a local waiter.
        drop(spare);
    }

    /// A local permit: what the share has left after this instance's leases.
    pub(super) async fn acquire(&self) -> Result<OwnedPermit, Rejected> {
        {
            let mut backing = self.backing();
            self.top_up(&mut backing);
        }
        self.local.acquire_owned().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    fn share(max: usize) -> Share {
        Share::new(ConcurrencyLimiter::builder(max).build().unwrap())
    }

    fn in_flight(s: &Share) -> usize {
        s.local.snapshot().in_flight
    }

    #[test]
    fn leases_fill_the_share_whichever_of_them_ends_first() {
        let s = share(2);
        for _ in 0..3 {
            s.lease_taken();
        }
        assert_eq!(in_flight(&s), 2, "3 leases fill a share of 2");
        assert!(s.acquire().now_or_never().is_none(), "no local permit left");
        s.lease_dropped();
        assert_eq!(in_flight(&s), 2, "2 leases still fill it");
        s.lease_dropped();
        assert_eq!(in_flight(&s), 1);
        let local = s.acquire().now_or_never().unwrap().unwrap();
        assert_eq!(in_flight(&s), 2);
        s.lease_dropped();
        assert_eq!(in_flight(&s), 1, "the local permit alone");
        drop(local);
        assert_eq!(in_flight(&s), 0);
    }

    #[test]
    fn leases_taken_while_local_permits_filled_the_share_count_once_those_end() {
        let s = share(2);
        let old = (
            s.acquire().now_or_never().unwrap().unwrap(),
            s.acquire().now_or_never().unwrap().unwrap(),
        );
        s.lease_taken();
        s.lease_taken();
        drop(old);
        assert_eq!(in_flight(&s), 0, "not counted yet");
        assert!(
            s.acquire().now_or_never().is_none(),
            "topped up first: the two leases fill the share"
        );
        assert_eq!(in_flight(&s), 2);
    }
}
