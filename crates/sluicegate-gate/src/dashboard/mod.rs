//! The live dashboard: one page compiled into the binary, served at `/` by the admin
//! listener, drawing per-second samples of every pool that a task takes in the background.
//!
//! The page itself holds no data, so it is served without the token; everything it shows
//! comes from `GET /dashboard/samples` and `GET /status`, and every change it makes goes
//! through the admin API — all behind the same bearer token as any other admin call.

mod samples;

use std::sync::Arc;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::gate::Gate;

pub use samples::{Sample, Sampler};

/// The page: HTML, CSS and script in one file, no asset from elsewhere.
const PAGE: &str = include_str!("page.html");

/// The page at `/` (open to anyone who can reach the admin listener: it holds no data).
pub fn page() -> Router {
    Router::new().route("/", get(|| async { Html(PAGE) }))
}

/// `GET /dashboard/samples?after=T`: the samples taken after `T` (Unix milliseconds), at
/// most the last five minutes. Starts the sampler for `gate`; it stops when the gate goes.
pub fn samples_api(gate: &Arc<Gate>) -> Router {
    let sampler = Sampler::start(Arc::downgrade(gate));
    Router::new()
        .route("/dashboard/samples", get(samples_after))
        .with_state(sampler)
}

async fn samples_after(State(sampler): State<Arc<Sampler>>, RawQuery(q): RawQuery) -> Response {
    // `after=T`; anything else (or nothing) asks for every sample kept.
    let after = q
        .as_deref()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("after="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let body = sampler.json_after(after);
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
