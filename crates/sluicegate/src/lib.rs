//! Flow control for services and their clients.
//!
//! sluicegate keeps a slow resource alive under a flood, and keeps a runaway client from
//! becoming that flood.
//!
//! | module | what it is |
//! |---|---|
//! | [`clock`] | time sources shared by every limiter |
//! | [`rate`] | rate limiters: sliding window, GCRA |
//! | [`keyed`] | per-key rate limiters with bounded memory |
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod clock;
pub mod keyed;
pub mod rate;
#[allow(dead_code, unused_imports)]
pub(crate) mod sync;
