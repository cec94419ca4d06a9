//! The IETF `RateLimit-Policy` and `RateLimit` headers (draft-ietf-httpapi-ratelimit-headers).

use http::HeaderMap;
use http::header::{HeaderName, HeaderValue};

use crate::middleware::rate::RateDecision;

/// `RateLimit-Policy`: the quota, as `"name";q=100;w=60`.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// `RateLimit`: what is left, as `"name";r=42;t=17`.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// Writes `RateLimit` (remaining `r`, seconds to reset `t`, rounded up) and, when the
/// decision knows its quota, `RateLimit-Policy` (quota `q`, window `w` in seconds).
///
/// `policy` becomes a structured-field string: characters a header cannot carry, `"` and
/// `\` are left out.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::http::set_ratelimit_headers;
/// use sluicegate::middleware::rate::{Policy, RateDecision};
///
/// let mut headers = http::HeaderMap::new();
/// let decision = RateDecision::allow(42, Duration::from_millis(16_200))
///     .with_policy(Policy::new(100, Duration::from_secs(60)));
/// set_ratelimit_headers(&mut headers, "api", &decision);
/// assert_eq!(headers["ratelimit-policy"], r#""api";q=100;w=60"#);
/// assert_eq!(headers["ratelimit"], r#""api";r=42;t=17"#);
/// ```
pub fn set_ratelimit_headers(headers: &mut HeaderMap, policy: &str, decision: &RateDecision) {
    let name: String = policy
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\' || *c == ' ')
        .collect();
    if let Some(quota) = decision.policy {
        let value = format!(
            "\"{name}\";q={};w={}",
            quota.limit,
            ceil_secs(quota.window.as_secs(), quota.window.subsec_nanos())
        );
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(RATELIMIT_POLICY, value);
        }
    }
    let reset = decision.reset_after;
    let value = format!(
        "\"{name}\";r={};t={}",
        decision.remaining,
        ceil_secs(reset.as_secs(), reset.subsec_nanos())
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(RATELIMIT, value);
    }
}

fn ceil_secs(secs: u64, nanos: u32) -> u64 {
    secs + u64::from(nanos > 0)
}
