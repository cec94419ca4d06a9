//! Addresses and URLs as a config writes them, parsed with a message saying what to write.

use std::net::SocketAddr;
use std::str::FromStr;

use http::Uri;
use http::uri::{Authority, Scheme};

/// An address to listen on: `127.0.0.1:8080`, `[::1]:8080`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenAddr(pub SocketAddr);

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
        let uri: Uri = s
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
        if parts
            .path_and_query
            .is_some_and(|p| p.as_str() != "/" && !p.as_str().is_empty())
        {
            return Err(format!(
                "upstream `{s}` has a path; requests keep their own path: {hint}"
            ));
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
