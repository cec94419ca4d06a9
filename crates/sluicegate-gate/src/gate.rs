//! The running gate's shared state: what is in force, and the changes the admin API and
//! reloads make to it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;
use serde::Deserialize;

use crate::config::{self, Config, Dur, Rate};
use crate::pool::{Pool, Store, TlsFiles};
use crate::state::State;

/// The gate: config and state in force. Shared by the proxy, the admin API and the signal
/// handlers.
#[derive(Debug)]
pub struct Gate {
    state: ArcSwap<State>,
    /// The config in force, admin changes included. Changes are made under this lock, one
    /// at a time; the proxy never takes it.
    config: Mutex<Config>,
    /// Held across a whole reload (read, store connection, install): reloads run one at a
    /// time, in the order they started (tokio's lock is fair), so a reload that read an older
    /// file never installs it over one that read a newer file. SIGHUP and `POST /reload`
    /// both reload through [`Gate::reload`]. Owned (`lock_owned`): a reload's install, off
    /// the loop, holds the turn to its end, also when the reload is dropped meanwhile.
    reloads: Arc<tokio::sync::Mutex<()>>,
    /// Held by a reload's read of its files (config, token, bypass secret) until that read
    /// ends, also when the reload gave up on it ([`READ_DEADLINE`]) or was dropped: a read
    /// stuck on a pipe or a hung mount keeps one blocking thread, and the reloads after it
    /// wait for it (up to their own deadline) instead of starting another.
    reader: Arc<tokio::sync::Mutex<()>>,
    /// Reloads past their read ([`Gate::files_read`]).
    files_read: std::sync::atomic::AtomicU64,
    path: Option<PathBuf>,
    /// What the process started with and a reload cannot change.
    bound: Bound,
    /// Set (under the `config` lock) when the drain starts: from then on every change is
    /// refused.
    draining: AtomicBool,
    /// Set when the drain's grace period is over: what still waits is turned away.
    stopping: AtomicBool,
    /// Requests answered before any pool took them (kept across reloads).
    pub unrouted: crate::proxy::UnroutedCounts,
    /// Admin calls turned away before an endpoint (kept across reloads).
    pub admin_refused: crate::admin::AdminRefusals,
    /// Requests from a trusted proxy without the `[client_address]` header (kept across
    /// reloads).
    pub without_header: crate::client_address::WithoutHeader,
    /// Turns true when open tunnels must end (the drain's grace period is over); every
    /// tunnel watches it, and ends too when the gate is dropped.
    tunnels: tokio::sync::watch::Sender<bool>,
    /// Pools a reload or a change removed while requests still ran or waited on them (but
    /// those a new pool carries on, a rename, which counts and drains them): the drain
    /// waits for those too. Each is let go at the next change once idle.
    leaving: Mutex<Vec<Arc<Pool>>>,
    /// The admin API's big answers, built off the loop a few at once.
    pub(crate) big_answers: BigAnswers,
}

/// The settings bound at start (listeners, threads), which only a restart changes.
#[derive(Clone, Debug, PartialEq)]
struct Bound {
    listen: Vec<config::ListenAddr>,
    admin: Option<std::net::SocketAddr>,
    workers: Option<usize>,
}

impl Bound {
    fn of(c: &Config) -> Bound {
        Bound {
            listen: c.listen.clone(),
            admin: c.admin.listen.as_ref().map(|a| *a.get_ref()),
            workers: c.workers,
        }
    }

    /// The settings `new` changes from what runs: they wait for a restart. Compared with what
    /// the process started with, not with the last file loaded (a file edited back to the
    /// running values was warned about as a change).
    fn changed_by(&self, new: &Config) -> Vec<&'static str> {
        let new = Bound::of(new);
        [
            ("listen", new.listen != self.listen),
            ("admin", new.admin != self.admin),
            ("workers", new.workers != self.workers),
        ]
        .into_iter()
        .filter_map(|(k, changed)| changed.then_some(k))
        .collect()
    }
}

/// A change to a pool's limits (`PUT /pools/NAME/limits`); fields left out stay as they are.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsChange {
    /// A static concurrency limit (`0` is the kill switch); replaces an adaptive one.
    #[serde(default, deserialize_with = "config::whole_numbers::max_concurrency")]
    pub max_concurrency: Option<usize>,
    /// Queue size.
    #[serde(default, deserialize_with = "config::whole_numbers::max_queue")]
    pub max_queue: Option<usize>,
    /// Queue timeout, like `"10s"`.
    pub queue_timeout: Option<Dur>,
    /// The pool-wide rate, like `"20/s"`; `null` removes it (left out, it stays as it is).
    #[serde(default, deserialize_with = "present")]
    pub rate: Option<Option<Rate>>,
}

/// What the change sets, in the API's words, for the log: `max_concurrency=0 (the kill
/// switch) queue_timeout=1s rate=null` (it was a `Debug` dump: review 26).
impl std::fmt::Display for LimitsChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut said = Vec::new();
        match self.max_concurrency {
            Some(0) => said.push("max_concurrency=0 (the kill switch)".to_owned()),
            Some(n) => said.push(format!("max_concurrency={n}")),
            None => {}
        }
        if let Some(n) = self.max_queue {
            said.push(format!("max_queue={n}"));
        }
        if let Some(d) = self.queue_timeout {
            said.push(format!("queue_timeout={d}"));
        }
        match self.rate {
            Some(Some(r)) => said.push(format!("rate={r}")),
            Some(None) => said.push("rate=null (removed)".to_owned()),
            None => {}
        }
        if said.is_empty() {
            return f.write_str("nothing");
        }
        f.write_str(&said.join(" "))
    }
}

/// A field that is present, `null` or not: `Some(None)` for `null`, where a plain `Option`
/// reads `null` as absent.
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// Why a change was refused.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// No pool of that name.
    #[error("no pool named `{0}`")]
    UnknownPool(String),
    /// The change makes an unusable config.
    #[error("{0}")]
    Invalid(String),
    /// The gate is draining on its way out: it takes no change but closing a pool.
    #[error(
        "the gate is draining (SIGTERM or SIGINT): it takes no changes until it exits \
         but closing a pool; /status and /metrics still answer"
    )]
    Draining,
}

impl Gate {
    /// A gate serving `config`; `path` is the file reloads read (none for the quick form).
    ///
    /// With a `[store]`, connects to it first (waiting up to a second). A Redis that does
    /// not answer does not stop the gate: a warning says so, and global pools follow their
    /// failure policy until Redis answers.
    ///
    /// # Errors
    ///
    /// What [`State::build`] refuses, or a store URL the Redis client refuses.
    pub async fn new(config: Config, path: Option<PathBuf>) -> Result<Gate, String> {
        warn_of(&config);
        let store = match &config.store {
            Some(cfg) => {
                let (store, down) = Store::connect_checked(cfg).await?;
                if let Some(why) = down {
                    tracing::warn!(
                        redis = %cfg.redis_shown(),
                        error = %why,
                        "redis does not answer, or cannot decide: global pools follow their failure policy until it does"
                    );
                }
                Some(store)
            }
            None => None,
        };
        let state = State::build(&config, None, &[], store.as_ref())?;
        Ok(Gate {
            state: ArcSwap::from_pointee(state),
            bound: Bound::of(&config),
            config: Mutex::new(config),
            reloads: Arc::new(tokio::sync::Mutex::new(())),
            reader: Arc::new(tokio::sync::Mutex::new(())),
            files_read: std::sync::atomic::AtomicU64::new(0),
            path,
            draining: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            unrouted: Default::default(),
            admin_refused: Default::default(),
            without_header: Default::default(),
            tunnels: tokio::sync::watch::Sender::new(false),
            leaving: Mutex::new(Vec::new()),
            big_answers: BigAnswers::default(),
        })
    }

    /// The state in force now.
    pub fn state(&self) -> Arc<State> {
        self.state.load_full()
    }

    /// Reads the state in force without taking a reference count (the proxy's hot path).
    pub fn with_state<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        f(&self.state.load())
    }

    fn config(&self) -> MutexGuard<'_, Config> {
        self.config.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The config lock, for a change: refused once the drain has started.
    fn change(&self) -> Result<MutexGuard<'_, Config>, ChangeError> {
        let config = self.config();
        if self.is_draining() {
            return Err(ChangeError::Draining);
        }
        Ok(config)
    }

    /// Starts the drain: from now on every change (reload, limits, open) but closing a pool
    /// is refused with [`ChangeError::Draining`]. A change in progress finishes first.
    pub fn start_draining(&self) {
        let _changes = self.config();
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Whether the drain has started.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// The grace period is over: every pool, and every removed one still busy, turns away
    /// what waits in its queue (never forwarded: `503`, so its client knows a retry is safe)
    /// and says, in its answer, that the gate is shutting down. Returns how many waited.
    pub fn turn_away_queued(&self) -> usize {
        self.stopping.store(true, Ordering::Relaxed);
        let mut queued = 0;
        for p in self.every_pool() {
            queued += p.counts().queued;
            p.turn_away_waiting();
        }
        queued
    }

    /// The pools in force, and those a change removed while they were still busy: read
    /// together, under the lock under which a reload moves a pool from one to the other.
    pub(crate) fn every_pool(&self) -> Vec<Arc<Pool>> {
        let leaving = self.leaving.lock().unwrap_or_else(|e| e.into_inner());
        let mut pools = self.state().pools.clone();
        pools.extend(leaving.iter().cloned());
        pools
    }

    /// The state in force and the pools a change removed that still run or queue requests
    /// (shown by `/status` and `/metrics` until their last request ends), read together
    /// under the lock under which a reload moves a pool from one to the other, so that no
    /// pool shows in both or in neither.
    pub(crate) fn state_and_removed(&self) -> (Arc<State>, Vec<Arc<Pool>>) {
        let leaving = self.leaving.lock().unwrap_or_else(|e| e.into_inner());
        let removed = leaving.iter().filter(|p| !p.idle()).cloned().collect();
        (self.state(), removed)
    }

    /// Whether the grace period is over ([`turn_away_queued`](Self::turn_away_queued)).
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// Waits until no pool has a request in its queue.
    pub async fn queues_emptied(&self) {
        loop {
            if self.every_pool().iter().all(|p| p.counts().queued == 0) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Closes every open tunnel (upgraded connection, WebSocket) of every pool, and any
    /// opened later: the drain does it when its grace period is over.
    pub fn end_tunnels(&self) {
        self.tunnels.send_replace(true);
    }

    /// What a tunnel watches to learn that it must end ([`end_tunnels`](Self::end_tunnels)).
    pub(crate) fn tunnels_end(&self) -> tokio::sync::watch::Receiver<bool> {
        self.tunnels.subscribe()
    }

    /// Re-reads the config file and applies it: limits change at once, queued and running
    /// requests carry on; the admin token, `header_read_timeout`, `max_header_bytes` and
    /// `send_timeout` hold for connections (and admin calls) from now on, `grace_period`
    /// for the next shutdown. Listen addresses, the admin listener and `workers` need a
    /// restart: the names of those the file changes are returned (and logged as a warning).
    ///
    /// A changed `[store]` is connected first; when the new Redis does not answer within a
    /// second, the reload is refused and the config in force keeps its store. An unchanged
    /// store is kept (up or down).
    ///
    /// Reloads run one at a time, whole (read, connection, install), in the order they
    /// started: one that starts while another runs waits for it, then reads the file itself.
    /// The last reload to start therefore installs the file as it was when it read it.
    ///
    /// The work (reading and checking the file, building and installing the new state) runs
    /// on the runtime's blocking threads ([`tokio::task::spawn_blocking`]), not on the task's
    /// own: the runtime that accepts connections and answers the admin API goes on doing so
    /// meanwhile. Dropped (a stop signal), the reload installs nothing: its install task,
    /// which runs on, looks under the config lock whether it is still wanted, and holds the
    /// reloads' turn until it is done, so the next reload never overtakes it. One that
    /// installs logs it from that task ("config reloaded: pools …"), so that a
    /// reload dropped once past that look, which installs, is in the log too.
    ///
    /// # Errors
    ///
    /// [`ChangeError::Draining`] once the drain has started (also for a reload that had
    /// started before and met a broken file or store); else, as
    /// [`ChangeError::Invalid`], the file's [`ConfigError`](config::ConfigError), a new
    /// store that does not answer, or a pool that cannot be built. The config in force
    /// stays.
    pub async fn reload(self: &Arc<Self>) -> Result<Vec<&'static str>, ChangeError> {
        match self.reload_whole().await {
            // The drain refuses a reload whatever it met: say that, not what its file or
            // store had wrong (a token file removed during the drain, say).
            Err(ChangeError::Invalid(_)) if self.is_draining() => Err(ChangeError::Draining),
            done => done,
        }
    }

    /// [`reload`](Self::reload), but for the drain's answer.
    async fn reload_whole(self: &Arc<Self>) -> Result<Vec<&'static str>, ChangeError> {
        // Checked again under the lock, after the store's connection.
        drop(self.change()?);
        // Owned: the install, off the loop, holds the turn until it is done, also when this
        // future is dropped meanwhile (a stop signal, a client that gave up), so the next
        // reload never overtakes it.
        let turn = self.reloads.clone().lock_owned().await;
        let Some(path) = self.path.clone() else {
            return Err(ChangeError::Invalid(
                "no config file to reload (the gate runs from flags)".into(),
            ));
        };
        let invalid = ChangeError::Invalid;
        let stuck = |what: &str| {
            invalid(format!(
                "{}: {what} for over {} s: is it, or the token or secret file it names, a pipe nobody writes or on a mount that hangs? Nothing changed; reload again once it reads",
                path.display(),
                READ_DEADLINE.as_secs()
            ))
        };
        // Waits for an earlier reload's read that is still going (its reload gave up on it
        // or was dropped), never starting a second.
        let Ok(reader) =
            tokio::time::timeout(READ_DEADLINE, self.reader.clone().lock_owned()).await
        else {
            self.files_read.fetch_add(1, Ordering::Relaxed);
            return Err(stuck("an earlier reload has been reading it"));
        };
        // Read, checked and looked over off the loop: thousands of pools and routes take
        // milliseconds, and a file that blocks (a pipe) would stop the loop. The token and
        // secret files too, before the config lock: a slow one holds no change that waits
        // for that lock.
        let read = {
            let path = path.clone();
            off_the_loop(move || {
                let _reader = reader;
                let started = std::time::Instant::now();
                config::read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|new| {
                        let secrets = crate::state::Secrets::read(&new)?;
                        let warnings = config::warnings(&new);
                        Ok((new, secrets, warnings, started.elapsed()))
                    })
            })
        };
        let read = tokio::time::timeout(READ_DEADLINE, read).await;
        // Counted also when the file is refused: what a test waits for is the read's end.
        self.files_read.fetch_add(1, Ordering::Relaxed);
        let Ok(read) = read else {
            return Err(stuck("reading it has taken"));
        };
        let (new, secrets, warnings, read) = read.map_err(invalid)?;
        if let Some(admin) = self.bound.admin.filter(|a| !a.ip().is_loopback())
            && new.admin.token_file.is_none()
        {
            // The listener stays where it is until a restart: dropping the token would open
            // it to anyone who can reach it.
            return Err(invalid(format!(
                "{}: `[admin] token_file` is gone, but the admin API listens on {admin} beyond loopback until the next restart; keep the token until then",
                path.display()
            )));
        }
        // The TLS files are read again, as the token and secret files are: a CA or client
        // certificate renewed in place takes a new connection (a kept one would reconnect
        // with what the old files held once Redis presents its new certificate).
        let mut renewed = String::new();
        let store = match (&new.store, self.state().store.clone()) {
            (None, _) => None,
            (Some(cfg), kept) => {
                let tls = TlsFiles::read(cfg).await.map_err(|e| {
                    invalid(format!("{}: {e}; the store in force stays", path.display()))
                })?;
                match kept {
                    Some(kept) if kept.serves(cfg, &tls) => Some(kept),
                    kept => {
                        if kept.is_some_and(|k| k.config == *cfg) {
                            renewed = format!(
                                "; store {} reconnected: its TLS files changed",
                                cfg.redis_shown()
                            );
                        }
                        let (store, down) =
                            Store::connect_checked_with(cfg, tls).await.map_err(|e| {
                                invalid(format!(
                                    "{}: {e}; the store in force stays",
                                    path.display()
                                ))
                            })?;
                        if let Some(why) = down {
                            return Err(invalid(format!(
                                "{}: the new [store] redis = \"{}\" does not answer ({why}); the store in force stays",
                                path.display(),
                                cfg.redis_shown()
                            )));
                        }
                        Some(store)
                    }
                }
            }
        };
        for w in warnings {
            tracing::warn!("{w}");
        }
        // Built and installed off the loop too. A blocking task runs to its end even when
        // this future is dropped (a stop signal): `abandoned` tells it not to install, and
        // it looks under the config lock, so that it either installed before the drain took
        // that lock or installs nothing.
        let abandoned = Arc::new(AtomicBool::new(false));
        let _tell = SetOnDrop(abandoned.clone());
        let gate = self.clone();
        let installed = off_the_loop(move || {
            let _turn = turn;
            let mut current = gate.change()?;
            if abandoned.load(Ordering::Relaxed) {
                return Err(ChangeError::Invalid("abandoned".into()));
            }
            let restart = gate.bound.changed_by(&new);
            let changed = what_changed(&current, &new) + &renewed;
            let started = std::time::Instant::now();
            gate.install(&mut current, new, store.as_ref(), Some(secrets))
                .map_err(invalid)?;
            // Said here, with the install: this task runs on when the reload is dropped.
            // One line: in force, and what changed.
            if restart.is_empty() {
                tracing::info!("config reloaded: {changed}");
            } else {
                tracing::warn!(
                    waiting_for_restart = ?restart,
                    "config reloaded: {changed}; except for settings that keep their running values until the next restart"
                );
            }
            Ok((restart, started.elapsed()))
        });
        let (restart, installed) = installed.await?;
        tracing::debug!(?read, ?installed, "reload timings (off the loop)");
        Ok(restart)
    }

    /// Whether the gate runs from a config file (else from the quick form's flags: nothing
    /// to reload).
    pub fn has_file(&self) -> bool {
        self.path.is_some()
    }

    /// How many reloads have read (and checked) their file so far, refused ones included:
    /// what a test waits for to know that a reload is past its read.
    #[doc(hidden)]
    pub fn files_read(&self) -> u64 {
        self.files_read.load(Ordering::Relaxed)
    }

    /// Whether the config lock is held (by any thread).
    #[cfg(test)]
    pub(crate) fn config_is_locked(&self) -> bool {
        matches!(
            self.config.try_lock(),
            Err(std::sync::TryLockError::WouldBlock)
        )
    }

    /// Takes the config lock, as a change under way holds it: changes wait for it.
    #[cfg(test)]
    pub(crate) fn hold_changes(&self) -> MutexGuard<'_, Config> {
        self.config()
    }

    /// Takes the reloads' turn, as a reload under way holds it (one connecting a new store):
    /// reloads that start meanwhile wait for it to be dropped.
    #[cfg(test)]
    pub(crate) async fn hold_reloads(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.reloads.lock().await
    }

    fn install(
        &self,
        current: &mut Config,
        new: Config,
        store: Option<&Store>,
        secrets: Option<crate::state::Secrets>,
    ) -> Result<(), String> {
        // The build, the swap and the removed pools' move to `leaving` under one lock, so
        // `drained` never sees a pool in neither.
        let mut leaving = self.leaving.lock().unwrap_or_else(|e| e.into_inner());
        let started = std::time::Instant::now();
        let state = State::build_with(&new, secrets, Some(&self.state.load()), &leaving, store)?;
        tracing::debug!(built = ?started.elapsed(), "State::build");
        // A pool an earlier change removed is gone with its closed state, also when it is
        // added back while its requests still run (carried on, so that its limit counts
        // them): it starts open, as it does once they have ended. A rename within this
        // change (carried on from the state in force) keeps it.
        for p in &state.pools {
            if leaving.iter().any(|l| Arc::ptr_eq(&l.stats, &p.stats)) {
                p.closed_by_admin.store(false, Ordering::Relaxed);
                p.apply_closed();
            }
        }
        let old = self.state.swap(Arc::new(state));
        let now = self.state.load();
        // A removed pool that a new one carries on (`State::build`) is counted and drained
        // by that one, which shares its counters.
        let carried = |p: &Arc<Pool>| now.pools.iter().any(|n| Arc::ptr_eq(&n.stats, &p.stats));
        leaving.extend(
            old.pools
                .iter()
                .filter(|p| now.pool(&p.name).is_none() && !carried(p))
                .cloned(),
        );
        leaving.retain(|p| !p.idle() && !carried(p));
        // As at start: said when the change raises what the pools may hold past the
        // limit (a sum over the pools, and the limit read only then); not again for a
        // change that leaves it as it was.
        let need = crate::open_files::needed_by(&new);
        if need > crate::open_files::needed_by(current) {
            crate::open_files::warn_if_low(need, "the pools' limits and queues after this change");
        }
        *current = new;
        Ok(())
    }

    /// Changes a pool's limits at once.
    ///
    /// # Errors
    ///
    /// [`ChangeError::UnknownPool`], [`ChangeError::Invalid`] for a value the limiter
    /// cannot take, [`ChangeError::Draining`] once the drain has started.
    pub fn set_limits(&self, pool: &str, change: &LimitsChange) -> Result<(), ChangeError> {
        self.set_limits_and(pool, change, |_| ())
    }

    /// [`set_limits`](Self::set_limits), then `answer` on the pool as the change left it,
    /// before any later change can land (still under the config lock): what the admin API
    /// answers is the state this change made. `answer` must not make a change itself.
    ///
    /// # Errors
    ///
    /// As [`set_limits`](Self::set_limits).
    pub(crate) fn set_limits_and<R>(
        &self,
        pool: &str,
        change: &LimitsChange,
        answer: impl FnOnce(&Pool) -> R,
    ) -> Result<R, ChangeError> {
        let mut current = self.change()?;
        let mut new = current.clone();
        let p = new
            .pools
            .iter_mut()
            .find(|p| p.name.get_ref() == pool)
            .ok_or_else(|| ChangeError::UnknownPool(pool.to_owned()))?;
        if let Some(n) = change.max_concurrency {
            if n > sluicegate::concurrency::ConcurrencyLimiter::MAX_PERMITS {
                return Err(ChangeError::Invalid(format!(
                    "`max_concurrency` must be at most {}, not {n}",
                    sluicegate::concurrency::ConcurrencyLimiter::MAX_PERMITS
                )));
            }
            p.max_concurrency = Some(n);
            p.adaptive = None;
        }
        if let Some(n) = change.max_queue {
            p.max_queue = n;
        }
        if let Some(t) = change.queue_timeout {
            if t.0.is_zero() {
                return Err(ChangeError::Invalid(
                    "queue_timeout must be longer than 0".into(),
                ));
            }
            p.queue_timeout = t;
        }
        if let Some(r) = change.rate {
            p.rate = r;
        }
        let state = self.state();
        // The token and secret in force: a limits change reads no file (one on a pipe or a
        // hung mount would hold the config lock, and every change behind it).
        let secrets = crate::state::Secrets::in_force(&state);
        self.install(&mut current, new, state.store.as_ref(), Some(secrets))
            .map_err(ChangeError::Invalid)?;
        let now = self.state.load();
        let p = now
            .pool(pool)
            .ok_or_else(|| ChangeError::UnknownPool(pool.to_owned()))?;
        Ok(answer(p))
    }

    /// Closes (`open == false`) or opens a pool: a closed pool answers `503` at once and
    /// turns away what waits.
    ///
    /// # Errors
    ///
    /// [`ChangeError::UnknownPool`]; [`ChangeError::Draining`] for an `open` once the drain
    /// has started (closing is taken to the end: it only turns work away);
    /// [`ChangeError::Invalid`] for an `open` of a pool whose limit is 0 (the kill switch
    /// keeps it closed whatever `open` does: a limit above 0 opens it).
    pub fn set_open(&self, pool: &str, open: bool) -> Result<(), ChangeError> {
        let _changes = if open { self.change()? } else { self.config() };
        let state = self.state();
        let p = state
            .pool(pool)
            .ok_or_else(|| ChangeError::UnknownPool(pool.to_owned()))?;
        if open && p.killed() {
            return Err(ChangeError::Invalid(format!(
                "pool `{pool}` has max_concurrency 0 (the kill switch), which keeps it closed: \
                 give it a limit to open it, like PUT /pools/{pool}/limits \
                 {{\"max_concurrency\": 10}}, or reload the config"
            )));
        }
        p.closed_by_admin
            .store(!open, std::sync::atomic::Ordering::Relaxed);
        p.apply_closed();
        Ok(())
    }

    /// Resolves when no pool has a request queued or running, on its limiter or on an old
    /// one still busy after a hand-over, nor any pool a reload or change removed.
    pub async fn drained(&self) {
        loop {
            for p in self.every_pool() {
                p.limit.limiter().drain().await;
            }
            // The pools in force and those removed, read together (a reload moves a pool from
            // one to the other under this lock); the removed ones that are idle go for good.
            let idle = {
                let mut leaving = self.leaving.lock().unwrap_or_else(|e| e.into_inner());
                leaving.retain(|p| !p.idle());
                leaving.is_empty() && self.state().pools.iter().all(|p| p.idle())
            };
            if idle {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

/// Builds every pool of `config` as `serve` would, without serving. With a `[store]` this
/// connects to Redis on a small runtime of its own; a Redis that does not answer is a
/// warning, not an error (the gate starts without it, global pools on their failure policy).
///
/// Returns what works but is likely a mistake ([`config::warnings`], a Redis that does not
/// answer), one line each, for `check` to print.
///
/// # Errors
///
/// A pool that cannot be built or a secret file that cannot be read, as text.
///
/// # Panics
///
/// When called on a tokio runtime's thread with a `[store]` (it blocks on its own runtime).
pub fn check_pools(config: &Config) -> Result<Vec<String>, String> {
    let mut warnings = config::warnings(config);
    let Some(cfg) = &config.store else {
        return State::build(config, None, &[], None).map(|_| warnings);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime to check the store: {e}"))?;
    // trial117: `serve` logs this (the Redis crate does, building its client), `check`,
    // which prints only what it finds, said ok without it.
    if cfg
        .redis
        .get_ref()
        .rsplit_once('#')
        .is_some_and(|(_, fragment)| fragment == "insecure")
    {
        warnings.push(format!(
            "[store] redis = \"{}\": `#insecure` checks no certificate redis presents, so anyone on the way can read and change what goes to redis; give the CA that signed it (`tls_ca_file`) instead",
            cfg.redis_shown()
        ));
    }
    runtime.block_on(async {
        let (store, down) = Store::connect_checked(cfg).await?;
        if let Some(why) = down {
            warnings.push(format!(
                "redis at {} does not answer ({why}): the gate would start with global pools \
                 on their failure policy",
                cfg.redis_shown()
            ));
        }
        State::build(config, None, &[], Some(&store)).map(|_| warnings)
    })
}

/// The longest a reload waits for its files (the config, and the token and bypass secret
/// files it names) to be read, and for an earlier reload's read still going: the same as the
/// longest a read goes on while it gets bytes ([`config::READ_DEADLINE`]).
const READ_DEADLINE: std::time::Duration = config::READ_DEADLINE;

/// The most big read-only answers of the admin API (`/status`, `/metrics`,
/// `/dashboard/samples`) built at once ([`BigAnswers`]).
pub(crate) const BIG_ANSWERS: usize = 2;

/// Builds the admin API's big read-only answers (`/status`, `/metrics`,
/// `/dashboard/samples`: megabytes with thousands of pools) off the loop, [`BIG_ANSWERS`] at
/// once. A build runs to its end on its blocking thread even when its caller is gone (a
/// closed connection drops the answer's future): unbounded, every call given up would leave
/// a build behind and the next call would start another, bounded neither by
/// `[admin] max_connections` (the connection is closed) nor by the runtime's threads, as the
/// builds were when they ran on the loop (review127). A call waits for its turn before its
/// build starts; given up while it waits, it builds nothing.
#[derive(Clone, Debug)]
pub(crate) struct BigAnswers(Arc<tokio::sync::Semaphore>);

impl Default for BigAnswers {
    fn default() -> Self {
        BigAnswers(Arc::new(tokio::sync::Semaphore::new(BIG_ANSWERS)))
    }
}

impl BigAnswers {
    /// `work` run off the loop ([`off_the_loop`]) once fewer than [`BIG_ANSWERS`] run; its
    /// turn held until it ends, also when this future is dropped first.
    pub(crate) async fn build<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let Ok(turn) = Arc::clone(&self.0).acquire_owned().await else {
            unreachable!("the semaphore is never closed")
        };
        off_the_loop(move || {
            let _turn = turn;
            work()
        })
        .await
    }
}

/// Runs `work` on the runtime's blocking threads, off the loop that accepts connections and
/// answers the admin API (see `server.rs`: with one runtime thread, everything else waits
/// while it computes). Its log lines go where the caller's go. A panic in `work` is this
/// future's panic; a runtime shutting down (the task cancelled before it ran) leaves it
/// pending, as the runtime stops anyway.
pub(crate) async fn off_the_loop<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let log = tracing::dispatcher::get_default(Clone::clone);
    match tokio::task::spawn_blocking(move || tracing::dispatcher::with_default(&log, work)).await {
        Ok(t) => t,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => std::future::pending().await,
    }
}

/// Sets its flag when dropped: tells work off the loop that its caller is gone.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Logs what [`config::warnings`] finds in `config`.
fn warn_of(config: &Config) {
    for w in config::warnings(config) {
        tracing::warn!("{w}");
    }
}

/// What a reload changes, in one line: pools added, removed and changed (by name), and the
/// routes before and after — so that a reload of a file caught part-written, which drops
/// most routes, shows in the log.
fn what_changed(old: &Config, new: &Config) -> String {
    fn by_name(c: &Config) -> std::collections::HashMap<&str, &config::Pool> {
        c.pools
            .iter()
            .map(|p| (p.name.get_ref().as_str(), p))
            .collect()
    }
    let (was, is) = (by_name(old), by_name(new));
    let added = is.keys().filter(|n| !was.contains_key(*n)).count();
    let removed = was.keys().filter(|n| !is.contains_key(*n)).count();
    let changed = is
        .iter()
        .filter(|(n, p)| was.get(*n).is_some_and(|o| o != *p))
        .count();
    let store = match (&old.store, &new.store) {
        (Some(o), Some(n)) if o == n => String::new(),
        (None, None) => String::new(),
        // A changed `[store]` is a new store: a new connection, and counters from 0.
        (Some(_), Some(n)) => format!(
            "; store {} replaced (a new connection; its counters start from 0)",
            n.redis_shown()
        ),
        (None, Some(n)) => format!("; store {} added", n.redis_shown()),
        (Some(o), None) => format!("; store {} removed", o.redis_shown()),
    };
    format!(
        "pools {} → {}: {added} added, {removed} removed, {changed} changed; routes {} → {}{store}{}",
        old.pools.len(),
        new.pools.len(),
        old.routes.len(),
        new.routes.len(),
        client_address_changed(&old.client_address, &new.client_address)
    )
}

/// `[client_address]` as a reload changed it, for [`what_changed`]'s line: it moves every
/// `client_ip` key, and no pool counts as changed for it.
fn client_address_changed(old: &config::ClientAddress, new: &config::ClientAddress) -> String {
    let in_force = |c: &config::ClientAddress| (c.trusted_proxies.clone(), c.header());
    if in_force(old) == in_force(new) {
        return String::new();
    }
    if new.trusted_proxies.is_empty() {
        return "; client_address off (the client is the peer)".to_owned();
    }
    let proxies: Vec<String> = new
        .trusted_proxies
        .iter()
        .map(|c| c.0.to_string())
        .collect();
    format!(
        "; client_address: {} from {}",
        new.header().name(),
        proxies.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn config(listen: &str, workers: &str) -> Config {
        let text = format!(
            "listen = [\"{listen}\"]\n{workers}\n[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9000\"\nmax_concurrency = 4\n\n[[routes]]\npool = \"api\"\n"
        );
        config::parse(&text, "g.toml").unwrap()
    }

    /// Review 26: the `PUT` audit line was a `Debug` dump of the change.
    #[test]
    fn a_limits_change_is_said_in_the_apis_words() {
        let change: LimitsChange = serde_json::from_str(
            r#"{"max_concurrency": 0, "queue_timeout": "1s", "rate": null, "max_queue": 5}"#,
        )
        .unwrap();
        assert_eq!(
            change.to_string(),
            "max_concurrency=0 (the kill switch) max_queue=5 queue_timeout=1s rate=null (removed)"
        );
        let change: LimitsChange =
            serde_json::from_str(r#"{"max_concurrency": 12, "rate": "20/s"}"#).unwrap();
        assert_eq!(change.to_string(), "max_concurrency=12 rate=20/s");
        let change: LimitsChange = serde_json::from_str("{}").unwrap();
        assert_eq!(change.to_string(), "nothing");
    }

    /// Review 26: the quick form (flags, no file) logged a reload it cannot make (a SIGHUP
    /// from log rotation, say) at `ERROR`, where nothing is wrong with the gate: an alert on
    /// errors fired. A `WARN` now, naming what to do.
    #[tokio::test]
    async fn a_reload_of_the_quick_form_is_a_warning_not_an_error() {
        let (log, _guard) = crate::server::tests::capture();
        let gate = Gate::new(config("127.0.0.1:0", ""), None)
            .await
            .map(Arc::new)
            .unwrap();
        assert!(crate::reload(&gate).await.is_err());
        let said: Vec<String> = log
            .lines()
            .into_iter()
            .filter(|l| l.contains("reload"))
            .collect();
        assert_eq!(said.len(), 1, "{said:#?}");
        assert!(
            said[0].contains(" WARN ") && said[0].contains("--config"),
            "{said:?}"
        );
    }

    /// A reload that turns `[client_address]` on, changes it or turns it off moves every
    /// `client_ip` key: the line says so; one that leaves it as it was (the default header
    /// written out) says nothing of it.
    #[test]
    fn the_reload_line_names_a_changed_client_address() {
        let with = |table: &str| {
            config::parse(
                &format!(
                    "listen = [\"127.0.0.1:0\"]\n[client_address]\n{table}\n{}",
                    one_pool(4)
                ),
                "g.toml",
            )
            .unwrap()
        };
        let off = with("");
        let on = with("trusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\"]");
        let same =
            with("trusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\"]\nheader = \"x-forwarded-for\"");
        let fwd = with("trusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\"]\nheader = \"forwarded\"");
        let line = what_changed(&off, &on);
        assert!(
            line.ends_with("; client_address: x-forwarded-for from 10.0.0.0/8, 127.0.0.1/32"),
            "{line}"
        );
        assert!(!what_changed(&on, &same).contains("client_address"));
        assert!(
            what_changed(&same, &fwd)
                .ends_with("; client_address: forwarded from 10.0.0.0/8, 127.0.0.1/32")
        );
        assert!(
            what_changed(&fwd, &off).ends_with("; client_address off (the client is the peer)")
        );
        assert!(!what_changed(&off, &off).contains("client_address"));
    }

    /// Review 26: a reload that replaced the `[store]` (a new connection, its counters from
    /// 0) said "0 changed" and nothing of the store. The line names it now.
    #[test]
    fn the_reload_line_names_a_store_added_replaced_or_removed() {
        let with = |store: &str| {
            config::parse(
                &format!("listen = [\"127.0.0.1:0\"]\n{store}\n{}", one_pool(4)),
                "g.toml",
            )
            .unwrap()
        };
        let none = with("");
        let a = with("[store]\nredis = \"redis://:pw@127.0.0.1:6379\"\nbudget = \"50ms\"");
        let b = with("[store]\nredis = \"redis://:pw@127.0.0.1:6379\"\nbudget = \"250ms\"");
        assert!(
            !what_changed(&a, &a).contains("store"),
            "{}",
            what_changed(&a, &a)
        );
        let line = what_changed(&a, &b);
        assert!(
            line.ends_with("; store redis://:***@127.0.0.1:6379 replaced (a new connection; its counters start from 0)"),
            "{line}"
        );
        let line = what_changed(&none, &a);
        assert!(
            line.ends_with("; store redis://:***@127.0.0.1:6379 added"),
            "{line}"
        );
        let line = what_changed(&a, &none);
        assert!(
            line.ends_with("; store redis://:***@127.0.0.1:6379 removed"),
            "{line}"
        );
    }

    /// A config file's text: one pool `api` with a limit of `max`, and a route to it.
    fn one_pool(max: usize) -> String {
        format!(
            "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9000\"\nmax_concurrency = {max}\n\n[[routes]]\npool = \"api\"\n"
        )
    }

    /// A fresh directory `sluicegate-gate-TAG-PID` under the temp dir, its config path
    /// `g.toml` holding [`one_pool`]`(max)`, and a gate started from that file.
    async fn gate_on_file(tag: &str, max: usize) -> (PathBuf, PathBuf, Arc<Gate>) {
        let dir =
            std::env::temp_dir().join(format!("sluicegate-gate-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.toml");
        std::fs::write(&path, one_pool(max)).unwrap();
        let gate = Gate::new(config::read(&path).unwrap(), Some(path.clone()))
            .await
            .map(Arc::new)
            .unwrap();
        (dir, path, gate)
    }

    fn gate_config() -> Config {
        let text = "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9000\"\nmax_concurrency = 1\nmax_queue = 10\n\n[[routes]]\npool = \"api\"\n";
        config::parse(text, "g.toml").unwrap()
    }

    /// Moves the pool to a new limiter (new queue settings): a hand-over.
    fn hand_over(gate: &Gate) {
        let change = LimitsChange {
            max_queue: Some(5),
            ..LimitsChange::default()
        };
        gate.set_limits("api", &change).unwrap();
    }

    /// Whether `drained` resolves within a (paused) minute.
    async fn drains(gate: &Gate) -> bool {
        tokio::time::timeout(std::time::Duration::from_secs(60), gate.drained())
            .await
            .is_ok()
    }

    /// Review 26, finding 7: after a hand-over that raced with refused requests, the pool's
    /// `admitted` stayed one above `completed` for good, with nothing in flight. A request
    /// refused by a full limiter on the lock-free path (an adaptive pool's, or a slot taken
    /// by the hand-over) takes back the increment it made; a snapshot that catches one counts
    /// it in the limiter's `admitted`, which never goes back until real admissions make up
    /// the difference — and a limiter the pool moved off admits nothing more.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn admitted_meets_completed_at_rest_after_a_hand_over_raced_with_refusals() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::{Duration, Instant};
        let gate = Gate::new(gate_config(), None).await.unwrap();
        let pool = gate.state().pool("api").unwrap().clone();
        let limiter = pool.limit.limiter().clone();
        let running = limiter.try_acquire_owned().unwrap();
        let over = |pool: &Pool| {
            let c = pool.counts();
            c.counts.admitted as i64 - c.counts.completed as i64 - c.in_flight as i64
        };
        // Two threads knock on the full limiter (each refused at once) while the counts are
        // read, until a read has caught a refused attempt's passing increment.
        let stop = Arc::new(AtomicBool::new(false));
        let knockers: Vec<_> = (0..2)
            .map(|_| {
                let (limiter, stop) = (limiter.clone(), Arc::clone(&stop));
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        assert!(limiter.try_acquire_owned().is_err());
                    }
                })
            })
            .collect();
        let tried_until = Instant::now() + Duration::from_secs(60);
        while over(&pool) == 0 {
            assert!(Instant::now() < tried_until, "no read caught one in 60 s");
        }
        stop.store(true, Ordering::Relaxed);
        for k in knockers {
            k.join().unwrap();
        }
        // At most one a knocker: each may have been caught once in passing.
        let caught = over(&pool);
        assert!(
            (1..=2).contains(&caught),
            "the over-count the race leaves: {caught}"
        );

        // The pool moves to a new limiter; the old one's request ends and it is let go.
        hand_over(&gate);
        drop((running, pool));
        let pool = gate.state().pool("api").unwrap().clone();
        let waited_until = Instant::now() + Duration::from_secs(30);
        while !pool.idle() || pool.stats.retired.rebalance() {
            assert!(
                Instant::now() < waited_until,
                "the old limiter is not let go"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // As many more requests, on the limiter in force: real admissions make up what was
        // over (what the pool reports never goes back).
        for _ in 0..caught {
            drop(pool.limit.limiter().try_acquire_owned().unwrap());
        }
        let c = pool.counts();
        assert_eq!(c.in_flight, 0);
        assert_eq!(
            c.counts.admitted, c.counts.completed,
            "at rest, every request admitted has completed: {c:?}"
        );
        assert_eq!(c.counts.completed, 1 + caught as u64);
    }

    /// A request running on the old limiter after a hand-over (new queue settings) holds a
    /// slot of the new one, so the drain waits for it (it did before `drained` looked at the
    /// old limiters too: this pins that it still does).
    #[tokio::test(start_paused = true)]
    async fn the_drain_waits_for_a_request_the_old_limiter_runs() {
        let gate = Gate::new(gate_config(), None).await.unwrap();
        let running = gate.state().pools[0]
            .limit
            .limiter()
            .try_acquire_owned()
            .unwrap();
        hand_over(&gate);
        assert!(!drains(&gate).await, "drained with a request running");
        drop(running);
        assert!(drains(&gate).await);
    }

    /// Defect pinned: `drained` looked only at each pool's current limiter, so a bypassed
    /// request running on the old limiter after a hand-over (which holds no slot of the new
    /// one) was cut off by the exit.
    #[tokio::test(start_paused = true)]
    async fn the_drain_waits_for_a_bypassed_request_the_old_limiter_runs() {
        let gate = Gate::new(gate_config(), None).await.unwrap();
        let bypassed = gate.state().pools[0].limit.limiter().acquire_bypass();
        hand_over(&gate);
        assert!(
            !drains(&gate).await,
            "drained with a bypassed request running"
        );
        drop(bypassed);
        assert!(drains(&gate).await);
    }

    /// A request queued on the old limiter at a hand-over runs before the drain ends.
    #[tokio::test(start_paused = true)]
    async fn the_drain_waits_for_a_request_queued_on_the_old_limiter() {
        let gate = Gate::new(gate_config(), None).await.unwrap();
        let limiter = gate.state().pools[0].limit.limiter().clone();
        let running = limiter.try_acquire_owned().unwrap();
        let queued = tokio::spawn(async move { limiter.acquire_owned().await.map(drop) });
        tokio::task::yield_now().await;
        assert_eq!(gate.state().pools[0].counts().queued, 1);
        hand_over(&gate);
        drop(running);
        assert!(drains(&gate).await);
        // It ran before the drain ended, not after.
        assert!(queued.is_finished());
        queued.await.unwrap().unwrap();
    }

    /// Defect pinned: `drained` looked only at the pools in force, so a request still
    /// running on a pool that a reload removed (its client gone, the exchange finishing in
    /// its own task) was cut off by the exit instead of being waited for within the grace
    /// period. Also when a new pool carries the removed one on (a rename: same upstream),
    /// so that the removed one is not kept among those leaving.
    #[tokio::test(start_paused = true)]
    async fn the_drain_waits_for_a_request_on_a_pool_a_reload_removed() {
        for (case, other_port) in [("removed", 9001), ("renamed", 9000)] {
            let dir =
                std::env::temp_dir().join(format!("sluicegate-gate-{case}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("g.toml");
            let write = |name: &str, port: u16| {
                let text = format!(
                    "[[pools]]\nname = \"{name}\"\nupstream = \"http://127.0.0.1:{port}\"\nmax_concurrency = 1\n\n[[routes]]\npool = \"{name}\"\n"
                );
                std::fs::write(&path, text).unwrap();
            };
            write("api", 9000);
            let gate = Gate::new(config::read(&path).unwrap(), Some(path.clone()))
                .await
                .map(Arc::new)
                .unwrap();
            let running = gate.state().pools[0]
                .limit
                .limiter()
                .try_acquire_owned()
                .unwrap();
            write("other", other_port);
            gate.reload().await.unwrap();
            assert!(gate.state().pool("api").is_none());
            let carried = gate.state().pool("other").unwrap().counts().in_flight;
            assert_eq!(carried, usize::from(case == "renamed"), "{case}");
            let leaving = gate.leaving.lock().unwrap().len();
            assert_eq!(leaving, usize::from(case == "removed"), "{case}");
            assert!(
                !drains(&gate).await,
                "{case}: drained with a request running on the removed pool"
            );
            drop(running);
            assert!(drains(&gate).await, "{case}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// Review 2026-12-04-control-races, case 3 (decided, documented in docs/gate.md): a
    /// pool closed with `close` stays closed across reloads (and a rename) while the config
    /// has it. A reload that removes it forgets that it was closed: added back by a later
    /// reload, it starts open. It did only when the removed pool was idle by then; one
    /// whose requests still ran was carried on by the new one, closed state and all, so
    /// whether the pool came back closed hung on the timing of its last request.
    #[tokio::test(start_paused = true)]
    async fn a_closed_pool_removed_and_added_back_starts_open() {
        for running in [false, true] {
            let dir = std::env::temp_dir().join(format!(
                "sluicegate-gate-closed-{running}-{}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("g.toml");
            let write = |name: &str, port: u16| {
                let text = format!(
                    "[[pools]]\nname = \"{name}\"\nupstream = \"http://127.0.0.1:{port}\"\nmax_concurrency = 2\n\n[[routes]]\npool = \"{name}\"\n"
                );
                std::fs::write(&path, text).unwrap();
            };
            write("api", 9000);
            let gate = Gate::new(config::read(&path).unwrap(), Some(path.clone()))
                .await
                .map(Arc::new)
                .unwrap();
            let request = running.then(|| {
                gate.state().pools[0]
                    .limit
                    .limiter()
                    .try_acquire_owned()
                    .unwrap()
            });
            gate.set_open("api", false).unwrap();
            let closed = |gate: &Gate| {
                gate.state()
                    .pool("api")
                    .unwrap()
                    .limit
                    .limiter()
                    .is_closed()
            };
            assert!(closed(&gate));
            gate.reload().await.unwrap();
            assert!(closed(&gate), "a reload reopened a closed pool");
            // Removed (another upstream: no rename), then added back.
            write("other", 9001);
            gate.reload().await.unwrap();
            assert!(gate.state().pool("api").is_none());
            write("api", 9000);
            gate.reload().await.unwrap();
            assert!(
                !closed(&gate),
                "added back closed (removed with a request running: {running})"
            );
            // Carried on all the same: its limit counts the request still running.
            let in_flight = gate.state().pool("api").unwrap().counts().in_flight;
            assert_eq!(in_flight, usize::from(running));
            drop(request);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// Pins review 4's finding 3 at the state: after a reload, new connections take the
    /// file's `header_read_timeout`, `max_header_bytes` and `send_timeout`, the next
    /// shutdown its `grace_period`, and admin calls its token (they all kept the values read
    /// at start). A reload that would drop the token of an admin API still listening beyond
    /// loopback (its listener moves only at a restart) is refused.
    #[tokio::test]
    async fn a_reload_applies_the_connection_settings_the_grace_period_and_the_token() {
        let dir = std::env::temp_dir().join(format!("sluicegate-gate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (path, token) = (dir.join("g.toml"), dir.join("token"));
        std::fs::write(&token, "one\n").unwrap();
        let write = |top: &str, admin: &str| {
            let text = format!(
                "{top}\n[admin]\n{admin}\n[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9000\"\nmax_concurrency = 4\n\n[[routes]]\npool = \"api\"\n"
            );
            std::fs::write(&path, text).unwrap();
        };
        let with_token = format!(
            "listen = \"0.0.0.0:19999\"\ntoken_file = \"{}\"",
            token.display()
        );
        write("", &with_token);
        let gate = Gate::new(config::read(&path).unwrap(), Some(path.clone()))
            .await
            .map(Arc::new)
            .unwrap();
        assert_eq!(gate.state().admin_token.as_deref(), Some(&b"one"[..]));

        std::fs::write(&token, "two\n").unwrap();
        write(
            "header_read_timeout = \"1s\"\nmax_header_bytes = 8192\nsend_timeout = \"2s\"\ngrace_period = \"3s\"",
            &with_token,
        );
        assert!(gate.reload().await.unwrap().is_empty());
        let s = gate.state();
        assert_eq!(s.admin_token.as_deref(), Some(&b"two"[..]));
        assert_eq!(
            s.conn,
            crate::state::ConnSettings {
                header_read_timeout: Duration::from_secs(1),
                max_header_bytes: 8192,
                send_timeout: Duration::from_secs(2),
            }
        );
        assert_eq!(s.grace_period, Duration::from_secs(3));

        write("workers = 2", &with_token);
        assert_eq!(gate.reload().await.unwrap(), ["workers"]);

        write("", "listen = \"127.0.0.1:19999\"");
        let refused = gate.reload().await.unwrap_err().to_string();
        assert!(refused.contains("keep the token until then"), "{refused}");
        assert_eq!(gate.state().admin_token.as_deref(), Some(&b"two"[..]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Defect pinned (gate22 item 4): the warning that the pools may hold more open files
    /// than this process may open was written only at start, so a reload (or a limit
    /// raised through the admin API) that took the need past the limit said nothing, and
    /// the first sign was `Too many open files` under load. A change that raises the need
    /// past the limit now warns the same way; one that does not raise it stays quiet.
    #[tokio::test]
    async fn a_change_that_needs_more_open_files_than_the_limit_allows_warns() {
        let huge = sluicegate::concurrency::ConcurrencyLimiter::MAX_PERMITS;
        let dir =
            std::env::temp_dir().join(format!("sluicegate-gate-nofile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.toml");
        let write = |max: usize| std::fs::write(&path, one_pool(max)).unwrap();
        write(huge);
        let need = crate::open_files::needed_by(&config::read(&path).unwrap());
        if crate::open_files::soft_limit().is_none_or(|soft| soft >= need) {
            eprintln!("skipped: this process may open {need} files or more");
            std::fs::remove_dir_all(&dir).unwrap();
            return;
        }
        let (log, _guard) = crate::server::tests::capture();
        let warned = || {
            log.lines()
                .iter()
                .filter(|l| l.contains("open files at once"))
                .count()
        };
        write(4);
        let gate = Gate::new(config::read(&path).unwrap(), Some(path.clone()))
            .await
            .map(Arc::new)
            .unwrap();
        write(huge);
        gate.reload().await.unwrap();
        assert_eq!(warned(), 1, "a reload past the limit: {:#?}", log.lines());
        // The same need again, then a lower one: nothing new to say.
        gate.reload().await.unwrap();
        write(4);
        gate.reload().await.unwrap();
        assert_eq!(warned(), 1, "{:#?}", log.lines());
        let raise = LimitsChange {
            max_concurrency: Some(huge),
            ..LimitsChange::default()
        };
        gate.set_limits("api", &raise).unwrap();
        assert_eq!(warned(), 2, "a limit raised past it: {:#?}", log.lines());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A reload's install runs off the loop, in a blocking task that dropping the reload
    /// does not stop. One dropped (a stop signal) after it handed its install over, while
    /// that waited for the config lock, must not install afterwards: the task looks, under
    /// the lock, whether its reload is still wanted. It holds the reloads' turn until then.
    #[tokio::test]
    async fn a_reload_dropped_while_its_install_waits_installs_nothing() {
        let (dir, path, gate) = gate_on_file("dropped", 1).await;
        let write = |max: usize| std::fs::write(&path, one_pool(max)).unwrap();
        write(2);
        // Its first poll looks at the drain and then waits for the turn, held here until a
        // change is in progress: else its read and install could end before the test holds
        // that change (a busy machine, between a blocking task's start and its first poll).
        let turn = gate.hold_reloads().await;
        let mut reload = Box::pin(gate.reload());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(reload.as_mut().poll(&mut cx).is_pending());
        {
            // A change in progress: the install waits for it.
            let _change = gate.config();
            drop(turn);
            poll_pending_until(reload.as_mut(), "the file was not read", || {
                gate.files_read() > 0
            });
            // Past its read, its install handed over: dropped now.
            drop(reload);
        }
        // The reloads' turn comes back once the install task is done.
        drop(gate.hold_reloads().await);
        let limit = gate.state().pool("api").unwrap().limit.limiter().max();
        assert_eq!(limit, 1, "the dropped reload installed its file");
        // The next reload runs, whole.
        gate.reload().await.unwrap();
        assert_eq!(gate.state().pool("api").unwrap().limit.limiter().max(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Polls `reload` (pending each time: its work runs on a blocking thread, which this
    /// thread waits for without holding the test's runtime) until `done`; fails with `why`
    /// after a minute.
    fn poll_pending_until<F: Future>(
        mut reload: std::pin::Pin<&mut F>,
        why: &str,
        mut done: impl FnMut() -> bool,
    ) {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(reload.as_mut().poll(&mut cx).is_pending());
            assert!(std::time::Instant::now() < deadline, "{why}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The config file replaced by a pipe nobody writes (so too a hung mount).
    fn stuck_file(path: &std::path::Path) {
        std::fs::remove_file(path).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo failed");
    }

    /// Review 25: a reload dropped while its read is stuck (the config on a pipe nobody
    /// writes) gave the reloads' turn back while the read went on, so each reload tried
    /// after it stuck another blocking thread. The read holds the reader (not the turn)
    /// until it ends: the next reload waits for that read instead of starting its own.
    #[tokio::test]
    async fn a_reload_dropped_while_its_read_is_stuck_keeps_the_reader_until_the_read_ends() {
        let (dir, path, gate) = gate_on_file("stuck", 1).await;
        stuck_file(&path);

        // Its first poll takes the turn and the reader and starts the read, which waits for
        // a writer.
        let mut reload = Box::pin(gate.reload());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(reload.as_mut().poll(&mut cx).is_pending());
        drop(reload);
        let (turn_free, reader_kept) = (
            gate.reloads.try_lock().is_ok(),
            gate.reader.try_lock().is_err(),
        );
        // The next reload waits for the stuck read: reads nothing itself until it ends.
        let next = tokio::spawn({
            let gate = gate.clone();
            async move { gate.reload().await }
        });
        // The read ends (a writer at last; also before a failure, or the test's runtime
        // would wait for the stuck read for good).
        let writer = {
            let (path, text) = (path.clone(), one_pool(2));
            std::thread::spawn(move || std::fs::write(path, text).unwrap())
        };
        writer.join().unwrap();
        // The pipe goes: the next reload, once the stuck read ended, reads the file anew.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, one_pool(3)).unwrap();
        assert!(turn_free, "the dropped reload kept the turn");
        assert!(
            reader_kept,
            "the dropped reload's stuck read gave the reader back: the next reload reads again"
        );
        next.await.unwrap().unwrap();
        assert_eq!(gate.state().pool("api").unwrap().limit.limiter().max(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A read stuck for good (the config on a pipe nobody writes) held the reloads' turn for
    /// good: every later reload, SIGHUP or `POST /reload`, waited for ever, with no word.
    /// Now a reload whose read takes longer than [`READ_DEADLINE`] is refused, saying what to
    /// look at; the next one waits for that read (no second stuck thread) and is refused
    /// too; once the read ends, reloads work again. Paused time: a blocking task keeps the
    /// clock from running ahead by itself, so the test moves it.
    #[tokio::test(start_paused = true)]
    async fn a_read_stuck_for_good_is_refused_and_the_reloads_after_it_are_answered() {
        let (dir, path, gate) = gate_on_file("stuck-for-good", 1).await;
        stuck_file(&path);
        async fn answered(gate: &Arc<Gate>) -> Result<Vec<&'static str>, ChangeError> {
            let reload = tokio::spawn({
                let gate = gate.clone();
                async move { gate.reload().await }
            });
            for _ in 0..60 {
                if reload.is_finished() {
                    break;
                }
                tokio::time::advance(Duration::from_secs(1)).await;
                tokio::task::yield_now().await;
            }
            assert!(reload.is_finished(), "no answer after 60 s");
            reload.await.unwrap()
        }
        let first = answered(&gate).await.unwrap_err().to_string();
        assert!(
            first.contains("reading it has taken for over 10 s") && first.contains("a pipe"),
            "{first}"
        );
        let second = answered(&gate).await.unwrap_err().to_string();
        assert!(
            second.contains("an earlier reload has been reading it"),
            "{second}"
        );
        assert_eq!(gate.state().pool("api").unwrap().limit.limiter().max(), 1);

        // A writer at last: the stuck read ends, and the next reload reads the file anew.
        let writer = {
            let (path, text) = (path.clone(), one_pool(2));
            std::thread::spawn(move || std::fs::write(path, text).unwrap())
        };
        writer.join().unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, one_pool(3)).unwrap();
        // Not `answered`: the clock must not be moved past a read that takes real time.
        gate.reload().await.unwrap();
        assert_eq!(gate.state().pool("api").unwrap().limit.limiter().max(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Review 25: a reload dropped (a stop signal, a `POST /reload` whose client gave up)
    /// after its install task looked whether it was still wanted installs its file, as it
    /// should, but the line that says what a reload changed (review 22, finding 4) was
    /// written by the reload future after the install's end: the new config was in force
    /// with no line in the log. It is written with the install now.
    #[tokio::test]
    async fn a_reload_dropped_once_its_install_is_under_way_still_logs_what_changed() {
        let (dir, path, gate) = gate_on_file("logged", 1).await;
        let write = |max: usize| std::fs::write(&path, one_pool(max)).unwrap();
        let (log, _guard) = crate::server::tests::capture();
        write(2);
        let mut reload = Box::pin(gate.reload());
        {
            // The install takes `leaving` after the config lock and its look at `abandoned`:
            // held here, the install waits past that look, holding the config lock.
            let _leaving = gate.leaving.lock().unwrap();
            poll_pending_until(
                reload.as_mut(),
                "the install did not take the config lock",
                || gate.files_read() > 0 && gate.config.try_lock().is_err(),
            );
            drop(reload);
        }
        drop(gate.hold_reloads().await);
        assert_eq!(gate.state().pool("api").unwrap().limit.limiter().max(), 2);
        assert!(
            log.lines()
                .iter()
                .any(|l| l.contains("config reloaded: pools 1 → 1")),
            "a reload installed with no line in the log: {:#?}",
            log.lines()
        );
        // And the outcome's own line, which said so before only when the reload's future
        // saw its end.
        assert!(
            log.lines().iter().any(|l| l.contains("config reloaded")),
            "a reload installed and no \"config reloaded\": {:#?}",
            log.lines()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Review 25: [`Gate::files_read`] says it counts refused reloads too, but one whose
    /// file did not parse returned before it was counted: a test waiting for the read's end
    /// (`support::past_its_read`) waited for ever on a broken file.
    #[tokio::test]
    async fn a_reload_of_a_broken_file_counts_as_read() {
        let (dir, path, gate) = gate_on_file("broken", 1).await;
        std::fs::write(&path, "[[pools]\n").unwrap();
        assert!(gate.reload().await.is_err());
        assert_eq!(
            gate.files_read(),
            1,
            "a refused file was not counted as read"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Review 22, finding 4: a reload of a file caught part-written can install a config
    /// missing most routes, and the log said only "config reloaded". One line says what a
    /// reload changed: pools added, removed and changed, and the routes before and after.
    #[tokio::test]
    async fn a_reload_logs_what_it_changed_in_one_line() {
        let dir =
            std::env::temp_dir().join(format!("sluicegate-gate-changed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.toml");
        let write = |pools: &[(&str, usize)], routes: usize| {
            let mut text = String::new();
            for (name, max) in pools {
                text.push_str(&format!(
                    "[[pools]]\nname = \"{name}\"\nupstream = \"http://127.0.0.1:9000\"\nmax_concurrency = {max}\n"
                ));
            }
            for i in 0..routes {
                text.push_str(&format!(
                    "[[routes]]\npath_prefix = \"/{i}\"\npool = \"a\"\n"
                ));
            }
            std::fs::write(&path, text).unwrap();
        };
        let (log, _guard) = crate::server::tests::capture();
        write(&[("a", 1), ("b", 1), ("c", 1)], 3);
        let gate = Gate::new(config::read(&path).unwrap(), Some(path.clone()))
            .await
            .map(Arc::new)
            .unwrap();
        // `a` kept as it was, `b` changed, `c` removed, `d` added; 3 routes down to 1.
        write(&[("a", 1), ("b", 2), ("d", 1)], 1);
        gate.reload().await.unwrap();
        // One line says that the config is in force and what changed (it took two, the
        // second a bare "config reloaded").
        let said: Vec<String> = log
            .lines()
            .into_iter()
            .filter(|l| l.contains("reload"))
            .collect();
        assert_eq!(said.len(), 1, "{:#?}", log.lines());
        assert!(
            said[0].contains(
                "config reloaded: pools 3 → 3: 1 added, 1 removed, 1 changed; routes 3 → 1"
            ),
            "{said:?}"
        );
        // Nothing changed: said as that.
        gate.reload().await.unwrap();
        assert!(
            log.lines()
                .iter()
                .any(|l| l.contains("pools 3 → 3: 0 added, 0 removed, 0 changed; routes 1 → 1")),
            "{:#?}",
            log.lines()
        );
        // One that waits for a restart in part: the same line, a warning naming what waits.
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("workers = 2\n{text}")).unwrap();
        let before = log.lines().len();
        gate.reload().await.unwrap();
        let said: Vec<String> = log.lines()[before..]
            .iter()
            .filter(|l| l.contains("reload"))
            .cloned()
            .collect();
        assert_eq!(said.len(), 1, "{said:#?}");
        assert!(
            said[0].contains("WARN")
                && said[0].contains(
                    "config reloaded: pools 3 → 3: 0 added, 0 removed, 0 changed; routes 1 → 1"
                )
                && said[0].contains("workers"),
            "{said:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Defect pinned: a reload compared the new file with the last one loaded, so a file
    /// edited back to the running `listen` was warned about as a change for the next restart.
    #[test]
    fn a_reload_is_compared_with_what_runs() {
        let running = Bound::of(&config("127.0.0.1:8080", ""));
        assert!(running.changed_by(&config("127.0.0.1:8080", "")).is_empty());
        assert_eq!(
            running.changed_by(&config("127.0.0.1:8081", "")),
            ["listen"]
        );
        // Edited away and back: what runs never changed.
        assert!(running.changed_by(&config("127.0.0.1:8080", "")).is_empty());
        assert_eq!(
            running.changed_by(&config("127.0.0.1:8080", "workers = 2")),
            ["workers"]
        );
    }
}
