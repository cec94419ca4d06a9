//! Scenarios as data: the built-in files parse and span the space the scorecard promises,
//! the distributions have the means they claim, bad files are refused with a reason, and a
//! small scorecard judges ours.

use rand::SeedableRng;
use rand::rngs::SmallRng;
use sluicegate_sim::algo::Algo;
use sluicegate_sim::report::{self, Options};
use sluicegate_sim::scenario::{Regime, Scenario};
use sluicegate_sim::upstream::Service;
use std::collections::HashSet;
use std::time::Duration;

#[test]
fn builtin_scenarios_parse_and_span_workers_service_times_and_load() {
    let all = Scenario::builtin();
    assert!(all.len() >= 20, "{} scenarios", all.len());
    let names: HashSet<&str> = all.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), all.len(), "names are unique");
    let workers: Vec<usize> = all.iter().map(|s| s.upstream.workers).collect();
    let means: Vec<Duration> = all.iter().map(|s| s.upstream.service.mean()).collect();
    let (wmin, wmax) = (workers.iter().min().unwrap(), workers.iter().max().unwrap());
    let (mmin, mmax) = (means.iter().min().unwrap(), means.iter().max().unwrap());
    assert!(*wmax >= 100 * wmin, "workers {wmin}..{wmax}");
    assert!(*mmax >= *mmin * 300, "service {mmin:?}..{mmax:?}");
    let under = all.iter().filter(|s| s.regime() == Regime::Under).count();
    assert!(
        under >= 4 && all.len() - under >= 12,
        "{under} under capacity"
    );
    assert!(all.iter().filter(|s| !s.change_times().is_empty()).count() >= 3);
}

#[test]
fn each_distribution_has_the_mean_it_claims() {
    let cases = [
        r#"{ dist = "exponential", mean = "50ms", min = "20ms" }"#,
        r#"{ dist = "uniform", min = "20ms", max = "60ms" }"#,
        r#"{ dist = "lognormal", median = "20ms", sigma = 1.0 }"#,
        r#"{ dist = "mixture", of = [{ weight = 0.9, dist = "exponential", mean = "10ms" }, { weight = 0.1, dist = "uniform", min = "400ms", max = "600ms" }] }"#,
    ];
    for text in cases {
        #[derive(serde::Deserialize)]
        struct W {
            service: Service,
        }
        let w: W = toml::from_str(&format!("service = {text}")).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let n = 200_000;
        let sum: f64 = (0..n)
            .map(|_| w.service.sample(&mut rng).as_secs_f64())
            .sum();
        let (got, want) = (sum / n as f64, w.service.mean().as_secs_f64());
        assert!((got - want).abs() / want < 0.02, "{text}: {got} vs {want}");
    }
}

#[test]
fn bad_scenarios_are_refused_with_a_reason() {
    let base = "description = \"x\"\nduration = \"10s\"\ndeadline = \"1s\"\n[load]\nkind = \"open\"\nrate = 1.0\n";
    let cases = [
        (
            "[upstream]\nworkers = 0\nservice = { dist = \"exponential\", mean = \"10ms\" }\n",
            "workers must be at least 1",
        ),
        (
            "[upstream]\nworkers = 5\nservice = { dist = \"exponential\", mean = \"10ms\", min = \"20ms\" }\n",
            "min < mean",
        ),
        (
            "[upstream]\nworkers = 5\nservice = { dist = \"gamma\", mean = \"10ms\" }\n",
            "unknown variant",
        ),
        (
            "[upstream]\nworkers = 5\nworker = 6\nservice = { dist = \"exponential\", mean = \"10ms\" }\n",
            "unknown field",
        ),
        (
            "[upstream]\nworkers = 5\nservice = { dist = \"exponential\", mean = \"10ms\" }\n[[upstream.change]]\nat = \"20s\"\nworkers = 2\n",
            "after the end",
        ),
        (
            "[upstream]\nworkers = 5\nservice = { dist = \"exponential\", mean = \"10ms\" }\njitter = { dist = \"uniform\", min = \"30ms\", max = \"10ms\" }\n",
            "upstream.jitter",
        ),
    ];
    for (upstream, why) in cases {
        let err = Scenario::parse("bad", &format!("{base}{upstream}")).unwrap_err();
        assert!(err.contains(why), "{upstream}: {err}");
    }
}

#[test]
fn a_small_scorecard_judges_ours_against_the_best_baseline_and_the_oracle() {
    let mut s = Scenario::by_name("capacity_halves").unwrap();
    s.duration = Duration::from_secs(6);
    s.upstream.changes[0].at = Duration::from_secs(2);
    s.upstream.changes[1].at = Duration::from_secs(4);
    let algos = [
        Algo::Littles,
        Algo::AimdWindowed,
        Algo::FixedExact,
        Algo::None,
    ];
    let opts = Options {
        seed: 1,
        seeds: 1,
        threads: None,
        progress: false,
        baselines: Vec::new(),
        trace: false,
    };
    let out = std::env::temp_dir().join(format!("sluicegate-sim-small-{}", std::process::id()));
    let card = report::scorecard(&[s.clone()], &algos, &opts, &out).unwrap();
    assert_eq!(card.summaries.len(), 4);
    let v = &card.verdicts[0];
    assert_eq!(v.regime, Regime::Over);
    assert_eq!(v.oracle.as_ref().unwrap().algo, "fixed_c");
    let best = v.best.as_ref().unwrap().algo;
    assert!(["aimd_w", "none"].contains(&best), "{best}");
    assert_eq!(v.ours.converge_each.len(), 2);
    assert!(card.markdown().contains("| capacity_halves | over |"));

    // Ours alone, against the baselines' rows read back from that run's CSV: judged the same.
    let csv = std::fs::read_to_string(out.join("scorecard.csv")).unwrap();
    let again = Options {
        baselines: report::baselines::read(&csv).unwrap(),
        ..opts
    };
    let alone = report::scorecard(&[s], &[Algo::Littles], &again, &out).unwrap();
    assert_eq!(alone.summaries.len(), 4);
    let w = &alone.verdicts[0];
    assert_eq!(w.best.as_ref().unwrap().algo, best);
    assert_eq!(w.oracle.as_ref().unwrap().algo, "fixed_c");
    assert_eq!(w.misses, v.misses);
}
