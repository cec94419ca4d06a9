//! The proxy: route, bypass, rate, queue, forward. A forwarded request's permit belongs to
//! the upstream exchange (which moves to a task of its own if the client leaves), so a
//! client that leaves cannot free a slot the upstream is still using.

mod answer;
mod body;
mod conn;
mod exchange;
mod global;
mod handle;
mod headers;
mod upstream;

pub use answer::{GateBody, REASON};
pub use body::PermitBody;
pub use conn::Conn;
pub use handle::handle;
pub use headers::strip_hop_by_hop;

/// The keep-alive HTTP/1 connections every pool's requests go through: idle connections
/// are kept per thread, so the upstream connections a worker thread uses are driven by that
/// thread (see the `server` and `proxy::upstream` module docs).
#[derive(Clone, Debug, Default)]
pub struct Upstream {
    _private: (),
}

impl Upstream {
    /// The handle on the per-thread idle connections, each kept at most 90 s.
    pub fn new() -> Self {
        Upstream { _private: () }
    }
}
