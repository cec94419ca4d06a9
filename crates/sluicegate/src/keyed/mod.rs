//! Keyed rate limiters: one limit per client (IP, header value, any `Hash + Eq` key), with
//! bounded memory.
//!
//! Keys live in a fixed number of mutex-guarded shards, each holding at most its share of
//! `max_keys`. A key whose bucket has refilled is *idle*: its state equals that of a key never
//! seen, so dropping it loses nothing. When a shard is full, it first drops its idle keys; if
//! that frees less than an eighth of the shard, it drops keys that were never denied, owing
//! the least (closest to refilled) first, until an eighth is free; keys denied since they
//! were last full go only when nothing else is left. So memory never grows past `max_keys`
//! entries, and a flood of new keys pushes out other keys that are merely spending, never a
//! key that a limit is holding back (with `per_second(1)` every key that made one request
//! owes the same, and the oldest of them would otherwise be the first to go and come back
//! with a fresh bucket).
//!
//! What is left to an attacker: a shard full of keys that are *all* denied drops the one
//! closest to refilled, so bypassing a limit takes keeping an eighth of a shard's keys denied
//! for each request won.

mod gcra;
mod shard;

pub use gcra::KeyedGcra;
