//! End to end, findings of the 2026-12-06 newcomer trial of the gate
//! (docs/reviews/2026-12-06-trial34/README.md): each test pins a defect found there.

mod support;

use support::{Gate, Upstream, status_and_body, write_config};

/// A gate whose `/pay` takes `POST` only, in pool `pay`, shut (`max_concurrency = 0`) so
/// that a request it takes is plain to see; every other request goes to pool `rest`.
async fn pay_gate(up: &Upstream) -> (Gate, support::ConfigFile) {
    let text = format!(
        "listen = [\"127.0.0.1:0\"]\n\n[admin]\nlisten = \"127.0.0.1:0\"\n\n\
         [[pools]]\nname = \"pay\"\nupstream = \"{url}\"\nmax_concurrency = 0\n\n\
         [[pools]]\nname = \"rest\"\nupstream = \"{url}\"\nmax_concurrency = 10\n\n\
         [[routes]]\npath_prefix = \"/pay\"\nmethods = [\"POST\"]\npool = \"pay\"\n\n\
         [[routes]]\npool = \"rest\"\n",
        url = up.url()
    );
    let file = write_config("methods", &text);
    let gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    (gate, file)
}

/// A request `METHOD /pay` with a small body, on a connection of its own: the status line
/// and the body of the answer.
async fn send(gate: &Gate, method: &str) -> (String, String) {
    let req = format!(
        "{method} /pay HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi"
    );
    status_and_body(gate.proxy, req.as_bytes()).await
}

/// `post /pay` went past the route that takes `POST` only (and its shut pool) to the next
/// route, and an upstream that upper-cases methods (Werkzeug, Django) served it as a `POST`:
/// any spelling of a method with a lower-case letter is now refused `400` (`bad_method`),
/// as nginx does, before any route is chosen; an upper-case extension method is routed as
/// before.
#[tokio::test]
async fn a_method_with_lower_case_letters_is_refused_not_routed_past_its_route() {
    let up = Upstream::start().await;
    let (gate, _file) = pay_gate(&up).await;
    let (status, _) = send(&gate, "POST").await;
    assert!(status.starts_with("HTTP/1.1 503"), "POST: {status}");
    for method in ["post", "pOST", "Post"] {
        let (status, body) = send(&gate, method).await;
        assert!(status.starts_with("HTTP/1.1 400"), "{method}: {status}");
        assert!(body.contains("upper case"), "{method}: {body}");
    }
    assert!(up.ids().is_empty(), "a refused method reached the upstream");
    let (status, body) = send(&gate, "PURGE").await;
    assert!(status.starts_with("HTTP/1.1 200"), "PURGE: {status}");
    assert!(body.starts_with("target=/pay"), "{body}");
    let status = gate.status().await;
    assert_eq!(status["unrouted"]["bad_method"], 3, "{status:#}");
    assert_eq!(status["pools"]["rest"]["counters"]["forwarded"], 1);
    assert_eq!(status["pools"]["pay"]["counters"]["forwarded"], 0);
}

/// The listeners were bound with mio's fixed backlog of 128: a burst of new connections
/// (every client reconnecting after a restart) overflowed the accept queue, and the
/// connections over it waited for the client's SYN to be sent again, 1 s and then 3 s on.
/// With the gate stopped (`SIGSTOP`: it accepts nothing), 300 connects at once must all be
/// taken into the backlog (as far as `net.core.somaxconn` lets it be that long), and each be
/// answered once the gate goes on.
#[tokio::test]
async fn a_burst_of_connections_waits_in_a_backlog_longer_than_128() {
    let up = Upstream::start().await;
    // Limits above the burst: every request is forwarded, none turned away.
    let gate = Gate::in_front_of_with(
        up.addr,
        &[("--max-concurrency", "1000"), ("--max-queue", "1000")],
    )
    .await;
    let somaxconn: usize = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4096);
    let n = 300.min(somaxconn);
    gate.signal("STOP");
    // Refused SYNs are sent again after 1 s: 2 s leaves each connect that was not queued
    // time to fail, and any that was queued all the time it needs on a loaded machine.
    let connects = (0..n).map(|_| {
        tokio::time::timeout(
            std::time::Duration::from_secs(2),
            tokio::net::TcpStream::connect(gate.proxy),
        )
    });
    let connected = futures_util::future::join_all(connects).await;
    gate.signal("CONT");
    let streams: Vec<_> = connected
        .into_iter()
        .filter_map(|c| c.ok().and_then(Result::ok))
        .collect();
    assert_eq!(
        streams.len(),
        n,
        "connections queued while the gate accepted nothing"
    );
    let answers = streams.into_iter().map(|mut s| async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        s.write_all(b"GET /fast HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(support::PATIENCE, s.read_to_end(&mut answer)).await;
        answer.starts_with(b"HTTP/1.1 200")
    });
    let answered = futures_util::future::join_all(answers).await;
    assert_eq!(answered.iter().filter(|&&ok| ok).count(), n);
}

/// A client that stops reading its answer is cut at `send_timeout`, as documented, but the
/// request counted only as `forwarded` and `completed`, with no log line: an operator
/// chasing "downloads stop half way" saw only successes. The cut is now counted on the
/// pool (`/status` `send_timeouts`, `/metrics` `sluicegate_send_timeouts_total`) and logged.
#[tokio::test]
async fn an_answer_cut_at_send_timeout_is_counted_and_logged() {
    // 32 MiB: far more than the sockets' buffers between the upstream and the client hold.
    let big = std::sync::Arc::new({
        let mut a = b"HTTP/1.1 200 OK\r\ncontent-length: 33554432\r\n\r\n".to_vec();
        a.resize(a.len() + (32 << 20), b'x');
        a
    });
    let up = support::RawUpstream::start(std::sync::Arc::new(move |_: &str| (big.to_vec(), false)))
        .await;
    let text = format!(
        "listen = [\"127.0.0.1:0\"]\nsend_timeout = \"1s\"\n\n[admin]\nlisten = \"127.0.0.1:0\"\n\n\
         [[pools]]\nname = \"api\"\nupstream = \"http://{}\"\nmax_concurrency = 1\n\n\
         [[routes]]\npool = \"api\"\n",
        up.addr
    );
    let file = write_config("send-timeout-counted", &text);
    let mut gate = Gate::start(&["serve", "--config", file.to_str().unwrap()]).await;
    // Asks, then reads nothing.
    let idle = support::raw(gate.proxy, b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n").await;
    let line = gate.log_line("send_timeout").await;
    assert!(line.contains("api"), "{line}");
    drop(idle);
    let pool = gate.pool("api").await;
    assert_eq!(pool["counters"]["send_timeouts"], 1, "{pool:#}");
    let metrics = gate.admin_call("GET", "/metrics", None, "").await.body;
    assert!(
        metrics.contains("sluicegate_send_timeouts_total{pool=\"api\"} 1"),
        "{metrics}"
    );
}

/// A bind failure said what went wrong, not what to do (`cannot listen on 127.0.0.1:8080:
/// Address already in use (os error 98)`), where every config error names its fix: a port
/// in use and an address that is not this machine's now say what to do about them.
#[tokio::test]
async fn a_listen_address_in_use_or_not_of_this_machine_says_what_to_do() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let in_use = held.local_addr().unwrap().to_string();
    // TEST-NET-1 (RFC 5737): never an address of this machine.
    let elsewhere = "192.0.2.1:8111".to_owned();
    for (listen, advice) in [
        (in_use, "another process listens there"),
        (elsewhere, "is not an address of this machine"),
    ] {
        let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_sluicegate"))
            .args([
                "serve",
                "--listen",
                &listen,
                "--upstream",
                "http://127.0.0.1:9",
            ])
            .args(["--max-concurrency", "1"])
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(support::PATIENCE, run)
            .await
            .expect("the gate did not stop")
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{listen}: {err}");
        assert!(err.contains("cannot listen on"), "{listen}: {err}");
        assert!(err.contains(advice), "{listen}: {err}");
    }
    drop(held);
}

/// `GET /dashboard/samples?after=abc` (or `-5`) answered every sample kept, as if `after`
/// were not there: a value that is no time is now a `400` saying what to write; a time
/// later than every sample (past `u64` too) answers none.
#[tokio::test]
async fn dashboard_samples_after_a_bad_time_is_400_and_after_a_later_time_is_none() {
    let up = Upstream::start().await;
    let gate = Gate::in_front_of_with(up.addr, &[("--admin-listen", "127.0.0.1:0")]).await;
    let samples = |after: &'static str| {
        let gate = &gate;
        async move {
            let path = format!("/dashboard/samples{after}");
            gate.admin_call("GET", &path, None, "").await
        }
    };
    support::eventually("a sample", || async {
        let r = samples("").await;
        r.status == 200 && !r.body.contains("\"samples\":[]")
    })
    .await;
    for bad in ["?after=abc", "?after=-5", "?after=", "?after=1.5"] {
        let r = samples(bad).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert!(r.body.contains("Unix milliseconds"), "{bad}: {}", r.body);
    }
    for later in ["?after=99999999999999", "?after=99999999999999999999999"] {
        let r = samples(later).await;
        assert_eq!(r.status, 200, "{later}: {}", r.body);
        assert_eq!(r.body, "{\"samples\":[]}", "{later}");
    }
    assert!(samples("?after=0").await.body.contains("\"t\":"));
}
