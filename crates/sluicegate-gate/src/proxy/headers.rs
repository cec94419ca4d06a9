//! Rewriting a request for the upstream and a response for the client: hop-by-hop headers
//! dropped, `X-Forwarded-For` and `Forwarded` added, `Host` kept.

use std::net::{IpAddr, SocketAddr};

use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::uri::{PathAndQuery, Uri};
use http::{Version, request};

use crate::config::UpstreamUrl;

/// Headers that describe one connection, not the message (RFC 9110 §7.6.1), never forwarded.
const HOP_BY_HOP: [HeaderName; 7] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

/// Drops the hop-by-hop headers, and those the `Connection` header names.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    if let Some(conn) = headers.get(header::CONNECTION) {
        let named: Vec<HeaderName> = conn
            .to_str()
            .unwrap_or("")
            .split(',')
            .filter_map(|t| HeaderName::from_bytes(t.trim().as_bytes()).ok())
            .filter(|n| !HOP_BY_HOP.contains(n))
            .collect();
        for n in named {
            headers.remove(n);
        }
    }
    for h in &HOP_BY_HOP {
        if headers.contains_key(h) {
            headers.remove(h);
        }
    }
    // Proxy credentials are for this hop only.
    headers.remove(header::PROXY_AUTHORIZATION);
}

/// Turns the client's request head into the upstream's: absolute URI on `upstream`,
/// HTTP/1.1, hop-by-hop headers gone, `X-Forwarded-For` / `Forwarded` naming `peer`.
pub(super) fn to_upstream(parts: &mut request::Parts, upstream: &UpstreamUrl, peer: SocketAddr) {
    strip_hop_by_hop(&mut parts.headers);
    if !parts.headers.contains_key(header::HOST)
        && let Some(a) = parts.uri.authority()
        && let Ok(v) = HeaderValue::from_str(a.as_str())
    {
        // HTTP/1.0 or absolute-form requests: keep the host the client asked for.
        parts.headers.insert(header::HOST, v);
    }
    let path = parts
        .uri
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| PathAndQuery::from_static("/"));
    let mut uri = http::uri::Parts::default();
    uri.scheme = Some(upstream.scheme.clone());
    uri.authority = Some(upstream.authority.clone());
    uri.path_and_query = Some(path);
    if let Ok(u) = Uri::from_parts(uri) {
        parts.uri = u;
    }
    parts.version = Version::HTTP_11;
    add_forwarded(&mut parts.headers, peer.ip());
}

fn add_forwarded(headers: &mut HeaderMap, ip: IpAddr) {
    let xff = match headers.get(X_FORWARDED_FOR).and_then(|v| v.to_str().ok()) {
        Some(prev) => format!("{prev}, {ip}"),
        None => ip.to_string(),
    };
    if let Ok(v) = HeaderValue::from_str(&xff) {
        headers.insert(X_FORWARDED_FOR, v);
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.contains('"') && !h.contains('\\'));
    let node = match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("\"[{v6}]\""),
    };
    let element = match host {
        Some(h) => format!("for={node};host=\"{h}\";proto=http"),
        None => format!("for={node};proto=http"),
    };
    if let Ok(v) = HeaderValue::from_str(&element) {
        headers.append(header::FORWARDED, v);
    }
}

/// `X-Forwarded-For`.
pub(super) const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(req: http::Request<()>) -> request::Parts {
        req.into_parts().0
    }

    #[test]
    fn hop_by_hop_headers_and_the_ones_connection_names_are_dropped() {
        let mut p = parts(
            http::Request::get("/a?b=1")
                .header("host", "api.example")
                .header("connection", "keep-alive, x-secret-hop")
                .header("x-secret-hop", "1")
                .header("keep-alive", "timeout=5")
                .header("te", "trailers")
                .header("upgrade", "websocket")
                .header("x-kept", "yes")
                .body(())
                .unwrap(),
        );
        let up: UpstreamUrl = "http://127.0.0.1:9000".parse().unwrap();
        to_upstream(&mut p, &up, "10.0.0.7:5555".parse().unwrap());
        for h in ["connection", "x-secret-hop", "keep-alive", "te", "upgrade"] {
            assert!(!p.headers.contains_key(h), "{h} forwarded");
        }
        assert_eq!(p.headers["x-kept"], "yes");
        assert_eq!(p.headers["host"], "api.example");
        assert_eq!(p.uri, "http://127.0.0.1:9000/a?b=1");
        assert_eq!(p.headers["x-forwarded-for"], "10.0.0.7");
        assert_eq!(
            p.headers["forwarded"],
            "for=10.0.0.7;host=\"api.example\";proto=http"
        );
    }

    #[test]
    fn forwarded_for_appends_and_quotes_ipv6() {
        let mut p = parts(
            http::Request::get("/")
                .header("x-forwarded-for", "1.2.3.4")
                .body(())
                .unwrap(),
        );
        let up: UpstreamUrl = "http://u:1".parse().unwrap();
        to_upstream(&mut p, &up, "[::1]:80".parse().unwrap());
        assert_eq!(p.headers["x-forwarded-for"], "1.2.3.4, ::1");
        assert_eq!(p.headers["forwarded"], "for=\"[::1]\";proto=http");
    }
}
