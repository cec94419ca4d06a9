//! The algorithms under test, by name: ours, the Netflix baselines, fixed limits, no limit.

use sluicegate::adaptive::{
    Aimd, AimdConfig, Fixed, Gradient2, Gradient2Config, LimitAlgorithm, LittlesLaw,
    LittlesLawConfig, Vegas, VegasConfig, Windowed, WindowedConfig,
};

fn windowed(inner: impl LimitAlgorithm + 'static) -> Box<dyn LimitAlgorithm> {
    Box::new(Windowed::new(inner, WindowedConfig::default()))
}

/// One contestant of the scorecard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Ours: [`LittlesLaw`] with its defaults.
    Littles,
    /// Netflix Gradient2 with its defaults.
    Gradient2,
    /// Netflix Vegas with its defaults.
    Vegas,
    /// Netflix AIMD with its defaults.
    Aimd,
    /// Gradient2 fed through Netflix-style 1 s windows ([`Windowed`]).
    Gradient2Windowed,
    /// Vegas fed through Netflix-style 1 s windows.
    VegasWindowed,
    /// AIMD fed through Netflix-style 1 s windows.
    AimdWindowed,
    /// A fixed limit equal to the upstream's worker count (the oracle: it knows `c`).
    FixedExact,
    /// A fixed limit twice the worker count.
    FixedDouble,
    /// A fixed limit half the worker count.
    FixedHalf,
    /// A fixed limit of this many permits: what [`crate::ceiling`] tries (not a contestant of
    /// the scorecard, not in [`Algo::ALL`]).
    FixedAt(usize),
    /// No limit at all.
    None,
}

impl Algo {
    /// Every contestant, ours first.
    pub const ALL: [Algo; 11] = [
        Algo::Littles,
        Algo::Gradient2,
        Algo::Vegas,
        Algo::Aimd,
        Algo::Gradient2Windowed,
        Algo::VegasWindowed,
        Algo::AimdWindowed,
        Algo::FixedExact,
        Algo::FixedDouble,
        Algo::FixedHalf,
        Algo::None,
    ];

    /// The name in tables, CSV and charts.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Littles => "littles",
            Algo::Gradient2 => "gradient2",
            Algo::Vegas => "vegas",
            Algo::Aimd => "aimd",
            Algo::Gradient2Windowed => "gradient2_w",
            Algo::VegasWindowed => "vegas_w",
            Algo::AimdWindowed => "aimd_w",
            Algo::FixedExact => "fixed_c",
            Algo::FixedDouble => "fixed_2c",
            Algo::FixedHalf => "fixed_c/2",
            Algo::FixedAt(_) => "fixed_at",
            Algo::None => "none",
        }
    }

    /// A non-oracle baseline: an algorithm that, like ours, is not told the upstream's worker
    /// count (the Netflix algorithms, raw or windowed, and no limit). Ours is judged against
    /// the best of these.
    pub fn is_baseline(self) -> bool {
        !matches!(
            self,
            Algo::Littles
                | Algo::FixedExact
                | Algo::FixedDouble
                | Algo::FixedHalf
                | Algo::FixedAt(_)
        )
    }

    /// What the contestant is, for `--help` and `list`.
    pub fn about(self) -> &'static str {
        match self {
            Algo::Littles => "ours: Little's law (LittlesLaw, defaults)",
            Algo::Gradient2 => "Netflix Gradient2, every sample",
            Algo::Vegas => "Netflix Vegas, every sample",
            Algo::Aimd => "Netflix AIMD, every sample",
            Algo::Gradient2Windowed => "Netflix Gradient2 through 1 s windows",
            Algo::VegasWindowed => "Netflix Vegas through 1 s windows",
            Algo::AimdWindowed => "Netflix AIMD through 1 s windows",
            Algo::FixedExact => "oracle: a fixed limit equal to the worker count",
            Algo::FixedDouble => "a fixed limit twice the worker count (told c)",
            Algo::FixedHalf => "a fixed limit half the worker count (told c)",
            Algo::FixedAt(_) => "a fixed limit of a given size (the ceiling's search)",
            Algo::None => "no limit",
        }
    }

    /// The contestant called `name`, if any.
    pub fn from_name(name: &str) -> Option<Algo> {
        Algo::ALL.into_iter().find(|a| a.name() == name)
    }

    /// A fresh algorithm for an upstream of `workers` workers (fixed limits scale with it).
    pub fn build(self, workers: usize) -> Box<dyn LimitAlgorithm> {
        match self {
            Algo::Littles => Box::new(LittlesLaw::new(LittlesLawConfig::default())),
            Algo::Gradient2 => Box::new(Gradient2::new(Gradient2Config::default())),
            Algo::Vegas => Box::new(Vegas::new(VegasConfig::default())),
            Algo::Aimd => Box::new(Aimd::new(AimdConfig::default())),
            Algo::Gradient2Windowed => windowed(Gradient2::new(Gradient2Config::default())),
            Algo::VegasWindowed => windowed(Vegas::new(VegasConfig::default())),
            Algo::AimdWindowed => windowed(Aimd::new(AimdConfig::default())),
            Algo::FixedExact => Box::new(Fixed::new(workers).named(self.name())),
            Algo::FixedDouble => Box::new(Fixed::new(workers * 2).named(self.name())),
            Algo::FixedHalf => Box::new(Fixed::new((workers / 2).max(1)).named(self.name())),
            Algo::FixedAt(n) => Box::new(Fixed::new(n.max(1)).named(self.name())),
            Algo::None => Box::new(Fixed::unlimited()),
        }
    }
}

impl clap::ValueEnum for Algo {
    fn value_variants<'a>() -> &'a [Self] {
        &Algo::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.about()))
    }
}
