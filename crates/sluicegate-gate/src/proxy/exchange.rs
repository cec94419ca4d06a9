//! The upstream exchange and the permit it holds. Polled by the request's own task (no
//! spawn, no channel per request); if the client goes away first, the exchange moves to a
//! task of its own and keeps the permit until the upstream is done.

use std::sync::Arc;

use http::{Response, StatusCode, request};
use hyper::body::Incoming;
use sluicegate::adaptive::Outcome as Sample;
use tokio::time::{Instant, timeout_at};

use super::body::PermitBody;
use super::headers::Added;
use super::upstream::{self, SendError, Sending, UpstreamBody};
use crate::pool::{Held, Outcome, Pool};

type Sent = Result<Response<UpstreamBody>, SendError>;

/// A request on its way to the upstream, with the permit it holds.
pub(super) struct Exchange {
    pool: Arc<Pool>,
    pending: Option<Sending>,
    held: Option<Held>,
    start: Instant,
    deadline: Instant,
}

impl Exchange {
    /// Sends the request `parts` and `body` (origin-form, `Host` set) with the headers this
    /// hop adds to the pool's upstream.
    pub(super) fn start(
        pool: Arc<Pool>,
        parts: request::Parts,
        body: Incoming,
        added: Added,
        held: Held,
    ) -> Self {
        let start = Instant::now();
        Exchange {
            pending: Some(upstream::send(
                pool.upstream.authority.clone(),
                parts,
                body,
                added,
            )),
            held: Some(held),
            start,
            deadline: start + pool.upstream_timeout,
            pool,
        }
    }

    /// The upstream's response head, its body carrying the permit; or why there is none
    /// (the permit is then released).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it resolves does not drop the exchange: it carries on in
    /// a task of its own, holding the permit, until the upstream answers or times out.
    pub(super) async fn finish(mut self) -> Result<Response<Box<PermitBody>>, Outcome> {
        let Some(pending) = self.pending.as_mut() else {
            return Err(Outcome::UpstreamError);
        };
        let result = timeout_at(self.deadline, pending).await;
        self.pending = None;
        let held = self.held.take();
        match held {
            Some(held) => settle(&self.pool, self.start, result.map_err(|_| ()), held),
            None => Err(Outcome::UpstreamError),
        }
    }
}

type Answer = Result<Sent, ()>;

/// Counts and logs how the exchange ended, and hands the permit to the body or releases it.
fn settle(
    pool: &Pool,
    start: Instant,
    result: Answer,
    held: Held,
) -> Result<Response<Box<PermitBody>>, Outcome> {
    let failed = match result {
        Ok(Ok(response)) => {
            pool.stats.upstream_latency.observe(start.elapsed());
            pool.stats.count(Outcome::Forwarded);
            let sample = match response.status() {
                StatusCode::SERVICE_UNAVAILABLE
                | StatusCode::TOO_MANY_REQUESTS
                | StatusCode::GATEWAY_TIMEOUT => Sample::Dropped,
                _ => Sample::Success,
            };
            // A body the client abandons is read to its end (for one more upstream timeout
            // at most) before the slot is freed.
            let rest = pool.upstream_timeout;
            return Ok(response.map(|body| Box::new(PermitBody::new(body, held, sample, rest))));
        }
        Ok(Err(e)) => {
            held.finish(Sample::Ignored);
            let outcome = match e {
                SendError::Connect(_) => Outcome::UpstreamUnreachable,
                SendError::Http(_) | SendError::Wire(_) => Outcome::UpstreamError,
            };
            tracing::info!(pool = %pool.name, reason = outcome.name(), error = %e, "rejected");
            outcome
        }
        Err(()) => {
            // Dropping the request future closed its upstream connection: the upstream sees
            // the request end, and the slot is free again.
            held.finish(Sample::Dropped);
            tracing::info!(pool = %pool.name, reason = Outcome::UpstreamTimeout.name(), "rejected");
            Outcome::UpstreamTimeout
        }
    };
    pool.stats.count(failed);
    Err(failed)
}

impl Drop for Exchange {
    fn drop(&mut self) {
        let (Some(pending), Some(held)) = (self.pending.take(), self.held.take()) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (pool, start, deadline) = (self.pool.clone(), self.start, self.deadline);
        // The client is gone but the upstream is still working on its request: keep the
        // slot until it is done. A body that comes back is drained by `PermitBody`.
        runtime.spawn(async move {
            let result = timeout_at(deadline, pending).await.map_err(|_| ());
            drop(settle(&pool, start, result, held));
        });
    }
}
