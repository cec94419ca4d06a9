//! Review of 4 Dec (review22) of what race21 and host21 merged: each test a finding,
//! against a real gate process.

mod support;

use support::{Gate, Upstream, write_config};

/// Sends `head` on a fresh connection (it should say `Connection: close`) and reads the
/// answer to its end: its status line and body.
async fn send(gate: &Gate, head: &str) -> (String, String) {
    support::status_and_body(gate.proxy, head.as_bytes()).await
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

/// `sluicegate check --config` on `text`: its exit code and what it printed.
fn check(name: &str, text: &str) -> (Option<i32>, String) {
    let path = write_config(name, text);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluicegate"))
        .args(["check", "--config", path.to_str().unwrap()])
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

/// Finding 6: a route's `host` is checked only for brackets around a bare IPv6 address,
/// emptiness and ASCII. `host = "[fe80::1%eth0]"` (a zone), `"[zz]"`, `"[::1]x"`, `"a b"`
/// are taken (`check` says `ok`), and no request can ever match them: the `Host` check
/// (`proxy/headers.rs`, `valid_host`) answers `400` to every request that names such a
/// host. The route is dead and nothing says so. They should be refused at the value, as the
/// `Host` check would refuse them (a zone: "no zone in a Host; write the address").
#[test]
fn a_route_host_no_request_can_name_is_refused() {
    for host in [
        "[fe80::1%eth0]",
        "[fe80::1%25eth0]",
        "[zz]",
        "[::1]x",
        "a b",
    ] {
        let (code, said) = check(
            "dead-route-host.toml",
            &format!(
                "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:1\"\nmax_concurrency = 1\n\n\
                 [[routes]]\nhost = \"{host}\"\npool = \"a\"\n\n[[routes]]\npool = \"a\"\n"
            ),
        );
        assert_eq!(code, Some(64), "{host}: {said}");
        assert!(
            said.contains(":7:8:"),
            "{host}: not located at the value: {said}"
        );
    }
}

/// Finding 7: routes compare IPv6 literals as addresses now (`[0::1]` is `[::1]`), but the
/// check for a route an earlier one shadows (`covers`) still compares the text: a route for
/// `[0::1]` after one for `[::1]` is never reached, and `check` says nothing.
#[test]
fn a_route_shadowed_by_another_spelling_of_its_ipv6_host_is_warned_of() {
    let (code, said) = check(
        "ipv6-shadow.toml",
        "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:1\"\nmax_concurrency = 1\n\n\
         [[pools]]\nname = \"b\"\nupstream = \"http://127.0.0.1:2\"\nmax_concurrency = 1\n\n\
         [[routes]]\nhost = \"[::1]\"\npool = \"a\"\n\n\
         [[routes]]\nhost = \"[0:0::1]\"\npool = \"b\"\n",
    );
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("never reached"), "{said}");
}

/// Finding 8: the likeliest torn read of a config is an empty file (an editor or `cp` that
/// truncates, then writes). A reload that reads it is refused — good — with "no pools: add a
/// `[[pools]]` table", which sends the operator looking for a mistake in a file that has
/// every pool. It should say the file is empty (perhaps being written: reload when done).
#[tokio::test]
async fn a_reload_of_an_empty_file_says_it_is_empty() {
    let upstream = Upstream::start().await;
    let text = format!(
        "listen = \"127.0.0.1:0\"\n[admin]\nlisten = \"127.0.0.1:0\"\n\n\
         [[pools]]\nname = \"a\"\nupstream = \"{}\"\nmax_concurrency = 10\n\n\
         [[routes]]\npool = \"a\"\n",
        upstream.url()
    );
    let path = write_config("torn-reload.toml", &text);
    let gate = Gate::start(&["serve", "--config", path.to_str().unwrap()]).await;
    support::rewrite(&path, "");
    let said = gate.admin_call("POST", "/reload", None, "").await;
    assert!(!said.status.is_success(), "{}", said.body);
    assert!(said.body.contains("is empty"), "{}", said.body);
    // The config in force stays.
    let (status, body) = send(
        &gate,
        "GET /fast HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(status.contains(" 200 "), "{status} {body}");
}

/// Finding 3: the config is read twice and refused when the reads differ (race21). A pipe
/// reads once: `sluicegate serve --config /dev/stdin` (`envsubst < gate.tmpl | sluicegate
/// serve --config /dev/stdin`, a container's entrypoint) and `--config <(…)` (`/dev/fd/63`)
/// worked before and now exit 64 with "the file changed while it was read … rename that
/// over it", which no rename can fix: the second read finds the pipe drained. A file that is
/// not a regular file (a pipe, a character device) should be read once.
#[test]
fn a_config_from_a_pipe_is_read_once() {
    use std::io::Write;
    let text = "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:1\"\nmax_concurrency = 1\n\n\
                [[routes]]\npool = \"a\"\n";
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sluicegate"))
        .args(["check", "--config", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{said}");
}
