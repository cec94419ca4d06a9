//! The simulator's own promises — deterministic for a seed, its queueing model agrees with
//! M/M/c theory — and a guard on the headline result: ours at 3× overload.

use sluicegate_sim::algo::Algo;
use sluicegate_sim::engine::{self, Fate};
use sluicegate_sim::load::{Clients, Load};
use sluicegate_sim::scenario::Scenario;
use sluicegate_sim::stats;
use sluicegate_sim::upstream::UpstreamModel;
use std::time::Duration;

fn small(load: Load, secs: u64) -> Scenario {
    Scenario {
        name: "test",
        description: "test",
        duration: Duration::from_secs(secs),
        upstream: UpstreamModel {
            contention: 0.0, // plain M/M/c
            ..UpstreamModel::new(10, Duration::from_millis(100))
        },
        clients: Clients {
            load,
            deadline: Duration::from_secs(60),
        },
        max_queue: 1000,
        queue_timeout: Duration::from_secs(30),
    }
}

#[test]
fn same_seed_gives_same_numbers_and_another_seed_does_not() {
    let s = Scenario::by_name("overload_3x").unwrap();
    let s = Scenario {
        duration: Duration::from_secs(5),
        ..s
    };
    let a = stats::summarise(&s, &engine::run(&s, Algo::Littles, 7));
    // A run in between must not disturb the next (no global state leaks between runs).
    let _ = engine::run(&s, Algo::Aimd, 3);
    let b = stats::summarise(&s, &engine::run(&s, Algo::Littles, 7));
    let c = stats::summarise(&s, &engine::run(&s, Algo::Littles, 8));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// Erlang C: probability that an arrival waits, M/M/c with offered load `a = λ/μ`.
fn erlang_c(c: usize, a: f64) -> f64 {
    let rho = a / c as f64;
    let mut term = 1.0;
    let mut sum = 1.0; // k = 0
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let top = term * a / c as f64 / (1.0 - rho);
    top / (sum + top)
}

#[test]
fn upstream_matches_mm_c_utilisation_and_mean_wait() {
    // c = 10 workers, mean service 100 ms (μ = 10/s each), λ = 80/s → ρ = 0.8, no limit.
    let (c, mean, lambda) = (10usize, 0.1f64, 80.0f64);
    let s = small(Load::Poisson { rate: lambda }, 600);
    let run = engine::run(&s, Algo::None, 42);
    let served: Vec<_> = run
        .records
        .iter()
        .filter(|r| r.fate == Fate::Good)
        .collect();
    let mean_latency = served
        .iter()
        .map(|r| r.latency().as_secs_f64())
        .sum::<f64>()
        / served.len() as f64;
    let a = lambda * mean;
    // Theory: W = Wq + 1/μ with Wq = C(c, a) / (cμ − λ).
    let wq = erlang_c(c, a) / (c as f64 / mean - lambda);
    let w = wq + mean;
    // tokio's timer rounds each sleep up to the next millisecond: about +0.5 ms a sleep.
    let tick = 0.0005;
    let rel = (mean_latency - (w + tick)).abs() / w;
    assert!(
        rel < 0.05,
        "mean latency {mean_latency:.4} s vs theory {w:.4} s ({rel:.3})"
    );
    // Utilisation: busy time ÷ (c × duration) = λ / (c μ) = 0.8, from served work.
    let mean_in_upstream =
        run.timeline.iter().map(|p| p.upstream as f64).sum::<f64>() / run.timeline.len() as f64;
    let little = lambda * w; // L = λ W
    let rel = (mean_in_upstream - little).abs() / little;
    assert!(
        rel < 0.05,
        "mean in system {mean_in_upstream:.2} vs λW {little:.2}"
    );
    let utilisation = served.len() as f64 * mean / (c as f64 * 600.0);
    assert!(
        (utilisation - 0.8).abs() < 0.02,
        "utilisation {utilisation:.3}"
    );
}

#[test]
fn littles_holds_goodput_at_3x_overload_and_beats_fixed_limits_off_by_2x() {
    let s = Scenario::by_name("overload_3x").unwrap();
    let s = Scenario {
        duration: Duration::from_secs(30),
        ..s
    };
    let goodput = |a: Algo| stats::summarise(&s, &engine::run(&s, a, 1));
    let ours = goodput(Algo::Littles);
    assert!(ours.goodput >= 0.93, "goodput {:.3}", ours.goodput);
    assert!(ours.p99_ratio <= 2.0, "p99 {:.2}× unloaded", ours.p99_ratio);
    for other in [Algo::FixedDouble, Algo::FixedHalf, Algo::None, Algo::Aimd] {
        let theirs = goodput(other);
        assert!(
            ours.goodput > theirs.goodput,
            "{other:?}: {:.3}",
            theirs.goodput
        );
    }
}
