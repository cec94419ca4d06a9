//! The IETF `RateLimit-Policy` and `RateLimit` headers (draft-ietf-httpapi-ratelimit-headers).

use std::time::Duration;

use http::HeaderMap;
use http::header::{HeaderName, HeaderValue};

use crate::rate::Decision;

/// `RateLimit-Policy`: the quota, as `"name";q=100;w=60`.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// `RateLimit`: what is left, as `"name";r=42;t=17`.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// The quota a rate limit announces in `RateLimit-Policy`: `limit` requests per `window`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use sluicegate::http::RatePolicy;
///
/// let policy = RatePolicy::new(100, Duration::from_secs(60));
/// assert_eq!(policy.limit, 100);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RatePolicy {
    /// Requests allowed per window.
    pub limit: u64,
    /// The window.
    pub window: Duration,
}

impl RatePolicy {
    /// `limit` requests per `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        RatePolicy { limit, window }
    }
}

/// Writes `RateLimit` (remaining `r`, seconds to reset `t`, rounded up) and, when the quota
/// is known, `RateLimit-Policy` (quota `q`, window `w` in seconds).
///
/// `name` becomes a structured-field string: characters a header cannot carry, `"` and
/// `\` are left out.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use sluicegate::http::{RatePolicy, set_ratelimit_headers};
/// use sluicegate::rate::Decision;
///
/// let mut headers = http::HeaderMap::new();
/// let decision = Decision::allow(100, 42, Duration::from_millis(16_200));
/// let policy = RatePolicy::new(100, Duration::from_secs(60));
/// set_ratelimit_headers(&mut headers, "api", &decision, Some(policy));
/// assert_eq!(headers["ratelimit-policy"], r#""api";q=100;w=60"#);
/// assert_eq!(headers["ratelimit"], r#""api";r=42;t=17"#);
/// ```
pub fn set_ratelimit_headers(
    headers: &mut HeaderMap,
    name: &str,
    decision: &Decision,
    policy: Option<RatePolicy>,
) {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\' || *c == ' ')
        .collect();
    if let Some(quota) = policy {
        let value = format!("\"{name}\";q={};w={}", quota.limit, ceil_secs(quota.window));
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(RATELIMIT_POLICY, value);
        }
    }
    let value = format!(
        "\"{name}\";r={};t={}",
        decision.remaining(),
        ceil_secs(decision.reset_after())
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(RATELIMIT, value);
    }
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))
}
