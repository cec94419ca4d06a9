//! A global limit in sluicegate's HTTP rate layer: `RateLimitLayer::deferred(RedisCheck)`
//! answers `429` with the `RateLimit` headers from the decision Redis made.

mod support;

use std::num::NonZeroU32;

use http::{Request, Response, StatusCode};
use sluicegate::middleware::rate::RateLimitLayer;
use sluicegate::rate::Quota;
use sluicegate_redis::{GlobalGcra, RedisCheck};
use tower_test::mock;

#[tokio::test]
async fn the_rate_layer_asks_redis_and_answers_429_over_the_global_rate() {
    let redis = support::RedisServer::start();
    let (a, b) = (support::store(&redis).await, support::store(&redis).await);
    let quota = Quota::per_hour(3600).with_burst(NonZeroU32::new(1).unwrap());
    // Two instances, one global limit of burst 1: the second request anywhere is refused.
    let layer = |store| {
        let limit = GlobalGcra::builder(store, "api", quota).build().unwrap();
        RateLimitLayer::deferred(RedisCheck::new(limit)).policy_name("api")
    };
    let (mut one, mut one_inner) = mock::spawn_layer::<Request<()>, Response<&str>, _>(layer(&a));
    let (mut two, _two_inner) = mock::spawn_layer::<Request<()>, Response<&str>, _>(layer(&b));
    one_inner.allow(1);

    tokio_test::assert_ready_ok!(one.poll_ready());
    let first = tokio::spawn(one.call(Request::new(())));
    let (_, reply) = one_inner.next_request().await.unwrap();
    reply.send_response(Response::new("fine"));
    let first = first.await.unwrap().unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(
        first.headers()["ratelimit-policy"],
        r#""api";q=3600;w=3600"#
    );

    tokio_test::assert_ready_ok!(two.poll_ready());
    let second = two.call(Request::new(())).await.unwrap();
    assert_eq!(second.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(second.headers()["retry-after"], "1");
}
