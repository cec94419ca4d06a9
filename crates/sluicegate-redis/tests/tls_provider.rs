//! rustls takes one crypto provider per process: redis-rs asks for the process's (or the one
//! rustls's crate features name, panicking when they name two, as when another dependency
//! turns on rustls's default `aws-lc-rs` next to our `ring`). The store installs ring's when
//! the program has not chosen one, before its first TLS connection. Alone in its test binary:
//! the provider is the process's.

mod support;

use std::time::Duration;

use sluicegate_redis::RedisStore;
use support::{RedisServer, TestCerts};

/// tls115: a program that never heard of rustls connects over TLS, and its process then has
/// ring's provider, so that no `ClientConfig::builder()` of it can panic for want of one.
#[tokio::test]
async fn a_tls_store_installs_ring_as_the_process_provider() {
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
    let certs = TestCerts::new();
    let redis = RedisServer::start_tls(&certs.file("redis.crt"), &certs.file("redis.key"), None);
    let store = RedisStore::builder(&redis.tls_url("localhost"))
        .budget(Duration::from_secs(5))
        .tls_ca(certs.ca_pem.clone())
        .connect()
        .await
        .unwrap();
    assert!(store.health().up, "{:?}", store.health());
    let installed = rustls::crypto::CryptoProvider::get_default().expect("a provider");
    #[allow(deprecated)]
    let ring = rustls::crypto::ring::default_provider();
    assert_eq!(
        format!("{:?}", installed.cipher_suites),
        format!("{:?}", ring.cipher_suites)
    );
}
