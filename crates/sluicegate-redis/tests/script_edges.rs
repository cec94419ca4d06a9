//! The Lua scripts at the edges of their number ranges, on a real `redis-server` with a fake
//! clock: each script runs as the crate sends it, but with `redis.call('TIME')` answering a
//! time the test picks (near the GCRA state's wrap at 2^23 s, at the longest horizon, at the
//! sliding window's 2^53 µs limit, with slices moving on or the clock stepping back).

mod support;

use redis::{Commands, Script};
use support::RedisServer;

const GCRA: &str = concat!(
    include_str!("../src/rate/time.lua"),
    include_str!("../src/rate/gcra.lua")
);
const SLIDING: &str = include_str!("../src/rate/sliding.lua");
/// The GCRA state's modulus: 2^23 s in ns.
const M: i64 = (1 << 23) * 1_000_000_000;
/// The longest horizon (`burst × t`) the builder allows.
const H: i64 = 1 << 52;
/// A second at which the GCRA state wraps (in November 2026).
const WRAP: i64 = 214 * (1 << 23);

/// `body` with Redis's clock stopped at `sec` s and `usec` µs since 1970.
fn at(sec: i64, usec: i64, body: &str) -> Script {
    Script::new(&format!(
        "local real = redis\n\
         local redis = {{ call = function(c, ...)\n\
           if c == 'TIME' then return {{ '{sec}', '{usec}' }} end\n\
           return real.call(c, ...)\n\
         end }}\n{body}"
    ))
}

/// One GCRA step at the fake time: `[tat before (ns after now), s, µs]`, and the stored state.
fn gcra(con: &mut redis::Connection, (sec, usec): (i64, i64), t_n: i64) -> (Vec<i64>, String) {
    let reply = at(sec, usec, GCRA)
        .key("g")
        .arg(t_n)
        .arg(H)
        .arg(60_000)
        .invoke(con)
        .unwrap();
    let state: Option<String> = con.get("g").unwrap();
    (reply, state.unwrap_or_default())
}

#[test]
fn gcra_state_crosses_the_wrap_at_2_23_seconds_exactly() {
    let redis = RedisServer::start();
    let mut con = redis.connection();
    // Half a second before the wrap, 2 s of tokens: the state lands 1.5 s past it.
    let (reply, state) = gcra(&mut con, (WRAP - 1, 500_000), 2_000_000_000);
    assert_eq!(reply, [0, WRAP - 1, 500_000]);
    assert_eq!(state, "1500000000");
    // Read before the wrap it is 2 s ahead; after it, 1 s ahead, to the nanosecond.
    let (reply, _) = gcra(&mut con, (WRAP - 1, 500_000), 0);
    assert_eq!(reply[0], 2_000_000_000);
    let (reply, state) = gcra(&mut con, (WRAP, 500_000), 7);
    assert_eq!(reply[0], 1_000_000_000);
    assert_eq!(state, "1500000007");
    // A state just behind now across the wrap is due: a full bucket.
    let _: () = con.set("g", M - 1).unwrap();
    let (reply, _) = gcra(&mut con, (WRAP, 0), 0);
    assert_eq!(reply[0], 0);
}

#[test]
fn gcra_state_at_the_longest_horizon_is_ahead_and_beyond_it_behind() {
    let redis = RedisServer::start();
    let mut con = redis.connection();
    // A step of the whole horizon from a microsecond before the wrap: written exactly.
    let (reply, state) = gcra(&mut con, (WRAP - 1, 999_999), H);
    assert_eq!(reply[0], 0);
    assert_eq!(state, (H - 1000).to_string());
    let (reply, _) = gcra(&mut con, (WRAP - 1, 999_999), 0);
    assert_eq!(reply[0], H, "the full horizon ahead, across the wrap");
    // One nanosecond further no writer can have been: it is read as the past.
    let _: () = con.set("g", H - 999).unwrap();
    let (reply, _) = gcra(&mut con, (WRAP - 1, 999_999), 0);
    assert_eq!(reply[0], 0);
    // Ahead by the horizon without a wrap, from the start of the cycle.
    let _: () = con.set("g", H + 5000).unwrap();
    let (reply, _) = gcra(&mut con, (WRAP, 5), 0);
    assert_eq!(reply[0], H);
}

/// One sliding-window call at the fake time, 3 slices of 1 s, limit 10: `[age, µs, counts]`.
fn sliding(con: &mut redis::Connection, (sec, usec): (i64, i64), n: i64) -> Vec<i64> {
    at(sec, usec, SLIDING)
        .key("w")
        .arg("<dddddd")
        .arg(3)
        .arg(1_000_000)
        .arg(10 - n)
        .arg(13 - n)
        .arg(n)
        .arg(6000)
        .arg(8 * 3 + 16)
        .invoke(con)
        .unwrap()
}

/// The ring as stored: `[slice µs, newest slice, counts…]`.
fn ring(con: &mut redis::Connection) -> Vec<f64> {
    let raw: Vec<u8> = con.get("w").unwrap();
    let doubles = raw
        .chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()));
    doubles.collect()
}

#[test]
fn window_counts_move_on_with_the_slices() {
    let redis = RedisServer::start();
    let mut con = redis.connection();
    let s = 1_790_000_000;
    // Admitted: the window's count and the leaving slice's, all the rule needs.
    assert_eq!(
        sliding(&mut con, (s, 10), 2),
        [-1, s * 1_000_000 + 10, 0, 0]
    );
    assert_eq!(ring(&mut con), [1e6, s as f64, 0.0, 0.0, 0.0, 2.0]);
    assert_eq!(
        sliding(&mut con, (s, 20), 1),
        [-1, s * 1_000_000 + 20, 2, 0]
    );
    // Asked for nothing: the stored counts, moved on by 0 slices.
    let reply = sliding(&mut con, (s, 30), 0);
    assert_eq!(reply, [0, s * 1_000_000 + 30, 0, 0, 0, 3]);
    let reply = sliding(&mut con, (s + 1, 0), 3);
    assert_eq!(reply, [-1, (s + 1) * 1_000_000, 3, 0]);
    assert_eq!(ring(&mut con), [1e6, (s + 1) as f64, 0.0, 0.0, 3.0, 3.0]);
    let ttl: i64 = con.pttl("w").unwrap();
    assert!(
        (5000..=6000).contains(&ttl),
        "set at a slice's first: {ttl}"
    );
    // Two slices on: the window is [3, 3, 0, 0] (slice s about to leave): 7 more would make
    // 10 in the window but 13 with the leaving slice, the edge cap; 8 would not. A denial
    // answers the stored counts and how far the window moved past them.
    let reply = sliding(&mut con, (s + 3, 0), 8);
    assert_eq!(reply, [2, (s + 3) * 1_000_000, 0, 0, 3, 3]);
    assert_eq!(ring(&mut con), [1e6, (s + 1) as f64, 0.0, 0.0, 3.0, 3.0]);
    let reply = sliding(&mut con, (s + 3, 0), 7);
    assert_eq!(reply, [-1, (s + 3) * 1_000_000, 3, 3]);
    assert_eq!(ring(&mut con), [1e6, (s + 3) as f64, 3.0, 3.0, 0.0, 7.0]);
    // Four slices on, nothing of the ring is left in the window.
    assert_eq!(sliding(&mut con, (s + 7, 0), 0), [4, (s + 7) * 1_000_000]);
}

#[test]
fn a_ring_of_another_shape_starts_empty_and_a_clock_stepped_back_counts_in_the_newest_slice() {
    let redis = RedisServer::start();
    let mut con = redis.connection();
    let s = 1_790_000_000;
    // Written with another slice length: the same size, but not these slices.
    let other: Vec<u8> = [5e5, 2.0 * s as f64, 9.0, 9.0, 9.0, 9.0]
        .iter()
        .flat_map(|d: &f64| d.to_le_bytes())
        .collect();
    let _: () = con.set("w", other).unwrap();
    assert_eq!(sliding(&mut con, (s, 0), 0), [4, s * 1_000_000]);
    assert_eq!(sliding(&mut con, (s, 0), 1), [-1, s * 1_000_000, 0, 0]);
    assert_eq!(ring(&mut con), [1e6, s as f64, 0.0, 0.0, 0.0, 1.0]);
    // Of another length (4 slices): the same.
    let _: () = con.set("w", vec![0u8; 8 * 7]).unwrap();
    assert_eq!(sliding(&mut con, (s, 0), 0), [4, s * 1_000_000]);
    assert_eq!(sliding(&mut con, (s, 0), 1), [-1, s * 1_000_000, 0, 0]);
    // The clock steps back two slices: the newest slice written keeps counting.
    sliding(&mut con, (s + 2, 0), 2);
    assert_eq!(ring(&mut con), [1e6, (s + 2) as f64, 0.0, 1.0, 0.0, 2.0]);
    let reply = sliding(&mut con, (s, 0), 0);
    assert_eq!(reply, [0, s * 1_000_000, 0, 1, 0, 2]);
    assert_eq!(sliding(&mut con, (s, 0), 1), [-1, s * 1_000_000, 3, 0]);
    assert_eq!(ring(&mut con), [1e6, (s + 2) as f64, 0.0, 1.0, 0.0, 3.0]);
}

#[test]
fn window_time_is_exact_up_to_2_53_microseconds() {
    let redis = RedisServer::start();
    let mut con = redis.connection();
    // 2^53 µs is in 2255; the last whole second before it, to the microsecond.
    let (sec, usec) = (9_007_199_253, 999_999);
    let reply = sliding(&mut con, (sec, usec), 1);
    assert_eq!(reply[1], 9_007_199_253_999_999);
    assert_eq!(ring(&mut con)[1], sec as f64);
}
