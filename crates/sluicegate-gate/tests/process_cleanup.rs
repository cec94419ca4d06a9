//! The test support's `sluicegate` processes do not outlive a test process killed from
//! outside (SIGKILL: no destructor runs, so `kill_on_drop` does not either), as when CI's
//! timeout or a developer's `kill -9` stops a hung test binary.

mod support;

use std::time::Duration;

use support::Gate;

/// Set for the helper run below; without it, the helper returns at once (so that
/// `--include-ignored` runs do not wait on it).
const HOLD: &str = "SLUICEGATE_TEST_HOLD_GATE";

/// Not a test of its own: started by the test below in a process of its own, it starts a
/// gate, says its pid, and waits to be killed.
#[tokio::test]
#[ignore = "a helper that the test below runs in a process of its own"]
async fn hold_a_gate_until_killed() {
    if std::env::var_os(HOLD).is_none() {
        return;
    }
    // Nothing listens on the discard port: the gate starts all the same.
    let gate = Gate::in_front_of("127.0.0.1:9".parse().unwrap(), "1").await;
    println!("sluicegate pid={} proxy={}", gate.pid(), gate.proxy);
    // Killed long before this (the test below waits for the line above, then kills).
    tokio::time::sleep(Duration::from_secs(300)).await;
}

/// Defect pinned: a test process killed with SIGKILL left its `sluicegate` children running
/// (re-parented, holding their ports), since `kill_on_drop` needs a `Drop` that never ran.
/// Started through `setpriv --pdeathsig KILL`, they are killed with the process.
#[test]
fn a_killed_test_process_takes_its_gate_with_it() {
    support::assert_dies_with_a_killed_test_process(
        "hold_a_gate_until_killed",
        HOLD,
        "sluicegate pid=",
    );
}
