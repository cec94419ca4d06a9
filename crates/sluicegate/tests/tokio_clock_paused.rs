//! `TokioClock` in a runtime paused before the process's first clock reading (trial102,
//! finding 5). A binary of its own: the clock's epoch is process-wide, and a test that read
//! it first would hide the case.

use sluicegate::clock::{Clock, TokioClock};
use std::time::Duration;

/// A paused runtime's time starts at the real instant it was paused. Set-up that takes real
/// time before the first reading (here 5 ms) used to put the clock's epoch after that
/// instant, and every reading saturated to 0 until virtual time caught up: a 10 ms advance
/// read as none, and an adaptive limiter under a user's paused test saw latencies of 0.
#[test]
fn tokio_clock_moves_with_a_runtime_paused_before_its_first_reading() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        // Real set-up time between the pause and the first reading: the case itself, not a
        // wait for something to happen.
        std::thread::sleep(Duration::from_millis(5));
        let before = TokioClock.now();
        tokio::time::advance(Duration::from_millis(10)).await;
        let after = TokioClock.now();
        assert_eq!(
            after - before,
            Duration::from_millis(10),
            "read {before:?} then {after:?}"
        );
    });
}
