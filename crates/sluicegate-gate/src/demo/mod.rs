//! The demo and the tools behind it: `sluicegate demo` (a slow upstream, the gate in front
//! of it, load past its capacity, a live view and a closing table), and two hidden helper
//! commands the gate benchmark uses: `sluicegate upstream` (the slow upstream alone) and
//! `sluicegate load` (the load generator alone).

pub mod load;
mod record;
pub mod run;
pub mod upstream;

use crate::config::Dur;
use clap::Args;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// `sluicegate demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// How long the three phases take together, like `45s` or `2m`.
    #[arg(long, default_value = "45s")]
    pub duration: Dur,
    /// The upstream's workers (requests it serves at once).
    #[arg(long, default_value_t = 10)]
    pub workers: usize,
    /// Offered load as a multiple of the upstream's capacity.
    #[arg(long, default_value_t = 2.0, allow_negative_numbers = true)]
    pub overload: f64,
    /// Where the dashboard listens (falls back to a free port when this one is taken).
    #[arg(long, default_value = "127.0.0.1:9901")]
    pub admin_listen: SocketAddr,
    /// Keep the gate and its dashboard running after the table, until Ctrl-C.
    #[arg(long)]
    pub stay: bool,
}

/// `sluicegate upstream`: the demo's slow upstream alone (for benchmarks).
#[derive(Debug, Args)]
pub struct UpstreamArgs {
    /// Where it listens.
    #[arg(long)]
    pub listen: SocketAddr,
    /// Fixed service time of every request, like `50ms`.
    #[arg(long)]
    pub latency: Dur,
    /// Requests served at once (default: all of them, no queue of its own).
    #[arg(long)]
    pub workers: Option<usize>,
}

/// `sluicegate load`: the load generator alone (for benchmarks).
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The URL to load, like `http://127.0.0.1:8080/`.
    #[arg(long)]
    pub url: String,
    /// Closed-loop callers (each sends its next request when the last one ended).
    #[arg(long, conflicts_with = "rate")]
    pub clients: Option<usize>,
    /// Open-loop arrivals per second instead of closed-loop callers.
    #[arg(long)]
    pub rate: Option<f64>,
    /// How long requests keep coming, like `10s`.
    #[arg(long, default_value = "10s")]
    pub duration: Dur,
    /// How long a caller waits before it gives up and closes: `500ms`, or a range
    /// `0ms..500ms` drawn uniformly per request (default: as long as it takes).
    #[arg(long)]
    pub patience: Option<String>,
    /// Print the report as one line of JSON.
    #[arg(long)]
    pub json: bool,
}

/// Raises the soft limit on open files as the gate does: the demo and its tools hold a
/// caller's, the gate's and the upstream's side of every connection, often past a shell's
/// 1024.
fn raise_open_files_limit() {
    crate::server::raise_open_files_limit();
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("cannot start the runtime: {e}");
            ExitCode::FAILURE
        })
}

/// `println!` that lets a closed stdout go (`sluicegate demo | head`): the run goes on and
/// ends as it would, where `println!` panics on the broken pipe.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}
pub(crate) use say;

/// The shortest demo: three phases, each longer than the callers' patience (2 s) by a
/// second, so that a phase shows callers giving up before it ends. With the 3 s allowed
/// before, phases of 1 s read 1.08 of capacity and a closing sentence of callers giving up
/// beside a `gave up` of 0 (newcomer 57).
const SHORTEST: Duration = Duration::from_secs(9);

/// The most load the demo offers, as a multiple of capacity: past it nothing new is shown,
/// and the callers' files alone outrun any system's limit (`--overload 1e9` asked for
/// `ulimit -n 2400000000256`).
const MOST_OVERLOAD: f64 = 100.0;

/// The most workers the demo's upstream may have: its callers, gate and upstream share one
/// process, and past this its open files outrun any system's limit (review 59).
const MOST_WORKERS: usize = 10_000;

/// Why `args` cannot make a demo, or `None`.
fn refusal(args: &DemoArgs) -> Option<&'static str> {
    if args.duration.0 < SHORTEST {
        Some(
            "--duration must be at least 9s: three phases of 3 s, each longer than the callers' 2 s patience",
        )
    } else if args.workers == 0 {
        Some("--workers must be at least 1")
    } else if args.workers > MOST_WORKERS {
        Some(
            "--workers must be at most 10000 (200 000 requests a second at 2× load); 10 to 500 show the most",
        )
    } else if !(args.overload.is_finite() && args.overload > 0.0) {
        Some("--overload must be a number above 0, like 2 for twice the capacity")
    } else if args.overload > MOST_OVERLOAD {
        Some("--overload must be at most 100 (a hundred times the capacity); 2 to 10 show the most")
    } else {
        None
    }
}

/// Runs `sluicegate demo`.
pub fn demo(args: DemoArgs) -> ExitCode {
    if let Some(why) = refusal(&args) {
        eprintln!("error: {why}");
        return ExitCode::from(2);
    }
    let plan = run::DemoPlan {
        duration: args.duration.0,
        workers: args.workers,
        overload: args.overload,
        admin: args.admin_listen,
        live: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        ..run::DemoPlan::default()
    };
    raise_open_files_limit();
    crate::open_files::warn_if_low(
        plan.open_files_needed(),
        &format!(
            "the demo (--workers {} --overload {})",
            plan.workers, plan.overload
        ),
    );
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let result = run::run(plan, |config| start_gate(config, stopped)).await;
        let code = match result {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("demo failed: {e}");
                ExitCode::FAILURE
            }
        };
        if args.stay && code == ExitCode::SUCCESS {
            say!("\nThe gate and its dashboard keep running; Ctrl-C to stop.");
            let _ = tokio::signal::ctrl_c().await;
        }
        let _ = stop.send(true);
        code
    })
}

/// Starts the demo's gate in this process.
async fn start_gate(
    config_text: String,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<run::DemoGate, String> {
    let mut config = crate::config::parse(&config_text, "<demo>").map_err(|e| e.to_string())?;
    let mut started = crate::server::Started::bind(config.clone(), None).await;
    if started.is_err() {
        // The dashboard's port is taken: any free one will do.
        if let Some(admin) = config.admin.listen.as_mut() {
            *admin.get_mut() = SocketAddr::from(([127, 0, 0, 1], 0));
        }
        started = crate::server::Started::bind(config, None).await;
    }
    let started = started.map_err(|e| e.to_string())?;
    let proxy = *started
        .proxy_addrs()
        .first()
        .ok_or("the demo's gate has no listener")?;
    let admin = started
        .admin_addr()
        .ok_or("the demo's gate has no dashboard listener")?;
    let gate = Arc::clone(&started.gate);
    tokio::spawn(started.serve(stop));
    Ok(run::DemoGate {
        proxy,
        admin,
        limit_of: Box::new(move |pool| {
            let state = gate.state();
            state.pool(pool).map(|p| p.limit.limiter().snapshot().limit)
        }),
    })
}

/// Runs `sluicegate upstream`.
pub fn upstream(args: UpstreamArgs) -> ExitCode {
    raise_open_files_limit();
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("cannot listen on {}: {e}", args.listen);
                return ExitCode::FAILURE;
            }
        };
        let model = upstream::UpstreamModel {
            workers: args.workers,
            service: upstream::ServiceTime::Fixed(args.latency.0),
            contention: 0.0,
        };
        upstream::serve(listener, model, Arc::default()).await;
        ExitCode::SUCCESS
    })
}

/// Parses `--patience`: `500ms` or `0ms..500ms`.
fn patience(text: Option<&str>) -> Result<load::Patience, String> {
    let Some(text) = text else {
        return Ok(load::Patience::Unlimited);
    };
    let dur = |s: &str| s.trim().parse::<Dur>().map(|d| d.0);
    match text.split_once("..") {
        Some((lo, hi)) => {
            let (lo, hi) = (dur(lo)?, dur(hi)?);
            if hi < lo {
                return Err(format!(
                    "--patience {text}: the range's end is before its start"
                ));
            }
            Ok(load::Patience::Uniform(lo, hi))
        }
        None => Ok(load::Patience::Fixed(dur(text)?)),
    }
}

/// Runs `sluicegate load`.
pub fn load(args: LoadArgs) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("{msg}");
        ExitCode::from(64)
    };
    let patience = match patience(args.patience.as_deref()) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let Some(rest) = args.url.strip_prefix("http://") else {
        return fail(format!("--url {}: only http:// URLs", args.url));
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let target: SocketAddr = match authority.parse() {
        Ok(a) => a,
        Err(_) => return fail(format!("--url {}: give an IP address and port", args.url)),
    };
    let arrivals = match (args.clients, args.rate) {
        (_, Some(per_second)) if per_second > 0.0 => load::Arrivals::Open { per_second },
        (Some(clients), None) if clients > 0 => load::Arrivals::Closed { clients },
        _ => return fail("give --clients N (more than 0) or --rate R (more than 0)".into()),
    };
    raise_open_files_limit();
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let plan = load::LoadPlan {
        target,
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        arrivals,
        patience,
        duration: args.duration.0,
    };
    let report = rt.block_on(load::run(plan, Arc::default()));
    if args.json {
        say!("{}", report.to_json());
    } else {
        say!("{report}");
    }
    ExitCode::SUCCESS
}

/// The demo's defaults, for tests: a short run on free ports.
pub fn quick_plan(duration: Duration) -> run::DemoPlan {
    run::DemoPlan {
        duration,
        admin: SocketAddr::from(([127, 0, 0, 1], 0)),
        live: false,
        ..run::DemoPlan::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn args(extra: &[&str]) -> DemoArgs {
        let cli =
            crate::cli::Cli::try_parse_from(["sluicegate", "demo"].iter().chain(extra)).unwrap();
        let crate::cli::Command::Demo(args) = cli.command else {
            panic!("not demo");
        };
        args
    }

    /// Newcomer 57: `--duration 3s` ran phases of 1 s, shorter than the callers' patience,
    /// and `--overload 1e9` ran and asked for an impossible `ulimit -n`.
    #[test]
    fn a_demo_too_short_or_too_loaded_is_refused_saying_what_is_allowed() {
        assert_eq!(refusal(&args(&[])), None);
        assert_eq!(refusal(&args(&["--workers", "10000"])), None);
        assert_eq!(
            refusal(&args(&["--duration", "9s", "--overload", "100"])),
            None
        );
        for (flag, value, says) in [
            ("--duration", "8s", "--duration must be at least 9s"),
            ("--duration", "3s", "--duration must be at least 9s"),
            ("--overload", "100.5", "--overload must be at most 100"),
            ("--overload", "1e9", "--overload must be at most 100"),
            ("--overload", "inf", "--overload must be a number above 0"),
            ("--overload", "0", "--overload must be a number above 0"),
            ("--overload", "-1", "--overload must be a number above 0"),
            ("--workers", "0", "--workers must be at least 1"),
            ("--workers", "10001", "--workers must be at most 10000"),
        ] {
            let why = refusal(&args(&[flag, value])).unwrap_or_default();
            assert!(why.starts_with(says), "{flag} {value}: {why}");
        }
    }
}
