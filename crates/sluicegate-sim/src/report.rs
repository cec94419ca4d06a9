//! The scorecard: a markdown table on stdout, CSV files and SVG charts.

use crate::algo::Algo;
use crate::engine::{self, Fate, Run};
use crate::scenario::Scenario;
use crate::stats::{self, Summary};
use plotters::prelude::*;
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
        "| scenario | algorithm | goodput/cap | good/offered | p50 ms | p99 ms | p999 ms | p99/unloaded | rejected | timed out | converge |\n\
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
        "scenario,algorithm,goodput_per_capacity,good_per_offered,p50_ms,p99_ms,p999_ms,p99_per_unloaded,rejected,timed_out,converge_s\n",
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

/// p99 latency of served requests per `slice`, by answer time.
fn p99_series(run: &Run, slice: Duration, until: Duration) -> Vec<(f64, f64)> {
    let n = (until.as_nanos() / slice.as_nanos()) as usize;
    let mut bins: Vec<Vec<Duration>> = vec![Vec::new(); n + 1];
    for r in &run.records {
        if matches!(r.fate, Fate::Good | Fate::Late) {
            let i = (r.end.as_nanos() / slice.as_nanos()) as usize;
            if let Some(b) = bins.get_mut(i) {
                b.push(r.latency());
            }
        }
    }
    bins.into_iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(i, mut b)| {
            b.sort_unstable();
            let t = (i as f64 + 0.5) * slice.as_secs_f64();
            (t, stats::quantile(&b, 0.99).as_secs_f64() * 1000.0)
        })
        .collect()
}

/// Timeline of every run of one scenario as CSV.
pub fn timeline_csv(runs: &[Run]) -> String {
    let mut t = String::from("algorithm,t_s,limit,in_flight,queued,upstream\n");
    for run in runs {
        for p in &run.timeline {
            let _ = writeln!(
                t,
                "{},{:.1},{},{},{},{}",
                run.algo,
                p.t.as_secs_f64(),
                p.limit,
                p.in_flight,
                p.queued,
                p.upstream
            );
        }
    }
    t
}

/// Extracts one chart line from a run.
type Series<'a> = Box<dyn Fn(&Run) -> Vec<(f64, f64)> + 'a>;

/// Draws limit, in-flight and p99 latency over time for every run of `scenario` into `path`.
///
/// # Errors
///
/// Any drawing or file error, as text.
pub fn chart(scenario: &Scenario, runs: &[Run], path: &Path) -> Result<(), String> {
    let root = SVGBackend::new(path, (1100, 1000)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let panels = root.split_evenly((3, 1));
    let secs = scenario.duration.as_secs_f64();
    let cap = 4.0 * scenario.upstream.initial.workers as f64;
    let series: [(&str, f64, Series<'_>); 3] = [
        (
            "limit",
            cap,
            Box::new(|r: &Run| {
                let pts = r.timeline.iter();
                pts.map(|p| (p.t.as_secs_f64(), (p.limit as f64).min(cap)))
                    .collect()
            }),
        ),
        (
            "in flight",
            cap,
            Box::new(|r: &Run| {
                let pts = r.timeline.iter();
                pts.map(|p| (p.t.as_secs_f64(), (p.in_flight as f64).min(cap)))
                    .collect()
            }),
        ),
        (
            "p99 latency ms (500 ms slices)",
            2000.0,
            Box::new(|r: &Run| {
                let pts = p99_series(r, Duration::from_millis(500), scenario.duration);
                pts.into_iter().map(|(t, v)| (t, v.min(2000.0))).collect()
            }),
        ),
    ];
    for (panel, (title, ymax, f)) in panels.iter().zip(series.iter()) {
        let caption = format!("{}: {}", scenario.name, title);
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, ("sans-serif", 18))
            .margin(8)
            .margin_right(24)
            .x_label_area_size(28)
            .y_label_area_size(48)
            .build_cartesian_2d(0.0..secs, 0.0..*ymax)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("virtual time (s)")
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, run) in runs.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(f(run), color.stroke_width(1)))
                .map_err(|e| e.to_string())?
                .label(run.algo)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Runs every scenario with every algorithm for seeds `seed..seed + seeds`, writes
/// `scorecard.csv`, `timeline_<scenario>.csv` and `<scenario>.svg` (from the first seed) into
/// `out`, and returns the table of mean values (convergence: the worst seed).
///
/// # Errors
///
/// Any error writing the files.
pub fn scorecard(
    scenarios: &[Scenario],
    algos: &[Algo],
    seed: u64,
    seeds: u64,
    out: &Path,
) -> io::Result<String> {
    std::fs::create_dir_all(out)?;
    let mut summaries = Vec::new();
    for s in scenarios {
        let mut runs = Vec::new();
        for &a in algos {
            let mut each = Vec::new();
            for k in 0..seeds.max(1) {
                let started = std::time::Instant::now();
                let run = engine::run(s, a, seed + k);
                let summary = stats::summarise(s, &run);
                let converge: String = summary
                    .converge_each
                    .iter()
                    .map(|(t, c)| format!(" converge@{}s {}", t.as_secs(), converge_text(Some(*c))))
                    .collect();
                eprintln!(
                    "{:<16} {:<11} seed {:<3} goodput {:.3} p99 {:>5} ms{converge}  ({} requests, {:.1} s)",
                    s.name,
                    a.name(),
                    seed + k,
                    summary.goodput,
                    ms(summary.p99),
                    run.arrivals,
                    started.elapsed().as_secs_f64()
                );
                each.push(summary);
                if k == 0 {
                    runs.push(run);
                }
            }
            summaries.push(stats::mean(&each));
        }
        std::fs::write(
            out.join(format!("timeline_{}.csv", s.name)),
            timeline_csv(&runs),
        )?;
        chart(s, &runs, &out.join(format!("{}.svg", s.name))).map_err(io::Error::other)?;
    }
    std::fs::write(out.join("scorecard.csv"), csv(&summaries))?;
    Ok(table(&summaries))
}
