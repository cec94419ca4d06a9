//! The built `sluicegate` binary, started as a user would start it.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// A running gate process; killed when dropped.
pub struct Gate {
    pub child: Child,
    pub proxy: SocketAddr,
    pub admin: Option<SocketAddr>,
    /// Every log line the gate writes from now on.
    pub logs: mpsc::UnboundedReceiver<String>,
}

impl Gate {
    /// `sluicegate serve` in front of `upstream` with limits too high to be hit and
    /// `workers` worker threads.
    pub async fn in_front_of(upstream: SocketAddr, workers: &str) -> Gate {
        Gate::in_front_of_with(upstream, &[("--workers", workers)]).await
    }

    /// `sluicegate serve` in front of `upstream`: one worker, a concurrency of 100, a queue
    /// of 100 with a 5 s timeout, a 5 s upstream timeout — each flag in `set` replacing its
    /// default or added.
    pub async fn in_front_of_with(upstream: SocketAddr, set: &[(&str, &str)]) -> Gate {
        let url = format!("http://{upstream}");
        let mut flags: Vec<(&str, &str)> = vec![
            ("--listen", "127.0.0.1:0"),
            ("--upstream", &url),
            ("--max-concurrency", "100"),
            ("--max-queue", "100"),
            ("--queue-timeout", "5s"),
            ("--upstream-timeout", "5s"),
            ("--workers", "1"),
        ];
        for &(flag, value) in set {
            match flags.iter_mut().find(|(f, _)| *f == flag) {
                Some(f) => f.1 = value,
                None => flags.push((flag, value)),
            }
        }
        let mut args = vec!["serve"];
        args.extend(flags.iter().flat_map(|&(f, v)| [f, v]));
        Gate::start(&args).await
    }

    /// Runs `sluicegate ARGS` and waits until it says where it listens. The gate dies with
    /// this test process even when that is killed from outside (SIGKILL runs no `Drop`, so
    /// `kill_on_drop` alone would leave it running).
    pub async fn start(args: &[&str]) -> Gate {
        let mut command = Command::from(super::tied_to_this_process(env!(
            "CARGO_BIN_EXE_sluicegate"
        )));
        command.args(args);
        Gate::start_command(command).await
    }

    /// Runs `command` (which runs the gate) and waits until the gate says where it listens.
    pub async fn start_command(mut command: Command) -> Gate {
        let mut child = command
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let (mut proxy, mut admin) = (None, None);
        let addr_after = |line: &str, what: &str| {
            line.split(what)
                .nth(1)
                .and_then(|r| r.trim().parse::<SocketAddr>().ok())
        };
        let mut early = Vec::new();
        // A gate that hangs before it listens fails the test instead of holding the suite
        // until CI's own timeout (cargo has none per test).
        let deadline = tokio::time::Instant::now() + super::PATIENCE;
        loop {
            let line = match tokio::time::timeout_at(deadline, lines.next_line()).await {
                Ok(Ok(Some(line))) => line,
                Ok(_) => break,
                Err(_) => panic!(
                    "the gate did not say where it listens within {:?}: {early:#?}",
                    super::PATIENCE
                ),
            };
            if let Some(a) = addr_after(&line, "proxy listening on ") {
                proxy = Some(a);
            }
            if let Some(a) = addr_after(&line, "admin listening on ") {
                admin = Some(a);
            }
            early.push(line);
            // The admin listener is announced first, so the proxy's line ends the start.
            if proxy.is_some() {
                break;
            }
        }
        let Some(proxy) = proxy else {
            panic!("the gate did not start: {early:#?}");
        };
        let (tx, logs) = mpsc::unbounded_channel();
        for l in early {
            let _ = tx.send(l);
        }
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = tx.send(line);
            }
        });
        Gate {
            child,
            proxy,
            admin,
            logs,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    /// Sends `signal` (`HUP`, `TERM`, ...) to the gate.
    pub fn signal(&self, signal: &str) {
        let ok = std::process::Command::new("kill")
            .args([format!("-{signal}"), self.pid().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{signal} failed");
    }

    /// Waits (up to [`PATIENCE`](super::PATIENCE)) for a log line containing `text`.
    pub async fn log_line(&mut self, text: &str) -> String {
        loop {
            match tokio::time::timeout(super::PATIENCE, self.logs.recv()).await {
                Ok(Some(l)) if l.contains(text) => return l,
                Ok(Some(_)) => {}
                _ => panic!("no log line with `{text}`"),
            }
        }
    }

    fn admin(&self) -> SocketAddr {
        self.admin.expect("the gate has no admin listener")
    }

    /// `GET /status` (with `token` when given) as JSON.
    pub async fn status(&self) -> Value {
        let r = self.admin_call("GET", "/status", None, "").await;
        assert_eq!(r.status, 200, "{}", r.body);
        serde_json::from_str(&r.body).unwrap()
    }

    /// One pool's status.
    pub async fn pool(&self, name: &str) -> Value {
        self.status().await["pools"][name].clone()
    }

    pub async fn admin_call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: &str,
    ) -> super::Reply {
        let mut req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", self.admin().to_string());
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let req = req
            .header("content-type", "application/json")
            .body(http_body_util::Full::new(bytes::Bytes::from(
                body.to_owned(),
            )))
            .unwrap();
        super::request(self.admin(), req).await
    }
}

/// Writes `text` to a fresh file in a temporary directory of its own (two tests of one
/// binary giving the same `name` still get two files); the directory goes when the returned
/// file is dropped.
pub fn write_config(name: &str, text: &str) -> ConfigFile {
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "sluicegate-test-{}-{seq}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gate.toml");
    rewrite(&path, text);
    ConfigFile { path }
}

/// A config file written by [`write_config`]; dropping it removes its directory (a plain
/// `cargo test` left one in the temporary directory for every test that wrote a config).
#[derive(Debug)]
pub struct ConfigFile {
    path: PathBuf,
}

impl std::ops::Deref for ConfigFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ConfigFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for ConfigFile {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Replaces the file at `path` with `text`.
pub fn rewrite(path: &Path, text: &str) {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}
