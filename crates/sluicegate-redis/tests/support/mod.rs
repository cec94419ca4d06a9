//! A real `redis-server` per test, on a free loopback port, stopped when dropped.
#![allow(dead_code, unreachable_pub)]

use std::net::TcpListener;
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
    /// Panics, naming the install command, when `redis-server` is not installed: a test that
    /// needs Redis never skips silently.
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        Self::start_on(port)
    }

    /// Starts a server on `port` (a restart after [`kill`](Self::kill) reuses the port).
    pub fn start_on(port: u16) -> Self {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start redis-server ({e}); these tests need a real Redis: \
                     install it with `apt-get install -y redis-server` (scripts/test.sh does)"
                )
            });
        let server = RedisServer {
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

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(client) = redis::Client::open(self.url()) {
                if let Ok(mut con) = client.get_connection() {
                    if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                        return;
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not start on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills the server at once (SIGKILL: no goodbye to its clients) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A plain synchronous connection, for a test to look at or change what is stored.
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection()
            .unwrap()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A store on `redis` with a budget generous enough for a loaded test machine: tests that
/// are not about the budget must not see fallbacks.
pub async fn store(redis: &RedisServer) -> sluicegate_redis::RedisStore {
    sluicegate_redis::RedisStore::builder(&redis.url())
        .budget(Duration::from_secs(2))
        .connect()
        .await
        .unwrap()
}
