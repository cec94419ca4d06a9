//! Tests of regime changes: a pool of workers behind a delay outside them (a network hop), with
//! demand that always fills the limit, whose delay comes and goes (`network_delay_spike`); the
//! pool is the one of `tests.rs`.

use super::tests::Pool;
use super::*;

/// 50 workers of 50 ms (1000 answers a second) until 20 s, then 200 ms outside them until 30 s
/// (the knee 50 → 250 permits), then none again, until `to_ms`; `each` sees every answer from
/// 20 s on.
fn delay_spike(seed: u64, to_ms: u64, each: impl FnMut(u64, &LittlesLaw)) -> LittlesLaw {
    let (mut l, mut pool) = warmed(seed, 0.0);
    // `restarted` is never cleared: set before the change, it would pass the tests below
    // whatever the change did (review 17).
    assert!(!l.restarted, "seed {seed}: restarted before the delay came");
    pool.delay_us = 200_000;
    let mut each = each;
    pool.run_timed(&mut l, 30_000.min(to_ms), &mut each);
    pool.delay_us = 0;
    if to_ms > 30_000 {
        pool.run_timed(&mut l, to_ms, &mut each);
    }
    l
}

/// 50 workers of 50 ms (1000 answers a second) that slow with `contention`, with a 1 µs floor
/// (the harness these tests were measured on drew every service time so), run from 0 to 20 s:
/// the algorithm and the pool, for a change to come.
fn warmed(seed: u64, contention: f64) -> (LittlesLaw, Pool) {
    warmed_from(seed, contention, 0)
}

/// [`warmed`] on a clock that reads `offset_ns` at the pool's 0.
fn warmed_from(seed: u64, contention: f64, offset_ns: u64) -> (LittlesLaw, Pool) {
    warmed_counted_from(seed, contention, offset_ns, false)
}

/// [`warmed_from`], each answer giving the permits out at its start from the pool's start
/// where `counted`, as a limiter's do.
fn warmed_counted_from(
    seed: u64,
    contention: f64,
    offset_ns: u64,
    counted: bool,
) -> (LittlesLaw, Pool) {
    let mut l = LittlesLaw::new(LittlesLawConfig::default());
    let mut pool = Pool::new(50, 0, 50, seed);
    pool.floor_us = 1;
    pool.contention = contention;
    pool.offset_ns = offset_ns;
    pool.counted = counted;
    pool.run_timed(&mut l, 20_000, |_, _| {});
    (l, pool)
}

/// Seeds the change tests that fall on a probe run: where that probe falls, and so what it
/// reads, differs with the state before it, so a few seeds of any version read it late.
const SEEDS: u64 = 40;
/// The seeds of [`SEEDS`] that may miss: a quarter.
pub(super) const MISSES: usize = 10;

/// 50 workers of 50 ms that slow with contention (0.5), run from 0 until the first probe after
/// 20 s starts: the algorithm, the pool and that probe's start (ms), for a change to fall on.
fn until_the_first_probe_after_20_s(seed: u64) -> (LittlesLaw, Pool, u64) {
    let (mut l, mut pool) = warmed(seed, 0.5);
    let mut t = 20_000;
    while !l.probing() {
        t += 1;
        pool.run_timed(&mut l, t, |_, _| {});
    }
    (l, pool, t)
}

/// Pins the probe's early stop on a slower regime (`network_delay_spike`: the probe after the
/// delay came held its whole span, 2.1 s at 12 permits, and measured as long again: the slow
/// start restarted 5 s after the change; here 1.8–3.5 s after it, seeds 1–5, now 1.8–3.0 s). A probe that drained and reads a mean RT more than
/// `probe_trigger` × the min RT has read a new regime — censoring (the short answers first)
/// only lowers that mean — and stops as soon as its low RT reads as precisely as a bucket's.
#[test]
fn littles_probe_stops_early_on_a_regime_much_slower() {
    for seed in 1..=5 {
        let mut restarted_at = None;
        delay_spike(seed, 30_000, |t, l| {
            if l.restarted && restarted_at.is_none() {
                restarted_at = Some(t);
            }
        });
        let at = restarted_at.unwrap_or_else(|| panic!("seed {seed}: no new regime"));
        assert!(
            at < 23_200_000,
            "seed {seed}: the new regime read {} ms after the change",
            (at - 20_000_000) / 1000
        );
    }
}

/// Pins the end of a delay (`network_delay_spike` after 30 s: 120–160 permits for 50 workers to
/// the end of the run). The floor was the delay's (~200 ms), and the low RTs that fell to a few
/// ms read the queue the old limit left inside the workers as none: 239–279 permits from 35 s
/// (seeds 1–5). Low RTs well below the floor (by `probe_trigger` and by three standard errors)
/// re-base the floor, and the queue they then read is drained: 80–90 permits (the new floor is
/// itself read off queued buckets, 19–34 ms; the next probe that drains takes it lower).
#[test]
fn littles_low_rts_below_the_floor_end_the_delay_regime() {
    for seed in 1..=5 {
        let mut limits = Vec::new();
        let l = delay_spike(seed, 40_000, |t, l| {
            if t >= 35_000_000 {
                limits.push(l.limit());
            }
        });
        let mean = limits.iter().sum::<usize>() as f64 / limits.len().max(1) as f64;
        assert!(
            mean < 100.0,
            "seed {seed}: a mean limit of {mean:.0} for 50 workers from 35 s (floor {:?})",
            l.low_floor
        );
    }
}

/// Pins a probe that straddles a capacity drop (`capacity_halves` seed 8: a periodic probe
/// fell on the halving at a depth of 42 for the 25 workers left, could not drain them, read a
/// queued floor of 38.7 ms and a mean RT of 101 ms, and took them for a new regime: the slow
/// start restarted on that floor and held 36–48 permits for 25 workers for 11 s). Here the
/// workers (slowed as the simulator's are by those waiting) halve the moment the first probe
/// after 20 s starts. Its slower reading's low RT rose far more (over the floor) than its mean
/// RT (over min RT): a wait added to each request, not a slower service, and the probe started
/// on the old regime's RTs, so a probe at half the depth checks it and finds the old regime.
/// The floor from 1 s to 8 s after the drop (the service's 5th percentile is 2.6 ms) was
/// 3.4–19.0 ms in seeds 1–10, 9.9 ms on average; now 2.3–3.5 ms, and 7.8 ms in seed 8 (its
/// first probe read a regime 1.47× slower in the mean and 1.37× in the low RT, early answers
/// of the old regime; the next probe, at 28 permits for 25 workers, read a queued floor).
/// Judged over 40 seeds (a few read 10–16 ms, as the probe that falls on the change differs
/// with the state before it: 7 and 8 of 40 for the last two rounds' code, 6.4 and 6.9 ms on
/// average; seeds 1–10 alone passed one and failed the other by chance).
#[test]
fn littles_probe_on_a_capacity_drop_is_checked_at_half_the_depth() {
    let mut sum = Duration::ZERO;
    let mut high = Vec::new();
    for seed in 1..=SEEDS {
        let (mut l, mut pool, t) = until_the_first_probe_after_20_s(seed);
        pool.set_workers(25);
        let mut top = Duration::ZERO;
        pool.run_timed(&mut l, t + 8_000, |at, l| {
            if at >= (t + 1_000) * 1000 {
                top = top.max(l.low_floor.unwrap_or_default());
            }
        });
        if top >= Duration::from_millis(10) {
            high.push((seed, t, top));
        }
        sum += top;
    }
    assert!(
        high.len() <= MISSES,
        "floors of 10 ms or more after the workers halved (seed, ms, floor): {high:?}"
    );
    let mean = sum / u32::try_from(SEEDS).unwrap();
    assert!(mean < Duration::from_millis(8), "mean floor {mean:?}");
}

/// Pins a drain that drained a delay (`network_delay_spike` seed 7: a periodic probe fell on
/// the delay's onset and measured nothing, and the standing-queue drain, whose pass-rate test a
/// delay passes, halved the limit 56 → 28 → 14 → 7 before the next probe). Here 200 ms come
/// outside 50 workers the moment the first probe after 20 s starts. A drain after which the
/// low RT reads what it read before it (by 0.8×) drained no wait: the next bucket that would
/// drain again probes instead, and the probe reads the delay's regime as it is. In the 5 s
/// after, the slow start restarts and the limit outside probes stays at 15 or more (before: no
/// restart in any of seeds 1–10, and down to 7 in seven of them, 13–14 in the others; now
/// 17–21). Judged over 40 seeds: in 5 of them (with the last two rounds' code alike) the
/// probe that falls on the onset differs and the restart comes later.
#[test]
fn littles_a_drain_that_left_the_low_rt_where_it_was_probes_instead_of_draining_again() {
    let mut missed = Vec::new();
    for seed in 1..=SEEDS {
        let (mut l, mut pool, t) = until_the_first_probe_after_20_s(seed);
        pool.delay_us = 200_000;
        let mut least = usize::MAX;
        pool.run_timed(&mut l, t + 5_000, |_, l| {
            if !l.probing() {
                least = least.min(l.limit());
            }
        });
        if !(l.restarted && least >= 15) {
            missed.push((seed, t, l.restarted, least));
        }
    }
    assert!(
        missed.len() <= MISSES,
        "no restart or the limit below 15 in 5 s (seed, delay at ms, restarted, least): {missed:?}"
    );
}

/// Pins the climb back after workers return (`capacity_fifth` after 50 s: 10 workers back to 50,
/// the limit from ~12 at × 1.1 a bucket, stalled for seconds at a third of the workers by the
/// queue estimate's noise, 1300–2200 answers lost in the 3 s after the return, seeds 1–5). Here
/// 50 workers that slow with contention drop to 10 at 20 s and come back at 35 s. More answers
/// than the 10 workers gave, at the RT they had, say the workers came back, and the slow start
/// finds the knee again, up to what the 50 served. The limit reaches 45 in 0.7–2.4 s after the
/// return, 1.5 s on average (seeds 1–20); before, in 1.5–4.1 s, 2.5 s on average, and not within
/// 5 s in one seed.
#[test]
fn littles_finds_workers_that_came_back_with_a_slow_start() {
    let mut sum = 0;
    for seed in 1..=20 {
        let (mut l, mut pool) = warmed(seed, 0.5);
        pool.set_workers(10);
        pool.run_timed(&mut l, 35_000, |_, _| {});
        pool.set_workers(50);
        let mut reached = None;
        pool.run_timed(&mut l, 40_000, |t, l| {
            if reached.is_none() && l.limit() >= 45 {
                reached = Some(t);
            }
        });
        let at = reached.unwrap_or_else(|| panic!("seed {seed}: not at 45 within 5 s"));
        let after = (at - 35_000_000) / 1000;
        assert!(
            after < 3_500,
            "seed {seed}: at 45 permits {after} ms after the return"
        );
        sum += after;
    }
    assert!(sum / 20 < 2_000, "{} ms on average", sum / 20);
}

/// Pins the probe that goes deeper at once after a delay went away (`network_delay_spike`
/// after 30 s: 257 permits for 50 workers, whose queue the low RTs read as 20–60 requests
/// against the delay's floor of 205 ms; three probes in a row, each back to a limit above the
/// knee before the floor was re-based, 8 s at two thirds of capacity). Here 50 workers that
/// slow with contention (0.5) have 200 ms outside them from 20 s to 40 s, long enough for the
/// limit to grow to 95–180 in this harness. A probe that admits more than the buckets before
/// it passed stands above the knee, and where its low RT reads a queue (against no floor once
/// the floor is stale) the next probe goes below it at once. From the delay's end, the floor
/// under 10 ms with the limit at 60 or less: 1.8–4.0 s in seeds 1–10; before, 1.8–5.1 s in five
/// of them and not within 6 s in the other five (floors of 10–69 ms, limits of 64–106 from 2 s
/// to 6 s after). (Those numbers are of a pool that counted the requests in the delay as
/// waiting for a worker, slowing the workers ~3× at 250 permits; counted as the simulator does,
/// the limit grows to 180–270 and, with the restart capped by the capacity before the delay,
/// the probes alone re-based the floor 3.7–6.4 s after the end in seven seeds of ten and not
/// within 8 s in three; the delay's end is now read off its first fast answers, within 0.5 s in
/// seeds 1–40, `littles_the_delay_s_end_brings_the_regime_before_it_back`.)
#[test]
fn littles_a_probe_above_the_knee_after_a_delay_goes_deeper_at_once() {
    let mut late = Vec::new();
    for seed in 1..=10 {
        let (mut l, mut pool) = warmed(seed, 0.5);
        pool.delay_us = 200_000;
        pool.run_timed(&mut l, 40_000, |_, _| {});
        pool.delay_us = 0;
        let mut rebased = None;
        pool.run_timed(&mut l, 46_000, |t, l| {
            let floor = l.low_floor.is_some_and(|f| f < Duration::from_millis(10));
            if rebased.is_none() && floor && l.limit() <= 60 {
                rebased = Some((t - 40_000_000) / 1000);
            }
        });
        if rebased.is_none_or(|ms| ms > 4_500) {
            late.push((seed, rebased, l.low_floor));
        }
    }
    assert!(
        late.is_empty(),
        "not re-based within 4.5 s of the delay's end (seed, ms, floor): {late:?}"
    );
}

/// Pins the restart after a delay came (`network_delay_spike` at 20 s: the probe read the
/// delay's regime within 2–3 s, but the restarted slow start was capped at the old knee, or
/// at the capacity the delay itself left while it read as a queue, 27 permits in seed 1 for
/// the 250 it needs, and the steering grew × 1.1 a bucket from there, 6 s). Here 50 workers of
/// 50 ms (no contention) have 200 ms outside them from 20 s on: the knee goes from 50 to 250 permits. The capacity
/// before the change at the new RT caps the restart, its steps are bounded by the workers
/// left idle, and the cap is not passed. The limit reaches 200 in 3.3–5.8 s after the onset
/// and holds 231–267 on average from 25 s to 30 s (seeds 1–10); before, 6.7–9.8 s in seven
/// seeds and not within 10 s in three, 67–230 on average. With the cap's RT from the low RT's
/// rise, the probe that reads the delay stopped at once, the steps paced by the idle workers
/// (not × 1.5) and taken without a queue estimate: 1.9–3.3 s, 225–259 on average.
#[test]
fn littles_a_delay_outside_restarts_to_the_knee_the_old_capacity_gives() {
    let mut missed = Vec::new();
    for seed in 1..=10 {
        let (mut l, mut pool) = warmed(seed, 0.0);
        pool.delay_us = 200_000;
        let mut reached = None;
        let (mut sum, mut n, mut most) = (0, 0, 0);
        pool.run_timed(&mut l, 30_000, |t, l| {
            if reached.is_none() && l.limit() >= 200 {
                reached = Some((t - 20_000_000) / 1000);
            }
            if t >= 25_000_000 {
                sum += l.limit();
                n += 1;
                most = most.max(l.limit());
            }
        });
        let mean = sum / n.max(1);
        if reached.is_none_or(|ms| ms > 3_500) || mean < 220 || most > 300 {
            missed.push((seed, reached, mean, most));
        }
    }
    assert!(
        missed.is_empty(),
        "not at 200 permits within 3.5 s of the delay, or not 220-300 from 25 s to 30 s \
         (seed, ms, mean, most): {missed:?}"
    );
}

/// Pins the delay's end from the delay's knee (`network_delay_spike` at 30 s: 190–270 permits
/// for 50 workers when the 200 ms outside them goes away). The answers that come back without
/// the delay wait behind the workers' queue, and the delay's permits come back all at once and
/// fill it: the low RTs fall under the delay's floor for a bucket or two (174–189 ms against
/// 202 ms) and then read 320–670 ms, a queue like the delay's own. The probes that followed
/// re-based the floor 2.2–6.4 s after the end, and not within 8 s in one seed of ten. An answer
/// shorter than every answer through the delay, by the old floor, is one the delay no longer
/// holds: the regime before it comes back whole (its min RT and floor, its knee by Little's
/// law on the capacity before the delay), within 40–464 ms of the end in seeds 1–10.
/// 50 workers of 50 ms that slow with contention (0.5), 200 ms outside them from 20 s to 30 s.
#[test]
fn littles_the_delay_s_end_brings_the_regime_before_it_back() {
    let mut late = Vec::new();
    for seed in 1..=10 {
        let (mut l, mut pool) = warmed(seed, 0.5);
        pool.delay_us = 200_000;
        pool.run_timed(&mut l, 30_000, |_, _| {});
        let at_end = l.limit();
        pool.delay_us = 0;
        let mut back = None;
        pool.run_timed(&mut l, 36_000, |t, l| {
            let floor = l.low_floor.is_some_and(|f| f < Duration::from_millis(10));
            if back.is_none() && floor && l.limit() <= 60 {
                back = Some((t - 30_000_000) / 1000);
            }
        });
        if at_end < 150 || back.is_none_or(|ms| ms > 1_000) {
            late.push((seed, at_end, back, l.low_floor));
        }
    }
    assert!(
        late.is_empty(),
        "not at the delay's knee at its end, or not back within 1 s of it \
         (seed, limit at the end, ms, floor): {late:?}"
    );
}

/// Pins the delay's steady state (`network_delay_spike` from 22.6 s: at the cap, 245–255
/// permits for 50 workers behind 200 ms, a burst that queued at the workers slowed them,
/// fewer permits were in the delay and more waited, and the drains cut to 185–218; back at the
/// cap each time, the limit swung every 2–3 s at 0.8–0.9 of capacity). Here 50 workers of
/// 50 ms that slow with contention (0.5) have 200 ms outside them from 20 s to 30 s. A drain
/// in the delay brings the cap down halfway to its cut: 781 answers a second from 24 s to 30 s
/// on average over seeds 1–10 (690–875 by seed); before, 741 (638–845), no seed more.
#[test]
fn littles_a_drain_in_a_delay_lowers_the_knee_it_returns_to() {
    let mut sum = 0;
    for seed in 1..=10 {
        let (mut l, mut pool) = warmed(seed, 0.5);
        pool.delay_us = 200_000;
        let mut n = 0;
        pool.run_timed(&mut l, 30_000, |t, _| {
            if t >= 24_000_000 {
                n += 1;
            }
        });
        sum += n / 6;
    }
    assert!(sum / 10 >= 765, "{} answers a second on average", sum / 10);
}

// ---- Review 45: the delay rules where they met what the scenario did not have ----

/// 50 workers of 50 ms with 200 ms outside them from 20 s, which never ends (a route moved for
/// good); the pool is scaled out to 100 workers at 30 s. The knee is 100 × 250 ms / 50 ms = 500
/// permits; the restart's cap (the old capacity at the new RT, ~260) must not hold forever.
#[test]
fn littles_a_lasting_delay_does_not_cap_the_limit_after_the_pool_grows() {
    let mut stuck = Vec::new();
    for seed in 1..=3 {
        let (mut l, mut pool) = warmed(seed, 0.0);
        pool.delay_us = 200_000;
        pool.run_timed(&mut l, 30_000, |_, _| {});
        pool.set_workers(100);
        let mut most = 0;
        pool.run_timed(&mut l, 50_000, |t, l| {
            if t >= 40_000_000 {
                most = most.max(l.limit());
            }
        });
        if most < 350 {
            stuck.push((
                seed,
                most,
                l.delay_restart.is_some(),
                l.restart_cap,
                l.knee_found,
            ));
        }
    }
    assert!(
        stuck.is_empty(),
        "the most limit from 40 s to 50 s for a knee of 500 (at least 350 expected) \
         (seed, most, delay_restart set, restart_cap, knee_found): {stuck:?}"
    );
}

/// The cap that holds the limit after the restart found its knee is the one the status page
/// must name: explain() reports a cap only while `!knee_found`.
#[test]
fn littles_explain_names_the_delay_cap_that_holds_the_limit() {
    let mut silent = Vec::new();
    for seed in 1..=3 {
        let (mut l, mut pool) = warmed(seed, 0.0);
        pool.delay_us = 200_000;
        pool.run_timed(&mut l, 30_000, |_, _| {});
        pool.set_workers(100);
        let mut held = 0;
        let mut unexplained = 0;
        pool.run_timed(&mut l, 40_000, |t, l| {
            let capped = l.delay_restart.is_some()
                && l.knee_found
                && l.restart_cap.is_some_and(|c| l.base >= c);
            if capped {
                held += 1;
                if l.explain(Nanos::new(t * 1000)).cap.is_none() {
                    unexplained += 1;
                }
            }
        });
        if unexplained > 0 {
            silent.push((seed, held, unexplained, l.restart_cap));
        }
    }
    assert!(
        silent.is_empty(),
        "answers with the limit at the delay's cap and explain().cap None \
         (seed, held, unexplained, cap): {silent:?}"
    );
}

/// One answer that did not cross the delay (a cached reply, a fast success on another path)
/// is read as the delay's end: the old regime (min RT 50 ms, knee ~55) comes back at once
/// while every other request still carries 200 ms.
#[test]
fn littles_one_fast_answer_in_a_delay_is_not_its_end() {
    let mut fell = Vec::new();
    for seed in 1..=3 {
        let (mut l, mut pool) = warmed(seed, 0.0);
        pool.delay_us = 200_000;
        pool.run_timed(&mut l, 28_000, |_, _| {});
        let before = (l.limit(), l.delay_restart.is_some());
        let t = pool_time(&l);
        l.on_sample(&Sample::success(
            Nanos::new(t - 1_000_000),
            Duration::from_millis(1),
            10_000, // every permit taken
        ));
        let mut least = usize::MAX;
        pool.run_timed(&mut l, 30_000, |_, l| least = least.min(l.limit()));
        if least < 120 {
            fell.push((seed, before, least, l.min_rt()));
        }
    }
    assert!(
        fell.is_empty(),
        "(seed, (limit, delay_restart) before, least limit after, min RT): {fell:?}"
    );
}

/// The delay eases from 200 ms to 100 ms (knee 250 → 150): not its end. Its first answers
/// (120–125 ms, against 200 ms through the delay) beat the delay by far more than the old
/// floor, and `delay_ended` brought the old regime back (review 45): the steering read the
/// rest of the delay as a queue and cut the limit to 13–15 until a probe read the slower
/// regime again. The answers that beat a delay that ended carry the workers' queue (1–24 ms
/// over the service's low end in `network_delay_spike`, seeds 1–6); these carry more than the
/// old service's own time (~120 ms for 50 ms): the delay eased, and its cap is the old
/// capacity at the RT left. The cost: where the queue at a delay's real end is longer than
/// the service (this pool without contention, seeds 1 and 4 of 10: 150–170 ms), the end is
/// first read as an easing and comes 270–460 ms later (359 and 664 ms after the end).
#[test]
fn littles_a_delay_that_eases_is_not_its_end() {
    let mut fell = Vec::new();
    for seed in 1..=3 {
        let (mut l, mut pool) = warmed(seed, 0.0);
        pool.delay_us = 200_000;
        pool.run_timed(&mut l, 28_000, |_, _| {});
        let had = l.delay_restart.is_some();
        pool.delay_us = 100_000;
        let mut least = usize::MAX;
        let mut ended = false;
        pool.run_timed(&mut l, 31_000, |_, l| {
            least = least.min(l.limit());
            ended |=
                had && l.delay_restart.is_none() && l.min_rt() < Some(Duration::from_millis(60));
        });
        if ended || least < 100 {
            fell.push((seed, had, ended, least));
        }
    }
    assert!(
        fell.is_empty(),
        "(seed, delay_restart at 28 s, read as ended, least limit): {fell:?}"
    );
}

/// The end of the last answer, ns (the pool's clock is private).
fn pool_time(l: &LittlesLaw) -> u64 {
    l.last_rts.back().map_or(0, |&(end, _)| end.as_u64())
}

/// A delay shorter than the old floor (a near-fixed 45–50 ms service, 40 ms outside it from
/// 20 s to 30 s: 1.8 × min RT, read as a delay outside) can never be read as ended by
/// `delay_ended` (its test needs `least + old_floor < s`, i.e. a delay longer than the floor),
/// and a probe that reads the faster regime did not clear `delay_restart` either: the
/// restart's cap (~90, the knee after the end is ~52) held for good. With the pool tripled
/// at 40 s (knee ~150), the limit stayed at the cap. Now the delay's state lapses 20 s after
/// it came, or as soon as a probe measures the old service time again.
#[test]
fn littles_a_delay_shorter_than_the_floor_does_not_leave_its_cap_for_good() {
    let mut stuck = Vec::new();
    for seed in 1..=3 {
        let mut l = LittlesLaw::new(LittlesLawConfig::default());
        let mut pool = Pool::new(50, 45, 5, seed);
        pool.run_timed(&mut l, 20_000, |_, _| {});
        pool.delay_us = 40_000;
        pool.run_timed(&mut l, 30_000, |_, _| {});
        pool.delay_us = 0;
        pool.run_timed(&mut l, 40_000, |_, _| {});
        pool.set_workers(150);
        let (mut most, mut left) = (0, None);
        pool.run_timed(&mut l, 60_000, |t, l| {
            // The delay's state lapses 20 s after the restart (~21 s) at the latest.
            if t >= 45_000_000 && left.is_none() {
                left = Some((l.delay_restart.is_some(), l.restart_cap));
            }
            if t >= 50_000_000 {
                most = most.max(l.limit());
            }
        });
        let left = left.unwrap_or((true, None));
        if left.0 || most < 130 {
            stuck.push((seed, left, most));
        }
    }
    assert!(
        stuck.is_empty(),
        "15 s after the delay ended, (seed, (delay_restart set, restart_cap), most limit \
         50-60 s for 150 workers): {stuck:?}"
    );
}

/// The delay rules on a clock that starts at a large value (2^62 ns, where an epoch in Unix
/// nanoseconds already is 2^60.6): the same as `littles_a_delay_outside_restarts_to_the_knee_
/// the_old_capacity_gives` and `littles_the_delay_s_end_brings_the_regime_before_it_back`.
#[test]
fn littles_the_delay_rules_hold_on_a_clock_started_near_its_wrap() {
    let mut missed = Vec::new();
    for offset in [1u64 << 62, u64::MAX - 100_000_000_000] {
        for seed in 1..=3 {
            let mut l = LittlesLaw::new(LittlesLawConfig::default());
            let mut pool = Pool::new(50, 0, 50, seed);
            pool.floor_us = 1;
            pool.contention = 0.5;
            pool.offset_ns = offset;
            pool.run_timed(&mut l, 20_000, |_, _| {});
            pool.delay_us = 200_000;
            let mut reached = None;
            pool.run_timed(&mut l, 30_000, |t, l| {
                if reached.is_none() && l.limit() >= 150 {
                    reached = Some(t / 1000 - 20_000);
                }
            });
            pool.delay_us = 0;
            let mut back = None;
            pool.run_timed(&mut l, 36_000, |t, l| {
                let floor = l.low_floor.is_some_and(|f| f < Duration::from_millis(10));
                if back.is_none() && floor && l.limit() <= 60 {
                    back = Some(t / 1000 - 30_000);
                }
            });
            if reached.is_none_or(|ms| ms > 5_000) || back.is_none_or(|ms| ms > 1_000) {
                missed.push((offset, seed, reached, back));
            }
        }
    }
    assert!(
        missed.is_empty(),
        "(offset, seed, ms to 150, ms back after the end): {missed:?}"
    );
}

/// Seeds 1–20 of 50 workers (contention 0.5) warmed to 20 s whose service then takes 3× as
/// long: those whose floor has not doubled by `until_ms` (seed, floor before, floor after), on
/// a clock that reads `offset_ns` at the pool's 0.
fn floor_not_doubled_after_a_slowdown(
    until_ms: u64,
    offset_ns: u64,
) -> Vec<(u64, Duration, Option<Duration>)> {
    let mut late = Vec::new();
    for seed in 1..=20 {
        let (mut l, mut pool) = warmed_from(seed, 0.5, offset_ns);
        let before = l.low_floor.expect("a floor");
        pool.scale_service(3.0);
        let mut doubled = false;
        pool.run_timed(&mut l, until_ms, |_, l| {
            doubled |= l.low_floor.is_some_and(|f| f >= before * 2);
        });
        if !doubled {
            late.push((seed, before, l.low_floor));
        }
    }
    late
}

/// Pins the floor after the service slowed (`latency_spike`: 50 workers of 50 ms, 3× slower
/// from 20 s). The floor stayed the old regime's (~2 ms) until a probe re-based it, and the
/// slower service's low RT (7.7 ms for 2.6) read as a queue of about two against it, which
/// walked the limit from 50 to 41–45 for 50 workers; the first probe after the change went
/// blind, the next was shallow and only confirmed, and the floor moved 2–7 s after the change
/// (1.2–4.4 s in 10 seeds of 20 here, not within 5 s in the other 10). The buckets' medians
/// rose 3× with their low end rising as much (a stretch, not a wait added to each): the floor
/// (and the probe's median and min RT) follow at once, within 0.5 s in 12 seeds of 20 (the
/// others' first probe falls before the medians' rise is significant). At least half.
#[test]
fn littles_a_slower_service_moves_the_floor_before_a_probe() {
    let late = floor_not_doubled_after_a_slowdown(20_500, 0);
    assert!(
        late.len() <= 10,
        "the floor not doubled within 0.5 s of the slowdown (seed, before, after): {late:?}"
    );
}

/// A delay that eased (200 ms → 100 ms, read as such: `littles_a_delay_that_eases_is_not_its_
/// end`) and then ends: its end is read against what is left of it, and the regime before it
/// comes back as after a delay that ends at once. (A probe may read the eased delay first, as
/// a faster regime, which ends the delay's state: seed 5's end is then the probes', 2.9 s.)
#[test]
fn littles_an_eased_delay_s_end_brings_the_regime_before_it_back() {
    let (mut late, mut held_in) = (Vec::new(), 0);
    for seed in 1..=5 {
        let (mut l, mut pool) = warmed(seed, 0.0);
        pool.delay_us = 200_000;
        pool.run_timed(&mut l, 28_000, |_, _| {});
        pool.delay_us = 100_000;
        pool.run_timed(&mut l, 34_000, |_, _| {});
        let held = (l.limit(), l.delay_restart.is_some());
        pool.delay_us = 0;
        let mut back = None;
        pool.run_timed(&mut l, 40_000, |t, l| {
            let floor = l.low_floor.is_some_and(|f| f < Duration::from_millis(10));
            if back.is_none() && floor && l.limit() <= 60 {
                back = Some((t - 34_000_000) / 1000);
            }
        });
        held_in += usize::from(held.1);
        if held.1 && back.is_none_or(|ms| ms > 1_000) {
            late.push((seed, held, back, l.low_floor));
        }
    }
    assert!(
        late.is_empty() && held_in >= 3,
        "{held_in} of 5 seeds in the eased delay's state at its end; not back within 1 s of \
         it (seed, (limit, delay_restart) at the end, ms, floor): {late:?}"
    );
}

/// Pins the probe that a drop to a fifth sets off above the workers left (`capacity_fifth` seed
/// 45: 50 workers to 10 at 20 s, no queue estimate in the buckets of the drop, so no drain
/// first; the probe at half the limit, 28 permits, read a mean RT of 283 ms for 50 ms and a low
/// RT of 154 ms, and the slow start restarted on that queued floor: 25–37 permits for the 10
/// workers, every probe after it above them too, 32 s to converge; seed 53 alike, 19.7 s).
/// Such a probe started in the new regime (the recent RT already slow), so the check at half
/// the depth was not asked for. Now a reading that would restart and is not shaped as a delay
/// is checked there, and the check finds the old regime. Here 50 workers that slow with
/// contention (0.5) drop to 10 at 20 s: min RT above 150 ms (3× the service) for 5 s or more
/// of the 15 s after in seeds 8 and 11 of 1–40 (7.0 and 10.7 s), now in none. (Seeds 24 and
/// 36 read 168 and 250 ms for 3.9 and 4.1 s, set by another rule, and 16 and 22 for ~1 s.)
#[test]
fn littles_a_probe_above_the_workers_a_drop_left_is_checked_before_a_restart() {
    let mut slow = Vec::new();
    for seed in 1..=SEEDS {
        let (mut l, mut pool) = warmed(seed, 0.5);
        pool.set_workers(10);
        let (mut since, mut total) = (None, 0);
        pool.run_timed(&mut l, 35_000, |t, l| {
            let queued = l.min_rt.is_some_and(|r| r > Duration::from_millis(150));
            match (queued, since) {
                (true, None) => since = Some(t),
                (false, Some(s)) => {
                    total += t - s;
                    since = None;
                }
                _ => {}
            }
        });
        total += since.map_or(0, |s| 35_000_000 - s);
        if total >= 5_000_000 {
            slow.push((seed, total / 1000));
        }
    }
    assert!(
        slow.is_empty(),
        "min RT above 150 ms for 5 s or more after the drop (seed, ms): {slow:?}"
    );
}

/// Where the first probe after a 3× slowdown goes blind, its end leaves the window's older
/// buckets of the new regime too: against them the service no longer reads slower, and the
/// floor stayed the old one until a full probe 2–5 s later (`latency_spike` seeds 16, 18, 19).
/// The reference the probe started with outlives it: the floor doubles within 2.5 s (on main
/// it did not in 6 of 20 seeds, exactly those whose first probe went blind).
#[test]
fn littles_a_slowdown_read_across_a_blind_probe() {
    let late = floor_not_doubled_after_a_slowdown(23_000, 0);
    assert!(
        late.is_empty(),
        "the floor not doubled within 2.5 s of the slowdown (seed, before, after): {late:?}"
    );
}

/// The slowed-service rule (its scale, the blind probe's reference outliving the window) on a
/// clock 100 s short of its wrap, where every deadline it sets saturates: the same as on a
/// clock started at 0 (`littles_a_slowdown_read_across_a_blind_probe`).
#[test]
fn littles_a_slowdown_is_read_on_a_clock_started_near_its_wrap() {
    let late = floor_not_doubled_after_a_slowdown(23_000, u64::MAX - 100_000_000_000);
    assert!(
        late.is_empty(),
        "the floor not doubled within 2.5 s of the slowdown (seed, before, after): {late:?}"
    );
}

/// The check a drop to a fifth sets off (`littles_a_probe_above_the_workers_a_drop_left_is_
/// checked_before_a_restart`) lets go of the limit: back at the base from before the drop
/// (33–41 permits for 10 workers), its tail held 3–4 times the workers while it followed its
/// answers, and the steering cannot drain there (`capacity_fifth` seed 27: 41 permits to
/// 23.9 s, 5.8 s to converge). 50 workers that slow with contention (0.5) drop to 10 at 20 s,
/// seeds 1–40: on main the limit stood above twice the workers through a check's tail for
/// 3.9 s (seed 8) and 3.3 s (seed 11); now in none.
#[test]
fn littles_a_check_after_a_drop_returns_to_its_depth_not_to_the_base_before_it() {
    let mut high = Vec::new();
    for seed in 1..=SEEDS {
        let (mut l, mut pool) = warmed(seed, 0.5);
        pool.set_workers(10);
        let (mut last, mut total) = (20_000_000, 0);
        pool.run_timed(&mut l, 35_000, |t, l| {
            let in_tail = l
                .probe
                .is_some_and(|p| p.check && Nanos::new(t * 1000) >= p.end);
            if in_tail && l.limit > 20 {
                total += t - last;
            }
            last = t;
        });
        if total > 500_000 {
            high.push((seed, total / 1000));
        }
    }
    assert!(
        high.is_empty(),
        "the limit above twice the 10 workers in a check's tail for over 0.5 s (seed, ms): {high:?}"
    );
}

/// The return's bar is not one bucket's noise: 50 workers that slow with contention (0.5), 10
/// from 20 s, 50 again from 35 s, seeds 1-60. Against the window's busiest bucket (1.4-1.6 x what
/// the 10 served) the 13-15 permits the fall left pass the return test only by chance: not at 45
/// permits within 5 s of the return in seed 40 (4.5 s in seed 47), 1.41 s on average (1.48 s
/// with the check's tail at its depth, which adds seed 8). Far under the knee the bar is the
/// busiest run of as many buckets as the test counts, asked only where the limit at min RT can
/// clear it: every seed within 4.3 s, 1.15 s on average.
#[test]
fn littles_the_return_s_bar_is_not_one_busy_bucket() {
    let (mut sum, mut missed) = (0, Vec::new());
    for seed in 1..=60 {
        let (mut l, mut pool) = warmed(seed, 0.5);
        pool.set_workers(10);
        pool.run_timed(&mut l, 35_000, |_, _| {});
        pool.set_workers(50);
        let mut reached = None;
        pool.run_timed(&mut l, 40_000, |t, l| {
            if reached.is_none() && l.limit() >= 45 {
                reached = Some((t - 35_000_000) / 1000);
            }
        });
        match reached {
            Some(ms) => sum += ms,
            None => missed.push(seed),
        }
    }
    assert!(
        missed.is_empty(),
        "not at 45 within 5 s of the return: {missed:?}"
    );
    assert!(sum / 60 < 1_300, "{} ms on average", sum / 60);
}

/// Seeds 1–40 of 50 workers (contention 0.5) warmed to 20 s, 10 of them from 20 s, 50 again
/// from 35 s, on a clock that reads `offset_ns` at the pool's 0: those in which a probe started
/// within 0.9 s of the slow start after the return finding the knee (seed, ms after, its limit).
fn probes_on_the_return_s_ramp(offset_ns: u64) -> Vec<(u64, u64, usize)> {
    let mut early = Vec::new();
    for seed in 1..=SEEDS {
        let (mut l, mut pool) = warmed_from(seed, 0.5, offset_ns);
        pool.set_workers(10);
        pool.run_timed(&mut l, 35_000, |_, _| {});
        pool.set_workers(50);
        let (mut restarting, mut found, mut was_probing) = (false, None, l.probing());
        pool.run_timed(&mut l, 45_000, |t, l| {
            if l.restarted && !l.knee_found {
                restarting = true;
            } else if restarting && l.knee_found && found.is_none() {
                found = Some(t);
            }
            let started = l.probing() && !was_probing;
            was_probing = l.probing();
            if let Some(at) = found.filter(|&at| started && t < at + 900_000) {
                early.push((seed, (t - at) / 1000, l.limit()));
            }
        });
    }
    early
}

/// The slow start after the workers came back has found the knee: no periodic probe until its
/// buckets have left the window. Due at once, it took its depth and the pass rate it is judged
/// against from the ramp's buckets (`capacity_fifth` seed 23: at 40 permits 0.2 s after the
/// ramp, a reading that kept min RT at the fall's 42 ms and sent the probes after it to 35 for
/// 50 workers). Before, probes started 0.5–0.6 s after the ramp in seeds 23 and 40 (and 44, 57
/// of seeds 41–60).
#[test]
fn littles_no_probe_on_the_ramp_after_workers_came_back() {
    let early = probes_on_the_return_s_ramp(0);
    assert!(
        early.is_empty(),
        "a probe within 0.9 s of the return's knee (seed, ms, limit): {early:?}"
    );
}

/// [`littles_no_probe_on_the_ramp_after_workers_came_back`] on a clock 100 s short of its wrap.
#[test]
fn littles_no_probe_on_the_ramp_after_workers_came_back_near_the_clock_s_wrap() {
    let early = probes_on_the_return_s_ramp(u64::MAX - 100_000_000_000);
    assert!(
        early.is_empty(),
        "a probe within 0.9 s of the return's knee (seed, ms, limit): {early:?}"
    );
}

/// Pins the restart on a drain that read a delay (`network_delay_spike` seed 16: a probe fell
/// on the delay's onset and measured nothing, the standing-queue drain halved the limit 41 →
/// 21, and when the low RT read after it what it read before while the pass rate fell with
/// the permits, a probe at 10 permits held 1 s to read that again: the slow start restarted on
/// the delay 3.2 s after its onset). Here 200 ms come outside 50 workers that slow with
/// contention (0.5) the moment the first probe after 20 s starts, on a clock at 0 and on one
/// that wraps 100 s in. The drain's reading restarts the slow start itself, on the capacity
/// before the delay at the old min RT plus the low RT's rise, as the probe's would: 2.17 s
/// after the onset on average over 40 seeds (1.42–4.92 s), on either clock; before, 3.07 s
/// (2.48–4.92 s).
#[test]
fn littles_a_drain_that_read_a_delay_restarts_on_it() {
    for offset in [0, u64::MAX - 100_000_000_000] {
        let mut at = Vec::new();
        for seed in 1..=SEEDS {
            let (mut l, mut pool) = warmed_from(seed, 0.5, offset);
            let mut t = 20_000;
            while !l.probing() {
                t += 1;
                pool.run_timed(&mut l, t, |_, _| {});
            }
            pool.delay_us = 200_000;
            let mut restart = None;
            pool.run_timed(&mut l, t + 5_000, |u, l| {
                if restart.is_none() && l.delay_restart.is_some() {
                    restart = Some(u / 1000 - t);
                }
            });
            at.push((seed, restart));
        }
        let mean = at.iter().map(|(_, ms)| ms.unwrap_or(5_000)).sum::<u64>() / SEEDS;
        assert!(
            mean < 2_600,
            "clock at {offset} ns: the delay's restart {mean} ms after its onset on average \
             (5 s where none): {at:?}"
        );
    }
}

/// Seeds 1–60 of 50 workers (contention 0.5, each answer giving the permits out at its start,
/// as a limiter's do, from the pool's start) warmed to 20 s, then 10 of them for 30 s, on a
/// clock that reads `offset_ns` at the pool's 0: each restart on workers that came back while
/// none did (seed, s after the fall, the limit).
fn returns_in_the_fall(offset_ns: u64) -> Vec<(u64, f64, usize)> {
    let mut restarts = Vec::new();
    for seed in 1..=60 {
        let (mut l, mut pool) = warmed_counted_from(seed, 0.5, offset_ns, true);
        pool.set_workers(10);
        let mut was = l.came_back;
        pool.run_timed(&mut l, 50_000, |t, l| {
            if l.came_back && !was {
                restarts.push((seed, (t / 1000) as f64 / 1000.0 - 20.0, l.base));
            }
            was = l.came_back;
        });
    }
    restarts
}

/// Pins the workers counted in the return's test (`capacity_fifth`: over seeds 1–250 the slow
/// start restarted on workers that came back 55 times in the 30 s that 10 of 50 served, at
/// 11–13 permits, where Little's law at the limit clears the bar of ~200 answers a second and
/// the count needs one lucky run; four falls went past 5 s). 13 permits for 10 workers count
/// 10 busy at most, as when the bar was measured; the same 13 for 50 count 13. Here 15 such
/// restarts in 11 seeds of 60 before (at 10–20 permits), on either clock (the other 100 s
/// short of its wrap); none after. The pool counts from its start, as a limiter does: counted
/// only from the fall, its warm-up answers read `FULL` permits out, over any limit, which the
/// count gate reads as no count, and a fall drained sooner (the hold after a drain ended at a
/// bucket started after it) measured its bar while the window still held them (seed 60 came
/// back at 12 permits 3.6 s into the fall on the pass rate alone).
#[test]
fn littles_no_return_in_the_fall_while_the_answers_count_the_same_workers() {
    for offset in [0, u64::MAX - 100_000_000_000] {
        let restarts = returns_in_the_fall(offset);
        assert!(
            restarts.is_empty(),
            "clock at {offset} ns: came back with 10 workers (seed, s, limit): {restarts:?}"
        );
    }
}

/// 50 workers (contention 0.5, counted) warmed to 20 s from `seed`, then 10 of them for
/// `fall_ms`, then 50 again: the ms from the return until the limit is back at 45 permits
/// (`None` where it is not within 10 s).
fn back_after_a_short_fall(seed: u64, fall_ms: u64, offset_ns: u64) -> Option<u64> {
    let (mut l, mut pool) = warmed_from(seed, 0.5, offset_ns);
    pool.counted = true;
    pool.set_workers(10);
    pool.run_timed(&mut l, 20_000 + fall_ms, |_, _| {});
    pool.set_workers(50);
    let mut back = None;
    pool.run_timed(&mut l, 30_000 + fall_ms, |t, l| {
        if back.is_none() && l.base >= 45 {
            back = Some(t / 1000 - 20_000 - fall_ms);
        }
    });
    back
}

/// Pins the count's gate on the workers' return to where it can pass (review 72): after a fall
/// shorter than the window, the count when the bar was measured is still the pool before the
/// fall, which no answer at the permits the fall left can count past, and the return waited
/// for the window to turn over. 1.5 s of 10 workers for 50: seed 5 was back at 45 permits
/// 2.35 s after the workers came back, now 1.25 s, as without the count; the same on a clock
/// 100 s short of its wrap.
#[test]
fn littles_a_short_fall_is_not_held_by_the_count_from_before_it() {
    for offset in [0, u64::MAX - 100_000_000_000] {
        let back = back_after_a_short_fall(5, 1500, offset);
        assert!(
            back.is_some_and(|ms| ms < 2000),
            "clock at {offset} ns: seed 5 back at 45 permits after (ms): {back:?}"
        );
    }
}

/// 50 workers (contention 0.5, counted) warmed to 20 s from `seed` on a clock that reads
/// `offset_ns` at the pool's 0, then 10 of them: the ms from the fall until the limit the
/// steering returns to is 12 permits or fewer (`None` where it is not within 10 s).
fn down_after_a_fall(seed: u64, offset_ns: u64) -> Option<u64> {
    let (mut l, mut pool) = warmed_from(seed, 0.5, offset_ns);
    pool.counted = true;
    down_after_falling_to_10(&mut l, &mut pool)
}

/// `pool`, warmed to 20 s, falls to 10 workers: the ms from the fall until the limit the
/// steering returns to is 12 permits or fewer (`None` where it is not within 10 s).
fn down_after_falling_to_10(l: &mut LittlesLaw, pool: &mut Pool) -> Option<u64> {
    pool.set_workers(10);
    let mut down = None;
    pool.run_timed(l, 30_000, |t, l| {
        if down.is_none() && l.base <= 12 {
            down = Some(t / 1000 - 20_000);
        }
    });
    down
}

/// Pins the end of the hold after a drain at the first bucket whose answers all started after
/// it (`capacity_fifth` seed 4: a standing queue drained 48 permits to 24 for 10 workers, and
/// three buckets each as long as the backlog's RT, 0.45-0.52 s, held 24 for 1.7 s where the
/// second already read the drained limit). Here 50 workers fall to 10 at 20 s: seeds 2 and 16
/// held 12 permits or fewer 5.5 and 4.9 s after the fall, now 3.6 and 2.4 s (seeds 1-20: 4.24
/// s on average, now 3.89 s); the same on a clock 100 s short of its wrap.
#[test]
fn littles_the_hold_after_a_drain_ends_with_a_bucket_started_after_it() {
    for offset in [0, u64::MAX - 100_000_000_000] {
        for seed in [2, 16] {
            let down = down_after_a_fall(seed, offset);
            assert!(
                down.is_some_and(|ms| ms < 4000),
                "clock at {offset} ns, seed {seed}: 12 permits or fewer after (ms): {down:?}"
            );
        }
    }
}

/// Pins the drain of a slow start restarted at the limit it had (`latency_spike` seed 2: the
/// periodic probe started 0.1 s into the 3× slowdown and read 52 answers of it, held for a span
/// set by the old regime's RTs: a mean of 93.5 ms for 150 ms, censored. The slow start restarted
/// at 51 permits for 50 workers (capped at the old knee), read a queue of 5.9 at once, and
/// drained to that censored mean × the pass rate, 37 permits, where the steering held it to
/// the spike's end: 10.8 s to converge). Where the queue was read at the limit drained (no
/// bucket of the estimate at a lower one), the limit less that queue is in service (Little's
/// law): the drain goes no lower. Here 50 workers whose service takes 3× as long from the
/// moment the first probe after 20 s starts (seeds 1–`SEEDS`): the limit the restarted
/// start's knee is found at. On main seed 7 drained 52 → 35 (its probe read 92 ms) and held
/// 35–38 for 3 s.
#[test]
fn littles_a_restart_at_its_limit_drains_no_lower_than_the_queue_it_read() {
    let mut low = Vec::new();
    for seed in 1..=SEEDS {
        let (mut l, mut pool, start) = until_the_first_probe_after_20_s(seed);
        pool.scale_service(3.0);
        let mut knee = None;
        let mut restarted = false;
        pool.run_timed(&mut l, start + 5_000, |_, l| {
            restarted |= l.restarted && !l.knee_found;
            if restarted && l.knee_found && knee.is_none() {
                knee = Some(l.limit());
            }
        });
        if knee.is_some_and(|k| k < 45) {
            low.push((seed, knee));
        }
    }
    assert!(
        low.is_empty(),
        "the restarted start's knee under 45 permits for 50 workers (seed, knee): {low:?}"
    );
}

/// 50 workers (contention 0.5) counted from their start, warmed to 20 s from `seed`, then 10
/// of them: the ms from the fall until the limit the steering returns to is 12 permits or
/// fewer (`None` where it is not within 10 s).
fn down_after_a_counted_fall(seed: u64, offset_ns: u64) -> Option<u64> {
    let (mut l, mut pool) = warmed_counted_from(seed, 0.5, offset_ns, true);
    down_after_falling_to_10(&mut l, &mut pool)
}

/// Pins the fall read off the count (`capacity_fifth` seed 1: 5.9 s to converge after the
/// workers fell, the queue estimate draining 49 permits to 31, then 28 to 14, and a probe
/// between): once every answer of the last buckets counts 10 or fewer busy where 50 were
/// counted exact, and the chance of that under the old pool is under `PINNED_TAIL`, the limit
/// drains to 11 at once. Here seeds 7, 13, 15 and 17 were at 12 permits or fewer 4.3, 4.1, 4.3
/// and 4.0 s after the fall, now 2.0, 1.8, 1.9 and 1.8 s (seeds 1-20: 3.7 s on average, now
/// 2.5 s); the same on a clock 100 s short of its wrap (the probe the drain puts off is set a
/// window past it).
#[test]
fn littles_a_fall_the_count_shows_drains_to_the_workers_counted() {
    for offset in [0, u64::MAX - 100_000_000_000] {
        for seed in [7, 13, 15, 17] {
            let down = down_after_a_counted_fall(seed, offset);
            assert!(
                down.is_some_and(|ms| ms < 2600),
                "clock at {offset} ns, seed {seed}: 12 permits or fewer after (ms): {down:?}"
            );
        }
    }
}

/// 50 workers (contention 0.5, counted) warmed to 20 s from `seed`, then 10 of them until the
/// first probe after 35 s starts, when the 50 come back: the ms from the return until the slow
/// start restarts on them (10 s where it does not within 10 s).
fn back_during_a_probe(seed: u64, offset_ns: u64) -> u64 {
    let (mut l, mut pool) = warmed_counted_from(seed, 0.5, offset_ns, true);
    pool.set_workers(10);
    pool.run_timed(&mut l, 35_000, |_, _| {});
    let mut t = 35_000;
    while !l.probing() && t < 45_000 {
        t += 5;
        pool.run_timed(&mut l, t, |_, _| {});
    }
    assert!(l.probing(), "seed {seed}: no probe in 10 s of 10 workers");
    pool.set_workers(50);
    let mut back = None;
    pool.run_timed(&mut l, t + 10_000, |at, l| {
        if back.is_none() && l.came_back {
            back = Some(at / 1000 - t);
        }
    });
    back.unwrap_or(10_000)
}

/// Pins the workers' return read through a probe (`capacity_fifth` seeds 17, 19 and 20 under
/// steady93's G2: a probe at 8–10 permits on the return at 50 s, and the restart 1.5–3 s after
/// it). A probe at the depth of the workers that fell, or under it, holds as many permits for
/// 50 workers as for 10, and reads nothing that tells them apart; after it, the limit is the
/// old pool's count plus its target queue, where every answer counts every permit busy, the
/// queue estimate reads noise against a target of 1–2 and the steering holds, and the pass rate
/// stays under the bar. Here the 50 come back as the first probe after 35 s starts (at 6–11
/// permits): the restart came 0.9–2.5 s after, 1.79 s on average, seeds 1–20 (1.80 s with
/// the one-permit step after a probe alone, 2.9 s at most); now 0.9–2.7 s, 1.51 s on average
/// (1.42 s without that step; a return 2.5 s after a probe's start: 0.92 s). That a probe
/// on 10 workers does not read as a return is pinned by
/// `littles_no_return_in_the_fall_while_the_answers_count_the_same_workers`. On a clock at 0
/// and on one 100 s short of its wrap.
#[test]
fn littles_workers_that_came_back_during_a_probe_are_read_off_the_count() {
    for offset in [0, u64::MAX - 100_000_000_000] {
        let back: Vec<u64> = (1..=20).map(|s| back_during_a_probe(s, offset)).collect();
        let mean = back.iter().sum::<u64>() / 20;
        assert!(
            mean < 1_600 && back.iter().all(|&ms| ms < 3_000),
            "clock at {offset} ns: restarted {mean} ms after the return on average \
             (seeds 1-20, ms): {back:?}"
        );
    }
}

/// 20 workers of 1 ms + 9 ms exponential (contention 0.5, counted) for 10 s from `seed`: each
/// rise of the limit outside probes within three buckets after a probe, from 15 permits or
/// more (before, after, and where the first cut within the window after it went), on a clock
/// that reads `offset_ns` at the pool's 0.
fn rises_after_a_probe(seed: u64, offset_ns: u64) -> Vec<(usize, usize, Option<usize>)> {
    let mut l = LittlesLaw::new(LittlesLawConfig::default());
    let mut pool = Pool::new(20, 1, 9, seed);
    pool.offset_ns = offset_ns;
    pool.contention = 0.5;
    pool.counted = true;
    let mut rises: Vec<(usize, usize, Option<usize>)> = Vec::new();
    let mut open: Option<(usize, u64)> = None;
    let mut was = (l.base, l.closed_total);
    pool.run_timed(&mut l, 10_000, |_, l| {
        if l.closed_total == was.1 {
            return;
        }
        if let Some((i, at)) = open {
            if l.base < was.0 && l.probe.is_none() {
                rises[i].2 = Some(l.base);
                open = None;
            } else if l.closed_total > at + l.c.pass_buckets as u64 {
                open = None;
            }
        }
        let after = l.closed.iter().rev().take(RT_BUCKETS).any(|b| b.probed);
        if after && l.probe.is_none() && l.knee_found && l.base > was.0 && was.0 >= 15 {
            rises.push((was.0, l.base, None));
            open = Some((rises.len() - 1, l.closed_total));
        }
        was = (l.base, l.closed_total);
    });
    rises
}

/// Pins the step after a probe (`threaded_overload`: the bucket after a probe read no queue
/// off its drained buckets, × 1.1 took 21 permits for 20 workers to 23, a cut took it to 22 and
/// the steering's rounding held it there; p99 2.003× unloaded on seeds 6–10 and 16–20, the bar
/// 2×). Past the count + 1 (21 and up for 20 workers), a step after a probe is one permit, and
/// the first cut within the window goes back to where it began. Seeds 1–20: before, five seeds
/// rose 21 → 23 or 22 → 24 (seven steps), and the cut left them at 22 or 23; now each of the
/// five rises a permit and comes back. On a clock at 0 and on one 100 s short of its wrap.
#[test]
fn littles_after_a_probe_grows_a_permit_past_the_count_and_a_cut_takes_it_back() {
    for offset in [0, u64::MAX - 100_000_000_000] {
        let mut wrong = Vec::new();
        let mut seen = 0;
        for seed in 1..=20 {
            for (before, after, cut) in rises_after_a_probe(seed, offset) {
                if before < 21 {
                    continue;
                }
                seen += 1;
                if after != before + 1 || cut.is_some_and(|c| c != before) {
                    wrong.push((seed, before, after, cut));
                }
            }
        }
        assert!(
            seen >= 3,
            "clock at {offset} ns: {seen} steps after a probe past the count"
        );
        assert!(
            wrong.is_empty(),
            "clock at {offset} ns: (seed, before, after, the cut's limit): {wrong:?}"
        );
    }
}

/// The algorithm keeps no absolute time that changes what it does: from a clock that starts
/// at one hour (`TokioClock`'s first reading) or 100 s short of its wrap, the limit and the
/// probes are those from a clock at 0, answer by answer (50 workers of 50 ms, contention 0.5,
/// 60 s from the start, seeds 1–10). `next_probe` starts at the absolute `probe_interval`,
/// due at once on such a clock; nothing reads it before the knee sets it again (review104).
#[test]
fn littles_runs_the_same_from_any_clock_start() {
    let run = |seed: u64, offset_ns: u64| {
        let mut l = LittlesLaw::new(LittlesLawConfig::default());
        let mut pool = Pool::new(50, 0, 50, seed);
        pool.floor_us = 1;
        pool.contention = 0.5;
        pool.offset_ns = offset_ns;
        let mut path = Vec::new();
        pool.run_timed(&mut l, 60_000, |t, l| path.push((t, l.limit, l.probing())));
        path
    };
    for seed in 1..=10 {
        let from_zero = run(seed, 0);
        for offset in [3_600_000_000_000, u64::MAX - 100_000_000_000] {
            let other = run(seed, offset);
            let split = from_zero.iter().zip(&other).position(|(a, b)| a != b);
            assert!(
                split.is_none() && from_zero.len() == other.len(),
                "seed {seed}, clock at {offset} ns: (µs, limit, probing) from 0 {:?}, here {:?}",
                split.map(|i| from_zero[i]),
                split.map(|i| other[i])
            );
        }
    }
}

/// What [`near_constant_spike`] saw of a change and of its end.
struct NearConstant {
    /// The most permits from the change to its end (20–30 s).
    most: usize,
    /// The slow start restarted on a delay outside.
    as_delay: bool,
    /// It restarted (on anything) by the end.
    restarted: bool,
    /// The mean permits from 31 s to 36 s (the end at 30 s).
    mean_after: f64,
}

/// 50 workers of a near-constant service (49 ms + an exponential share of mean 1 ms: a
/// coefficient of variation of 2 %) that slow with contention (0.5), each answer counted,
/// warmed to 20 s from `seed`, whose service then takes 3× as long (`slower`) or that have
/// `delay_ms` outside them until 30 s, and then neither until 36 s. The pool is event-driven
/// (each answer when its request ends, the limit refilled at once): nothing is owed from one
/// call to the next, as `drive_workers`'s answers are (review lead40, section 2).
fn near_constant_spike(seed: u64, slower: bool, delay_ms: u64) -> NearConstant {
    let mut l = LittlesLaw::new(LittlesLawConfig::default());
    let mut pool = Pool::new(50, 49, 1, seed);
    pool.contention = 0.5;
    pool.counted = true;
    pool.run_timed(&mut l, 20_000, |_, _| {});
    if slower {
        pool.scale_service(3.0);
    }
    pool.delay_us = delay_ms * 1000;
    let (mut most, mut as_delay) = (0, false);
    pool.run_timed(&mut l, 30_000, |_, l| {
        most = most.max(l.limit());
        as_delay |= l.delay_restart.is_some();
    });
    let restarted = l.restarted;
    if slower {
        pool.scale_service(1.0 / 3.0);
    }
    pool.delay_us = 0;
    let (mut sum, mut n) = (0, 0);
    pool.run_timed(&mut l, 36_000, |t, l| {
        if t >= 31_000_000 {
            sum += l.limit();
            n += 1;
        }
    });
    NearConstant {
        most,
        as_delay,
        restarted,
        mean_after: sum as f64 / n.max(1) as f64,
    }
}

/// Pins a near-constant service that got 3× slower and came back (`const_spike`, review
/// lead40: 50 workers of 49–51 ms, 3× slower from 20 s to 30 s). The probe after the change
/// read the low RT 98.3 ms over the floor for a mean 100.1 ms over min RT, within
/// `SAME_REGIME` of a delay's reading (the same wait added to every request) and far more than
/// three of its standard errors (0.04–0.2 ms): the slow start restarted on a delay outside, to
/// the old capacity at the new RT, and the upstream held 159 permits for 50 workers for 1.5 s
/// (p99 3.64× unloaded, the oracle's 2.93×). A slower service multiplies the floor too
/// (+98.2 ms), and the reading stood nearer that: a delay is now read only where the low RT's
/// rise stands nearer the delay's reading than the slower service's by three standard errors.
/// Read as a slower service, its end was left to the probes, which read a queued floor (the
/// limit grew on the stale one to 72): an answer shorter than every one since the restart by
/// `probe_trigger`, near the old floor, brings the regime before back whole.
///
/// Here (seeds 1–10) 8 of the 10 slower services restarted on a delay (158 permits), now 3:
/// those whose min RT stood 1.3–1.4 ms high before the change (51.3–51.4 ms, a probe's mean
/// that did not quite drain), where the two readings are 2 × (min RT − floor) apart, ~2 ms —
/// the rule trusts min RT, and a min RT that far off moves the slower service's reading past
/// the delay's. The others hold 75 permits at most, and those that restarted come back to
/// 45–60 on average from 31 s to 36 s. 100 ms outside the same workers still reads as a delay
/// in 9 seeds of 10 (seed 3 does not restart on it, before or now).
#[test]
fn littles_a_near_constant_service_that_slowed_is_no_delay() {
    let (mut as_delay, mut wrong, mut delays) = (Vec::new(), Vec::new(), 0);
    for seed in 1..=10 {
        let s = near_constant_spike(seed, true, 0);
        if s.as_delay {
            as_delay.push(seed);
        } else if s.most > 75 || (s.restarted && !(45.0..=60.0).contains(&s.mean_after)) {
            wrong.push((seed, s.most, s.restarted, s.mean_after));
        }
        delays += usize::from(near_constant_spike(seed, false, 100).as_delay);
    }
    assert!(
        as_delay.len() <= 3,
        "the 3x slower service read as a delay in seeds {as_delay:?}"
    );
    assert!(
        wrong.is_empty(),
        "(seed, most permits 20-30 s, restarted, mean permits 31-36 s): {wrong:?}"
    );
    assert!(
        delays >= 9,
        "100 ms outside read as a delay in {delays} seeds of 10"
    );
}
