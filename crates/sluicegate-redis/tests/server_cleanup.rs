//! The test support's `redis-server` does not outlive a test process killed from outside
//! (SIGKILL: no destructor runs), as when CI's timeout or a developer's `kill -9` stops a
//! hung test binary.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::RedisServer;

/// Set for the helper run below; without it, the helper returns at once (so that
/// `--include-ignored` runs do not wait on it).
const HOLD: &str = "SLUICEGATE_TEST_HOLD_REDIS";

/// Not a test of its own: started by the test below in a process of its own, it starts a
/// `redis-server`, says its pid and port, and waits to be killed.
#[test]
#[ignore = "a helper that the test below runs in a process of its own"]
fn hold_a_redis_server_until_killed() {
    if std::env::var_os(HOLD).is_none() {
        return;
    }
    let redis = RedisServer::start();
    println!("redis-server pid={} port={}", redis.pid(), redis.port);
    // Killed long before this (the test below waits for the line above, then kills).
    std::thread::sleep(Duration::from_secs(300));
}

/// Whether process `pid` has ended (gone, or a zombie nobody has reaped yet).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// Defect pinned: a test process killed with SIGKILL left its `redis-server` running (the
/// support's `Drop` never ran), holding its port and memory until someone killed it by
/// hand. Started through `setpriv --pdeathsig KILL`, the server is killed with the process.
#[test]
fn a_killed_test_process_takes_its_redis_server_with_it() {
    let mut helper = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "hold_a_redis_server_until_killed", "--ignored"])
        .args(["--nocapture", "--test-threads=1"])
        .env(HOLD, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // libtest's `test NAME ... ` may start the same line.
    let said = "redis-server pid=";
    let line = BufReader::new(helper.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains(said))
        .expect("the helper started a redis-server");
    let pid: u32 = line[line.find(said).unwrap() + said.len()..]
        .split(' ')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("its pid");
    assert!(!ended(pid), "redis-server {pid} is running");

    helper.kill().unwrap(); // SIGKILL
    helper.wait().unwrap();
    // Generous for a loaded machine: the kernel sends the signal as the process dies.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ended(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if !ended(pid) {
        // Not left behind by this test either.
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("redis-server {pid} outlived the test process that started it");
    }
}
