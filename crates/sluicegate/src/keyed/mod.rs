//! Keyed rate limiters: one limit per client (IP, header value, any `Hash + Eq` key), with
//! bounded memory.
//!
//! Keys live in a fixed number of mutex-guarded shards, each holding at most its share of
//! `max_keys`. A key whose bucket has refilled is *idle*: its state equals that of a key never
//! seen, so dropping it loses nothing. When a shard is full, it first drops its idle keys; if
//! that frees less than an eighth of the shard, it also drops the keys that owe the least
//! (closest to refilled) until an eighth is free. So memory never grows past `max_keys`
//! entries, keys that spend heavily are the last to be forgotten, and a flood of new keys
//! mostly pushes out other new keys.

mod gcra;
mod shard;

pub use gcra::KeyedGcra;
