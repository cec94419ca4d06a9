//! A refused change leaves the live pools as they were: no limit changed, no pool closed,
//! no limiter handed over, no adaptive algorithm detached, even when the pool that fails
//! comes after pools whose change the build had already begun.
//!
//! The failure must come from the build itself (`State::build`, `Pool::prepare`), past the
//! config check: a config the check refuses never reaches the pools. Two such failures:
//!
//! - A build without the store its global pool `g` needs: the config is sound, but the store
//!   is the gate's, which no config check sees. (A reload hands the build the store in
//!   force, so this is the build's contract tested below the reload.)
//! - A change through the admin API (`PUT /pools/g/limits`), which does not pass the config
//!   check: `g`'s rate set to one an hour at a burst of 2000, whose `burst × interval` is over
//!   the 52 days the Redis scripts hold, refused by the global rate's build.
//!
//! The store's Redis need not answer for either (the gate starts on a store that is down),
//! so these tests need no Redis.
//!
//! Reloads that overlap: a reload whose `[store]` changes awaits the new Redis's answer, and
//! another reload can start meanwhile. That test holds a real `redis-server`, so that the
//! first reload's connection is pending when the second one runs.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use sluicegate::adaptive::Outcome;
use sluicegate_gate::config;
use sluicegate_gate::gate::{Gate, LimitsChange};
use sluicegate_gate::state::State;

fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(Waker::noop()))
}

/// A port nothing listens on: the store's Redis, down.
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The config: `[store]` on `port`, the `pools` given, and a global pool `g` with limit
/// `g_max` and a rate of `g_rate` at a burst of 2000.
fn text(port: u16, pools: &str, g_max: usize, g_rate: &str) -> String {
    format!(
        "[store]\nredis = \"redis://127.0.0.1:{port}/\"\ninstances = 1\n\n{pools}\n\
         [[pools]]\nname = \"g\"\nupstream = \"http://127.0.0.1:9\"\nscope = \"global\"\n\
         max_concurrency = {g_max}\nrate = \"{g_rate}\"\nburst = 2000\n\n\
         [[routes]]\npath_prefix = \"/g/\"\npool = \"g\"\n[[routes]]\npool = \"a\"\n"
    )
}

/// A gate serving `text`.
async fn gate(text: &str) -> Gate {
    Gate::new(config::parse(text, "gate.toml").unwrap(), None)
        .await
        .unwrap()
}

/// Builds the state `text` asks for on the gate's state in force, as a reload does, but
/// without the store: refused at `g`, the last pool, after the others were prepared.
fn refused_build(gate: &Gate, text: &str) {
    let config = config::parse(text, "gate.toml").expect("a sound config");
    let err = State::build(&config, Some(&gate.state()), &[], None)
        .expect_err("the build goes through without the store");
    assert!(
        err.contains("pool `g` is global but the gate has no store"),
        "refused for another reason: {err}"
    );
}

/// Static pools changed before the one that fails: `a` lowered from 4 to 2 and its rates
/// from 10/s to 1/s (pool-wide) and 5/s to 2/s (per client), `k` given the kill switch (0).
/// All were changed on the live limiters and rates before `g` failed: `a` ran at 2 and
/// `k` was closed while the admin API said the old config was in force.
#[tokio::test]
async fn a_refused_build_leaves_static_limits_rates_and_open_pools_as_they_were() {
    let port = dead_port();
    let pools = |a: usize, rate: u32, per_key: u32, k: usize| {
        format!(
            "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:9\"\nmax_concurrency = {a}\n\
             rate = \"{rate}/s\"\n[pools.per_key_rate]\nrate = \"{per_key}/s\"\n\
             [[pools]]\nname = \"k\"\nupstream = \"http://127.0.0.1:9\"\nmax_concurrency = {k}\n\
             [[routes]]\npath_prefix = \"/k/\"\npool = \"k\"\n"
        )
    };
    let gate = gate(&text(port, &pools(4, 10, 5, 4), 4, "1/s")).await;
    let before = gate.state();
    let a = before.pool("a").unwrap();
    let (rate, per_key) = (
        a.rate.as_ref().unwrap().quota(),
        a.per_key.as_ref().unwrap().policy(),
    );
    refused_build(&gate, &text(port, &pools(2, 1, 2, 0), 4, "1/s"));
    assert_eq!(
        a.per_key.as_ref().unwrap().policy(),
        per_key,
        "`a`'s per-client rate changed by a refused build"
    );
    assert_eq!(
        a.rate.as_ref().unwrap().quota(),
        rate,
        "`a`'s rate changed by a refused build"
    );
    assert!(
        std::sync::Arc::ptr_eq(&before, &gate.state()),
        "the state in force was replaced"
    );
    let a = before.pool("a").unwrap().limit.limiter();
    let k = before.pool("k").unwrap().limit.limiter();
    assert_eq!(a.max(), 4, "`a`'s limit changed by a refused build");
    assert_eq!(k.max(), 4, "`k`'s limit changed by a refused build");
    assert!(!k.is_closed(), "`k` closed by a refused build");
}

/// A global pool whose own limit changes (4 to 2) and whose rate cannot be kept by Redis, in
/// one change through the admin API. It used to be refused by the rate's build, after the
/// limiter in front of the store's limit had been lowered; the admin API now runs the file's
/// check first, so it is refused before any build (a build failing after a limit was lowered
/// is the reload test above, by a missing store). Either way nothing may change.
#[tokio::test]
async fn a_refused_limits_change_leaves_a_global_pools_local_limit_as_it_was() {
    let port = dead_port();
    let a = "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:9\"\nmax_concurrency = 4\n";
    let gate = gate(&text(port, a, 4, "1/s")).await;
    let before = gate.state();
    let change: LimitsChange =
        serde_json::from_str(r#"{"max_concurrency": 2, "rate": "1/h"}"#).unwrap();
    let err = gate
        .set_limits("g", &change)
        .expect_err("the change goes through")
        .to_string();
    assert!(
        err.contains("pool `g`") && err.contains("52 days"),
        "refused for another reason: {err}"
    );
    assert!(
        std::sync::Arc::ptr_eq(&before, &gate.state()),
        "the state in force was replaced"
    );
    let g = before.pool("g").unwrap().limit.limiter();
    assert_eq!(g.max(), 4, "`g`'s limit changed by a refused change");
}

/// An adaptive pool whose queue settings change (a hand-over to a new limiter) before the
/// pool that fails: the old limiter was detached from its algorithm and handed over (its
/// limit set to the slots of what it runs, 0 here) to a limiter that never came into force,
/// so the pool admitted nothing more and its algorithm no longer moved its limit.
#[tokio::test]
async fn a_refused_build_leaves_an_adaptive_pool_on_its_limiter_and_algorithm() {
    let port = dead_port();
    let pools = |queue: usize| {
        format!(
            "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:9\"\nmax_queue = {queue}\n\
             predictive = false\n[pools.adaptive]\nalgorithm = \"aimd\"\ninitial = 10\nmin = 1\n\
             max = 20\n"
        )
    };
    let gate = gate(&text(port, &pools(4), 4, "1/s")).await;
    let before = gate.state();
    refused_build(&gate, &text(port, &pools(8), 4, "1/s"));
    let pool = before.pool("a").unwrap();
    assert_eq!(
        pool.limit.limiter().max(),
        10,
        "`a`'s limit changed by a refused build"
    );
    let permit = match poll_once(&mut Box::pin(pool.admission())) {
        Poll::Ready(Ok(permit)) => permit,
        other => panic!("`a` admits nothing after a refused build: {other:?}"),
    };
    // A drop multiplies AIMD's limit by 0.9: the algorithm still sets the limit.
    pool.limit.hold(permit).finish(Outcome::Dropped);
    assert_eq!(
        pool.limit.limiter().max(),
        9,
        "`a`'s algorithm no longer sets its limit after a refused build"
    );
}

/// Every event's fields written while the guard lives, on this thread.
fn kept_log() -> (
    std::sync::Arc<std::sync::Mutex<String>>,
    tracing::dispatcher::DefaultGuard,
) {
    struct Keep(std::sync::Arc<std::sync::Mutex<String>>);
    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Keep {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            struct Fields<'a>(&'a mut String);
            impl tracing::field::Visit for Fields<'_> {
                fn record_debug(
                    &mut self,
                    field: &tracing::field::Field,
                    value: &dyn std::fmt::Debug,
                ) {
                    use std::fmt::Write as _;
                    let _ = writeln!(self.0, "{}={value:?}", field.name());
                }
            }
            event.record(&mut Fields(&mut self.0.lock().unwrap()));
        }
    }
    use tracing_subscriber::layer::SubscriberExt;
    let log = std::sync::Arc::default();
    let subscriber = tracing_subscriber::registry().with(Keep(std::sync::Arc::clone(&log)));
    (log, tracing::subscriber::set_default(subscriber))
}

/// A change that renames `a` to `b` (same upstream: `b` carries `a` on) and fails at `g`
/// said "pool `b` carries on pool `a`" though the build was refused and `a` stayed in
/// force: the line was written when the carry-overs were assigned, before any pool was
/// built. It is written once the build has gone through.
#[tokio::test]
async fn a_refused_build_does_not_say_a_pool_carries_another_on() {
    let port = dead_port();
    let pool = |name: &str| {
        format!(
            "[[pools]]\nname = \"{name}\"\nupstream = \"http://127.0.0.1:9\"\nmax_concurrency = 4\n"
        )
    };
    let gate = gate(&text(port, &pool("a"), 4, "1/s")).await;
    let renamed = text(port, &pool("b"), 4, "1/s").replace("pool = \"a\"", "pool = \"b\"");
    let (log, _guard) = kept_log();
    refused_build(&gate, &renamed);
    assert!(
        !log.lock().unwrap().contains("carries on"),
        "a refused build says a pool is carried on:\n{}",
        log.lock().unwrap()
    );
    assert!(gate.state().pool("a").is_some());
    // The same change with the store: built, and then said.
    let config = config::parse(&renamed, "gate.toml").unwrap();
    let state = gate.state();
    let built = State::build(&config, Some(&state), &[], state.store.as_ref()).unwrap();
    assert!(built.pool("b").is_some());
    let said = log.lock().unwrap().clone();
    assert!(
        said.contains("pool `b` carries on pool `a`"),
        "a build that went through does not say so:\n{said}"
    );
}

/// Defect pinned (review 2026-12-04-control-races, case 1): `Gate::reload` read the file and
/// awaited a changed `[store]`'s connection before it took the config lock, so a reload B
/// that started later (the file rewritten meanwhile) could install the newer file first and
/// reload A then install the older one over it: both answered `reloaded`, and the file the
/// operator last wrote was not in force.
///
/// A reads v1 (a new `[store]`: its connection to a real Redis is pending after one poll),
/// the file becomes v2 (no store, so B has no `.await` of its own), B is polled, then both
/// are driven to the end. Whole reloads now run one at a time in the order they started:
/// B waits for A, and v2 is in force.
#[tokio::test]
async fn overlapping_reloads_apply_the_files_in_the_order_they_were_read() {
    let redis = support::RedisServer::start();
    let path = support::write_config("overlap", &support::api_pool(None, 1));
    let gate = support::gate_from_file(&path).await;

    support::rewrite(&path, &support::api_pool(Some(&redis.url()), 2));
    let mut a = Box::pin(gate.reload());
    // A has read v1 (off the loop) and waits for the new store's answer.
    support::past_its_read(&gate, &mut a, 0).await;
    support::rewrite(&path, &support::api_pool(None, 3));
    let mut b = Box::pin(gate.reload());
    let b_first = poll_once(&mut b);
    let b_was_first = b_first.is_ready();
    let (a, b) = match b_first {
        Poll::Ready(b) => (a.await, b),
        Poll::Pending => tokio::join!(a, b),
    };
    assert_eq!(a.expect("reload A (v1) refused"), Vec::<&str>::new());
    assert_eq!(b.expect("reload B (v2) refused"), Vec::<&str>::new());
    let state = gate.state();
    assert_eq!(
        state.pool("api").unwrap().limit.limiter().max(),
        3,
        "the older file (v1, limit 2) is in force over the newer one (v2, limit 3); \
         B finished on its first poll: {}",
        b_was_first
    );
    assert!(
        state.store.is_none(),
        "v1's store is in force, not v2's none"
    );
}

/// A reload waiting for another (now that reloads run one at a time) is still refused
/// when the drain starts meanwhile, as is the one it waited for: the drain takes no change.
#[tokio::test]
async fn a_reload_that_waits_for_another_is_refused_once_the_drain_starts() {
    let redis = support::RedisServer::start();
    let path = support::write_config("overlap-drain", &support::api_pool(None, 1));
    let gate = support::gate_from_file(&path).await;
    support::rewrite(&path, &support::api_pool(Some(&redis.url()), 2));
    let mut a = Box::pin(gate.reload());
    support::past_its_read(&gate, &mut a, 0).await;
    let mut b = Box::pin(gate.reload());
    assert!(
        poll_once(&mut b).is_pending(),
        "reload B ran while reload A was under way"
    );
    gate.start_draining();
    let (a, b) = tokio::join!(a, b);
    for (name, r) in [("A", a), ("B", b)] {
        let e = r.expect_err("a reload went through after the drain started");
        assert!(
            matches!(e, sluicegate_gate::gate::ChangeError::Draining),
            "reload {name}: {e}"
        );
    }
    let state = gate.state();
    assert_eq!(state.pool("api").unwrap().limit.limiter().max(), 1);
    assert!(state.store.is_none());
}
