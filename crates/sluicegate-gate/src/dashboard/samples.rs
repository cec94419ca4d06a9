//! Per-second samples of every pool: its gauges, its outcomes per second and its latency
//! quantiles over that second, kept for the last five minutes.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::gate::Gate;
use crate::pool::{BUCKETS, Outcome, Pool, Stats};

/// How often a sample is taken.
const INTERVAL: Duration = Duration::from_secs(1);
/// How many samples are kept (five minutes).
const KEEP: usize = 300;

/// One pool at one moment, and what it did over the second before.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The pool.
    pub pool: String,
    /// Its concurrency limit.
    pub limit: usize,
    /// Requests holding a slot.
    pub in_flight: usize,
    /// Requests waiting for one.
    pub queued: usize,
    /// Tunnels (WebSocket) open, each holding a slot (counted in `in_flight` too).
    pub tunnels: u64,
    /// Whether the pool is closed.
    pub closed: bool,
    /// Median upstream latency over the interval (`None` with no request).
    pub p50_ms: Option<f64>,
    /// 99th percentile upstream latency over the interval.
    pub p99_ms: Option<f64>,
    /// 99th percentile time in the queue, for requests that waited.
    pub wait_p99_ms: Option<f64>,
    /// Requests per second by outcome (`forwarded`, `queue_full`, …), nonzero ones only.
    pub rates: Vec<(&'static str, f64)>,
}

/// The counters a sample is a difference of.
#[derive(Clone, Debug)]
struct Totals {
    outcomes: [u64; Outcome::ALL.len()],
    latency: [u64; BUCKETS.len() + 1],
    wait: [u64; BUCKETS.len() + 1],
}

impl Totals {
    fn of(pool: &Pool) -> Totals {
        Totals {
            outcomes: Outcome::ALL.map(|o| pool.stats.get(o)),
            latency: pool.stats.upstream_latency.read().0,
            wait: pool.stats.queue_wait.read().0,
        }
    }
}

/// Takes a sample of every pool each second and keeps the last five minutes.
///
/// The sampling runs off the loop (`gate::off_the_loop`). Each second's samples are shared
/// (`Arc`): an answer takes the ones it wants under the lock and writes them out after it,
/// so that the next sample never waits for an answer being written (78 MB with 2000 pools,
/// 0.3 s).
#[derive(Debug, Default)]
pub struct Sampler {
    kept: Mutex<VecDeque<(u64, Arc<Vec<Sample>>)>>,
}

impl Sampler {
    /// Starts sampling `gate` on the current runtime until the gate is dropped.
    pub fn start(gate: Weak<Gate>) -> Arc<Sampler> {
        let sampler = Arc::new(Sampler::default());
        let kept = Arc::clone(&sampler);
        tokio::spawn(async move {
            let mut before = Before::default();
            let mut tick = tokio::time::interval(INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(gate) = gate.upgrade() else { return };
                // Off the loop, which with `workers = 1` is the proxy's: 2000 pools take ~3.5
                // million instructions a second (1-2 ms at once).
                let (after, samples) =
                    crate::gate::off_the_loop(move || take(&gate, &before)).await;
                before = after;
                kept.push(unix_ms(), samples);
            }
        });
        sampler
    }

    fn push(&self, t: u64, samples: Vec<Sample>) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == KEEP {
            kept.pop_front();
        }
        kept.push_back((t, Arc::new(samples)));
    }

    /// Holds the samples' lock: an answer being built then waits (tests).
    #[cfg(test)]
    pub(crate) fn hold(&self) -> std::sync::MutexGuard<'_, VecDeque<(u64, Arc<Vec<Sample>>)>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The samples taken after `t` (Unix milliseconds) as JSON:
    /// `{"samples": [{"t": …, "pools": {"name": {…}}}]}`.
    pub fn json_after(&self, t: u64) -> String {
        let wanted: Vec<(u64, Arc<Vec<Sample>>)> = self
            .kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(at, _)| *at > t)
            .cloned()
            .collect();
        let mut out = String::from("{\"samples\":[");
        for (i, (at, samples)) in wanted.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{{\"t\":{at},\"pools\":{{");
            for (j, s) in samples.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                write_sample(&mut out, s);
            }
            out.push_str("}}");
        }
        out.push_str("]}");
        out
    }
}

/// Each pool's totals at the last sample, by its counters ([`Pool::stats`], the address of
/// the `Arc`, which the entry holds so that no other pool's counters take it): a pool keeps
/// its counters when a change rebuilds it, when it is renamed (a new name on the removed
/// one's upstream) and when a reload adds back a pool it removed while its requests still
/// ran. Keyed by name, the last two came as new pools, everything they had counted since
/// the gate started as one second's rate (review127).
#[derive(Default)]
struct Before(HashMap<usize, (Arc<Stats>, Totals)>);

impl Before {
    fn get(&self, pool: &Pool) -> Option<&Totals> {
        self.0.get(&Self::key(pool)).map(|(_, t)| t)
    }

    fn insert(&mut self, pool: &Pool, totals: Totals) {
        self.0
            .insert(Self::key(pool), (Arc::clone(&pool.stats), totals));
    }

    fn key(pool: &Pool) -> usize {
        Arc::as_ptr(&pool.stats) as usize
    }
}

/// A sample of every pool of `gate`, from the totals `before` of the last, and the totals
/// for the next.
fn take(gate: &Gate, before: &Before) -> (Before, Vec<Sample>) {
    crate::admin::built::note();
    let state = gate.state();
    let mut after = Before(HashMap::with_capacity(state.pools.len()));
    let samples = state
        .pools
        .iter()
        .map(|pool| {
            let now = Totals::of(pool);
            let sample = sample(pool, before.get(pool), &now);
            after.insert(pool, now);
            sample
        })
        .collect();
    // The totals of the pools a change removed go on until they are let go (a new pool
    // may carry one on), and of no other pool.
    for pool in gate.every_pool() {
        after
            .0
            .entry(Before::key(&pool))
            .or_insert_with(|| (Arc::clone(&pool.stats), Totals::of(&pool)));
    }
    (after, samples)
}

fn write_sample(out: &mut String, s: &Sample) {
    let opt = |x: Option<f64>| x.map_or("null".to_owned(), |v| format!("{v:.3}"));
    let name = serde_json::Value::from(s.pool.as_str());
    let _ = write!(
        out,
        "{name}:{{\"limit\":{},\"in_flight\":{},\"queued\":{},\"tunnels\":{},\"closed\":{},\"p50_ms\":{},\"p99_ms\":{},\"wait_p99_ms\":{},\"rates\":{{",
        s.limit,
        s.in_flight,
        s.queued,
        s.tunnels,
        s.closed,
        opt(s.p50_ms),
        opt(s.p99_ms),
        opt(s.wait_p99_ms),
    );
    for (k, (reason, rate)) in s.rates.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{reason}\":{rate:.2}");
    }
    out.push_str("}}");
}

fn sample(pool: &Pool, before: Option<&Totals>, now: &Totals) -> Sample {
    let snap = pool.limit.limiter().snapshot();
    let counts = pool.counts();
    let secs = INTERVAL.as_secs_f64();
    let zero = Totals {
        outcomes: [0; Outcome::ALL.len()],
        latency: [0; BUCKETS.len() + 1],
        wait: [0; BUCKETS.len() + 1],
    };
    let before = before.unwrap_or(&zero);
    let rates = Outcome::ALL
        .iter()
        .zip(now.outcomes.iter().zip(&before.outcomes))
        .filter_map(|(o, (n, b))| {
            let d = n.saturating_sub(*b);
            (d > 0).then(|| (o.name(), d as f64 / secs))
        })
        .collect();
    Sample {
        pool: pool.name.clone(),
        limit: snap.limit,
        in_flight: counts.in_flight,
        queued: counts.queued,
        tunnels: pool.stats.tunnels.open(),
        closed: snap.closed,
        p50_ms: quantile(&now.latency, &before.latency, 0.50),
        p99_ms: quantile(&now.latency, &before.latency, 0.99),
        wait_p99_ms: quantile(&now.wait, &before.wait, 0.99),
        rates,
    }
}

/// The `q` quantile, in milliseconds, of the observations between two cumulative readings
/// of a [`Histogram`], interpolated within its bucket as Prometheus's `histogram_quantile`
/// does; `None` with no observation.
fn quantile(
    now: &[u64; BUCKETS.len() + 1],
    before: &[u64; BUCKETS.len() + 1],
    q: f64,
) -> Option<f64> {
    let count = |i: usize| now[i].saturating_sub(before[i]);
    let total = count(BUCKETS.len());
    if total == 0 {
        return None;
    }
    let rank = q * total as f64;
    let i = (0..=BUCKETS.len()).find(|&i| count(i) as f64 >= rank)?;
    if i == BUCKETS.len() {
        // Beyond the last bound: all that can be said is "more than it".
        return Some(BUCKETS[BUCKETS.len() - 1] * 1e3);
    }
    let (lower, below) = if i == 0 {
        (0.0, 0)
    } else {
        (BUCKETS[i - 1], count(i - 1))
    };
    let inside = (count(i) - below).max(1) as f64;
    let fraction = ((rank - below as f64) / inside).clamp(0.0, 1.0);
    Some((lower + (BUCKETS[i] - lower) * fraction) * 1e3)
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::Histogram;

    /// Each second's sample of every pool (3.5 million instructions with 2000 pools) is taken
    /// off the loop, which with `workers = 1` is the proxy's: a sample is kept, and none was
    /// taken on the runtime's thread (this test's).
    #[tokio::test(flavor = "current_thread")]
    async fn the_samples_are_taken_off_the_loop() {
        let text = "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9\"\n\
                    max_concurrency = 1\n[[routes]]\npool = \"api\"\n";
        let config = crate::config::parse(text, "t").unwrap();
        let gate = Arc::new(Gate::new(config, None).await.unwrap());
        let sampler = Sampler::start(Arc::downgrade(&gate));
        let taken = async {
            while sampler.kept.lock().unwrap().is_empty() {
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(60), taken)
            .await
            .expect("no sample in a minute");
        assert_eq!(
            crate::admin::built::here(),
            0,
            "taken on the runtime's thread"
        );
    }

    /// review127: a pool a reload removed while its requests still ran, added back by the
    /// next (it carries the removed one on, counters and all), was sampled as if it were new:
    /// everything it had counted since the gate started came as one second's rate (10 005
    /// forwarded a second for 5). The totals of a removed pool still running are kept (and
    /// so are a renamed pool's: they are the same counters under a new name).
    #[tokio::test]
    async fn a_pool_removed_and_added_back_goes_on_from_its_last_sample() {
        for (case, back) in [("added-back", "api"), ("renamed", "other")] {
            let dir = std::env::temp_dir()
                .join(format!("sluicegate-samples-{case}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("g.toml");
            let write = |names: &[&str]| {
                let mut text = String::new();
                for name in names {
                    // The placeholder's own upstream: it carries nothing on.
                    let port = if *name == "placeholder" { 9001 } else { 9000 };
                    text += &format!(
                        "[[pools]]\nname = \"{name}\"\nupstream = \"http://127.0.0.1:{port}\"\n\
                         max_concurrency = 1\n[[routes]]\npool = \"{name}\"\n"
                    );
                }
                std::fs::write(&path, text).unwrap();
            };
            write(&["api"]);
            let config = crate::config::read(&path).unwrap();
            let gate = Arc::new(Gate::new(config, Some(path.clone())).await.unwrap());
            let api = gate.state().pool("api").unwrap().clone();
            let running = api.limit.limiter().try_acquire_owned().unwrap();
            for _ in 0..10_000 {
                api.stats.count(Outcome::Forwarded);
            }
            let (before, _) = take(&gate, &Before::default());
            // Removed while a request runs on it: it is among the pools leaving.
            write(&["placeholder"]);
            gate.reload().await.unwrap();
            let (before, _) = take(&gate, &before);
            for _ in 0..5 {
                api.stats.count(Outcome::Forwarded);
            }
            write(&["placeholder", back]);
            gate.reload().await.unwrap();
            assert_eq!(
                gate.state().pool(back).unwrap().counts().in_flight,
                1,
                "{case}"
            );
            let (_, samples) = take(&gate, &before);
            let s = samples.iter().find(|s| s.pool == back).unwrap();
            assert_eq!(s.rates, vec![("forwarded", 5.0)], "{case}");
            drop(running);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    fn reading(h: &Histogram) -> [u64; BUCKETS.len() + 1] {
        h.read().0
    }

    #[test]
    fn quantile_of_an_interval_ignores_what_came_before() {
        let h = Histogram::default();
        for _ in 0..100 {
            h.observe(Duration::from_secs(20)); // an old, slow minute
        }
        let before = reading(&h);
        for _ in 0..99 {
            h.observe(Duration::from_millis(40)); // in the 25-50 ms bucket
        }
        h.observe(Duration::from_millis(400)); // in the 250-500 ms bucket
        let now = reading(&h);
        let p50 = quantile(&now, &before, 0.5).unwrap();
        assert!((25.0..=50.0).contains(&p50), "p50 {p50}");
        let p99 = quantile(&now, &before, 0.99).unwrap();
        assert!((25.0..=50.0).contains(&p99), "p99 {p99}");
        let p100 = quantile(&now, &before, 1.0).unwrap();
        assert!((250.0..=500.0).contains(&p100), "max {p100}");
    }

    #[test]
    fn quantile_with_no_observation_is_none() {
        let h = Histogram::default();
        h.observe(Duration::from_millis(3));
        let r = reading(&h);
        assert_eq!(quantile(&r, &r, 0.5), None);
    }

    #[test]
    fn quantile_beyond_the_last_bucket_says_the_last_bound() {
        let h = Histogram::default();
        let before = reading(&h);
        h.observe(Duration::from_secs(100));
        let p = quantile(&reading(&h), &before, 0.99).unwrap();
        assert_eq!(p, BUCKETS[BUCKETS.len() - 1] * 1e3);
    }

    #[test]
    fn samples_json_lists_only_newer_samples() {
        let s = Sampler::default();
        let one = Sample {
            pool: "a \"b\"".into(),
            limit: 4,
            in_flight: 2,
            queued: 1,
            tunnels: 1,
            closed: false,
            p50_ms: Some(1.5),
            p99_ms: None,
            wait_p99_ms: None,
            rates: vec![("forwarded", 3.0)],
        };
        s.push(1000, vec![one.clone()]);
        s.push(2000, vec![one]);
        let all: serde_json::Value = serde_json::from_str(&s.json_after(0)).unwrap();
        assert_eq!(all["samples"].as_array().unwrap().len(), 2);
        let newer: serde_json::Value = serde_json::from_str(&s.json_after(1000)).unwrap();
        let samples = newer["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 1);
        assert_eq!(samples[0]["t"], 2000);
        let pool = &samples[0]["pools"]["a \"b\""];
        assert_eq!(pool["limit"], 4);
        assert_eq!(pool["tunnels"], 1);
        assert_eq!(pool["p99_ms"], serde_json::Value::Null);
        assert_eq!(pool["rates"]["forwarded"], 3.0);
    }
}
