//! The test support's `redis-server` does not outlive a test process killed from outside
//! (SIGKILL: no destructor runs), as when CI's timeout or a developer's `kill -9` stops a
//! hung test binary.

mod support;

use std::time::Duration;

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

/// Defect pinned: a test process killed with SIGKILL left its `redis-server` running (the
/// support's `Drop` never ran), holding its port and memory until someone killed it by
/// hand. Started through `setpriv --pdeathsig KILL`, the server is killed with the process.
#[test]
fn a_killed_test_process_takes_its_redis_server_with_it() {
    support::assert_dies_with_a_killed_test_process(
        "hold_a_redis_server_until_killed",
        HOLD,
        "redis-server pid=",
    );
}
