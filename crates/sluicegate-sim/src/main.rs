//! `sluicegate-sim`: runs the simulator's scenarios and prints the scorecard.
//!
//! ```text
//! sluicegate-sim scorecard [--scenarios DIR_OR_FILE] [--scenario NAME]... [--algo NAME]...
//!                          [--seed N] [--seeds COUNT] [--threads N] [--out DIR]
//!                          [--baselines CSV] [--trace]
//! sluicegate-sim ceiling [--scenarios DIR_OR_FILE] [--scenario NAME]... [--seed N] [--seeds COUNT]
//! sluicegate-sim list [--scenarios DIR_OR_FILE]
//! ```

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use sluicegate_sim::algo::Algo;
use sluicegate_sim::ceiling;
use sluicegate_sim::report::{self, Options};
use sluicegate_sim::scenario::{Regime, Scenario};
use std::path::PathBuf;
use std::process::ExitCode;

const COLUMNS: &str = "\
Columns of the full table (one row per scenario and algorithm; with --seeds, the mean over
seeds and the worst seed's convergence):
  goodput        answered within the deadline ÷ what the upstream could have served of the
                 offered load (∫ min(capacity, offered) × success rate dt)
  good/offered   answered within the deadline ÷ arrivals
  p50/p99/p999   arrival-to-answer latency of requests the upstream served, ms
  p99/unloaded   p99 of (latency ÷ the upstream's unloaded p99 when the request arrived)
  rejected       turned away by the limiter (queue full, predicted timeout) ÷ arrivals
  timed out      queue timeouts + answers after the deadline + unfinished ÷ arrivals
  converge       longest time from an upstream change to the first good 1 s window
                 (goodput ≥ 0.95 of possible, p99 ≤ 2× unloaded); '-' without changes

The targets table judges `littles` (ours) in each scenario: under capacity (load ≤ 0.85×),
rejections ≤ 0.5 % and p99 ≤ 1.1× no limit's; over capacity, goodput ≥ 0.95, ≥ 0.97× the
oracle fixed_c and ≥ the best non-oracle baseline, p99 ≤ 2× unloaded (or, where the oracle's
own p99 is over 2× — its wait in the limiter's queue alone can be — within 1.1× of the
oracle's); after every upstream change, converged within 5 s.";

/// Deterministic overload simulator for sluicegate's adaptive concurrency limits: the real
/// limiter and algorithms against a simulated upstream, in virtual time.
#[derive(Debug, Parser)]
#[command(name = "sluicegate-sim", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run scenarios with algorithms; print the targets and full tables, write CSV and SVG.
    #[command(after_help = COLUMNS)]
    Scorecard {
        /// A scenario file or a directory of *.toml scenario files [default: the built-in set]
        #[arg(long, value_name = "DIR_OR_FILE")]
        scenarios: Option<PathBuf>,
        /// Run only this scenario (repeatable; `list` names them)
        #[arg(long, value_name = "NAME")]
        scenario: Vec<String>,
        /// Run only this algorithm (repeatable)
        #[arg(long, value_name = "NAME")]
        algo: Vec<Algo>,
        /// First seed
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Seeds per scenario and algorithm; tables show the mean
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        seeds: u64,
        /// Run in real time on a multi-threaded runtime of N threads instead of virtual time
        /// (the limiter's concurrent paths under the adaptive limit; not deterministic)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// Directory for scorecard.csv, scorecard.md, timeline CSVs and SVG charts
        #[arg(long, default_value = "target/sim")]
        out: PathBuf,
        /// No per-run progress on stderr
        #[arg(long, short)]
        quiet: bool,
        /// An earlier run's scorecard.csv: its rows of the algorithms not run now join the
        /// tables and the judging (re-run ours alone against unchanged baselines)
        #[arg(long, value_name = "CSV")]
        baselines: Option<PathBuf>,
        /// Also write trace_<scenario>.csv: what each algorithm said of itself every 100 ms
        /// of the first seed's run (phase, knee, min RT, floor, queue, rates, its last move
        /// of the limit and why); ours fills it, Vegas gives its no-load RTT as min RT, the
        /// other baselines leave it empty
        #[arg(long)]
        trace: bool,
    },
    /// The best a fixed limit does in each overloaded scenario: searches fixed limits from
    /// 0.5 to 6 × the worker count and prints the best one's goodput beside the worker
    /// count's, and whether any fixed limit reaches 0.95 of capacity.
    Ceiling {
        /// A scenario file or a directory of *.toml scenario files [default: the built-in set]
        #[arg(long, value_name = "DIR_OR_FILE")]
        scenarios: Option<PathBuf>,
        /// Search only this scenario (repeatable; `list` names them; under-capacity ones too)
        #[arg(long, value_name = "NAME")]
        scenario: Vec<String>,
        /// First seed
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Seeds per limit; a limit's goodput is their mean
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
        seeds: u64,
        /// No per-limit progress on stderr
        #[arg(long, short)]
        quiet: bool,
    },
    /// List the scenarios (with what each shows) and the algorithms.
    List {
        /// A scenario file or a directory of *.toml scenario files [default: the built-in set]
        #[arg(long, value_name = "DIR_OR_FILE")]
        scenarios: Option<PathBuf>,
    },
}

fn load(path: Option<&PathBuf>) -> Result<Vec<Scenario>, String> {
    path.map_or_else(|| Ok(Scenario::builtin()), |p| Scenario::load(p))
}

/// The scenarios named (all of them if none is), or the usage error naming the valid ones.
fn choose(mut all: Vec<Scenario>, names: &[String]) -> Vec<Scenario> {
    if let Some(bad) = names.iter().find(|n| !all.iter().any(|s| &s.name == *n)) {
        let valid: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        fail(
            ErrorKind::InvalidValue,
            format!(
                "unknown scenario '{bad}'\n  [possible values: {}]",
                valid.join(", ")
            ),
        );
    }
    if !names.is_empty() {
        all.retain(|s| names.contains(&s.name));
    }
    all
}

fn fail(kind: ErrorKind, msg: String) -> ! {
    Cli::command().error(kind, msg).exit()
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::List { scenarios } => {
            let scenarios = load(scenarios.as_ref()).unwrap_or_else(|e| fail(ErrorKind::Io, e));
            println!("scenarios:");
            for s in &scenarios {
                println!("  {:<24} {}", s.name, s.description);
            }
            println!("algorithms:");
            for a in Algo::ALL {
                println!("  {:<24} {}", a.name(), a.about());
            }
            ExitCode::SUCCESS
        }
        Command::Ceiling {
            scenarios,
            scenario,
            seed,
            seeds,
            quiet,
        } => {
            let all = load(scenarios.as_ref()).unwrap_or_else(|e| fail(ErrorKind::Io, e));
            let chosen = choose(all, &scenario);
            let chosen: Vec<Scenario> = if scenario.is_empty() {
                chosen
                    .into_iter()
                    .filter(|s| s.regime() == Regime::Over)
                    .collect()
            } else {
                chosen
            };
            let mut ceilings = Vec::new();
            for s in &chosen {
                let c = ceiling::search(s, seed, seeds, &mut |limit, goodput| {
                    if !quiet {
                        eprintln!("{:<24} fixed {limit:>5}: goodput {goodput:.3}", s.name);
                    }
                });
                ceilings.push(c);
            }
            println!("{}", ceiling::table(&ceilings));
            ExitCode::SUCCESS
        }
        Command::Scorecard {
            scenarios,
            scenario,
            algo,
            seed,
            seeds,
            threads,
            out,
            quiet,
            baselines,
            trace,
        } => {
            let all = load(scenarios.as_ref()).unwrap_or_else(|e| fail(ErrorKind::Io, e));
            let all = choose(all, &scenario);
            let algos = if algo.is_empty() {
                Algo::ALL.to_vec()
            } else {
                algo
            };
            let opts = Options {
                seed,
                seeds,
                threads: threads.map(usize::from),
                progress: !quiet,
                trace,
                baselines: baselines.map_or_else(Vec::new, |p| {
                    std::fs::read_to_string(&p)
                        .map_err(|e| e.to_string())
                        .and_then(|t| report::baselines::read(&t))
                        .unwrap_or_else(|e| fail(ErrorKind::Io, format!("{}: {e}", p.display())))
                }),
            };
            match report::scorecard(&all, &algos, &opts, &out) {
                Ok(card) => {
                    println!("{}", card.markdown());
                    println!("CSV, markdown and SVG charts in {}", out.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("sluicegate-sim: writing to {}: {e}", out.display());
                    ExitCode::FAILURE
                }
            }
        }
    }
}
