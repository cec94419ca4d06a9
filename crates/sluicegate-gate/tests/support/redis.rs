//! A real `redis-server` per test, on a free loopback port, stopped when dropped (as in
//! `sluicegate-redis`'s tests: no mock, and no skipping when it is missing).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` child process on `127.0.0.1:port`, killed on drop.
pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
}

impl RedisServer {
    /// Starts a server on a free loopback port and waits until it answers.
    ///
    /// Panics, naming the install command, when `redis-server` is not installed.
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        Self::start_on(port)
    }

    /// Starts a server on `port` (a restart after [`kill`](Self::kill) reuses the port).
    pub fn start_on(port: u16) -> Self {
        let child = Command::new("nice")
            .args(["-n", "19", "redis-server", "--port", &port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server ({e})"));
        let mut server = RedisServer {
            child: Some(child),
            port,
        };
        server.wait_ready();
        server
    }

    /// The URL to connect to.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if ping(self.port) {
                return;
            }
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "redis-server exited ({status}); these tests need a real Redis: install it \
                     with `apt-get install -y redis-server` (scripts/test.sh does)"
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

    /// Kills the server at once (SIGKILL: no goodbye to its clients) and waits for it.
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

/// Whether a Redis on `port` answers `PING` (the inline protocol; no client crate needed).
fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut buf = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}
