//! Review 22, finding 3: a reload's work (read the file, check it, build the pools and
//! routes, install) ran on the runtime that accepts connections and answers the admin API,
//! so with `workers = 1` nothing was answered while a reload computed (0.03 s with 2000
//! pools and routes in a release build, and every queued reload after it). It now runs on
//! the runtime's blocking threads.
//!
//! No clock: the reload is held where it reads a file, for as long as the test likes. The
//! admin `token_file` of the new config is a named pipe, which the gate reads twice: once
//! with the file (`config::read` checks it can be read) and once as it builds the new state
//! (`State::build`). Each read blocks until the test writes the token. While either is held,
//! a new connection must get its answer, and a SIGTERM must stop the gate; the old code
//! answered nothing and heard no signal until the pipe was written.

#![cfg(target_os = "linux")]

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};

use support::{Gate, PATIENCE, Upstream, write_config};

/// The gate's config: pool `api` at `max` on `upstream`, an admin listener, one worker (so
/// that everything runs on the one runtime), and `token` as the admin `token_file`.
fn text(upstream: &str, max: usize, token: Option<&Path>) -> String {
    let token = token.map_or(String::new(), |t| {
        format!("token_file = \"{}\"\n", t.display())
    });
    format!(
        "listen = \"127.0.0.1:0\"\nworkers = 1\n\n[admin]\nlisten = \"127.0.0.1:0\"\n{token}\n\
         [[pools]]\nname = \"api\"\nupstream = \"{upstream}\"\nmax_concurrency = {max}\n\n\
         [[routes]]\npool = \"api\"\n"
    )
}

/// A named pipe next to `config`.
fn fifo(config: &Path) -> PathBuf {
    let path = config.with_file_name("token.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo failed");
    path
}

/// One write of the pipe, held: the thread opens the pipe for writing, which returns once
/// the gate has opened it for reading, says so, and writes the token only when released.
/// Until then the gate's read waits.
struct Writer {
    opened: tokio::sync::oneshot::Receiver<()>,
    release: std::sync::mpsc::Sender<()>,
}

impl Writer {
    fn start(path: &Path) -> Writer {
        let path = path.to_owned();
        let (opened_tx, opened) = tokio::sync::oneshot::channel();
        let (release, released) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut pipe = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let _ = opened_tx.send(());
            // Released, or the test is over: the gate may be gone (EPIPE), which is fine.
            let _ = released.recv();
            let _ = pipe.write_all(b"secret\n");
        });
        Writer { opened, release }
    }

    /// Waits until the gate reads the pipe (and waits for it).
    async fn opened(&mut self, what: &str) {
        tokio::time::timeout(PATIENCE, &mut self.opened)
            .await
            .unwrap_or_else(|_| panic!("the gate did not read the token file {what}"))
            .unwrap();
    }

    fn release(self) {
        let _ = self.release.send(());
    }
}

/// Whether the gate (process `pid`) has `path` open.
fn has_open(pid: u32, path: &Path) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(Result::ok)
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == path))
}

/// A request on a new connection and an admin call are answered (the admin API as it is
/// before the reload: no token).
async fn answers(gate: &Gate, during: &str) {
    let reply = tokio::time::timeout(PATIENCE, support::get(gate.proxy, "/fast", "1"))
        .await
        .unwrap_or_else(|_| panic!("no answer to a new connection {during}"));
    assert_eq!(reply.status, 200, "{during}: {}", reply.body);
    let status = tokio::time::timeout(PATIENCE, gate.admin_call("GET", "/status", None, ""))
        .await
        .unwrap_or_else(|_| panic!("no answer from the admin API {during}"));
    assert_eq!(status.status, 200, "{during}: {}", status.body);
}

/// Releases `read` (the gate's first read of the token pipe, with the file) and holds the
/// second (as the new state is built).
async fn to_the_second_read(gate: &Gate, token: &Path, read: Writer) -> Writer {
    read.release();
    // The first read is over (the gate closed the pipe) before the second writer opens it:
    // else that writer would feed the first read.
    support::eventually(
        "the gate closes the token file after its first read",
        || {
            let open = has_open(gate.pid(), token);
            async move { !open }
        },
    )
    .await;
    let mut build = Writer::start(token);
    build.opened("as the state was built").await;
    build
}

#[tokio::test]
async fn the_gate_answers_while_a_reload_reads_and_builds() {
    let upstream = Upstream::start().await;
    let path = write_config("off-loop", &text(&upstream.url(), 5, None));
    let token = fifo(&path);
    let mut gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
    answers(&gate, "before the reload").await;

    support::rewrite(&path, &text(&upstream.url(), 7, Some(&token)));
    let mut read = Writer::start(&token);
    gate.signal("HUP");
    read.opened("as the file was read").await;
    // What the wait below looks at (and a sign this is the gate's own process).
    assert!(
        has_open(gate.pid(), &token),
        "the reading gate has no fd on the pipe"
    );
    answers(&gate, "while a reload read its file").await;
    let build = to_the_second_read(&gate, &token, read).await;
    answers(&gate, "while a reload built the new state").await;
    build.release();

    gate.log_line("config reloaded").await;
    let status = gate.admin_call("GET", "/status", Some("secret"), "").await;
    assert_eq!(status.status, 200, "{}", status.body);
    let status: serde_json::Value = serde_json::from_str(&status.body).unwrap();
    assert_eq!(
        status["pools"]["api"]["limit"], 7,
        "the reload did not install the file: {status}"
    );
}

/// A stop during a reload stops the gate at once, even while the reload's read is stuck
/// (a pipe no one writes), with the file or as it builds the new state (the token is read
/// again then, before the config lock, which the drain takes): the runtime's shutdown does
/// not wait for it.
#[tokio::test]
async fn a_stop_while_a_reload_is_stuck_in_a_read_stops_the_gate() {
    for second in [false, true] {
        stop_while_stuck(second).await;
    }
}

async fn stop_while_stuck(second: bool) {
    let upstream = Upstream::start().await;
    let path = write_config("off-loop-stop", &text(&upstream.url(), 5, None));
    let token = fifo(&path);
    let mut gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
    support::rewrite(&path, &text(&upstream.url(), 7, Some(&token)));
    let mut read = Writer::start(&token);
    gate.signal("HUP");
    read.opened("as the file was read").await;
    if second {
        read = to_the_second_read(&gate, &token, read).await;
    }
    gate.signal("TERM");
    gate.log_line("SIGTERM received during a reload").await;
    let exit = tokio::time::timeout(PATIENCE, gate.child.wait())
        .await
        .unwrap_or_else(|_| {
            panic!("the gate did not stop while a reload's read was stuck (second read: {second})")
        })
        .unwrap();
    assert!(exit.success(), "{exit}");
    drop(read);
}
