//! Key extractors: what in a request names the client a keyed rate limit counts.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::{Extensions, Request};

/// Finds the rate limit key of a request. `None` means the request has no key, which the
/// rate layer answers as its [`MissingKey`](super::MissingKey) policy says (a
/// misconfiguration, such as a server that does not record peer addresses).
pub trait KeyExtractor<B> {
    /// The key: `()` for a global limit, an address, a header value, ...
    type Key;

    /// The key of `req`, if it has one.
    fn extract(&self, req: &Request<B>) -> Option<Self::Key>;

    /// What a request without a key lacks and how to fix it, for the warning the rate layer
    /// logs on the first such request.
    fn missing_key_hint(&self) -> String {
        "the key extractor found no key in the request".to_owned()
    }
}

/// One limit for every request: the key of [`RateLimitLayer::new`](super::RateLimitLayer::new)
/// until [`keyed_by`](super::RateLimitLayer::keyed_by) names another.
#[derive(Clone, Copy, Debug, Default)]
pub struct Global;

impl<B> KeyExtractor<B> for Global {
    type Key = ();

    fn extract(&self, _: &Request<B>) -> Option<()> {
        Some(())
    }
}

/// Finds the peer address among a request's extensions.
type Lookup = Arc<dyn Fn(&Extensions) -> Option<IpAddr> + Send + Sync>;

/// The client's IP address, IPv6 grouped by /64 (one customer usually holds a whole /64,
/// so per-address IPv6 limits are trivially dodged).
///
/// The address comes from the connection, as a request extension. [`PeerIp::new`] reads:
///
/// - axum's `ConnectInfo<SocketAddr>` (with this crate's `axum` feature), which axum
///   records when served with `into_make_service_with_connect_info::<SocketAddr>()`;
/// - a [`SocketAddr`] or [`IpAddr`] extension, the usual way with hyper: insert the address
///   `accept()` returned into each request (e.g. in the `service_fn` of the connection).
///
/// Any other type (a proxy's own connection info, tonic's `TcpConnectInfo`) is read with
/// [`from_extension`](Self::from_extension). A request with no address is answered as the
/// layer's [`MissingKey`](super::MissingKey) policy says, and the first one logs a warning.
///
/// # Examples
///
/// ```
/// use std::net::SocketAddr;
/// use axum::Router;
/// use axum::routing::get;
/// use sluicegate::middleware::{KeyedGcra, PeerIp, Quota, RateLimitLayer};
///
/// # async fn serve() -> std::io::Result<()> {
/// let max_clients = std::num::NonZeroUsize::new(100_000).unwrap();
/// let per_client = std::sync::Arc::new(KeyedGcra::new(Quota::per_minute(60), max_clients));
/// let app = Router::new()
///     .route("/", get(|| async { "hello" }))
///     .layer(RateLimitLayer::new(per_client).keyed_by(PeerIp::new()));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// // Connect info is what gives each request its peer address.
/// axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await
/// # }
/// ```
///
/// `X-Forwarded-For` is ignored unless [`trust_x_forwarded_for`](Self::trust_x_forwarded_for)
/// is set: any client can write it.
#[derive(Clone)]
pub struct PeerIp {
    lookup: Lookup,
    trust_forwarded: bool,
}

impl PeerIp {
    /// Reads axum's `ConnectInfo<SocketAddr>` (feature `axum`), or a [`SocketAddr`] or
    /// [`IpAddr`] request extension.
    pub fn new() -> Self {
        PeerIp {
            lookup: Arc::new(peer_of),
            trust_forwarded: false,
        }
    }

    /// Reads the address from a request extension of type `T` (axum's
    /// `ConnectInfo<SocketAddr>`, a proxy's own connection type, ...).
    pub fn from_extension<T, F>(get: F) -> Self
    where
        T: Send + Sync + 'static,
        F: Fn(&T) -> IpAddr + Send + Sync + 'static,
    {
        PeerIp {
            lookup: Arc::new(move |ext: &Extensions| ext.get::<T>().map(&get)),
            trust_forwarded: false,
        }
    }

    /// Uses the last (rightmost) address of `X-Forwarded-For`, the one your own proxy
    /// appended (with or without a port, IPv6 with or without brackets), when the header is
    /// present. Only for servers that are reachable through that proxy alone.
    pub fn trust_x_forwarded_for(mut self, on: bool) -> Self {
        self.trust_forwarded = on;
        self
    }
}

/// The peer address among the extensions the usual servers record.
fn peer_of(ext: &Extensions) -> Option<IpAddr> {
    #[cfg(feature = "axum")]
    if let Some(info) = ext.get::<axum::extract::ConnectInfo<SocketAddr>>() {
        return Some(info.0.ip());
    }
    ext.get::<SocketAddr>()
        .map(SocketAddr::ip)
        .or_else(|| ext.get::<IpAddr>().copied())
}

impl Default for PeerIp {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for PeerIp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerIp")
            .field("trust_x_forwarded_for", &self.trust_forwarded)
            .finish_non_exhaustive()
    }
}

impl<B> KeyExtractor<B> for PeerIp {
    type Key = IpAddr;

    fn missing_key_hint(&self) -> String {
        let axum = if cfg!(feature = "axum") {
            "with axum, serve `app.into_make_service_with_connect_info::<SocketAddr>()`"
        } else {
            "with axum, enable sluicegate's `axum` feature and serve \
             `app.into_make_service_with_connect_info::<SocketAddr>()`"
        };
        format!(
            "no peer address in the request: {axum}; with hyper, insert the connection's \
             `SocketAddr` as a request extension; for another connection type, key with \
             `PeerIp::from_extension`"
        )
    }

    fn extract(&self, req: &Request<B>) -> Option<IpAddr> {
        let forwarded = self
            .trust_forwarded
            .then(|| last_forwarded(req.headers().get_all("x-forwarded-for").iter()))
            .flatten();
        forwarded
            .or_else(|| (self.lookup)(req.extensions()))
            .map(group_ip)
    }
}

fn last_forwarded<'a>(values: impl DoubleEndedIterator<Item = &'a HeaderValue>) -> Option<IpAddr> {
    let last = values.last()?.to_str().ok()?;
    let entry = last.rsplit(',').next()?.trim();
    // Some proxies write the client's port too (`203.0.113.7:51234`, `[2001:db8::7]:443`),
    // or IPv6 in brackets: read as a bare address, such an entry fell back to the peer (the
    // proxy) and every client behind it shared one limit.
    entry
        .parse()
        .ok()
        .or_else(|| entry.parse::<std::net::SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| entry.strip_prefix('[')?.strip_suffix(']')?.parse().ok())
}

/// The rate limit key of an address: IPv4 as is (also when written as IPv4-mapped IPv6, or
/// under the NAT64 prefix `64:ff9b::/96`), IPv6 cut to its /64 prefix.
///
/// ```
/// use std::net::IpAddr;
/// use sluicegate::middleware::rate::group_ip;
///
/// let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
/// let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
/// assert_eq!(group_ip(a), group_ip(b));
/// assert_eq!(group_ip("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1".parse::<IpAddr>().unwrap());
/// ```
pub fn group_ip(ip: IpAddr) -> IpAddr {
    /// RFC 6052's well-known NAT64 prefix, `64:ff9b::/96`.
    const NAT64: u128 = 0x0064_ff9b << 96;
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            // An IPv4 client seen through a NAT64: all of them share one /64.
            None if u128::from(v6) >> 32 == NAT64 >> 32 => {
                IpAddr::V4(std::net::Ipv4Addr::from(u128::from(v6) as u32))
            }
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        },
    }
}

/// The value of one header (an API key, a tenant id). A request without the header has no
/// key, and so has one with more than one line of it: the limiter would count one line while
/// the service reads whichever it reads (the first, the last, all of them joined), and a
/// client could make up a new line for each request beside the key it uses (review 26).
///
/// The key is a copy of the value's bytes: a server's header values are slices of the
/// buffer the request was read into, and a keyed limiter that kept such a slice would keep
/// the whole buffer (kilobytes) alive for each key it remembers. A value longer than
/// [`HeaderKey::LONGEST_KEPT`] (64 bytes) is kept as a 128-bit digest of it instead.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use http::header::HeaderValue;
/// use sluicegate::middleware::{HeaderKey, KeyedGcra, Quota, RateLimitLayer};
///
/// let per_key = Arc::new(KeyedGcra::<HeaderValue>::new(
///     Quota::per_minute(600),
///     std::num::NonZeroUsize::new(10_000).unwrap(),
/// ));
/// let layer = RateLimitLayer::new(per_key)
///     .keyed_by(HeaderKey(http::header::HeaderName::from_static("x-api-key")));
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct HeaderKey(pub HeaderName);

impl HeaderKey {
    /// The longest value kept as it is. A longer one is kept as a 128-bit digest (32 hex
    /// digits, keyed with a secret chosen per process, so a client can neither predict nor
    /// aim at another's), which bounds a keyed limiter's memory at about `max_keys` × 64
    /// bytes of keys however long the values clients make up.
    pub const LONGEST_KEPT: usize = 64;
}

/// A 128-bit digest of `bytes` as 32 hex digits: two SipHash runs under secret keys of this
/// process (std's `RandomState`), so equal values meet and a client cannot make its value
/// collide with another's.
fn digest(bytes: &[u8]) -> String {
    use std::hash::BuildHasher;
    use std::sync::OnceLock;
    static KEYS: OnceLock<[std::collections::hash_map::RandomState; 2]> = OnceLock::new();
    let [a, b] = KEYS.get_or_init(Default::default);
    format!("{:016x}{:016x}", a.hash_one(bytes), b.hash_one(bytes))
}

impl<B> KeyExtractor<B> for HeaderKey {
    type Key = HeaderValue;

    fn extract(&self, req: &Request<B>) -> Option<HeaderValue> {
        let mut lines = req.headers().get_all(&self.0).iter();
        let value = lines.next()?;
        if lines.next().is_some() {
            return None;
        }
        let bytes = value.as_bytes();
        // Copied, not cloned: a clone shares (and keeps alive) the request's read buffer.
        // A long value is kept as its digest: all its bytes would make each made-up key
        // cost as much as the client cares to send (hyper reads ~400 KB of headers).
        let owned = if bytes.len() <= HeaderKey::LONGEST_KEPT {
            Bytes::copy_from_slice(bytes)
        } else {
            Bytes::from(digest(bytes))
        };
        let mut owned = HeaderValue::from_maybe_shared(owned)
            .expect("the bytes of a header value, or hex digits, are a header value");
        owned.set_sensitive(value.is_sensitive());
        Some(owned)
    }

    fn missing_key_hint(&self) -> String {
        format!("no `{}` header in the request", self.0)
    }
}

/// A key computed by a closure; made by [`key_fn`].
#[derive(Clone, Copy, Debug)]
pub struct KeyFn<F>(F);

/// A key extractor from a closure over the request.
///
/// ```
/// use sluicegate::middleware::rate::key_fn;
///
/// // One limit per path.
/// let by_path = key_fn(|req: &http::Request<()>| Some(req.uri().path().to_owned()));
/// # let _ = by_path;
/// ```
pub fn key_fn<F>(f: F) -> KeyFn<F> {
    KeyFn(f)
}

impl<B, K, F> KeyExtractor<B> for KeyFn<F>
where
    F: Fn(&Request<B>) -> Option<K>,
{
    type Key = K;

    fn extract(&self, req: &Request<B>) -> Option<K> {
        (self.0)(req)
    }
}
