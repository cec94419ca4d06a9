//! Layer overhead: sluicegate's concurrency layers over a no-op service, against tower's
//! `ConcurrencyLimit` over the same service, in one run. Report the ratio, not nanoseconds.
//!
//! Each iteration is one request as a server sees it: `poll_ready`, `call`, poll the
//! response future to completion (which releases the permit). The no-op service alone is the
//! physical floor.

use std::convert::Infallible;
use std::future::{Future, Ready, ready};
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluicegate::concurrency::ConcurrencyLimiter;
use sluicegate::middleware::concurrency::ConcurrencyLimit;
use sluicegate::middleware::http_concurrency::HttpConcurrencyLimit;
use tower::Service;

/// Answers at once with its request.
#[derive(Clone, Copy)]
struct Noop;

impl<R> Service<R> for Noop {
    type Response = R;
    type Error = Infallible;
    type Future = Ready<Result<R, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: R) -> Self::Future {
        ready(Ok(req))
    }
}

/// Answers every HTTP request with an empty `200`.
#[derive(Clone, Copy)]
struct HttpNoop;

impl Service<http::Request<()>> for HttpNoop {
    type Response = http::Response<()>;
    type Error = Infallible;
    type Future = Ready<Result<http::Response<()>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Request<()>) -> Self::Future {
        ready(Ok(http::Response::new(())))
    }
}

/// One request through `service`, polled by hand with a no-op waker (no runtime in the loop).
///
/// Never inlined, for every contender alike: how much of the layer the compiler folds into
/// criterion's loop otherwise decides the result more than the layer does.
#[inline(never)]
fn one<S: Service<R>, R>(service: &mut S, req: R, cx: &mut Context<'_>) {
    assert!(service.poll_ready(cx).is_ready());
    let future = pin!(service.call(req));
    let Poll::Ready(out) = future.poll(cx) else {
        panic!("a no-op answers at once")
    };
    black_box(out.is_ok());
}

fn limiter() -> ConcurrencyLimiter {
    ConcurrencyLimiter::builder(1024).build().unwrap()
}

fn tower_limit<S>(inner: S) -> tower::limit::ConcurrencyLimit<S> {
    tower::limit::ConcurrencyLimit::new(inner, 1024)
}

/// One long-lived service, as behind `tower::buffer` or a hand-written server loop.
fn reused(c: &mut Criterion) {
    let mut group = c.benchmark_group("middleware/reused");
    group.throughput(Throughput::Elements(1));
    let mut cx = Context::from_waker(Waker::noop());

    let mut noop = Noop;
    group.bench_function("noop", |b| b.iter(|| one(&mut noop, 1u32, &mut cx)));
    let mut ours = ConcurrencyLimit::new(Noop, limiter());
    group.bench_function("sluicegate", |b| b.iter(|| one(&mut ours, 1u32, &mut cx)));
    let mut http = HttpConcurrencyLimit::new(HttpNoop, limiter());
    group.bench_function("sluicegate_http", |b| {
        b.iter(|| one(&mut http, http::Request::new(()), &mut cx))
    });
    let mut theirs = tower_limit(Noop);
    group.bench_function("tower", |b| b.iter(|| one(&mut theirs, 1u32, &mut cx)));
    let mut theirs_http = tower_limit(HttpNoop);
    group.bench_function("tower_http", |b| {
        b.iter(|| one(&mut theirs_http, http::Request::new(()), &mut cx))
    });
    group.finish();
}

/// A fresh clone per request, as axum and hyper-util do (`oneshot` on a clone).
fn clone_per_request(c: &mut Criterion) {
    let mut group = c.benchmark_group("middleware/clone_per_request");
    group.throughput(Throughput::Elements(1));
    let mut cx = Context::from_waker(Waker::noop());

    let ours = ConcurrencyLimit::new(Noop, limiter());
    group.bench_function("sluicegate", |b| {
        b.iter(|| one(&mut ours.clone(), 1u32, &mut cx))
    });
    let http = HttpConcurrencyLimit::new(HttpNoop, limiter());
    group.bench_function("sluicegate_http", |b| {
        b.iter(|| one(&mut http.clone(), http::Request::new(()), &mut cx))
    });
    let theirs = tower_limit(Noop);
    group.bench_function("tower", |b| {
        b.iter(|| one(&mut theirs.clone(), 1u32, &mut cx))
    });
    let theirs_http = tower_limit(HttpNoop);
    group.bench_function("tower_http", |b| {
        b.iter(|| one(&mut theirs_http.clone(), http::Request::new(()), &mut cx))
    });
    group.finish();
}

/// The limiter alone, for reading the layer numbers: what a permit costs by each path.
fn permit_paths(c: &mut Criterion) {
    let mut group = c.benchmark_group("middleware/permit");
    group.throughput(Throughput::Elements(1));
    let mut cx = Context::from_waker(Waker::noop());
    let lim = limiter();
    group.bench_function("try_acquire", |b| {
        b.iter(|| black_box(lim.try_acquire().is_ok()))
    });
    group.bench_function("acquire_owned_polled", |b| {
        b.iter(|| {
            let Poll::Ready(permit) = pin!(lim.acquire_owned()).poll(&mut cx) else {
                panic!()
            };
            black_box(permit.is_ok())
        })
    });
    group.bench_function("handle_clone", |b| b.iter(|| black_box(lim.clone())));
    group.bench_function("try_acquire_and_handle_clone", |b| {
        b.iter(|| {
            let l = lim.clone();
            black_box(l.try_acquire().is_ok())
        })
    });
    let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(1024));
    group.bench_function("tokio_try_acquire_owned", |b| {
        b.iter(|| black_box(sem.clone().try_acquire_owned().is_ok()))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = permit_paths, reused, clone_per_request
}
criterion_main!(benches);
