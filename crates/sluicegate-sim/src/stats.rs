//! The numbers a run is judged by: goodput ÷ capacity, latency percentiles of served requests,
//! rejection and timeout rates, time to converge after a change.

use crate::engine::{Fate, Record, Run};
use crate::scenario::Scenario;
use std::time::Duration;

/// One run, summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Scenario name.
    pub scenario: &'static str,
    /// Algorithm name.
    pub algo: &'static str,
    /// Requests served within their deadline ÷ what the upstream could have served
    /// (∫ capacity dt). At most the offered load ÷ capacity (0.5 in `steady_0.5x`).
    pub goodput: f64,
    /// Requests served within their deadline ÷ requests that arrived.
    pub good_of_offered: f64,
    /// Median latency (arrival to answer) of requests the upstream served.
    pub p50: Duration,
    /// 99th percentile of the same.
    pub p99: Duration,
    /// 99.9th percentile of the same.
    pub p999: Duration,
    /// p99 ÷ the upstream's unloaded p99 at `t = 0`.
    pub p99_ratio: f64,
    /// Turned away by the limiter (queue full, predicted timeout) ÷ arrivals.
    pub rejected: f64,
    /// Queue timeouts, answers after the deadline and requests unfinished at the end ÷ arrivals.
    pub timed_out: f64,
    /// Longest time, over the scenario's upstream changes, from a change until a 1 s window
    /// first has goodput ≥ 0.95 of min(capacity, offered) and p99 ≤ 2× the unloaded p99.
    /// `None`: the scenario has no change; `Some(None)`: never converged.
    pub converge: Option<Option<Duration>>,
    /// `(change time, time to converge)` for each upstream change.
    pub converge_each: Vec<(Duration, Option<Duration>)>,
}

/// The `q` quantile (0..=1) of sorted `v`, nearest rank.
pub fn quantile(v: &[Duration], q: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// ∫ capacity dt over `[from, to)`, in requests.
pub fn capacity_between(s: &Scenario, from: Duration, to: Duration) -> f64 {
    let mut edges: Vec<Duration> = vec![from];
    edges.extend(
        s.change_times()
            .into_iter()
            .filter(|t| *t > from && *t < to),
    );
    edges.push(to);
    edges
        .windows(2)
        .map(|w| s.upstream.state_at(w[0]).capacity() * (w[1] - w[0]).as_secs_f64())
        .sum()
}

/// Summarises `run` of `scenario`.
pub fn summarise(s: &Scenario, run: &Run) -> Summary {
    let arrivals = run.arrivals.max(1) as f64;
    let count = |f: Fate| run.records.iter().filter(|r| r.fate == f).count() as f64;
    let good = count(Fate::Good);
    let unfinished = run.arrivals as f64 - run.records.len() as f64;
    let mut served: Vec<Duration> = run
        .records
        .iter()
        .filter(|r| matches!(r.fate, Fate::Good | Fate::Late))
        .map(Record::latency)
        .collect();
    served.sort_unstable();
    let unloaded = s.upstream.initial.unloaded_p99();
    let p99 = quantile(&served, 0.99);
    let converge_each: Vec<(Duration, Option<Duration>)> = s
        .change_times()
        .into_iter()
        .map(|t| (t, converge_after(s, run, t)))
        .collect();
    let converge = (!converge_each.is_empty()).then(|| {
        converge_each
            .iter()
            .map(|&(_, c)| c)
            .try_fold(Duration::ZERO, |acc, c| c.map(|c| acc.max(c)))
    });
    Summary {
        scenario: run.scenario,
        algo: run.algo,
        goodput: good / capacity_between(s, Duration::ZERO, s.duration),
        good_of_offered: good / arrivals,
        p50: quantile(&served, 0.5),
        p99,
        p999: quantile(&served, 0.999),
        p99_ratio: p99.as_secs_f64() / unloaded.as_secs_f64(),
        rejected: count(Fate::Rejected) / arrivals,
        timed_out: (count(Fate::QueueTimeout) + count(Fate::Late) + unfinished) / arrivals,
        converge,
        converge_each,
    }
}

/// Time from `change` until the first 1 s window (stepping 100 ms) that is "good" (see
/// [`Summary::converge`]), or `None` if none is before the end.
pub fn converge_after(s: &Scenario, run: &Run, change: Duration) -> Option<Duration> {
    let step = Duration::from_millis(100);
    let window = Duration::from_secs(1);
    let mut start = change;
    while start + window <= s.duration {
        let stop = start + window;
        let state = s.upstream.state_at(start);
        let arrived = run
            .arrival_times
            .iter()
            .filter(|&&t| t >= start && t < stop)
            .count() as f64;
        let mut served: Vec<Duration> = Vec::new();
        let mut good = 0.0;
        for r in run
            .records
            .iter()
            .filter(|r| r.end >= start && r.end < stop)
        {
            if matches!(r.fate, Fate::Good | Fate::Late) {
                served.push(r.latency());
            }
            if r.fate == Fate::Good {
                good += 1.0;
            }
        }
        served.sort_unstable();
        let need = 0.95 * capacity_between(s, start, stop).min(arrived);
        if good >= need && quantile(&served, 0.99) <= state.unloaded_p99() * 2 {
            return Some(start - change);
        }
        start += step;
    }
    None
}

/// The mean of several runs of one scenario and algorithm (convergence: the worst run).
///
/// # Panics
///
/// If `runs` is empty.
pub fn mean(runs: &[Summary]) -> Summary {
    let n = runs.len() as f64;
    let avg = |f: &dyn Fn(&Summary) -> f64| runs.iter().map(f).sum::<f64>() / n;
    let avg_d = |f: &dyn Fn(&Summary) -> Duration| {
        Duration::from_secs_f64(runs.iter().map(|s| f(s).as_secs_f64()).sum::<f64>() / n)
    };
    let first = &runs[0];
    let converge = first.converge.map(|_| {
        runs.iter()
            .map(|s| s.converge.flatten())
            .try_fold(Duration::ZERO, |acc, c| c.map(|c| acc.max(c)))
    });
    let converge_each = first
        .converge_each
        .iter()
        .enumerate()
        .map(|(i, &(t, _))| {
            let worst = runs
                .iter()
                .map(|s| s.converge_each.get(i).and_then(|c| c.1))
                .try_fold(Duration::ZERO, |acc, c| c.map(|c| acc.max(c)));
            (t, worst)
        })
        .collect();
    Summary {
        scenario: first.scenario,
        algo: first.algo,
        goodput: avg(&|s| s.goodput),
        good_of_offered: avg(&|s| s.good_of_offered),
        p50: avg_d(&|s| s.p50),
        p99: avg_d(&|s| s.p99),
        p999: avg_d(&|s| s.p999),
        p99_ratio: avg(&|s| s.p99_ratio),
        rejected: avg(&|s| s.rejected),
        timed_out: avg(&|s| s.timed_out),
        converge,
        converge_each,
    }
}
