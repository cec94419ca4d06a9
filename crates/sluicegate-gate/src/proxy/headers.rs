//! Rewriting a request for the upstream and a response for the client: hop-by-hop headers
//! dropped, `X-Forwarded-For` and `Forwarded` added, `Host` kept.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Mutex, PoisonError};

use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::uri::{PathAndQuery, Uri};
use http::{Version, request};

use crate::config::UpstreamUrl;

/// Headers this hop removes: those that describe one connection, not the message
/// (RFC 9110 §7.6.1), and proxy credentials, which are for this hop only. `Trailer` is not
/// one (RFC 9110 §6.6.2; RFC 2616 listed it): it names the trailer fields that follow the
/// body, and hyper's server relays to the client only the trailers it names.
static HOP_BY_HOP: [HeaderName; 7] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::TE,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::PROXY_AUTHORIZATION,
];

/// `TE`'s bit in what [`hop_by_hop_present`] finds.
const TE_PRESENT: u8 = 1 << 3;
/// `Upgrade`'s bit in what [`hop_by_hop_present`] finds.
const UPGRADE_PRESENT: u8 = 1 << 5;

/// Drops the hop-by-hop headers, and those the `Connection` header names.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    strip_present(headers, hop_by_hop_present(headers));
}

/// Which of [`HOP_BY_HOP`] `headers` has, bit `i` for the `i`-th: one pass over the names.
fn hop_by_hop_present(headers: &HeaderMap) -> u8 {
    let mut present = 0u8;
    for name in headers.keys() {
        if let Some(i) = hop_by_hop_index(name) {
            present |= 1 << i;
        }
    }
    present
}

/// Drops the hop-by-hop headers `present` marks ([`hop_by_hop_present`]), and those the
/// `Connection` header names.
fn strip_present(headers: &mut HeaderMap, present: u8) {
    // Most requests carry none, most responses only `Connection`.
    if present == 0 {
        return;
    }
    if present == 1
        && headers.get_all(header::CONNECTION).iter().all(|v| {
            let v = v.as_bytes();
            v.eq_ignore_ascii_case(b"keep-alive") || v.eq_ignore_ascii_case(b"close")
        })
    {
        // The usual response: `Connection: keep-alive` (or `close`) and nothing else.
        headers.remove(header::CONNECTION);
        return;
    }
    if present & 1 != 0 {
        let listed: Vec<HeaderValue> = headers
            .get_all(header::CONNECTION)
            .iter()
            .cloned()
            .collect();
        remove_listed(headers, &listed);
    }
    for (i, h) in HOP_BY_HOP.iter().enumerate() {
        if present & (1 << i) != 0 {
            headers.remove(h);
        }
    }
}

/// Whether `name` is one of the hop-by-hop headers every hop removes (not counting those a
/// `Connection` header names).
pub(super) fn is_hop_by_hop(name: &HeaderName) -> bool {
    hop_by_hop_index(name).is_some()
}

/// Where `name` is in [`HOP_BY_HOP`].
fn hop_by_hop_index(name: &HeaderName) -> Option<usize> {
    // The list's names are 2, 7, 10, 16, 17 or 19 bytes long: most names are none.
    matches!(name.as_str().len(), 2 | 7 | 10 | 16 | 17 | 19)
        .then(|| HOP_BY_HOP.iter().position(|h| h == name))
        .flatten()
}

/// Removes the headers the `Connection` values in `listed` name (RFC 9110 §7.6.1), but
/// `Host`: the route was chosen on it, and the upstream must see the host it was chosen
/// for (without it, the upstream's own address would go in its place).
pub(super) fn remove_listed(headers: &mut HeaderMap, listed: &[HeaderValue]) {
    for token in listed
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
    {
        let token = token.trim_ascii();
        // `keep-alive`, `close` and the like: gone with the list, or not a header.
        if token.is_empty()
            || token.eq_ignore_ascii_case(b"close")
            || token.eq_ignore_ascii_case(b"host")
            || HOP_BY_HOP
                .iter()
                .any(|h| token.eq_ignore_ascii_case(h.as_str().as_bytes()))
        {
            continue;
        }
        if let Ok(name) = HeaderName::from_bytes(token) {
            headers.remove(name);
        }
    }
}

/// Why a request's `Host` makes it one the gate must refuse (`400`, RFC 9112 §3.2): more
/// than one `Host` line (a route could match one name while the upstream serves the other),
/// one that is no `uri-host[:port]` (`a b`, `[::1`: hyper takes any header value, and the
/// route and the upstream would each read it their own way), or none in HTTP/1.1 with a
/// target that does not name the host either; or an absolute-form target that names a user
/// (`http://user:pw@host/`: RFC 9110 §4.2.4 has a recipient treat userinfo as an error;
/// without a `Host` its authority would go upstream as one, credentials and all). `None`
/// when fine.
pub(super) fn host_problem<B>(req: &http::Request<B>) -> Option<&'static str> {
    if let Some(a) = req.uri().authority() {
        if a.as_str().contains('@') {
            return Some(
                "the request target names a user (user@host), which HTTP forbids: send the host alone\n",
            );
        }
        // The route is chosen on it and the upstream gets it as `Host`: held to what a
        // `Host` is held to.
        if !valid_host(a.as_str().as_bytes()) {
            return Some(
                "the request target's host is not a valid host[:port] (a name, an IPv4 address or an IPv6 address in brackets, then a port of digits)\n",
            );
        }
    }
    let mut hosts = req.headers().get_all(header::HOST).iter();
    match (hosts.next(), hosts.next()) {
        (Some(_), Some(_)) => Some("more than one Host header\n"),
        (Some(h), None) if !valid_host(h.as_bytes()) => Some(
            "the Host header is not a valid host[:port] (a name, an IPv4 address or an IPv6 address in brackets, then a port of digits)\n",
        ),
        (None, _) if req.version() == Version::HTTP_11 && req.uri().authority().is_none() => {
            Some("an HTTP/1.1 request needs a Host header\n")
        }
        _ => None,
    }
}

/// Makes an absolute-form target's authority the request's `Host` (RFC 9112 §3.2.2–3.2.3:
/// the recipient ignores `Host` then, and a proxy replaces it with the authority), as soon
/// as [`host_problem`] passed it: the route is chosen on the authority and the upstream gets
/// it, so whatever else reads `Host` (a per-client rate keyed on `header:host`) must read it
/// too, not a `Host` the client may vary at will.
///
/// A `Host` with percent-encoded unreserved characters (`%61pi.example`) is put in normal
/// form (RFC 3986 §6.2.2.2: `api.example`), as a path is (`path.rs`): the route for the name
/// takes it and its upstream gets the name, where it went past that route as another name
/// and an upstream that decodes it served the name under another pool's limits. (In a
/// target, hyper refuses a `%` in the authority before this.)
pub(super) fn host_from_target<B>(req: &mut http::Request<B>) {
    if let Some(v) = authority_as_host(req.uri()) {
        req.headers_mut().insert(header::HOST, v);
    }
    if let Some(h) = req.headers().get(header::HOST)
        && h.as_bytes().contains(&b'%')
        && let Some(normal) = decode_unreserved(h.as_bytes())
        && let Ok(v) = HeaderValue::from_bytes(&normal)
    {
        req.headers_mut().insert(header::HOST, v);
    }
}

/// An absolute-form target's authority as the `Host` it stands for (RFC 9112 §3.2.2: `Host`
/// is ignored then, and a proxy forwarding the request replaces `Host` with the authority,
/// §3.2.3). A URI's characters are all a header value's, and [`host_problem`] refused a
/// userinfo.
fn authority_as_host(uri: &http::Uri) -> Option<HeaderValue> {
    uri.authority()
        .and_then(|a| HeaderValue::from_str(a.as_str()).ok())
}

/// `host` with its percent-encoded unreserved characters decoded (other encodings kept as
/// they are), or `None` when it has none.
fn decode_unreserved(host: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(host.len());
    let mut changed = false;
    let mut i = 0;
    while let Some(&b) = host.get(i) {
        if b == b'%'
            && let (Some(&h), Some(&l)) = (host.get(i + 1), host.get(i + 2))
            && let Some(c) = crate::path::hex_pair(h, l)
            && crate::path::is_unreserved(c)
        {
            out.push(c);
            changed = true;
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    changed.then_some(out)
}

/// Whether `host` is `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2–3.2.3): a
/// `reg-name` (which an IPv4 address also is) or an IP literal in brackets (an IPv6 address
/// or an `IPvFuture`), then a port of digits, which may be empty. An empty `Host` is valid
/// (a target with an empty authority).
pub(crate) fn valid_host(host: &[u8]) -> bool {
    let (name_ok, rest) = if let Some(literal) = host.strip_prefix(b"[") {
        let Some(end) = literal.iter().position(|&b| b == b']') else {
            return false;
        };
        (ip_literal(&literal[..end]), &literal[end + 1..])
    } else {
        let end = host.iter().position(|&b| b == b':').unwrap_or(host.len());
        (reg_name(&host[..end]), &host[end..])
    };
    name_ok
        && match rest.split_first() {
            None => true,
            Some((b':', port)) => port.iter().all(u8::is_ascii_digit),
            Some(_) => false,
        }
}

/// `unreserved / sub-delims` (RFC 3986 §2.2–2.3).
fn unreserved_or_sub_delim(b: u8) -> bool {
    // A `matches!` compiles to a few range and bit tests; a search of the list of fifteen
    // took ~18 instructions a byte of every request's `Host`.
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
        )
}

/// `reg-name = *( unreserved / pct-encoded / sub-delims )`.
fn reg_name(name: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&b) = name.get(i) {
        if b == b'%' {
            if !name
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
        } else if unreserved_or_sub_delim(b) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// What goes between the brackets: an IPv6 address (no zone: RFC 3986 has none), or
/// `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
fn ip_literal(inner: &[u8]) -> bool {
    if let Some(future) = inner
        .strip_prefix(b"v")
        .or_else(|| inner.strip_prefix(b"V"))
    {
        let Some(dot) = future.iter().position(|&b| b == b'.') else {
            return false;
        };
        let (version, rest) = (&future[..dot], &future[dot + 1..]);
        return !version.is_empty()
            && version.iter().all(u8::is_ascii_hexdigit)
            && !rest.is_empty()
            && rest
                .iter()
                .all(|&b| b == b':' || unreserved_or_sub_delim(b));
    }
    std::str::from_utf8(inner).is_ok_and(|s| s.parse::<std::net::Ipv6Addr>().is_ok())
}

/// Turns the client's request head into the upstream's: origin-form URI, HTTP/1.1,
/// hop-by-hop headers gone, and the host the route was chosen on as `Host`: an
/// absolute-form target's authority, else the client's `Host` as it came, else (HTTP/1.0
/// without one) the upstream's own. Returns the `X-Forwarded-For` / `Forwarded` headers
/// naming the client, for the connection to the upstream to add ([`Added`]).
///
/// A handshake for a tunnel ([`asks_for_a_tunnel`]: `Connection: upgrade` and an `Upgrade`
/// to a protocol other than `h2c`) keeps its `Upgrade` header (less any `h2c` in it), and
/// [`Added::upgrade`] says so: the connection to the upstream sends `Connection: upgrade`.
pub(super) fn to_upstream(
    parts: &mut request::Parts,
    upstream: &UpstreamUrl,
    peer: &Forwarding,
) -> Added {
    // The scan for hop-by-hop headers says whether there is a `TE` or an `Upgrade` to read
    // before they go: most requests have neither, and pay no lookup for them.
    let mut present = hop_by_hop_present(&parts.headers);
    let te_trailers = present & TE_PRESENT != 0
        && parts
            .headers
            .get_all(header::TE)
            .iter()
            .any(accepts_trailers);
    let upgrade = present & UPGRADE_PRESENT != 0 && asks_for_a_tunnel(parts);
    if upgrade {
        present &= !UPGRADE_PRESENT;
    }
    strip_present(&mut parts.headers, present);
    strip_underscored_forwarding(&mut parts.headers);
    let mut host = parts.headers.get(header::HOST).cloned();
    if let Some(v) = authority_as_host(&parts.uri) {
        // An absolute-form target: its authority is the host, the one the route was chosen
        // on (`State::route_path`; `host_from_target` put it in `Host` already when the
        // request came in).
        parts.headers.insert(header::HOST, v.clone());
        host = Some(v);
    }
    // `Forwarded: host=` names the host the client asked for, if it named one.
    let forwarded = peer.element(host.as_ref());
    if host.is_none() {
        // HTTP/1.0 without a host: HTTP/1.1 needs one; the upstream's own.
        parts.headers.insert(
            header::HOST,
            HeaderValue::from_str(upstream.authority.as_str())
                .expect("an authority is a header value"),
        );
    }
    let xff = match parts.headers.get(X_FORWARDED_FOR) {
        None => Some(peer.xff.clone()),
        Some(_) => {
            parts
                .headers
                .insert(X_FORWARDED_FOR, forwarded_for(&parts.headers, peer));
            None
        }
    };
    if parts.uri.scheme().is_some() || parts.uri.authority().is_some() {
        // `http://h?q` has the path `/` (RFC 9112 §3.2.1, as it was routed: `Uri::path`),
        // which its `PathAndQuery` (`?q`) leaves out.
        let path = match parts.uri.path_and_query() {
            Some(pq) if pq.as_str().starts_with('?') => {
                PathAndQuery::try_from(format!("/{}", pq.as_str()))
                    .expect("a query after `/` is a path and query")
            }
            Some(pq) => pq.clone(),
            None => PathAndQuery::from_static("/"),
        };
        parts.uri = Uri::from(path);
    }
    parts.version = Version::HTTP_11;
    Added {
        xff,
        forwarded,
        te_trailers,
        upgrade,
    }
}

/// Drops a client's `X_Forwarded_For`, `X-Forwarded_For`, …: the header this hop writes,
/// spelt with a `_` for a `-`. A server that maps header names to CGI's (`-` to `_`:
/// `HTTP_X_FORWARDED_FOR`, as Puma did before 6.4.3: CVE-2024-45614) reads it as the same
/// header as the gate's, and may take the client's value for the gate's. nginx drops every
/// name with a `_` by default (`underscores_in_headers off`); other names with one go
/// through here, as in HAProxy (`Forwarded`, the other header the gate writes, has no `-`
/// to spell otherwise). One length compare per header name.
fn strip_underscored_forwarding(headers: &mut HeaderMap) {
    fn underscored(name: &HeaderName) -> bool {
        let name = name.as_str().as_bytes();
        name.len() == X_FORWARDED_FOR.as_str().len()
            && name.contains(&b'_')
            && name
                .iter()
                .zip(X_FORWARDED_FOR.as_str().as_bytes())
                .all(|(&n, &x)| n == x || (n == b'_' && x == b'-'))
    }
    while let Some(name) = headers.keys().find(|n| underscored(n)).cloned() {
        headers.remove(name);
    }
}

/// The client's `X-Forwarded-For` list, every line of it in order, with this client's
/// address at its end (as nginx's `$proxy_add_x_forwarded_for`): taken as bytes, so that a
/// value that is not visible ASCII cannot keep the address out. One allocation, as before.
fn forwarded_for(headers: &HeaderMap, peer: &Forwarding) -> HeaderValue {
    let ip = peer.xff.as_bytes();
    let mut list = Vec::with_capacity(
        headers
            .get_all(X_FORWARDED_FOR)
            .iter()
            .map(|v| v.len() + 2)
            .sum::<usize>()
            + ip.len(),
    );
    for v in &headers.get_all(X_FORWARDED_FOR) {
        let v = v.as_bytes().trim_ascii();
        if !v.is_empty() {
            list.extend_from_slice(v);
            list.extend_from_slice(b", ");
        }
    }
    list.extend_from_slice(ip);
    // Bytes of header values, commas, spaces and an address: a header value.
    HeaderValue::from_maybe_shared(bytes::Bytes::from(list)).unwrap_or_else(|_| peer.xff.clone())
}

/// Whether a request is a handshake for a tunnel the gate makes (WebSocket, or any other
/// `Upgrade` but `h2c`): HTTP/1.1 (an `Upgrade` in HTTP/1.0 is ignored, RFC 9110 §7.8),
/// `Connection` lists `upgrade`, and `Upgrade` names a protocol other than `h2c`. An `h2c`
/// offer in the list is taken out of it (the gate's server speaks HTTP/1 only); one alone,
/// like an `Upgrade` without `Connection: upgrade`, is no handshake: the request goes on as
/// a plain one without it, as a server may ignore an `Upgrade`.
fn asks_for_a_tunnel(parts: &mut request::Parts) -> bool {
    let headers = &parts.headers;
    if parts.version != Version::HTTP_11
        || !list(headers, &header::CONNECTION).any(|t| t.eq_ignore_ascii_case(b"upgrade"))
    {
        return false;
    }
    let h2c = |t: &[u8]| t.eq_ignore_ascii_case(b"h2c");
    if list(headers, &header::UPGRADE).all(h2c) {
        return false;
    }
    if list(headers, &header::UPGRADE).any(h2c) {
        let kept: Vec<&[u8]> = list(headers, &header::UPGRADE)
            .filter(|t| !h2c(t))
            .collect();
        let Ok(v) = HeaderValue::from_bytes(&kept.join(&b", "[..])) else {
            return false;
        };
        parts.headers.insert(header::UPGRADE, v);
    }
    true
}

/// The items of a comma-separated header, every line of it.
fn list<'a>(headers: &'a HeaderMap, name: &HeaderName) -> impl Iterator<Item = &'a [u8]> {
    headers
        .get_all(name)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

/// Whether a request's body comes in a transfer coding the gate does not relay: anything but
/// one `chunked`. The gate decodes the chunks and frames the body afresh, so another coding
/// would reach the upstream as if the coded bytes were the body; RFC 9112 §6.1 asks for 501
/// on a coding a server does not understand. Only a body of unknown length has codings: a
/// request without a body or with a `Content-Length` is not looked at.
pub(super) fn foreign_transfer_coding<B: http_body::Body>(req: &http::Request<B>) -> bool {
    if req.body().size_hint().exact().is_some() {
        return false;
    }
    let codings = req
        .headers()
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .try_fold(0, |n, v| {
            super::upstream::chunked_codings(Some(n), v.as_bytes())
        });
    !matches!(codings, Some(0 | 1))
}

/// Whether a `TE` value lists `trailers` (`TE: gzip;q=0.5, trailers`).
fn accepts_trailers(value: &HeaderValue) -> bool {
    value.as_bytes().split(|&b| b == b',').any(|coding| {
        let name = coding.split(|&b| b == b';').next().unwrap_or_default();
        name.trim_ascii().eq_ignore_ascii_case(b"trailers")
    })
}

/// The headers this hop adds to a request, kept out of its `HeaderMap`: the gate's own
/// upstream connection writes them after the client's headers (no map insert), hyper's
/// gets them inserted ([`Added::insert_into`]). Either way the upstream sees the same.
#[derive(Debug, Default)]
pub(super) struct Added {
    /// `X-Forwarded-For: <client>`, when the client sent none (else the client's list was
    /// extended in place).
    pub(super) xff: Option<HeaderValue>,
    /// One more `Forwarded` element, after any the client sent.
    pub(super) forwarded: Option<HeaderValue>,
    /// The client accepts trailers (`TE: trailers`), and the gate relays them: the upstream
    /// is told so with `TE: trailers` and `Connection: TE` (TE is hop-by-hop, RFC 9110
    /// §10.1.4), since some send trailers only when asked.
    pub(super) te_trailers: bool,
    /// A handshake for a tunnel: the request kept its `Upgrade` header, and the upstream is
    /// told `Connection: upgrade` (only hyper's client connection sends these).
    pub(super) upgrade: bool,
}

impl Added {
    /// Adds them to `headers`.
    pub(super) fn insert_into(self, headers: &mut HeaderMap) {
        if let Some(v) = self.xff {
            headers.insert(X_FORWARDED_FOR, v);
        }
        if let Some(v) = self.forwarded {
            headers.append(header::FORWARDED, v);
        }
        if self.te_trailers {
            headers.insert(header::TE, HeaderValue::from_static("trailers"));
        }
        let connection = match (self.te_trailers, self.upgrade) {
            (false, false) => return,
            (true, false) => "te",
            (false, true) => "upgrade",
            (true, true) => "te, upgrade",
        };
        headers.insert(header::CONNECTION, HeaderValue::from_static(connection));
    }
}

/// The `X-Forwarded-For` and `Forwarded` values for one client connection, made once: its
/// requests usually all name the same host, so the `Forwarded` element is kept for the last
/// host seen and made again only when the host changes.
#[derive(Debug)]
pub struct Forwarding {
    /// The client's address alone, the usual `X-Forwarded-For`.
    xff: HeaderValue,
    ip: IpAddr,
    /// The last request's `Host` and the `Forwarded` element made for it.
    last: Mutex<Option<(HeaderValue, HeaderValue)>>,
}

impl Forwarding {
    /// The values for a client at `peer`.
    pub fn new(peer: SocketAddr) -> Self {
        let ip = peer.ip();
        Forwarding {
            xff: HeaderValue::from_str(&ip.to_string()).expect("an IP address is a header value"),
            ip,
            last: Mutex::new(None),
        }
    }

    /// The `Forwarded` element for a request naming `host` (or no host).
    fn element(&self, host: Option<&HeaderValue>) -> Option<HeaderValue> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let (Some(h), Some((seen, value))) = (host, last.as_ref())
            && h == seen
        {
            return Some(value.clone());
        }
        // A host that would need escaping inside a quoted string is left out.
        let host_str = host
            .and_then(|h| h.to_str().ok())
            .filter(|h| !h.contains('"') && !h.contains('\\'));
        let node = match self.ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("\"[{v6}]\""),
        };
        let element = match host_str {
            Some(h) => format!("for={node};host=\"{h}\";proto=http"),
            None => format!("for={node};proto=http"),
        };
        let value = HeaderValue::from_str(&element).ok()?;
        if let Some(h) = host {
            *last = Some((h.clone(), value.clone()));
        }
        Some(value)
    }
}

/// `X-Forwarded-For`.
pub(super) const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte is a host's `unreserved / sub-delims` exactly when RFC 3986 §2.2–2.3 list
    /// it: letters, digits, `-._~` and `!$&'()*+,;=`.
    #[test]
    fn the_host_bytes_are_the_rfcs() {
        let listed = b"-._~!$&'()*+,;=";
        for b in 0..=u8::MAX {
            let rfc = b.is_ascii_alphanumeric() || listed.contains(&b);
            assert_eq!(unreserved_or_sub_delim(b), rfc, "byte {b:#04x}");
        }
    }

    #[test]
    fn the_te_bit_is_te() {
        let mut h = HeaderMap::new();
        h.insert(header::TE, HeaderValue::from_static("trailers"));
        assert_eq!(hop_by_hop_present(&h), TE_PRESENT);
    }

    #[test]
    fn the_length_filter_knows_every_name_of_the_list() {
        for h in &HOP_BY_HOP {
            assert!(
                matches!(h.as_str().len(), 2 | 7 | 10 | 16 | 17 | 19),
                "{h} would be skipped"
            );
        }
    }

    fn parts(req: http::Request<()>) -> request::Parts {
        req.into_parts().0
    }

    /// The head the upstream gets, the added headers in the map.
    fn to_upstream(p: &mut request::Parts, up: &UpstreamUrl, peer: &Forwarding) {
        super::to_upstream(p, up, peer).insert_into(&mut p.headers);
    }

    #[test]
    fn hop_by_hop_headers_and_the_ones_connection_names_are_dropped() {
        let mut p = parts(
            http::Request::get("/a?b=1")
                .header("host", "api.example")
                .header("connection", "keep-alive, x-secret-hop")
                .header("x-secret-hop", "1")
                .header("keep-alive", "timeout=5")
                .header("te", "gzip")
                .header("upgrade", "websocket")
                .header("x-kept", "yes")
                .header("trailer", "x-sum")
                .body(())
                .unwrap(),
        );
        let up: UpstreamUrl = "http://127.0.0.1:9000".parse().unwrap();
        to_upstream(
            &mut p,
            &up,
            &Forwarding::new("10.0.0.7:5555".parse().unwrap()),
        );
        for h in ["connection", "x-secret-hop", "keep-alive", "te", "upgrade"] {
            assert!(!p.headers.contains_key(h), "{h} forwarded");
        }
        assert_eq!(p.headers["x-kept"], "yes");
        assert_eq!(
            p.headers["trailer"], "x-sum",
            "end to end (RFC 9110 §6.6.2)"
        );
        assert_eq!(p.headers["host"], "api.example");
        assert_eq!(p.uri, "/a?b=1");
        assert_eq!(p.headers["x-forwarded-for"], "10.0.0.7");
        assert_eq!(
            p.headers["forwarded"],
            "for=10.0.0.7;host=\"api.example\";proto=http"
        );
    }

    /// The upstream's view of a request with `connection` and `upgrade` headers (each left
    /// out when `None`) in `version`: its `Upgrade`, its `Connection`, and whether it is a
    /// handshake for a tunnel.
    fn upgrade_seen(
        version: Version,
        connection: Option<&str>,
        upgrade: Option<&str>,
    ) -> (Option<String>, Option<String>, bool) {
        let mut b = http::Request::get("/chat").header("host", "x");
        if let Some(c) = connection {
            b = b.header("connection", c);
        }
        if let Some(u) = upgrade {
            b = b.header("upgrade", u);
        }
        let mut p = parts(b.body(()).unwrap());
        p.version = version;
        let up: UpstreamUrl = "http://u:1".parse().unwrap();
        let added =
            super::to_upstream(&mut p, &up, &Forwarding::new("10.0.0.7:1".parse().unwrap()));
        let tunnel = added.upgrade;
        added.insert_into(&mut p.headers);
        let get = |h| {
            p.headers
                .get(h)
                .map(|v: &HeaderValue| v.to_str().unwrap().to_owned())
        };
        (get(header::UPGRADE), get(header::CONNECTION), tunnel)
    }

    #[test]
    fn a_handshake_for_a_tunnel_keeps_its_upgrade_and_nothing_else_does() {
        let s = |v: &str| Some(v.to_owned());
        let v11 = Version::HTTP_11;
        assert_eq!(
            upgrade_seen(v11, Some("Upgrade"), Some("websocket")),
            (s("websocket"), s("upgrade"), true)
        );
        assert_eq!(
            upgrade_seen(v11, Some("keep-alive, Upgrade"), Some("h2c, websocket")),
            (s("websocket"), s("upgrade"), true),
            "the h2c offer is taken out"
        );
        for (version, connection, upgrade) in [
            (v11, Some("Upgrade, HTTP2-Settings"), Some("h2c")),
            (v11, None, Some("websocket")),
            (v11, Some("keep-alive"), Some("websocket")),
            (v11, Some("upgrade"), Some(" , ")),
            (Version::HTTP_10, Some("upgrade"), Some("websocket")),
        ] {
            assert_eq!(
                upgrade_seen(version, connection, upgrade),
                (None, None, false),
                "{version:?} {connection:?} {upgrade:?}"
            );
        }
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
        to_upstream(&mut p, &up, &Forwarding::new("[::1]:80".parse().unwrap()));
        assert_eq!(p.headers["x-forwarded-for"], "1.2.3.4, ::1");
        assert_eq!(p.headers["forwarded"], "for=\"[::1]\";proto=http");
    }

    #[test]
    fn the_forwarded_element_follows_the_host_from_request_to_request() {
        let up: UpstreamUrl = "http://u:1".parse().unwrap();
        let peer = Forwarding::new("10.0.0.7:5555".parse().unwrap());
        for host in ["a.example", "a.example", "b.example", "a.example"] {
            let mut p = parts(
                http::Request::get("/")
                    .header("host", host)
                    .body(())
                    .unwrap(),
            );
            to_upstream(&mut p, &up, &peer);
            assert_eq!(
                p.headers["forwarded"],
                format!("for=10.0.0.7;host=\"{host}\";proto=http")
            );
        }
        let mut p = parts(http::Request::get("/").body(()).unwrap());
        p.version = Version::HTTP_10;
        to_upstream(&mut p, &up, &peer);
        assert_eq!(p.headers["forwarded"], "for=10.0.0.7;proto=http");
    }

    #[test]
    fn proxy_credentials_are_dropped_even_without_other_hop_by_hop_headers() {
        let mut h = HeaderMap::new();
        h.insert(
            header::PROXY_AUTHORIZATION,
            HeaderValue::from_static("Basic x"),
        );
        h.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
        strip_hop_by_hop(&mut h);
        assert!(!h.contains_key(header::PROXY_AUTHORIZATION));
        assert_eq!(h[header::ACCEPT], "*/*");
    }

    /// An absolute-form target's authority is routed on and forwarded as `Host`, so it is
    /// held to what a `Host` is: `http://a:b/`, `http://[zz]/` and `http://[::1]x/` (which the
    /// URI parser takes) get `400`, whatever the `Host` says.
    #[test]
    fn an_absolute_form_authority_is_held_to_what_a_host_is() {
        let problem = |target: &str| {
            host_problem(
                &http::Request::get(target)
                    .header("host", "fine.example")
                    .body(())
                    .unwrap(),
            )
        };
        for target in ["http://a:b/", "http://[zz]/", "http://[::1]x/"] {
            assert!(problem(target).is_some(), "{target}");
        }
        for target in [
            "http://a.example:80/",
            "http://[::1]:8080/x",
            "http://[v1.x]/",
            "http://127.0.0.1/",
            "/origin",
        ] {
            assert_eq!(problem(target), None, "{target}");
        }
    }

    /// review22: `GET http://api.example?x=1` (an absolute-form target with a query and no
    /// path) was routed on the path `/` but went upstream as `GET ?x=1`, no request target
    /// at all (RFC 9112 §3.2.1: an origin-form target starts with `/`).
    #[test]
    fn an_absolute_form_target_without_a_path_goes_upstream_with_the_path_slash() {
        let up: UpstreamUrl = "http://127.0.0.1:9000".parse().unwrap();
        let peer = Forwarding::new("10.0.0.7:5555".parse().unwrap());
        for (target, origin) in [
            ("http://api.example?x=1", "/?x=1"),
            ("http://api.example", "/"),
            ("http://api.example/?x=1", "/?x=1"),
        ] {
            let mut p = parts(http::Request::get(target).body(()).unwrap());
            to_upstream(&mut p, &up, &peer);
            // As the head goes out (`Uri`'s own `==` takes an empty path for `/`).
            assert_eq!(
                p.uri.path_and_query().map(PathAndQuery::as_str),
                Some(origin),
                "{target}"
            );
        }
    }

    #[test]
    fn absolute_form_becomes_origin_form_and_names_the_host() {
        let up: UpstreamUrl = "http://127.0.0.1:9000".parse().unwrap();
        let peer = Forwarding::new("10.0.0.7:5555".parse().unwrap());
        let mut p = parts(
            http::Request::get("http://api.example/x?y=1")
                .body(())
                .unwrap(),
        );
        p.headers.remove(header::HOST);
        to_upstream(&mut p, &up, &peer);
        assert_eq!(p.uri, "/x?y=1");
        assert_eq!(p.headers["host"], "api.example");

        // A `Host` that differs is replaced by the authority (RFC 9112 §3.2.2–3.2.3): the
        // route was chosen on the authority.
        let mut p = parts(
            http::Request::get("http://api.example:8080/x")
                .header("host", "other")
                .body(())
                .unwrap(),
        );
        to_upstream(&mut p, &up, &peer);
        assert_eq!(p.uri, "/x");
        assert_eq!(p.headers["host"], "api.example:8080");
        assert_eq!(
            p.headers["forwarded"],
            "for=10.0.0.7;host=\"api.example:8080\";proto=http"
        );

        let mut p = parts(http::Request::get("/z").body(()).unwrap());
        p.version = Version::HTTP_10;
        to_upstream(&mut p, &up, &peer);
        assert_eq!(
            p.headers["host"], "127.0.0.1:9000",
            "no host at all: the upstream's"
        );
    }
}
