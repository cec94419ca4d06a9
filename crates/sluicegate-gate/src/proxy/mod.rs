//! The proxy: route, bypass, read the body ahead (up to `client_body_buffer_size`:
//! `read_ahead`), rate, queue, forward, and read the answer ahead of its client (up to
//! `response_buffer_size`: `answer_ahead`). A forwarded request's permit belongs to
//! the upstream exchange (which moves to a task of its own if the client leaves), so a
//! client that leaves cannot free a slot the upstream is still using. Upstream connections
//! are HTTP/1.1 keep-alive, kept idle per thread (`upstream`). A WebSocket handshake (any
//! `Upgrade` but `h2c`) goes through the same limits; a `101` makes it a tunnel that keeps
//! its permit while open (`tunnel`).

mod answer;
mod answer_ahead;
mod body;
mod client_body;
mod conn;
mod exchange;
mod global;
mod handle;
mod headers;
mod read_ahead;
mod send_timeout;
mod tunnel;
mod turn_writes;
mod unrouted;
mod upstream;

pub use answer::{GateBody, REASON};
pub use answer_ahead::AnswerBody;
pub use conn::Conn;
pub use handle::handle;
pub use headers::strip_hop_by_hop;
// The config holds a route's `host` to what a request's `Host` may be.
pub(crate) use headers::valid_host;
pub use send_timeout::SendTimeout;
pub(crate) use send_timeout::send_timed_out;
pub use turn_writes::TurnWrites;
pub use unrouted::{Unrouted, UnroutedCounts};
pub(crate) use upstream::sweep_forever as sweep_idle_upstreams;
