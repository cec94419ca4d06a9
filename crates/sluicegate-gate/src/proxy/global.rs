//! A global pool's limits: the rate and the concurrency limit kept in the store, asked
//! asynchronously. Local pools never come here (their path stays synchronous).

use std::pin::pin;

use http::Response;
use sluicegate::concurrency::Rejected;
use sluicegate::http::RejectionMapping;
use sluicegate_redis::concurrency::AcquireError;
use tokio::time::Instant;

use super::answer::{self, GateBody};
use super::conn::Conn;
use super::handle::{admit, rate_limited, reject};
use crate::pool::{Global, GlobalRate, Held, Outcome, Pool};

/// Asks the pool's global rate; the `429` when it says no.
pub(super) async fn check_rate(pool: &Pool, rate: &GlobalRate) -> Option<Response<GateBody>> {
    let d = rate.check().await;
    d.is_denied()
        .then(|| rate_limited(pool, &pool.policy_names.0, &d, Some(rate.policy())))
}

/// Waits for a global permit (in the store's FIFO queue, leaving it as soon as the client
/// hangs up), then for a slot in the local limiter in front, which answers `closed` for a
/// closed pool.
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
    let acquired = {
        let acquire = pin!(g.global.acquire());
        tokio::select! {
            biased;
            r = acquire => Some(r),
            () = conn.closed() => None,
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
    let permit = match acquired {
        Some(Ok(permit)) => permit,
        Some(Err(e)) => {
            let retry_after = e.retry_after();
            let rejected = match e {
                AcquireError::Timeout { .. } => Rejected::QueueTimeout { retry_after },
                // Full here, or `deny` while Redis does not answer: turned away as full.
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
