//! A global permit: a lease in Redis, renewed while held, released on drop.

use std::sync::Arc;

use sluicegate::concurrency::OwnedPermit;
use tokio::task::JoinHandle;

use super::limiter::{Inner, millis};
use super::scripts::{RELEASE, RENEW};

/// One of a [`GlobalConcurrency`](super::GlobalConcurrency)'s permits. Dropping it releases
/// the permit (the release is sent to Redis from a spawned task) and wakes the first waiter
/// of every instance.
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
            Held::Lease(id) => Some(tokio::spawn(renew(inner.clone(), id.clone()))),
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
        let mut conn = inner.store.connection();
        let mut call = RENEW.key(&inner.leases);
        call.arg(millis(inner.ttl)).arg(&id);
        if let Some(0) = inner.store.call(call.invoke_async::<i64>(&mut conn)).await {
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
        let Held::Lease(id) = std::mem::replace(&mut self.held, Held::Nothing) else {
            return;
        };
        // Without a runtime (it is shutting down) the lease expires after its TTL.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let inner = self.inner.clone();
            runtime.spawn(async move {
                let mut conn = inner.store.connection();
                let mut call = RELEASE.key(&inner.leases);
                call.key(&inner.channel).arg(&id);
                let _ = inner.store.call(call.invoke_async::<i64>(&mut conn)).await;
            });
        }
    }
}
