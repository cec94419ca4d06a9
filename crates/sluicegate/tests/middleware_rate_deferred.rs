//! The deferred rate layer (`RateLimitLayer::deferred`): a decision that takes time (a limit
//! in Redis) is awaited before the request goes inward; a synchronous check plugs in through
//! `Immediate` and answers exactly as the plain layer does.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use http::{Request, StatusCode};
use sluicegate::http::RatePolicy;
use sluicegate::middleware::rate::{AsyncRateCheck, Immediate, RateCheck, RateLimitLayer};
use sluicegate::rate::Decision;
use tokio_test::{assert_pending, assert_ready, assert_ready_ok, task};
use tower_test::mock;

use support::{Req, Res, ok};

/// Allows the first `limit` requests ever, answering after a 5 ms "round trip".
struct Remote {
    limit: u32,
    seen: AtomicU32,
}

impl Remote {
    fn decide(&self) -> Decision {
        let n = self.seen.fetch_add(1, Ordering::SeqCst);
        let reset = Duration::from_secs(60);
        if n < self.limit {
            Decision::allow(self.limit, self.limit - n - 1, reset)
        } else {
            Decision::deny(self.limit, 0, Duration::from_secs(2), reset)
        }
    }
}

impl AsyncRateCheck<()> for Remote {
    type Future = Pin<Box<dyn Future<Output = Decision> + Send>>;

    fn check(&self, _: ()) -> Self::Future {
        let decision = self.decide();
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            decision
        })
    }

    fn policy(&self) -> Option<RatePolicy> {
        Some(RatePolicy::new(
            u64::from(self.limit),
            Duration::from_secs(60),
        ))
    }
}

impl RateCheck<()> for Remote {
    fn check(&self, _: &()) -> Decision {
        self.decide()
    }

    fn policy(&self) -> Option<RatePolicy> {
        AsyncRateCheck::policy(self)
    }
}

fn remote(limit: u32) -> Arc<Remote> {
    Arc::new(Remote {
        limit,
        seen: AtomicU32::new(0),
    })
}

#[tokio::test(start_paused = true)]
async fn the_request_goes_inward_only_once_the_decision_has_come() {
    let layer = RateLimitLayer::deferred(remote(1)).policy_name("global");
    let (mut service, mut handle) = mock::spawn_layer::<Req, Res, _>(layer);
    handle.allow(2);

    assert_ready_ok!(service.poll_ready());
    let mut first = task::spawn(service.call(Request::new(())));
    assert_pending!(first.poll());
    let mut arrived = task::spawn(handle.next_request());
    assert_pending!(arrived.poll(), "no request inward before the decision");
    tokio::time::advance(Duration::from_millis(5)).await;
    assert_pending!(first.poll());
    let (_, reply) = assert_ready!(arrived.poll()).unwrap();
    drop(arrived);
    reply.send_response(ok("fine"));
    let first = assert_ready_ok!(first.poll());
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(first.headers()["ratelimit"], r#""global";r=0;t=60"#);

    assert_ready_ok!(service.poll_ready());
    let mut second = task::spawn(service.call(Request::new(())));
    assert_pending!(second.poll());
    tokio::time::advance(Duration::from_millis(5)).await;
    let second = assert_ready_ok!(second.poll());
    assert_eq!(second.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(second.headers()["retry-after"], "2");
    assert_eq!(second.headers()["ratelimit-policy"], r#""global";q=1;w=60"#);
    let mut none = task::spawn(handle.next_request());
    assert_pending!(none.poll(), "a denied request never reaches the service");
}

#[tokio::test(start_paused = true)]
async fn a_synchronous_check_answers_at_once_through_immediate() {
    let layer = RateLimitLayer::deferred(Immediate(remote(1))).policy_name("local");
    let (mut service, mut handle) = mock::spawn_layer::<Req, Res, _>(layer);
    handle.allow(2);

    assert_ready_ok!(service.poll_ready());
    let mut first = task::spawn(service.call(Request::new(())));
    assert_pending!(first.poll()); // waiting for the inner service, not for time
    handle
        .next_request()
        .await
        .unwrap()
        .1
        .send_response(ok("fine"));
    assert_eq!(assert_ready_ok!(first.poll()).status(), StatusCode::OK);

    assert_ready_ok!(service.poll_ready());
    let mut second = task::spawn(service.call(Request::new(())));
    let second = assert_ready_ok!(second.poll(), "ready at the first poll");
    assert_eq!(second.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(second.headers()["ratelimit-policy"], r#""local";q=1;w=60"#);
}
