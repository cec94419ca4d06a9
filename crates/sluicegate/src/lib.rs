//! Flow control for services and their clients.
//!
//! sluicegate keeps a slow resource alive under a flood, and keeps a runaway client from
//! becoming that flood.
//!
//! | module | what it is |
//! |---|---|
//! | [`clock`] | time sources shared by every limiter |
//! | [`adaptive`] | adaptive limit algorithms (Little's law, Gradient2, Vegas, AIMD, fixed) |
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adaptive;
pub mod clock;
#[allow(dead_code)]
pub(crate) mod sync;
