//! A global permit: a lease in Redis, renewed while held, released on drop.

use std::sync::Arc;
use std::time::Duration;

use sluicegate::concurrency::OwnedPermit;
use tokio::task::JoinHandle;

use super::limiter::{Inner, millis};
use super::scripts::{RELEASE, RENEW};

/// One of a [`GlobalConcurrency`](super::GlobalConcurrency)'s permits. Dropping it releases
/// the permit (the release is sent to Redis from a spawned task, again and again while Redis
/// is down, until Redis has it or the lease has expired) and wakes the first waiter of every
/// instance.
///
/// # Holding it outside the runtime
///
/// The lease is renewed (every TTL / 3) by a task on the runtime the permit was acquired
/// on, over the store's connection, which the runtime the store was made on drives. Hold
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
    renewal: Option<JoinHandle<()>>,
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
                Some(tokio::spawn(renew(inner.clone(), id.clone())))
            }
            _ => None,
        };
        GlobalPermit {
            inner,
            held,
            renewal,
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
/// cap for as long as it is held.
async fn renew(inner: Arc<Inner>, id: String) {
    let period = inner.ttl / 3;
    loop {
        tokio::time::sleep(period).await;
        let mut call = RENEW.key(&inner.leases);
        call.arg(millis(inner.ttl)).arg(&id);
        // `attempt`, not `call`: a renewal is no decision, and falls back to nothing.
        if let Ok(0) = inner.store.attempt::<i64>(&call).await {
            tracing::warn!(
                lease = %id,
                "global permit lease was gone from redis (flushed, restarted, or renewed too \
                 late): added back, as the permit is still held"
            );
        }
    }
}

impl Drop for GlobalPermit {
    fn drop(&mut self) {
        if let Some(renewal) = self.renewal.take() {
            renewal.abort();
        }
        if let Held::Lease(id) = std::mem::replace(&mut self.held, Held::Nothing) {
            self.inner.share.lease_dropped();
            release(&self.inner, id);
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
