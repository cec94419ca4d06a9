//! The command line: `serve --config FILE`, the quick form, and `check --config FILE`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use toml::Spanned;

use crate::config::{self, Config, ConfigError, Dur, ListenAddr, Rate, UpstreamUrl};

/// sluicegate: a reverse proxy that puts concurrency, queue and rate limits in front of any
/// HTTP service.
#[derive(Debug, Parser)]
#[command(name = "sluicegate", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gate, from a config file or from flags (the quick form).
    Serve(Box<Serve>),
    /// Check a config file: exit 0, or print where and why it is wrong and exit 64.
    Check {
        /// The config file.
        #[arg(long)]
        config: PathBuf,
    },
    /// Show the gate at work: a slow upstream, the gate in front, more load than the upstream
    /// can take, through no limit, a static limit and the adaptive limit in turn.
    Demo(crate::demo::DemoArgs),
    /// The demo's slow upstream alone (used by scripts/bench-gate).
    #[command(hide = true)]
    Upstream(crate::demo::UpstreamArgs),
    /// The demo's load generator alone (used by scripts/bench-gate).
    #[command(hide = true)]
    Load(crate::demo::LoadArgs),
}

/// `serve`: `--config FILE`, or the quick form's flags (one pool `default`, one route for
/// everything).
#[derive(Debug, Args)]
// Both forms in the usage line, which clap prints with a missing flag: a bare `serve` named
// only the quick form's flags, never `--config`.
#[command(
    override_usage = "sluicegate serve --config FILE [--workers N]\n       \
    sluicegate serve --listen ADDR --upstream URL --max-concurrency N [--max-queue N] \
    [--queue-timeout DUR] [OPTIONS]"
)]
pub struct Serve {
    /// The config file.
    #[arg(long, conflicts_with_all = ["listen", "upstream", "max_concurrency", "max_queue", "queue_timeout", "queue_order", "rate", "upstream_timeout", "admin_listen", "admin_token_file"])]
    pub config: Option<PathBuf>,
    /// Where the proxy listens, like `127.0.0.1:8080`.
    #[arg(long, required_unless_present = "config")]
    pub listen: Option<ListenAddr>,
    /// The upstream, like `http://127.0.0.1:9000`.
    #[arg(long, required_unless_present = "config")]
    pub upstream: Option<UpstreamUrl>,
    /// Requests at once.
    #[arg(long, required_unless_present = "config", allow_negative_numbers = true, value_parser = config::whole_numbers::max_concurrency_flag)]
    pub max_concurrency: Option<usize>,
    /// Requests that may wait for a slot (default 1024, as in a config file).
    #[arg(long, allow_negative_numbers = true, value_parser = config::whole_numbers::max_queue_flag)]
    pub max_queue: Option<usize>,
    /// Longest wait in the queue, like `10s` (default 10s, as in a config file).
    #[arg(long)]
    pub queue_timeout: Option<Dur>,
    /// Which queued request goes first when a slot frees (default fifo).
    #[arg(long, value_enum)]
    pub queue_order: Option<Order>,
    /// A rate for the whole pool, like `50/s`, `600/m` or `1000/h`.
    #[arg(long)]
    pub rate: Option<Rate>,
    /// Longest wait for the upstream's response head or the next byte of its body, like `30s`
    /// (default 60s).
    #[arg(long)]
    pub upstream_timeout: Option<Dur>,
    /// Where the admin API listens, like `127.0.0.1:9901`.
    #[arg(long)]
    pub admin_listen: Option<SocketAddr>,
    /// A file holding the admin API's bearer token.
    #[arg(long)]
    pub admin_token_file: Option<PathBuf>,
    /// Worker threads (default: the config's `workers`, else one per CPU).
    #[arg(long, allow_negative_numbers = true, value_parser = config::whole_numbers::workers_flag)]
    pub workers: Option<usize>,
}

impl Serve {
    /// The config this command asks for: the file read and checked, or the quick form's.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] to print (then exit 64).
    pub fn config(&self) -> Result<(Config, Option<PathBuf>), ConfigError> {
        let mut config = match &self.config {
            Some(path) => (config::read(path)?, Some(path.clone())),
            None => (self.quick()?, None),
        };
        if let Some(w) = self.workers {
            config.0.workers = Some(w);
        }
        config::validate(&config.0, "<flags>")?;
        Ok(config)
    }

    fn quick(&self) -> Result<Config, ConfigError> {
        let missing = |flag: &str| ConfigError {
            file: "<flags>".into(),
            at: None,
            message: format!("the quick form needs --{flag}"),
        };
        let mut text = String::from(
            "[[pools]]\nname = \"default\"\nupstream = \"http://127.0.0.1:1\"\nmax_concurrency = 0\n[[routes]]\npool = \"default\"\n",
        );
        if self.admin_listen.is_some() {
            text.push_str("[admin]\n");
        }
        let mut c = config::parse(&text, "<flags>")?;
        c.listen = vec![self.listen.ok_or_else(|| missing("listen"))?];
        c.admin.listen = self.admin_listen.map(|a| Spanned::new(0..0, a));
        c.admin.token_file = self
            .admin_token_file
            .clone()
            .map(|f| toml::Spanned::new(0..0, f));
        let p = &mut c.pools[0];
        p.upstream = self.upstream.clone().ok_or_else(|| missing("upstream"))?;
        p.max_concurrency = Some(
            self.max_concurrency
                .ok_or_else(|| missing("max-concurrency"))?,
        );
        // The file's defaults otherwise (`parse` gave them).
        if let Some(q) = self.max_queue {
            p.max_queue = q;
        }
        if let Some(t) = self.queue_timeout {
            p.queue_timeout = t;
        }
        // Said in the flags' own words (the file's rule suggests `max_queue = 0`).
        if p.queue_timeout.0.is_zero() {
            return Err(ConfigError {
                file: "<flags>".into(),
                at: None,
                message: "--queue-timeout must be longer than 0 (for no waiting at all, write --max-queue 0)".into(),
            });
        }
        p.rate = self.rate;
        if let Some(o) = self.queue_order {
            p.queue_order = match o {
                Order::Fifo => config::QueueOrder::Fifo,
                Order::Lifo => config::QueueOrder::Lifo,
            };
        }
        if let Some(t) = self.upstream_timeout {
            p.upstream_timeout = t;
        }
        // Said in the flags' own words too: the file's rules name `upstream_timeout` and
        // `[admin] listen = …` in `listen`, which a quick form's user never wrote.
        let flags_error = |message: String| ConfigError {
            file: "<flags>".into(),
            at: None,
            message,
        };
        if p.upstream_timeout.0.is_zero() {
            return Err(flags_error(
                "--upstream-timeout must be longer than 0, like 30s (the default is 60s)".into(),
            ));
        }
        if let Some(admin) = self.admin_listen
            && let Some(proxy) = c.listen.iter().find(|l| l.clashes_with(admin))
        {
            // A port of its own to suggest: 9901, unless that is the one taken.
            let free = if admin.port() == 9901 { 9902 } else { 9901 };
            return Err(flags_error(format!(
                "--admin-listen {admin} takes the port of --listen {}: give the admin API a port of its own, like --admin-listen 127.0.0.1:{free}",
                proxy.0
            )));
        }
        Ok(c)
    }
}

/// The quick form's `--queue-order`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Order {
    /// First come, first served.
    Fifo,
    /// Last come, first served: under a standing queue the freshest requests, whose
    /// clients are likeliest still waiting, go first.
    Lifo,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick form's command line up to its first limit.
    const QUICK: [&str; 6] = [
        "sluicegate",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "http://127.0.0.1:9",
    ];

    /// The config of `QUICK` and then `flags`.
    fn quick_config(flags: &[&str]) -> Result<Config, ConfigError> {
        let cli = Cli::try_parse_from(QUICK.iter().chain(flags)).unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("not serve");
        };
        serve.config().map(|c| c.0)
    }

    /// `serve` in the quick form with `queue_timeout` and `extra` flags.
    fn quick_serve(queue_timeout: &str, extra: &[&str]) -> Result<Config, ConfigError> {
        let mut flags = vec![
            "--max-concurrency",
            "2",
            "--max-queue",
            "5",
            "--queue-timeout",
            queue_timeout,
        ];
        flags.extend_from_slice(extra);
        quick_config(&flags)
    }

    fn quick(extra: &[&str]) -> Config {
        quick_serve("1s", extra).unwrap()
    }

    /// Review 3, lesser notes: `--queue-timeout 0s` was answered with the file's advice
    /// (`max_queue = 0`), and a bare `sluicegate serve` listed the quick form's flags without
    /// a word of `--config`.
    #[test]
    fn the_quick_form_speaks_in_flags_and_a_bare_serve_names_config() {
        let e = quick_serve("0s", &[]).unwrap_err().to_string();
        assert!(e.contains("--max-queue 0"), "{e}");
        assert!(!e.contains("max_queue = 0"), "{e}");
        let e = Cli::try_parse_from(["sluicegate", "serve"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--config FILE"), "{e}");
        assert!(e.contains("--listen"), "{e}");
    }

    /// Newcomer 57: `--upstream-timeout 0s` and an `--admin-listen` on the `--listen` port
    /// were refused in the file's words (`upstream_timeout`, `[admin] listen = …`).
    #[test]
    fn the_quick_form_names_its_flags_for_a_zero_upstream_timeout_and_a_clashing_admin() {
        let e = quick_serve("1s", &["--upstream-timeout", "0s"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--upstream-timeout must be longer than 0"),
            "{e}"
        );
        assert!(!e.contains("`upstream_timeout`"), "{e}");
        let serve_on = |listen: &str, admin: &str| {
            let cli = Cli::try_parse_from([
                "sluicegate",
                "serve",
                "--listen",
                listen,
                "--upstream",
                "http://127.0.0.1:9",
                "--max-concurrency",
                "2",
                "--admin-listen",
                admin,
            ])
            .unwrap();
            let Command::Serve(serve) = cli.command else {
                panic!("not serve");
            };
            serve.config().map(|c| c.0)
        };
        let serve = |admin: &str| serve_on("0.0.0.0:18080", admin);
        let e = serve("127.0.0.1:18080").unwrap_err().to_string();
        assert!(
            e.contains("--admin-listen 127.0.0.1:18080 takes the port of --listen 0.0.0.0:18080"),
            "{e}"
        );
        assert!(!e.contains("[admin]"), "{e}");
        assert!(e.contains("like --admin-listen 127.0.0.1:9901"), "{e}");
        assert!(serve("127.0.0.1:9901").unwrap().admin.listen.is_some());
        // Review 59: the port suggested is not the one taken.
        let e = serve_on("127.0.0.1:9901", "0.0.0.0:9901")
            .unwrap_err()
            .to_string();
        assert!(e.contains("like --admin-listen 127.0.0.1:9902"), "{e}");
    }

    /// A newcomer's trial: `serve --listen … --upstream …` insisted on `--max-queue` and
    /// `--queue-timeout`, which a config file defaults.
    #[test]
    fn the_quick_form_defaults_the_queue_as_a_file_does() {
        let c = quick_config(&["--max-concurrency", "3"]).unwrap();
        assert_eq!(c.pools[0].max_queue, 1024);
        assert_eq!(c.pools[0].queue_timeout.to_string(), "10s");
        let e = Cli::try_parse_from(QUICK).unwrap_err().to_string();
        assert!(e.contains("--max-concurrency"), "{e}");
    }

    #[test]
    fn the_quick_form_queue_is_fifo_unless_told_lifo() {
        assert_eq!(quick(&[]).pools[0].queue_order, config::QueueOrder::Fifo);
        let lifo = quick(&["--queue-order", "lifo"]);
        assert_eq!(lifo.pools[0].queue_order, config::QueueOrder::Lifo);
        assert!(Cli::try_parse_from(["sluicegate", "serve", "--queue-order", "random"]).is_err());
    }

    /// Review 26: `--queue-order` was taken beside `--config` and ignored without a word.
    /// Every flag of the quick form but `--workers` is refused with a file, taken from the
    /// command itself so that a flag added later is held to it too.
    #[test]
    fn every_quick_form_flag_but_workers_is_refused_with_a_config_file() {
        use clap::CommandFactory;
        let value = |flag: &str| match flag {
            "listen" | "admin-listen" => "127.0.0.1:9",
            "upstream" => "http://127.0.0.1:9",
            "max-concurrency" | "max-queue" => "1",
            "queue-timeout" | "upstream-timeout" => "1s",
            "queue-order" => "lifo",
            "rate" => "1/s",
            "admin-token-file" => "token",
            other => panic!("give `--{other}` a value here"),
        };
        let cli = Cli::command();
        let serve = cli.find_subcommand("serve").unwrap();
        let flags: Vec<&str> = serve
            .get_arguments()
            .filter_map(|a| a.get_long())
            .filter(|f| !matches!(*f, "config" | "workers" | "help"))
            .collect();
        assert!(flags.contains(&"queue-order"), "{flags:?}");
        for flag in flags {
            let long = format!("--{flag}");
            let e = Cli::try_parse_from([
                "sluicegate",
                "serve",
                "--config",
                "x.toml",
                &long,
                value(flag),
            ])
            .expect_err(&long);
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ArgumentConflict,
                "{long}: {e}"
            );
        }
    }

    #[test]
    fn whole_number_flags_are_refused_in_the_files_words() {
        // The value is read as it comes, before the flags are checked against each other.
        let refusal = |flag: &str, value: &str| {
            Cli::try_parse_from(["sluicegate", "serve", "--config", "x.toml", flag, value])
                .unwrap_err()
                .to_string()
        };
        let e = refusal("--workers", "99999999999999999999999");
        assert!(e.contains("`--workers` must be at most 1024"), "{e}");
        let e = refusal("--workers", "0");
        assert!(e.contains("`--workers` must be at least 1, not 0"), "{e}");
        let e = refusal("--max-queue", "2000000");
        assert!(
            e.contains("`--max-queue` must be at most 1048576, not 2000000"),
            "{e}"
        );
        let e = refusal(
            "--max-concurrency",
            "340282366920938463463374607431768211456",
        );
        assert!(e.contains("`--max-concurrency` must be at most"), "{e}");
        // Newcomer 57: a negative number was taken for a flag by clap ("unexpected argument
        // '-1' found") and never reached these words.
        let e = refusal("--max-concurrency", "-1");
        assert!(
            e.contains("`--max-concurrency` must be at least 0, not -1"),
            "{e}"
        );
        let e = refusal("--max-queue", "-5");
        assert!(
            e.contains("`--max-queue` must be at least 0, not -5"),
            "{e}"
        );
        let e = refusal("--workers", "-2");
        assert!(e.contains("`--workers` must be at least 1, not -2"), "{e}");
        // The demo's `--overload -1` reaches its own check ("a number above 0") likewise.
        let demo = Cli::try_parse_from(["sluicegate", "demo", "--overload", "-1"]).unwrap();
        let Command::Demo(args) = demo.command else {
            panic!("not demo");
        };
        assert_eq!(args.overload, -1.0);
        let e = refusal("--max-concurrency", "lots");
        assert!(
            e.contains("takes a whole number, like 8, not `lots`"),
            "{e}"
        );
    }
}
