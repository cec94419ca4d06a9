//! The `sluicegate-sim` binary as a user meets it: help on every command, unknown names
//! turned away with the valid ones listed, bad scenario files named with the reason, and a
//! small scorecard from a scenario file.

use std::process::{Command, Output};

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluicegate-sim"))
        .args(args)
        .output()
        .expect("running sluicegate-sim")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn help_works_on_every_command_and_explains_the_columns() {
    for args in [
        &["--help"][..],
        &["help"],
        &["scorecard", "--help"],
        &["scorecard", "-h"],
        &["list", "--help"],
        &["ceiling", "--help"],
    ] {
        let o = sim(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).contains("Usage"), "{args:?}: {}", stdout(&o));
    }
    let help = stdout(&sim(&["scorecard", "--help"]));
    for column in ["goodput", "p99/unloaded", "rejected", "converge", "littles"] {
        assert!(help.contains(column), "no {column} in:\n{help}");
    }
}

#[test]
fn no_command_is_a_usage_error() {
    let o = sim(&[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("Usage"), "{}", stderr(&o));
}

#[test]
fn unknown_scenario_is_rejected_with_the_valid_names() {
    let o = sim(&[
        "scorecard",
        "--scenario",
        "overload_30x",
        "--out",
        "target/sim-test",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("unknown scenario 'overload_30x'"), "{err}");
    assert!(
        err.contains("overload_3x") && err.contains("capacity_halves"),
        "{err}"
    );
    assert!(stdout(&o).is_empty(), "no table: {}", stdout(&o));
}

/// A scenario file `tiny.toml` in `dir`: 5 workers of 10–30 ms at 2× for 3 s.
fn tiny_scenario(dir: &std::path::Path) -> std::path::PathBuf {
    let file = dir.join("tiny.toml");
    std::fs::write(
        &file,
        "description = \"tiny\"\nduration = \"3s\"\ndeadline = \"1s\"\n[upstream]\nworkers = 5\nservice = { dist = \"uniform\", min = \"10ms\", max = \"30ms\" }\n[load]\nkind = \"open\"\nrate = 2.0\n",
    )
    .unwrap();
    file
}

#[test]
fn ceiling_rejects_an_unknown_scenario_too() {
    let o = sim(&["ceiling", "--scenario", "overload_30x"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("unknown scenario 'overload_30x'"));
}

#[test]
fn ceiling_prints_the_best_fixed_limit_of_a_scenario_file() {
    let dir = temp_dir("ceiling");
    let file = tiny_scenario(&dir);
    let o = sim(&[
        "ceiling",
        "--scenarios",
        file.to_str().unwrap(),
        "--seeds",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    // 5 workers that slow as requests wait inside: the best fixed limit is 5 or 6.
    assert!(
        table.contains("| tiny | 5 | ")
            && (table.contains("| 5 (1.00×") || table.contains("| 6 (1.20×")),
        "{table}"
    );
    // Progress names each limit tried, the worker count among them.
    assert!(
        stderr(&o).contains("fixed     5: goodput"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unknown_algorithm_is_rejected_with_the_valid_names() {
    let o = sim(&["scorecard", "--algo", "ours2", "--out", "target/sim-test"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("ours2"), "{err}");
    assert!(
        err.contains("littles") && err.contains("gradient2_w"),
        "{err}"
    );
}

#[test]
fn list_names_every_scenario_and_algorithm() {
    let o = sim(&["list"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains("latency_spike") && out.contains("fixed_c/2"),
        "{out}"
    );
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sluicegate-sim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_bad_scenario_file_is_named_with_line_and_reason() {
    let dir = temp_dir("bad");
    let file = dir.join("typo.toml");
    std::fs::write(
        &file,
        "description = \"x\"\nduration = \"10s\"\ndeadline = \"1s\"\n[upstream]\nworkers = 5\nservice = { dist = \"exponential\", mean = \"10\" }\n[load]\nkind = \"open\"\nrate = 1.0\n",
    )
    .unwrap();
    let o = sim(&["scorecard", "--scenarios", file.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("typo.toml"), "{err}");
    assert!(err.contains("line 6"), "{err}");
    assert!(err.contains("needs a unit"), "{err}");
}

#[test]
fn a_scenario_file_runs_and_writes_the_scorecard() {
    let dir = temp_dir("run");
    let file = tiny_scenario(&dir);
    let out = dir.join("out");
    let o = sim(&[
        "scorecard",
        "--scenarios",
        file.to_str().unwrap(),
        "--algo",
        "littles",
        "--algo",
        "fixed_c",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.contains("| tiny | littles |"), "{table}");
    assert!(table.contains("| tiny | over |"), "{table}");
    for f in [
        "scorecard.csv",
        "scorecard.md",
        "tiny.svg",
        "timeline_tiny.csv",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    // The trace only where asked for.
    assert!(!out.join("trace_tiny.csv").exists());
    let traced = dir.join("traced");
    let o = sim(&[
        "scorecard",
        "--scenarios",
        file.to_str().unwrap(),
        "--algo",
        "littles",
        "--quiet",
        "--trace",
        "--out",
        traced.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let trace = std::fs::read_to_string(traced.join("trace_tiny.csv")).unwrap();
    assert!(trace.starts_with("algorithm,t_s,limit,phase,"), "{trace}");
    assert!(trace.lines().skip(1).all(|l| l.starts_with("littles,")));
}
