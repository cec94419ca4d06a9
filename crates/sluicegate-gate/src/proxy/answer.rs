//! The responses the gate makes itself: a status, a short plain-text body saying why, and
//! `X-Sluicegate-Reason`. The overload and rate answers are the library's HTTP mapping.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::{Either, Full};
use sluicegate::concurrency::Rejected;
use sluicegate::http::{RatePolicy, RejectionMapping};
use sluicegate::rate::Decision;

use super::answer_ahead::AnswerBody;
use crate::pool::Outcome;

/// The body of any response the gate sends: its own short text, or the upstream's answer
/// (read ahead of the client up to `response_buffer_size`).
pub type GateBody = Either<Full<Bytes>, Box<AnswerBody>>;

/// `X-Sluicegate-Reason`: why the gate answered itself.
pub const REASON: HeaderName = HeaderName::from_static("x-sluicegate-reason");

fn tagged(response: Response<Bytes>, outcome: Outcome) -> Response<GateBody> {
    let mut response = response.map(|b| Either::Left(Full::new(b)));
    response
        .headers_mut()
        .insert(REASON, HeaderValue::from_static(outcome.name()));
    response
}

/// `503` + `Retry-After` for a request the pool's limiter turned away. A closed pool is
/// not overloaded: its body says who closed it.
pub(super) fn overloaded(mapping: &RejectionMapping, rejected: &Rejected) -> Response<GateBody> {
    let mut response = mapping.overloaded(rejected);
    if matches!(rejected, Rejected::Closed { .. }) && !response.body().is_empty() {
        *response.body_mut() = Bytes::from_static(CLOSED.as_bytes());
    }
    tagged(response, Outcome::of(rejected))
}

/// `refused`'s status and `Retry-After`, and a body that says the gate is shutting down
/// (it closed every pool when the drain's grace period ran out), and that the connection
/// ends.
pub(super) fn shutting_down(refused: &Response<GateBody>) -> Response<GateBody> {
    let mut answer = plain(
        refused.status(),
        Outcome::Closed.name(),
        "closed: the gate is shutting down; try again (another instance, or once it is back)\n",
    );
    if let Some(after) = refused.headers().get(http::header::RETRY_AFTER) {
        answer
            .headers_mut()
            .insert(http::header::RETRY_AFTER, after.clone());
    }
    answer
        .headers_mut()
        .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    answer
}

/// The body of a closed pool's `503`: only an operator closes a pool.
const CLOSED: &str = "closed: an operator closed this pool for now; try again later\n";

/// `429` + `Retry-After` + `RateLimit-Policy` / `RateLimit`.
pub(super) fn rate_limited(
    mapping: &RejectionMapping,
    name: &str,
    decision: &Decision,
    policy: Option<RatePolicy>,
) -> Response<GateBody> {
    tagged(
        mapping.rate_limited(name, decision, policy),
        Outcome::RateLimited,
    )
}

/// Any other answer of the gate's own: `status`, `reason` in the header, `text` as the body.
pub(super) fn plain(
    status: StatusCode,
    reason: &'static str,
    text: &'static str,
) -> Response<GateBody> {
    let mut response = Response::new(Either::Left(Full::new(Bytes::from_static(text.as_bytes()))));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(REASON, HeaderValue::from_static(reason));
    response
}

/// `503 store_unavailable` + `Retry-After`: a global pool that fails closed while Redis
/// does not answer.
pub(super) fn store_unavailable(retry_after: std::time::Duration) -> Response<GateBody> {
    let mut response = plain(
        StatusCode::SERVICE_UNAVAILABLE,
        Outcome::StoreUnavailable.name(),
        "store unavailable: redis does not answer and the pool fails closed (on_redis_failure = \"deny\")\n",
    );
    // Whole seconds, at least 1, as the limiter's answers.
    let secs = retry_after.as_secs_f64().ceil().max(1.0) as u64;
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// The answer for a request the upstream could not serve.
pub(super) fn upstream_failed(outcome: Outcome) -> Response<GateBody> {
    match outcome {
        Outcome::UpstreamTimeout => plain(
            StatusCode::GATEWAY_TIMEOUT,
            outcome.name(),
            "upstream timeout: the upstream did not answer in time\n",
        ),
        Outcome::UpstreamUnreachable => plain(
            StatusCode::BAD_GATEWAY,
            outcome.name(),
            "upstream unreachable: the upstream refused the connection or could not be reached\n",
        ),
        _ => plain(
            StatusCode::BAD_GATEWAY,
            Outcome::UpstreamError.name(),
            "upstream error: the upstream broke off the exchange\n",
        ),
    }
}
