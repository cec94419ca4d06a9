//! End to end: which pool a request's host leads to, and the `Host` the upstream then
//! gets. Two pools, each in front of an upstream of its own that answers with its name and
//! the head it received, so that a test sees both the route taken and what went upstream.

mod support;

use std::net::SocketAddr;

use support::{Gate, write_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// An upstream that answers each request (after reading its `Content-Length` body) with
/// `name`, a newline and the head it received, then closes.
async fn named_echo(name: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let end = loop {
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break end;
                    }
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buf[..end + 4]).into_owned();
                let len: usize = head
                    .to_ascii_lowercase()
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                while buf.len() < end + 4 + len {
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body = format!("{name}\n{head}");
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(answer.as_bytes()).await;
            });
        }
    });
    addr
}

/// A gate with pool `routed` (for requests to `host`) and pool `rest` (for all others).
async fn gate(host: &str) -> Gate {
    let (routed, rest) = (named_echo("routed").await, named_echo("rest").await);
    let path = write_config(
        "host-routing.toml",
        &format!(
            "listen = \"127.0.0.1:0\"\n\n\
             [[pools]]\nname = \"routed\"\nupstream = \"http://{routed}\"\nmax_concurrency = 10\n\n\
             [[pools]]\nname = \"rest\"\nupstream = \"http://{rest}\"\nmax_concurrency = 10\n\n\
             [[routes]]\nhost = \"{host}\"\npool = \"routed\"\n\n\
             [[routes]]\npool = \"rest\"\n"
        ),
    );
    Gate::start(&["serve", "--config", path.to_str().unwrap()]).await
}

/// Sends `head` (and `body`) on a fresh connection and reads the answer to its end: its
/// status line and body.
async fn send(gate: &Gate, head: &str, body: &str) -> (String, String) {
    support::status_and_body(gate.proxy, format!("{head}{body}").as_bytes()).await
}

/// The pool a request went to and the `Host` lines its upstream got, for a request without
/// a body (the gate's own upstream connection) and one with a body (hyper's): both must
/// agree.
async fn routed(gate: &Gate, target: &str, host: Option<&str>) -> (String, Vec<String>) {
    let host_line = host.map_or(String::new(), |h| format!("Host: {h}\r\n"));
    let mut seen = Vec::new();
    for (method, extra, body) in [("GET", "", ""), ("POST", "Content-Length: 4\r\n", "body")] {
        let head =
            format!("{method} {target} HTTP/1.1\r\n{host_line}{extra}Connection: close\r\n\r\n");
        let (status, answer) = send(gate, &head, body).await;
        assert!(status.contains(" 200 "), "{head:?}: {status} {answer}");
        let mut lines = answer.lines();
        let pool = lines.next().unwrap_or_default().to_owned();
        let hosts: Vec<String> = lines
            .filter_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("host")
                    .then(|| value.trim().to_owned())
            })
            .collect();
        seen.push((pool, hosts));
    }
    assert_eq!(seen[0], seen[1], "{target} {host:?}: GET and POST differ");
    seen.swap_remove(0)
}

/// Trial of 4 Dec, finding 6: a route for `host = "[::1]"` took `[::1]` and `[::1]:80`,
/// but other spellings of the same address (`[0:0::1]`, `[::0001]`, the full form, upper
/// case hex) went to the catch-all pool: a client chose its pool by spelling. Every
/// spelling of the address is the route's host, with or without a port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_spelling_of_an_ipv6_literal_takes_its_host_route() {
    let gate = gate("[::1]").await;
    for host in [
        "[::1]",
        "[::1]:80",
        "[0:0::1]",
        "[::0001]",
        "[0:0:0:0:0:0:0:1]",
        "[0000:0000:0000:0000:0000:0000:0000:0001]:8080",
        "[0:0:0:0:0:0:0.0.0.1]",
    ] {
        let (pool, hosts) = routed(&gate, "/x", Some(host)).await;
        assert_eq!(pool, "routed", "Host: {host}");
        // The upstream gets the client's own spelling: the gate routes on the address, it
        // does not rewrite the name.
        assert_eq!(hosts, [host], "Host: {host}");
    }
    for host in ["[::2]", "[::1:0]", "[1::]", "127.0.0.1", "localhost"] {
        assert_eq!(
            routed(&gate, "/x", Some(host)).await.0,
            "rest",
            "Host: {host}"
        );
    }
}

/// A route written in another spelling of the address (upper case, zeros written out)
/// takes the short form clients usually send.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_for_an_ipv6_literal_in_any_spelling_takes_the_address() {
    let gate = gate("[2001:DB8:0:0::A]").await;
    for host in [
        "[2001:db8::a]",
        "[2001:DB8::A]:443",
        "[2001:db8:0:0:0:0:0:a]",
    ] {
        assert_eq!(
            routed(&gate, "/x", Some(host)).await.0,
            "routed",
            "Host: {host}"
        );
    }
    assert_eq!(routed(&gate, "/x", Some("[2001:db8::b]")).await.0, "rest");
}

/// IPv4: the standard library reads only the dotted-decimal form (`127.0.0.1`), not
/// `127.1`, `0x7f.0.0.1` or `0177.0.0.1`, and writes it back the same, so a route's
/// address and a request's match as text; those other forms are names of their own (and
/// no upstream resolves them as the address), which go to the catch-all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ipv4_route_takes_its_dotted_decimal_form() {
    let gate = gate("127.0.0.1").await;
    for host in ["127.0.0.1", "127.0.0.1:8080", "127.0.0.1."] {
        assert_eq!(
            routed(&gate, "/x", Some(host)).await.0,
            "routed",
            "Host: {host}"
        );
    }
    for host in ["127.1", "127.0.0.01", "[::ffff:127.0.0.1]", "127.0.0.2"] {
        assert_eq!(
            routed(&gate, "/x", Some(host)).await.0,
            "rest",
            "Host: {host}"
        );
    }
}

/// Trial of 4 Dec, finding 7: with an absolute-form target (`GET http://api.example/x`)
/// the gate routed on `Host` and forwarded that `Host`. RFC 9112 §3.2.2: the recipient
/// ignores `Host` and takes the target's authority. The route is chosen on the authority,
/// and the upstream gets it as its `Host` (on both upstream paths), so the upstream serves
/// the host the route was chosen for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absolute_form_target_is_routed_and_forwarded_on_its_own_authority() {
    let gate = gate("api.example").await;
    let cases = [
        (
            "http://api.example/x",
            Some("other"),
            "routed",
            "api.example",
        ),
        (
            "http://api.example:8080/x",
            Some("other:80"),
            "routed",
            "api.example:8080",
        ),
        (
            "http://API.example./x",
            Some("other"),
            "routed",
            "API.example.",
        ),
        ("http://other/x", Some("api.example"), "rest", "other"),
        ("http://api.example/x", None, "routed", "api.example"),
    ];
    for (target, host, pool, upstream_host) in cases {
        let (got, hosts) = routed(&gate, target, host).await;
        assert_eq!(got, pool, "{target} Host: {host:?}");
        assert_eq!(hosts, [upstream_host], "{target} Host: {host:?}");
    }
}

/// The same for an IPv6 literal in the target's authority.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absolute_form_target_with_an_ipv6_literal_is_routed_on_it() {
    let gate = gate("[::1]").await;
    let (pool, hosts) = routed(&gate, "http://[0::1]:9/x", Some("other")).await;
    assert_eq!(pool, "routed");
    assert_eq!(hosts, ["[0::1]:9"]);
    let (pool, hosts) = routed(&gate, "http://other/x", Some("[::1]")).await;
    assert_eq!(pool, "rest");
    assert_eq!(hosts, ["other"]);
}

/// A route `host` written as a pattern, as nginx's `server_name` takes one
/// (`*.example.com`, `.example.com` for a name and its subdomains, `api.*`) or as "any host"
/// (`*`, or nginx's `_`): a route compares a request's host whole, so such a route took no
/// request a client sends (none names a host with a `*` or a leading dot), and `check` said
/// `ok`. Every request meant for it went to a later route — past the limits written for it
/// — or got `404`. Refused at the value, saying a route matches one name.
#[test]
fn a_route_host_written_as_a_pattern_is_refused() {
    for host in ["*.example.com", ".example.com", "api.*", "*", "_"] {
        let path = write_config(
            "pattern-host",
            &format!(
                "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:1\"\nmax_concurrency = 1\n\n\
                 [[routes]]\nhost = \"{host}\"\npool = \"a\"\n\n[[routes]]\npool = \"a\"\n"
            ),
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluicegate"))
            .args(["check", "--config", path.to_str().unwrap()])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{host}: {said}");
        assert!(said.contains(":7:8:"), "{host}: not at the value: {said}");
        assert!(said.contains("one name"), "{host}: {said}");
    }
}
