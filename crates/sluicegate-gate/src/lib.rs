//! The sluicegate gate: a reverse proxy that puts the library's limits in front of any HTTP
//! service. The `sluicegate` binary is a thin `main.rs` over this crate.
//!
//! | module | what it is |
//! |---|---|
//! | [`config`] | the TOML config (and the quick form's flags), checked with located errors |
//! | [`pool`] | pools: an upstream with its limiter, queue, rates and counters |
//! | [`path`] | the normal form of a request path, which routes match and the upstream gets |
//! | [`client_address`] | the client's address behind trusted proxies (`X-Forwarded-For`, `Forwarded`) |
//! | [`state`] | routes, pools and bypass rules in force, swapped whole on reload |
//! | [`buffers`] | the gate-wide count and cap of what reading ahead holds, both ways |
//! | [`proxy`] | one request: route, bypass, rate, queue, forward; the upstream client |
//! | [`gate`] | the running gate: reload and live limit changes |
//! | [`admin`] | the admin API (status, limits, close / open, reload, metrics) |
//! | [`dashboard`] | the live dashboard page and the samples it draws |
//! | [`metrics`] | Prometheus text |
//! | [`server`] | listeners, signals, graceful shutdown |
//! | [`open_files`] | the open files a load needs, and what to say when they run out |
//! | [`cli`] | the command line |
//! | [`demo`] | `sluicegate demo`: a slow upstream, load, a live view and a closing table |
//!
//! `docs/gate.md` documents the config and the admin API.

pub mod admin;
pub mod buffers;
pub mod cli;
pub mod client_address;
pub mod config;
pub mod dashboard;
pub mod demo;
pub mod gate;
pub mod metrics;
pub mod open_files;
pub mod path;
pub mod pool;
pub mod proxy;
pub mod server;
pub mod state;

/// Reloads `gate`'s config file, logging the outcome: a bad config is refused with the
/// reason and the config in force keeps serving. Returns the changed settings that wait for
/// a restart (see [`gate::Gate::reload`]).
///
/// # Errors
///
/// Why the new config was refused ([`gate::ChangeError`]: the file's error, or the drain).
pub async fn reload(
    gate: &std::sync::Arc<gate::Gate>,
) -> Result<Vec<&'static str>, gate::ChangeError> {
    // A reload that installs logs so itself, with its install (which runs on when the reload
    // is dropped: a stop signal, a `POST /reload` whose client left): see `Gate::reload`.
    match gate.reload().await {
        Ok(restart) => Ok(restart),
        // The quick form has no file: nothing is wrong with the gate (a SIGHUP from log
        // rotation), so not an error an alert would fire on.
        Err(e) if !gate.has_file() => {
            tracing::warn!(
                "reload asked, but the gate runs from flags: there is no config file to reload, nothing changed (start it with `--config FILE` to reload)"
            );
            Err(e)
        }
        Err(e) => {
            tracing::error!("reload refused, the config in force stays: {e}");
            Err(e)
        }
    }
}
