//! End to end: a change through the admin API (`PUT /pools/NAME/limits`) is held to the
//! rules a config file is held to. A change the file check would refuse is answered `400`
//! with the file check's own words, and the pool keeps its limits.

mod support;

use support::{Gate, RedisServer, Upstream, write_config};

async fn gate(text: &str) -> Gate {
    let path = write_config("admin-check.toml", text);
    Gate::start(&["serve", "--config", path.to_str().unwrap()]).await
}

/// The same config as a file: what `sluicegate check` says of it.
fn file_check(text: &str) -> String {
    let path = write_config("admin-check-file.toml", text);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluicegate"))
        .args(["check", "--config", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success(), "the file check took it: {text}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Trial of 4 Dec (gate20's notes): a global rate whose `burst × interval` is past what
/// redis holds (52 days) is refused at file load, with its place and the largest burst to
/// write; the same rate put through the admin API was not checked so. It is now: `400`,
/// the file's message (the largest burst), the rate left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_global_rate_past_the_redis_horizon_is_refused_by_the_admin_api_as_by_the_file() {
    let redis = RedisServer::start();
    let upstream = Upstream::start().await;
    let text = |rate: &str| {
        format!(
            "listen = \"127.0.0.1:0\"\n[admin]\nlisten = \"127.0.0.1:0\"\n\
             [store]\nredis = \"{}\"\ninstances = 1\n\
             [[pools]]\nname = \"shared\"\nupstream = \"{}\"\nscope = \"global\"\n\
             max_concurrency = 4\nrate = \"{rate}\"\nburst = 5000\n\
             [[routes]]\npool = \"shared\"\n",
            redis.url(),
            upstream.url()
        )
    };
    // At 1/h, a burst of 5000 takes 208 days to refill: the file check refuses it.
    let said = file_check(&text("1/h"));
    assert!(said.contains("52 days"), "{said}");
    let largest = said
        .split("write `burst = ")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap_or_else(|| panic!("no largest burst in: {said}"))
        .to_owned();

    let gate = gate(&text("1000/s")).await;
    let r = gate
        .admin_call("PUT", "/pools/shared/limits", None, r#"{"rate": "1/h"}"#)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("52 days"), "{}", r.body);
    assert!(
        r.body
            .contains(&format!("write `burst = {largest}` or less")),
        "{}",
        r.body
    );
    assert_eq!(gate.pool("shared").await["rate"], "1000/s");
    // A rate within the horizon goes through.
    let r = gate
        .admin_call("PUT", "/pools/shared/limits", None, r#"{"rate": "10/s"}"#)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(gate.pool("shared").await["rate"], "10/s");
}

/// Without redis: taking the rate off a pool that has a `burst` leaves a `burst` of no
/// rate, which a file may not have. The admin API took it; it is refused now, and the rate
/// stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_the_rate_of_a_pool_with_a_burst_is_refused_as_by_the_file() {
    let upstream = Upstream::start().await;
    let text = format!(
        "listen = \"127.0.0.1:0\"\n[admin]\nlisten = \"127.0.0.1:0\"\n\
         [[pools]]\nname = \"api\"\nupstream = \"{}\"\nmax_concurrency = 4\n\
         rate = \"10/s\"\nburst = 20\n[[routes]]\npool = \"api\"\n",
        upstream.url()
    );
    let gate = gate(&text).await;
    let r = gate
        .admin_call("PUT", "/pools/api/limits", None, r#"{"rate": null}"#)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("`burst` is the burst"), "{}", r.body);
    assert_eq!(gate.pool("api").await["rate"], "10/s");
}
