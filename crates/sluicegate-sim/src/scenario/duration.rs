//! Durations in scenario files: a number and a unit, `"800us"`, `"50ms"`, `"1.5s"`, `"2m"`.

use serde::{Deserialize, Deserializer};
use std::time::Duration;

/// Parses `"50ms"`-style text: a non-negative decimal number followed by `us`, `ms`, `s` or `m`.
///
/// # Errors
///
/// Text that is not a number with one of those units.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        _ => {
            return Err(format!(
                "`{text}`: a duration needs a unit: us, ms, s or m (e.g. \"50ms\")"
            ));
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}`: not a duration (e.g. \"50ms\", \"1.5s\")"))?;
    Duration::try_from_secs_f64(value * scale).map_err(|_| format!("`{text}`: out of range"))
}

/// Serde adapter for a required duration field.
///
/// # Errors
///
/// As [`parse_duration`].
pub fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(d)?;
    parse_duration(&text).map_err(serde::de::Error::custom)
}

/// Serde adapter for an `Option<Duration>` field (with `#[serde(default)]`).
///
/// # Errors
///
/// As [`parse_duration`].
pub fn de_opt_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    de_duration(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_each_unit_and_reject_bare_numbers() {
        assert_eq!(parse_duration("800us"), Ok(Duration::from_micros(800)));
        assert_eq!(parse_duration("50ms"), Ok(Duration::from_millis(50)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("50").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("fast ms").is_err());
    }
}
