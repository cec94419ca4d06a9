//! `GET /metrics`: every pool's gauges, outcomes and histograms in the Prometheus text
//! format.

use std::fmt::Write;

use crate::pool::{BUCKETS, Histogram, Outcome, Pool, TunnelEnd};
use crate::proxy::{Unrouted, UnroutedCounts};
use crate::state::State;

/// Renders the metrics of every pool in `state` and of those `removed` while still busy
/// (under their names, until their last request ends), and of the requests no pool took.
pub fn render(
    state: &State,
    removed: &[std::sync::Arc<Pool>],
    unrouted: &UnroutedCounts,
    admin_refused: &crate::admin::AdminRefusals,
) -> String {
    let mut out = String::with_capacity(4096);
    let _ = writeln!(
        out,
        "# HELP sluicegate_unrouted_total Requests the gate answered before any pool took them: no route (404), a bad Host, path or method (400), CONNECT or a transfer coding other than chunked (501).\n# TYPE sluicegate_unrouted_total counter"
    );
    for u in Unrouted::ALL {
        let _ = writeln!(
            out,
            "sluicegate_unrouted_total{{reason=\"{}\"}} {}",
            u.name(),
            unrouted.get(u)
        );
    }
    let _ = writeln!(
        out,
        "# HELP sluicegate_admin_refused_total Admin API calls turned away before an endpoint: without the token in force (401), or from a page of another origin (403).\n# TYPE sluicegate_admin_refused_total counter"
    );
    for (i, reason) in crate::admin::AdminRefusals::REASONS.iter().enumerate() {
        let _ = writeln!(
            out,
            "sluicegate_admin_refused_total{{reason=\"{reason}\"}} {}",
            admin_refused.get(i)
        );
    }
    buffers(&mut out, &state.buffering);
    if let Some(store) = &state.store {
        store_health(&mut out, store.health());
    }
    let pools: Vec<_> = state.pools.iter().chain(removed).cloned().collect();
    let pools = &pools;
    gauge(
        &mut out,
        "sluicegate_pool_limit",
        "Concurrency limit in force.",
        pools,
        |p| p.limit.limiter().max() as u64,
    );
    for (name, help, bound) in [
        (
            "sluicegate_pool_limit_min",
            "The least an adaptive pool's limit goes to (adaptive pools only).",
            (|b| b.min) as fn(crate::pool::Bounds) -> usize,
        ),
        (
            "sluicegate_pool_limit_max",
            "The most an adaptive pool's limit goes to (adaptive pools only).",
            |b| b.max,
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for p in pools {
            if let Some(b) = p.limit.bounds() {
                let _ = writeln!(out, "{name}{{pool=\"{}\"}} {}", p.name, bound(b));
            }
        }
    }
    let name = "sluicegate_pool_limit_cap";
    let _ = writeln!(
        out,
        "# HELP {name} The most an adaptive pool's limit may be now, below its max, and what set it (`source`: fast_failures, after_cap, capacity; pools with such a cap only).\n# TYPE {name} gauge"
    );
    for p in pools {
        if let Some(cap) = p.limit.explain().and_then(|e| e.cap) {
            let source = cap.source.as_str();
            let _ = writeln!(
                out,
                "{name}{{pool=\"{}\",source=\"{source}\"}} {}",
                p.name, cap.limit
            );
        }
    }
    gauge(
        &mut out,
        "sluicegate_pool_in_flight",
        "Requests holding a slot.",
        pools,
        |p| p.counts().in_flight as u64,
    );
    gauge(
        &mut out,
        "sluicegate_pool_queued",
        "Requests waiting for a slot.",
        pools,
        |p| p.counts().queued as u64,
    );
    gauge(
        &mut out,
        "sluicegate_pool_closed",
        "1 when the pool is closed.",
        pools,
        |p| u64::from(p.limit.limiter().is_closed()),
    );
    counters_by(
        &mut out,
        "sluicegate_requests_total",
        "Requests by how they ended: forwarded, or why the gate answered itself.",
        ("outcome", &Outcome::ALL, Outcome::name),
        pools,
        |p, o| p.stats.get(o),
    );
    let load = |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
    per_pool(
        &mut out,
        "counter",
        (
            "sluicegate_bypassed_total",
            "Requests that skipped the limits through a bypass rule.",
        ),
        pools,
        |p| load(&p.stats.bypassed),
    );
    per_pool(
        &mut out,
        "counter",
        (
            "sluicegate_upstream_broken_bodies_total",
            "Answers whose body the upstream broke off or stopped sending in the middle (counted forwarded too).",
        ),
        pools,
        |p| load(&p.stats.broken_bodies),
    );
    per_pool(
        &mut out,
        "counter",
        (
            "sluicegate_send_timeouts_total",
            "Client connections cut at send_timeout (the client took none of its answer for that long) while the pool's answer was sent (counted forwarded too).",
        ),
        pools,
        |p| load(&p.stats.send_timeouts),
    );
    gauge(
        &mut out,
        "sluicegate_tunnels_open",
        "Upgraded connections (WebSocket) open, each holding a slot.",
        pools,
        |p| p.stats.tunnels.open(),
    );
    per_pool(
        &mut out,
        "counter",
        (
            "sluicegate_tunnels_total",
            "Upgraded connections (WebSocket) opened: handshakes the upstream answered 101.",
        ),
        pools,
        |p| p.stats.tunnels.total(),
    );
    counters_by(
        &mut out,
        "sluicegate_tunnels_closed_total",
        "Tunnels closed, by reason (idle_timeout: no byte either way for the pool's tunnel_idle_timeout).",
        ("reason", &TunnelEnd::ALL, TunnelEnd::name),
        pools,
        |p, why| p.stats.tunnels.closed_for(why),
    );
    histogram(
        &mut out,
        "sluicegate_queue_wait_seconds",
        "Time requests that had to wait spent in the queue.",
        pools,
        |p| &p.stats.queue_wait,
    );
    histogram(
        &mut out,
        "sluicegate_upstream_latency_seconds",
        "Time from forwarding to the upstream's response head, less the waits for a client's request body.",
        pools,
        |p| &p.stats.upstream_latency,
    );
    out
}

fn gauge(
    out: &mut String,
    name: &str,
    help: &str,
    pools: &[std::sync::Arc<Pool>],
    value: impl Fn(&Pool) -> u64,
) {
    per_pool(out, "gauge", (name, help), pools, value);
}

/// A metric of type `kind` (`gauge`, `counter`) with a value per pool.
fn per_pool(
    out: &mut String,
    kind: &str,
    (name, help): (&str, &str),
    pools: &[std::sync::Arc<Pool>],
    value: impl Fn(&Pool) -> u64,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    for p in pools {
        let _ = writeln!(out, "{name}{{pool=\"{}\"}} {}", p.name, value(p));
    }
}

/// A counter per pool and per value of one more label: `(label, values, name of a value)`.
fn counters_by<T: Copy>(
    out: &mut String,
    name: &str,
    help: &str,
    (label, values, value_name): (&str, &[T], fn(T) -> &'static str),
    pools: &[std::sync::Arc<Pool>],
    count: impl Fn(&Pool, T) -> u64,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
    for p in pools {
        for &v in values {
            let _ = writeln!(
                out,
                "{name}{{pool=\"{}\",{label}=\"{}\"}} {}",
                p.name,
                value_name(v),
                count(p, v)
            );
        }
    }
}

fn histogram(
    out: &mut String,
    name: &str,
    help: &str,
    pools: &[std::sync::Arc<Pool>],
    h: impl Fn(&Pool) -> &Histogram,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
    for p in pools {
        let (counts, sum) = h(p).read();
        for (le, c) in BUCKETS.iter().zip(counts) {
            let _ = writeln!(out, "{name}_bucket{{pool=\"{}\",le=\"{le}\"}} {c}", p.name);
        }
        let total = counts[BUCKETS.len()];
        let _ = writeln!(
            out,
            "{name}_bucket{{pool=\"{}\",le=\"+Inf\"}} {total}",
            p.name
        );
        let _ = writeln!(out, "{name}_sum{{pool=\"{}\"}} {sum}", p.name);
        let _ = writeln!(out, "{name}_count{{pool=\"{}\"}} {total}", p.name);
    }
}

/// The store's health: up, and how often it was lost, found again, and decided for.
fn store_health(out: &mut String, h: sluicegate_redis::HealthSnapshot) {
    let lines = [
        (
            "sluicegate_store_up",
            "gauge",
            "1 when Redis answered the last call.",
            u64::from(h.up),
        ),
        (
            "sluicegate_store_outages_total",
            "counter",
            "Times Redis was lost (global pools fell back to their failure policy).",
            h.outages,
        ),
        (
            "sluicegate_store_recoveries_total",
            "counter",
            "Times Redis answered again after an outage.",
            h.recoveries,
        ),
        (
            "sluicegate_store_late_total",
            "counter",
            "Answers from Redis that came after the budget while it was up (one alone falls back for its decision only; two in a row mark Redis down).",
            h.late,
        ),
        (
            "sluicegate_store_fallbacks_total",
            "counter",
            "Decisions of global pools made by the failure policy instead of Redis.",
            h.fallbacks,
        ),
    ];
    for (name, kind, help, value) in lines {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        let _ = writeln!(out, "{name} {value}");
    }
}

/// The gate-wide read-ahead buffers: what they hold, and what reading ahead did.
fn buffers(out: &mut String, b: &crate::buffers::Buffering) {
    let bytes = b.buffers.held();
    let _ = writeln!(
        out,
        "# HELP sluicegate_buffered_bytes Bytes the read-ahead buffers hold now, request bodies and answers together (max_buffered_bytes caps it).\n# TYPE sluicegate_buffered_bytes gauge\nsluicegate_buffered_bytes {bytes}"
    );
    for (name, help, n) in [
        (
            "sluicegate_answers_freed_early_total",
            "Answers the upstream finished while part of them still waited in the gate for a slow client: their slot was freed before the client had them.",
            b.buffers.answers_freed_early(),
        ),
        (
            "sluicegate_answers_at_bound_total",
            "Answers the gate stopped reading ahead at response_buffer_size: their slot was held until the client had taken enough of them.",
            b.buffers.answers_at_bound(),
        ),
        (
            "sluicegate_buffers_at_cap_total",
            "Bodies, either way, not read ahead (or not further) because the read-ahead buffers held max_buffered_bytes.",
            b.buffers.at_cap(),
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {n}"
        );
    }
}
