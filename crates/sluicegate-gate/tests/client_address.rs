//! End to end, `[client_address]`: a gate behind a load balancer counts each client that
//! the trusted proxies name under its own per-client key, and no client can pick its key
//! by what it writes in `X-Forwarded-For` or `Forwarded`.

mod support;

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use support::{Gate, Reply, Upstream, rewrite, write_config};
use tokio::net::TcpSocket;

/// A config: pool `api` in front of `up`, each client 1 request a minute (`client_ip`), and
/// `client_address` as the `[client_address]` table's body (none when empty).
fn config(up: &Upstream, client_address: &str) -> String {
    let table = if client_address.is_empty() {
        String::new()
    } else {
        format!("[client_address]\n{client_address}\n")
    };
    format!(
        r#"listen = ["127.0.0.1:0"]
[admin]
listen = "127.0.0.1:0"
{table}[[pools]]
name = "api"
upstream = "{}"
max_concurrency = 10
[pools.per_key_rate]
rate = "1/m"
key = "client_ip"
[[routes]]
pool = "api"
"#,
        up.url()
    )
}

/// `GET /fast` from the local address `from` (a loopback address: all of 127.0.0.0/8 is
/// this machine's), with the `(name, value)` header lines in `headers`.
async fn from(gate: SocketAddr, from: &str, headers: &[(&str, &str)]) -> Reply {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(from.parse().unwrap(), 0))
        .unwrap();
    let stream = socket.connect(gate).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = http::Request::get("/fast").header("host", "api.example");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = send
        .send_request(req.body(Full::new(Bytes::new())).unwrap())
        .await
        .unwrap();
    let (parts, body) = resp.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// `GET /fast` from 127.0.0.1 with `X-Forwarded-For: xff` (none when empty): its status.
async fn xff(gate: &Gate, xff: &str) -> u16 {
    let headers: &[(&str, &str)] = if xff.is_empty() {
        &[]
    } else {
        &[("x-forwarded-for", xff)]
    };
    from(gate.proxy, "127.0.0.1", headers).await.status.as_u16()
}

/// The gate trusts 127.0.0.1 (the load balancer, here); 127.0.0.2 is a client that reached
/// the gate directly and forges the header: it is counted by its own address, whatever it
/// writes, and what it wrote goes upstream with its address appended, as before.
#[tokio::test]
async fn a_forged_x_forwarded_for_from_an_untrusted_peer_does_not_change_its_key() {
    let up = Upstream::start().await;
    let file = write_config(
        "realip-untrusted",
        &config(&up, "trusted_proxies = [\"127.0.0.1\"]"),
    );
    let gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    let first = from(
        gate.proxy,
        "127.0.0.2",
        &[("x-forwarded-for", "203.0.113.1")],
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(
        first.body.contains("xff=203.0.113.1, 127.0.0.2 "),
        "{}",
        first.body
    );
    for forged in ["203.0.113.2", "198.51.100.9, 203.0.113.3", "127.0.0.1"] {
        let r = from(gate.proxy, "127.0.0.2", &[("x-forwarded-for", forged)]).await;
        assert_eq!(r.status, 429, "{forged}: a new key from a forged header");
    }
    let r = from(gate.proxy, "127.0.0.2", &[("forwarded", "for=203.0.113.4")]).await;
    assert_eq!(r.status, 429);
    // The trusted proxy's clients are not this one: their budgets are untouched.
    assert_eq!(xff(&gate, "203.0.113.1").await, 200);
}

/// Behind a trusted proxy, two clients the header names get a budget each; the proxy's own
/// requests (no header: a health check) are the proxy's; an IPv6 client is counted by its
/// /64, as a peer is.
#[tokio::test]
async fn behind_a_trusted_proxy_each_client_named_by_the_header_has_its_own_budget() {
    let up = Upstream::start().await;
    let file = write_config(
        "realip-trusted",
        &config(&up, "trusted_proxies = [\"127.0.0.1/32\", \"10.0.0.0/8\"]"),
    );
    let gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    assert_eq!(xff(&gate, "203.0.113.7").await, 200);
    assert_eq!(xff(&gate, "203.0.113.8").await, 200);
    assert_eq!(xff(&gate, "203.0.113.7").await, 429);
    assert_eq!(xff(&gate, "203.0.113.8:4711").await, 429);
    // Through a second trusted proxy (10.1.1.1) the client is the same one.
    assert_eq!(xff(&gate, "203.0.113.7, 10.1.1.1").await, 429);
    assert_eq!(xff(&gate, "").await, 200);
    assert_eq!(xff(&gate, "").await, 429);
    assert_eq!(xff(&gate, "[2001:db8:1:2::1]:443").await, 200);
    assert_eq!(xff(&gate, "2001:db8:1:2::99").await, 429);
    assert_eq!(xff(&gate, "2001:db8:1:3::1").await, 200);
    // The upstream gets the header as it came, the proxy's address appended.
    let r = from(
        gate.proxy,
        "127.0.0.1",
        &[("x-forwarded-for", "203.0.113.9")],
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(r.body.contains("xff=203.0.113.9, 127.0.0.1 "), "{}", r.body);
    assert!(r.body.contains("forwarded=for=127.0.0.1;"), "{}", r.body);
    let status = gate.status().await;
    assert_eq!(
        status["client_address"],
        serde_json::json!({"header": "x-forwarded-for", "trusted_proxies": ["127.0.0.1/32", "10.0.0.0/8"], "without_header": 2})
    );
}

/// A client behind the proxy writes what it likes before the address the proxy appends:
/// fake addresses, trusted-looking ones, garbage, extra lines. Its key stays its address.
#[tokio::test]
async fn a_client_prepending_fake_entries_cannot_escape_its_key() {
    let up = Upstream::start().await;
    let file = write_config(
        "realip-prepend",
        &config(&up, "trusted_proxies = [\"127.0.0.1\", \"10.0.0.0/8\"]"),
    );
    let gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    assert_eq!(xff(&gate, "6.6.6.6, 203.0.113.7").await, 200);
    for fake in [
        "7.7.7.7, 203.0.113.7",
        "10.0.0.1, 203.0.113.7",
        "unknown, 203.0.113.7",
        "garbage\t;=\"x, ,,, 203.0.113.7",
        "127.0.0.1, 203.0.113.7",
    ] {
        assert_eq!(xff(&gate, fake).await, 429, "{fake}");
    }
    // Lines of its own before the proxy's.
    let r = from(
        gate.proxy,
        "127.0.0.1",
        &[
            ("x-forwarded-for", "8.8.8.8"),
            ("x-forwarded-for", "9.9.9.9, 203.0.113.7"),
        ],
    )
    .await;
    assert_eq!(r.status, 429);
    // A thousand trusted-looking entries before its address (11 KiB, within
    // `max_header_bytes`): the walk stops at its address and never reads them.
    let many: Vec<String> = (0..1000)
        .map(|i| format!("10.0.{}.{}", i / 200, i % 200))
        .collect();
    assert_eq!(
        xff(&gate, &format!("{}, 203.0.113.7", many.join(","))).await,
        429
    );
}

/// `header = "forwarded"` reads RFC 7239's `for=`, and a reload puts a changed
/// `[client_address]` in force (here: from off, the peer, to on).
#[tokio::test]
async fn a_reload_puts_client_address_in_force_and_forwarded_is_read_by_its_for() {
    let up = Upstream::start().await;
    let file = write_config("realip-reload", &config(&up, ""));
    let mut gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    assert_eq!(
        gate.status().await["client_address"],
        serde_json::Value::Null
    );
    let fwd = |value: &'static str| {
        let proxy = gate.proxy;
        async move {
            from(proxy, "127.0.0.1", &[("forwarded", value)])
                .await
                .status
                .as_u16()
        }
    };
    // Off: everyone from 127.0.0.1 is one client.
    assert_eq!(fwd("for=203.0.113.7").await, 200);
    assert_eq!(fwd("for=203.0.113.8").await, 429);
    rewrite(
        &file,
        &config(
            &up,
            "trusted_proxies = [\"127.0.0.1\"]\nheader = \"forwarded\"",
        ),
    );
    gate.signal("HUP");
    let line = gate.log_line("config reloaded").await;
    assert!(
        line.contains("; client_address: forwarded from 127.0.0.1/32"),
        "{line}"
    );
    assert_eq!(gate.status().await["client_address"]["header"], "forwarded");
    let fwd = |value: &'static str| {
        let proxy = gate.proxy;
        async move {
            from(proxy, "127.0.0.1", &[("forwarded", value)])
                .await
                .status
                .as_u16()
        }
    };
    assert_eq!(fwd("for=203.0.113.7;proto=https").await, 200);
    assert_eq!(fwd("for=\"[2001:db8::7]:4711\"").await, 200);
    assert_eq!(fwd("for=6.6.6.6, for=203.0.113.7").await, 429);
    assert_eq!(fwd("For=\"[2001:db8::8]\"").await, 429);
    // A hidden client (`for=unknown`, an obfuscated id) is the proxy's: one key for all,
    // 127.0.0.1's, spent before the reload.
    assert_eq!(fwd("for=unknown").await, 429);
    assert_eq!(fwd("for=_hidden").await, 429);
    assert_eq!(fwd("for=203.0.113.9").await, 200);
}

/// `check` refuses a `header` without `trusted_proxies` at the header, exit 64.
#[tokio::test]
async fn check_refuses_a_header_without_trusted_proxies() {
    let up = Upstream::start().await;
    let file = write_config("realip-check", &config(&up, "header = \"x-real-ip\""));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluicegate"))
        .args(["check", "--config", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "gate.toml:5:10: `[client_address] header = \"x-real-ip\"` needs `trusted_proxies`"
        ),
        "{err}"
    );
}

/// The log line of a connection cut at `send_timeout` names the client the trusted proxy
/// named beside the peer (the proxy): behind a balancer, the peer alone says nothing of
/// who stopped reading.
#[tokio::test]
async fn a_cut_at_send_timeout_names_the_client_behind_the_proxy() {
    // 32 MiB: far more than the sockets' buffers between the upstream and the client hold.
    let big = std::sync::Arc::new({
        let mut a = b"HTTP/1.1 200 OK\r\ncontent-length: 33554432\r\n\r\n".to_vec();
        a.resize(a.len() + (32 << 20), b'x');
        a
    });
    let up = support::RawUpstream::start(std::sync::Arc::new(move |_: &str| (big.to_vec(), false)))
        .await;
    let text = format!(
        "listen = [\"127.0.0.1:0\"]\nsend_timeout = \"1s\"\n\n\
         [client_address]\ntrusted_proxies = [\"127.0.0.1\"]\n\n\
         [[pools]]\nname = \"api\"\nupstream = \"http://{}\"\nmax_concurrency = 1\n\n\
         [[routes]]\npool = \"api\"\n",
        up.addr
    );
    let file = write_config("realip-send-timeout", &text);
    let mut gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    // Asks, then reads nothing.
    let idle = support::raw(
        gate.proxy,
        b"GET /big HTTP/1.1\r\nhost: x\r\nx-forwarded-for: 6.6.6.6, 203.0.113.7\r\n\r\n",
    )
    .await;
    let line = gate.log_line("send_timeout").await;
    assert!(line.contains("client=203.0.113.7"), "{line}");
    assert!(line.contains("peer=127.0.0.1:"), "{line}");
    drop(idle);
}

/// trial117: behind nginx writing one header (`X-Real-IP`, `Forwarded`, or none in a
/// `location` that forgot its `proxy_set_header`) while the gate reads another, every client
/// was the proxy: one per-client budget for all, the first client over it turning every
/// other away, and nothing said why. A request from a trusted proxy without the header
/// read is now counted (`/status` `client_address.without_header`, kept across reloads)
/// and logged: the first, then at most once a minute with the count, naming the header
/// read and what to write. (A balancer's own health check carries none: the line says
/// "if".)
#[tokio::test]
async fn requests_from_a_trusted_proxy_without_the_header_are_counted_and_logged() {
    let up = Upstream::start().await;
    let file = write_config(
        "realip-without",
        &config(&up, "trusted_proxies = [\"127.0.0.1/32\"]"),
    );
    let mut gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    // The proxy writes X-Real-IP; the gate reads X-Forwarded-For.
    let proxy = gate.proxy;
    let real_ip = move |ip: &'static str| async move {
        from(proxy, "127.0.0.1", &[("x-real-ip", ip)])
            .await
            .status
            .as_u16()
    };
    assert_eq!(real_ip("203.0.113.7").await, 200);
    assert_eq!(real_ip("203.0.113.8").await, 429, "both are the proxy");
    let line = gate.log_line("without the `x-forwarded-for` header").await;
    assert!(line.contains("127.0.0.1"), "{line}");
    assert!(line.contains("proxy_set_header"), "{line}");
    // Named by the header, or from an untrusted peer: not counted.
    assert_eq!(xff(&gate, "203.0.113.9").await, 200);
    assert_eq!(from(gate.proxy, "127.0.0.2", &[]).await.status, 200);
    assert_eq!(gate.status().await["client_address"]["without_header"], 2);
    // Kept across a reload that changes nothing.
    let r = gate.admin_call("POST", "/reload", None, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(gate.status().await["client_address"]["without_header"], 2);
}
