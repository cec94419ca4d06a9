//! A pool's rate limits: one for the whole pool and one per client, both the library's GCRA.

use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;

use http::{HeaderValue, Request};
use sluicegate::http::RatePolicy;
use sluicegate::keyed::KeyedGcra;
use sluicegate::middleware::rate::{HeaderKey, KeyExtractor, RateCheck, group_ip};
use sluicegate::rate::{Decision, Gcra};

use crate::config::{KeySource, PerKeyRate};

/// A rate per client, keyed by address or by a header.
#[derive(Clone, Debug)]
pub enum PerKey {
    /// Per client address (IPv6 by /64).
    Ip(Arc<KeyedGcra<IpAddr>>),
    /// Per value of a header; requests without it share one empty key.
    Header(Arc<KeyedGcra<HeaderValue>>, HeaderKey),
}

impl PerKey {
    /// The per-key limit `cfg` asks for, reusing `old`'s memory of clients when the key is
    /// the same; then also the quota to give it ([`set_quota`](Self::set_quota)) when the
    /// change is put in force (`old` is left as it is until then).
    pub fn build(
        cfg: &PerKeyRate,
        old: Option<&PerKey>,
    ) -> (PerKey, Option<sluicegate::rate::Quota>) {
        let quota = cfg.rate.quota(cfg.burst);
        let max = NonZeroUsize::new(*cfg.max_keys.get_ref()).unwrap_or(NonZeroUsize::MIN);
        match (&cfg.key, old) {
            (KeySource::ClientIp, Some(PerKey::Ip(k))) if k.max_keys() == max.get() => {
                (PerKey::Ip(k.clone()), Some(quota))
            }
            (KeySource::Header(h), Some(PerKey::Header(k, HeaderKey(old_h))))
                if h == old_h && k.max_keys() == max.get() =>
            {
                (PerKey::Header(k.clone(), HeaderKey(h.clone())), Some(quota))
            }
            (KeySource::ClientIp, _) => (PerKey::Ip(Arc::new(KeyedGcra::new(quota, max))), None),
            (KeySource::Header(h), _) => (
                PerKey::Header(Arc::new(KeyedGcra::new(quota, max)), HeaderKey(h.clone())),
                None,
            ),
        }
    }

    /// Gives every client the quota `quota`.
    pub fn set_quota(&self, quota: sluicegate::rate::Quota) {
        match self {
            PerKey::Ip(k) => k.set_quota(quota),
            PerKey::Header(k, _) => k.set_quota(quota),
        }
    }

    /// The clients it remembers now (at most `max_keys`).
    pub fn keys(&self) -> usize {
        match self {
            PerKey::Ip(k) => k.len(),
            PerKey::Header(k, _) => k.len(),
        }
    }

    /// Decides on `req` from the client at `client` (the peer, or the address trusted
    /// proxies name: [`ClientAddress`](crate::client_address::ClientAddress)).
    pub fn check<B>(&self, req: &Request<B>, client: IpAddr) -> Decision {
        match self {
            PerKey::Ip(k) => k.check(&group_ip(client)),
            PerKey::Header(k, h) => match h.extract(req) {
                Some(v) => k.check(&v),
                None => k.check(&HeaderValue::from_static("")),
            },
        }
    }
}

impl PerKey {
    /// The per-key quota, for `RateLimit-Policy`.
    pub fn policy(&self) -> Option<RatePolicy> {
        match self {
            PerKey::Ip(k) => RateCheck::<IpAddr>::policy(k),
            PerKey::Header(k, _) => RateCheck::<HeaderValue>::policy(k),
        }
    }
}

/// The pool-wide rate, reusing `old` (its state) when there was one; then also the quota to
/// give it when the change is put in force, if it changes (`old` is left as it is until
/// then).
pub(super) fn global(
    quota: sluicegate::rate::Quota,
    old: Option<&Arc<Gcra>>,
) -> (Arc<Gcra>, Option<sluicegate::rate::Quota>) {
    match old {
        Some(g) => (g.clone(), (g.quota() != quota).then_some(quota)),
        None => (Arc::new(Gcra::new(quota)), None),
    }
}

/// Asks the pool-wide limit, as the rate layer would.
pub fn check_global(g: &Gcra) -> Decision {
    RateCheck::check(g, &())
}

/// The pool-wide quota, for `RateLimit-Policy`.
pub fn global_policy(g: &Gcra) -> Option<RatePolicy> {
    RateCheck::<()>::policy(g)
}
