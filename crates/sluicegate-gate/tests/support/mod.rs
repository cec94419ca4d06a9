//! End-to-end test kit: a real upstream that counts its own concurrency, the built
//! `sluicegate` binary run as a user runs it, and a small HTTP client.
#![allow(dead_code, unreachable_pub, unused_imports)]

mod client;
mod echo;
mod gate;
mod raw_upstream;
// The same `redis-server` support as `sluicegate-redis`'s tests, not a copy of it.
#[path = "../../../sluicegate-redis/tests/support/server.rs"]
mod redis;
#[path = "../../../sluicegate-redis/tests/support/tls.rs"]
mod tls;
mod upstream;

pub use client::{Reply, get, raw, request, status_and_body};
pub use echo::{Echo, answer_body, counter, in_flight, one_slot_gate, read_until};
pub use gate::{ConfigFile, Gate, rewrite, write_config};
pub use raw_upstream::{RawUpstream, Script};
pub use redis::{
    RedisServer, ReservedPort, assert_dies_with_a_killed_test_process, tied_to_this_process,
};
pub use tls::TestCerts;
pub use upstream::Upstream;

use std::time::Duration;

/// How long [`eventually`] and [`Gate::log_line`] wait before they fail: only a broken
/// test ever waits this long, so it is generous for a loaded 2-core CI machine (where a gate
/// process can take seconds to start or answer).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `cond` every 10 ms until it holds, failing after [`PATIENCE`] (by the clock, not a
/// count of polls: each poll may itself take long on a loaded machine). Waits for a state,
/// never measures time.
pub async fn eventually<F, Fut>(what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::time::Instant::now() < deadline {
        if cond().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for: {what}");
}

/// A config file's text: pool `api` at `max` (its upstream a closed port), routed to, with a
/// `[store]` on `redis` when given (a new store's connection: a reload's `.await`).
pub fn api_pool(redis: Option<&str>, max: usize) -> String {
    let store = redis.map_or(String::new(), |url| {
        format!("[store]\nredis = \"{url}\"\ninstances = 1\n\n")
    });
    format!(
        "{store}[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9\"\n\
         max_concurrency = {max}\n\n[[routes]]\npool = \"api\"\n"
    )
}

/// A gate of the library, in this process, started from the config file at `path` (which
/// its reloads read again).
pub async fn gate_from_file(path: &std::path::Path) -> std::sync::Arc<sluicegate_gate::gate::Gate> {
    let config = sluicegate_gate::config::read(path).unwrap();
    sluicegate_gate::gate::Gate::new(config, Some(path.to_owned()))
        .await
        .map(std::sync::Arc::new)
        .unwrap()
}

/// Polls `reload` (a [`Gate::reload`](sluicegate_gate::gate::Gate::reload) future, with a
/// waker that does nothing) until the gate has read its file, `read_before` being
/// [`files_read`](sluicegate_gate::gate::Gate::files_read) before it started: the read runs
/// off the loop, so one poll only starts it. The poll that sees the read goes on to what
/// follows it (a new `[store]`'s connection), where the reload must still be pending.
pub async fn past_its_read<F>(gate: &sluicegate_gate::gate::Gate, reload: &mut F, read_before: u64)
where
    F: std::future::Future + Unpin,
{
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(
            std::pin::Pin::new(&mut *reload).poll(&mut cx).is_pending(),
            "the reload did not wait for the new store's answer"
        );
        if gate.files_read() > read_before {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the reload did not read its file"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}
