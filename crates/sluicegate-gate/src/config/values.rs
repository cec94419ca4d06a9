//! The humane values a config is written in: durations (`250ms`, `10s`, `2m`), rates
//! (`50/s`, `600/m`) and rate-limit key sources (`client_ip`, `header:x-api-key`).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use sluicegate::rate::Quota;

/// A duration written with a unit: `250ms`, `10s`, `2m`, `1h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dur(pub Duration);

impl Dur {
    /// The longest duration a config may give: no timeout, grace period or budget of the
    /// gate is meant to be longer, and a bigger value is a slipped digit.
    pub const MAX: Dur = Dur(Duration::from_secs(24 * 3600));
}

impl FromStr for Dur {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        let hint = "write a whole number and a unit: `250ms`, `10s`, `2m` or `1h`";
        let too_long =
            || format!("duration `{s}` is more than a day, surely a typo: write at most `24h`");
        // Digits past u64 are a whole number all the same: too long, not malformed.
        let n: u64 = match digits.parse() {
            Ok(n) => n,
            Err(_) if !digits.is_empty() => return Err(too_long()),
            Err(_) => return Err(format!("invalid duration `{s}`: {hint}")),
        };
        let d = match unit {
            "ms" => Some(Duration::from_millis(n)),
            "s" => Some(Duration::from_secs(n)),
            "m" => n.checked_mul(60).map(Duration::from_secs),
            "h" => n.checked_mul(3600).map(Duration::from_secs),
            "" => return Err(format!("duration `{s}` has no unit: {hint}")),
            _ => return Err(format!("unknown unit in duration `{s}`: {hint}")),
        };
        match d {
            Some(d) if d <= Dur::MAX.0 => Ok(Dur(d)),
            _ => Err(too_long()),
        }
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        match ms {
            _ if ms.is_multiple_of(3_600_000) && ms > 0 => write!(f, "{}h", ms / 3_600_000),
            _ if ms.is_multiple_of(60_000) && ms > 0 => write!(f, "{}m", ms / 60_000),
            _ if ms.is_multiple_of(1000) => write!(f, "{}s", ms / 1000),
            _ => write!(f, "{ms}ms"),
        }
    }
}

/// A rate: `N/s`, `N/m` or `N/h` (`0/s` denies everything).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Requests per period.
    pub count: u32,
    /// The period: one second, minute or hour.
    pub period: Duration,
}

impl Rate {
    /// The library quota of this rate, bursts of at most `burst` when given.
    pub fn quota(&self, burst: Option<u32>) -> Quota {
        // `from_str` refused counts a quota cannot hold. A count of 0 denies everything and
        // keeps its period, which `RateLimit-Policy` announces (`0/m`: `w=60`, not the
        // deny-all quota's second).
        let quota = Quota::new(self.count, self.period).unwrap_or_else(|_| Quota::deny_all());
        match burst.and_then(std::num::NonZeroU32::new) {
            Some(b) => quota.with_burst(b),
            None => quota,
        }
    }
}

impl FromStr for Rate {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let hint = "write a count per unit: `50/s`, `600/m` or `1000/h`";
        let (count, unit) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("invalid rate `{s}`: {hint}"))?;
        let (unit, period) = match unit.trim() {
            "s" => ("s", Duration::from_secs(1)),
            "m" => ("m", Duration::from_secs(60)),
            "h" => ("h", Duration::from_secs(3600)),
            _ => return Err(format!("unknown unit in rate `{s}`: {hint}")),
        };
        let count = count.trim();
        // The most a period holds: one request a nanosecond, and what a count can hold.
        let most = u32::try_from(period.as_nanos()).unwrap_or(u32::MAX);
        let too_high = || format!("rate `{s}` is too high: write at most `{most}/{unit}`");
        // Digits past u32 are a count all the same: too high, not malformed.
        let count: u32 = match count.parse() {
            Ok(n) => n,
            Err(_) if !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()) => {
                return Err(too_high());
            }
            Err(_) => return Err(format!("invalid count in rate `{s}`: {hint}")),
        };
        if count > most || count > 0 && Quota::new(count, period).is_err() {
            return Err(too_high());
        }
        Ok(Rate { count, period })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.period.as_secs() {
            1 => "s",
            60 => "m",
            _ => "h",
        };
        write!(f, "{}/{unit}", self.count)
    }
}

/// What names the client a per-key rate limit counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// The peer address of the connection, IPv6 grouped by /64.
    ClientIp,
    /// The value of a request header (lowercase name).
    Header(http::HeaderName),
}

impl FromStr for KeySource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let hint = "write `client_ip` or `header:NAME` (such as `header:x-api-key`)";
        if s == "client_ip" {
            return Ok(KeySource::ClientIp);
        }
        match s.strip_prefix("header:") {
            Some(name) => http::HeaderName::from_bytes(name.trim().as_bytes())
                .map(KeySource::Header)
                .map_err(|_| format!("invalid header name in key `{s}`: {hint}")),
            None => Err(format!("unknown key source `{s}`: {hint}")),
        }
    }
}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::ClientIp => f.write_str("client_ip"),
            KeySource::Header(h) => write!(f, "header:{h}"),
        }
    }
}

from_string!(
    Dur => "a duration with its unit, like \"10s\"",
    Rate => "a rate, like \"50/s\"",
    KeySource => "\"client_ip\" or \"header:NAME\""
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_with_their_unit() {
        assert_eq!(
            "250ms".parse::<Dur>().unwrap().0,
            Duration::from_millis(250)
        );
        assert_eq!("10s".parse::<Dur>().unwrap().0, Duration::from_secs(10));
        assert_eq!("2m".parse::<Dur>().unwrap().0, Duration::from_secs(120));
        assert!("10".parse::<Dur>().unwrap_err().contains("no unit"));
        assert!("1.5s".parse::<Dur>().is_err());
        assert!(format!("{}m", u64::MAX).parse::<Dur>().is_err());
        assert_eq!(Dur(Duration::from_secs(120)).to_string(), "2m");
        assert_eq!(Dur(Duration::from_millis(1500)).to_string(), "1500ms");
    }

    #[test]
    fn rates_read_per_second_minute_hour() {
        let r: Rate = "20/s".parse().unwrap();
        assert_eq!((r.count, r.period), (20, Duration::from_secs(1)));
        assert_eq!("600/m".parse::<Rate>().unwrap().to_string(), "600/m");
        assert!("20/d".parse::<Rate>().is_err());
        assert!("20".parse::<Rate>().is_err());
        assert_eq!("0/s".parse::<Rate>().unwrap().quota(None).burst(), 0);
        assert!(
            "4294967295/s"
                .parse::<Rate>()
                .unwrap_err()
                .contains("too high")
        );
        assert_eq!(
            "4294967295/h"
                .parse::<Rate>()
                .unwrap()
                .quota(Some(3))
                .burst(),
            3
        );
    }

    /// trial34's leftover, taken in trial102: `0/m` became the library's deny-all quota, whose
    /// period is a second, so a per-key `rate = "0/m"` announced `RateLimit-Policy: ..;q=0;w=1`.
    /// The quota keeps the period written, and still denies everything.
    #[test]
    fn a_rate_of_zero_keeps_its_period() {
        for (rate, period) in [("0/s", 1), ("0/m", 60), ("0/h", 3600)] {
            let quota = rate.parse::<Rate>().unwrap().quota(Some(5));
            assert_eq!(
                (quota.count(), quota.burst(), quota.period()),
                (0, 0, Duration::from_secs(period)),
                "{rate}"
            );
            assert!(
                sluicegate::rate::Gcra::new(quota).check().is_denied(),
                "{rate}"
            );
        }
    }

    /// Review 26: a whole number too large to read was told to "write a whole number"; it is
    /// one, and what it needs is the range.
    #[test]
    fn numbers_too_large_to_read_are_told_the_range() {
        let e = "90000000000000000000s".parse::<Dur>().unwrap_err();
        assert!(e.contains("more than a day") && e.contains("`24h`"), "{e}");
        let e = "4294967296/s".parse::<Rate>().unwrap_err();
        assert!(e.contains("write at most `1000000000/s`"), "{e}");
        let e = "99999999999999999999999/m".parse::<Rate>().unwrap_err();
        assert!(e.contains("write at most `4294967295/m`"), "{e}");
        let e = "4294967295/s".parse::<Rate>().unwrap_err();
        assert!(e.contains("write at most `1000000000/s`"), "{e}");
        assert_eq!("1000000000/s".parse::<Rate>().unwrap().count, 1_000_000_000);
        // Not a number at all: as before.
        assert!("12x3s".parse::<Dur>().unwrap_err().contains("unknown unit"));
        assert!("a/s".parse::<Rate>().unwrap_err().contains("invalid count"));
    }

    #[test]
    fn key_sources() {
        assert_eq!("client_ip".parse::<KeySource>(), Ok(KeySource::ClientIp));
        assert_eq!(
            "header:X-Api-Key".parse::<KeySource>().unwrap().to_string(),
            "header:x-api-key"
        );
        assert!("header:bad name".parse::<KeySource>().is_err());
        assert!("cookie".parse::<KeySource>().is_err());
    }
}
