//! The client's address behind proxies the gate trusts (`[client_address]`): the peer,
//! unless the peer is a trusted proxy; then the header the proxies write, read from the
//! right past every trusted proxy (nginx's `real_ip_recursive`).
//!
//! The rule every choice here follows: the client is the farthest address a trusted hop
//! vouches for. The peer is vouched for by the connection; each address a trusted proxy
//! wrote is vouched for by that proxy; what the first untrusted address wrote is the
//! client's own word and is never read. Where the gate cannot read further (an entry that
//! is no address, `unknown`, a hidden `Forwarded` id, the hop bound), the client is the last
//! address it could vouch for — a proxy's, which all such requests share — never a value
//! the client chose.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use http::{HeaderMap, HeaderName, header};

use crate::config::{self, ClientHeader};

/// Most list entries read from the right of one request's header, empty ones included;
/// past it the client is the last address read. No real chain has this many proxies, and
/// a request inside the trusted networks cannot make the gate read more.
pub const MAX_HOPS: usize = 32;

/// Longest text an address takes in a list: `[` 45 characters of IPv6 `]:65535` is 53.
const MAX_NODE: usize = 64;

/// Who the client is: the trusted proxies and the header they write.
#[derive(Clone, Debug, Default)]
pub struct ClientAddress {
    proxies: Vec<ipnet::IpNet>,
    header: ClientHeader,
}

impl ClientAddress {
    /// What `cfg` asks for. Without trusted proxies the client is always the peer.
    pub fn of(cfg: &config::ClientAddress) -> ClientAddress {
        ClientAddress {
            proxies: cfg.trusted_proxies.iter().map(|c| c.0).collect(),
            header: cfg.header(),
        }
    }

    /// Whether any proxy is trusted (else [`client`](Self::client) is always the peer).
    pub fn is_on(&self) -> bool {
        !self.proxies.is_empty()
    }

    /// The client's address for a request with `headers` that came from `peer`: `peer`
    /// itself unless it is a trusted proxy. Reads at most [`MAX_HOPS`] entries, each at most
    /// a few dozen bytes once found, from the right: the work is bounded whatever the
    /// header holds.
    pub fn client(&self, headers: &HeaderMap, peer: IpAddr) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        match self.header {
            ClientHeader::XForwardedFor => {
                self.walk(entries(headers, &X_FORWARDED_FOR).map(node), peer)
            }
            ClientHeader::Forwarded => self.walk(
                entries(headers, &header::FORWARDED).map(forwarded_for),
                peer,
            ),
            ClientHeader::XRealIp => real_ip(headers).unwrap_or(peer),
        }
    }

    /// The trusted proxies' networks.
    pub fn proxies(&self) -> &[ipnet::IpNet] {
        &self.proxies
    }

    /// The header read.
    pub fn header(&self) -> ClientHeader {
        self.header
    }

    /// Whether a request with `headers` from `peer` comes from a trusted proxy without a
    /// line of the header read: its client is then the proxy itself.
    pub fn lacks_header(&self, headers: &HeaderMap, peer: IpAddr) -> bool {
        let name = match self.header {
            ClientHeader::XForwardedFor => &X_FORWARDED_FOR,
            ClientHeader::Forwarded => &header::FORWARDED,
            ClientHeader::XRealIp => &X_REAL_IP,
        };
        self.trusts(peer) && !headers.contains_key(name)
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.proxies.iter().any(|n| n.contains(&ip))
    }

    /// From the right: each address read is vouched for by the trusted hop after it; the
    /// first that is not a trusted proxy is the client. An entry that is no address ends the
    /// walk at the address before it; so does the hop bound. Every entry trusted: the
    /// leftmost is the client (nginx's recursive mode).
    fn walk(&self, hops: impl Iterator<Item = Hop>, peer: IpAddr) -> IpAddr {
        let mut client = peer;
        for hop in hops.take(MAX_HOPS) {
            match hop {
                Hop::Empty => {}
                Hop::Unreadable => break,
                Hop::Address(ip) => {
                    client = ip;
                    if !self.trusts(ip) {
                        break;
                    }
                }
            }
        }
        client
    }
}

/// Requests from a trusted proxy without the header read (trial117: a proxy writing
/// another header, or a `location` without its `proxy_set_header`, made every client the
/// proxy, one per-client budget for all, and nothing said so). Kept by the gate across
/// reloads; logged the first time, then at most once a minute.
#[derive(Debug, Default)]
pub struct WithoutHeader {
    count: AtomicU64,
    /// When it was last logged: seconds since [`since`] + 1; 0 for never.
    logged_at: AtomicU64,
}

/// How long between two log lines of [`WithoutHeader`].
const LOG_EVERY_SECS: u64 = 60;

/// Seconds since the first call, on a monotonic clock.
fn since() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs()
}

impl WithoutHeader {
    /// Requests counted so far.
    pub fn get(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Counts a request from the trusted proxy `peer` without `header`, and logs it when
    /// none was logged in the last minute.
    pub fn count(&self, peer: IpAddr, header: ClientHeader) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        let now = since() + 1;
        let last = self.logged_at.load(Ordering::Relaxed);
        if (last != 0 && now < last + LOG_EVERY_SECS)
            || self
                .logged_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let nginx = match header {
            ClientHeader::XForwardedFor => {
                "`proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;`"
            }
            ClientHeader::Forwarded => {
                "`proxy_set_header Forwarded` with `for=` the client's address"
            }
            ClientHeader::XRealIp => "`proxy_set_header X-Real-IP $remote_addr;`",
        };
        let name = header.name();
        tracing::warn!(
            %peer,
            requests_without_header = n,
            "a request from trusted proxy {peer} came without the `{name}` header: its client is the proxy itself, as for every such request (one per-client budget for all of them). If the proxy forwards clients' requests, have it write `{name}` (nginx: {nginx}, in every location), or set `[client_address] header` to the header it writes; a balancer's own health check carries none. Counted in /status client_address.without_header; said at most once a minute"
        );
    }
}

/// One list entry, read from the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hop {
    /// An empty list element (`a,,b`; RFC 9110 §5.6.1: accepted and skipped).
    Empty,
    /// An entry that names no address: the walk stops.
    Unreadable,
    /// An address a hop wrote.
    Address(IpAddr),
}

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_REAL_IP: HeaderName = HeaderName::from_static("x-real-ip");

/// The elements of a comma-separated header from the right: its last line first, each
/// line from its end (RFC 9110 §5.3: several lines are one list, in order), trimmed; `None`
/// for an empty element. Lazy: what lies left of where the walk stops is never scanned.
fn entries<'a>(
    headers: &'a HeaderMap,
    name: &HeaderName,
) -> impl Iterator<Item = Option<&'a [u8]>> {
    headers
        .get_all(name)
        .iter()
        .rev()
        .flat_map(|v| v.as_bytes().rsplit(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .map(|e| (!e.is_empty()).then_some(e))
}

/// An `X-Forwarded-For` element as [`entries`] gives it.
fn node(entry: Option<&[u8]>) -> Hop {
    match entry {
        None => Hop::Empty,
        Some(e) => address(e).map_or(Hop::Unreadable, Hop::Address),
    }
}

/// The address in `text` as proxies write one: IPv4 (`192.0.2.1`, or with a port
/// `192.0.2.1:4711`), IPv6 (`2001:db8::1`, or in brackets `[2001:db8::1]`, with a port
/// `[2001:db8::1]:4711`); an IPv4-mapped IPv6 address is its IPv4 address, as the peer is.
/// Anything else is none: a name, `unknown`, an obfuscated id (`_hidden`), an IPv6 zone
/// (`fe80::1%eth0`), leading zeros (`010.0.0.1`), text around the address.
fn address(text: &[u8]) -> Option<IpAddr> {
    if text.len() > MAX_NODE {
        return None;
    }
    let text = std::str::from_utf8(text).ok()?;
    let port_ok = |p: &str| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit());
    let ip = if let Some(rest) = text.strip_prefix('[') {
        let (inner, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(port_ok)) {
            return None;
        }
        IpAddr::V6(inner.parse().ok()?)
    } else if let Ok(ip) = text.parse::<IpAddr>() {
        ip
    } else {
        // Only IPv4 takes a port without brackets (a bare IPv6 address is all colons).
        let (v4, port) = text.split_once(':')?;
        if !port_ok(port) {
            return None;
        }
        IpAddr::V4(v4.parse().ok()?)
    };
    Some(ip.to_canonical())
}

/// The `for=` node of a `Forwarded` element (RFC 7239 §4: `for=192.0.2.43;proto=https`,
/// `for="[2001:db8::1]:4711"`), [`Hop::Unreadable`] when it names no address: no `for=`, two of
/// them, a pair without `=`, `for=unknown` or an obfuscated `for=_hidden` (§6.2–6.3: the
/// proxy hid the client, so the walk stops at that proxy), an escape or a stray quote.
fn forwarded_for(element: Option<&[u8]>) -> Hop {
    let Some(element) = element else {
        return Hop::Empty;
    };
    let mut found = None;
    for pair in element.split(|&b| b == b';') {
        let pair = pair.trim_ascii();
        if pair.is_empty() {
            continue;
        }
        let Some(eq) = pair.iter().position(|&b| b == b'=') else {
            return Hop::Unreadable;
        };
        if pair[..eq].trim_ascii().eq_ignore_ascii_case(b"for") {
            if found.is_some() {
                return Hop::Unreadable;
            }
            found = Some(pair[eq + 1..].trim_ascii());
        }
    }
    let Some(value) = found else {
        return Hop::Unreadable;
    };
    let value = match value.strip_prefix(b"\"") {
        Some(quoted) => match quoted.strip_suffix(b"\"") {
            Some(inner) => inner,
            None => return Hop::Unreadable,
        },
        None => value,
    };
    if value.iter().any(|&b| b == b'"' || b == b'\\') {
        return Hop::Unreadable;
    }
    address(value).map_or(Hop::Unreadable, Hop::Address)
}

/// `X-Real-IP`: one line holding one address, set by the proxy in front (which replaces any
/// the client sent). Several lines, or one that is no address: none (the peer is the
/// client), since a client could have added a line of its own.
fn real_ip(headers: &HeaderMap) -> Option<IpAddr> {
    let mut lines = headers.get_all(&X_REAL_IP).iter();
    match (lines.next(), lines.next()) {
        (Some(v), None) => address(v.as_bytes().trim_ascii()),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
