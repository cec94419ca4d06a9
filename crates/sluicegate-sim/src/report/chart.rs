//! SVG charts of one scenario: limit, in-flight and p99 over time. Ours is drawn in blue over
//! a grey background of every other algorithm, with the oracle fixed limit and the best
//! non-oracle baseline picked out (Okabe–Ito colours, safe for colour-blind readers); the
//! legend sits to the right of the plots.

use crate::engine::{Fate, Run};
use crate::scenario::Scenario;
use crate::stats;
use plotters::prelude::*;
use std::path::Path;
use std::time::Duration;

const OURS: RGBColor = RGBColor(0x00, 0x72, 0xB2); // Okabe–Ito blue
const ORACLE: RGBColor = RGBColor(0xE6, 0x9F, 0x00); // Okabe–Ito orange
const BEST: RGBColor = RGBColor(0x00, 0x9E, 0x73); // Okabe–Ito bluish green
const OTHER: RGBColor = RGBColor(0xC8, 0xC8, 0xC8);

/// p99 latency of served requests per `slice`, by answer time, in ms.
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

/// Extracts one chart line from a run.
type Series<'a> = Box<dyn Fn(&Run) -> Vec<(f64, f64)> + 'a>;

fn style(algo: &str, best: Option<&str>) -> (RGBColor, u32, u8) {
    match algo {
        "littles" => (OURS, 3, 3),
        "fixed_c" => (ORACLE, 2, 2),
        a if Some(a) == best => (BEST, 2, 1),
        _ => (OTHER, 1, 0),
    }
}

/// Draws limit, in-flight and p99 latency over time for every run of `scenario` into `path`;
/// `best` names the best non-oracle baseline, drawn in its own colour.
///
/// # Errors
///
/// Any drawing or file error, as text.
pub fn chart(
    scenario: &Scenario,
    runs: &[Run],
    best: Option<&str>,
    path: &Path,
) -> Result<(), String> {
    let root = SVGBackend::new(path, (1200, 1000)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (plots, legend) = root.split_horizontally(980);
    let panels = plots.split_evenly((3, 1));
    let secs = scenario.duration.as_secs_f64();
    let mut workers = scenario.upstream.workers;
    for c in &scenario.upstream.changes {
        workers = workers.max(c.workers.unwrap_or(0));
    }
    let cap = 3.0 * workers as f64;
    let unloaded = (0..=scenario.duration.as_secs())
        .map(|t| scenario.unloaded_p99_at(Duration::from_secs(t)))
        .max()
        .unwrap_or_default();
    let ms_cap = 4.0 * unloaded.as_secs_f64() * 1000.0;
    let slice = Duration::from_millis(500).max(unloaded);
    let limit_title = format!("limit (clipped at 3 × workers = {cap:.0})");
    let p99_title = format!(
        "p99 latency, ms ({} ms slices; clipped at 4 × unloaded p99)",
        slice.as_millis()
    );
    let series: [(&str, f64, Series<'_>); 3] = [
        (
            &limit_title,
            cap,
            Box::new(|r: &Run| {
                let pts = r.timeline.iter();
                pts.map(|p| (p.t.as_secs_f64(), (p.limit as f64).min(cap)))
                    .collect()
            }),
        ),
        (
            "permits in flight",
            cap,
            Box::new(|r: &Run| {
                let pts = r.timeline.iter();
                pts.map(|p| (p.t.as_secs_f64(), (p.in_flight as f64).min(cap)))
                    .collect()
            }),
        ),
        (
            &p99_title,
            ms_cap,
            Box::new(|r: &Run| {
                let pts = p99_series(r, slice, scenario.duration);
                pts.into_iter().map(|(t, v)| (t, v.min(ms_cap))).collect()
            }),
        ),
    ];
    // Grey first, then the highlighted lines on top (ours last).
    let mut order: Vec<&Run> = runs.iter().collect();
    order.sort_by_key(|r| style(r.algo, best).2);
    for (panel, (title, ymax, f)) in panels.iter().zip(series.iter()) {
        let caption = format!("{}: {}", scenario.name, title);
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, ("sans-serif", 18))
            .margin(8)
            .margin_right(24)
            .x_label_area_size(28)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..secs, 0.0..*ymax)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("virtual time (s)")
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| e.to_string())?;
        for run in &order {
            let (color, width, _) = style(run.algo, best);
            chart
                .draw_series(LineSeries::new(f(run), color.stroke_width(width)))
                .map_err(|e| e.to_string())?;
        }
    }
    draw_legend(&legend, runs, best)?;
    root.present().map_err(|e| e.to_string())
}

fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    runs: &[Run],
    best: Option<&str>,
) -> Result<(), String> {
    let mut entries: Vec<(String, RGBColor, u32)> = Vec::new();
    let has = |name: &str| runs.iter().any(|r| r.algo == name);
    if has("littles") {
        entries.push(("littles (ours)".into(), OURS, 3));
    }
    if has("fixed_c") {
        entries.push(("fixed_c (oracle)".into(), ORACLE, 2));
    }
    if let Some(b) = best.filter(|b| has(b)) {
        entries.push((format!("{b} (best baseline)"), BEST, 2));
    }
    let others: Vec<&str> = runs
        .iter()
        .map(|r| r.algo)
        .filter(|a| style(a, best).2 == 0)
        .collect();
    let text = ("sans-serif", 15).into_font();
    let mut y = 60;
    for (label, color, width) in &entries {
        area.draw(&PathElement::new(
            vec![(8, y), (40, y)],
            color.stroke_width(*width),
        ))
        .map_err(|e| e.to_string())?;
        area.draw(&Text::new(label.clone(), (48, y - 8), text.clone()))
            .map_err(|e| e.to_string())?;
        y += 26;
    }
    if !others.is_empty() {
        area.draw(&PathElement::new(
            vec![(8, y), (40, y)],
            OTHER.stroke_width(2),
        ))
        .map_err(|e| e.to_string())?;
        area.draw(&Text::new("the others:", (48, y - 8), text.clone()))
            .map_err(|e| e.to_string())?;
        for name in others {
            y += 20;
            area.draw(&Text::new(name.to_string(), (60, y - 8), text.clone()))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
