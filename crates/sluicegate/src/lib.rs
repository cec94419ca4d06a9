//! Flow control for services and their clients.
//!
//! sluicegate keeps a slow resource alive under a flood, and keeps a runaway client from
//! becoming that flood.
//!
//! | module | what it is |
//! |---|---|
//! | [`clock`] | time sources shared by every limiter |
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod clock;
#[allow(dead_code)]
pub(crate) mod sync;
