//! The client layer at the poll level: waits in the response future, bypass and priority
//! through request extensions, release on response and on drop.

use std::task::Poll;

use http::Request;
use sluicegate::concurrency::{ConcurrencyLimiter, Priority, Rejected};
use sluicegate::middleware::client::{Bypass, ClientLimitLayer};
use tokio_test::{assert_pending, assert_ready_ok, task};
use tower_test::mock;

type Req = Request<u32>;

fn request(id: u32) -> Req {
    Request::new(id)
}

fn with<T: Clone + Send + Sync + 'static>(id: u32, ext: T) -> Req {
    let mut req = request(id);
    req.extensions_mut().insert(ext);
    req
}

#[tokio::test(start_paused = true)]
async fn permit_is_taken_by_call_and_released_on_response() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut client, mut handle) =
        mock::spawn_layer::<Req, u32, _>(ClientLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(client.poll_ready());
    let mut response = task::spawn(client.call(request(1)));
    assert_eq!(
        lim.snapshot().in_flight,
        1,
        "a free permit is taken by call itself"
    );
    assert_pending!(response.poll());
    let (req, send) = handle.next_request().await.unwrap();
    send.send_response(*req.body());
    assert_eq!(assert_ready_ok!(response.poll()), 1);
    assert_eq!(lim.snapshot().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn bypass_request_is_sent_at_once_and_consumes_no_permit() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut client, mut handle) =
        mock::spawn_layer::<Req, u32, _>(ClientLimitLayer::new(lim.clone()));
    handle.allow(3);
    assert_ready_ok!(client.poll_ready());
    let mut busy = task::spawn(client.call(request(1)));
    assert_pending!(busy.poll());

    assert_ready_ok!(client.poll_ready());
    let mut health = task::spawn(client.call(with(2, Bypass)));
    assert_pending!(health.poll());
    let snap = lim.snapshot();
    assert_eq!(
        (snap.in_flight, snap.bypass_in_flight, snap.queued),
        (1, 1, 0)
    );

    let (first, send_first) = handle.next_request().await.unwrap();
    let (second, send_second) = handle.next_request().await.unwrap();
    assert_eq!((*first.body(), *second.body()), (1, 2));
    send_second.send_response(2);
    assert_eq!(assert_ready_ok!(health.poll()), 2);
    assert_eq!(lim.snapshot().bypass_in_flight, 0);
    assert_eq!(lim.snapshot().bypassed, 1);
    send_first.send_response(1);
    assert_ready_ok!(busy.poll());
}

#[tokio::test(start_paused = true)]
async fn kill_switch_holds_requests_while_bypass_still_goes_through() {
    let lim = ConcurrencyLimiter::new(2);
    lim.set_max(0).unwrap();
    let (mut client, mut handle) =
        mock::spawn_layer::<Req, u32, _>(ClientLimitLayer::new(lim.clone()));
    handle.allow(2);
    assert_ready_ok!(client.poll_ready());
    let mut held = task::spawn(client.call(request(1)));
    assert_pending!(held.poll());
    assert!(
        matches!(handle.poll_request(), Poll::Pending),
        "nothing sent while paused"
    );

    assert_ready_ok!(client.poll_ready());
    let mut health = task::spawn(client.call(with(2, Bypass)));
    assert_pending!(health.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(*req.body(), 2);
    send.send_response(2);
    assert_ready_ok!(health.poll());

    lim.set_max(2).unwrap();
    assert!(held.is_woken(), "lifting the switch wakes the held request");
    assert_pending!(held.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(*req.body(), 1);
    send.send_response(1);
    assert_ready_ok!(held.poll());
}

#[tokio::test(start_paused = true)]
async fn higher_priority_request_is_sent_first() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut client, mut handle) =
        mock::spawn_layer::<Req, u32, _>(ClientLimitLayer::new(lim.clone()));
    handle.allow(3);
    let mut calls = Vec::new();
    for req in [request(1), with(2, Priority::LOW), with(3, Priority::HIGH)] {
        assert_ready_ok!(client.poll_ready());
        let mut call = task::spawn(client.call(req));
        assert_pending!(call.poll());
        calls.push(call);
    }
    let mut order = Vec::new();
    for _ in 0..3 {
        let (req, send) = handle.next_request().await.unwrap();
        order.push(*req.body());
        send.send_response(*req.body());
        // Poll whoever was woken until nobody is: a completion wakes the next waiter.
        while let Some(call) = calls.iter_mut().find(|c| c.is_woken()) {
            let _ = call.poll();
        }
    }
    assert_eq!(order, [1, 3, 2]);
}

/// Defect 5 (issue 8): a request without a `Priority` extension queued at priority 0,
/// below `LOW`, so a later `LOW` request overtook it.
#[tokio::test(start_paused = true)]
async fn request_without_a_priority_is_sent_before_a_later_low_one() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut client, mut handle) =
        mock::spawn_layer::<Req, u32, _>(ClientLimitLayer::new(lim.clone()));
    handle.allow(2);
    let held = lim.try_acquire_owned().unwrap();
    let mut calls = Vec::new();
    for req in [request(1), with(2, Priority::LOW)] {
        assert_ready_ok!(client.poll_ready());
        let mut call = task::spawn(client.call(req));
        assert_pending!(call.poll());
        calls.push(call);
    }
    drop(held);
    let mut order = Vec::new();
    for _ in 0..2 {
        while let Some(call) = calls.iter_mut().find(|c| c.is_woken()) {
            let _ = call.poll();
        }
        let (req, send) = handle.next_request().await.unwrap();
        order.push(*req.body());
        send.send_response(*req.body());
    }
    assert_eq!(order, [1, 2]);
}

#[tokio::test(start_paused = true)]
async fn rejection_is_the_error_and_the_request_is_not_sent() {
    let lim = ConcurrencyLimiter::new(1);
    lim.close();
    let (mut client, mut handle) =
        mock::spawn_layer::<Req, u32, _>(ClientLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(client.poll_ready());
    let err = client.call(request(1)).await.unwrap_err();
    assert!(matches!(
        err.downcast_ref::<Rejected>(),
        Some(Rejected::Closed { .. })
    ));
    assert!(matches!(handle.poll_request(), Poll::Pending));
}

#[tokio::test(start_paused = true)]
async fn dropping_a_waiting_request_leaves_the_queue_and_a_sent_one_releases() {
    let lim = ConcurrencyLimiter::new(1);
    let (mut client, mut handle) =
        mock::spawn_layer::<Req, u32, _>(ClientLimitLayer::new(lim.clone()));
    handle.allow(2);
    assert_ready_ok!(client.poll_ready());
    let mut sent = task::spawn(client.call(request(1)));
    assert_pending!(sent.poll());
    assert_ready_ok!(client.poll_ready());
    let mut waiting = task::spawn(client.call(request(2)));
    assert_pending!(waiting.poll());
    assert_eq!(lim.snapshot().queued, 1);
    drop(waiting);
    assert_eq!(lim.snapshot().queued, 0);
    drop(sent);
    assert_eq!(lim.snapshot().in_flight, 0);
}

type HttpRes = http::Response<http_body_util::Full<bytes::Bytes>>;

#[tokio::test(start_paused = true)]
async fn permit_is_held_until_the_response_body_is_read_when_asked() {
    use http_body_util::BodyExt;

    let lim = ConcurrencyLimiter::new(1);
    let layer = ClientLimitLayer::new(lim.clone()).hold_through_body();
    let (mut client, mut handle) = mock::spawn_layer::<Req, HttpRes, _>(layer);
    handle.allow(2);
    assert_ready_ok!(client.poll_ready());
    let mut response = task::spawn(client.call(request(1)));
    assert_pending!(response.poll());
    let (_, send) = handle.next_request().await.unwrap();
    send.send_response(http::Response::new(http_body_util::Full::new(
        bytes::Bytes::from_static(b"streamed"),
    )));
    let response = assert_ready_ok!(response.poll());
    assert_eq!(
        lim.snapshot().in_flight,
        1,
        "the body still holds the permit"
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"streamed");
    assert_eq!(lim.snapshot().in_flight, 0);

    // A body dropped unread gives the permit back too.
    assert_ready_ok!(client.poll_ready());
    let mut response = task::spawn(client.call(request(2)));
    assert_pending!(response.poll());
    let (_, send) = handle.next_request().await.unwrap();
    send.send_response(http::Response::new(http_body_util::Full::new(
        bytes::Bytes::from_static(b"unread"),
    )));
    let response = assert_ready_ok!(response.poll());
    assert_eq!(lim.snapshot().in_flight, 1);
    drop(response);
    let s = lim.snapshot();
    assert_eq!((s.in_flight, s.completed), (0, 2));
}

#[tokio::test(start_paused = true)]
async fn failed_call_releases_its_permit_even_when_holding_through_the_body() {
    let lim = ConcurrencyLimiter::new(1);
    let layer = ClientLimitLayer::new(lim.clone()).hold_through_body();
    let (mut client, mut handle) = mock::spawn_layer::<Req, HttpRes, _>(layer);
    handle.allow(1);
    assert_ready_ok!(client.poll_ready());
    let mut response = task::spawn(client.call(request(1)));
    assert_pending!(response.poll());
    handle
        .next_request()
        .await
        .unwrap()
        .1
        .send_error("connection reset");
    assert!(matches!(response.poll(), Poll::Ready(Err(_))));
    assert_eq!(lim.snapshot().in_flight, 0);
}
