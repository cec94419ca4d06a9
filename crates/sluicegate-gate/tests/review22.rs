//! Review of 4 Dec (review22) of what race21 and host21 merged: each test a finding,
//! against a real gate process.

mod support;

use support::{Gate, Upstream, write_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `head` on a fresh connection (it should say `Connection: close`) and reads the
/// answer to its end: its status line and body.
async fn send(gate: &Gate, head: &str) -> (String, String) {
    let mut s = TcpStream::connect(gate.proxy).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(support::PATIENCE, s.read_to_end(&mut answer))
        .await
        .expect("no answer")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    )
}

/// Finding 1: a per-client rate keyed on `Host` (`key = "header:host"`, a rate per tenant
/// on a pool that serves every tenant) counted an absolute-form request against the `Host`
/// header the client sent, while the upstream got — and the route was chosen on — the
/// target's authority. A tenant over its rate got through by naming itself in the target
/// and anything else in `Host`, a fresh key each time.
#[tokio::test]
async fn a_per_key_rate_on_host_counts_the_host_the_upstream_gets() {
    let upstream = Upstream::start().await;
    let path = write_config(
        "per-key-host.toml",
        &format!(
            "listen = \"127.0.0.1:0\"\n\n\
             [[pools]]\nname = \"tenants\"\nupstream = \"{}\"\nmax_concurrency = 10\n\
             [pools.per_key_rate]\nrate = \"1/h\"\nkey = \"header:host\"\n\n\
             [[routes]]\npool = \"tenants\"\n",
            upstream.url()
        ),
    );
    let gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
    let (status, body) = send(
        &gate,
        "GET /fast HTTP/1.1\r\nHost: tenant.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(status.contains(" 200 "), "{status} {body}");
    // The tenant's one request an hour is spent: so is every spelling of a request to it.
    for other in ["other-1", "other-2", "other-3"] {
        let (status, body) = send(
            &gate,
            &format!(
                "GET http://tenant.example/fast HTTP/1.1\r\nHost: {other}\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert!(
            status.contains(" 429 "),
            "Host: {other}: {status} {body} (the upstream got the tenant's request)"
        );
    }
}

/// Finding 5: a host name with a percent-encoding (`%61pi.example`, which RFC 3986 §6.2.2.2
/// makes `api.example`) passed the `Host` check (`tests/hostile.rs` pins it as valid), missed
/// the route for `api.example` and went to the catch-all pool, its upstream getting it as it
/// came: an upstream that decodes it serves `api.example` under another pool's limits. As a
/// path is (`path.rs`), the host is put in normal form before it is routed and forwarded: the
/// route for the name takes it, and its upstream gets the name.
#[tokio::test]
async fn a_percent_encoded_host_is_routed_and_forwarded_as_the_name_it_encodes() {
    let (routed, rest) = (Upstream::start().await, Upstream::start().await);
    let path = write_config(
        "pct-host.toml",
        &format!(
            "listen = \"127.0.0.1:0\"\n\n\
             [[pools]]\nname = \"routed\"\nupstream = \"{}\"\nmax_concurrency = 10\n\n\
             [[pools]]\nname = \"rest\"\nupstream = \"{}\"\nmax_concurrency = 10\n\n\
             [[routes]]\nhost = \"api.example\"\npool = \"routed\"\n\n\
             [[routes]]\npool = \"rest\"\n",
            routed.url(),
            rest.url()
        ),
    );
    let gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
    for (host, forwarded) in [
        ("%61pi.example", "api.example"),
        ("api%2Eexample:80", "api.example:80"),
        ("%41PI.example.", "API.example."),
        // Only an unreserved character is decoded: `%2F` stays (and routes nowhere special).
    ] {
        let (status, body) = send(
            &gate,
            &format!("GET /fast HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
        .await;
        assert!(status.contains(" 200 "), "{host}: {status} {body}");
        assert!(
            body.contains(&format!(" host={forwarded} ")),
            "{host}: the upstream got {body}"
        );
    }
    assert_eq!(routed.ids().len(), 3);
    assert_eq!(
        rest.ids().len(),
        0,
        "the catch-all pool's upstream got some"
    );
    let (status, body) = send(
        &gate,
        "GET /fast HTTP/1.1\r\nHost: a%2Fb\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(status.contains(" 200 "), "{status} {body}");
    assert!(body.contains(" host=a%2Fb "), "{body}");
}
