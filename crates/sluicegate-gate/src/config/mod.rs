//! The gate's config: a TOML file (or the quick form's flags), parsed, checked, and errors
//! located at `file:line:col` with what to write instead.

/// Deserializes each of the listed types from a TOML string through its `FromStr`, so a bad
/// value is refused with that type's own message (and located by the TOML parser).
macro_rules! from_string {
    ($($t:ty),*) => {$(
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    )*};
}

mod load;
mod model;
mod values;
mod wire;

pub use load::{ConfigError, parse, read, validate, warnings};
pub use model::{
    Adaptive, Admin, Algorithm, Bypass, Config, OnFailure, PerKeyRate, Pool, QueueOrder, RateMode,
    Route, Scope, Store,
};
pub use values::{Dur, KeySource, Rate};
pub use wire::{Cidr, ListenAddr, UpstreamUrl, redacted_url};
