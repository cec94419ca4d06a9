//! `sluicegate`: tracing → config → validate (exit 64 on a bad config) → runtime → serve →
//! wait for a signal → drain with a grace period.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use sluicegate_gate::cli::{Cli, Command};
use sluicegate_gate::server::{Started, signals};

/// sysexits.h `EX_CONFIG`... as STYLE.md asks: 64 (`EX_USAGE`) for a config that cannot work.
const EXIT_BAD_CONFIG: u8 = 64;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The demo and its tools draw their own view: the gate inside them logs only trouble.
    let quiet = matches!(
        cli.command,
        Command::Demo(_) | Command::Upstream(_) | Command::Load(_)
    );
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(if quiet { "warn" } else { "info" })
            }),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let serve = match cli.command {
        Command::Check { config } => {
            return match sluicegate_gate::config::read(&config) {
                Ok(_) => {
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
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = config.workers {
        runtime.worker_threads(n);
    }
    let runtime = match runtime.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let started = match Started::bind(config, path).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        };
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let gate = started.gate.clone();
        let server = tokio::spawn(started.serve(stopped));
        signals(gate).await;
        let _ = stop.send(true);
        let _ = server.await;
        ExitCode::SUCCESS
    })
}
