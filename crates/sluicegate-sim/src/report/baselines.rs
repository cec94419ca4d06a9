//! Rows of an earlier scorecard, read back from its `scorecard.csv`: a run of ours alone can
//! then be judged against the baselines without running them again (their rows do not change
//! when only ours does).

use crate::algo::Algo;
use crate::stats::Summary;
use std::time::Duration;

/// The header [`super::csv`] writes.
const HEADER: &str = "scenario,algorithm,goodput_per_possible,good_per_offered,p50_ms,p99_ms,p999_ms,p99_per_unloaded,rejected,timed_out,converge_s";

/// Parses a `scorecard.csv` written by [`super::csv`].
///
/// # Errors
///
/// A header other than the one [`super::csv`] writes, an unknown algorithm, or a field that
/// does not parse; the message names the line.
pub fn read(text: &str) -> Result<Vec<Summary>, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim() == HEADER => {}
        _ => {
            return Err(format!(
                "not a scorecard.csv: the first line must be `{HEADER}`"
            ));
        }
    }
    lines
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| row(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

fn row(line: &str) -> Result<Summary, String> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    let [
        scenario,
        algo,
        goodput,
        good_of_offered,
        p50,
        p99,
        p999,
        p99_ratio,
        rejected,
        timed_out,
        converge,
    ] = f[..]
    else {
        return Err(format!("{} fields, expected 11", f.len()));
    };
    let algo = Algo::ALL
        .into_iter()
        .find(|a| a.name() == algo)
        .ok_or_else(|| format!("unknown algorithm '{algo}'"))?;
    let num = |what: &str, v: &str| {
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("{what} '{v}' is not a number ≥ 0"))
    };
    // Whole milliseconds and tenths of seconds, as written: rounded, not truncated to a ns.
    let ms = |what: &str, v: &str| num(what, v).map(|x| Duration::from_millis(x.round() as u64));
    let converge = match converge {
        "" => None,
        "never" => Some(None),
        v => Some(Some(Duration::from_millis(
            (num("converge_s", v)? * 1000.0).round() as u64,
        ))),
    };
    Ok(Summary {
        scenario: scenario.to_string(),
        algo: algo.name(),
        goodput: num("goodput", goodput)?,
        good_of_offered: num("good_per_offered", good_of_offered)?,
        p50: ms("p50_ms", p50)?,
        p99: ms("p99_ms", p99)?,
        p999: ms("p999_ms", p999)?,
        p99_ratio: num("p99_per_unloaded", p99_ratio)?,
        rejected: num("rejected", rejected)?,
        timed_out: num("timed_out", timed_out)?,
        converge,
        converge_each: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(algo: Algo, converge: Option<Option<Duration>>) -> Summary {
        Summary {
            scenario: "cache_3x".into(),
            algo: algo.name(),
            goodput: 0.9871,
            good_of_offered: 0.3291,
            p50: Duration::from_millis(11),
            p99: Duration::from_millis(15),
            p999: Duration::from_millis(17),
            p99_ratio: 2.63,
            rejected: 0.6132,
            timed_out: 0.0581,
            converge,
            converge_each: Vec::new(),
        }
    }

    #[test]
    fn reads_back_what_the_scorecard_writes() {
        let rows = vec![
            summary(Algo::Gradient2Windowed, None),
            summary(Algo::FixedExact, Some(None)),
            summary(Algo::None, Some(Some(Duration::from_millis(4600)))),
        ];
        assert_eq!(read(&super::super::csv(&rows)).unwrap(), rows);
    }

    #[test]
    fn bad_input_is_an_error_that_names_the_line() {
        assert!(read("").unwrap_err().contains("not a scorecard.csv"));
        let head = format!("{HEADER}\n");
        let e = read(&format!("{head}cache_3x,nope,1,1,1,1,1,1,0,0,\n")).unwrap_err();
        assert_eq!(e, "line 2: unknown algorithm 'nope'");
        let e = read(&format!("{head}cache_3x,none,x,1,1,1,1,1,0,0,\n")).unwrap_err();
        assert_eq!(e, "line 2: goodput 'x' is not a number ≥ 0");
        let e = read(&format!("{head}cache_3x,none,1\n")).unwrap_err();
        assert_eq!(e, "line 2: 3 fields, expected 11");
    }
}
