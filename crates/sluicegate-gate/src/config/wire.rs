//! Addresses and URLs as a config writes them, parsed with a message saying what to write.

use std::net::SocketAddr;
use std::str::FromStr;

use http::Uri;
use http::uri::{Authority, Scheme};

/// An address to listen on: `127.0.0.1:8080`, `[::1]:8080`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenAddr(pub SocketAddr);

impl ListenAddr {
    /// Whether binding `self` and `other` in one process fails with "address in use": the
    /// same port on the same address, or on a wildcard that covers the other (`0.0.0.0`
    /// covers IPv4; `[::]` covers both, as Linux binds it dual-stack). Port 0 asks for a
    /// fresh port each time and never clashes.
    pub fn clashes_with(self, other: SocketAddr) -> bool {
        let (a, b) = (self.0, other);
        let covers =
            |w: SocketAddr, x: SocketAddr| w.ip().is_unspecified() && (w.is_ipv6() || x.is_ipv4());
        a.port() != 0 && a.port() == b.port() && (a.ip() == b.ip() || covers(a, b) || covers(b, a))
    }
}

impl FromStr for ListenAddr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        s.parse().map(ListenAddr).map_err(|_| {
            format!("invalid listen address `{s}`: write an IP and a port, like `127.0.0.1:8080` or `[::1]:8080`")
        })
    }
}

/// An upstream: `http://host:port`, no path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamUrl {
    /// `http`.
    pub scheme: Scheme,
    /// `host:port`.
    pub authority: Authority,
}

impl FromStr for UpstreamUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let hint = "write `http://HOST:PORT`, like `http://127.0.0.1:9000`";
        let raw = s;
        // Messages quote the URL without a password in it.
        let s = redacted_url(raw);
        let uri: Uri = raw
            .parse()
            .map_err(|_| format!("invalid upstream URL `{s}`: {hint}"))?;
        let parts = uri.into_parts();
        let (Some(scheme), Some(authority)) = (parts.scheme, parts.authority) else {
            return Err(format!("upstream `{s}` needs a scheme and a host: {hint}"));
        };
        if scheme != Scheme::HTTP {
            return Err(format!(
                "upstream `{s}`: only `http://` upstreams are supported (TLS to the upstream is coming): {hint}"
            ));
        }
        if let Some(p) = parts
            .path_and_query
            .filter(|p| p.as_str() != "/" && !p.as_str().is_empty())
        {
            // `http://host:1?x` has no path but `/`: name what it has.
            let what = if matches!(p.path(), "" | "/") {
                "a query; requests keep their own query"
            } else {
                "a path; requests keep their own path"
            };
            return Err(format!("upstream `{s}` has {what}: {hint}"));
        }
        if authority.as_str().contains('@') {
            return Err(format!(
                "upstream `{s}` has credentials (`user:password@`): the gate sends none to the upstream; \
                 set an `Authorization` header on the requests instead: {hint}"
            ));
        }
        // `Authority` keeps any digits after the colon; a port that does not fit in 16 bits
        // reads as no port, which would be 80.
        let port = authority.as_str().rsplit_once(':').map(|(_, p)| p);
        if let Some(p) = port.filter(|p| !p.contains(']'))
            && !p.parse::<u16>().is_ok_and(|p| p > 0)
        {
            return Err(format!(
                "upstream `{s}`: the port must be 1 to 65535 (none means 80): {hint}"
            ));
        }
        Ok(UpstreamUrl { scheme, authority })
    }
}

impl std::fmt::Display for UpstreamUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", self.scheme, self.authority)
    }
}

/// A source network: `10.0.0.0/8`, `::1/128`, or a single address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr(pub ipnet::IpNet);

impl FromStr for Cidr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        t.parse::<ipnet::IpNet>()
            .or_else(|_| t.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
            .map(|n| Cidr(n.trunc()))
            .map_err(|_| {
                format!("invalid network `{s}`: write an address and prefix length, like `10.0.0.0/8` or `fd00::/64`")
            })
    }
}

from_string!(
    ListenAddr => "an address and port, like \"127.0.0.1:8080\"",
    UpstreamUrl => "a URL, like \"http://127.0.0.1:9000\"",
    Cidr => "a network, like \"10.0.0.0/8\""
);

/// `url` as logs, errors and the admin API show it: a password in it (`user:password@`, or
/// the `pass=` parameter redis-rs reads for a unix socket) replaced by `***`, also one that
/// holds `/`, `?` or `#` not percent-encoded (`user:pa/ss@host`: the URL does not parse, and
/// is quoted in the error). Anything else is shown as written, also a URL that does not
/// parse.
///
/// # Examples
///
/// ```
/// use sluicegate_gate::config::redacted_url;
///
/// assert_eq!(
///     redacted_url("redis://default:s3cret@127.0.0.1:6379/0"),
///     "redis://default:***@127.0.0.1:6379/0"
/// );
/// assert_eq!(redacted_url("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
/// ```
pub fn redacted_url(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let tail = &url[start..];
    let authority = &tail[..tail.find(['/', '?', '#']).unwrap_or(tail.len())];
    // The user information ends at the authority's last `@` (a password may hold one). A
    // password holding `/`, `?` or `#` as is ends the authority early, before its `@`: the
    // client refuses such a URL, and its error quotes it (redis111: whole, password and
    // all). With a `:` in what is left of the authority, an `@` further on ends it then.
    let at = authority
        .rfind('@')
        .or_else(|| authority.contains(':').then(|| tail.rfind('@')).flatten());
    let mut shown = String::with_capacity(url.len());
    shown.push_str(&url[..start]);
    let rest = match at {
        Some(at) => {
            match tail[..at].split_once(':') {
                Some((user, _password)) => {
                    shown.push_str(user);
                    shown.push_str(":***");
                }
                None => shown.push_str(&tail[..at]),
            }
            shown.push('@');
            &tail[at + 1..]
        }
        None => tail,
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    shown.push_str(&rest[..end]);
    let rest = &rest[end..];
    let Some((path, query)) = rest.split_once('?') else {
        shown.push_str(rest);
        return shown;
    };
    let (query, fragment) = query
        .split_once('#')
        .map_or((query, None), |(q, f)| (q, Some(f)));
    shown.push_str(path);
    shown.push('?');
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            shown.push('&');
        }
        match pair.split_once('=') {
            Some((key, _)) if key == "pass" || key == "password" => {
                shown.push_str(key);
                shown.push_str("=***");
            }
            _ => shown.push_str(pair),
        }
    }
    if let Some(f) = fragment {
        shown.push('#');
        shown.push_str(f);
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstreams_are_plain_http_origins() {
        let u: UpstreamUrl = "http://127.0.0.1:9000".parse().unwrap();
        assert_eq!(u.to_string(), "http://127.0.0.1:9000");
        assert!("http://127.0.0.1:9000/".parse::<UpstreamUrl>().is_ok());
        assert!(
            "https://x:1"
                .parse::<UpstreamUrl>()
                .unwrap_err()
                .contains("only `http://`")
        );
        assert!(
            "http://x:1/api"
                .parse::<UpstreamUrl>()
                .unwrap_err()
                .contains("path")
        );
        assert!("127.0.0.1:9000".parse::<UpstreamUrl>().is_err());
        // Newcomer 57: a query alone was refused as "has a path".
        let e = "http://x:1?debug=1".parse::<UpstreamUrl>().unwrap_err();
        assert!(
            e.contains("has a query; requests keep their own query"),
            "{e}"
        );
        let e = "http://x:1/api?x".parse::<UpstreamUrl>().unwrap_err();
        assert!(e.contains("has a path;"), "{e}");
    }

    /// Defect pinned: `http://127.0.0.1:99999` was accepted and connected to port 80 (a port
    /// that does not fit in 16 bits read as none), and `http://user:pw@host:1` was accepted,
    /// its credentials shown in `/status` and sent as the `Host` of requests without one.
    #[test]
    fn a_port_out_of_range_and_credentials_are_refused() {
        for (url, why) in [
            ("http://127.0.0.1:99999", "port"),
            ("http://127.0.0.1:65536", "port"),
            ("http://127.0.0.1:0", "port"),
            ("http://127.0.0.1:", "port"),
            ("http://user:pw@127.0.0.1:9000", "credentials"),
            ("http://user@127.0.0.1:9000", "credentials"),
        ] {
            let err = url.parse::<UpstreamUrl>().unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
        }
        // No port is HTTP's own, 80; the highest port is fine.
        assert!("http://example.internal".parse::<UpstreamUrl>().is_ok());
        assert!("http://127.0.0.1:65535".parse::<UpstreamUrl>().is_ok());
        assert!("http://[::1]:9000".parse::<UpstreamUrl>().is_ok());
    }

    /// Defect pinned (review 3, item 6): the Redis password was shown in `/status` and logs.
    #[test]
    fn passwords_in_urls_are_redacted_and_nothing_else_changes() {
        for (url, shown) in [
            (
                "redis://default:s3cret@127.0.0.1:6379/0",
                "redis://default:***@127.0.0.1:6379/0",
            ),
            (
                "redis://:nope@127.0.0.1:16379",
                "redis://:***@127.0.0.1:16379",
            ),
            ("rediss://u:p@ss:w@host:1?x=1", "rediss://u:***@host:1?x=1"),
            ("redis://user@host", "redis://user@host"),
            ("redis://127.0.0.1:6379/", "redis://127.0.0.1:6379/"),
            (
                "redis+unix:///run/redis.sock?db=1&pass=s3cret#x",
                "redis+unix:///run/redis.sock?db=1&pass=***#x",
            ),
            (
                "unix:///r.sock?password=s3cret",
                "unix:///r.sock?password=***",
            ),
            ("user:s3cret@host:1", "user:***@host:1"),
            // redis111: `/`, `?` or `#` in a password as is (the URL is refused, and quoted).
            ("redis://u:pa/ss@h:1/0", "redis://u:***@h:1/0"),
            ("redis://:a?b#c/d=@h:1?db=0", "redis://:***@h:1?db=0"),
            ("redis://h:1/0?pass=a@b", "redis://h:***@b"),
            ("redis://h/0?pass=a@b", "redis://h/0?pass=***"),
            ("", ""),
            ("redis://", "redis://"),
        ] {
            assert_eq!(redacted_url(url), shown, "{url}");
        }
        let err = "http://user:s3cret@127.0.0.1:9000"
            .parse::<UpstreamUrl>()
            .unwrap_err();
        assert!(!err.contains("s3cret"), "{err}");
        assert!(err.contains("http://user:***@127.0.0.1:9000"), "{err}");
    }

    #[test]
    fn cidrs_and_single_addresses() {
        let c: Cidr = "10.1.2.3/8".parse().unwrap();
        assert_eq!(c.0.to_string(), "10.0.0.0/8");
        assert!(
            "::1"
                .parse::<Cidr>()
                .unwrap()
                .0
                .contains(&"::1".parse::<std::net::IpAddr>().unwrap())
        );
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
    }
}
