//! Every adaptive algorithm takes any sample a caller can build — a latency of
//! `Duration::MAX` (say, "never answered"), `usize::MAX` in flight, zero latency — and any
//! start time, up to the clock's last instant, without a panic, its limit staying at least 1.

use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::SmallRng};
use sluicegate::adaptive::{
    Aimd, AimdConfig, Gradient2, Gradient2Config, LimitAlgorithm, LittlesLaw, LittlesLawConfig,
    Sample, Vegas, VegasConfig, Windowed, WindowedConfig,
};
use sluicegate::clock::Nanos;

fn algorithms() -> Vec<Box<dyn LimitAlgorithm>> {
    vec![
        Box::new(LittlesLaw::new(LittlesLawConfig::default())),
        Box::new(Gradient2::new(Gradient2Config::default())),
        Box::new(Vegas::new(VegasConfig::default())),
        Box::new(Aimd::new(AimdConfig::default())),
        Box::new(Windowed::new(
            Aimd::new(AimdConfig::default()),
            WindowedConfig::default(),
        )),
    ]
}

/// `LittlesLaw` summed a `Duration::MAX` latency into its bucket ("overflow when adding
/// durations") and `Aimd` doubled `usize::MAX` in flight ("attempt to multiply with
/// overflow"): panics from hand-made samples. Samples are bounded to what a limiter can
/// measure (`u64::MAX` ns, `MAX_PERMITS`) before an algorithm sees them.
#[test]
fn extreme_samples_and_late_clocks_never_panic() {
    for start in [
        0,
        1 << 32,
        1 << 39,
        u64::MAX - 3_600_000_000_000,
        u64::MAX - 10,
    ] {
        for mut algorithm in algorithms() {
            let mut rng = SmallRng::seed_from_u64(start);
            let mut t = start;
            for blocked in 0..5_000u64 {
                let latency = match rng.random_range(0..100) {
                    0 => Duration::ZERO,
                    1 => Duration::MAX,
                    2 => Duration::from_nanos(u64::MAX),
                    _ => Duration::from_micros(rng.random_range(1..100_000)),
                };
                let in_flight = match rng.random_range(0..50) {
                    0 => usize::MAX,
                    _ => rng.random_range(0..300),
                };
                let sample = if rng.random_range(0..10) == 0 {
                    Sample::dropped(Nanos::new(t), latency, in_flight)
                } else {
                    Sample::success(Nanos::new(t), latency, in_flight)
                };
                algorithm.on_demand(blocked * 3);
                // Of those, turned away at once: none, some, or (a count from elsewhere) more.
                algorithm.on_turned_away(blocked * (start % 5));
                let limit = algorithm.on_sample(&sample);
                assert!(limit >= 1, "{}: limit {limit}", algorithm.name());
                t = t.saturating_add(rng.random_range(0..2_000_000));
            }
        }
    }
}
