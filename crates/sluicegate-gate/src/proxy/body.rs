//! The upstream's response body on its way to the client, carrying the request's permit:
//! the slot is freed when the upstream has sent the whole body, not when the client leaves,
//! and not later than an upstream timeout after the upstream last sent a byte.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use sluicegate::adaptive::Outcome;
use tokio::time::{Instant, Sleep};

use super::client_body::Progress;
use super::upstream::{BodyError, UpstreamBody};
use crate::pool::Held;

/// An upstream body that releases its permit when the upstream is done sending it.
///
/// Dropped early (the client went away), it keeps reading the upstream's body in a task of
/// its own, up to `deadline`, and releases the permit only then: the upstream is still busy
/// with the request, and freeing its slot would let the gate exceed the limit.
///
/// An upstream that stops sending in the middle of a body while the client waits: after
/// `deadline` without a byte the body ends in an error (hyper cuts the client's connection:
/// a short body is never passed off as whole), the upstream connection is closed and the
/// slot freed. The timer is armed only when a read has to wait. While the upstream itself
/// waits for the rest of the client's request body (it answered early, or echoes it), the
/// wait is the client's: the answer is not cut for it (`client_body_timeout` bounds it).
#[derive(Debug)]
pub(crate) struct PermitBody {
    /// The body, and with it the upstream connection, reusable once read to its end.
    inner: Option<UpstreamBody>,
    held: Option<Held>,
    /// How the request ended for an adaptive limit (an overload status counts as dropped).
    outcome: Outcome,
    deadline: Duration,
    /// How long the upstream has kept the body waiting.
    stall: Stall,
    /// How far the client's request body has come, for a request with one.
    client: Option<Arc<Progress>>,
    /// Whose answer: a body the upstream breaks off is counted and logged there.
    pool: Arc<crate::pool::Pool>,
}

/// How long a body has been kept waiting (by the upstream, or by the client for its
/// request body): a timer armed the first time the body
/// has to wait, set again when a frame came since it was last set.
#[derive(Debug, Default)]
pub(super) struct Stall {
    sleep: Option<Pin<Box<Sleep>>>,
    /// A frame came since the timer was last set.
    moved: bool,
}

impl Stall {
    /// A frame came.
    pub(super) fn moved(&mut self) {
        self.moved = true;
    }

    /// The body has to wait: ready once `after` has passed without a frame.
    pub(super) fn poll_expired(&mut self, cx: &mut Context<'_>, after: Duration) -> Poll<()> {
        // Frames before the first wait are behind the timer armed now: forgotten either way.
        let moved = std::mem::take(&mut self.moved);
        let sleep = match &mut self.sleep {
            Some(sleep) => {
                if moved {
                    sleep.as_mut().reset(Instant::now() + after);
                }
                sleep
            }
            None => self.sleep.insert(Box::pin(tokio::time::sleep(after))),
        };
        sleep.as_mut().poll(cx)
    }
}

impl PermitBody {
    /// Wraps `inner`, releasing `held` at its end as `outcome` and handing its connection
    /// back to the idle connections.
    pub(super) fn new(
        inner: UpstreamBody,
        held: Held,
        outcome: Outcome,
        deadline: Duration,
        client: Option<Arc<Progress>>,
        pool: Arc<crate::pool::Pool>,
    ) -> Self {
        PermitBody {
            inner: Some(inner),
            held: Some(held),
            outcome,
            deadline,
            stall: Stall::default(),
            client,
            pool,
        }
    }

    /// The read-ahead settings of the answer's pool ([`super::answer_ahead`]).
    pub(super) fn buffering(&self) -> &Arc<crate::buffers::Buffering> {
        &self.pool.buffering
    }

    /// Counts and logs a body the upstream broke off (see [`Stats::broke_off`](crate::pool::Stats::broke_off)).
    fn broke_off(&self, why: &dyn std::fmt::Display) {
        let pool = &self.pool;
        pool.stats.broke_off(&pool.name, &pool.upstream, why);
    }

    /// The upstream has nothing for now: waits, up to `deadline` since its last byte.
    fn wait_for_upstream(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let deadline = self.deadline;
        ready!(self.stall.poll_expired(cx, deadline));
        // The upstream waits for the client's body, or had a part of it within the
        // deadline: not the upstream's stall. The timer runs again from now.
        let waits_on_client = self.client.as_deref().is_some_and(|c| {
            c.upstream_deadline(deadline)
                .is_none_or(|d| d > Instant::now())
        });
        if waits_on_client {
            self.stall.moved();
            ready!(self.stall.poll_expired(cx, deadline));
        }
        // Stalled: close the upstream connection (it sees the request end) and free the slot.
        self.inner = None;
        self.release(Outcome::Dropped);
        self.broke_off(&format_args!("nothing for {deadline:?}"));
        Poll::Ready(Some(Err(format!(
            "upstream sent nothing for {deadline:?} in the middle of a body"
        )
        .into())))
    }

    fn release(&mut self, outcome: Outcome) {
        if let Some(h) = self.held.take() {
            h.finish(outcome);
        }
    }
}

impl Body for PermitBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let Poll::Ready(frame) = Pin::new(inner).poll_frame(cx) else {
            return self.wait_for_upstream(cx);
        };
        self.stall.moved();
        match &frame {
            None => {
                if let (Some(held), Some(inner)) = (self.held.take(), self.inner.take()) {
                    read_to_the_end(
                        held,
                        self.outcome,
                        inner,
                        self.client.as_ref(),
                        self.deadline,
                    );
                }
            }
            Some(Err(e)) => {
                // The client's body failed after the upstream answered early (it passed
                // `client_max_body_size`, stalled, broke its framing): hyper closed the
                // upstream connection for it, and the answer is cut for the client's doing,
                // counted as such and not as the upstream's broken body.
                match self.client.as_deref().and_then(Progress::fault) {
                    Some(fault) => self.pool.stats.refuse(&self.pool.name, fault.outcome()),
                    None => self.broke_off(e),
                }
                self.release(Outcome::Ignored);
            }
            Some(Ok(_)) => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Body::size_hint)
    }
}

impl Drop for PermitBody {
    fn drop(&mut self) {
        let (Some(mut inner), Some(held)) = (self.inner.take(), self.held.take()) else {
            return;
        };
        if inner.is_end_stream() {
            // The usual end: hyper stops polling a body that says it has ended.
            read_to_the_end(
                held,
                self.outcome,
                inner,
                self.client.as_ref(),
                self.deadline,
            );
            return;
        }
        let (outcome, deadline, client) = (self.outcome, self.deadline, self.client.take());
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let drained = tokio::time::timeout(deadline, async {
                while let Some(frame) = inner.frame().await {
                    if frame.is_err() {
                        return false;
                    }
                }
                true
            })
            .await;
            if drained == Ok(true) {
                read_to_the_end(held, outcome, inner, client.as_ref(), deadline);
            } else {
                held.finish(Outcome::Ignored);
            }
        });
    }
}

/// The upstream has sent the whole body: its slot is free, and its connection can take
/// another request once it has the whole request body (`request`), which it must take
/// within `timeout` ([`UpstreamBody::check_in`]).
fn read_to_the_end(
    held: Held,
    outcome: Outcome,
    body: UpstreamBody,
    request: Option<&Arc<Progress>>,
    timeout: Duration,
) {
    held.finish(outcome);
    body.check_in(request, timeout);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll(stall: &mut Stall, after: Duration) -> Poll<()> {
        stall.poll_expired(&mut Context::from_waker(std::task::Waker::noop()), after)
    }

    /// A body that waits is cut one timeout after the upstream's last frame, not later.
    #[tokio::test(start_paused = true)]
    async fn a_stall_ends_one_timeout_after_the_last_frame() {
        let after = Duration::from_secs(1);
        let mut stall = Stall::default();
        stall.moved();
        assert!(poll(&mut stall, after).is_pending(), "just armed");
        tokio::time::advance(after).await;
        assert!(
            poll(&mut stall, after).is_ready(),
            "a timeout without a frame"
        );

        let mut stall = Stall::default();
        assert!(poll(&mut stall, after).is_pending());
        tokio::time::advance(Duration::from_millis(600)).await;
        stall.moved();
        assert!(
            poll(&mut stall, after).is_pending(),
            "a frame came: set again"
        );
        tokio::time::advance(Duration::from_millis(600)).await;
        assert!(
            poll(&mut stall, after).is_pending(),
            "0.6 s since the frame"
        );
        tokio::time::advance(Duration::from_millis(400)).await;
        assert!(poll(&mut stall, after).is_ready(), "1 s since the frame");
    }
}
