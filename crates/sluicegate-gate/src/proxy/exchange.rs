//! The upstream exchange and the permit it holds. Polled by the request's own task (no
//! spawn, no channel per request); if the client goes away first, the exchange moves to a
//! task of its own and keeps the permit until the upstream is done. A handshake the
//! upstream answers `101` hands the permit to its tunnel ([`super::tunnel`]).

use std::sync::Arc;
use std::time::Duration;

use http::{Response, StatusCode, request};
use http_body_util::Either;
use sluicegate::adaptive::Outcome as Sample;
use tokio::time::{Instant, timeout_at};

use super::answer::GateBody;
use super::answer_ahead::AnswerBody;
use super::body::PermitBody;
use super::client_body::{BodyRules, ClientFault, Progress};
use super::headers::Added;
use super::read_ahead::RequestBody;
use super::tunnel::{self, ClientSide};
use super::upstream::{self, SendError, Sending, UpstreamBody};
use crate::pool::{Held, Outcome, Pool};

type Sent = Result<Response<UpstreamBody>, SendError>;

/// Why an exchange brought no answer from the upstream.
#[derive(Clone, Copy, Debug)]
pub(super) enum Failed {
    /// The upstream's failure, counted as `Outcome`.
    Upstream(Outcome),
    /// The client failed to send its request body.
    Client(ClientFault),
}

/// A request on its way to the upstream, with the permit it holds.
pub(super) struct Exchange {
    pool: Arc<Pool>,
    pending: Option<Sending>,
    /// How far the client's body has come, for a request with one.
    body: Option<Arc<Progress>>,
    held: Option<Held>,
    start: Instant,
    /// For a handshake for a tunnel: the client's side of it.
    tunnel: Option<Box<ClientSide>>,
}

impl Exchange {
    /// Sends the request `parts` and `body` (origin-form, `Host` set, its framing set for
    /// what was read ahead) with the headers this
    /// hop adds to the pool's upstream; the client's body is held to `rules` (its longest
    /// wait between two reads, its most bytes). A handshake for a tunnel comes with the
    /// client's side of it (`tunnel`).
    pub(super) fn start(
        pool: Arc<Pool>,
        parts: request::Parts,
        body: RequestBody,
        added: Added,
        held: Held,
        rules: BodyRules,
        tunnel: Option<Box<ClientSide>>,
    ) -> Self {
        let start = Instant::now();
        let (pending, body) =
            upstream::send(pool.upstream.authority.clone(), parts, body, added, rules);
        Exchange {
            pending: Some(pending),
            body,
            held: Some(held),
            start,
            pool,
            tunnel,
        }
    }

    /// The upstream's response head, its body carrying the permit (or, for a `101`, the
    /// tunnel carrying it); or why there is none (the permit is then released).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it resolves does not drop the exchange: it carries on in
    /// a task of its own, holding the permit, until the upstream answers or times out.
    pub(super) async fn finish(mut self) -> Result<Response<GateBody>, Failed> {
        let Some(pending) = self.pending.as_mut() else {
            return Err(Failed::Upstream(Outcome::UpstreamError));
        };
        let timeout = self.pool.upstream_timeout;
        let result = answered(pending, self.start, timeout, self.body.as_deref()).await;
        self.pending = None;
        // Taken only now: dropped while it waits, the exchange still holds the permit and
        // moves to a task of its own.
        match self.held.take() {
            Some(held) => {
                let tunnel = self.tunnel.take();
                settle(
                    &self.pool,
                    self.start,
                    result,
                    self.body.as_ref(),
                    held,
                    tunnel,
                )
            }
            None => Err(Failed::Upstream(Outcome::UpstreamError)),
        }
    }
}

type Answer = Result<Sent, ()>;

/// Waits for the upstream's answer: up to the upstream timeout after the exchange started
/// or, for a request with a body, after the upstream last got a part of it (the end
/// included). While the upstream waits for the client's next bytes the clock stands still:
/// the client's own timeout runs then (see [`super::client_body`]).
async fn answered(
    pending: &mut Sending,
    start: Instant,
    timeout: Duration,
    body: Option<&Progress>,
) -> Answer {
    let Some(body) = body else {
        return timeout_at(start + timeout, pending).await.map_err(|_| ());
    };
    loop {
        let next = match body.upstream_deadline(timeout) {
            Some(deadline) if deadline <= Instant::now() => return Err(()),
            Some(deadline) => deadline,
            // Looked at again at the latest one timeout after the wait ends.
            None => Instant::now() + timeout,
        };
        if let Ok(sent) = timeout_at(next, &mut *pending).await {
            return Ok(sent);
        }
    }
}

/// Counts and logs how the exchange ended, and hands the permit to the body (or the
/// tunnel) or releases it.
fn settle(
    pool: &Arc<Pool>,
    start: Instant,
    result: Answer,
    body: Option<&Arc<Progress>>,
    mut held: Held,
    tunnel: Option<Box<ClientSide>>,
) -> Result<Response<GateBody>, Failed> {
    let failed = match (result, body.and_then(|b| b.fault())) {
        (Ok(Ok(response)), _) => {
            // The time the upstream spent waiting for a slow client's body is the client's:
            // left out of the latency counted and learnt from.
            let client = body.map_or(Duration::ZERO, |b| b.client_time());
            pool.stats
                .upstream_latency
                .observe(start.elapsed().saturating_sub(client));
            held.exclude(client);
            pool.stats.count(Outcome::Forwarded);
            if response.status() == StatusCode::SWITCHING_PROTOCOLS {
                // Only a handshake for a tunnel gets one through (`upstream::relay`).
                return Ok(tunnel::open(pool, response, held, tunnel));
            }
            // An overloaded upstream's answers are drops. A `429` is no sample: it says a
            // client sent too many (RFC 6585 §4), often a per-client quota, and one client
            // must not pull every client's limit down with it.
            let sample = match response.status() {
                StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT => Sample::Dropped,
                StatusCode::TOO_MANY_REQUESTS => Sample::Ignored,
                _ => Sample::Success,
            };
            // A body the client abandons is read to its end (for one more upstream timeout
            // at most) before the slot is freed.
            let rest = pool.upstream_timeout;
            // The answer's stall timer asks the client's body whether it is the one waited on.
            let client = body.cloned();
            return Ok(response.map(|b| {
                Either::Right(Box::new(AnswerBody::new(PermitBody::new(
                    b,
                    held,
                    sample,
                    rest,
                    client,
                    pool.clone(),
                ))))
            }));
        }
        (_, Some(fault)) => {
            // The client's doing, not the upstream's: nothing for an adaptive limit to
            // learn, no upstream failure to count.
            held.finish(Sample::Ignored);
            pool.stats.refuse(&pool.name, fault.outcome());
            return Err(Failed::Client(fault));
        }
        (Ok(Err(e)), None) => {
            held.finish(Sample::Ignored);
            let outcome = match e {
                SendError::Connect(_) => Outcome::UpstreamUnreachable,
                SendError::Http(_) | SendError::Wire(_) => Outcome::UpstreamError,
            };
            // Formatted only if logged: a dead upstream fails every request.
            let error = format_args!("{e} ({})", pool.upstream);
            pool.stats.refuse_because(&pool.name, outcome, &error);
            outcome
        }
        (Err(()), None) => {
            // Dropping the request future closed its upstream connection: the upstream sees
            // the request end, and the slot is free again.
            held.finish(Sample::Dropped);
            let error = format_args!(
                "no answer from {} within upstream_timeout {:?}",
                pool.upstream, pool.upstream_timeout
            );
            pool.stats
                .refuse_because(&pool.name, Outcome::UpstreamTimeout, &error);
            Outcome::UpstreamTimeout
        }
    };
    Err(Failed::Upstream(failed))
}

impl Drop for Exchange {
    fn drop(&mut self) {
        let (Some(mut pending), Some(held)) = (self.pending.take(), self.held.take()) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (pool, start, body) = (self.pool.clone(), self.start, self.body.take());
        // The client is gone: a `101` makes no tunnel.
        drop(self.tunnel.take());
        // The client is gone but the upstream is still working on its request: keep the
        // slot until it is done. A body that comes back is drained by `PermitBody`.
        runtime.spawn(async move {
            let timeout = pool.upstream_timeout;
            let result = answered(&mut pending, start, timeout, body.as_deref()).await;
            drop(settle(&pool, start, result, body.as_ref(), held, None));
        });
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use futures_util::future::poll_immediate;

    use super::*;

    /// The upstream timeout stands still while the upstream waits for the client's body and
    /// runs from the body's last part on. Defect pinned (end to end in `tests/hostile.rs`):
    /// it ran from the start of the exchange, so a slow client's body ended in `504` and an
    /// upstream drop.
    #[tokio::test(start_paused = true)]
    async fn the_upstream_clock_stands_still_while_the_client_sends_slowly() {
        let timeout = Duration::from_secs(1);
        let ms = Duration::from_millis;
        let body = Progress::new();
        let mut never: Sending = Box::pin(std::future::pending());
        let mut wait = pin!(answered(&mut never, Instant::now(), timeout, Some(&body)));
        tokio::time::advance(timeout - ms(1)).await;
        assert!(poll_immediate(wait.as_mut()).await.is_none());
        body.waits();
        tokio::time::advance(10 * timeout).await;
        assert!(
            poll_immediate(wait.as_mut()).await.is_none(),
            "the client's wait is not the upstream's"
        );
        body.moved(None, false);
        tokio::time::advance(timeout - ms(1)).await;
        assert!(poll_immediate(wait.as_mut()).await.is_none());
        body.moved(None, false);
        tokio::time::advance(timeout - ms(1)).await;
        assert!(
            poll_immediate(wait.as_mut()).await.is_none(),
            "the clock runs from the last part"
        );
        tokio::time::advance(ms(1)).await;
        assert!(matches!(poll_immediate(wait.as_mut()).await, Some(Err(()))));
    }
}
