//! The connection to Redis every global limit of an instance shares, with its health state.

mod health;
mod keys;
mod probe;
mod pubsub;
mod tls;

pub use health::HealthSnapshot;
pub(crate) use keys::{Digest, PerClient, digest, key};
pub(crate) use pubsub::Subscription;

use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{FromRedisValue, ScriptInvocation};

use crate::Error;
use health::Health;

/// How long [`StoreBuilder::connect`] waits for the first connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// One instance's connection to Redis, shared by all its global limits (cheap to clone).
///
/// It is a redis-rs [`ConnectionManager`]: one multiplexed connection that pipelines the
/// calls of every task and reconnects by itself. While a
/// [`GlobalConcurrency`](crate::GlobalConcurrency) built on the store lives, the store holds
/// one more connection, for pub/sub: every concurrency limit's release channel is subscribed
/// on it, and it is closed when the last of them is dropped. So a store opens at most two
/// connections, however many limits are built on it. On top of it the store keeps a health
/// state: a call that fails (no connection, the connection closed, an error reply) marks
/// Redis down at once (one that finds its connection closed, as Redis closes idle ones after
/// its `timeout`, is first made once more within the budget, on a new connection); a call that takes longer than the [budget](StoreBuilder::budget)
/// falls back for its own decision, and marks Redis down only when a call sent after it is
/// late too (two rounds in a row: a lone hiccup on a busy host is no outage). While Redis is
/// down decisions fall back at once (no waiting) and one call at a time probes Redis again,
/// with exponential backoff, until it answers.
///
/// # Examples
///
/// ```no_run
/// use sluicegate_redis::{FailurePolicy, GlobalGcra, RedisStore};
/// use sluicegate::rate::Quota;
///
/// # async fn demo() -> Result<(), sluicegate_redis::Error> {
/// let store = RedisStore::connect("redis://127.0.0.1:6379/").await?;
/// let payments = GlobalGcra::builder(&store, "payments", Quota::per_second(1000).expect("1000/s is a valid quota"))
///     .on_failure(FailurePolicy::Local)
///     .instances(3)
///     .build()?;
/// if payments.check().await.is_allowed() {
///     // call the payment provider
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Replaced when calls on it go unanswered while Redis is down ([`RedisStore::timed`]).
    conn: RwLock<ConnectionManager>,
    client: redis::Client,
    /// The longest probe backoff, also the manager's longest reconnect delay.
    max_backoff: Duration,
    health: Health,
    budget: Duration,
    prefix: String,
    /// How long the pub/sub connection may stay silent before it is asked for a PING, and
    /// how long that PING may go unanswered before the connection is taken for dead.
    keepalive: Duration,
    /// The channels of this store's concurrency limits, on one pub/sub connection.
    pubsub: Arc<pubsub::Hub>,
    /// What its connections trust (plain, the system's CAs, the CAs given): what a failure
    /// says to do.
    trust: tls::Trust,
}

/// Settings for a [`RedisStore`].
#[derive(Clone, Debug)]
pub struct StoreBuilder {
    url: String,
    budget: Duration,
    prefix: String,
    min_backoff: Duration,
    max_backoff: Duration,
    keepalive: Duration,
    tls: tls::Settings,
}

impl RedisStore {
    /// The default time a decision may wait on Redis before it falls back: 20 ms.
    pub const DEFAULT_BUDGET: Duration = Duration::from_millis(20);

    /// The default [keepalive](StoreBuilder::keepalive) of the pub/sub connection: 5 s.
    pub const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(5);

    /// A store on `url` with the default settings.
    ///
    /// Waits up to a second for the first connection; an instance starts even while Redis
    /// is down (its limits then fall back until Redis answers).
    ///
    /// # Errors
    ///
    /// [`Error::Connection`] when the URL is malformed.
    pub async fn connect(url: &str) -> Result<Self, Error> {
        Self::builder(url).connect().await
    }

    /// Settings for a store on `url`.
    pub fn builder(url: &str) -> StoreBuilder {
        StoreBuilder {
            url: url.to_owned(),
            budget: Self::DEFAULT_BUDGET,
            prefix: "sluicegate".to_owned(),
            min_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            keepalive: Self::DEFAULT_KEEPALIVE,
            tls: tls::Settings::default(),
        }
    }

    /// Whether Redis answered the last call, how often it was lost and found again, and how
    /// many decisions fell back.
    pub fn health(&self) -> HealthSnapshot {
        self.inner.health.snapshot()
    }

    /// How long a decision waits on Redis at most.
    pub fn budget(&self) -> Duration {
        self.inner.budget
    }

    pub(crate) fn keepalive(&self) -> Duration {
        self.inner.keepalive
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    pub(crate) fn connection(&self) -> ConnectionManager {
        self.inner
            .conn
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Puts a new connection (made at its first call) in place of the store's: calls on the
    /// old one went unanswered while Redis is down. The old one closes when the calls still
    /// on it end.
    fn replace_connection(&self) {
        let config = manager_config(self.inner.budget, self.inner.max_backoff);
        match ConnectionManager::new_lazy_with_config(self.inner.client.clone(), config) {
            Ok(fresh) => {
                *self
                    .inner
                    .conn
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) = fresh;
            }
            Err(e) => tracing::debug!(error = %e, "no new connection to redis"),
        }
    }

    /// The redis-rs client the store connects with (its URL, and its TLS settings with a
    /// `rediss://` URL): for a connection of your own to the same Redis, such as the pub/sub
    /// one of the concurrency limits.
    pub fn client(&self) -> &redis::Client {
        &self.inner.client
    }

    /// `e`, an error of a call to this store's Redis, on one line, followed by what to do
    /// when it says little by itself: a TLS certificate this machine does not trust or made
    /// out for another name, TLS spoken to a plain port or plain Redis to a TLS one. The
    /// store's own log lines say it so.
    pub fn describe(&self, e: &redis::RedisError) -> String {
        tls::describe(e, self.inner.trust)
    }

    /// Whether `e` is a TLS failure that stays until the settings or the certificates
    /// change — a certificate redis presented that is not trusted, a client certificate
    /// redis asks for and did not get or refuses, a client key that is not its certificate's
    /// — rather than a Redis that does not answer (yet): what a program may refuse at start.
    pub fn is_refused_tls(e: &redis::RedisError) -> bool {
        tls::is_refused_tls(e)
    }

    /// Completes when Redis is next marked down; [`enable`](tokio::sync::futures::Notified::enable)
    /// it before a call whose answer it must not miss.
    pub(crate) fn went_down(&self) -> tokio::sync::futures::Notified<'_> {
        self.inner.health.went_down()
    }

    /// Completes when Redis is next marked up; [`enable`](tokio::sync::futures::Notified::enable)
    /// it before looking at [`recoveries`](Self::recoveries), so that a recovery between the
    /// look and the wait is not lost.
    pub(crate) fn came_up(&self) -> tokio::sync::futures::Notified<'_> {
        self.inner.health.came_up()
    }

    /// Times Redis came back (down → up) so far: read before a call, it tells a caller that
    /// fell back whether Redis has been marked up since.
    pub(crate) fn recoveries(&self) -> u64 {
        self.inner.health.recoveries()
    }

    /// Runs one script call within the budget, or not at all while Redis is down and no probe
    /// is due. `None` means: decide by the failure policy (counted as a fallback).
    pub(crate) async fn call<T: FromRedisValue>(&self, script: &ScriptInvocation<'_>) -> Option<T> {
        let answer = self.attempt(script).await;
        if answer.is_err() {
            self.inner.health.fell_back();
        }
        answer.ok()
    }

    /// Runs one script call as [`call`](Self::call) does, saying whether a call that got no
    /// answer was sent (it may still run in Redis) or skipped; counts no fallback.
    pub(crate) async fn attempt<T: FromRedisValue>(
        &self,
        script: &ScriptInvocation<'_>,
    ) -> Result<T, Missed> {
        if !self.inner.health.may_call() {
            return Err(Missed::Skipped);
        }
        let call = || async { script.invoke_async(&mut self.connection()).await };
        self.timed(self.inner.budget, call, Health::succeeded)
            .await
            .map_err(|_| Missed::Sent)
    }

    /// Runs `call`, waiting at most `within` for its answer, and tells the health what came
    /// of it: an answer calls `answered` (a limit's call marks Redis up, a `PING`
    /// [not always](Health::pinged)); no answer in time (or the client's own response
    /// timeout) is a late answer, which marks Redis down only as the second round in a row
    /// (`health.rs` has the rule); any other error marks it down at once. No answer in time
    /// is an I/O error of kind [`TimedOut`](std::io::ErrorKind::TimedOut).
    ///
    /// A call that finds its connection dropped is made once more, within `within`: Redis
    /// closed it while the store was idle (its `timeout` setting), or a proxy did, and the
    /// manager reconnects as the call fails. (Redis restarted or gone: the second try fails
    /// too.) The scripts may be run twice so: a lease or a release of the same id is the
    /// same, and a rate counts a request twice at worst (stricter, never looser).
    async fn timed<T, F, Fut>(
        &self,
        within: Duration,
        call: F,
        answered: fn(&Health),
    ) -> redis::RedisResult<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        let health = &self.inner.health;
        let sent = health.now();
        let deadline = tokio::time::Instant::now() + within;
        let late = || {
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {within:?}"),
            )
            .into())
        };
        let answer = match tokio::time::timeout_at(deadline, call()).await {
            // redis111: between sparse calls (slower than Redis's idle `timeout`) every call
            // found the connection of the last reconnect closed, and fell back. A second try
            // that gets no answer in the time left is the dropped connection's failure (it
            // marks Redis down at once, as before): a Redis killed is not taken for late.
            Ok(Err(dropped)) if dropped.is_connection_dropped() => {
                tokio::time::timeout_at(deadline, call())
                    .await
                    .unwrap_or(Err(dropped))
            }
            Ok(answer) => answer,
            Err(_) => late(),
        };
        match &answer {
            Ok(_) => answered(health),
            Err(e) if !e.is_timeout() => failure(health, e, self.inner.trust),
            Err(e) => {
                health.late(sent, UNREACHABLE, e);
                // redis111: the manager reconnects after an error, and a timeout is none: a
                // connection gone silent (a NAT or firewall that dropped its state, a host
                // replaced behind the address) kept the store down for as long as the kernel
                // kept it (about 15 minutes), every probe late on it. Once late answers have
                // marked Redis down, each late call (a probe: one per backoff) gets a new one.
                if !health.snapshot().up {
                    self.replace_connection();
                }
            }
        }
        answer
    }

    /// Marks Redis down without a call: a connection of its own (pub/sub) was closed.
    pub(crate) fn connection_lost(&self, why: &str) {
        self.inner.health.failed(UNREACHABLE, &why);
    }

    /// Marks Redis up without a call: it answered on a connection of its own (pub/sub), unless
    /// it is down for a call it refused ([`Health::pinged`]).
    pub(crate) fn connection_found(&self) {
        self.inner.health.pinged();
    }

    /// How long a caller denied by a fallback should wait before asking again: until the
    /// store's next probe of a Redis that is down, at least the least backoff.
    pub(crate) fn retry_hint(&self) -> Duration {
        self.inner.health.retry_hint()
    }

    /// Counts a decision made by a failure policy.
    pub(crate) fn fell_back(&self) {
        self.inner.health.fell_back();
    }
}

const UNREACHABLE: &str = "redis unreachable";
const REFUSED: &str = "redis refused the call";

/// What kind of failure `e` is, for the log line of an outage: Redis out of reach, or Redis
/// answering with an error (out of memory, a wrong password, ...: the error says what).
fn headline(e: &redis::RedisError) -> &'static str {
    if e.is_io_error() {
        UNREACHABLE
    } else if e.code().is_some() || e.kind() == redis::ErrorKind::AuthenticationFailed {
        REFUSED
    } else {
        "redis call failed"
    }
}

/// Tells the health of a call that failed with `e` (not a late answer).
fn failure(health: &Health, e: &redis::RedisError, trust: tls::Trust) {
    match e {
        // Redis answered, about one key: this decision falls back, the store stays up.
        e if e.code() == Some("WRONGTYPE") => health.key_refused(e),
        e if refused_for_what_it_asks(e) => health.refused(headline(e), e),
        // tls115: what rustls says ("invalid peer certificate: UnknownIssuer") with what to do.
        e => health.failed(headline(e), &tls::describe(e, trust)),
    }
}

/// Whether Redis refused `e`'s call for what it asks (an error reply: out of memory, a
/// read-only replica, an ACL without the command or key), a refusal a `PING` does not meet,
/// so that a PONG does not end the outage (`Health::pinged`). Not a refused password
/// (`NOAUTH`, `WRONGPASS`, or the client's own authentication failure): a PING meets that
/// one too, and a PONG says it is gone.
fn refused_for_what_it_asks(e: &redis::RedisError) -> bool {
    e.kind() != redis::ErrorKind::AuthenticationFailed
        && e.code()
            .is_some_and(|code| !matches!(code, "NOAUTH" | "WRONGPASS"))
}

/// The settings of the store's connection manager.
fn manager_config(budget: Duration, max_backoff: Duration) -> ConnectionManagerConfig {
    // The manager's own reconnect loop stays short: the store's probes (with their backoff)
    // decide when to try again, so a dead Redis costs no decision any waiting.
    ConnectionManagerConfig::new()
        .set_number_of_retries(1)
        .set_min_delay(Duration::from_millis(10))
        .set_max_delay(max_backoff)
        // A connection (TCP, TLS, the client's setup) is given a second at least, whatever
        // the budget: being made off the decisions' path, it holds none of them past their
        // budget. It had the budget (at least 100 ms), which a TLS handshake of a debug build
        // on a loaded machine outlasted now and then, and one to a Redis across a WAN (a round
        // trip for TCP, one or two for TLS) always: the store never connected.
        .set_connection_timeout(Some(budget.max(CONNECT_TIMEOUT)))
        // The budget bounds every call (`call`); the client's own response timeout (500 ms by
        // default) would otherwise cut any longer budget to 500 ms.
        .set_response_timeout(Some(budget.max(Duration::from_millis(500))))
}

/// Why [`RedisStore::attempt`] has no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Missed {
    /// Nothing was sent: Redis is down and no probe was due.
    Skipped,
    /// Sent, but failed or unanswered within the budget: it may still run in Redis.
    Sent,
}

impl StoreBuilder {
    /// The longest a decision waits on Redis before it falls back (default 20 ms).
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// The prefix of every key the limits write (default `sluicegate`). A `:` or `%` in it
    /// is escaped in the keys (`%3A`, `%25`), so that no prefix and name make the key of
    /// another prefix and name (docs/global-limits.md, "Keys").
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_owned();
        self
    }

    /// The wait between probes of a Redis that is down: starts at `min`, doubles per failed
    /// probe up to `max` (defaults 50 ms and 2 s).
    pub fn backoff(mut self, min: Duration, max: Duration) -> Self {
        self.min_backoff = min;
        self.max_backoff = max.max(min);
        self
    }

    /// How long the pub/sub connection (of the concurrency limits' release channels) may be
    /// silent before the store sends it a PING, and how long that PING may go unanswered
    /// (default 5 s). A Redis that stops answering without closing the connection (stopped,
    /// or a network that drops packets) is so noticed within about twice this time: the
    /// store is marked down (waiters get their failure policy's answer) and the connection
    /// is made again. It also bounds each connection attempt and each SUBSCRIBE or
    /// UNSUBSCRIBE (of at most 500 channels, so that a store with many channels is not
    /// taken for hung while Redis subscribes them).
    pub fn keepalive(mut self, keepalive: Duration) -> Self {
        self.keepalive = keepalive.max(Duration::from_millis(1));
        self
    }

    /// Trusts only the CA certificate(s) in `pem` (PEM text, as a `ca.crt` file holds) for
    /// a `rediss://` URL, in place of the system's: for a Redis whose certificate an internal
    /// CA signed, or a self-signed one.
    #[cfg(feature = "tls")]
    pub fn tls_ca(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.ca = Some(pem.into());
        self
    }

    /// Presents a client certificate (and its private key, both PEM) to a `rediss://` Redis
    /// that asks for one (mutual TLS: `tls-auth-clients yes`).
    #[cfg(feature = "tls")]
    pub fn tls_client_cert(
        mut self,
        cert_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.tls.client = Some((cert_pem.into(), key_pem.into()));
        self
    }

    /// Builds the store and connects, waiting up to a second (or the budget, if longer);
    /// when Redis does not answer, the store starts in its down state.
    ///
    /// # Errors
    ///
    /// [`Error::Connection`] when the URL is malformed; [`Error::Prefix`] when the prefix holds
    /// a brace (it would break the keys' hash tags); [`Error::Tls`] for TLS settings that
    /// cannot work (a CA without a certificate in it, a CA for a plain `redis://` URL, a
    /// `rediss://` URL in a build without the `tls` feature).
    pub async fn connect(self) -> Result<RedisStore, Error> {
        if self.prefix.contains(['{', '}']) {
            return Err(Error::Prefix(self.prefix));
        }
        let client = tls::client(&self.url, &self.tls)?;
        let trust = tls::Trust::of(client.get_connection_info(), &self.tls);
        let config = manager_config(self.budget, self.max_backoff);
        let conn = ConnectionManager::new_lazy_with_config(client.clone(), config)?;
        let store = RedisStore {
            inner: Arc::new(Inner {
                conn: RwLock::new(conn),
                client,
                max_backoff: self.max_backoff,
                health: Health::new(self.min_backoff, self.max_backoff),
                budget: self.budget,
                prefix: self.prefix,
                keepalive: self.keepalive,
                pubsub: Arc::default(),
                trust,
            }),
        };
        // Connect now (longer than a decision's budget) so that the first decisions do not
        // fall back while the connection is made; a Redis that is down only starts the store
        // in its down state.
        let mut conn = store.connection();
        let cmd = redis::cmd("PING");
        let ping = cmd.query_async::<()>(&mut conn);
        match tokio::time::timeout(CONNECT_TIMEOUT.max(self.budget), ping).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failure(&store.inner.health, &e, trust),
            // tls115: a plain Redis takes a TLS handshake for the start of a command, and waits.
            Err(_) if trust != tls::Trust::Plain => store.inner.health.failed(
                UNREACHABLE,
                &"no answer to PING over TLS (Redis's plain port? write the port where Redis serves TLS, its `tls-port`)",
            ),
            Err(_) => store.inner.health.failed(UNREACHABLE, &"no answer to PING"),
        }
        Ok(store)
    }
}

#[cfg(test)]
#[allow(dead_code, unreachable_pub)]
#[path = "../../tests/support/server.rs"]
pub(crate) mod server;

#[cfg(test)]
mod tests {
    use super::server::RedisServer;
    use super::*;

    /// trial102: a prefix with a brace was refused as a "limit name" that "must be
    /// non-empty", naming neither the prefix nor what to change.
    #[tokio::test]
    async fn a_prefix_with_a_brace_is_refused_as_a_prefix() {
        let Err(refused) = RedisStore::builder("redis://127.0.0.1:1/")
            .prefix("app{1}")
            .connect()
            .await
        else {
            panic!("a brace breaks the keys' hash tags");
        };
        let message = refused.to_string();
        assert!(matches!(refused, Error::Prefix(_)), "{refused:?}");
        assert!(
            message.contains("prefix \"app{1}\"") && !message.contains("limit name"),
            "{message}"
        );
    }

    fn config_set(redis: &RedisServer, name: &str, value: &str) {
        let mut admin = redis::Client::open(redis.url())
            .unwrap()
            .get_connection()
            .unwrap();
        let () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query(&mut admin)
            .unwrap();
    }

    async fn ping(store: &RedisStore) -> redis::RedisError {
        redis::cmd("PING")
            .query_async::<()>(&mut store.connection())
            .await
            .unwrap_err()
    }

    /// Review 3, lesser notes: an out-of-memory Redis and a wrong password were logged as
    /// "redis unreachable". An outage is now named for what happened: a refusal (the error
    /// says what Redis said) or a Redis out of reach.
    #[tokio::test]
    async fn a_failure_is_named_for_what_redis_said() {
        let mut redis = RedisServer::start();
        let store = RedisStore::connect(&redis.url()).await.unwrap();
        config_set(&redis, "maxmemory-policy", "noeviction");
        config_set(&redis, "maxmemory", "1");
        let oom = redis::cmd("SET")
            .arg("k")
            .arg("v")
            .query_async::<()>(&mut store.connection())
            .await
            .unwrap_err();
        assert_eq!(headline(&oom), "redis refused the call", "{oom}");
        assert!(oom.to_string().contains("OOM"), "{oom}");
        config_set(&redis, "maxmemory", "0");

        config_set(&redis, "requirepass", "secret");
        let url = format!("redis://:nope@127.0.0.1:{}/", redis.port);
        let wrong = RedisStore::connect(&url).await.unwrap();
        assert!(!wrong.health().up);
        let refused = ping(&wrong).await;
        assert_eq!(headline(&refused), "redis refused the call", "{refused}");

        redis.kill();
        let gone = ping(&store).await;
        assert_eq!(headline(&gone), UNREACHABLE, "{gone}");
    }
}
