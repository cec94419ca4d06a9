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

pub use answer::{GateBody, REASON};
pub use body::PermitBody;
pub use conn::Conn;
pub use handle::handle;
pub use headers::strip_hop_by_hop;

use http::Request;
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::{Client, ResponseFuture};
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// The keep-alive HTTP/1 client every pool's requests go through: one connection pool per
/// thread, so the upstream connections a worker thread uses are driven by that thread (see
/// `server`'s module docs).
#[derive(Clone, Debug, Default)]
pub struct Upstream {
    _private: (),
}

thread_local! {
    static CLIENT: Client<HttpConnector, Incoming> = client();
}

impl Upstream {
    /// The handle on the per-thread clients, each keeping idle upstream connections 90 s.
    pub fn new() -> Self {
        Upstream { _private: () }
    }

    /// Sends `req` through this thread's client.
    fn request(&self, req: Request<Incoming>) -> ResponseFuture {
        CLIENT.with(|c| c.request(req))
    }
}

fn client() -> Client<HttpConnector, Incoming> {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.enforce_http(true);
    // An upstream that does not even answer the handshake is unreachable: 502 after
    // this long at most (sooner when the pool's upstream timeout is shorter: 504).
    connector.set_connect_timeout(Some(std::time::Duration::from_secs(5)));
    Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(std::time::Duration::from_secs(90))
        .http1_writev(false)
        .build(connector)
}
