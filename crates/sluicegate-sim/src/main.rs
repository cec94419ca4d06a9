//! `sluicegate-sim`: runs the simulator's scenarios and prints the scorecard.
//!
//! ```text
//! sluicegate-sim scorecard [--out DIR] [--seed N] [--seeds COUNT] [--scenario NAME] [--algo NAME]
//! ```

use sluicegate_sim::algo::Algo;
use sluicegate_sim::report;
use sluicegate_sim::scenario::Scenario;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: sluicegate-sim scorecard [--out DIR] [--seed N] [--seeds COUNT] [--scenario NAME] [--algo NAME]";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() != Some("scorecard") {
        eprintln!("{USAGE}");
        return ExitCode::from(64);
    }
    let mut out = PathBuf::from("target/sim");
    let mut seed = 1u64;
    let mut seeds = 1u64;
    let mut scenarios = Scenario::all();
    let mut algos = Algo::ALL.to_vec();
    while let Some(flag) = args.next() {
        let Some(value) = args.next() else {
            eprintln!("{flag} needs a value\n{USAGE}");
            return ExitCode::from(64);
        };
        match flag.as_str() {
            "--out" => out = PathBuf::from(value),
            "--seed" => match value.parse() {
                Ok(s) => seed = s,
                Err(_) => {
                    eprintln!("--seed needs a number\n{USAGE}");
                    return ExitCode::from(64);
                }
            },
            "--seeds" => match value.parse() {
                Ok(n) if n > 0 => seeds = n,
                _ => {
                    eprintln!("--seeds needs a positive number\n{USAGE}");
                    return ExitCode::from(64);
                }
            },
            "--scenario" => scenarios.retain(|s| s.name == value),
            "--algo" => algos.retain(|a| a.name() == value),
            _ => {
                eprintln!("unknown flag {flag}\n{USAGE}");
                return ExitCode::from(64);
            }
        }
    }
    match report::scorecard(&scenarios, &algos, seed, seeds, &out) {
        Ok(table) => {
            println!("{table}");
            println!("CSV and SVG charts in {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("sluicegate-sim: {e}");
            ExitCode::FAILURE
        }
    }
}
