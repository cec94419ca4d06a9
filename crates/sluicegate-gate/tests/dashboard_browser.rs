//! The dashboard in a real headless Chromium, driven through chromedriver: under load its
//! numbers move, an open tunnel (WebSocket) shows in its pool's card, a limit typed into
//! the page is obeyed by the gate, and a screenshot is
//! saved (`target/dashboard.png`; with `SLUICEGATE_UPDATE_DOCS=1`, also
//! `docs/dashboard.png`, the one the README shows).
//!
//! Ignored by plain `cargo test` because it needs Debian's `chromium` and
//! `chromium-driver`; `scripts/test.sh` installs them and runs it with `--include-ignored`.

mod support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use sluicegate_gate::demo::load::{self, Arrivals, LoadPlan, Patience, Tally};
use sluicegate_gate::demo::upstream::{self, ServiceTime, UpstreamModel, UpstreamStats};
use sluicegate_gate::pool::Outcome;
use support::{Gate, eventually, write_config};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// chromedriver and the Chromium it starts, in a process group of their own, killed together
/// when dropped: a test that fails before it closes the browser leaves no Chromium behind.
struct Driver {
    child: Child,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            // The group's id is chromedriver's pid (`process_group(0)`).
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
        }
    }
}

/// chromedriver on a port it picks itself (`--port=0`, read back from what it prints). Not a
/// port found free and handed over: another test's process could bind it first.
async fn chromedriver() -> (Driver, u16) {
    for tool in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            std::path::Path::new(tool).exists(),
            "{tool} is missing: apt-get install chromium chromium-driver (scripts/test.sh does)"
        );
    }
    let mut child = Command::new(CHROMEDRIVER)
        .arg("--port=0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut said = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        // "ChromeDriver was started successfully on port 39923."
        if let Some(port) = line
            .split("started successfully on port ")
            .nth(1)
            .and_then(|p| p.trim_end_matches('.').trim().parse().ok())
        {
            // Keep reading, so that chromedriver never blocks on a full pipe.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return (Driver { child }, port);
        }
        said.push(line);
    }
    panic!("chromedriver did not say where it listens: {said:#?}");
}

async fn browser(driver_port: u16, profile: &std::path::Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": CHROMIUM,
            // As root, without a sandbox; no background traffic to hosts this machine
            // cannot reach.
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                     "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync",
                     "--window-size=1400,1000",
                     format!("--user-data-dir={}", profile.display())],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .expect("cannot start chromium through chromedriver")
}

/// The text of the element `css` finds, or "" while there is none.
async fn text(page: &Client, css: &str) -> String {
    match page.find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Reads a response head from `stream`, up to its blank line.
async fn read_head(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs chromium and chromedriver; scripts/test.sh installs them and runs this"]
async fn dashboard_moves_under_load_and_sets_a_limit_the_gate_obeys() {
    // A 40 ms upstream with no queue of its own, so its concurrency is the gate's.
    let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_addr = up.local_addr().unwrap();
    let seen = Arc::new(UpstreamStats::default());
    let model = UpstreamModel {
        workers: None,
        service: ServiceTime::Fixed(Duration::from_millis(40)),
        contention: 0.0,
    };
    tokio::spawn(upstream::serve(up, model, Arc::clone(&seen)));
    // A second pool's upstream accepts every upgrade and keeps the tunnel open.
    let switch = |_: &str| {
        let head =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        (head.as_bytes().to_vec(), false)
    };
    let ws_up = support::RawUpstream::start(Arc::new(switch)).await;

    let config = write_config(
        "dashboard",
        &format!(
            "listen = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"127.0.0.1:0\"\n\
             [[pools]]\nname = \"reports\"\nupstream = \"http://{up_addr}\"\n\
             max_concurrency = 8\nmax_queue = 100\nqueue_timeout = \"5s\"\n\
             [[pools]]\nname = \"ws\"\nupstream = \"http://{}\"\nmax_concurrency = 2\n\
             tunnel_idle_timeout = \"1h\"\n\
             [[pools]]\nname = \"auto\"\nupstream = \"http://{up_addr}\"\n\
             [pools.adaptive]\nalgorithm = \"littles\"\n\
             [[routes]]\npool = \"ws\"\npath_prefix = \"/ws\"\n\
             [[routes]]\npool = \"auto\"\npath_prefix = \"/auto\"\n\
             [[routes]]\npool = \"reports\"\n",
            ws_up.addr
        ),
    );
    let gate = Gate::start(&["serve", "--config", config.to_str().unwrap()]).await;
    let admin: SocketAddr = gate.admin.unwrap();

    // 24 callers keep the pool full and its queue busy for the whole test.
    let tally = Arc::new(Tally::default());
    let load = tokio::spawn(load::run(
        LoadPlan {
            target: gate.proxy,
            path: "/".into(),
            arrivals: Arrivals::Closed { clients: 24 },
            patience: Patience::Unlimited,
            duration: Duration::from_secs(120),
        },
        Arc::clone(&tally),
    ));

    let (_driver, driver_port) = chromedriver().await;
    let profile = std::env::temp_dir().join(format!("sluicegate-chromium-{}", std::process::id()));
    let page = browser(driver_port, &profile).await;
    page.goto(&format!("http://{admin}/")).await.unwrap();

    // The numbers move: the pool's card appears with 8 in flight, and the samples go on.
    let card = "section[data-pool=\"reports\"]";
    eventually("the page shows the pool full", || async {
        text(&page, &format!("{card} [data-f=\"in_flight\"]")).await == "8"
    })
    .await;
    // A tunnel open in pool `ws` shows in its card, and in no other.
    let mut tunnel = support::raw(
        gate.proxy,
        b"GET /ws HTTP/1.1\r\nHost: gate.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
    )
    .await;
    let head = read_head(&mut tunnel).await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let ws_card = "section[data-pool=\"ws\"]";
    eventually("the page shows the open tunnel", || async {
        text(&page, &format!("{ws_card} [data-f=\"tunnels\"]")).await == "1"
    })
    .await;
    assert_eq!(
        text(&page, &format!("{ws_card} [data-f=\"in_flight\"]")).await,
        "1"
    );
    assert_eq!(
        text(&page, &format!("{card} [data-f=\"tunnels\"]")).await,
        "0"
    );
    // An adaptive pool's card says why its limit sits where it does (from `/status`): no
    // request has reached it, so it is warming up; a static pool's says nothing.
    eventually("the adaptive pool's phase on the page", || async {
        text(&page, "section[data-pool=\"auto\"] [data-f=\"why\"]").await == "warming up"
    })
    .await;
    assert_eq!(text(&page, &format!("{card} [data-f=\"why\"]")).await, "");
    let first = text(&page, "#status").await;
    assert!(first.starts_with("live"), "status line: {first}");
    // Each outcome is drawn in a colour of its own (review 4, finding 10: the 9th reason
    // to appear took the green of `forwarded`).
    let names: Vec<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
    let drawn = page
        .execute(
            "return arguments[0].map(colorOf)",
            vec![serde_json::json!(names)],
        )
        .await
        .unwrap();
    let drawn: Vec<String> = serde_json::from_value(drawn).unwrap();
    let distinct: std::collections::HashSet<&String> = drawn.iter().collect();
    assert_eq!(distinct.len(), names.len(), "colours drawn: {drawn:?}");
    eventually("a newer sample on the page", || async {
        text(&page, "#status").await != first
    })
    .await;
    let forwarded: f64 = text(&page, &format!("{card} [data-f=\"forwarded\"]"))
        .await
        .parse()
        .unwrap_or(0.0);
    assert!(forwarded > 0.0, "forwarded/s on the page: {forwarded}");

    // Set the limit to 3 from the page; the gate obeys.
    let input = page
        .find(Locator::Css(&format!("{card} input[data-i=\"limit\"]")))
        .await
        .unwrap();
    input.send_keys("3").await.unwrap();
    page.find(Locator::Css(&format!("{card} button[data-a=\"set\"]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let gate = &gate;
    eventually("the gate's limit is 3", || async move {
        gate.pool("reports").await["limit"] == 3
    })
    .await;
    // Running requests finish (40 ms); from then on the upstream never sees more than 3.
    // The gate's count, not only the upstream's: a request admitted under the old limit
    // may still be on its way to the upstream (seen on a loaded machine: 5 at once).
    let seen_now = &seen;
    eventually("in flight down to the new limit", || async move {
        seen_now.snapshot().in_flight <= 3
            && gate.pool("reports").await["in_flight"].as_u64() <= Some(3)
    })
    .await;
    seen.reset_peak();
    let before = tally.ok.load(std::sync::atomic::Ordering::Relaxed);
    eventually("more requests served under the new limit", || async {
        tally.ok.load(std::sync::atomic::Ordering::Relaxed) > before + 30
    })
    .await;
    assert!(
        seen.snapshot().max_in_flight <= 3,
        "upstream saw {} at once after the limit went to 3",
        seen.snapshot().max_in_flight
    );
    eventually("the page shows the new limit", || async {
        text(&page, &format!("{card} [data-f=\"limit\"]")).await == "3"
    })
    .await;

    // Let the charts draw a few seconds of both limits, then keep a picture.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let png = page.screenshot().await.unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/dashboard.png"), &png).unwrap();
    if std::env::var_os("SLUICEGATE_UPDATE_DOCS").is_some() {
        std::fs::write(root.join("docs/dashboard.png"), &png).unwrap();
    }
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");

    page.close().await.unwrap();
    drop(tunnel);
    load.abort();
    let _ = std::fs::remove_dir_all(profile);
}
