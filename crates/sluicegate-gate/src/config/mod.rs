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

mod adaptive;
mod load;
mod model;
mod prefix;
mod values;
mod whole;
mod wire;

pub use adaptive::AdaptiveBounds;
pub use load::{ConfigError, READ_DEADLINE, parse, read, read_secret, validate, warnings};
pub use model::{
    Adaptive, Admin, Algorithm, Bypass, ClientAddress, ClientHeader, Config, OnFailure, PerKeyRate,
    Pool, QueueOrder, RateMode, Route, Scope, Store,
};
pub use values::{Dur, KeySource, Rate};
pub use wire::{Cidr, ListenAddr, UpstreamUrl, redacted_url};

/// Whole numbers given elsewhere than in a file — the admin API's JSON, the quick form's
/// flags — read within the same bounds and refused in the same words as a file's.
pub mod whole_numbers {
    use super::model::bounds::{MAX_CONCURRENCY, MAX_QUEUE, WORKERS};
    use super::whole::Bounds;

    /// `max_concurrency` in JSON (serde's `deserialize_with`, for an optional field).
    ///
    /// # Errors
    ///
    /// No whole number, or one outside the file's bounds.
    pub fn max_concurrency<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Option<usize>, D::Error> {
        MAX_CONCURRENCY.read(d).map(Some)
    }

    /// `max_queue` in JSON, as [`max_concurrency`].
    ///
    /// # Errors
    ///
    /// As [`max_concurrency`]'s.
    pub fn max_queue<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
        MAX_QUEUE.read(d).map(Some)
    }

    /// `--max-concurrency N` (clap's `value_parser`).
    ///
    /// # Errors
    ///
    /// Text that is no whole number, or a number outside the file's bounds.
    pub fn max_concurrency_flag(text: &str) -> Result<usize, String> {
        flag(MAX_CONCURRENCY, "--max-concurrency", text)
    }

    /// `--max-queue N`, as [`max_concurrency_flag`].
    ///
    /// # Errors
    ///
    /// As [`max_concurrency_flag`]'s.
    pub fn max_queue_flag(text: &str) -> Result<usize, String> {
        flag(MAX_QUEUE, "--max-queue", text)
    }

    /// `--workers N`, as [`max_concurrency_flag`].
    ///
    /// # Errors
    ///
    /// As [`max_concurrency_flag`]'s.
    pub fn workers_flag(text: &str) -> Result<usize, String> {
        flag(WORKERS, "--workers", text)
    }

    fn flag(bounds: Bounds, key: &'static str, text: &str) -> Result<usize, String> {
        let bounds = Bounds { key, ..bounds };
        let n = bounds.parse(text)?;
        usize::try_from(n).map_err(|_| bounds.too_large())
    }
}
