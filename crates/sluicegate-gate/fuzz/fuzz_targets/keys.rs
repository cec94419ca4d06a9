//! Routing, bypass, the client's address behind trusted proxies and the per-client key
//! extractors on requests with any method, path, `Host` and key header (also sent as
//! `X-Forwarded-For` and `Forwarded`): never a panic.
#![no_main]

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use libfuzzer_sys::fuzz_target;
use sluicegate_gate::config;
use sluicegate_gate::state::State;

const CONFIG: &str = r#"
[client_address]
trusted_proxies = ["0.0.0.0/1", "fd00::/64"]
[bypass]
trusted_cidrs = ["10.0.0.0/8", "fd00::/64"]
[[pools]]
name = "by-ip"
upstream = "http://127.0.0.1:1"
max_concurrency = 4
[pools.per_key_rate]
rate = "5/s"
max_keys = 8
[[pools]]
name = "by-header"
upstream = "http://127.0.0.1:1"
max_concurrency = 4
[pools.per_key_rate]
rate = "5/s"
key = "header:x-api-key"
max_keys = 8
[[routes]]
host = "api.example"
path_prefix = "/a"
methods = ["GET", "POST"]
pool = "by-header"
[[routes]]
pool = "by-ip"
"#;

fuzz_target!(|data: &[u8]| {
    thread_local! {
        static STATE: State = State::build(&config::parse(CONFIG, "fuzz").unwrap(), None, &[], None).unwrap();
    }
    let mut parts = data.splitn(4, |&b| b == 0);
    let (Some(method), Some(uri), Some(host)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let key = parts.next().unwrap_or_default();
    let Ok(mut req) = http::Request::builder()
        .method(method)
        .uri(uri)
        .body(())
    else {
        return;
    };
    if let Ok(h) = http::HeaderValue::from_bytes(host) {
        req.headers_mut().insert(http::header::HOST, h);
    }
    if let Ok(k) = http::HeaderValue::from_bytes(key) {
        req.headers_mut().insert("x-api-key", k.clone());
        req.headers_mut().insert("x-forwarded-for", k.clone());
        req.headers_mut().insert(http::header::FORWARDED, k);
    }
    let mut octets = [0u8; 16];
    for (o, b) in octets.iter_mut().zip(key) {
        *o = *b;
    }
    let peers = [
        SocketAddr::new(IpAddr::V6(Ipv6Addr::from(octets)), 1),
        SocketAddr::new(IpAddr::from([octets[0], octets[1], octets[2], octets[3]]), 2),
    ];
    STATE.with(|state| {
        for peer in peers {
            let _ = state.bypass.allows(&req, peer.ip());
            let client = state.client_address.client(req.headers(), peer.ip());
            if let Some(pool) = state.route(&req) {
                if let Some(k) = &pool.per_key {
                    let _ = k.check(&req, client);
                }
            }
        }
    });
});
