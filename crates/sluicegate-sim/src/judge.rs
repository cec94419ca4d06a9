//! The targets: each scenario's result for ours, judged against the best non-oracle
//! baseline, with the oracle fixed limit beside it.

use crate::algo::Algo;
use crate::scenario::{Regime, Scenario};
use crate::stats::Summary;
use std::fmt::Write as _;
use std::time::Duration;

/// Ours against the others in one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Scenario name.
    pub scenario: String,
    /// Under or over capacity.
    pub regime: Regime,
    /// Our summary.
    pub ours: Summary,
    /// The non-oracle baseline with the most goodput, if any ran.
    pub best: Option<Summary>,
    /// The oracle fixed limit (`fixed_c`), if it ran.
    pub oracle: Option<Summary>,
    /// No limit, if it ran.
    pub unlimited: Option<Summary>,
    /// Targets missed, in words; empty when every target is met.
    pub misses: Vec<String>,
}

/// Rounds to the three decimals the tables show, so "≥" means what a reader sees.
fn r3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// How far over the oracle's p99 ours may be where the oracle itself is over 2× unloaded: the
/// same 1.1 the under-capacity target allows over no limit.
const ORACLE_P99_SLACK: f64 = 1.1;

/// What an overloaded scenario's p99 is held to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum P99Bound {
    /// 2× the unloaded p99.
    Unloaded,
    /// Within [`ORACLE_P99_SLACK`] of the oracle's p99 ÷ unloaded (given), which is itself over
    /// 2×.
    Oracle(f64),
}

/// The p99 target is 2× the unloaded p99 — a limit that lets the resource queue shows there.
/// But the latency measured is arrival to answer, and in overload every admitted request
/// waits in the limiter's queue up to the scenario's queue timeout whatever the limit: where
/// that wait alone puts the oracle (a fixed limit equal to the workers, nothing queued inside
/// the resource) over 2×, no limit can meet it (`cache_3x`: a 10 ms queue timeout against a
/// 10 ms unloaded p99), and ours is held to the oracle's p99 instead.
fn p99_bound(oracle: Option<&Summary>) -> P99Bound {
    match oracle {
        Some(o) if o.p99_ratio > 2.0 => P99Bound::Oracle(o.p99_ratio),
        _ => P99Bound::Unloaded,
    }
}

/// Judges ours in `scenario`, given the mean summary of every algorithm that ran there.
/// `None` if ours did not run.
pub fn judge(scenario: &Scenario, all: &[Summary]) -> Option<Verdict> {
    let find = |a: Algo| all.iter().find(|s| s.algo == a.name()).cloned();
    let ours = find(Algo::Littles)?;
    let best = Algo::ALL
        .into_iter()
        .filter(|a| a.is_baseline())
        .filter_map(find)
        .max_by(|a, b| a.goodput.total_cmp(&b.goodput));
    let oracle = find(Algo::FixedExact);
    let unlimited = find(Algo::None);
    let regime = scenario.regime();
    let mut misses = Vec::new();
    match regime {
        Regime::Under => {
            if ours.rejected > 0.005 {
                misses.push(format!("rejects {:.1}% > 0.5%", ours.rejected * 100.0));
            }
            if let Some(none) = &unlimited
                && ours.p99.as_secs_f64() > 1.1 * none.p99.as_secs_f64()
            {
                let ratio = ours.p99.as_secs_f64() / none.p99.as_secs_f64().max(1e-9);
                misses.push(format!("p99 {ratio:.2}× no limit's > 1.1×"));
            }
        }
        Regime::Over => {
            if r3(ours.goodput) < 0.95 {
                misses.push(format!("goodput {:.3} < 0.95", ours.goodput));
            }
            if let Some(o) = &oracle
                && r3(ours.goodput) < r3(0.97 * o.goodput)
            {
                misses.push(format!("goodput < 0.97 × oracle {:.3}", o.goodput));
            }
            if let Some(b) = &best
                && r3(ours.goodput) < r3(b.goodput)
            {
                misses.push(format!("goodput < {} {:.3}", b.algo, b.goodput));
            }
            match p99_bound(oracle.as_ref()) {
                P99Bound::Unloaded if ours.p99_ratio > 2.0 => {
                    misses.push(format!("p99 {:.2}× unloaded > 2×", ours.p99_ratio));
                }
                P99Bound::Oracle(o) if ours.p99_ratio > ORACLE_P99_SLACK * o => {
                    misses.push(format!(
                        "p99 {:.2}× unloaded > {ORACLE_P99_SLACK} × the oracle's {o:.2}×",
                        ours.p99_ratio
                    ))
                }
                _ => {}
            }
        }
    }
    for (at, c) in &ours.converge_each {
        match c {
            Some(d) if *d <= Duration::from_secs(5) => {}
            Some(d) => misses.push(format!(
                "converges {:.1} s after t={} s > 5 s",
                d.as_secs_f64(),
                at.as_secs()
            )),
            None => misses.push(format!("never converges after t={} s", at.as_secs())),
        }
    }
    Some(Verdict {
        scenario: scenario.name.clone(),
        regime,
        ours,
        best,
        oracle,
        unlimited,
        misses,
    })
}

/// Our p99 ÷ unloaded, and the oracle's beside it where that is what ours is held to.
fn p99_cell(v: &Verdict) -> String {
    match (v.regime, p99_bound(v.oracle.as_ref())) {
        (Regime::Over, P99Bound::Oracle(o)) => format!("{:.2} (oracle {o:.2})", v.ours.p99_ratio),
        _ => format!("{:.2}", v.ours.p99_ratio),
    }
}

/// The verdicts as a markdown table.
pub fn table(verdicts: &[Verdict]) -> String {
    let mut t = String::from(
        "| scenario | load | ours goodput | best baseline | oracle fixed_c | ours p99/unloaded | ours rejected | ours converge | targets |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    let g = |s: &Option<Summary>| {
        s.as_ref()
            .map_or("-".into(), |s| format!("{:.3} {}", s.goodput, s.algo))
    };
    for v in verdicts {
        let converge = v
            .ours
            .converge_each
            .iter()
            .map(|(_, c)| c.map_or("never".into(), |d| format!("{:.1} s", d.as_secs_f64())))
            .collect::<Vec<_>>()
            .join(" / ");
        let verdict = if v.misses.is_empty() {
            "met".to_string()
        } else {
            format!("**missed**: {}", v.misses.join("; "))
        };
        let _ = writeln!(
            t,
            "| {} | {} | {:.3} | {} | {} | {} | {:.1}% | {} | {} |",
            v.scenario,
            match v.regime {
                Regime::Under => "under",
                Regime::Over => "over",
            },
            v.ours.goodput,
            g(&v.best),
            v.oracle
                .as_ref()
                .map_or("-".into(), |o| format!("{:.3}", o.goodput)),
            p99_cell(v),
            v.ours.rejected * 100.0,
            if converge.is_empty() {
                "-".into()
            } else {
                converge
            },
            verdict,
        );
    }
    let met = verdicts.iter().filter(|v| v.misses.is_empty()).count();
    let _ = writeln!(t, "\nTargets met in {met} of {} scenarios.", verdicts.len());
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(algo: Algo, goodput: f64, p99_ratio: f64) -> Summary {
        Summary {
            scenario: "s".into(),
            algo: algo.name(),
            goodput,
            good_of_offered: goodput / 3.0,
            p50: Duration::from_millis(5),
            p99: Duration::from_millis(20),
            p999: Duration::from_millis(30),
            p99_ratio,
            rejected: 0.6,
            timed_out: 0.05,
            converge: None,
            converge_each: Vec::new(),
        }
    }

    fn overloaded() -> Scenario {
        Scenario::parse(
            "s",
            "description = \"d\"\nduration = \"5s\"\ndeadline = \"100ms\"\n[upstream]\nworkers = 20\n\
             service = { dist = \"exponential\", mean = \"2ms\" }\n\
             [load]\nkind = \"open\"\nrate = 3.0\n",
        )
        .unwrap()
    }

    fn misses(ours_p99: f64, oracle_p99: f64) -> Vec<String> {
        let all = [
            summary(Algo::Littles, 1.0, ours_p99),
            summary(Algo::FixedExact, 1.0, oracle_p99),
        ];
        judge(&overloaded(), &all).unwrap().misses
    }

    #[test]
    fn overloaded_p99_is_held_to_twice_unloaded_when_the_oracle_meets_it() {
        assert!(misses(1.9, 1.3).is_empty());
        assert_eq!(misses(2.1, 1.3), ["p99 2.10× unloaded > 2×"]);
        // The oracle just under 2×: still 2×, not 1.1 × the oracle's.
        assert_eq!(misses(2.15, 1.99), ["p99 2.15× unloaded > 2×"]);
    }

    #[test]
    fn overloaded_p99_is_held_to_the_oracle_when_the_oracle_is_over_twice_unloaded() {
        assert!(misses(2.68, 2.59).is_empty());
        assert_eq!(
            misses(2.9, 2.59),
            ["p99 2.90× unloaded > 1.1 × the oracle's 2.59×"]
        );
    }
}
