//! Poll-level tests of the generic concurrency layer: reserve in `poll_ready`, consume in
//! `call`, release on response, error, future drop and service drop.

use std::task::Poll;
use std::time::Duration;

use sluicegate::concurrency::{ConcurrencyLimiter, Rejected};
use sluicegate::middleware::concurrency::ConcurrencyLimitLayer;
use tokio_test::{assert_pending, assert_ready, assert_ready_ok, task};
use tower_test::mock;

fn limiter(max: usize, queue: usize) -> ConcurrencyLimiter {
    ConcurrencyLimiter::builder(max)
        .max_queue(queue)
        .build()
        .unwrap()
}

fn in_flight(limiter: &ConcurrencyLimiter) -> usize {
    limiter.snapshot().in_flight
}

#[tokio::test(start_paused = true)]
async fn permit_is_reserved_by_poll_ready_and_released_on_response() {
    let lim = limiter(1, 0);
    let (mut service, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);

    assert_ready_ok!(service.poll_ready());
    assert_eq!(in_flight(&lim), 1, "poll_ready reserves");
    let mut response = task::spawn(service.call(7));
    assert_pending!(response.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req, 7);
    assert_eq!(
        in_flight(&lim),
        1,
        "the call holds the permit while it runs"
    );
    send.send_response(8);
    assert_eq!(assert_ready_ok!(response.poll()), 8);
    assert_eq!(in_flight(&lim), 0);
    assert_eq!(lim.snapshot().completed, 1);
}

#[tokio::test(start_paused = true)]
async fn permit_is_released_when_the_inner_service_fails() {
    let lim = limiter(1, 0);
    let (mut service, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let mut response = task::spawn(service.call(1));
    let (_, send) = handle.next_request().await.unwrap();
    send.send_error("backend exploded");
    let err = assert_ready!(response.poll()).unwrap_err();
    assert_eq!(err.to_string(), "backend exploded");
    assert_eq!(in_flight(&lim), 0);
}

#[tokio::test(start_paused = true)]
async fn permit_is_released_when_the_response_future_is_dropped() {
    let lim = limiter(1, 0);
    let (mut service, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let response = service.call(1);
    assert_eq!(in_flight(&lim), 1);
    drop(response);
    assert_eq!(in_flight(&lim), 0);
}

#[tokio::test(start_paused = true)]
async fn reserved_permit_is_released_when_the_service_is_dropped() {
    let lim = limiter(1, 0);
    let (mut service, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    assert_eq!(in_flight(&lim), 1);
    drop(service);
    assert_eq!(in_flight(&lim), 0);
}

#[tokio::test(start_paused = true)]
async fn a_clone_starts_without_a_reservation() {
    let lim = limiter(2, 0);
    let (mut service, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(2);
    assert_ready_ok!(service.poll_ready());
    let clone = service.get_ref().clone();
    assert_eq!(in_flight(&lim), 1, "cloning copies no permit");
    let mut clone = mock::Spawn::new(clone);
    assert_ready_ok!(clone.poll_ready());
    assert_eq!(in_flight(&lim), 2, "the clone reserves its own");
    drop(clone);
    assert_eq!(in_flight(&lim), 1, "and releases only its own");
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "poll_ready must return Ready first")]
async fn call_without_poll_ready_panics() {
    let lim = limiter(1, 0);
    let (mut service, _handle) = mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim));
    drop(service.call(1));
}

#[tokio::test(start_paused = true)]
async fn waiter_in_poll_ready_is_woken_when_a_permit_frees() {
    let lim = limiter(1, 10);
    let (mut first, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(2);
    let mut second = mock::Spawn::new(first.get_ref().clone());

    assert_ready_ok!(first.poll_ready());
    assert_pending!(second.poll_ready());
    assert_eq!(lim.snapshot().queued, 1);
    assert!(!second.is_woken());

    let mut response = task::spawn(first.call(1));
    assert_pending!(response.poll());
    let (_, send) = handle.next_request().await.unwrap();
    send.send_response(1);
    assert_ready_ok!(response.poll());

    assert!(second.is_woken(), "the release wakes the waiter");
    assert_ready_ok!(second.poll_ready());
    assert_eq!(in_flight(&lim), 1);
    assert_eq!(lim.snapshot().queued, 0);
}

#[tokio::test(start_paused = true)]
async fn rejection_is_delivered_from_call_without_reaching_the_inner_service() {
    let lim = limiter(1, 0);
    let (mut first, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(2);
    let mut second = mock::Spawn::new(first.get_ref().clone());
    assert_ready_ok!(first.poll_ready());

    // Queue of 0: no waiting, poll_ready is ready at once and `call` carries the rejection.
    assert_ready_ok!(second.poll_ready());
    let err = second.call(2).await.unwrap_err();
    let rejected = err.downcast_ref::<Rejected>().expect("a Rejected error");
    assert!(matches!(rejected, Rejected::QueueFull { .. }));
    assert!(matches!(handle.poll_request(), Poll::Pending), "never sent");
    assert_eq!(lim.snapshot().rejected_queue_full, 1);
}

#[tokio::test(start_paused = true)]
async fn queued_caller_gives_up_after_the_queue_timeout() {
    let lim = ConcurrencyLimiter::builder(1)
        .max_queue(4)
        .queue_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let (mut first, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(2);
    let mut second = mock::Spawn::new(first.get_ref().clone());
    assert_ready_ok!(first.poll_ready());
    assert_pending!(second.poll_ready());

    tokio::time::advance(Duration::from_millis(199)).await;
    assert_pending!(second.poll_ready());
    tokio::time::advance(Duration::from_millis(1)).await;
    assert!(second.is_woken());
    assert_ready_ok!(second.poll_ready());
    let err = second.call(2).await.unwrap_err();
    assert!(matches!(
        err.downcast_ref::<Rejected>(),
        Some(Rejected::QueueTimeout { .. })
    ));
    assert_eq!(lim.snapshot().timed_out, 1);
}

#[tokio::test(start_paused = true)]
async fn services_built_from_one_limiter_share_its_limit() {
    let lim = limiter(1, 4);
    let (mut route_a, mut handle_a) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    let (mut route_b, mut handle_b) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle_a.allow(1);
    handle_b.allow(1);
    assert_ready_ok!(route_a.poll_ready());
    assert_pending!(route_b.poll_ready(), "route b waits for route a's permit");
    drop(route_a);
    assert!(route_b.is_woken());
    assert_ready_ok!(route_b.poll_ready());
}

#[tokio::test(start_paused = true)]
async fn waiting_service_dropped_leaves_the_queue() {
    let lim = limiter(1, 4);
    let (mut first, mut handle) =
        mock::spawn_layer::<u32, u32, _>(ConcurrencyLimitLayer::new(lim.clone()));
    handle.allow(1);
    let mut second = mock::Spawn::new(first.get_ref().clone());
    assert_ready_ok!(first.poll_ready());
    assert_pending!(second.poll_ready());
    assert_eq!(lim.snapshot().queued, 1);
    drop(second);
    let snap = lim.snapshot();
    assert_eq!((snap.queued, snap.cancelled), (0, 1));
}
