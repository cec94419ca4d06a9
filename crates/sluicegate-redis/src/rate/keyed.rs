//! Global GCRA per client: one theoretical arrival time per client key in Redis, decided by
//! the strict GCRA's own script.
//!
//! # How it works
//!
//! Each client key (an address, an API key: any bytes the caller names) is hashed to a
//! 128-bit digest ([`digest`](crate::store::digest)), and its state is the string key
//! `{prefix:name:DIGEST}:ktatf64` — the same 8-byte state as a [`GlobalGcra`]'s, read and
//! written by the same script (`time.lua`, `gcra.lua`, `write.lua`), so every property of the
//! strict GCRA holds per client: one `EVALSHA` per decision, Redis's clock, the decision of
//! the local limiter's `step`, the state modulo 2^23 s. The script sets the key's expiry to
//! the state's refill and about 2 s more, so a client that stops sending costs nothing once
//! its bucket is full again: Redis holds one key per client active within the last
//! `burst × interval` and 2 s, about 180 bytes each (BENCHMARKS.md measures it).
//!
//! What a hostile key can do: its bytes never reach Redis, only its digest does, so no key
//! is longer than any other, none holds a brace or a byte that would end its hash tag early,
//! and none lands on another client's state without a second preimage of its digest. A
//! flood of distinct keys makes one Redis key each, which expires as above: the memory it
//! costs is bounded by the requests that reach the check, not by what they say.
//!
//! While Redis cannot answer within the store's budget, the [`FailurePolicy`] decides:
//! `Local` gives each client `1 / instances` of its quota in this instance (a
//! [`KeyedGcra`] of at most `max_keys` clients, keyed by the same digests), so that a
//! client spread over all instances gets about its quota in all; `Allow` and `Deny` as for
//! the other limits.
//!
//! No hybrid (leased) mode: a lease pays where one instance spends many tokens of one bucket
//! between two leases, and a per-client rate is mostly a few requests per client per
//! second, spread over the instances — a batch of 2 % of its rate rounds to one token, a
//! round trip each. Decisions of many clients at once share the store's one pipelined
//! connection instead.

use std::num::NonZeroUsize;

use sluicegate::keyed::KeyedGcra;
use sluicegate::rate::{CheckError, Decision, Quota};

use super::Verdict;
use super::gcra::{GcraBuilder, Spec};
use crate::Error;
use crate::store::{Digest, PerClient, digest};

/// A GCRA rate limit per client key, shared by every instance that uses the same store and
/// name: each client gets the quota across all instances together, however a balancer
/// spreads its requests over them.
///
/// Built with [`GcraBuilder::build_keyed`]. Each client's state is one small key in Redis
/// (`{prefix:name:DIGEST}:ktatf64`, `DIGEST` 128 bits of the SHA-1 of the client key: its
/// bytes never reach Redis, whatever they hold), decided by [`GlobalGcra`](crate::GlobalGcra)'s
/// script and expiring about 2 s after the client's bucket is full again.
/// `docs/global-limits.md` (*GCRA per client*) has the details.
///
/// # Examples
///
/// ```no_run
/// # use std::num::NonZeroUsize;
/// # use sluicegate_redis::{GlobalGcra, RedisStore};
/// # use sluicegate::rate::Quota;
/// # async fn demo(store: RedisStore) -> Result<(), sluicegate_redis::Error> {
/// let per_client = GlobalGcra::builder(&store, "api", Quota::per_second(10)?)
///     .instances(3)
///     .build_keyed(NonZeroUsize::new(100_000).unwrap())?;
/// let decision = per_client.check(b"203.0.113.7").await;
/// println!("allowed: {}", decision.is_allowed());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GlobalKeyedGcra {
    spec: Spec<KeyedGcra<Digest>>,
    keys: PerClient,
}

impl GcraBuilder<'_> {
    /// Builds a limit per client key: each key gets the quota, strictly (one Redis call per
    /// decision), the `Local` fallback tracking at most `max_keys` clients in this instance.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build).
    pub fn build_keyed(self, max_keys: NonZeroUsize) -> Result<GlobalKeyedGcra, Error> {
        // `ktatf64`: a GCRA state as `tatf64` holds it, of one client.
        let keys = PerClient::new(self.prefix(), self.name(), "ktatf64")?;
        let spec = self.spec(|share| KeyedGcra::new(share, max_keys))?;
        Ok(GlobalKeyedGcra { spec, keys })
    }
}

impl GlobalKeyedGcra {
    /// Checks one request of the client `key`.
    ///
    /// # Cancel safety
    ///
    /// As [`GlobalGcra::check`](crate::GlobalGcra::check): dropping the future may or may not
    /// have counted the request; it never counts it twice.
    pub async fn check(&self, key: &[u8]) -> Decision {
        let verdict = self.decide(key, 1).await;
        verdict.map_or_else(|_| self.spec.fresh(0), |v| v.decision)
    }

    /// Checks `n` requests of the client `key` at once, saying who decided and at what
    /// Redis time: all are allowed or none.
    ///
    /// # Errors
    ///
    /// [`CheckError::InsufficientCapacity`] when `n` exceeds the burst.
    pub async fn decide(&self, key: &[u8], n: u32) -> Result<Verdict, CheckError> {
        let digest = digest(key);
        self.spec
            .strict(&self.keys.of(&digest), n, |local| local.check_n(&digest, n))
            .await
    }

    /// The quota each client gets, shared by every instance.
    pub fn quota(&self) -> Quota {
        self.spec.quota
    }

    /// The clients the `Local` fallback tracks in this instance now (at most `max_keys`).
    pub fn fallback_keys(&self) -> usize {
        self.spec.local.len()
    }
}
