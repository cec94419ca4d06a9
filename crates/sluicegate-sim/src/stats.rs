//! The numbers a run is judged by: goodput ÷ what was possible, latency percentiles of served
//! requests, rejection and timeout rates, time to converge after a change.

use crate::engine::{Fate, Record, Run};
use crate::scenario::Scenario;
use std::time::Duration;

/// One run, summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Algorithm name.
    pub algo: &'static str,
    /// Requests served within their deadline ÷ what the upstream could have served of the
    /// offered load (∫ min(capacity, offered) × success rate dt; see
    /// [`Scenario::possible_between`]).
    pub goodput: f64,
    /// Requests served within their deadline ÷ requests that arrived.
    pub good_of_offered: f64,
    /// Median latency (arrival to answer) of requests the upstream served.
    pub p50: Duration,
    /// 99th percentile of the same.
    pub p99: Duration,
    /// 99.9th percentile of the same.
    pub p999: Duration,
    /// 99th percentile of (latency ÷ the upstream's unloaded p99 when the request arrived):
    /// p99 ÷ unloaded p99, fair across upstream changes.
    pub p99_ratio: f64,
    /// Turned away by the limiter (queue full, predicted timeout) or by a full upstream at
    /// once (`shed_at`: what a limit set right would have queued instead) ÷ arrivals.
    pub rejected: f64,
    /// Queue timeouts, answers after the deadline and requests unfinished at the end ÷ arrivals.
    pub timed_out: f64,
    /// Longest time, over the scenario's upstream changes, from a change until a 1 s window
    /// first has goodput ≥ 0.95 of what was possible and p99 ≤ 2× the unloaded p99.
    /// `None`: the scenario has no change; `Some(None)`: never converged.
    pub converge: Option<Option<Duration>>,
    /// `(change time, time to converge)` for each upstream change.
    pub converge_each: Vec<(Duration, Option<Duration>)>,
}

/// The `q` quantile (0..=1) of sorted `v`, nearest rank.
pub fn quantile<T: Copy + Default>(v: &[T], q: f64) -> T {
    if v.is_empty() {
        return T::default();
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

fn served(r: &Record) -> bool {
    matches!(r.fate, Fate::Good | Fate::Late)
}

/// Summarises `run` of `scenario`.
pub fn summarise(s: &Scenario, run: &Run) -> Summary {
    let arrivals = run.arrivals.max(1) as f64;
    let count = |f: Fate| run.records.iter().filter(|r| r.fate == f).count() as f64;
    let good = count(Fate::Good);
    let unfinished = run.arrivals as f64 - run.records.len() as f64;
    let mut latencies: Vec<Duration> = run
        .records
        .iter()
        .filter(|r| served(r))
        .map(Record::latency)
        .collect();
    latencies.sort_unstable();
    let mut ratios: Vec<f64> = run
        .records
        .iter()
        .filter(|r| served(r))
        .map(|r| r.latency().as_secs_f64() / s.unloaded_p99_at(r.arrival).as_secs_f64())
        .collect();
    ratios.sort_unstable_by(f64::total_cmp);
    let converge_each: Vec<(Duration, Option<Duration>)> = s
        .change_times()
        .into_iter()
        .map(|t| (t, converge_after(s, run, t)))
        .collect();
    let converge = (!converge_each.is_empty()).then(|| worst(converge_each.iter().map(|c| c.1)));
    Summary {
        scenario: run.scenario.clone(),
        algo: run.algo,
        goodput: good / s.possible_between(Duration::ZERO, s.duration).max(1.0),
        good_of_offered: good / arrivals,
        p50: quantile(&latencies, 0.5),
        p99: quantile(&latencies, 0.99),
        p999: quantile(&latencies, 0.999),
        p99_ratio: quantile(&ratios, 0.99),
        rejected: (count(Fate::Rejected) + count(Fate::Shed)) / arrivals,
        timed_out: (count(Fate::QueueTimeout) + count(Fate::Late) + unfinished) / arrivals,
        converge,
        converge_each,
    }
}

/// The longest of some convergence times; `None` if any never converged.
fn worst(times: impl Iterator<Item = Option<Duration>>) -> Option<Duration> {
    let mut acc = Duration::ZERO;
    for t in times {
        acc = acc.max(t?);
    }
    Some(acc)
}

/// Time from `change` until the first 1 s window (stepping 100 ms) that is "good" (see
/// [`Summary::converge`]), or `None` if none is before the end.
pub fn converge_after(s: &Scenario, run: &Run, change: Duration) -> Option<Duration> {
    let step = Duration::from_millis(100);
    // A window long enough to hold a few requests even when the service takes seconds.
    let slow = s.unloaded_p99_at(change);
    let window = Duration::from_secs(1).max(slow * 2);
    // Records sorted by end time, so each window is a slice.
    let mut by_end: Vec<&Record> = run.records.iter().collect();
    by_end.sort_by_key(|r| r.end);
    let mut arrivals = run.arrival_times.clone();
    arrivals.sort_unstable();
    let mut start = change;
    while start + window <= s.duration {
        let stop = start + window;
        let from = by_end.partition_point(|r| r.end < start);
        let to = by_end.partition_point(|r| r.end < stop);
        let arrived = (arrivals.partition_point(|&t| t < stop)
            - arrivals.partition_point(|&t| t < start)) as f64;
        let mut ratios: Vec<f64> = Vec::new();
        let mut good = 0.0;
        for r in &by_end[from..to] {
            if served(r) {
                let unloaded = s.unloaded_p99_at(r.arrival).as_secs_f64();
                ratios.push(r.latency().as_secs_f64() / unloaded);
            }
            if r.fate == Fate::Good {
                good += 1.0;
            }
        }
        ratios.sort_unstable_by(f64::total_cmp);
        let success = 1.0 - s.state_at(start).failure_rate;
        let need = 0.95 * s.possible_between(start, stop).min(arrived * success);
        if good >= need && quantile(&ratios, 0.99) <= 2.0 {
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
    let converge = first
        .converge
        .map(|_| worst(runs.iter().map(|s| s.converge.flatten())));
    let converge_each = first
        .converge_each
        .iter()
        .enumerate()
        .map(|(i, &(t, _))| {
            let each = runs
                .iter()
                .map(|s| s.converge_each.get(i).and_then(|c| c.1));
            (t, worst(each))
        })
        .collect();
    Summary {
        scenario: first.scenario.clone(),
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
