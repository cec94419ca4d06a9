//! The gate's config: a TOML file (or the quick form's flags), parsed, checked, and errors
//! located at `file:line:col` with what to write instead.

/// Deserializes each of the listed types from a TOML string through its `FromStr`, so a bad
/// value is refused with that type's own message (and located by the TOML parser); a value
/// that is no string is refused as "expected" what follows the type (`10` for `"10s"`).
macro_rules! from_string {
    ($($t:ty => $expected:literal),*) => {$(
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Text;
                impl serde::de::Visitor<'_> for Text {
                    type Value = $t;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expected)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$t, E> {
                        s.parse().map_err(E::custom)
                    }
                }
                d.deserialize_str(Text)
            }
        }
    )*};
}

mod load;
mod model;
mod values;
mod whole;
mod wire;

pub use load::{ConfigError, parse, read, validate, warnings};
pub use model::{
    Adaptive, Admin, Algorithm, Bypass, Config, OnFailure, PerKeyRate, Pool, QueueOrder, RateMode,
    Route, Scope, Store,
};
pub use values::{Dur, KeySource, Rate};
pub use wire::{Cidr, ListenAddr, UpstreamUrl, redacted_url};
