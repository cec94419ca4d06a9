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
/// is known, `RateLimit-Policy` (quota `q`, window `w` in seconds). Each value is capped at
/// 999,999,999,999,999, the largest Structured Fields integer (15 digits).
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
        let (q, w) = (sf(quota.limit), sf(ceil_secs(quota.window)));
        let value = format!("\"{name}\";q={q};w={w}");
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(RATELIMIT_POLICY, value);
        }
    }
    let value = format!(
        "\"{name}\";r={};t={}",
        decision.remaining(),
        sf(ceil_secs(decision.reset_after()))
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(RATELIMIT, value);
    }
}

/// `n` as a Structured Fields integer, which has at most 15 digits (RFC 8941 §3.3.1): a
/// larger value (a window of `Duration::MAX`, "ever") would make a conforming client reject
/// the whole header, so it is capped.
fn sf(n: u64) -> u64 {
    n.min(999_999_999_999_999)
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest Structured Fields integer (RFC 8941 §3.3.1: at most 15 digits).
    const SF_INTEGER_MAX: u64 = 999_999_999_999_999;

    fn params(header: &HeaderValue) -> Vec<u64> {
        header
            .to_str()
            .unwrap()
            .split(';')
            .skip(1)
            .map(|p| p.split_once('=').unwrap().1.parse().unwrap())
            .collect()
    }

    /// The guide's own custom check (`FirstN`: "the first `limit` requests, ever") announces
    /// `RatePolicy::new(limit, Duration::MAX)`, and a quota of `Duration::MAX` is one too:
    /// `w=18446744073709551615`, 20 digits, where the draft's values are Structured Fields
    /// integers of at most 15 — a conforming parser rejects the whole header. Values are
    /// capped at the largest integer a field can carry.
    #[test]
    fn values_beyond_a_structured_field_integer_are_capped() {
        let mut headers = HeaderMap::new();
        let never = Decision::deny(u32::MAX, 0, Duration::MAX, Duration::MAX);
        let policy = RatePolicy::new(u64::MAX, Duration::MAX);
        set_ratelimit_headers(&mut headers, "first-n", &never, Some(policy));
        for name in [RATELIMIT_POLICY, RATELIMIT] {
            for value in params(&headers[&name]) {
                assert!(value <= SF_INTEGER_MAX, "{name}: {:?}", headers[&name]);
            }
        }
        assert_eq!(
            headers[RATELIMIT_POLICY],
            r#""first-n";q=999999999999999;w=999999999999999"#
        );
    }
}
