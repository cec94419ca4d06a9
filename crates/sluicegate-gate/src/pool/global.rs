//! Global pools: the `[store]` (one Redis connection per gate) and a pool's limits kept in
//! it, shared by every gate using the same store — `sluicegate-redis`'s limiters.

use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use http::Request;
use sluicegate::concurrency::ConcurrencyLimiter;
use sluicegate::http::RatePolicy;
use sluicegate::middleware::rate::group_ip;
use sluicegate::rate::{Decision, Quota};
use sluicegate_redis::{
    FailurePolicy, GlobalConcurrency, GlobalGcra, GlobalKeyedGcra, HealthSnapshot, HybridGcra,
    RedisStore, Source,
};

use crate::config::{self, KeySource, OnFailure, PerKeyRate, RateMode};
use crate::server::AbortOnDrop;

/// How often the gate pings the store, so that its health (`/status`, `/metrics`) follows
/// Redis also while no request asks it.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// The gate's connection to the `[store]`, shared by every global pool.
#[derive(Clone, Debug)]
pub struct Store {
    /// The settings it was made from.
    pub config: config::Store,
    redis: RedisStore,
    /// What its TLS files (`tls_ca_file`, `tls_cert_file`, `tls_key_file`) held when it
    /// connected: a reload reads them again, and files renewed in place make a new store.
    tls: TlsFiles,
    /// The background probe (a ping every [`PROBE_EVERY`]), stopped with the last clone of
    /// the store.
    _probe: Arc<AbortOnDrop>,
}

impl Store {
    /// Connects to the store `cfg` names, waiting up to a second for Redis. A Redis that
    /// does not answer leaves the store in its down state: global pools follow their failure
    /// policy until it answers ([`is_up`](Self::is_up) tells).
    ///
    /// From then on, a task on the current runtime sends Redis a `PING` every second,
    /// within the store's budget, until the store is dropped: an answer marks Redis up
    /// (unless it is down for refusing a decision's call, see `RedisStore::ping`), a failure
    /// down, as a decision's call would, so the health follows Redis while the gate is idle
    /// too (one small round trip a second; no decision is counted as a fallback).
    ///
    /// # Errors
    ///
    /// A URL or prefix the Redis client refuses, as text.
    pub async fn connect(cfg: &config::Store) -> Result<Store, String> {
        let tls = TlsFiles::read(cfg).await?;
        Store::connect_with(cfg, tls).await
    }

    /// [`connect`](Self::connect) with the TLS files already read.
    async fn connect_with(cfg: &config::Store, tls: TlsFiles) -> Result<Store, String> {
        let url = cfg.redis.get_ref();
        let mut builder = RedisStore::builder(url)
            .budget(cfg.budget.0)
            .prefix(cfg.prefix.get_ref());
        if let Some(ca) = &tls.ca {
            builder = builder.tls_ca(ca.clone());
        }
        if let Some((cert, key)) = &tls.client {
            builder = builder.tls_client_cert(cert.clone(), key.clone());
        }
        let redis = builder
            .connect()
            .await
            .map_err(|e| format!("[store] redis = \"{}\": {e}", cfg.redis_shown()))?;
        let probe = {
            let redis = redis.clone();
            let budget = cfg.budget.0;
            tokio::spawn(async move {
                let mut every = tokio::time::interval(PROBE_EVERY);
                every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                // The first tick is at once, and `connect` has just asked.
                every.tick().await;
                loop {
                    every.tick().await;
                    // What it says shows in the health; the log says it once per outage.
                    let _ = redis.ping(budget).await;
                }
            })
        };
        Ok(Store {
            config: cfg.clone(),
            redis,
            tls,
            _probe: Arc::new(AbortOnDrop(probe)),
        })
    }

    /// [`connect`](Self::connect), then, when Redis did not answer, one more `PING` (up to a
    /// second) to learn why: `Some(why)` when Redis is down, what `serve`, `check` and a
    /// reload tell the user.
    ///
    /// # Errors
    ///
    /// What `connect` refuses, and a Redis that refuses the credentials in the URL (a wrong
    /// password, or none where Redis asks for one): a config error, saying what Redis said.
    pub async fn connect_checked(cfg: &config::Store) -> Result<(Store, Option<String>), String> {
        let tls = TlsFiles::read(cfg).await?;
        Store::connect_checked_with(cfg, tls).await
    }

    /// [`connect_checked`](Self::connect_checked) with the TLS files already read.
    pub async fn connect_checked_with(
        cfg: &config::Store,
        tls: TlsFiles,
    ) -> Result<(Store, Option<String>), String> {
        let store = Store::connect_with(cfg, tls).await?;
        if store.is_up() {
            let replica = replica_of(store.redis.client()).await;
            return Ok((store, replica));
        }
        match store.redis.ping(Duration::from_secs(1)).await {
            Ok(()) => {
                let replica = replica_of(store.redis.client()).await;
                Ok((store, replica))
            }
            // tls115: a certificate the gate cannot trust stays so until the config (or the
            // certificate) changes, as a refused password does; trial117: so does a client
            // certificate Redis asks for or refuses, and a key that is not the certificate's.
            // The store's words say what to do (with `tls_ca_file`, that only its CAs are
            // trusted); the file is named here.
            Err(e) if RedisStore::is_refused_tls(&e) => Err(format!(
                "[store] redis = \"{}\"{}: {}",
                cfg.redis_shown(),
                cfg.tls_ca_file
                    .as_ref()
                    .map_or_else(String::new, |f| format!(
                        " with tls_ca_file = \"{}\"",
                        f.get_ref().display()
                    )),
                store.redis.describe(&e)
            )),
            Err(e) if refused_credentials(&e) => Err(format!(
                "[store] redis = \"{}\": redis refused the credentials ({e}): write the user and password redis expects in the URL (`redis://USER:PASSWORD@HOST:PORT`)",
                cfg.redis_shown()
            )),
            Err(e) if refused_database(&e) => Err(format!(
                "[store] redis = \"{}\": redis has no database {} ({e}): write a database number below its `databases` setting (16 by default: 0 to 15), or none for 0",
                cfg.redis_shown(),
                database(cfg.redis.get_ref()),
            )),
            // redis111: an HTTP server on the port said "does not answer (Incompatible type -
            // Parse error at 1 / Unexpected `84` …)", over four lines.
            Err(e) if e.kind() == redis::ErrorKind::Parse => Ok((
                store,
                Some(format!(
                    "what answers there is not redis: {}",
                    one_line(&e.to_string())
                )),
            )),
            Err(e) => {
                let why = store.redis.describe(&e);
                Ok((store, Some(why)))
            }
        }
    }

    /// Whether this store serves `cfg` with the TLS files `tls` as they are now: the same
    /// settings, and the same bytes in its files (trial117: a CA or client certificate
    /// renewed in place, then a reload, kept the old one in force, and the gate could no
    /// longer reconnect once Redis presented its new certificate).
    pub fn serves(&self, cfg: &config::Store, tls: &TlsFiles) -> bool {
        self.config == *cfg && self.tls == *tls
    }

    /// Whether `other` is this store (a clone of it), not another connection.
    pub fn is(&self, other: &Store) -> bool {
        Arc::ptr_eq(&self._probe, &other._probe)
    }

    /// Whether Redis answered the last call.
    pub fn is_up(&self) -> bool {
        self.redis.health().up
    }

    /// Up or down, outages, recoveries and decisions made by a failure policy.
    pub fn health(&self) -> HealthSnapshot {
        self.redis.health()
    }

    fn policy(&self, pool: &config::Pool) -> FailurePolicy {
        match pool
            .on_redis_failure
            .unwrap_or(self.config.on_redis_failure)
        {
            OnFailure::Local => FailurePolicy::Local,
            OnFailure::Allow => FailurePolicy::Allow,
            OnFailure::Deny => FailurePolicy::Deny,
        }
    }

    fn instances(&self) -> u32 {
        self.config.instances()
    }
}

/// The PEM files a `[store]`'s TLS settings name, as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// `tls_ca_file`.
    ca: Option<Vec<u8>>,
    /// `tls_cert_file` and `tls_key_file`.
    client: Option<(Vec<u8>, Vec<u8>)>,
}

impl TlsFiles {
    /// Reads the files `cfg` names (none without TLS settings).
    ///
    /// # Errors
    ///
    /// A file that cannot be read, or is over 1 MiB, as text naming the setting.
    pub async fn read(cfg: &config::Store) -> Result<TlsFiles, String> {
        let ca = match &cfg.tls_ca_file {
            Some(ca) => Some(read_pem("tls_ca_file", ca.get_ref()).await?),
            None => None,
        };
        let client = match (&cfg.tls_cert_file, &cfg.tls_key_file) {
            (Some(cert), Some(key)) => Some((
                read_pem("tls_cert_file", cert.get_ref()).await?,
                read_pem("tls_key_file", key.get_ref()).await?,
            )),
            _ => None,
        };
        Ok(TlsFiles { ca, client })
    }
}

/// The PEM file `path` of the `[store]` setting `key`, read for the store's TLS.
async fn read_pem(key: &str, path: &std::path::Path) -> Result<Vec<u8>, String> {
    // A certificate chain is a few KiB; a bound keeps a wrong path (a device) harmless.
    const BOUND: u64 = 1 << 20;
    let file = tokio::fs::File::open(path).await.map_err(|e| {
        format!(
            "[store] {key} = \"{}\": cannot read it: {e}",
            path.display()
        )
    })?;
    let mut pem = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(
        &mut tokio::io::AsyncReadExt::take(file, BOUND + 1),
        &mut pem,
    )
    .await
    .map_err(|e| {
        format!(
            "[store] {key} = \"{}\": cannot read it: {e}",
            path.display()
        )
    })?;
    if pem.len() as u64 > BOUND {
        return Err(format!(
            "[store] {key} = \"{}\": it is over 1 MiB, not a PEM certificate or key",
            path.display()
        ));
    }
    Ok(pem)
}

/// `text` on one line: redis-rs's parse errors list what they met line by line.
fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Whether Redis refused the URL's database number (`SELECT` out of range). redis-rs gives
/// this refusal no kind or code of its own, only its description.
fn refused_database(e: &redis::RedisError) -> bool {
    e.to_string().contains("refused to switch database")
}

/// The database number of a `redis://HOST:PORT/DB` URL, as written (for the message).
fn database(url: &str) -> &str {
    let path = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = path.split_once('/').map_or("", |(_, db)| db);
    path.split(['?', '#']).next().unwrap_or_default()
}

/// Whether Redis turned the connection away for its credentials.
fn refused_credentials(e: &redis::RedisError) -> bool {
    e.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH" | "WRONGPASS" | "NOPERM"))
}

/// Why a Redis that answers cannot decide: it is a read-only replica (`ROLE` says `slave`),
/// which answers `PING` but refuses every decision (they write: `READONLY`), so that each
/// decision marks it down and the next second's `PING` up again, for as long as the gate
/// runs. Asked once, on a connection of its own, within a second; a Redis that does not say
/// (an old one, or an ACL without `ROLE`) is taken for a primary.
async fn replica_of(client: &redis::Client) -> Option<String> {
    let ask = async {
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("ROLE")
            .query_async::<redis::Value>(&mut conn)
            .await
            .ok()
    };
    let redis::Value::Array(role) = tokio::time::timeout(Duration::from_secs(1), ask)
        .await
        .ok()??
    else {
        return None;
    };
    let text = |v: Option<&redis::Value>| match v {
        Some(redis::Value::BulkString(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        Some(redis::Value::SimpleString(s)) => Some(s.clone()),
        _ => None,
    };
    if text(role.first())?.as_str() != "slave" {
        return None;
    }
    let primary = match (text(role.get(1)), role.get(2)) {
        (Some(host), Some(redis::Value::Int(port))) => format!(" of {host}:{port}"),
        _ => String::new(),
    };
    Some(format!(
        "it is a read-only replica{primary}: it answers, but refuses every decision (they write to it: READONLY), so global pools would decide by their failure policy; point `redis` at the primary"
    ))
}

/// A pool's rate kept in the store.
#[derive(Debug)]
// Built once per change and held in an `Arc`: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum GlobalRate {
    /// One Redis call per request.
    Strict(GlobalGcra),
    /// Leased batches spent locally.
    Hybrid(HybridGcra),
}

impl GlobalRate {
    /// The rate `pool` asks for, in `store`, named after the pool.
    ///
    /// # Errors
    ///
    /// A quota the Redis scripts cannot hold, as text.
    pub fn build(store: &Store, pool: &config::Pool, quota: Quota) -> Result<GlobalRate, String> {
        let name = pool.name.get_ref();
        let builder = GlobalGcra::builder(&store.redis, name, quota)
            .on_failure(store.policy(pool))
            .instances(store.instances());
        let built = match pool.mode.unwrap_or_default() {
            RateMode::Strict => builder.build().map(GlobalRate::Strict),
            RateMode::Hybrid => builder.build_hybrid().map(GlobalRate::Hybrid),
        };
        built.map_err(|e| format!("pool `{name}`: global rate: {e}"))
    }

    /// Decides on one request: the decision, and whether the failure policy `deny` made it
    /// (Redis did not answer in time), not the rate.
    ///
    /// # Cancel safety
    ///
    /// As the library's: dropping it loses no token a later call could use.
    pub async fn check(&self) -> (Decision, bool) {
        let verdict = match self {
            GlobalRate::Strict(g) => g.decide(1).await,
            GlobalRate::Hybrid(h) => h.decide(1).await,
        };
        match verdict {
            Ok(v) => (
                v.decision,
                v.source == Source::Fallback(FailurePolicy::Deny),
            ),
            // Only a request of more than the burst is refused so: one never is. Answered
            // as the library's `check` answers it.
            Err(_) => match self {
                GlobalRate::Strict(g) => (g.check().await, false),
                GlobalRate::Hybrid(h) => (h.check().await, false),
            },
        }
    }

    /// `strict` or `hybrid`, and for hybrid mode the decisions made and Redis calls sent so
    /// far (the batching's gain).
    pub fn mode(&self) -> (&'static str, Option<(u64, u64)>) {
        match self {
            GlobalRate::Strict(_) => ("strict", None),
            GlobalRate::Hybrid(h) => {
                let s = h.stats();
                ("hybrid", Some((s.decisions, s.redis_calls)))
            }
        }
    }

    /// The quota, for `RateLimit-Policy`.
    pub fn policy(&self) -> RatePolicy {
        let q = match self {
            GlobalRate::Strict(g) => g.quota(),
            GlobalRate::Hybrid(h) => h.quota(),
        };
        RatePolicy::new(u64::from(q.count()), q.period())
    }
}

/// A per-client rate kept in the store (`[pools.per_key_rate] scope = "global"`): each
/// client's GCRA state in Redis, under the pool's name, shared by every gate that has the
/// pool — `sluicegate-redis`'s [`GlobalKeyedGcra`]. Its failure policy is the pool's, and
/// its `local` fallback gives each client `1 / instances` of its rate in this gate (at most
/// `max_keys` clients remembered), as the pool-wide global rate does.
#[derive(Debug)]
pub struct GlobalPerKey {
    limit: GlobalKeyedGcra,
    key: KeySource,
    /// The store it is kept in: a reload keeps it only on the same connection.
    store: Store,
    /// The settings it was built from.
    config: PerKeyRate,
    policy: FailurePolicy,
}

impl GlobalPerKey {
    /// The per-client rate `k` of `pool`, in `store`, named after the pool.
    ///
    /// # Errors
    ///
    /// A quota the Redis scripts cannot hold, as text.
    pub fn build(store: &Store, pool: &config::Pool, k: &PerKeyRate) -> Result<Self, String> {
        let name = pool.name.get_ref();
        let max_keys = NonZeroUsize::new(*k.max_keys.get_ref()).unwrap_or(NonZeroUsize::MIN);
        let policy = store.policy(pool);
        let limit = GlobalGcra::builder(&store.redis, name, k.rate.quota(k.burst))
            .on_failure(policy)
            .instances(store.instances())
            .build_keyed(max_keys)
            .map_err(|e| format!("pool `{name}`: global per_key_rate: {e}"))?;
        Ok(GlobalPerKey {
            limit,
            key: k.key.clone(),
            store: store.clone(),
            config: k.clone(),
            policy,
        })
    }

    /// `old`, when it serves `k` of `pool` on `store` as they are now; else a new one.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build).
    pub fn keep_or_build(
        old: Option<&Arc<GlobalPerKey>>,
        store: &Store,
        pool: &config::Pool,
        k: &PerKeyRate,
    ) -> Result<Arc<Self>, String> {
        match old {
            Some(o) if o.store.is(store) && o.config == *k && o.policy == store.policy(pool) => {
                Ok(o.clone())
            }
            _ => GlobalPerKey::build(store, pool, k).map(Arc::new),
        }
    }

    /// Decides on a request of the client `key` ([`key_of`](Self::key_of)): the decision,
    /// and whether the failure policy `deny` made it (Redis did not answer in time), not the
    /// rate.
    ///
    /// # Cancel safety
    ///
    /// As the library's: dropping it may or may not have counted the request, never twice.
    pub async fn check(&self, key: &[u8]) -> (Decision, bool) {
        match self.limit.decide(key, 1).await {
            Ok(v) => (
                v.decision,
                v.source == Source::Fallback(FailurePolicy::Deny),
            ),
            // Only a request of more than the burst is refused so: one never is.
            Err(_) => (self.limit.check(key).await, false),
        }
    }

    /// The bytes the client is counted by, the same in every gate: its address (IPv6 by
    /// /64) after a tag of its family, or `h`, the header's name, a NUL (no name holds one)
    /// and its value — one line of it, as the local rate reads it (no line or several: the
    /// empty value). The whole value, not the library's `HeaderKey`, which keeps a long
    /// value as a digest under a secret of this process: each gate would count it apart.
    /// The store keeps the SHA-1 of these bytes only, whatever their length.
    pub fn key_of<B>(&self, req: &Request<B>, client: IpAddr) -> Vec<u8> {
        match &self.key {
            KeySource::ClientIp => match group_ip(client) {
                IpAddr::V4(v4) => [&[4u8][..], &v4.octets()].concat(),
                IpAddr::V6(v6) => [&[6u8][..], &v6.octets()].concat(),
            },
            KeySource::Header(name) => {
                let mut lines = req.headers().get_all(name).iter();
                let value = match (lines.next(), lines.next()) {
                    (Some(v), None) => v.as_bytes(),
                    _ => &[],
                };
                [&b"h"[..], name.as_str().as_bytes(), &[0], value].concat()
            }
        }
    }

    /// The per-client quota, for `RateLimit-Policy`.
    pub fn policy(&self) -> RatePolicy {
        let q = self.limit.quota();
        RatePolicy::new(u64::from(q.count()), q.period())
    }

    /// The clients its `local` fallback remembers in this gate now.
    pub fn fallback_keys(&self) -> usize {
        self.limit.fallback_keys()
    }
}

/// A global concurrency limit and the local limiter in front of it.
///
/// The local limiter (`shell`, `max_concurrency` slots, the pool's queue settings) is what
/// the admin API, the metrics and shutdown see: it counts this gate's requests that hold a
/// global permit, it is what `close` closes, and bypasses go through it. The global permit
/// comes first (in the store's FIFO queue, which has the pool's `max_queue` and
/// `queue_timeout`); with one in hand a slot is always free, since this gate cannot hold more
/// than `max_concurrency` of them — except after a fallback to `allow`, when the shell keeps
/// this gate's own count under the limit.
#[derive(Clone, Debug)]
pub struct Global {
    /// The local limiter in front.
    pub shell: ConcurrencyLimiter,
    /// The limit in the store.
    pub global: GlobalConcurrency,
}

impl Global {
    /// The limit `pool` asks for: a new global limit on `store` named after the pool, behind
    /// `shell` (a new one when `None`).
    ///
    /// # Errors
    ///
    /// A limiter that cannot be built, as text.
    pub fn build(
        store: &Store,
        pool: &config::Pool,
        shell: Option<ConcurrencyLimiter>,
    ) -> Result<Global, String> {
        let name = pool.name.get_ref();
        let max = pool.max_concurrency.unwrap_or(0);
        let shell = match shell {
            Some(s) => s,
            None => ConcurrencyLimiter::builder(max)
                .max_queue(pool.max_queue)
                .queue_timeout(pool.queue_timeout.0)
                .predictive(false)
                .build()
                .map_err(|e| format!("pool `{name}`: {e}"))?,
        };
        let global =
            GlobalConcurrency::builder(&store.redis, name, u32::try_from(max).unwrap_or(u32::MAX))
                .max_queue(pool.max_queue)
                .queue_timeout(pool.queue_timeout.0)
                // Renewed every third of it; a crashed gate's slots come back after this.
                .ttl(Duration::from_secs(10))
                .on_failure(store.policy(pool))
                .instances(store.instances())
                .build()
                .map_err(|e| format!("pool `{name}`: global concurrency: {e}"))?;
        Ok(Global { shell, global })
    }
}
