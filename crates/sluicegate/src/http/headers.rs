//! The IETF `RateLimit-Policy` and `RateLimit` headers (draft-ietf-httpapi-ratelimit-headers).

use std::time::Duration;

use http::HeaderMap;
use http::header::{HeaderName, HeaderValue};

use super::mapping::retry_after_secs;
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

/// Writes `RateLimit` (remaining `r`, seconds to reset `t`, rounded up, and for a denial at
/// least its `Retry-After`) and, when the quota is known, `RateLimit-Policy` (quota `q`,
/// window `w` in seconds).
///
/// `name` becomes a structured-field string: characters a header cannot carry, `"` and
/// `\` are left out.
///
/// Both headers are lists of policies: the item is added beside those of other policies
/// already in `headers` (rate layers stacked, a global limit around a per-client one, each
/// add theirs: a client sees the one that refused it). An item of the same `name` already
/// there is kept, and this one left out: layers stacked under one name (both left at the
/// default) would otherwise have the outer one's item hide the refusing inner one's.
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
        let value = format!(
            "\"{name}\";q={};w={}",
            quota.limit.min(SF_INTEGER_MAX),
            ceil_secs(quota.window)
        );
        if let Ok(value) = HeaderValue::from_str(&value) {
            add_item(headers, RATELIMIT_POLICY, &name, value);
        }
    }
    let value = format!(
        "\"{name}\";r={};t={}",
        decision.remaining(),
        reset_secs(decision)
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        add_item(headers, RATELIMIT, &name, value);
    }
}

/// Adds `value`, the item of policy `name`, to the list `header`: a field line of its own
/// (lines of a list field join with commas), unless a line this function wrote for the same
/// name is there already. Inner layers write first, and a request an inner layer refused
/// never reached an outer one's check: the item kept is the one nearest the decision.
fn add_item(headers: &mut HeaderMap, header: HeaderName, name: &str, value: HeaderValue) {
    let own = format!("\"{name}\";");
    let named = |v: &HeaderValue| v.as_bytes().starts_with(own.as_bytes());
    if !headers.get_all(&header).iter().any(named) {
        headers.append(header, value);
    }
}

/// `t`: the seconds until the limiter is whole again, and never less than a denial's
/// `Retry-After`. The two differ for a quota of 0, which is "whole" at once (nothing to give
/// back) but never admits anything: `t=0` beside `r=0` would tell a client to retry now, so it
/// says the same "never" as `Retry-After` ([`retry_after_secs`]).
fn reset_secs(decision: &Decision) -> u64 {
    let reset = ceil_secs(decision.reset_after());
    if decision.is_denied() {
        reset.max(retry_after_secs(decision.retry_after()))
    } else {
        reset
    }
}

/// The largest structured-field integer (RFC 8941 §3.3.1: 15 digits; a parser fails the
/// whole header on a longer one).
const SF_INTEGER_MAX: u64 = 999_999_999_999_999;

/// Whole seconds, rounded up, at most [`SF_INTEGER_MAX`] (31 million years).
fn ceil_secs(d: Duration) -> u64 {
    d.as_secs()
        .saturating_add(u64::from(d.subsec_nanos() > 0))
        .min(SF_INTEGER_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every integer in both headers is a structured-field integer, at most 15 digits (RFC
    /// 8941 §3.3.1: a parser fails the whole header on more). A quota of one request per
    /// `Duration::MAX` ("once, ever") announced `w=18446744073709551615`, which a conforming
    /// client had to throw away with the rest of the header.
    #[test]
    fn the_longest_values_stay_structured_field_integers() {
        let mut headers = HeaderMap::new();
        let decision = Decision::allow(1, 0, Duration::MAX);
        let policy = RatePolicy::new(u64::MAX, Duration::MAX);
        set_ratelimit_headers(&mut headers, "once", &decision, Some(policy));
        for name in [RATELIMIT_POLICY, RATELIMIT] {
            let value = headers[&name].to_str().unwrap();
            for param in value.split(';').skip(1) {
                let (_, n) = param.split_once('=').unwrap();
                assert!(n.len() <= 15, "{name}: {value}");
                assert!(n.parse::<u64>().is_ok(), "{name}: {value}");
            }
        }
    }
}
