//! The best a fixed limit does in a scenario: the goodput of every limit a search tries, and
//! the best of them.
//!
//! The scorecard's oracle is a fixed limit equal to the worker count. Where the workers are
//! not the whole story (a delay outside them, requests that slow each other, a capacity that
//! changes), another fixed limit may do better, and the best may still fall short of 0.95 of
//! capacity: then that target asks more than any fixed limit gives, and this says by how
//! much.
//!
//! The search: fixed limits at 0.5–6 × the worker count on a grid, then whole limits around
//! the grid's best, narrowed as a ternary search while the span is wide and tried one by one
//! once it is narrow. It assumes goodput rises to one peak and falls past it (true of every
//! built-in scenario's grid); every seed of a limit runs from the same seeds as every other
//! limit's, so their differences are the limit's, not the draws'.

use crate::algo::Algo;
use crate::engine;
use crate::report;
use crate::scenario::Scenario;
use crate::stats::{self, Summary};
use std::collections::BTreeMap;

/// Multiples of the worker count the search tries first.
const GRID: [f64; 15] = [
    0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 6.0,
];

/// Spans of whole limits at most this wide are tried limit by limit.
const EXHAUSTIVE: usize = 4;

/// What fixed limits did in one scenario (means over the seeds).
#[derive(Clone, Debug)]
pub struct Ceiling {
    /// The scenario.
    pub scenario: String,
    /// Its worker count (before any change).
    pub workers: usize,
    /// A fixed limit equal to the worker count (the scorecard's oracle).
    pub at_workers: Summary,
    /// The fixed limit with the most goodput (the smallest, where several tie).
    pub best_limit: usize,
    /// What it did.
    pub best: Summary,
    /// Every limit tried, with its mean goodput, in order of the limit.
    pub tried: Vec<(usize, f64)>,
}

/// Searches the fixed limit with the most goodput in `s`, each limit run on seeds
/// `seed..seed + seeds`; `progress` is told each limit's mean goodput as it is measured.
pub fn search(
    s: &Scenario,
    seed: u64,
    seeds: u64,
    progress: &mut dyn FnMut(usize, f64),
) -> Ceiling {
    let workers = s.upstream.workers.max(1);
    let mut done: BTreeMap<usize, Summary> = BTreeMap::new();
    let mut measure = |limit: usize, done: &mut BTreeMap<usize, Summary>| -> f64 {
        if let Some(m) = done.get(&limit) {
            return m.goodput;
        }
        let jobs: Vec<(Algo, u64)> = (0..seeds.max(1))
            .map(|k| (Algo::FixedAt(limit), seed + k))
            .collect();
        let runs: Vec<Summary> = report::run_all(s, &jobs, seed, engine::Mode::default())
            .iter()
            .map(|(run, _)| stats::summarise(s, run))
            .collect();
        let m = stats::mean(&runs);
        progress(limit, m.goodput);
        let g = m.goodput;
        done.insert(limit, m);
        g
    };
    let mut grid: Vec<usize> = GRID
        .iter()
        .map(|f| ((workers as f64 * f).round() as usize).max(1))
        .collect();
    grid.dedup();
    let goodputs: Vec<f64> = grid.iter().map(|&l| measure(l, &mut done)).collect();
    let peak = argmax(&goodputs);
    // The peak lies between the grid's neighbours of its best point.
    let (mut lo, mut hi) = (
        grid[peak.saturating_sub(1)],
        grid[(peak + 1).min(grid.len() - 1)],
    );
    while hi - lo > EXHAUSTIVE {
        let third = (hi - lo) / 3;
        let (a, b) = (lo + third, hi - third);
        if measure(a, &mut done) < measure(b, &mut done) {
            lo = a;
        } else {
            hi = b;
        }
    }
    for limit in lo..=hi {
        measure(limit, &mut done);
    }
    measure(workers, &mut done);
    let tried: Vec<(usize, f64)> = done.iter().map(|(&l, m)| (l, m.goodput)).collect();
    let best_limit = tried[argmax(&tried.iter().map(|t| t.1).collect::<Vec<_>>())].0;
    Ceiling {
        scenario: s.name.clone(),
        workers,
        at_workers: done[&workers].clone(),
        best_limit,
        best: done[&best_limit].clone(),
        tried,
    }
}

/// The index of the largest value; the first of equals.
fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

/// The table of `ceilings`, in markdown: the worker count's goodput, the best fixed limit's,
/// and whether it reaches 0.95 of capacity (the card's target for an overloaded scenario).
pub fn table(ceilings: &[Ceiling]) -> String {
    let mut t = String::from(
        "| scenario | workers | fixed limit = workers: goodput | best fixed limit | its goodput \
         | its p99/unloaded | 0.95 of capacity by a fixed limit |\n|---|---|---|---|---|---|---|\n",
    );
    for c in ceilings {
        let reach = if c.best.goodput >= 0.95 {
            "yes".to_string()
        } else {
            format!("**no** (best {:.3})", c.best.goodput)
        };
        t.push_str(&format!(
            "| {} | {} | {:.3} | {} ({:.2}× workers) | {:.3} | {:.2} | {} |\n",
            c.scenario,
            c.workers,
            c.at_workers.goodput,
            c.best_limit,
            c.best_limit as f64 / c.workers as f64,
            c.best.goodput,
            c.best.p99_ratio,
            reach
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_takes_the_first_of_equals() {
        assert_eq!(argmax(&[0.5, 0.9, 0.9, 0.1]), 1);
        assert_eq!(argmax(&[1.0]), 0);
    }

    /// A scenario whose best fixed limit is the worker count (a near-fixed service time, no
    /// delay outside, and every request waiting inside slowing the workers): the search finds
    /// it, and half or twice the workers do far worse.
    #[test]
    fn the_search_finds_the_worker_count_where_nothing_else_matters() {
        let s = Scenario::parse(
            "ceiling_test",
            r#"
            description = "8 workers of a near-fixed 20 ms that slow as requests wait, 2x"
            duration = "5s"
            deadline = "1s"
            [upstream]
            workers = 8
            contention = 1.0
            service = { dist = "uniform", min = "19ms", max = "21ms" }
            [load]
            kind = "open"
            rate = 2.0
            [limiter]
            queue_timeout = "100ms"
            "#,
        )
        .expect("a valid scenario");
        let mut seen = Vec::new();
        let c = search(&s, 1, 2, &mut |l, g| seen.push((l, g)));
        // One permit over the workers may serve a request or two more by the end of the run
        // (work in progress when arrivals stop counts), no more.
        assert!((8..=9).contains(&c.best_limit), "tried {:?}", c.tried);
        assert!(
            c.best.goodput - c.at_workers.goodput < 0.005,
            "tried {:?}",
            c.tried
        );
        let at = |l: usize| c.tried.iter().find(|t| t.0 == l).expect("on the grid").1;
        assert!(
            at(4) < 0.6 * c.best.goodput,
            "half the workers: {:?}",
            c.tried
        );
        assert!(
            at(16) < 0.6 * c.best.goodput,
            "twice the workers: {:?}",
            c.tried
        );
        assert_eq!(seen.len(), c.tried.len(), "each limit measured once");
    }
}
