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
            if let Some(none) = &unlimited {
                if ours.p99.as_secs_f64() > 1.1 * none.p99.as_secs_f64() {
                    let ratio = ours.p99.as_secs_f64() / none.p99.as_secs_f64().max(1e-9);
                    misses.push(format!("p99 {ratio:.2}× no limit's > 1.1×"));
                }
            }
        }
        Regime::Over => {
            if r3(ours.goodput) < 0.95 {
                misses.push(format!("goodput {:.3} < 0.95", ours.goodput));
            }
            if let Some(o) = &oracle {
                if r3(ours.goodput) < r3(0.97 * o.goodput) {
                    misses.push(format!("goodput < 0.97 × oracle {:.3}", o.goodput));
                }
            }
            if let Some(b) = &best {
                if r3(ours.goodput) < r3(b.goodput) {
                    misses.push(format!("goodput < {} {:.3}", b.algo, b.goodput));
                }
            }
            if ours.p99_ratio > 2.0 {
                misses.push(format!("p99 {:.2}× unloaded > 2×", ours.p99_ratio));
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
            "| {} | {} | {:.3} | {} | {} | {:.2} | {:.1}% | {} | {} |",
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
            v.ours.p99_ratio,
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
