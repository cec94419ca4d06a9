//! A pool's limits kept in the store — a global pool's rate and concurrency limit, a global
//! per-client rate — asked asynchronously. Pools without them never come here (their path
//! stays synchronous).

use std::pin::pin;

use http::Response;
use sluicegate::concurrency::Rejected;
use sluicegate::http::{RatePolicy, RejectionMapping};
use sluicegate::rate::Decision;
use sluicegate_redis::concurrency::AcquireError;
use tokio::time::Instant;

use super::answer::{self, GateBody};
use super::conn::Conn;
use super::handle::{admit, rate_limited, reject};
use crate::pool::{Global, GlobalPerKey, GlobalRate, Held, Outcome, Pool};

/// Asks the pool's global rate; the `429` when it says no. When the failure policy says
/// no (`deny`, Redis not answering), the answer is the one a slot gets then, `503
/// store_unavailable`: a `429 rate_limited` told clients and the operator that clients were
/// over the rate, where the store was out (trial34).
pub(super) async fn check_rate(pool: &Pool, rate: &GlobalRate) -> Option<Response<GateBody>> {
    let (d, store_failed) = rate.check().await;
    refusal(pool, &d, store_failed, &pool.policy_names.0, || {
        rate.policy()
    })
}

/// Asks the pool's global per-client rate about the client `key`
/// ([`GlobalPerKey::key_of`]); answered as [`check_rate`] answers, under the per-client
/// policy's name.
pub(super) async fn check_per_key(
    pool: &Pool,
    k: &GlobalPerKey,
    key: &[u8],
) -> Option<Response<GateBody>> {
    let (d, store_failed) = k.check(key).await;
    refusal(pool, &d, store_failed, &pool.policy_names.1, || k.policy())
}

/// The answer to a global rate's decision `d`: none when it allows; `503
/// store_unavailable` when the failure policy `deny` made it; else `429` under the policy
/// `name`.
fn refusal(
    pool: &Pool,
    d: &Decision,
    store_failed: bool,
    name: &str,
    policy: impl FnOnce() -> RatePolicy,
) -> Option<Response<GateBody>> {
    if !d.is_denied() {
        return None;
    }
    if store_failed {
        reject(pool, Outcome::StoreUnavailable);
        return Some(answer::store_unavailable(d.retry_after()));
    }
    Some(rate_limited(pool, name, d, Some(policy())))
}

/// Waits for a global permit (in the store's FIFO queue, leaving it as soon as the client
/// hangs up, or with `503 closed` as soon as the pool is closed or killed), then for a slot
/// in the local limiter in front, which answers `closed` for a closed pool.
pub(super) async fn admit_global(
    pool: &Pool,
    g: &Global,
    conn: &Conn,
) -> Result<Held, Response<GateBody>> {
    if g.shell.snapshot().closed {
        // The local limiter turns it away as `closed`, without asking the store.
        return admit(pool, conn).await;
    }
    let start = Instant::now();
    // Counts the client as gone unless it gets an answer from the store: it hung up while
    // it waited (the watch below), or the future was dropped (the connection ended).
    let mut leaving = Leaving(pool, true);
    let acquired = {
        let mut acquire = pin!(g.global.acquire());
        loop {
            // Armed before the pool is asked, so that a close just after is not missed.
            let mut closing = pin!(pool.stats.closing.notified());
            closing.as_mut().enable();
            if g.shell.is_closed() {
                // Closed or killed while it waited: turned away at once, as the local
                // queue's waiters are (the store's queue is left as `acquire` drops).
                leaving.1 = false;
                drop(leaving);
                return admit(pool, conn).await;
            }
            tokio::select! {
                biased;
                r = acquire.as_mut() => break Some(r),
                () = conn.closed() => break None,
                () = closing => {}
            }
        }
    };
    // A round trip to Redis is not a wait: only waits longer than a millisecond count.
    let waited = start.elapsed();
    if waited > std::time::Duration::from_millis(1) {
        pool.stats.queue_wait.observe(waited);
    }
    // A client that hung up just as its turn came: the close may be in the socket before
    // the reactor has said so (as in the local queue). Asked only after a real wait.
    let acquired = acquired.filter(|r| {
        r.is_err() || waited <= std::time::Duration::from_millis(1) || !conn.is_closed_now()
    });
    leaving.1 = acquired.is_none();
    drop(leaving);
    let permit = match acquired {
        Some(Ok(permit)) => permit,
        Some(Err(e)) => {
            let retry_after = e.retry_after();
            let rejected = match e {
                AcquireError::Timeout { .. } => Rejected::QueueTimeout { retry_after },
                AcquireError::Unavailable { .. } => {
                    reject(pool, Outcome::StoreUnavailable);
                    return Err(answer::store_unavailable(retry_after));
                }
                _ => Rejected::QueueFull { retry_after },
            };
            reject(pool, Outcome::of(&rejected));
            return Err(answer::overloaded(&RejectionMapping::default(), &rejected));
        }
        None => {
            // A permit taken for a client that has gone is released here, unused.
            tracing::debug!(pool = %pool.name, "client left the global queue");
            return Err(answer::plain(
                http::StatusCode::SERVICE_UNAVAILABLE,
                Outcome::ClientGone.name(),
                "client gone\n",
            ));
        }
    };
    match admit(pool, conn).await? {
        Held::Plain(slot) => Ok(Held::Global(permit, slot)),
        other => Ok(other),
    }
}

/// Counts a client as gone from a global pool's queue when dropped armed.
struct Leaving<'a>(&'a Pool, bool);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        if self.1 {
            self.0.stats.count(Outcome::ClientGone);
        }
    }
}
