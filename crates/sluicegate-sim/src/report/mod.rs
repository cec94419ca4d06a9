//! The scorecard: markdown tables on stdout, CSV files and SVG charts.

pub mod baselines;
mod chart;

pub use chart::chart;

use crate::algo::Algo;
use crate::engine::{self, Fate, Run};
use crate::judge::{self, Verdict};
use crate::scenario::Scenario;
use crate::stats::{self, Summary};
use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::time::Duration;

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

fn converge_text(c: Option<Option<Duration>>) -> String {
    match c {
        None => "-".into(),
        Some(None) => "never".into(),
        Some(Some(d)) => format!("{:.1} s", d.as_secs_f64()),
    }
}

/// A markdown table of `summaries`.
pub fn table(summaries: &[Summary]) -> String {
    let mut t = String::from(
        "| scenario | algorithm | goodput | good/offered | p50 ms | p99 ms | p999 ms | p99/unloaded | rejected | timed out | converge |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in summaries {
        let _ = writeln!(
            t,
            "| {} | {} | {:.3} | {:.3} | {} | {} | {} | {:.2} | {:.1}% | {:.1}% | {} |",
            s.scenario,
            s.algo,
            s.goodput,
            s.good_of_offered,
            ms(s.p50),
            ms(s.p99),
            ms(s.p999),
            s.p99_ratio,
            s.rejected * 100.0,
            s.timed_out * 100.0,
            converge_text(s.converge),
        );
    }
    t
}

/// The same rows as CSV.
pub fn csv(summaries: &[Summary]) -> String {
    let mut t = String::from(
        "scenario,algorithm,goodput_per_possible,good_per_offered,p50_ms,p99_ms,p999_ms,p99_per_unloaded,rejected,timed_out,converge_s\n",
    );
    for s in summaries {
        let conv = match s.converge {
            None => String::new(),
            Some(None) => "never".into(),
            Some(Some(d)) => format!("{:.1}", d.as_secs_f64()),
        };
        let _ = writeln!(
            t,
            "{},{},{:.4},{:.4},{},{},{},{:.3},{:.4},{:.4},{}",
            s.scenario,
            s.algo,
            s.goodput,
            s.good_of_offered,
            ms(s.p50),
            ms(s.p99),
            ms(s.p999),
            s.p99_ratio,
            s.rejected,
            s.timed_out,
            conv
        );
    }
    t
}

/// Timeline of every run of one scenario as CSV.
pub fn timeline_csv(runs: &[Run]) -> String {
    let mut t = String::from(
        "algorithm,t_s,limit,in_flight,queued,upstream,rejected,queue_timeouts,shed,good,late\n",
    );
    for run in runs {
        // Requests turned away, timed out in the queue, refused by a full upstream
        // (`shed_at`), answered in time and answered late, in each tick (by when they ended).
        let mut ended = vec![[0u64; 5]; run.timeline.len()];
        for r in &run.records {
            let tick = (r.end.as_nanos() / engine::TICK.as_nanos()) as usize;
            let column = match r.fate {
                Fate::Rejected => 0,
                Fate::QueueTimeout => 1,
                Fate::Shed => 2,
                Fate::Good => 3,
                Fate::Late => 4,
                _ => continue,
            };
            if let Some(c) = ended.get_mut(tick) {
                c[column] += 1;
            }
        }
        for (p, [rejected, timeouts, shed, good, late]) in run.timeline.iter().zip(ended) {
            let _ = writeln!(
                t,
                "{},{:.1},{},{},{},{},{},{},{},{},{}",
                run.algo,
                p.t.as_secs_f64(),
                p.limit,
                p.in_flight,
                p.queued,
                p.upstream,
                rejected,
                timeouts,
                shed,
                good,
                late
            );
        }
    }
    t
}

/// What each traced run's algorithm said of itself ([`engine::Run::explained`]) at every
/// point of its timeline, as CSV: its phase, the limit it steers and any cap on it, the
/// knee, min RT and floor, the queue it reads, the rates, and its last move of the limit and
/// why. Of the baselines, Vegas gives its no-load RTT as min RT; the others explain nothing
/// and leave the algorithm's columns empty.
pub fn trace_csv(runs: &[Run]) -> String {
    let mut t = String::from(
        "algorithm,t_s,limit,phase,steered_limit,cap,cap_source,shared,knee,min_rt_ms,\
         floor_rt_ms,queue,pass_rate,demand,capacity,at_limit,last_from,last_to,last_cause,\
         last_ago_s\n",
    );
    fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
        v.map_or_else(String::new, f)
    }
    let millis = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1000.0);
    for run in runs {
        for (p, e) in run.timeline.iter().zip(&run.explained) {
            let change = e.last_change;
            let _ = writeln!(
                t,
                "{},{:.1},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                run.algo,
                p.t.as_secs_f64(),
                p.limit,
                opt(e.phase, |x| x.as_str().to_string()),
                opt(e.steered_limit, |x| x.to_string()),
                opt(e.cap, |c| c.limit.to_string()),
                opt(e.cap, |c| c.source.as_str().to_string()),
                opt(e.shared, |x| x.to_string()),
                opt(e.knee, |x| x.to_string()),
                opt(e.min_rt, millis),
                opt(e.floor_rt, millis),
                opt(e.queue, |x| format!("{x:.2}")),
                opt(e.pass_rate, |x| format!("{x:.1}")),
                opt(e.demand, |x| format!("{x:.1}")),
                opt(e.capacity, |x| format!("{x:.1}")),
                opt(e.at_limit, |x| format!("{x:.3}")),
                opt(change, |c| c.from.to_string()),
                opt(change, |c| c.to.to_string()),
                opt(change, |c| c.cause.as_str().to_string()),
                opt(change, |c| format!("{:.1}", c.ago.as_secs_f64())),
            );
        }
    }
    t
}

/// Runs `jobs` of scenario `s`, in order of the result: in virtual time on every core (each
/// run is its own single-threaded runtime, so results do not depend on how many run at
/// once), or one after another in real time on `mode.threads` threads. Only the runs of
/// `first` (the seed whose timeline is kept) are traced.
pub(crate) fn run_all(
    s: &Scenario,
    jobs: &[(Algo, u64)],
    first: u64,
    mode: engine::Mode,
) -> Vec<(Run, Duration)> {
    let timed = |&(a, seed): &(Algo, u64)| {
        let started = std::time::Instant::now();
        let mode = engine::Mode {
            trace: mode.trace && seed == first,
            ..mode
        };
        (engine::run_as(s, a, seed, mode), started.elapsed())
    };
    if mode.threads.is_some() {
        return jobs.iter().map(timed).collect();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::with_capacity(jobs.len()));
    std::thread::scope(|scope| {
        for _ in 0..cores.min(jobs.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let out = timed(job);
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((i, out));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// How to run the scorecard.
#[derive(Clone, Debug)]
pub struct Options {
    /// First seed.
    pub seed: u64,
    /// Seeds per scenario and algorithm (`seed..seed + seeds`).
    pub seeds: u64,
    /// `Some(n)`: run in real time on `n` threads instead of in virtual time.
    pub threads: Option<usize>,
    /// Print each run's numbers on stderr.
    pub progress: bool,
    /// Rows of an earlier scorecard ([`baselines::read`]) for the algorithms not run now: they
    /// join the tables and the judging as if run again.
    pub baselines: Vec<Summary>,
    /// Also write `trace_<scenario>.csv`: what each algorithm said of itself every
    /// [`engine::TICK`] of the first seed's run ([`trace_csv`]).
    pub trace: bool,
}

/// What a scorecard produced.
#[derive(Clone, Debug)]
pub struct Scorecard {
    /// Mean summary of every scenario × algorithm.
    pub summaries: Vec<Summary>,
    /// Ours judged in each scenario.
    pub verdicts: Vec<Verdict>,
}

impl Scorecard {
    /// The verdict table, then the full table, in markdown.
    pub fn markdown(&self) -> String {
        format!(
            "{}\n{}",
            judge::table(&self.verdicts),
            table(&self.summaries)
        )
    }
}

/// Runs every scenario with every algorithm for each seed, writes `scorecard.csv`,
/// `scorecard.md`, `timeline_<scenario>.csv` and `<scenario>.svg` (from the first seed)
/// into `out`, and returns the mean values (convergence: the worst seed) and verdicts.
///
/// # Errors
///
/// Any error writing the files.
pub fn scorecard(
    scenarios: &[Scenario],
    algos: &[Algo],
    opts: &Options,
    out: &Path,
) -> io::Result<Scorecard> {
    std::fs::create_dir_all(out)?;
    let mut summaries = Vec::new();
    let mut verdicts = Vec::new();
    for s in scenarios {
        let mut runs = Vec::new();
        let mut here = Vec::new();
        let jobs: Vec<(Algo, u64)> = algos
            .iter()
            .flat_map(|&a| (0..opts.seeds.max(1)).map(move |k| (a, opts.seed + k)))
            .collect();
        let mode = engine::Mode {
            threads: opts.threads,
            trace: opts.trace,
        };
        let mut done = run_all(s, &jobs, opts.seed, mode).into_iter();
        for &a in algos {
            let mut each = Vec::new();
            for k in 0..opts.seeds.max(1) {
                let seed = opts.seed + k;
                let (run, took) = done.next().expect("one run per job");
                let summary = stats::summarise(s, &run);
                if opts.progress {
                    let converge: String = summary
                        .converge_each
                        .iter()
                        .map(|(t, c)| {
                            format!(" converge@{}s {}", t.as_secs(), converge_text(Some(*c)))
                        })
                        .collect();
                    eprintln!(
                        "{:<22} {:<11} seed {:<3} goodput {:.3} p99 {:>5} ms{converge}  ({} requests, {:.1} s)",
                        s.name,
                        a.name(),
                        seed,
                        summary.goodput,
                        ms(summary.p99),
                        run.arrivals,
                        took.as_secs_f64()
                    );
                }
                each.push(summary);
                if k == 0 {
                    runs.push(run);
                }
            }
            here.push(stats::mean(&each));
        }
        here.extend(
            opts.baselines
                .iter()
                .filter(|b| b.scenario == s.name && !algos.iter().any(|a| a.name() == b.algo))
                .cloned(),
        );
        let verdict = judge::judge(s, &here);
        let best = verdict
            .as_ref()
            .and_then(|v| v.best.as_ref())
            .map(|b| b.algo);
        std::fs::write(
            out.join(format!("timeline_{}.csv", s.name)),
            timeline_csv(&runs),
        )?;
        if opts.trace {
            std::fs::write(out.join(format!("trace_{}.csv", s.name)), trace_csv(&runs))?;
        }
        chart(s, &runs, best, &out.join(format!("{}.svg", s.name))).map_err(io::Error::other)?;
        verdicts.extend(verdict);
        summaries.extend(here);
    }
    let card = Scorecard {
        summaries,
        verdicts,
    };
    std::fs::write(out.join("scorecard.csv"), csv(&card.summaries))?;
    std::fs::write(out.join("scorecard.md"), card.markdown())?;
    Ok(card)
}
