//! Tests of the permit against a real Redis, and the seam that holds a renewal for them.

use std::future::Future;
use std::sync::mpsc::sync_channel;
use std::time::Duration;

use super::super::limiter::Inner;
use super::super::scripts::RENEW;
use crate::concurrency::AcquireError;
use crate::store::server::RedisServer;
use crate::{GlobalConcurrency, RedisStore};

/// Tests: a renewal held, its worker thread blocked, twice: between deciding to renew and
/// making the call (says so on `deciding`, waits for `go`); then right after the call's first
/// poll has queued the command on the connection (says so on `sent`, waits for `answer`),
/// so that the connection's task writes it before the renewal's future can be dropped.
/// (redis-rs skips a queued command whose caller has gone: an abort at that poll's end
/// stops a renewal unless the connection's task, on another worker, wrote it first.)
#[derive(Debug)]
pub(in crate::concurrency) struct HoldRenewal {
    pub(super) deciding: std::sync::mpsc::SyncSender<()>,
    pub(super) go: std::sync::mpsc::Receiver<()>,
    pub(super) sent: std::sync::mpsc::SyncSender<()>,
    pub(super) answer: std::sync::mpsc::Receiver<()>,
}

impl HoldRenewal {
    /// Holds this renewal, deciding, if a test asked for it (once).
    pub(super) fn deciding(inner: &Inner) -> Option<HoldRenewal> {
        let hold = inner.hold_renewal.lock().unwrap().take()?;
        hold.deciding.send(()).unwrap();
        tokio::task::block_in_place(|| hold.go.recv().unwrap());
        Some(hold)
    }

    /// `call`, held after its first poll when `hold` is.
    pub(super) async fn sending<T>(hold: Option<HoldRenewal>, call: impl Future<Output = T>) -> T {
        let mut call = std::pin::pin!(call);
        let mut hold = hold;
        std::future::poll_fn(|cx| {
            let polled = call.as_mut().poll(cx);
            if let Some(hold) = hold.take() {
                hold.sent.send(()).unwrap();
                // In place: the worker's other tasks — the connection's, just woken to write
                // the command — move on to another thread meanwhile.
                tokio::task::block_in_place(|| hold.answer.recv().unwrap());
            }
            polled
        })
        .await
    }
}

/// The next release published on `channel` within `within`, if any.
fn next_release(pubsub: &mut redis::PubSub<'_>, within: Duration) -> Option<String> {
    pubsub.set_read_timeout(Some(within)).unwrap();
    match pubsub.get_message() {
        Ok(message) => Some(message.get_payload().unwrap()),
        Err(e) if e.is_timeout() => None,
        Err(e) => panic!("{e}"),
    }
}

/// redis111 ("Renewal racing a release"): a permit dropped while its renewal, polled on
/// another worker, had decided to renew and not yet sent. The drop aborted the renewal
/// task (an abort stops a task only at the end of its poll) and sent the release; the
/// renewal's `ZADD`, queued in that same poll and written by the connection's task before
/// the abort dropped it, came after the release's `ZREM` and put back a lease nobody
/// held, for a lease time: with a limit of 1, every caller turned away meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn a_release_racing_its_permits_renewal_leaves_no_lease_behind() {
    let redis = RedisServer::start();
    let store = RedisStore::builder(&redis.url())
        .budget(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    // A lease time of 3 s: the renewal comes after 1 s, and a lease it puts back
    // outlives the checks below.
    let limit = GlobalConcurrency::builder(&store, "race", 1)
        .ttl(Duration::from_secs(3))
        .max_queue(0)
        .build()
        .unwrap();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut look = client.get_connection().unwrap();
    // Loaded, as on any Redis where a renewal has run: a first renewal's EVALSHA comes
    // back NOSCRIPT, and the abort stops it before it sends the script itself.
    let _: String = RENEW.load(&mut look).unwrap();
    let mut watcher = client.get_connection().unwrap();
    let mut pubsub = watcher.as_pubsub();
    pubsub.subscribe(&limit.inner().channel).unwrap();
    let (deciding, decided) = sync_channel(1);
    let (go, wait) = sync_channel(1);
    let (sent, queued) = sync_channel(1);
    let (answer, written) = sync_channel(1);
    *limit.inner().hold_renewal.lock().unwrap() = Some(HoldRenewal {
        deciding,
        go: wait,
        sent,
        answer: written,
    });

    let permit = limit.acquire().await.unwrap();
    let id: String = redis::cmd("ZRANGE")
        .arg(&limit.inner().leases)
        .arg(0)
        .arg(0)
        .query::<Vec<String>>(&mut look)
        .unwrap()
        .remove(0);
    tokio::task::spawn_blocking(move || decided.recv().unwrap())
        .await
        .unwrap();
    drop(permit);
    // The release gets its chance to land while the renewal is held (before the fix it
    // did, at once).
    let early =
        tokio::task::block_in_place(|| next_release(&mut pubsub, Duration::from_millis(500)));
    go.send(()).unwrap();
    tokio::task::spawn_blocking(move || queued.recv().unwrap())
        .await
        .unwrap();
    // The renewal's command is queued; the connection's task writes it: the lease is
    // there again (or still).
    let score = || -> Option<f64> {
        redis::cmd("ZSCORE")
            .arg(&limit.inner().leases)
            .arg(&id)
            .query(&mut client.get_connection().unwrap())
            .unwrap()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while score().is_none() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    answer.send(()).unwrap();
    // The release, if it waited for the renewal's answer, comes now.
    let late = tokio::task::block_in_place(|| next_release(&mut pubsub, Duration::from_secs(2)));
    assert!(
        early.is_some() || late.is_some(),
        "the permit was never released"
    );
    match limit.acquire().await {
        Ok(permit) => drop(permit),
        Err(AcquireError::QueueFull { .. }) => panic!(
            "the only permit is out, held by nobody: the renewal put lease {id} back \
             after its release (released while the renewal was held: {early:?}, after \
             its answer: {late:?}; score now {:?})",
            score()
        ),
        Err(other) => panic!("{other:?}"),
    }
}
