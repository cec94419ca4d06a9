//! The concurrency layers under an adaptive limit: each request is a sample, and the
//! algorithm's answer becomes the limit; callers held back are counted for the algorithm,
//! through the layers and through `AdaptiveLimiter::acquire`.

mod support;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use sluicegate::adaptive::{AdaptiveLimiter, Aimd, AimdConfig};
use sluicegate::concurrency::ConcurrencyLimiter;
use sluicegate::middleware::concurrency::ConcurrencyLimitLayer;
use sluicegate::middleware::http_concurrency::HttpConcurrencyLimitLayer;
use tokio_test::{assert_pending, assert_ready_ok, task};
use tower_test::mock;

use support::{Req, Res};

fn aimd(initial: usize) -> AdaptiveLimiter {
    let limiter = ConcurrencyLimiter::builder(initial).build().unwrap();
    let config = AimdConfig {
        initial,
        min: 1,
        max: 100,
        ..AimdConfig::default()
    };
    AdaptiveLimiter::new(limiter, Aimd::new(config))
}

fn status(code: u16) -> Res {
    let mut r = Response::new(Full::new(Bytes::from_static(b"x")));
    *r.status_mut() = StatusCode::from_u16(code).unwrap();
    r
}

/// One request through an HTTP service answering `code`; returns the response, body unread.
async fn through<S>(
    service: &mut mock::Spawn<S>,
    handle: &mut mock::Handle<Req, Res>,
    code: u16,
) -> S::Response
where
    S: tower::Service<Req>,
    S::Response: std::fmt::Debug,
    S::Error: std::fmt::Debug,
{
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let mut response = task::spawn(service.call(Request::new(())));
    assert_pending!(response.poll());
    handle
        .next_request()
        .await
        .unwrap()
        .1
        .send_response(status(code));
    assert_ready_ok!(response.poll())
}

#[tokio::test(start_paused = true)]
async fn http_503_backs_the_limit_off_and_a_success_grows_it() {
    let adaptive = aimd(10);
    let layer = HttpConcurrencyLimitLayer::adaptive(adaptive.clone());
    let (mut service, mut handle) = mock::spawn_layer::<Req, Res, _>(layer);

    let response = through(&mut service, &mut handle, 503).await;
    assert_eq!(
        adaptive.limit(),
        10,
        "the sample is taken when the body ends"
    );
    response.into_body().collect().await.unwrap();
    assert_eq!(adaptive.limit(), 9, "a 503 is a drop: 10 × 0.9");

    let response = through(&mut service, &mut handle, 500).await;
    response.into_body().collect().await.unwrap();
    assert_eq!(adaptive.limit(), 9, "a 500 says nothing about load");

    // A success with enough in flight grows the limit by one.
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(through(&mut service, &mut handle, 200).await);
    }
    let last = through(&mut service, &mut handle, 200).await;
    last.into_body().collect().await.unwrap();
    assert_eq!(adaptive.limit(), 10);

    // A body dropped before its end (a client that hung up) teaches nothing.
    drop(held);
    assert_eq!(adaptive.limit(), 10);
    assert_eq!(adaptive.limiter().snapshot().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn generic_layer_counts_an_error_as_a_drop() {
    let adaptive = aimd(10);
    let layer = ConcurrencyLimitLayer::adaptive(adaptive.clone());
    let (mut service, mut handle) = mock::spawn_layer::<u32, u32, _>(layer);
    handle.allow(1);
    assert_ready_ok!(service.poll_ready());
    let mut response = task::spawn(service.call(1));
    assert_pending!(response.poll());
    handle
        .next_request()
        .await
        .unwrap()
        .1
        .send_error("timed out");
    assert!(response.poll().is_ready());
    assert_eq!(adaptive.limit(), 9);
    assert_eq!(adaptive.limiter().snapshot().in_flight, 0);
}

/// A fixed limit that records the demand counts the limiter tells it: callers held back, and
/// of those turned away without waiting.
#[derive(Debug)]
struct Recorder(usize, Seen, Seen);

type Seen = std::sync::Arc<std::sync::Mutex<Vec<u64>>>;

impl sluicegate::adaptive::LimitAlgorithm for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn limit(&self) -> usize {
        self.0
    }
    fn on_sample(&mut self, _: &sluicegate::adaptive::Sample) -> usize {
        self.0
    }
    fn on_demand(&mut self, blocked: u64) {
        self.1.lock().unwrap().push(blocked);
    }
    fn on_turned_away(&mut self, turned_away: u64) {
        self.2.lock().unwrap().push(turned_away);
    }
}

/// One permit and a queue, under a [`Recorder`]: the limiter and the counts it is told.
fn recorded() -> (AdaptiveLimiter, Seen) {
    let (adaptive, seen, _) = recorded_with_queue(10);
    (adaptive, seen)
}

/// One permit and a queue of `max_queue`, under a [`Recorder`]: the limiter and the counts it
/// is told (held back, turned away at once).
fn recorded_with_queue(max_queue: usize) -> (AdaptiveLimiter, Seen, Seen) {
    let (seen, turned_away) = (Seen::default(), Seen::default());
    let limiter = ConcurrencyLimiter::builder(1)
        .max_queue(max_queue)
        .build()
        .unwrap();
    let adaptive = AdaptiveLimiter::new(limiter, Recorder(1, seen.clone(), turned_away.clone()));
    (adaptive, seen, turned_away)
}

/// Review 28 finding 2: without a queue (`max_queue = 0`) every caller held back is turned
/// away at once, and the algorithm must be told so apart from those that wait (a Little's-law
/// limit reads its demand from them). Both paths count it: `AdaptiveLimiter::acquire` and a
/// layer acquiring from the limiter; a caller that waits is not counted as turned away.
#[tokio::test(start_paused = true)]
async fn callers_turned_away_without_waiting_are_counted_apart_for_the_algorithm() {
    let (adaptive, held, turned_away) = recorded_with_queue(0);
    let first = adaptive.acquire().await.unwrap();
    assert!(adaptive.acquire().await.is_err(), "no queue: turned away");
    let layer = ConcurrencyLimitLayer::adaptive(adaptive.clone());
    let (mut service, _handle) = mock::spawn_layer::<u32, u32, _>(layer);
    assert_ready_ok!(service.poll_ready(), "ready, with the rejection to answer");
    assert!(service.call(1).await.is_err());
    first.success();
    assert_eq!(*held.lock().unwrap(), vec![2]);
    assert_eq!(*turned_away.lock().unwrap(), vec![2]);

    // With a queue, a caller held back waits: held back, not turned away.
    let (adaptive, held, turned_away) = recorded_with_queue(10);
    let first = adaptive.acquire().await.unwrap();
    let waiter = {
        let adaptive = adaptive.clone();
        tokio::spawn(async move { adaptive.acquire().await.unwrap().success() })
    };
    tokio::task::yield_now().await;
    first.success();
    waiter.await.unwrap();
    assert_eq!(*held.lock().unwrap(), vec![1, 1]);
    assert_eq!(*turned_away.lock().unwrap(), vec![0, 0]);
}

/// Review 30: a closed limiter's refusals are no demand the resource could serve. Counted as
/// held back (not turned away), they read to a Little's-law limit as callers that waited.
#[tokio::test(start_paused = true)]
async fn a_closed_limiters_refusals_are_not_counted_as_demand() {
    let (adaptive, held, turned_away) = recorded_with_queue(0);
    let first = adaptive.acquire().await.unwrap();
    adaptive.limiter().close();
    assert!(adaptive.acquire().await.is_err(), "closed");
    let layer = ConcurrencyLimitLayer::adaptive(adaptive.clone());
    let (mut service, _handle) = mock::spawn_layer::<u32, u32, _>(layer);
    assert_ready_ok!(service.poll_ready(), "ready, with the rejection to answer");
    assert!(service.call(1).await.is_err());
    first.success();
    assert_eq!(*held.lock().unwrap(), vec![0]);
    assert_eq!(*turned_away.lock().unwrap(), vec![0]);
    assert_eq!(adaptive.held_back_counts(), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn callers_acquire_finds_every_permit_taken_are_counted_for_the_algorithm() {
    let (adaptive, seen) = recorded();
    let first = adaptive.acquire().await.unwrap();
    let waiter = {
        let adaptive = adaptive.clone();
        tokio::spawn(async move { adaptive.acquire().await.unwrap().success() })
    };
    tokio::task::yield_now().await;
    assert_eq!(adaptive.limiter().snapshot().queued, 1);
    first.success();
    waiter.await.unwrap();
    // The first caller got a free permit; the second found it taken and waited.
    assert_eq!(*seen.lock().unwrap(), vec![1, 1]);
}

/// The layer acquires from the limiter itself, so it must tell the algorithm of a caller
/// whose first try found every permit taken (the demand a Little's-law start leaps to):
/// before, the count stayed 0 behind the layers and only `AdaptiveLimiter::acquire` fed it.
#[tokio::test(start_paused = true)]
async fn a_caller_the_layer_holds_back_is_counted_for_the_algorithm() {
    let (adaptive, seen) = recorded();
    let layer = ConcurrencyLimitLayer::adaptive(adaptive.clone());
    let (mut first, mut handle) = mock::spawn_layer::<u32, u32, _>(layer);
    let mut second = mock::Spawn::new(first.get_mut().clone());
    handle.allow(2);

    assert_ready_ok!(first.poll_ready());
    let mut running = task::spawn(first.call(1));
    assert_pending!(running.poll());
    assert_pending!(second.poll_ready(), "the only permit is taken");
    assert_pending!(second.poll_ready(), "polled again while it waits");

    let (_, reply) = handle.next_request().await.unwrap();
    reply.send_response(1);
    assert_ready_ok!(running.poll());
    assert_eq!(
        seen.lock().unwrap().last(),
        Some(&1),
        "one caller held back, counted once however often it is polled"
    );
    assert_ready_ok!(
        second.poll_ready(),
        "the released permit went to the waiter"
    );
}
