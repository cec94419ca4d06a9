//! A real `redis-server` per test, on a loopback port held for it, stopped when dropped,
//! and killed with the test process when that is killed from outside (SIGKILL runs no
//! `Drop`). Shared by the test support of `sluicegate-redis` and `sluicegate-gate` (which
//! includes this file by path): no mock Redis, and no skipping when it is missing.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A loopback port held for as long as this lives: a socket bound to it with `SO_REUSEADDR`,
/// never listening. Connections to it are refused; the kernel hands it to no other `bind`
/// to port 0; a `redis-server` (which sets `SO_REUSEADDR` too) can still listen on it, and
/// listen again after a restart.
///
/// Not a listener bound and dropped to "free" a port: in CI another test's process bound
/// such a port before the process meant for it did, and the test talked to a stranger.
pub struct ReservedPort {
    _socket: tokio::net::TcpSocket,
    pub port: u16,
}

impl ReservedPort {
    /// Reserves a port the kernel picks.
    pub fn new() -> Self {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.set_reuseaddr(true).expect("SO_REUSEADDR");
        socket
            .bind(([127, 0, 0, 1], 0).into())
            .expect("a loopback port");
        let port = socket.local_addr().expect("its address").port();
        ReservedPort {
            _socket: socket,
            port,
        }
    }

    /// The URL a Redis on this port will have.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

/// A `redis-server` child process on `127.0.0.1:port`, killed on drop; the port stays
/// reserved for it until then, across [`kill`](Self::kill) and [`restart`](Self::restart).
pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
    _reserved: ReservedPort,
    /// The TLS port of a server started with [`start_tls`](Self::start_tls) (`port` stays
    /// plain, for the tests to look at what is stored), and its `redis-server` arguments.
    pub tls_port: Option<u16>,
    tls_args: Vec<String>,
    _tls_reserved: Option<ReservedPort>,
}

impl RedisServer {
    /// Starts a server on a port of its own and waits until it answers.
    ///
    /// Panics, naming the install command, when `redis-server` is not installed: a test that
    /// needs Redis never skips silently.
    pub fn start() -> Self {
        Self::start_on(ReservedPort::new())
    }

    /// Starts a server on `reserved` (a port clients were already told about).
    pub fn start_on(reserved: ReservedPort) -> Self {
        let mut server = RedisServer {
            child: None,
            port: reserved.port,
            _reserved: reserved,
            tls_port: None,
            tls_args: Vec::new(),
            _tls_reserved: None,
        };
        server.restart();
        server
    }

    /// Starts a server that serves TLS on [`tls_port`](Self::tls_port) with the certificate
    /// `cert` and its `key` (PEM files), clients not asked for a certificate unless
    /// `client_ca` is given (mutual TLS: `--tls-auth-clients yes`), and plain Redis on `port`.
    /// Debian's `redis-server` is built with TLS.
    pub fn start_tls(
        cert: &std::path::Path,
        key: &std::path::Path,
        client_ca: Option<&std::path::Path>,
    ) -> Self {
        let tls = ReservedPort::new();
        let path = |p: &std::path::Path| p.to_str().expect("a UTF-8 path").to_owned();
        let mut tls_args = vec![
            "--tls-port".to_owned(),
            tls.port.to_string(),
            "--tls-cert-file".to_owned(),
            path(cert),
            "--tls-key-file".to_owned(),
            path(key),
        ];
        match client_ca {
            Some(ca) => tls_args.extend([
                "--tls-ca-cert-file".to_owned(),
                path(ca),
                "--tls-auth-clients".to_owned(),
                "yes".to_owned(),
            ]),
            None => tls_args.extend(["--tls-auth-clients".to_owned(), "no".to_owned()]),
        }
        let reserved = ReservedPort::new();
        let mut server = RedisServer {
            child: None,
            port: reserved.port,
            _reserved: reserved,
            tls_port: Some(tls.port),
            tls_args,
            _tls_reserved: Some(tls),
        };
        server.restart();
        server
    }

    /// The `rediss://` URL of a [`start_tls`](Self::start_tls) server, by `host` (the
    /// certificate's name, or another to see it refused).
    pub fn tls_url(&self, host: &str) -> String {
        format!("rediss://{host}:{}/", self.tls_port.expect("a TLS server"))
    }

    /// Starts the server again on its port, after [`kill`](Self::kill).
    pub fn restart(&mut self) {
        self.restart_with(&[]);
    }

    /// [`restart`](Self::restart) with more `redis-server` arguments (`--requirepass x`:
    /// a Redis that asks for a password from its first answer on).
    pub fn restart_with(&mut self, args: &[&str]) {
        assert!(self.child.is_none(), "redis-server is running");
        let mut command = tied_to_this_process("redis-server");
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(&self.tls_args)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = spawn_from_a_lasting_thread(command).unwrap_or_else(|e| {
            panic!(
                "cannot start redis-server ({e}); these tests need a real Redis: \
                     install it with `apt-get install -y redis-server` (scripts/test.sh does)"
            )
        });
        self.child = Some(child);
        self.wait_ready();
    }

    /// The URL to connect to.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's process id (0 while it is killed).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Waits until the server answers `PING`. No deadline short of a minute: a loaded
    /// machine may take seconds to start it, and one that exits says why at once.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if ping(self.port) {
                return;
            }
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "redis-server exited ({status}) instead of listening on {} (through \
                     setpriv, a redis-server that is not installed ends so too: install it \
                     with `apt-get install -y redis-server`)",
                    self.port
                );
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not start on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops the server (SIGSTOP): it keeps its connections open and answers nothing, as a
    /// Redis descheduled on a busy host or behind a stalled network does, until
    /// [`resume`](Self::resume).
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// Lets a [`pause`](Self::pause)d server run again (SIGCONT): it answers what it was sent.
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        let pid = self.pid();
        assert_ne!(pid, 0, "redis-server is not running");
        let status = Command::new("kill")
            .args([format!("-{name}"), pid.to_string()])
            .status()
            .expect("kill(1)");
        assert!(status.success(), "kill -{name} {pid}: {status}");
    }

    /// Kills the server at once (SIGKILL: no goodbye to its clients) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A command that runs `program` and dies with this process: through util-linux's
/// `setpriv --pdeathsig KILL` (essential on Debian) when it is on `PATH`, which execs the
/// program with the parent-death signal set (the workspace forbids the `unsafe` a
/// `pre_exec` `prctl` would need). Without `setpriv`, `program` itself, which a killed test
/// process leaves behind.
pub fn tied_to_this_process(program: &str) -> Command {
    static SETPRIV: OnceLock<bool> = OnceLock::new();
    let setpriv = *SETPRIV.get_or_init(|| {
        Command::new("setpriv")
            .args(["--pdeathsig", "KILL", "--", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !setpriv {
        return Command::new(program);
    }
    let mut command = Command::new("setpriv");
    command.args(["--pdeathsig", "KILL", "--", program]);
    command
}

/// Spawns `command` from a thread that lives as long as the process. The parent-death
/// signal follows the *thread* that started the child, not the process: started from a
/// test's own thread, a server would be killed when that thread ends, even when it was
/// handed on to outlive it.
fn spawn_from_a_lasting_thread(command: Command) -> io::Result<Child> {
    type Spawn = (Command, mpsc::Sender<io::Result<Child>>);
    static SPAWNER: OnceLock<mpsc::Sender<Spawn>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Spawn>();
        std::thread::Builder::new()
            .name("redis-spawner".into())
            .spawn(move || {
                // Never ends: the sender is in a static.
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("a thread to start redis-server from");
        tx
    });
    let (reply, child) = mpsc::channel();
    spawner
        .send((command, reply))
        .map_err(|_| io::Error::other("the spawning thread is gone"))?;
    child
        .recv()
        .map_err(|_| io::Error::other("the spawning thread is gone"))?
}

/// Whether a Redis on `port` answers `PING`, with PONG or by asking for a password (the
/// inline protocol; no client crate needed).
fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut buf = [0u8; 7];
    // A server asking for a password answers too.
    s.write_all(b"PING\r\n").is_ok()
        && s.read_exact(&mut buf).is_ok()
        && (&buf == b"+PONG\r\n" || &buf == b"-NOAUTH")
}

/// Whether process `pid` has ended (gone, or a zombie nobody has reaped yet).
pub fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// Checks that what a test process starts dies with it when it is killed from outside
/// (SIGKILL: no `Drop` runs), as when CI's timeout or a developer's `kill -9` stops a hung
/// test binary. Runs `helper`, an ignored test of the running test binary that starts the
/// child and prints `said` followed by its pid, in a process of its own with `hold_env` set;
/// kills that process and panics unless the child ends too (kills it if not, so a failing
/// run leaves nothing behind either).
pub fn assert_dies_with_a_killed_test_process(helper: &str, hold_env: &str, said: &str) {
    use std::io::{BufRead, BufReader};
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            helper,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(hold_env, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // libtest's `test NAME ... ` may start the same line.
    let line = BufReader::new(holder.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains(said))
        .unwrap_or_else(|| panic!("{helper} did not say `{said}`"));
    let pid: u32 = line[line.find(said).unwrap() + said.len()..]
        .split(' ')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a pid");
    assert!(!ended(pid), "{pid} is running");

    holder.kill().unwrap(); // SIGKILL
    holder.wait().unwrap();
    // Generous for a loaded machine: the kernel sends the signal as the process dies.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ended(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if !ended(pid) {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("{pid} outlived the test process that started it");
    }
}
