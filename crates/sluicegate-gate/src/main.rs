//! `sluicegate`: tracing → config → validate (exit 64 on a bad config) → runtime → serve →
//! wait for a signal → drain with a grace period.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use sluicegate_gate::cli::{Cli, Command};
use sluicegate_gate::server::{Signals, StartError, Started, check_ready, raise_open_files_limit};

/// The proxy allocates a few small buffers per request (header maps, bodies, tasks);
/// mimalloc's thread-local free lists make that a fraction of glibc malloc's cost
/// (BENCHMARKS.md, *The gate against nginx and HAProxy*).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// STYLE.md: exit 64 (sysexits `EX_USAGE`) for a config that cannot work.
const EXIT_BAD_CONFIG: u8 = 64;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = match cli.command {
        // The demo and its tools draw their own view: the gate inside them logs only trouble.
        Command::Demo(_) | Command::Upstream(_) | Command::Load(_) => "warn",
        // `check` prints what it finds itself, located at the file.
        Command::Check { .. } => "error",
        Command::Serve(_) => "info",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level)),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let serve = match cli.command {
        Command::Check { config } => {
            let checked = sluicegate_gate::config::read(&config)
                .map_err(|e| e.to_string())
                .and_then(|c| check_ready(&c).map_err(|e| format!("{}: {e}", config.display())));
            return match checked {
                Ok(warnings) => {
                    for w in warnings {
                        eprintln!("{}: warning: {w}", config.display());
                    }
                    println!("{}: ok", config.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::from(EXIT_BAD_CONFIG)
                }
            };
        }
        Command::Serve(serve) => serve,
        Command::Demo(args) => return sluicegate_gate::demo::demo(args),
        Command::Upstream(args) => return sluicegate_gate::demo::upstream(args),
        Command::Load(args) => return sluicegate_gate::demo::load(args),
    };
    let (config, path) = match serve.config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(EXIT_BAD_CONFIG);
        }
    };
    raise_open_files_limit();
    sluicegate_gate::open_files::warn_if_low(
        sluicegate_gate::open_files::needed_by(&config),
        "the pools' limits and queues",
    );
    // Single-threaded: with more than one worker, `serve` starts a runtime per worker thread
    // and this one only accepts, answers the admin API and handles signals.
    let runtime = match sluicegate_gate::server::runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async move {
        let started = match Started::bind(config, path).await {
            Ok(s) => s,
            Err(e @ StartError::Config(_)) => {
                eprintln!("{e}");
                return ExitCode::from(EXIT_BAD_CONFIG);
            }
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        };
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let gate = started.gate.clone();
        let mut signals = Signals::listen();
        let server = tokio::spawn(started.serve(stopped));
        signals.stop(&gate).await;
        gate.start_draining();
        let _ = stop.send(true);
        tokio::select! {
            _ = server => ExitCode::SUCCESS,
            () = signals.stop(&gate) => {
                tracing::warn!("second signal: stopping now, requests unfinished");
                ExitCode::FAILURE
            }
        }
    });
    // Without waiting for the blocking threads: a reload abandoned by the stop may still
    // read or build off the loop (a config on a pipe no one writes blocks for good), and it
    // installs nothing now that the drain has begun.
    runtime.shutdown_background();
    code
}
