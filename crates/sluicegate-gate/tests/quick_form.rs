//! End to end, the quick form: the built binary in front of a real upstream that counts
//! its own concurrency.

mod support;

use std::time::{Duration, Instant};

use support::{Gate, Upstream, eventually, get, raw};

async fn quick(up: &Upstream, extra: &[&str]) -> Gate {
    let url = up.url();
    let mut args = vec![
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &url,
        "--admin-listen",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    Gate::start(&args).await
}

async fn queued(gate: &Gate, n: u64) {
    eventually(&format!("{n} queued"), || async {
        gate.pool("default").await["queued"] == n
    })
    .await;
}

#[tokio::test]
async fn the_cap_is_reached_never_exceeded_and_the_queue_is_fifo() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "2",
            "--max-queue",
            "10",
            "--queue-timeout",
            "30s",
        ],
    )
    .await;
    let mut calls = Vec::new();
    for i in 0..6 {
        let addr = gate.proxy;
        calls.push(tokio::spawn(async move {
            get(addr, "/hold", &i.to_string()).await
        }));
        if i < 2 {
            eventually("held upstream", || async { up.current() == i + 1 }).await;
        } else {
            queued(&gate, i as u64 - 1).await;
        }
    }
    assert_eq!(up.current(), 2);
    // One release admits one waiter: wait for it to arrive before the next, so the
    // upstream's arrival order is the queue's admission order.
    for arrived in 3..=6 {
        up.release(1);
        eventually("next admitted", || async { up.ids().len() == arrived }).await;
    }
    up.release(2);
    for c in calls {
        assert_eq!(c.await.unwrap().status, 200);
    }
    assert_eq!(up.max(), 2, "the upstream saw more than the cap");
    assert_eq!(
        up.ids(),
        ["0", "1", "2", "3", "4", "5"],
        "not first come, first served"
    );
}

#[tokio::test]
async fn a_full_queue_answers_503_with_retry_after_at_once() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "1",
            "--max-queue",
            "1",
            "--queue-timeout",
            "30s",
        ],
    )
    .await;
    let a = tokio::spawn(get(gate.proxy, "/hold", "a"));
    eventually("a upstream", || async { up.current() == 1 }).await;
    let b = tokio::spawn(get(gate.proxy, "/hold", "b"));
    queued(&gate, 1).await;
    let c = get(gate.proxy, "/hold", "c").await;
    assert_eq!(c.status, 503);
    assert_eq!(c.header("x-sluicegate-reason"), "queue_full");
    assert!(c.header("retry-after").parse::<u64>().unwrap() >= 1);
    assert!(
        c.body.contains("queue_full") || c.body.contains("queue full"),
        "{}",
        c.body
    );
    up.release(2);
    assert_eq!(a.await.unwrap().status, 200);
    assert_eq!(b.await.unwrap().status, 200);
    assert!(!up.ids().contains(&"c".to_owned()));
}

#[tokio::test]
async fn a_queue_timeout_answers_503_after_about_the_timeout() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "1",
            "--max-queue",
            "5",
            "--queue-timeout",
            "300ms",
        ],
    )
    .await;
    let a = tokio::spawn(get(gate.proxy, "/hold", "a"));
    eventually("a upstream", || async { up.current() == 1 }).await;
    let start = Instant::now();
    let b = get(gate.proxy, "/hold", "b").await;
    let waited = start.elapsed();
    assert_eq!(b.status, 503);
    assert_eq!(b.header("x-sluicegate-reason"), "queue_timeout");
    assert!(b.headers.contains_key("retry-after"));
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    up.release(1);
    assert_eq!(a.await.unwrap().status, 200);
}

#[tokio::test]
async fn a_client_that_leaves_the_queue_never_reaches_the_upstream() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "1",
            "--max-queue",
            "5",
            "--queue-timeout",
            "30s",
        ],
    )
    .await;
    let a = tokio::spawn(get(gate.proxy, "/hold", "a"));
    eventually("a upstream", || async { up.current() == 1 }).await;
    let quitter = raw(
        gate.proxy,
        b"GET /hold HTTP/1.1\r\nhost: x\r\nx-id: quitter\r\n\r\n",
    )
    .await;
    queued(&gate, 1).await;
    drop(quitter);
    queued(&gate, 0).await;
    let s = gate.pool("default").await;
    assert_eq!(s["counters"]["client_gone"], 1, "{s}");
    up.release(2);
    assert_eq!(a.await.unwrap().status, 200);
    let after = tokio::spawn(get(gate.proxy, "/fast", "after"));
    assert_eq!(after.await.unwrap().status, 200);
    assert_eq!(up.ids(), ["a", "after"], "the quitter reached the upstream");
}

/// The same with a request body the gate has not read yet: hyper does not watch the
/// connection then, the gate's own watch must. Past the bound of what is read ahead
/// (`client_body_buffer_size`, 64 KiB): the gate read that much and queued the request with
/// the rest unread (a body within it is read before the queue, where a client that leaves is
/// seen by hyper: `tests/read_ahead.rs`).
#[tokio::test]
async fn a_client_with_an_unread_body_that_leaves_the_queue_never_reaches_the_upstream() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "1",
            "--max-queue",
            "5",
            "--queue-timeout",
            "30s",
        ],
    )
    .await;
    let a = tokio::spawn(get(gate.proxy, "/hold", "a"));
    eventually("a upstream", || async { up.current() == 1 }).await;
    let mut past_the_bound =
        b"POST /body HTTP/1.1\r\nhost: x\r\nx-id: quitter\r\ncontent-length: 100000\r\n\r\n"
            .to_vec();
    past_the_bound.extend_from_slice(&[b'x'; 70_000]);
    let quitter = raw(gate.proxy, &past_the_bound).await;
    queued(&gate, 1).await;
    drop(quitter);
    queued(&gate, 0).await;
    assert_eq!(gate.pool("default").await["counters"]["client_gone"], 1);
    up.release(1);
    assert_eq!(a.await.unwrap().status, 200);
    assert_eq!(get(gate.proxy, "/fast", "after").await.status, 200);
    assert_eq!(up.ids(), ["a", "after"], "the quitter reached the upstream");
}

#[tokio::test]
async fn a_client_that_leaves_mid_request_keeps_its_slot_until_the_upstream_ends() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "1",
            "--max-queue",
            "5",
            "--queue-timeout",
            "30s",
        ],
    )
    .await;
    let leaver = raw(
        gate.proxy,
        b"GET /hold HTTP/1.1\r\nhost: x\r\nx-id: leaver\r\n\r\n",
    )
    .await;
    eventually("leaver upstream", || async { up.current() == 1 }).await;
    drop(leaver);
    let b = tokio::spawn(get(gate.proxy, "/hold", "b"));
    queued(&gate, 1).await;
    // The upstream is still busy with the leaver's request: b must keep waiting.
    assert_eq!(gate.pool("default").await["in_flight"], 1);
    assert_eq!(up.ids(), ["leaver"]);
    up.release(1);
    eventually("b upstream", || async { up.ids().len() == 2 }).await;
    up.release(1);
    assert_eq!(b.await.unwrap().status, 200);
    assert_eq!(
        up.max(),
        1,
        "the slot was freed while the upstream was still working"
    );
}

#[tokio::test]
async fn over_the_rate_answers_429_with_the_ratelimit_headers() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "4",
            "--max-queue",
            "4",
            "--queue-timeout",
            "1s",
            "--rate",
            "2/m",
        ],
    )
    .await;
    assert_eq!(get(gate.proxy, "/fast", "1").await.status, 200);
    assert_eq!(get(gate.proxy, "/fast", "2").await.status, 200);
    let r = get(gate.proxy, "/fast", "3").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("x-sluicegate-reason"), "rate_limited");
    assert!(r.header("retry-after").parse::<u64>().unwrap() >= 1);
    assert_eq!(r.header("ratelimit-policy"), "\"default\";q=2;w=60");
    assert!(
        r.header("ratelimit").starts_with("\"default\";r=0;t="),
        "{:?}",
        r.headers
    );
    assert_eq!(up.ids(), ["1", "2"]);
}

#[tokio::test]
async fn an_unreachable_upstream_answers_502_fast_and_keeps_no_permit() {
    // Not a listener dropped to free its port: another test's gate bound it once, and CI
    // saw that gate's 503 here.
    let refusing = support::ReservedPort::new();
    let url = format!("http://127.0.0.1:{}", refusing.port);
    let gate = Gate::start(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &url,
        "--max-concurrency",
        "1",
        "--max-queue",
        "0",
        "--queue-timeout",
        "10s",
        "--admin-listen",
        "127.0.0.1:0",
    ])
    .await;
    for i in 0..3 {
        // With one slot and no queue, a leaked permit would turn the next one into a 503.
        let r = get(gate.proxy, "/fast", &i.to_string()).await;
        assert_eq!(r.status, 502, "{}", r.body);
        assert_eq!(r.header("x-sluicegate-reason"), "upstream_unreachable");
    }
    let s = gate.pool("default").await;
    assert_eq!(s["in_flight"], 0);
    assert_eq!(s["counters"]["upstream_unreachable"], 3);
}

#[tokio::test]
async fn a_hanging_upstream_answers_504_and_frees_the_slot() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "1",
            "--max-queue",
            "0",
            "--queue-timeout",
            "10s",
            // Not shorter: the next request's `/fast` must be answered within it on a
            // loaded 2-core machine.
            "--upstream-timeout",
            "2s",
        ],
    )
    .await;
    let r = get(gate.proxy, "/hold", "hang").await;
    assert_eq!(r.status, 504);
    assert_eq!(r.header("x-sluicegate-reason"), "upstream_timeout");
    assert_eq!(gate.pool("default").await["in_flight"], 0);
    // The slot is free again: the next request is forwarded, not turned away.
    assert_eq!(get(gate.proxy, "/fast", "next").await.status, 200);
}

#[tokio::test]
async fn forwarding_keeps_host_adds_forwarded_for_and_drops_hop_by_hop_headers() {
    let up = Upstream::start().await;
    let gate = quick(
        &up,
        &[
            "--max-concurrency",
            "4",
            "--max-queue",
            "4",
            "--queue-timeout",
            "1s",
        ],
    )
    .await;
    let req = http::Request::get("/fast")
        .header("host", "api.example:8080")
        .header("connection", "x-hop")
        .header("x-hop", "secret")
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap();
    let r = support::request(gate.proxy, req).await;
    assert_eq!(r.status, 200);
    assert!(r.body.contains("host=api.example:8080"), "{}", r.body);
    assert!(r.body.contains("xff=127.0.0.1"), "{}", r.body);
    assert!(
        r.body
            .contains("forwarded=for=127.0.0.1;host=\"api.example:8080\";proto=http"),
        "{}",
        r.body
    );
    assert!(
        r.body.contains("connection=-"),
        "x-hop was forwarded: {}",
        r.body
    );
}

/// Started with a soft limit of 256 open files (systemd's default for services is 1024),
/// the gate raises it to the hard limit and says so; a gate left at 256 would refuse
/// connections at about 128 clients.
#[tokio::test]
async fn the_gate_raises_its_soft_limit_on_open_files() {
    let up = Upstream::start().await;
    let (_, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
    let mut command = tokio::process::Command::from(support::tied_to_this_process("sh"));
    let url = up.url();
    command.args([
        "-c",
        "ulimit -Sn 256 && exec \"$0\" \"$@\"",
        env!("CARGO_BIN_EXE_sluicegate"),
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &url,
        "--max-concurrency",
        "4",
        "--max-queue",
        "10",
        "--queue-timeout",
        "1s",
    ]);
    let mut gate = Gate::start_command(command).await;
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", gate.pid())).unwrap();
    let soft: u64 = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok())
        .unwrap();
    if hard > 256 {
        assert_eq!(soft, hard.min(1 << 20), "{limits}");
        gate.log_line("limit on open files raised from 256 to")
            .await;
    } else {
        assert_eq!(soft, hard);
        gate.log_line("open files: each client connection").await;
    }
    assert_eq!(get(gate.proxy, "/fast", "1").await.status, 200);
}

/// A gate whose pools may hold more requests than it may open files says so at start,
/// with the number to give `ulimit -n`: 2000 running (three files each) and 1000 queued
/// (two each) need about 8064, and a hard limit of 1024 leaves it there.
#[tokio::test]
async fn a_gate_whose_pools_need_more_open_files_than_it_may_have_says_so() {
    let up = Upstream::start().await;
    let mut command = tokio::process::Command::from(support::tied_to_this_process("sh"));
    let url = up.url();
    command.args([
        "-c",
        "ulimit -n 1024 && exec \"$0\" \"$@\"",
        env!("CARGO_BIN_EXE_sluicegate"),
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &url,
        "--max-concurrency",
        "2000",
        "--max-queue",
        "1000",
        "--queue-timeout",
        "1s",
    ]);
    let mut gate = Gate::start_command(command).await;
    let line = gate
        .log_line("the pools' limits and queues may hold about 8064 open files at once")
        .await;
    assert!(
        line.contains("this process may open 1024") && line.contains("`ulimit -n 8064`"),
        "{line}"
    );
    assert_eq!(get(gate.proxy, "/fast", "1").await.status, 200);
}
