//! Test support: a real `redis-server` per test ([`server`]) and a store on it.
#![allow(dead_code, unreachable_pub, unused_imports)]

use std::time::Duration;

mod server;
mod tls;
pub use server::{RedisServer, ReservedPort, assert_dies_with_a_killed_test_process};
pub use tls::TestCerts;

impl RedisServer {
    /// A plain synchronous connection, for a test to look at or change what is stored.
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection()
            .unwrap()
    }
}

/// A store on `redis` with a budget generous enough for a loaded test machine: tests that
/// are not about the budget must not see fallbacks. (5 s: a loaded CI machine can stall a
/// test process for over a second, and costs nothing while Redis answers; a dead Redis
/// refuses at once, so no test waits for it.)
pub async fn store(redis: &RedisServer) -> sluicegate_redis::RedisStore {
    sluicegate_redis::RedisStore::builder(&redis.url())
        .budget(Duration::from_secs(5))
        .connect()
        .await
        .unwrap()
}
