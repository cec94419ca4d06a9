//! A slow upstream for the demo and the gate benchmark: the simulator's upstream model, served
//! over real HTTP.
//!
//! `workers` requests are served at once; the rest wait in the upstream's own FIFO queue. A
//! request that starts service while `q` others wait takes `1 + contention × q / workers`
//! times its service time, so an overcommitted upstream gets slower as well as later — the
//! collapse a limit in front of it prevents. It counts its own concurrency (the number a
//! limit in front of it must keep under the cap) and the requests it finished or saw
//! abandoned, and reports them at `GET /__upstream/stats`.

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rand::Rng;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::record::Kept;

/// The path at which the upstream reports its [`UpstreamStats`] as JSON.
pub const STATS_PATH: &str = "/__upstream/stats";

/// A request header the load generator sets: when its caller gives up, in microseconds of
/// the Unix epoch. The upstream counts requests it starts serving after that moment: work
/// done for nobody, which a proxy could have spared it.
pub const GIVES_UP_AT: &str = "x-client-gives-up-at";

/// How long one request takes to serve when nothing else competes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ServiceTime {
    /// Always this long (the benchmark's fixed-latency upstream).
    Fixed(Duration),
    /// Exponentially distributed with this mean (the simulator's upstream).
    Exponential(Duration),
}

impl ServiceTime {
    /// The mean service time.
    pub fn mean(self) -> Duration {
        match self {
            ServiceTime::Fixed(d) | ServiceTime::Exponential(d) => d,
        }
    }

    fn sample(self, rng: &mut impl Rng) -> Duration {
        match self {
            ServiceTime::Fixed(d) => d,
            ServiceTime::Exponential(mean) => {
                // Inverse transform; `1 - u` is in (0, 1], so the log is finite.
                let u: f64 = rng.random();
                mean.mul_f64(-(1.0 - u).ln())
            }
        }
    }
}

/// What the upstream is like.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpstreamModel {
    /// Requests served at once; `None` serves every request at once (no queue of its own).
    pub workers: Option<usize>,
    /// Service time of one request with no contention.
    pub service: ServiceTime,
    /// How much each waiting request slows a starting one, per worker (the simulator's 0.5).
    pub contention: f64,
}

impl UpstreamModel {
    /// Requests per second it completes when busy and not overcommitted, if it has a
    /// worker count.
    pub fn capacity(&self) -> Option<f64> {
        self.workers
            .map(|w| w as f64 / self.service.mean().as_secs_f64())
    }
}

/// What the upstream has seen, shared with whoever started it.
#[derive(Debug, Default)]
pub struct UpstreamStats {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    waiting: AtomicUsize,
    completed: AtomicU64,
    abandoned: AtomicU64,
    started_for_nobody: AtomicU64,
    /// `(gives up at, started at)` in µs since the epoch, for each request started after its
    /// caller's stated give-up time (the first [`super::record::KEEP`];
    /// `started_for_nobody` counts them all): a load generator that knows when it really
    /// closed can tell which of these truly had nobody waiting.
    late_starts: std::sync::Mutex<Kept<(u128, u128)>>,
}

/// A copy of [`UpstreamStats`] at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Requests inside the upstream now (waiting for a worker or being served).
    pub in_flight: usize,
    /// The most requests it held at once since start (or the last [`UpstreamStats::reset_peak`]).
    pub max_in_flight: usize,
    /// Requests it answered.
    pub completed: u64,
    /// Requests whose connection went away before it answered.
    pub abandoned: u64,
    /// Requests it started serving after their caller had given up ([`GIVES_UP_AT`]).
    pub started_for_nobody: u64,
}

impl UpstreamStats {
    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            in_flight: self.in_flight.load(Ordering::Relaxed),
            max_in_flight: self.max_in_flight.load(Ordering::Relaxed),
            completed: self.completed.load(Ordering::Relaxed),
            abandoned: self.abandoned.load(Ordering::Relaxed),
            started_for_nobody: self.started_for_nobody.load(Ordering::Relaxed),
        }
    }

    /// Starts a new peak measurement from the current concurrency (between demo phases).
    pub fn reset_peak(&self) {
        let now = self.in_flight.load(Ordering::Relaxed);
        self.max_in_flight.store(now, Ordering::Relaxed);
    }

    /// The counters and the late starts, as the stats endpoint serves them.
    fn to_json(&self) -> String {
        let s = self.snapshot();
        let late = self
            .late_starts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .kept()
            .iter()
            .map(|&(at, started)| [at, started])
            .collect::<Vec<_>>();
        let json = serde_json::json!({
            "in_flight": s.in_flight,
            "max_in_flight": s.max_in_flight,
            "completed": s.completed,
            "abandoned": s.abandoned,
            "started_for_nobody": s.started_for_nobody,
            "late_starts": late,
        });
        format!("{json}\n")
    }

    fn enter(self: &Arc<Self>) -> InFlight {
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_in_flight.fetch_max(now, Ordering::Relaxed);
        InFlight {
            stats: Arc::clone(self),
            done: false,
        }
    }
}

/// One request inside the upstream; leaving without [`InFlight::finish`] counts it abandoned
/// (hyper drops the handler when the connection closes first).
struct InFlight {
    stats: Arc<UpstreamStats>,
    done: bool,
}

impl InFlight {
    fn finish(mut self) {
        self.done = true;
        self.stats.completed.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        if !self.done {
            self.stats.abandoned.fetch_add(1, Ordering::Relaxed);
        }
    }
}

struct Shared {
    model: UpstreamModel,
    workers: Option<Semaphore>,
    stats: Arc<UpstreamStats>,
}

/// Serves the upstream on `listener` until the task is dropped or aborted.
pub async fn serve(listener: TcpListener, model: UpstreamModel, stats: Arc<UpstreamStats>) {
    let shared = Arc::new(Shared {
        model,
        workers: model.workers.map(|w| Semaphore::new(w.max(1))),
        stats,
    });
    // Whether the last accept failed: said once a run of failures.
    let mut failing = false;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of open files and the like: the error stays until a file is closed, so
                // back off instead of spinning on it (this loop took a core doing so).
                if !failing {
                    tracing::warn!(
                        "the upstream cannot accept: {e}{}",
                        crate::open_files::hint(&e)
                    );
                }
                failing = true;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        failing = false;
        let _ = stream.set_nodelay(true);
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let service = service_fn(|req| {
                let shared = Arc::clone(&shared);
                let service_time = shared.model.service.sample(&mut rand::rng());
                async move { Ok::<_, Infallible>(answer(&shared, req, service_time).await) }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    shared: &Shared,
    req: Request<Incoming>,
    service_time: Duration,
) -> Response<Full<Bytes>> {
    if req.uri().path() == STATS_PATH {
        let body = shared.stats.to_json();
        return Response::builder()
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap_or_default();
    }
    let guard = shared.stats.enter();
    // Held until the request leaves, whether it is answered or abandoned.
    let _worker;
    let mut stretch = 1.0;
    if let Some(workers) = &shared.workers {
        let waiting = Waiting::new(&shared.stats.waiting);
        _worker = workers.acquire().await;
        drop(waiting);
        let queued = shared.stats.waiting.load(Ordering::Relaxed) as f64;
        let w = shared.model.workers.unwrap_or(1).max(1) as f64;
        stretch += shared.model.contention * queued / w;
    }
    if let Some(late) = started_after_give_up(&req) {
        shared
            .stats
            .started_for_nobody
            .fetch_add(1, Ordering::Relaxed);
        shared
            .stats
            .late_starts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(late);
    }
    tokio::time::sleep(service_time.mul_f64(stretch)).await;
    guard.finish();
    ok(stretch)
}

/// The wall clock as time since 1970: what the load generator and the upstream, separate
/// processes, compare give-up and start times on.
pub(super) fn since_epoch() -> Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

/// `(gives up at, now)` in µs since the epoch when the request's caller said it would give
/// up before now.
fn started_after_give_up(req: &Request<Incoming>) -> Option<(u128, u128)> {
    let at = req
        .headers()
        .get(GIVES_UP_AT)?
        .to_str()
        .ok()?
        .parse::<u128>()
        .ok()?;
    let now = since_epoch().as_micros();
    (now > at).then_some((at, now))
}

/// Counts a request waiting for a worker for as long as it waits.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn ok(stretch: f64) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"served\n")));
    *response.status_mut() = StatusCode::OK;
    if let Ok(v) = http::HeaderValue::from_str(&format!("{stretch:.2}")) {
        response.headers_mut().insert("x-upstream-stretch", v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stats_say_which_requests_started_after_their_caller_gave_up() {
        let stats = UpstreamStats::default();
        stats.started_for_nobody.fetch_add(1, Ordering::Relaxed);
        stats
            .late_starts
            .lock()
            .unwrap()
            .push((1_764_612_345_678_901, 1_764_612_345_679_000));
        let v: serde_json::Value = serde_json::from_str(&stats.to_json()).unwrap();
        assert_eq!(v["started_for_nobody"], 1);
        assert_eq!(v["max_in_flight"], 0);
        assert_eq!(
            v["late_starts"],
            serde_json::json!([[1_764_612_345_678_901_u64, 1_764_612_345_679_000_u64]])
        );
        // However many there are, the first ones only.
        for i in 0..super::super::record::KEEP as u128 {
            stats.late_starts.lock().unwrap().push((i, i + 1));
        }
        let v: serde_json::Value = serde_json::from_str(&stats.to_json()).unwrap();
        let late = v["late_starts"].as_array().unwrap();
        assert_eq!(late.len(), super::super::record::KEEP);
        assert_eq!(late[1], serde_json::json!([0, 1]));
    }
}
