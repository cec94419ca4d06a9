//! The built-in scenario files, compiled in so the binary runs from any directory.

macro_rules! files {
    ($($name:literal),* $(,)?) => {
        /// `(name, TOML text)` of every built-in scenario, in scorecard order.
        pub(super) const FILES: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../../scenarios/", $name, ".toml")))),*
        ];
    };
}

files![
    // Under capacity: no rejections, latency as with no limit.
    "steady_0.5x",
    "steady_0.8x_200w",
    "cache_0.8x",
    "two_speeds_0.8x",
    "heavy_tail_0.8x",
    "report_generator_0.5x",
    "shared_service_0.7x",
    "no_queue_0.5x",
    "no_queue_0.8x",
    "self_shedding_0.8x",
    "random_drops_0.8x",
    // Overloaded, 5 to 2000 workers, 2 ms to 2 s of service.
    "overload_3x",
    "overload_10x",
    "cache_3x",
    "many_workers_2x",
    "huge_pool_1.5x",
    "few_slow_workers_3x",
    "report_generator_1.5x",
    "demo_2x",
    "demo_busy_2x",
    "floor_service_3x",
    "uniform_1.5x",
    "two_speeds_2x",
    "heavy_tail_3x",
    "bursty",
    "closed_loop",
    "load_steps",
    "failures",
    "fast_failures_unseen",
    "no_queue_3x",
    "no_queue_fixed_2x",
    "self_shedding_2x",
    "random_drops_1.5x",
    "flapping_failures_1.5x",
    // The upstream changes under load.
    "capacity_halves",
    "capacity_fifth",
    "latency_spike",
    "network_delay_spike",
    "self_shedding_grows",
    "self_shedding_shrinks",
    "maintenance_0.8x",
    // For --threads (real time); in virtual time like any other.
    "threaded_overload",
];
