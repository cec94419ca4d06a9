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
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::gate::{BigAnswers, Gate};

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
        .with_state((sampler, gate.big_answers.clone()))
}

async fn samples_after(
    State((sampler, answers)): State<(Arc<Sampler>, BigAnswers)>,
    RawQuery(q): RawQuery,
) -> Response {
    let after = q
        .as_deref()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("after="));
    // Without `after`, every sample kept. A value that is no time was read as no `after`,
    // and answered every sample as if it were one (trial34).
    let after = match after.map(time_after) {
        None => 0,
        Some(Some(t)) => t,
        Some(None) => {
            return (
                StatusCode::BAD_REQUEST,
                "after must be a time in Unix milliseconds, in digits (after=1765000000000); leave it out for every sample kept\n",
            )
                .into_response();
        }
    };
    // Off the loop (with 2000 pools the whole five minutes is 78 MB, 0.3 s to build, and with
    // `workers = 1` the loop is the proxy's too: trial122 §6), a few at once.
    let body = answers
        .build(move || {
            crate::admin::built::note();
            sampler.json_after(after)
        })
        .await;
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The time `after=` names: digits only; one past `u64` is later than any sample.
fn time_after(v: &str) -> Option<u64> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(v.parse().unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use crate::pool::Outcome;

    /// trial122 §6: `/dashboard/samples` was built on the runtime's thread (78 MB with 2000
    /// pools: each fetch stalled proxied requests 0.3 s with `workers = 1`). Answered now,
    /// and not built on the runtime's thread (this test's).
    #[tokio::test(flavor = "current_thread")]
    async fn the_samples_are_built_off_the_loop() {
        let text = "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9\"\n\
                    max_concurrency = 1\n[[routes]]\npool = \"api\"\n";
        let config = crate::config::parse(text, "t").unwrap();
        let gate = std::sync::Arc::new(crate::gate::Gate::new(config, None).await.unwrap());
        let sampler = super::Sampler::start(std::sync::Arc::downgrade(&gate));
        let answer = super::samples_after(
            axum::extract::State((sampler, crate::gate::BigAnswers::default())),
            axum::extract::RawQuery(None),
        )
        .await;
        assert_eq!(answer.status(), axum::http::StatusCode::OK);
        assert_eq!(
            crate::admin::built::here(),
            0,
            "built on the runtime's thread"
        );
    }

    /// review127: a call given up (its connection closed, hyper drops the answer's future)
    /// left its build running on a blocking thread, and the next call started another: ten
    /// fetches given up at once were ten builds of the samples at once (78 MB each with 2000
    /// pools), bounded neither by `[admin] max_connections` nor by the runtime's threads as
    /// when they were built on the loop. A few build at once; a call given up while it waits
    /// for its turn builds nothing.
    #[tokio::test(flavor = "current_thread")]
    async fn calls_given_up_leave_no_more_than_a_few_builds_behind() {
        let sampler = std::sync::Arc::new(super::Sampler::default());
        // Each build waits for the samples' lock while this holds it: a build started is
        // still running below.
        let held = sampler.hold();
        let answers = crate::gate::BigAnswers::default();
        for _ in 0..10 {
            let answer = super::samples_after(
                axum::extract::State((sampler.clone(), answers.clone())),
                axum::extract::RawQuery(None),
            );
            // Polled once (the build is started or waits for its turn), then given up.
            let mut answer = std::pin::pin!(answer);
            let polled = std::future::Future::poll(
                answer.as_mut(),
                &mut std::task::Context::from_waker(std::task::Waker::noop()),
            );
            assert!(polled.is_pending(), "answered while the samples are held");
        }
        // A build running (or queued for a blocking thread) holds the sampler.
        let builds = std::sync::Arc::strong_count(&sampler) - 1;
        drop(held);
        assert!(
            builds <= crate::gate::BIG_ANSWERS,
            "{builds} builds for 10 calls given up"
        );
    }

    /// The page's colour for each outcome, as `(r, g, b)`.
    fn colours() -> Vec<(String, (f64, f64, f64))> {
        let map = super::PAGE
            .split("const REASON_COLORS = {")
            .nth(1)
            .and_then(|s| s.split("};").next())
            .expect("REASON_COLORS in the page");
        map.split(',')
            .filter_map(|e| e.split_once(':'))
            .map(|(name, hex)| {
                let hex = hex.trim().trim_matches('"').trim_start_matches('#');
                let c = |i: usize| f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap());
                (name.trim().to_owned(), (c(0), c(2), c(4)))
            })
            .collect()
    }

    /// Hue in degrees and saturation (HSV) of `(r, g, b)`.
    fn hue_sat((r, g, b): (f64, f64, f64)) -> (f64, f64) {
        let (max, min) = (r.max(g).max(b), r.min(g).min(b));
        if max == min {
            return (0.0, 0.0);
        }
        let d = max - min;
        let h = if max == r {
            60.0 * ((g - b) / d)
        } else if max == g {
            60.0 * (2.0 + (b - r) / d)
        } else {
            60.0 * (4.0 + (r - g) / d)
        };
        (h.rem_euclid(360.0), d / max)
    }

    /// Defect pinned (review 4, finding 10): the chart had 8 colours for its outcomes, given
    /// out in order of appearance, so a 9th (`upstream_error`) was drawn in the green of
    /// `forwarded`. Every outcome now has a colour of its own, far from every other, warm
    /// for the gate's refusals and the upstream's failures and cool for the rest.
    #[test]
    fn every_outcome_has_its_own_colour_and_errors_are_warm() {
        let colours = colours();
        let cool = [
            Outcome::Forwarded,
            Outcome::ClientGone,
            Outcome::BadRequestBody,
            Outcome::ClientBodyTimeout,
            Outcome::BodyTooLarge,
        ];
        for o in Outcome::ALL {
            let (_, rgb) = colours
                .iter()
                .find(|(n, _)| n == o.name())
                .unwrap_or_else(|| panic!("no colour for {}", o.name()));
            let (h, s) = hue_sat(*rgb);
            let warm = s > 0.3 && (h <= 60.0 || h >= 300.0);
            assert_eq!(
                warm,
                !cool.contains(&o),
                "{}: hue {h:.0}, saturation {s:.2}",
                o.name()
            );
        }
        assert_eq!(colours.len(), Outcome::ALL.len(), "{colours:?}");
        for (i, (a, x)) in colours.iter().enumerate() {
            for (b, y) in &colours[i + 1..] {
                let d = ((x.0 - y.0).powi(2) + (x.1 - y.1).powi(2) + (x.2 - y.2).powi(2)).sqrt();
                assert!(d >= 50.0, "{a} and {b} look alike ({d:.0} apart)");
            }
        }
    }
}
