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

from_string!(ListenAddr, UpstreamUrl, Cidr);

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
