//! One pub/sub connection per limit: a release anywhere wakes this instance's first waiter.

use std::sync::Weak;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::Notify;

use crate::RedisStore;

/// Listens on `channel` until the limit is dropped (`wake` can no longer be upgraded),
/// reconnecting with backoff. Every message, and every (re)subscription — releases may have
/// been missed meanwhile — wakes the waiter. A subscription that ends (Redis closed the
/// connection: it died or restarted) marks the store down, so that waiters get the failure
/// policy's answer at once even when this instance makes no call that could fail.
pub(super) async fn listen(store: RedisStore, channel: String, wake: Weak<Notify>) {
    let client = store.client();
    let mut backoff = Duration::from_millis(50);
    loop {
        if let Ok(mut pubsub) = client.get_async_pubsub().await
            && pubsub.subscribe(&channel).await.is_ok()
        {
            backoff = Duration::from_millis(50);
            let mut messages = pubsub.into_on_message();
            loop {
                match wake.upgrade() {
                    Some(w) => w.notify_waiters(),
                    None => return,
                }
                if messages.next().await.is_none() {
                    store.connection_lost("the pub/sub connection was closed");
                    break;
                }
            }
        }
        if wake.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}
