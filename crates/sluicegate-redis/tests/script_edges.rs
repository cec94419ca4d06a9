//! The Lua scripts at the edges of their number ranges, on a real `redis-server` with a fake
//! clock: each script runs as the crate sends it, but with `redis.call('TIME')` answering a
//! time the test picks (near the GCRA state's wrap at 2^23 s, at the longest horizon, at the
//! sliding window's 2^53 µs limit, with slices moving on or the clock stepping back).

mod support;

use redis::{Commands, Script};
use support::RedisServer;

const GCRA: &str = concat!(
    include_str!("../src/rate/time.lua"),
    include_str!("../src/rate/gcra.lua"),
    include_str!("../src/rate/write.lua")
);
const LEASE: &str = concat!(
    include_str!("../src/rate/time.lua"),
    include_str!("../src/rate/lease.lua"),
    include_str!("../src/rate/write.lua")
);
const SLIDING: &str = include_str!("../src/rate/sliding.lua");
/// The GCRA state's modulus: 2^23 s in ns.
const M: i64 = (1 << 23) * 1_000_000_000;
/// The longest horizon (`burst × t`) the builder allows.
const H: i64 = 1 << 52;
/// A second at which the GCRA state wraps (in November 2026).
const WRAP: i64 = 214 * (1 << 23);
const SEC: i64 = 1_000_000_000;

/// `body` with Redis's clock stopped at `sec` s and `usec` µs since 1970. Each `SET key … PX
/// ms` the body sends is also noted under `key:armed` (the ms), so that a test can expire
/// keys by the fake clock.
fn at(sec: i64, usec: i64, body: &str) -> Script {
    Script::new(&format!(
        "local real = redis\n\
         local redis = {{ call = function(c, ...)\n\
           if c == 'TIME' then return {{ '{sec}', '{usec}' }} end\n\
           local a = {{ ... }}\n\
           if c == 'SET' and a[3] == 'PX' then real.call('SET', a[1] .. ':armed', a[4]) end\n\
           return real.call(c, ...)\n\
         end }}\n{body}"
    ))
}

/// Whole numbers as little-endian doubles, the way the crate packs script arguments.
fn packed(values: &[i64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| (v as f64).to_le_bytes())
        .collect()
}

/// Little-endian doubles back, each checked to be a whole number.
fn doubles(raw: &[u8]) -> Vec<i64> {
    assert_eq!(raw.len() % 8, 0, "{raw:?}");
    let whole = |b: &[u8]| {
        let v = f64::from_le_bytes(b.try_into().unwrap());
        assert_eq!(v.fract(), 0.0, "{v}");
        v as i64
    };
    raw.chunks(8).map(whole).collect()
}

/// Redis's expiry on the fake clock: a key armed at fake time `f` with `ms` left expires at
/// `f + ms` by that clock, and is deleted before the first call at or after it.
#[derive(Default)]
struct Expiry {
    /// When it expires by the fake clock (ns since 1970).
    at: Option<i64>,
    /// How often a call armed it.
    armings: u32,
}

impl Expiry {
    fn before(&mut self, con: &mut redis::Connection, key: &str, now_ns: i64) {
        if self.at.is_some_and(|at| at <= now_ns) {
            let _: () = con.del(key).unwrap();
            self.at = None;
        }
    }

    /// After a call at fake time `now_ns`: the expiry it armed, if it did.
    fn after(&mut self, con: &mut redis::Connection, key: &str, now_ns: i64) {
        let armed: Option<i64> = redis::cmd("GETDEL")
            .arg(format!("{key}:armed"))
            .query(con)
            .unwrap();
        if let Some(ms) = armed {
            self.at = Some(now_ns + ms * 1_000_000);
            self.armings += 1;
        }
    }
}

/// A GCRA bucket (key `g`) driven by the scripts on the fake clock, Redis's expiry included.
/// After every call it checks the promise of `write.lua`: a key with an expiry outlives its
/// state by at least about a second (it never expires while the state counts) and by at most
/// about two (a key read long after its state was due is not misread across the wrap).
struct Bucket {
    con: redis::Connection,
    expiry: Expiry,
}

impl Bucket {
    fn new(redis: &RedisServer) -> Self {
        Bucket {
            con: redis.connection(),
            expiry: Expiry::default(),
        }
    }

    /// One GCRA step of `t_n` ns at the fake time, horizon `H`: `[tat before (ns after now),
    /// s, µs]`.
    fn step(&mut self, (sec, usec): (i64, i64), t_n: i64) -> Vec<i64> {
        let script = at(sec, usec, GCRA);
        let mut call = script.key("g");
        call.arg(packed(&[t_n, H]));
        let reply: Vec<u8> = self.run((sec, usec), &call);
        doubles(&reply)
    }

    /// One lease at the fake time: `[got, tat after (ns after now), s, µs]`.
    fn lease(&mut self, (sec, usec): (i64, i64), t: i64, want: i64, need: i64) -> Vec<i64> {
        let script = at(sec, usec, LEASE);
        let mut call = script.key("g");
        call.arg(t).arg(H).arg(want).arg(need);
        self.run((sec, usec), &call)
    }

    fn run<T: redis::FromRedisValue>(
        &mut self,
        (sec, usec): (i64, i64),
        call: &redis::ScriptInvocation<'_>,
    ) -> T {
        let ns = sec * SEC + usec * 1000;
        self.expiry.before(&mut self.con, "g", ns);
        let reply = call.invoke(&mut self.con).unwrap();
        self.expiry.after(&mut self.con, "g", ns);
        if let (Some(state), Some(expires)) = (self.state(), self.expiry.at) {
            let now = (sec % (1 << 23)) * SEC + usec * 1000;
            // Ahead of now by at most H, else behind (the scripts' own reading).
            let ahead = (state - now).rem_euclid(M);
            let ahead = if ahead > H { ahead - M } else { ahead };
            let outlives = expires - (ns + ahead);
            assert!(
                (SEC..=2_001_000_000).contains(&outlives),
                "the key outlives its state by {outlives} ns"
            );
        }
        reply
    }

    /// The stored state (ns modulo M), if any.
    fn state(&mut self) -> Option<i64> {
        let raw: Option<Vec<u8>> = self.con.get("g").unwrap();
        raw.map(|raw| doubles(&raw)[0])
    }

    /// A state written by hand, without an expiry.
    fn put(&mut self, state: i64) {
        let _: () = self.con.set("g", packed(&[state])).unwrap();
        self.expiry = Expiry::default();
    }

    /// The key's expiry, ms from now by Redis's real clock (-1: none, -2: no key).
    fn pttl(&mut self) -> i64 {
        self.con.pttl("g").unwrap()
    }
}

#[test]
fn gcra_state_crosses_the_wrap_at_2_23_seconds_exactly() {
    let redis = RedisServer::start();
    let mut b = Bucket::new(&redis);
    // Half a second before the wrap, 2 s of tokens: the state lands 1.5 s past it.
    let reply = b.step((WRAP - 1, 500_000), 2 * SEC);
    assert_eq!(reply, [0, WRAP - 1, 500_000]);
    assert_eq!(b.state(), Some(1_500_000_000));
    // Read before the wrap it is 2 s ahead; after it, 1 s ahead, to the nanosecond.
    assert_eq!(b.step((WRAP - 1, 500_000), 0)[0], 2 * SEC);
    assert_eq!(b.step((WRAP, 500_000), 7)[0], SEC);
    assert_eq!(b.state(), Some(1_500_000_007));
    // A state just behind now across the wrap is due: a full bucket.
    b.put(M - 1);
    assert_eq!(b.step((WRAP, 0), 0)[0], 0);
}

#[test]
fn gcra_state_at_the_longest_horizon_is_ahead_and_beyond_it_behind() {
    let redis = RedisServer::start();
    let mut b = Bucket::new(&redis);
    // A step of the whole horizon from a microsecond before the wrap: written exactly, and
    // the key expires 2 s after the state.
    assert_eq!(b.step((WRAP - 1, 999_999), H)[0], 0);
    assert_eq!(b.state(), Some(H - 1000));
    let ttl = b.pttl();
    let expected = H / 1_000_000 + 2001;
    assert!((expected - 1000..=expected).contains(&ttl), "{ttl}");
    assert_eq!(
        b.step((WRAP - 1, 999_999), 0)[0],
        H,
        "the horizon ahead, across the wrap"
    );
    // One nanosecond further no writer can have been: it is read as the past.
    b.put(H - 999);
    assert_eq!(b.step((WRAP - 1, 999_999), 0)[0], 0);
    // Ahead by the horizon without a wrap, from the start of the cycle.
    b.put(H + 5000);
    assert_eq!(b.step((WRAP, 5), 0)[0], H);
}

/// The GCRA key's expiry must follow its state, not the horizon: a key that outlived its
/// state by more than `M - 2^52` ns (45 days) was misread as lying ahead across the wrap.
/// Pins that defect: the key was armed for a horizon and a second at every write, so with a
/// horizon of 52 days one token taken left a key that, read 46 days later, said the bucket
/// was 51 days from full (nearly empty) instead of full.
#[test]
fn gcra_key_expires_with_its_state_not_with_the_horizon() {
    let redis = RedisServer::start();
    let mut b = Bucket::new(&redis);
    // One token (of a 2^52 ns horizon) taken: the bucket is full again 1 µs later.
    let s = WRAP - 10 * 86_400;
    assert_eq!(b.step((s, 0), 1000)[0], 0);
    assert_eq!(b.step((s, 0), 0)[0], 1000);
    // 46 days later: full.
    assert_eq!(b.step((s + 46 * 86_400, 0), 0)[0], 0, "a full bucket");
}

/// The expiry is armed when a write lands in another second than the stored state (or on
/// no key), and kept when it lands in the same second (the 8 bytes rewritten in place): about
/// once a second per limit, and it always covers the state (`Bucket` checks each call).
#[test]
fn gcra_expiry_is_armed_once_per_second_of_state_and_always_covers_it() {
    let redis = RedisServer::start();
    let mut b = Bucket::new(&redis);
    let s = 1_790_000_000;
    // No key: armed; 1 ms of tokens a call, 100 calls within the state's second: kept.
    b.step((s, 0), 1_000_000);
    assert_eq!(b.expiry.armings, 1);
    for i in 1..100 {
        b.step((s, i * 1000), 1_000_000);
    }
    assert_eq!(b.expiry.armings, 1);
    assert_eq!(b.state(), Some((s % (1 << 23)) * SEC + 100_000_000));
    // Denied (beyond the horizon): no write, the expiry kept.
    let reply = b.step((s, 99_000), H);
    assert_eq!(reply[0], 1_000_000);
    assert_eq!(b.expiry.armings, 1);
    // The state crosses into the next second: armed again, then kept.
    b.step((s, 950_000), 100_000_000);
    assert_eq!(b.expiry.armings, 2);
    b.step((s, 960_000), 1);
    assert_eq!(b.expiry.armings, 2);
    // Far ahead (an hour of tokens): armed for the hour and 2 s.
    let tat = b.step((s, 970_000), 3600 * SEC)[0];
    assert_eq!(b.expiry.armings, 3);
    let (ttl, expected) = (b.pttl(), (tat + 3600 * SEC) / 1_000_000 + 2001);
    assert!((expected - 1000..=expected).contains(&ttl), "{ttl}");
    // Now moves on within that hour while the state stays in its second: kept.
    b.step((s + 1800, 0), 1);
    assert_eq!(b.expiry.armings, 3);
}

/// A key whose state is already due (a full bucket) but which has not expired yet: a write
/// in the same second as that stale state keeps its expiry, which still covers the new state;
/// in a later second, arms it again.
#[test]
fn gcra_stale_key_is_rewritten_in_place_only_within_its_second() {
    let redis = RedisServer::start();
    let mut b = Bucket::new(&redis);
    let s = 1_790_000_000;
    b.step((s, 100_000), 1);
    assert_eq!(b.expiry.armings, 1);
    // 0.8 s later the state is due; same second: rewritten in place, expiry kept.
    assert_eq!(b.step((s, 900_000), 5)[0], 0);
    assert_eq!(b.expiry.armings, 1);
    assert_eq!(b.state(), Some((s % (1 << 23)) * SEC + 900_000_005));
    // 0.5 s later, due, in another second: armed again.
    assert_eq!(b.step((s + 1, 400_000), 5)[0], 0);
    assert_eq!(b.expiry.armings, 2);
    // 3 s after that the key is gone (by the fake clock): a fresh bucket, armed.
    assert_eq!(b.step((s + 4, 400_000), 5)[0], 0);
    assert_eq!(b.expiry.armings, 3);
}

/// Hybrid leases write through the same closing as strict steps: the state to the
/// nanosecond, the expiry armed per second of state.
#[test]
fn lease_writes_the_state_and_its_expiry_like_a_step() {
    let redis = RedisServer::start();
    let mut b = Bucket::new(&redis);
    let s = WRAP - 1;
    // 10 tokens of 0.1 s wanted, at least 2: all 10, the state 1 s ahead, across the wrap.
    let reply = b.lease((s, 500_000), 100_000_000, 10, 2);
    assert_eq!(reply, [10, SEC, s, 500_000]);
    assert_eq!(b.state(), Some(500_000_000));
    assert_eq!(b.expiry.armings, 1);
    // Fewer than `need` left within the horizon: none, nothing written.
    let reply = b.lease((s, 500_000), H / 4, 5, 4);
    assert_eq!(reply, [0, SEC, s, 500_000]);
    assert_eq!(b.expiry.armings, 1);
    // One more in the same second of state: rewritten in place.
    let reply = b.lease((s, 500_000), 1, 1, 1);
    assert_eq!(reply[..2], [1, SEC + 1]);
    assert_eq!(b.state(), Some(500_000_001));
    assert_eq!(b.expiry.armings, 1);
}

/// One sliding-window call at the fake time, 3 slices of 1 s, limit 10: `[age, µs, counts]`.
fn sliding(con: &mut redis::Connection, (sec, usec): (i64, i64), n: i64) -> Vec<i64> {
    window_call(con, 3, (sec, usec), n)
}

/// One call on a window of `slices` slices of 1 s, limit 10 (edge cap 13).
fn window_call(
    con: &mut redis::Connection,
    slices: i64,
    (sec, usec): (i64, i64),
    n: i64,
) -> Vec<i64> {
    // As the crate sets it: the window, a slice and a second.
    let expiry = (slices + 1) * 1000 + 1000;
    let reply: Vec<u8> = at(sec, usec, SLIDING)
        .key("w")
        .arg(packed(&[slices, 1_000_000, 10 - n, 13 - n, n, expiry]))
        .invoke(con)
        .unwrap();
    doubles(&reply)
}

/// The ring as the rule sees it: `[slice µs, newest slice, counts oldest first…]`. Stored,
/// the total and the newest count come first (`[µs, slice, total, newest, older…]`); the
/// total is checked against the counts.
fn ring(con: &mut redis::Connection) -> Vec<f64> {
    let raw: Vec<u8> = con.get("w").unwrap();
    let stored: Vec<f64> = raw
        .chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let (total, newest) = (stored[2], stored[3]);
    let mut view = vec![stored[0], stored[1]];
    view.extend(&stored[4..]);
    view.push(newest);
    assert_eq!(
        total,
        view[2..].iter().sum::<f64>(),
        "the total: {stored:?}"
    );
    view
}

/// The key's `PEXPIRETIME` (real ms since 1970).
fn expires(con: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("PEXPIRETIME").arg(key).query(con).unwrap()
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
    // Within the newest slice: the total and the newest count rewritten in place, the
    // expiry kept.
    let armed = expires(&mut con, "w");
    assert_eq!(
        sliding(&mut con, (s, 20), 1),
        [-1, s * 1_000_000 + 20, 2, 0]
    );
    assert_eq!(ring(&mut con), [1e6, s as f64, 0.0, 0.0, 0.0, 3.0]);
    assert_eq!(expires(&mut con, "w"), armed);
    // Asked for nothing: the stored counts, moved on by 0 slices.
    let reply = sliding(&mut con, (s, 30), 0);
    assert_eq!(reply, [0, s * 1_000_000 + 30, 0, 0, 0, 3]);
    let reply = sliding(&mut con, (s + 1, 0), 3);
    assert_eq!(reply, [-1, (s + 1) * 1_000_000, 3, 0]);
    assert_eq!(ring(&mut con), [1e6, (s + 1) as f64, 0.0, 0.0, 3.0, 3.0]);
    let ttl: i64 = con.pttl("w").unwrap();
    assert!(
        (4000..=5000).contains(&ttl),
        "set at a slice's first, for 4 slices and a second: {ttl}"
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
    let other: Vec<u8> = [5e5, 2.0 * s as f64, 36.0, 9.0, 9.0, 9.0, 9.0]
        .iter()
        .flat_map(|d: &f64| d.to_le_bytes())
        .collect();
    let _: () = con.set("w", other).unwrap();
    assert_eq!(sliding(&mut con, (s, 0), 0), [4, s * 1_000_000]);
    assert_eq!(sliding(&mut con, (s, 0), 1), [-1, s * 1_000_000, 0, 0]);
    assert_eq!(ring(&mut con), [1e6, s as f64, 0.0, 0.0, 0.0, 1.0]);
    // Of another length (4 slices): the same.
    let _: () = con.set("w", vec![0u8; 8 * 8]).unwrap();
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

/// One slice is a fixed window: the ring is the header and two counts (the slice before
/// and the current one); both paths of the script read and write it.
#[test]
fn window_of_one_slice_is_a_fixed_window() {
    let redis = RedisServer::start();
    let mut con = redis.connection();
    let s = 1_790_000_000;
    assert_eq!(
        window_call(&mut con, 1, (s, 0), 4),
        [-1, s * 1_000_000, 0, 0]
    );
    assert_eq!(
        window_call(&mut con, 1, (s, 1), 6),
        [-1, s * 1_000_000 + 1, 4, 0]
    );
    assert_eq!(ring(&mut con), [1e6, s as f64, 0.0, 10.0]);
    // Full: denied with the stored counts.
    assert_eq!(
        window_call(&mut con, 1, (s, 2), 1),
        [0, s * 1_000_000 + 2, 0, 10]
    );
    // The next slice: 10 leave the window but still count for the edge cap (13): 3 fit.
    assert_eq!(window_call(&mut con, 1, (s + 1, 0), 4)[0], 1);
    assert_eq!(
        window_call(&mut con, 1, (s + 1, 0), 3),
        [-1, (s + 1) * 1_000_000, 0, 10]
    );
    assert_eq!(ring(&mut con), [1e6, (s + 1) as f64, 10.0, 3.0]);
}
