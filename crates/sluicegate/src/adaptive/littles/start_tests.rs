//! Tests of the start: a pool driven from empty by an open stream of arrivals, so the permits
//! out when each request starts ramp up from one as they do in front of a real resource.

use super::*;

/// An open stream of arrivals (one every `gap_us`) queued in front of the limit, served by
/// `workers` first come, first served, each request taking an exponential time (a fixed
/// xorshift stream). Times in µs.
struct OpenPool {
    /// When each worker is next free.
    free: std::collections::BinaryHeap<std::cmp::Reverse<u64>>,
    /// Requests out: (end, start, permits out when it started).
    out: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, usize)>>,
    waiting: u64,
    next_arrival: u64,
    gap_us: u64,
    mean_us: f64,
    rng: u64,
    t: u64,
    /// Answers later than this (µs) are reported dropped, as a client past its deadline.
    deadline_us: u64,
}

impl OpenPool {
    fn new(workers: usize, mean_ms: u64, per_second: u64, seed: u64) -> Self {
        OpenPool {
            free: (0..workers).map(|_| std::cmp::Reverse(0)).collect(),
            out: Default::default(),
            waiting: 0,
            next_arrival: 0,
            gap_us: 1_000_000 / per_second,
            mean_us: mean_ms as f64 * 1000.0,
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            t: 0,
            deadline_us: u64::MAX,
        }
    }

    fn service(&mut self) -> u64 {
        super::tests::exponential_us(&mut self.rng, self.mean_us) + 1
    }

    /// Runs until `to_ms`, calling `each` with the time (µs) after every answer.
    fn run(&mut self, l: &mut LittlesLaw, to_ms: u64, mut each: impl FnMut(u64, &LittlesLaw)) {
        while self.t < to_ms * 1000 {
            while self.waiting > 0 && self.out.len() < l.limit() {
                self.waiting -= 1;
                let std::cmp::Reverse(free) = self.free.pop().unwrap();
                let end = free.max(self.t) + self.service();
                self.free.push(std::cmp::Reverse(end));
                let in_flight = self.out.len() + 1;
                self.out.push(std::cmp::Reverse((end, self.t, in_flight)));
            }
            let answer = self.out.peek().map(|r| r.0.0);
            if answer.is_none_or(|end| self.next_arrival <= end) {
                self.t = self.next_arrival;
                self.next_arrival += self.gap_us;
                self.waiting += 1;
                continue;
            }
            let std::cmp::Reverse((end, start, in_flight)) = self.out.pop().unwrap();
            self.t = end;
            l.on_sample(&Sample {
                start: Nanos::new(start * 1000),
                latency: Duration::from_micros(end - start),
                in_flight,
                outcome: if end - start > self.deadline_us {
                    Outcome::Dropped
                } else {
                    Outcome::Success
                },
            });
            each(self.t, l);
        }
    }
}

/// Pins the start in front of a pool smaller than the starting limit (`few_slow_workers_3x`:
/// 5 workers of 500 ms behind a starting limit of 20, 0.74 of capacity): every RT after the
/// first few was queued, so the floor and min RT taken from the buckets were queued too, the
/// queue estimate read nothing, and the limit sat at 20 for ~8 s before noise showed a queue.
/// The requests that found every permit taken take ~4× longer than the first ones, which
/// started with few out: by Little's law about 5 of the 20 permits are in service, and the
/// limit drops there (plus the target queue) within a few round trips, with min RT and the
/// floor taken from the first requests.
#[test]
fn littles_start_past_the_knee_drops_to_the_pool_within_a_few_round_trips() {
    for seed in 1..=5 {
        let l = five_slow_workers_for_6s(seed, u64::MAX);
        // Unqueued: 0.5 s, or up to ~0.7 s with the first group's requests that waited behind
        // the 5 workers; queued at 20 permits: 2 s.
        let rt = l.min_rt().unwrap().as_secs_f64();
        assert!(rt < 1.2, "seed {seed}: min RT {rt} s, a queued one");
    }
}

/// Pins the same start when the queued answers come after the client's deadline and are
/// reported dropped (`few_slow_workers_3x`, seed 5: the limit sat at 20 for 34 s). The test
/// took successes only and was judged when a bucket closed; with most queued answers dropped,
/// the buckets' rate fell to a few answers and one bucket lasted 26 s. Dropped answers now
/// count in both groups alike, and the test is judged on every answer.
#[test]
fn littles_start_past_the_knee_counts_answers_past_the_deadline() {
    for seed in 1..=5 {
        five_slow_workers_for_6s(seed, 1_500_000);
    }
}

/// 5 workers of 500 ms under 30 arrivals a second (3× their capacity) for 6 s, answers after
/// `deadline_us` reported dropped: the limit must be down to at most 10 by then.
fn five_slow_workers_for_6s(seed: u64, deadline_us: u64) -> LittlesLaw {
    let mut l = LittlesLaw::new(LittlesLawConfig::default());
    let mut pool = OpenPool::new(5, 500, 30, seed);
    pool.deadline_us = deadline_us;
    pool.run(&mut l, 6_000, |_, _| {});
    let limit = l.limit();
    assert!(
        limit <= 10,
        "seed {seed}: limit {limit} at 6 s in front of 5 workers"
    );
    l
}

/// The same test in front of a pool larger than the starting limit: both groups are served at
/// once, their RTs have one distribution, and the test never fires — the limit never drops
/// below the starting one on the way to the knee.
#[test]
fn littles_start_below_the_knee_is_not_taken_for_one_past_it() {
    for seed in 1..=5 {
        let mut l = LittlesLaw::new(LittlesLawConfig::default());
        let mut pool = OpenPool::new(40, 50, 2_000, seed);
        let mut lowest = usize::MAX;
        pool.run(&mut l, 3_000, |_, l| lowest = lowest.min(l.limit()));
        assert_eq!(lowest, 20, "seed {seed}");
        assert!(!l.measured_at_start, "seed {seed}");
    }
}

/// Pins the start of a large pool under a load below its capacity (`steady_0.8x_200w`: 200
/// workers of 20 ms, 8000 requests a second, 160 out on average): the buckets' slow start
/// held the starting limit of 20 for the warm-up (four buckets, 0.4 s) and grew ×1.5 a bucket
/// after, past the demand at ~0.9 s, and the limiter turned away 2.6 % of the requests. The
/// start now doubles the limit a round trip, on answers: when the requests that found every
/// permit of the limit taken answer as fast as the first ones.
#[test]
fn littles_start_doubles_a_round_trip_on_a_large_pool() {
    for seed in 1..=5 {
        let mut l = LittlesLaw::new(LittlesLawConfig::default());
        let mut pool = OpenPool::new(200, 20, 8_000, seed);
        let mut reached = None;
        pool.run(&mut l, 1_000, |t, l| {
            if l.limit() >= 160 && reached.is_none() {
                reached = Some(t);
            }
        });
        let at = reached.map(|t| t / 1000);
        assert!(
            at.is_some_and(|ms| ms <= 250),
            "seed {seed}: the limit reached the demand of 160 at {at:?} ms"
        );
        assert!(l.limit() >= 160, "seed {seed}: limit {} at 1 s", l.limit());
    }
}

/// The rounds overshoot the knee by up to ×2 (the round that shows the queue is the one past
/// it) and drain at once by Little's law on the round against the first requests: in front
/// of 50 workers (no contention in this pool) the limit ends near them, not at the overshoot
/// and not at half of them.
#[test]
fn littles_start_drains_the_overshoot_of_its_rounds_to_the_pool() {
    for seed in 1..=5 {
        let mut l = LittlesLaw::new(LittlesLawConfig::default());
        let mut pool = OpenPool::new(50, 50, 2_000, seed);
        let mut highest = 0;
        pool.run(&mut l, 2_000, |_, l| highest = highest.max(l.limit()));
        assert!(
            highest >= 80,
            "seed {seed}: the rounds stopped at {highest}"
        );
        assert!(l.knee_found, "seed {seed}: no knee after 2 s");
        let limit = l.limit();
        assert!(
            (40..=70).contains(&limit),
            "seed {seed}: limit {limit} at 2 s in front of 50 workers"
        );
    }
}

/// Pins a false queue past the first round (`huge_pool_1.5x`, seeds 2–5: a round of 1280 in
/// front of 2000 workers drained to ~1100). A round is judged clear by its first answers, the
/// fastest, and they join what later rounds are compared with, which then reads low: a later
/// round with nothing queued stood three standard errors above it. A queue shifts every
/// answer at the top by its wait, so most come in over the first group's median; a round
/// whose answers come in under it is not queued, whatever the means say.
#[test]
fn littles_start_round_faster_than_the_first_median_is_not_queued() {
    let ms = |v: u64| Duration::from_millis(v);
    for (rt, queued) in [(40, false), (120, true)] {
        let mut t = StartTest::new(20);
        for _ in 0..10 {
            t.add(ms(50), 5, true); // the first group: median 50 ms
        }
        for _ in 0..10 {
            t.add(ms(5), 20, true); // the first round's first answers, the fastest
        }
        assert_eq!(t.verdict(10, 3.0, 2.0), Some(Round::Clear));
        t.next_round(40);
        for _ in 0..40 {
            t.add(ms(rt), 40, true);
        }
        // Against the first group and the first round's answers (mean log RT of 50 and 5 ms),
        // both rounds stand three standard errors above.
        let verdict = t.verdict(10, 3.0, 2.0);
        if queued {
            assert!(
                matches!(verdict, Some(Round::Queued(_))),
                "{rt} ms: {verdict:?}"
            );
        } else {
            assert_eq!(verdict, Some(Round::Clear), "{rt} ms");
        }
    }
}

/// Pins a drain below the last round judged clear (`bursty`, seed 5: 80 permits in front of
/// 50 workers drained to 26, and the knee held there through the quiet stretches). Little's
/// law at the overshoot reads fewer permits in service than the pool holds wherever waiting
/// slows the workers; the knee is above the last clear round.
#[test]
fn littles_start_drains_no_lower_than_the_last_clear_round() {
    let mut l = LittlesLaw::new(LittlesLawConfig::default());
    let at = |l: &mut LittlesLaw, start_us: u64, rt_ms: u64, in_flight: usize| {
        l.on_sample(&Sample::success(
            Nanos::new(start_us * 1000),
            Duration::from_millis(rt_ms),
            in_flight,
        ))
    };
    for i in 0..10 {
        at(&mut l, i, 50, 1 + i as usize); // the first group
    }
    for i in 0..10 {
        at(&mut l, 100 + i, 50, 20); // the first round, as fast: clear
    }
    assert_eq!(l.limit(), 40);
    for i in 0..20 {
        // The second round waited: 300 ms against 50. Little's law: 40 × 50 ÷ 300 ≈ 7 in
        // service.
        at(&mut l, 52_000 + i, 300, 40);
    }
    assert!(l.knee_found);
    assert_eq!(l.limit(), 20, "the last clear round");
}
