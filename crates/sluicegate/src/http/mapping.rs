//! Status codes, `Retry-After` and the short body of a rejection.

use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};

use super::headers::{RatePolicy, set_ratelimit_headers};
use crate::concurrency::Rejected;
use crate::rate::Decision;

/// `Retry-After` in whole seconds: rounded up, at least 1 (a `0` invites an instant retry
/// storm), at most 2^31 − 1 (68 years): what "never" ([`Duration::MAX`]) is said as.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::http::retry_after_secs;
///
/// assert_eq!(retry_after_secs(Duration::ZERO), 1);
/// assert_eq!(retry_after_secs(Duration::from_millis(1001)), 2);
/// assert_eq!(retry_after_secs(Duration::from_secs(7)), 7);
/// assert_eq!(retry_after_secs(Duration::MAX), 2_147_483_647);
/// ```
pub fn retry_after_secs(wait: Duration) -> u64 {
    let whole = wait
        .as_secs()
        .saturating_add(u64::from(wait.subsec_nanos() > 0));
    whole.clamp(1, NEVER_SECS)
}

/// The longest `Retry-After`, in seconds: 2^31 − 1 (68 years), "never" in practice. A
/// longer one (`u64::MAX` for a limit of 0) overflows the 64-bit signed integers most
/// clients parse the header into; they then retry on their own short backoff. RFC 9111
/// (§1.2.2) asks recipients of delta-seconds for 31 bits, no more.
const NEVER_SECS: u64 = (1 << 31) - 1;

/// How the HTTP layers answer when they turn a request away: the status of each kind of
/// rejection and whether a short body says why.
///
/// ```
/// use http::StatusCode;
/// use sluicegate::http::RejectionMapping;
///
/// // Some load balancers retry a 503 elsewhere; this API prefers 429 for overload too.
/// let mapping = RejectionMapping::default().overloaded_status(StatusCode::TOO_MANY_REQUESTS);
/// # let _ = mapping;
/// ```
#[derive(Clone, Debug)]
pub struct RejectionMapping {
    overloaded: StatusCode,
    rate_limited: StatusCode,
    missing_key: StatusCode,
    body: bool,
}

impl Default for RejectionMapping {
    fn default() -> Self {
        RejectionMapping {
            overloaded: StatusCode::SERVICE_UNAVAILABLE,
            rate_limited: StatusCode::TOO_MANY_REQUESTS,
            missing_key: StatusCode::INTERNAL_SERVER_ERROR,
            body: true,
        }
    }
}

impl RejectionMapping {
    /// The status for queue full, queue timeout, closed and predicted timeout (default `503`).
    pub fn overloaded_status(mut self, status: StatusCode) -> Self {
        self.overloaded = status;
        self
    }

    /// The status for a rate limited request (default `429`).
    pub fn rate_limited_status(mut self, status: StatusCode) -> Self {
        self.rate_limited = status;
        self
    }

    /// The status when a keyed rate limit finds no key in the request, such as no peer
    /// address (default `500`: it is a server misconfiguration, not the client's fault).
    pub fn missing_key_status(mut self, status: StatusCode) -> Self {
        self.missing_key = status;
        self
    }

    /// The status a request without a rate limit key gets when the layer fails closed.
    pub(crate) fn missing_key_status_code(&self) -> StatusCode {
        self.missing_key
    }

    /// Whether rejections carry a short `text/plain` body saying why (default `true`).
    pub fn body(mut self, on: bool) -> Self {
        self.body = on;
        self
    }

    /// The answer to a request the concurrency limiter turned away: `overloaded: REASON`,
    /// or for a limiter closed on purpose, a body that says so. (A limit of 0 set with
    /// `set_max` pauses rather than closes: its callers time out in the queue. The gate
    /// closes a pool whose limit is set to 0, hence the body's wording.)
    pub fn overloaded(&self, rejected: &Rejected) -> Response<Bytes> {
        let body = match rejected {
            Rejected::Closed { .. } => {
                "closed: the limit is shut (closed, or its limit set to 0), not overloaded\n"
                    .to_owned()
            }
            _ => format!("overloaded: {}\n", rejected.reason()),
        };
        let mut response = self.answer(self.overloaded, body);
        set_retry_after(&mut response, rejected.retry_after());
        response
    }

    /// The answer to a request over its rate limit, with the `RateLimit` headers of the
    /// policy `name` (and its quota, when known).
    pub fn rate_limited(
        &self,
        name: &str,
        decision: &Decision,
        policy: Option<RatePolicy>,
    ) -> Response<Bytes> {
        let retry_after = decision.retry_after();
        let body = format!(
            "rate limited: retry after {} s\n",
            retry_after_secs(retry_after)
        );
        let mut response = self.answer(self.rate_limited, body);
        set_retry_after(&mut response, retry_after);
        set_ratelimit_headers(response.headers_mut(), name, decision, policy);
        response
    }

    /// The answer when a keyed rate limit finds no key in the request.
    pub fn missing_key(&self) -> Response<Bytes> {
        self.answer(
            self.missing_key,
            "no rate limit key in the request\n".into(),
        )
    }

    fn answer(&self, status: StatusCode, body: String) -> Response<Bytes> {
        let mut response = if self.body {
            let mut r = Response::new(Bytes::from(body));
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            r
        } else {
            Response::new(Bytes::new())
        };
        *response.status_mut() = status;
        response
    }
}

fn set_retry_after(response: &mut Response<Bytes>, wait: Duration) {
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(retry_after_secs(wait)));
}
