//! The gate's config: a TOML file (or the quick form's flags), parsed, checked, and errors
//! located at `file:line:col` with what to write instead.

mod load;
mod model;
mod values;
mod wire;

pub use load::{ConfigError, parse, read, validate};
pub use model::{Adaptive, Admin, Algorithm, Bypass, Config, PerKeyRate, Pool, QueueOrder, Route};
pub use values::{Dur, KeySource, Rate};
pub use wire::{Cidr, ListenAddr, UpstreamUrl};
