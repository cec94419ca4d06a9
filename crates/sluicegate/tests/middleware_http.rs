//! The HTTP concurrency layer at the poll level: `503` answers, their headers and body,
//! and the permit held through the response body.

mod support;

use http::{Request, StatusCode};
use sluicegate::concurrency::ConcurrencyLimiter;
use sluicegate::http::RejectionMapping;
use sluicegate::middleware::http_concurrency::HttpConcurrencyLimitLayer;
use tokio_test::{assert_pending, assert_ready_ok, task};
use tower_test::mock;

use support::{Req, Res, ok, text};

#[tokio::test(start_paused = true)]
async fn overloaded_request_gets_503_with_retry_after_and_a_short_body() {
    let lim = ConcurrencyLimiter::builder(1).max_queue(0).build().unwrap();
    let (mut first, mut handle) =
        mock::spawn_layer::<Req, Res, _>(HttpConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    let mut second = mock::Spawn::new(first.get_ref().clone());
    assert_ready_ok!(first.poll_ready());
    assert_ready_ok!(second.poll_ready());

    let response = second.call(Request::new(())).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(text(response.into_body()).await, "overloaded: queue_full\n");
}

#[tokio::test(start_paused = true)]
async fn closed_limiter_answers_503_and_status_is_configurable() {
    let lim = ConcurrencyLimiter::new(4);
    lim.close();
    let layer = HttpConcurrencyLimitLayer::new(lim)
        .mapping(RejectionMapping::default().overloaded_status(StatusCode::TOO_MANY_REQUESTS));
    let (mut service, _handle) = mock::spawn_layer::<Req, Res, _>(layer);
    assert_ready_ok!(service.poll_ready());
    let response = service.call(Request::new(())).await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(response.headers().contains_key("retry-after"));
    // Not "overloaded: closed" (review 4, finding 10): a closed limit is shut on purpose,
    // not overloaded.
    assert_eq!(
        text(response.into_body()).await,
        "closed: the limit is shut (closed, or its limit set to 0), not overloaded\n"
    );
}

#[tokio::test(start_paused = true)]
async fn permit_is_held_until_the_response_body_is_read() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut service, mut handle) =
        mock::spawn_layer::<Req, Res, _>(HttpConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let mut response = task::spawn(service.call(Request::new(())));
    assert_pending!(response.poll());
    let (_, send) = handle.next_request().await.unwrap();
    send.send_response(ok("streamed"));
    let response = assert_ready_ok!(response.poll());
    assert_eq!(
        lim.snapshot().in_flight,
        1,
        "the body still holds the permit"
    );
    assert!(response.body().holds_permit());
    assert_eq!(text(response.into_body()).await, "streamed");
    assert_eq!(lim.snapshot().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn permit_is_released_when_an_unread_body_is_dropped() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut service, mut handle) =
        mock::spawn_layer::<Req, Res, _>(HttpConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let mut response = task::spawn(service.call(Request::new(())));
    assert_pending!(response.poll());
    handle
        .next_request()
        .await
        .unwrap()
        .1
        .send_response(ok("x"));
    let response = assert_ready_ok!(response.poll());
    drop(response);
    assert_eq!(lim.snapshot().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn permit_is_released_with_the_response_head_when_configured() {
    let lim = ConcurrencyLimiter::new(1);
    let layer = HttpConcurrencyLimitLayer::new(lim.clone()).hold_through_body(false);
    let (mut service, mut handle) = mock::spawn_layer::<Req, Res, _>(layer);
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let mut response = task::spawn(service.call(Request::new(())));
    assert_pending!(response.poll());
    handle
        .next_request()
        .await
        .unwrap()
        .1
        .send_response(ok("x"));
    let response = assert_ready_ok!(response.poll());
    assert_eq!(lim.snapshot().in_flight, 0);
    drop(response);
}

#[tokio::test(start_paused = true)]
async fn permit_is_released_when_the_handler_fails() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut service, mut handle) =
        mock::spawn_layer::<Req, Res, _>(HttpConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let mut response = task::spawn(service.call(Request::new(())));
    assert_pending!(response.poll());
    handle.next_request().await.unwrap().1.send_error("boom");
    assert!(response.poll().is_ready());
    assert_eq!(lim.snapshot().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn http_layer_releases_a_reserved_permit_when_the_service_is_dropped() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut service, mut handle) =
        mock::spawn_layer::<Req, Res, _>(HttpConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let clone = service.get_ref().clone();
    assert_eq!(lim.snapshot().in_flight, 1, "the clone holds nothing");
    drop(clone);
    assert_eq!(lim.snapshot().in_flight, 1);
    drop(service);
    assert_eq!(lim.snapshot().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn http_waiter_is_served_after_the_body_of_the_running_request_ends() {
    let lim = ConcurrencyLimiter::builder(1).max_queue(1).build().unwrap();
    let (mut first, mut handle) =
        mock::spawn_layer::<Req, Res, _>(HttpConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(2);
    let mut second = mock::Spawn::new(first.get_ref().clone());
    assert_ready_ok!(first.poll_ready());
    let mut response = task::spawn(first.call(Request::new(())));
    assert_pending!(response.poll());
    handle
        .next_request()
        .await
        .unwrap()
        .1
        .send_response(ok("body"));
    let response = assert_ready_ok!(response.poll());

    assert_pending!(second.poll_ready(), "the body still holds the only permit");
    assert_eq!(text(response.into_body()).await, "body");
    assert!(second.is_woken());
    assert_ready_ok!(second.poll_ready());
}

/// What the kill switch answers through the HTTP layer. `set_max(0)` pauses: a request
/// waits in the queue for its timeout and then gets `503 overloaded: queue_timeout` (with no
/// timeout it waits for a raise); `close()` answers `503 closed` at once. The guide called
/// `set_max(0)` a kill switch answering the `closed` body.
#[tokio::test(start_paused = true)]
async fn a_limit_of_zero_pauses_and_close_turns_away_at_once() {
    let lim = ConcurrencyLimiter::builder(4)
        .queue_timeout(std::time::Duration::from_secs(2))
        .build()
        .unwrap();
    lim.set_max(0).unwrap();
    let (mut service, _handle) =
        mock::spawn_layer::<Req, Res, _>(HttpConcurrencyLimitLayer::new(lim.clone()));
    assert_pending!(service.poll_ready());
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    assert_ready_ok!(service.poll_ready());
    let response = service.call(Request::new(())).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        text(response.into_body()).await,
        "overloaded: queue_timeout\n"
    );

    lim.close();
    let (mut service, _handle) =
        mock::spawn_layer::<Req, Res, _>(HttpConcurrencyLimitLayer::new(lim));
    assert_ready_ok!(service.poll_ready());
    let response = service.call(Request::new(())).await.unwrap();
    assert!(text(response.into_body()).await.starts_with("closed:"));
}
