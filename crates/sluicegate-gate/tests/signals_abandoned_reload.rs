//! A stop heard during a SIGHUP's reload drops the reload where it waits (the signal loop
//! no longer awaits it first). Dropped while it waits for its turn is pinned in
//! `server.rs`'s tests; here it is dropped while it waits for a new `[store]`'s Redis, a
//! real `redis-server`, so that the connection is pending after one poll. Nothing of the
//! new file may be in force, and the gate takes the next reload as before.

mod support;

#[tokio::test]
async fn a_reload_dropped_while_its_store_connects_changes_nothing() {
    let redis = support::RedisServer::start();
    let path = support::write_config("abandoned", &support::api_pool(None, 1));
    let gate = support::gate_from_file(&path).await;
    support::rewrite(&path, &support::api_pool(Some(&redis.url()), 2));
    let mut reload = Box::pin(gate.reload());
    support::past_its_read(&gate, &mut reload, 0).await;
    // What the signal loop does when SIGTERM comes now.
    drop(reload);
    let state = gate.state();
    assert_eq!(state.pool("api").unwrap().limit.limiter().max(), 1);
    assert!(
        state.store.is_none(),
        "the abandoned reload's store is in force"
    );
    // Its turn is given back: the next reload runs, whole.
    support::rewrite(&path, &support::api_pool(Some(&redis.url()), 3));
    gate.reload().await.expect("the next reload");
    let state = gate.state();
    assert_eq!(state.pool("api").unwrap().limit.limiter().max(), 3);
    assert!(state.store.is_some());
}
