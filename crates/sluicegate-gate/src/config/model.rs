//! The config file's shape: every table and field, with its default. `docs/gate.md`
//! documents each one; keep the two in step.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use super::values::{Dur, KeySource, Rate};
use super::whole::Bounds;
use super::wire::{Cidr, ListenAddr, UpstreamUrl};

/// A whole gate config.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Addresses the proxy listens on (default `["127.0.0.1:8080"]`).
    #[serde(default = "default_listen", deserialize_with = "listen")]
    pub listen: Vec<ListenAddr>,
    /// Runtime worker threads (default: one per CPU; 1 to 1024).
    #[serde(default, deserialize_with = "workers")]
    pub workers: Option<usize>,
    /// How long shutdown waits for queued and running requests (default `30s`).
    #[serde(default = "default_grace")]
    pub grace_period: Dur,
    /// Largest request head (request line + headers) in bytes (default 16384, at least 8192).
    #[serde(
        default = "default_header_bytes",
        deserialize_with = "max_header_bytes"
    )]
    pub max_header_bytes: Spanned<usize>,
    /// Longest time a client may take to send a request head (default `10s`).
    #[serde(
        default = "default_header_timeout",
        deserialize_with = "header_read_timeout"
    )]
    pub header_read_timeout: Dur,
    /// Longest time a client may leave a request body waiting between two reads, while the
    /// gate reads it ahead or sends it upstream (default `60s`, as nginx's
    /// `client_body_timeout`).
    #[serde(
        default = "default_body_timeout",
        deserialize_with = "client_body_timeout"
    )]
    pub client_body_timeout: Dur,
    /// Most of a request body the gate reads before the request asks for its slot (default
    /// 65536; `0` reads none ahead: every body is streamed while its request holds its slot).
    /// A body that ends within it goes upstream whole, with a `Content-Length`.
    #[serde(
        default = "default_body_buffer",
        deserialize_with = "client_body_buffer_size"
    )]
    pub client_body_buffer_size: usize,
    /// Most of an answer the gate reads from the upstream ahead of a client that takes it
    /// slowly (default 262144; `0` reads none ahead: every answer is streamed while its
    /// request holds its slot). An answer that ends within it frees its slot when the
    /// upstream has sent it, whatever the client's pace.
    #[serde(
        default = "default_answer_buffer",
        deserialize_with = "response_buffer_size"
    )]
    pub response_buffer_size: usize,
    /// Most bytes every read-ahead buffer holds together, both ways (request bodies and
    /// answers; default 268435456): past it, bodies are streamed as with a bound of `0`.
    #[serde(
        default = "default_max_buffered",
        deserialize_with = "max_buffered_bytes"
    )]
    pub max_buffered_bytes: usize,
    /// Largest request body the gate takes, in bytes (default: none). A request whose
    /// `Content-Length` says more is answered `413` before anything of it is read, and a
    /// chunked body that passes it is cut there (see `docs/gate.md`).
    #[serde(default, deserialize_with = "client_max_body_size")]
    pub client_max_body_size: Option<u64>,
    /// Longest time a write to a client may wait with the client taking none of its answer
    /// (default `60s`, as nginx's `send_timeout`); then the connection is closed and the
    /// request's slot freed.
    #[serde(default = "default_send_timeout", deserialize_with = "send_timeout")]
    pub send_timeout: Dur,
    /// The admin API (off unless `listen` is set).
    #[serde(default)]
    pub admin: Admin,
    /// Requests that skip every limit.
    #[serde(default)]
    pub bypass: Bypass,
    /// Who the client is behind proxies the gate trusts (none: the connection's peer).
    #[serde(default)]
    pub client_address: ClientAddress,
    /// The Redis that pools with `scope = "global"` share with other gates (none: every
    /// pool is local).
    pub store: Option<Store>,
    /// The limited resources.
    #[serde(default, deserialize_with = "pools")]
    pub pools: Vec<Pool>,
    /// Which requests go to which pool; the first match wins.
    #[serde(default, deserialize_with = "routes")]
    pub routes: Vec<Route>,
}

/// `[admin]`: the admin API's own listener.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Admin {
    /// Where the admin API listens (no admin API when unset).
    pub listen: Option<Spanned<SocketAddr>>,
    /// A file holding the bearer token every admin call must carry. Without it the admin
    /// API only listens on loopback addresses.
    pub token_file: Option<Spanned<PathBuf>>,
    /// Most admin connections open at once (default [`Admin::MAX_CONNECTIONS`], 1 to
    /// 4096); beyond, a new one is closed at once.
    #[serde(
        default = "default_admin_connections",
        deserialize_with = "admin_max_connections"
    )]
    pub max_connections: usize,
}

impl Admin {
    /// The default of `max_connections`: an operator's browser (a dashboard tab takes a
    /// few), scripts and a metrics scraper fit many times over, while a client that opens
    /// connections and holds them cannot take more than this of the gate's open files.
    pub const MAX_CONNECTIONS: usize = 64;
}

// Written by hand: the default cap is not zero (zero would shut the admin API).
impl Default for Admin {
    fn default() -> Self {
        Admin {
            listen: None,
            token_file: None,
            max_connections: Admin::MAX_CONNECTIONS,
        }
    }
}

/// `[bypass]`: requests a client cannot forge that skip every limit (counted apart).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bypass {
    /// Source networks whose requests skip the limits, such as `["10.1.0.0/16"]`.
    #[serde(default)]
    pub trusted_cidrs: Vec<Cidr>,
    /// A header whose value, when it equals the secret in `secret_file`, skips the limits.
    /// The gate removes it before forwarding.
    pub header: Option<Spanned<String>>,
    /// The file holding the bypass secret (needed with `header`).
    pub secret_file: Option<Spanned<PathBuf>>,
}

/// `[client_address]`: who the client is when the gate runs behind proxies (a load
/// balancer, a CDN, an ingress) — what `client_ip` keys count.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientAddress {
    /// The proxies whose word on the client's address the gate takes, such as
    /// `["10.0.0.0/8"]` (default none: the client is the connection's peer).
    #[serde(default)]
    pub trusted_proxies: Vec<Cidr>,
    /// The header those proxies write the address in (default `x-forwarded-for`).
    pub header: Option<Spanned<ClientHeader>>,
}

impl ClientAddress {
    /// The header read: the one written, else `x-forwarded-for`.
    pub fn header(&self) -> ClientHeader {
        self.header
            .as_ref()
            .map_or(ClientHeader::default(), |h| *h.get_ref())
    }
}

/// The header trusted proxies write the client's address in.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
pub enum ClientHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2`, each proxy appending its peer.
    #[default]
    #[serde(rename = "x-forwarded-for")]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy1`.
    #[serde(rename = "forwarded")]
    Forwarded,
    /// `X-Real-IP: client`, one address the proxy in front sets.
    #[serde(rename = "x-real-ip")]
    XRealIp,
}

impl ClientHeader {
    /// The header's name as the config writes it.
    pub fn name(self) -> &'static str {
        match self {
            ClientHeader::XForwardedFor => "x-forwarded-for",
            ClientHeader::Forwarded => "forwarded",
            ClientHeader::XRealIp => "x-real-ip",
        }
    }
}

/// `[store]`: the Redis that global pools share with the other gates.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Store {
    /// The Redis URL, such as `redis://127.0.0.1:6379`.
    pub redis: Spanned<String>,
    /// Longest wait for Redis per decision (default `20ms`); then the failure policy decides.
    #[serde(default = "default_budget", deserialize_with = "budget")]
    pub budget: Dur,
    /// How many gates share the store (default 1, with a warning while a global pool falls
    /// back to `local`): the `local` failure policy gives each `1 / instances` of a global
    /// limit.
    #[serde(default, deserialize_with = "instances")]
    pub instances: Option<Spanned<u32>>,
    /// The prefix of every Redis key (default `sluicegate`): gates that share a Redis but
    /// not their limits use different prefixes.
    #[serde(default = "default_prefix_key")]
    pub prefix: Spanned<String>,
    /// What global pools decide while Redis does not answer (default `local`); a pool may
    /// say otherwise.
    #[serde(default)]
    pub on_redis_failure: OnFailure,
    /// With a `rediss://` URL: the CA certificate(s) (PEM) to trust in place of the
    /// system's, for a Redis whose certificate an internal CA signed, or a self-signed one.
    pub tls_ca_file: Option<Spanned<PathBuf>>,
    /// With a `rediss://` URL: a client certificate (PEM) for a Redis that asks for one
    /// (mutual TLS), with `tls_key_file`.
    pub tls_cert_file: Option<Spanned<PathBuf>>,
    /// The private key (PEM) of `tls_cert_file`.
    pub tls_key_file: Option<Spanned<PathBuf>>,
}

impl Store {
    /// The Redis URL as logs, errors and the admin API show it: without its password.
    pub fn redis_shown(&self) -> String {
        super::redacted_url(self.redis.get_ref())
    }

    /// How many gates share the store: `instances`, else 1.
    pub fn instances(&self) -> u32 {
        self.instances.as_ref().map_or(1, |n| *n.get_ref())
    }
}

/// Where a pool's limits are kept.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// In this gate only.
    #[default]
    Local,
    /// In the `[store]`, shared by every gate using it.
    Global,
}

/// How a global pool's rate is decided.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RateMode {
    /// One Redis call per request: never more than the rate across all gates.
    #[default]
    Strict,
    /// Tokens leased from Redis in batches and spent locally: far fewer calls, at most 2 %
    /// of the rate's count over it.
    Hybrid,
}

/// What a global pool decides while Redis does not answer within the budget.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    /// This gate's share of the limit (the limit divided by `[store] instances`).
    #[default]
    Local,
    /// Let everything through (fail open).
    Allow,
    /// Turn everything away (fail closed).
    Deny,
}

/// `[[pools]]`: one limited resource, an upstream with its limits.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    /// The pool's name, used by routes, the admin API and metrics.
    pub name: Spanned<String>,
    /// Where requests go: `http://host:port`.
    pub upstream: UpstreamUrl,
    /// Requests at once (a static limit; `0` lets nothing start). Needed unless `adaptive`.
    #[serde(default, deserialize_with = "max_concurrency")]
    pub max_concurrency: Option<usize>,
    /// An adaptive limit instead of a static one.
    pub adaptive: Option<Adaptive>,
    /// Requests that may wait for a slot (default 1024; `0` turns away at once).
    #[serde(default = "default_max_queue", deserialize_with = "max_queue")]
    pub max_queue: usize,
    /// Longest wait in the queue (default `10s`).
    #[serde(default = "default_queue_timeout", deserialize_with = "queue_timeout")]
    pub queue_timeout: Dur,
    /// `fifo` (default) or `lifo` (keeps latency low under overload).
    #[serde(default)]
    pub queue_order: QueueOrder,
    /// Turn away at once a request that would time out in the queue anyway (default `true`).
    #[serde(default = "yes")]
    pub predictive: bool,
    /// Longest wait for the upstream's response head (default `60s`; then `504`), and for each
    /// next byte of its body (then the client's connection is cut).
    #[serde(
        default = "default_upstream_timeout",
        deserialize_with = "upstream_timeout"
    )]
    pub upstream_timeout: Dur,
    /// Longest a tunnel (WebSocket, a `101`) may pass no byte either way (default `60s`,
    /// as nginx's `proxy_read_timeout`); then both its sides are closed and its slot freed.
    #[serde(
        default = "default_tunnel_idle_timeout",
        deserialize_with = "tunnel_idle_timeout"
    )]
    pub tunnel_idle_timeout: Dur,
    /// A rate for the whole pool (GCRA), such as `50/s` (default: none).
    pub rate: Option<Rate>,
    /// Largest burst above the rate (default: the rate's count).
    #[serde(default, deserialize_with = "burst")]
    pub burst: Option<u32>,
    /// A rate per client (per key), kept in this gate unless its own `scope` says
    /// `global` (the pool's `scope` does not move it).
    pub per_key_rate: Option<PerKeyRate>,
    /// `local` (default) or `global`: the rate and the concurrency limit kept in the
    /// `[store]`, shared by every gate using it.
    #[serde(default)]
    pub scope: Scope,
    /// A global pool's rate: `strict` (default) or `hybrid`.
    pub mode: Option<RateMode>,
    /// The failure policy of the pool's limits kept in the store — a global pool's, a
    /// global `per_key_rate` (default: the store's).
    pub on_redis_failure: Option<OnFailure>,
}

/// `[pools.adaptive]`: an adaptive concurrency limit.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Adaptive {
    /// `littles` (default), `gradient2`, `vegas` or `aimd`.
    #[serde(default)]
    pub algorithm: Algorithm,
    /// Limit before any sample (default: the algorithm's).
    #[serde(default, deserialize_with = "adaptive_initial")]
    pub initial: Option<usize>,
    /// Floor (default: the algorithm's).
    #[serde(default, deserialize_with = "adaptive_min")]
    pub min: Option<usize>,
    /// Ceiling (default: the algorithm's).
    #[serde(default, deserialize_with = "adaptive_max")]
    pub max: Option<usize>,
}

/// The adaptive limit algorithms.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Little's law (sluicegate's own).
    #[default]
    Littles,
    /// Netflix's Gradient2.
    Gradient2,
    /// TCP Vegas applied to concurrency.
    Vegas,
    /// Additive increase, multiplicative decrease.
    Aimd,
}

/// Queue order within a pool.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum QueueOrder {
    /// First come, first served.
    #[default]
    Fifo,
    /// Last come, first served.
    Lifo,
}

/// `[pools.per_key_rate]`: a rate per client.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerKeyRate {
    /// The rate each key gets, such as `10/s`.
    pub rate: Rate,
    /// Largest burst per key (default: the rate's count).
    #[serde(default, deserialize_with = "burst")]
    pub burst: Option<u32>,
    /// `client_ip` (default; IPv6 grouped by /64) or `header:NAME`.
    #[serde(default = "default_key")]
    pub key: KeySource,
    /// Most keys remembered at once (default 100000); the least recent is evicted. With
    /// `scope = "global"`, the keys the `local` failure policy remembers.
    #[serde(default = "default_max_keys", deserialize_with = "max_keys")]
    pub max_keys: Spanned<usize>,
    /// `local` (default: each gate counts its own) or `global`: each key's rate kept in the
    /// `[store]`, shared by every gate using it.
    #[serde(default = "default_scope")]
    pub scope: Spanned<Scope>,
}

impl PerKeyRate {
    /// Whether the rate is kept in the store.
    pub fn is_global(&self) -> bool {
        *self.scope.get_ref() == Scope::Global
    }
}

/// `[[routes]]`: requests matching every given condition go to `pool`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The pool's name.
    pub pool: Spanned<String>,
    /// The `Host` (without port, any case) to match (default: any).
    pub host: Option<Spanned<String>>,
    /// The path prefix to match, in normal form (default `/`: any).
    #[serde(default = "default_prefix")]
    pub path_prefix: Spanned<String>,
    /// Methods to match, such as `["GET", "HEAD"]` (default: any).
    #[serde(default)]
    pub methods: Vec<Spanned<String>>,
}

/// The range of each whole-number setting. A file's values are checked where they are
/// read (below); the quick form's flags by the same bounds in `load::check`.
pub(super) mod bounds {
    use sluicegate::concurrency::ConcurrencyLimiter;

    use super::Bounds;

    /// A limit of the library's limiter (`initial`, `min` and `max` too).
    const PERMITS: u64 = ConcurrencyLimiter::MAX_PERMITS as u64;

    pub(in super::super) const WORKERS: Bounds = Bounds {
        key: "workers",
        min: 1,
        max: 1024,
        below: ", or leave it out for one per CPU",
        above: " (each is a thread with its own connections; one per CPU is what the gate is \
                built for: leave it out for that)",
    };
    pub(in super::super) const MAX_HEADER_BYTES: Bounds = Bounds {
        key: "max_header_bytes",
        min: 8192,
        max: 1 << 20,
        below: "",
        above: " (1 MiB; nginx allows 32 KiB by default): a bigger head is surely a mistake, \
                and the gate would hold it in memory",
    };
    /// Each client connection may hold this much while its request waits for a slot.
    pub(in super::super) const CLIENT_BODY_BUFFER_SIZE: Bounds = Bounds {
        key: "client_body_buffer_size",
        min: 0,
        max: 1 << 24,
        below: " (`0` reads no body ahead)",
        above: " (16 MiB): every client connection may hold that much in memory while its \
                request waits; a body past it is streamed, as one past any bound is",
    };
    /// Each answer may hold this much while its client takes it.
    pub(in super::super) const RESPONSE_BUFFER_SIZE: Bounds = Bounds {
        key: "response_buffer_size",
        min: 0,
        max: 1 << 24,
        below: " (`0` reads no answer ahead)",
        above: " (16 MiB): every answer a slow client takes may hold that much in memory; an \
                answer past it is streamed, as one past any bound is",
    };
    /// The largest request body; `0` is refused, as nginx reads it as no bound at all, which
    /// is written here by leaving the setting out.
    pub(in super::super) const CLIENT_MAX_BODY_SIZE: Bounds = Bounds {
        key: "client_max_body_size",
        min: 1,
        max: 1 << 40,
        below: " (for no bound, nginx's `0`, leave the setting out)",
        above: " (1 TiB): no upload through a proxy is that large, so it is surely a slipped \
                digit; for no bound, leave the setting out",
    };
    /// The gate-wide cap on read-ahead memory, both ways.
    pub(in super::super) const MAX_BUFFERED_BYTES: Bounds = Bounds {
        key: "max_buffered_bytes",
        min: 0,
        max: 1 << 40,
        below: " (`0` reads nothing ahead, either way)",
        above: " (1 TiB)",
    };
    pub(in super::super) const INSTANCES: Bounds = Bounds {
        key: "instances",
        min: 1,
        max: u32::MAX as u64,
        below: ": it counts the gates sharing the store",
        above: "",
    };
    pub(in super::super) const MAX_CONCURRENCY: Bounds = Bounds {
        key: "max_concurrency",
        min: 0,
        max: PERMITS,
        below: "",
        above: "",
    };
    /// Each waiting request holds a connection, an open file, and the gate asks for at
    /// most 2^20 of those (`server::raise_open_files_limit`).
    pub(in super::super) const MAX_QUEUE: Bounds = Bounds {
        key: "max_queue",
        min: 0,
        max: 1 << 20,
        below: "",
        above: ": each waiting request holds a client connection, and the gate asks for at \
                most that many open files",
    };
    pub(in super::super) const BURST: Bounds = Bounds {
        key: "burst",
        min: 1,
        max: u32::MAX as u64,
        below: " (for no traffic at all, write `rate = \"0/s\"`)",
        above: "",
    };
    pub(in super::super) const ADAPTIVE_INITIAL: Bounds = adaptive("initial");
    pub(in super::super) const ADAPTIVE_MIN: Bounds = adaptive("min");
    pub(in super::super) const ADAPTIVE_MAX: Bounds = adaptive("max");
    pub(in super::super) const ADMIN_MAX_CONNECTIONS: Bounds = Bounds {
        key: "max_connections",
        min: 1,
        max: 4096,
        below: " (with no admin connection the admin API could not be used: leave out \
                `[admin] listen` for none)",
        above: " (admin connections are an operator's and their tools'; the default is 64)",
    };
    pub(in super::super) const MAX_KEYS: Bounds = Bounds {
        key: "max_keys",
        min: 1,
        max: 10_000_000,
        below: "",
        above: " (each key remembered takes memory: the default is 100000)",
    };

    /// Every whole-number setting's bounds.
    pub(in super::super) const ALL: [Bounds; 15] = [
        WORKERS,
        ADMIN_MAX_CONNECTIONS,
        MAX_HEADER_BYTES,
        CLIENT_BODY_BUFFER_SIZE,
        CLIENT_MAX_BODY_SIZE,
        RESPONSE_BUFFER_SIZE,
        MAX_BUFFERED_BYTES,
        INSTANCES,
        MAX_CONCURRENCY,
        MAX_QUEUE,
        BURST,
        ADAPTIVE_INITIAL,
        ADAPTIVE_MIN,
        ADAPTIVE_MAX,
        MAX_KEYS,
    ];

    const fn adaptive(key: &'static str) -> Bounds {
        Bounds {
            key,
            min: 1,
            max: PERMITS,
            below: "",
            above: "",
        }
    }
}

/// Functions that read a whole-number setting within its [`bounds`]: `name: BOUNDS.read ->
/// Type`, with `, Some` for an optional one.
macro_rules! within_bounds {
    ($($name:ident: $bounds:ident.$read:ident -> $t:ty $(, $some:ident)?;)*) => {$(
        fn $name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
            bounds::$bounds.$read(d)$(.map($some))?
        }
    )*};
}

within_bounds! {
    workers: WORKERS.read -> Option<usize>, Some;
    max_header_bytes: MAX_HEADER_BYTES.read_bytes_spanned -> Spanned<usize>;
    client_body_buffer_size: CLIENT_BODY_BUFFER_SIZE.read_bytes -> usize;
    response_buffer_size: RESPONSE_BUFFER_SIZE.read_bytes -> usize;
    max_buffered_bytes: MAX_BUFFERED_BYTES.read_bytes -> usize;
    client_max_body_size: CLIENT_MAX_BODY_SIZE.read_bytes -> Option<u64>, Some;
    instances: INSTANCES.read_spanned -> Option<Spanned<u32>>, Some;
    max_concurrency: MAX_CONCURRENCY.read -> Option<usize>, Some;
    max_queue: MAX_QUEUE.read -> usize;
    burst: BURST.read -> Option<u32>, Some;
    adaptive_initial: ADAPTIVE_INITIAL.read -> Option<usize>, Some;
    adaptive_min: ADAPTIVE_MIN.read -> Option<usize>, Some;
    adaptive_max: ADAPTIVE_MAX.read -> Option<usize>, Some;
    max_keys: MAX_KEYS.read_spanned -> Spanned<usize>;
    admin_max_connections: ADMIN_MAX_CONNECTIONS.read -> usize;
}

/// Reads `[[KEY]]` tables, each one an element; a single `[KEY]` table (one pair of
/// brackets, the commonest slip) is refused with what to write instead of serde's "invalid
/// type: map, expected a sequence".
fn tables<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    d: D,
    key: &'static str,
) -> Result<Vec<T>, D::Error> {
    struct Tables<T>(&'static str, std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Tables<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "`[[{}]]` tables", self.0)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Vec<T>, A::Error> {
            Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> Result<Vec<T>, A::Error> {
            Err(serde::de::Error::custom(format!(
                "`[{0}]` is one table, but `{0}` is a list of them: write `[[{0}]]` (two \
                 brackets) above each one",
                self.0
            )))
        }
    }
    d.deserialize_any(Tables(key, std::marker::PhantomData))
}

fn pools<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Pool>, D::Error> {
    tables(d, "pools")
}

fn routes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Route>, D::Error> {
    tables(d, "routes")
}

// Rules on one value, checked where it is read so that a refusal points at it.

fn listen<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ListenAddr>, D::Error> {
    /// One address (`listen = "127.0.0.1:8080"`, as `[admin] listen` and `--listen` take
    /// it), or a list of them.
    struct Addrs;
    impl<'de> serde::de::Visitor<'de> for Addrs {
        type Value = Vec<ListenAddr>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an address like \"127.0.0.1:8080\", or a list of them")
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
            s.parse().map(|a| vec![a]).map_err(E::custom)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
        }
    }
    let addrs = d.deserialize_any(Addrs)?;
    if addrs.is_empty() {
        return Err(serde::de::Error::custom(
            "`listen` is empty: give at least one address, like `listen = [\"127.0.0.1:8080\"]`",
        ));
    }
    for (i, a) in addrs.iter().enumerate() {
        if let Some(b) = addrs[i + 1..].iter().find(|b| a.clashes_with(b.0)) {
            let why = if a == b {
                format!("`listen` has `{}` twice", a.0)
            } else {
                format!("`{}` and `{}` in `listen` take the same port", a.0, b.0)
            };
            return Err(serde::de::Error::custom(format!(
                "{why}: the second could not be bound (address in use); keep one"
            )));
        }
    }
    Ok(addrs)
}

/// Functions that read a duration and refuse `0` with the message given.
macro_rules! longer_than_zero {
    ($($name:ident: $message:literal),* $(,)?) => {$(
        fn $name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
            let dur = Dur::deserialize(d)?;
            if dur.0.is_zero() {
                return Err(serde::de::Error::custom($message));
            }
            Ok(dur)
        }
    )*};
}

longer_than_zero!(
    header_read_timeout: "`header_read_timeout` must be longer than 0, like `10s`",
    client_body_timeout: "`client_body_timeout` must be longer than 0, like `60s`",
    send_timeout: "`send_timeout` must be longer than 0, like `60s`",
    queue_timeout: "`queue_timeout` must be longer than 0 (for no waiting at all, write `max_queue = 0`)",
    upstream_timeout: "`upstream_timeout` must be longer than 0, like `60s`",
    tunnel_idle_timeout: "`tunnel_idle_timeout` must be longer than 0, like `60s` (a tunnel that passes no byte for that long is closed)",
    budget: "`[store] budget` must be longer than 0, like `20ms`",
);

fn default_listen() -> Vec<ListenAddr> {
    vec![ListenAddr(SocketAddr::from(([127, 0, 0, 1], 8080)))]
}
fn default_grace() -> Dur {
    Dur(std::time::Duration::from_secs(30))
}
fn default_header_bytes() -> Spanned<usize> {
    Spanned::new(0..0, 16384)
}
fn default_header_timeout() -> Dur {
    Dur(std::time::Duration::from_secs(10))
}
fn default_body_timeout() -> Dur {
    Dur(std::time::Duration::from_secs(60))
}
/// 64 KiB: the JSON and form bodies of an API fit (nginx's 8–16 KiB sends more of them to a
/// file), and the memory stays in proportion: a body the gate did not read would sit in
/// the connection's kernel receive buffer instead (Linux gives each 128 KiB to start with),
/// and 10 000 connections all holding a full one at once are 640 MiB.
fn default_body_buffer() -> usize {
    64 * 1024
}
fn default_answer_buffer() -> usize {
    256 * 1024
}
fn default_max_buffered() -> usize {
    256 << 20
}
fn default_send_timeout() -> Dur {
    Dur(std::time::Duration::from_secs(60))
}
fn default_max_queue() -> usize {
    sluicegate::concurrency::ConcurrencyLimiter::DEFAULT_MAX_QUEUE
}
fn default_queue_timeout() -> Dur {
    Dur(std::time::Duration::from_secs(10))
}
fn default_upstream_timeout() -> Dur {
    Dur(std::time::Duration::from_secs(60))
}
/// nginx's `proxy_read_timeout`: WebSocket applications behind nginx already send a ping
/// within it (socket.io every 25 s, SignalR 15 s, Phoenix 30 s), and the gate counts bytes
/// both ways, so it cuts no tunnel nginx would keep; a vanished peer then holds its slot a
/// minute, not until TCP gives up.
fn default_tunnel_idle_timeout() -> Dur {
    Dur(std::time::Duration::from_secs(60))
}
fn yes() -> bool {
    true
}
fn default_key() -> KeySource {
    KeySource::ClientIp
}
fn default_admin_connections() -> usize {
    Admin::MAX_CONNECTIONS
}
fn default_scope() -> Spanned<Scope> {
    Spanned::new(0..0, Scope::Local)
}
fn default_max_keys() -> Spanned<usize> {
    Spanned::new(0..0, 100_000)
}
fn default_budget() -> Dur {
    Dur(std::time::Duration::from_millis(20))
}
fn default_prefix_key() -> Spanned<String> {
    Spanned::new(0..0, "sluicegate".to_owned())
}
fn default_prefix() -> Spanned<String> {
    Spanned::new(0..0, "/".to_owned())
}
