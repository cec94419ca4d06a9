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
