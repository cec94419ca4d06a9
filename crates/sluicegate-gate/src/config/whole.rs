//! Whole-number settings (`max_concurrency`, `max_queue`, `workers`, …): any integer TOML
//! can write is read, and one outside the setting's range is refused in the gate's words
//! where it is written — not serde's "invalid value: integer `…` as i128, expected usize"
//! for a number beyond 64 bits, nor "expected u32" for one beyond 32.

use serde::Deserialize;
use serde::de::{Deserializer, Error as _, Visitor};
use toml::Spanned;

/// The range of a whole-number setting, and what to say when a value is outside it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds {
    /// The key, as written in the file.
    pub(super) key: &'static str,
    /// The smallest value.
    pub(super) min: u64,
    /// The largest value.
    pub(super) max: u64,
    /// Appended to a refusal of a value below `min` (empty, or starting with `: ` or ` (`).
    pub(super) below: &'static str,
    /// Appended to a refusal of a value above `max`.
    pub(super) above: &'static str,
}

impl Bounds {
    /// `n` when it is within the bounds, else why not.
    ///
    /// # Errors
    ///
    /// `n` below `min` or above `max`, in words naming the key and the bound.
    pub(super) fn check(&self, n: i128) -> Result<u64, String> {
        let Bounds {
            key,
            min,
            max,
            below,
            above,
        } = *self;
        if n < i128::from(min) {
            return Err(format!("`{key}` must be at least {min}, not {n}{below}"));
        }
        u64::try_from(n)
            .ok()
            .filter(|&n| n <= max)
            .ok_or_else(|| format!("`{key}` must be at most {max}, not {n}{above}"))
    }

    /// As [`check`](Self::check), for a value the quick form's flags (or code) set.
    ///
    /// # Errors
    ///
    /// As [`check`](Self::check)'s.
    pub(super) fn check_usize(&self, n: usize) -> Result<(), String> {
        self.check(i128::try_from(n).unwrap_or(i128::MAX)).map(drop)
    }

    /// The refusal of a number too large to print: beyond what TOML reads (128 bits), or
    /// than the setting's type holds.
    pub(super) fn too_large(&self) -> String {
        format!("`{}` must be at most {}{}", self.key, self.max, self.above)
    }

    /// Reads the setting's value (any integer) and checks it; an error is located at the
    /// value by the TOML parser.
    ///
    /// # Errors
    ///
    /// A value that is no integer, or one outside the bounds.
    pub(super) fn read<'de, T, D>(&self, d: D) -> Result<T, D::Error>
    where
        T: TryFrom<u64>,
        D: Deserializer<'de>,
    {
        let n = self.check_whole(Whole::deserialize(d)?);
        self.fit(n.map_err(D::Error::custom)?)
            .map_err(D::Error::custom)
    }

    /// As [`read`](Self::read), for a count of bytes: nginx's sizes (`"64k"`, `"1m"`), which
    /// an operator of a setting named after nginx's writes, are refused with the number to
    /// write instead of "expected a whole number, like 8" (trial117).
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read)'s.
    pub(super) fn read_bytes<'de, T, D>(&self, d: D) -> Result<T, D::Error>
    where
        T: TryFrom<u64>,
        D: Deserializer<'de>,
    {
        let n = self.bytes(Bytes::deserialize(d)?);
        self.fit(n.map_err(D::Error::custom)?)
            .map_err(D::Error::custom)
    }

    /// As [`read_bytes`](Self::read_bytes), keeping where the value stands in the file.
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read)'s.
    pub(super) fn read_bytes_spanned<'de, T, D>(&self, d: D) -> Result<Spanned<T>, D::Error>
    where
        T: TryFrom<u64>,
        D: Deserializer<'de>,
    {
        let n = Spanned::<Bytes>::deserialize(d)?;
        let span = n.span();
        let n = self.bytes(n.into_inner()).map_err(D::Error::custom)?;
        Ok(Spanned::new(span, self.fit(n).map_err(D::Error::custom)?))
    }

    /// A count of bytes as written, checked: a text is refused with the number to write.
    fn bytes(&self, n: Bytes) -> Result<u64, String> {
        match n {
            Bytes::Number(n) => self.check_whole(n),
            Bytes::Text(text) => Err(self.not_bytes(&text)),
        }
    }

    /// Why `text` is refused as a count of bytes: the number to write for one of nginx's
    /// sizes, or for a number in quotes.
    fn not_bytes(&self, text: &str) -> String {
        let key = self.key;
        let trimmed = text.trim();
        let (digits, unit) = match trimmed.char_indices().last() {
            Some((i, 'k' | 'K')) => (&trimmed[..i], 1u128 << 10),
            Some((i, 'm' | 'M')) => (&trimmed[..i], 1 << 20),
            Some((i, 'g' | 'G')) => (&trimmed[..i], 1 << 30),
            _ => (trimmed, 1),
        };
        let size = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse::<u128>().ok())
            .flatten()
            .and_then(|n| n.checked_mul(unit));
        match size {
            // A size below the least (nginx's `0`, which is "no bound" for some of its
            // sizes): refused as the number written bare would be, with the setting's hint.
            Some(n) if n < u128::from(self.min) => format!(
                "`{key}` must be at least {}, not \"{text}\"{}",
                self.min, self.below
            ),
            Some(n) => format!(
                "`{key}` takes whole bytes, without quotes or nginx's units: write `{key} = {n}` for \"{text}\""
            ),
            None => format!("`{key}` takes a whole number of bytes, like 65536, not \"{text}\""),
        }
    }

    /// [`check`](Self::check) for a number as read; one held only roughly is refused
    /// without being quoted, as the number quoted would not be the one written.
    fn check_whole(&self, n: Whole) -> Result<u64, String> {
        match n {
            Whole::Exact(n) => self.check(n),
            Whole::Beyond { negative: false } => Err(self.too_large()),
            Whole::Beyond { negative: true } => Err(format!(
                "`{}` must be at least {}{}",
                self.key, self.min, self.below
            )),
        }
    }

    /// `n` in the setting's type (every setting's bounds fit its type).
    fn fit<T: TryFrom<u64>>(&self, n: u64) -> Result<T, String> {
        T::try_from(n).map_err(|_| self.too_large())
    }

    /// Reads a whole number written as text (a flag's value) and checks it.
    ///
    /// # Errors
    ///
    /// Text that is no whole number, or a number outside the bounds.
    pub(super) fn parse(&self, text: &str) -> Result<u64, String> {
        use std::num::IntErrorKind;
        let n = match text.trim().parse::<i128>() {
            Ok(n) => n,
            Err(e) if *e.kind() == IntErrorKind::PosOverflow => return Err(self.too_large()),
            Err(e) if *e.kind() == IntErrorKind::NegOverflow => i128::MIN,
            Err(_) => {
                return Err(format!(
                    "`{}` takes a whole number, like 8, not `{text}`",
                    self.key
                ));
            }
        };
        self.check(n)
    }

    /// As [`read`](Self::read), keeping where the value is written.
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read)'s.
    pub(super) fn read_spanned<'de, T, D>(&self, d: D) -> Result<Spanned<T>, D::Error>
    where
        T: TryFrom<u64>,
        D: Deserializer<'de>,
    {
        let n = Spanned::<Whole>::deserialize(d)?;
        let span = n.span();
        let n = self.check_whole(n.into_inner()).map_err(D::Error::custom)?;
        Ok(Spanned::new(span, self.fit(n).map_err(D::Error::custom)?))
    }
}

/// Any integer a setting is given in.
enum Whole {
    /// The number written.
    Exact(i128),
    /// A number beyond what the parser holds exactly — beyond `i128`, or beyond 64 bits
    /// in JSON, whose parser reads it as a float — and so beyond every bound: its sign.
    Beyond { negative: bool },
}

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Integer;
        impl Visitor<'_> for Integer {
            type Value = Whole;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a whole number, like 8")
            }
            fn visit_i64<E>(self, n: i64) -> Result<Whole, E> {
                Ok(Whole::Exact(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Whole, E> {
                Ok(Whole::Exact(n.into()))
            }
            fn visit_i128<E>(self, n: i128) -> Result<Whole, E> {
                Ok(Whole::Exact(n))
            }
            fn visit_u128<E>(self, n: u128) -> Result<Whole, E> {
                Ok(i128::try_from(n).map_or(Whole::Beyond { negative: false }, Whole::Exact))
            }
            // JSON's parser reads an integer beyond 64 bits as a float, rounded: beyond
            // every bound, and not quoted. A float within 64 bits (`8.0`) stays refused as
            // no whole number.
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Whole, E> {
                if n.fract() == 0.0 && n.abs() >= 2f64.powi(64) {
                    return Ok(Whole::Beyond { negative: n < 0.0 });
                }
                Err(E::invalid_type(serde::de::Unexpected::Float(n), &self))
            }
        }
        d.deserialize_any(Integer)
    }
}

/// A count of bytes as written: a whole number, or a text (`"64k"`, nginx's way), refused
/// with the number to write by [`Bounds::bytes`].
enum Bytes {
    Number(Whole),
    Text(String),
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Count;
        impl Visitor<'_> for Count {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a whole number of bytes, like 65536")
            }
            fn visit_i64<E>(self, n: i64) -> Result<Bytes, E> {
                Ok(Bytes::Number(Whole::Exact(n.into())))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Bytes, E> {
                Ok(Bytes::Number(Whole::Exact(n.into())))
            }
            fn visit_i128<E>(self, n: i128) -> Result<Bytes, E> {
                Ok(Bytes::Number(Whole::Exact(n)))
            }
            fn visit_u128<E>(self, n: u128) -> Result<Bytes, E> {
                Ok(Bytes::Number(
                    i128::try_from(n).map_or(Whole::Beyond { negative: false }, Whole::Exact),
                ))
            }
            fn visit_str<E>(self, text: &str) -> Result<Bytes, E> {
                Ok(Bytes::Text(text.to_owned()))
            }
        }
        d.deserialize_any(Count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUEUE: Bounds = Bounds {
        key: "max_queue",
        min: 0,
        max: 1 << 20,
        below: "",
        above: ": each waits",
    };

    #[test]
    fn a_flag_is_read_and_checked_in_the_same_words() {
        assert_eq!(QUEUE.parse("8"), Ok(8));
        assert_eq!(QUEUE.parse(" 0 "), Ok(0));
        assert_eq!(QUEUE.parse("-1"), QUEUE.check(-1));
        assert_eq!(
            QUEUE.parse("99999999999999999999999999999999999999999"),
            Err(QUEUE.too_large())
        );
        assert_eq!(
            QUEUE.parse("8.5").unwrap_err(),
            "`max_queue` takes a whole number, like 8, not `8.5`"
        );
    }

    #[test]
    fn json_reads_a_number_beyond_64_bits_as_too_large() {
        let read =
            |json: &str| QUEUE.read::<usize, _>(&mut serde_json::Deserializer::from_str(json));
        assert_eq!(read("12").unwrap(), 12);
        // Not quoted: JSON's parser holds it as a float, which is not the number written
        // (123456789012345678901 would be quoted as 123456789012345683968).
        let e = read("123456789012345678901").unwrap_err().to_string();
        assert_eq!(e, QUEUE.too_large());
        let e = read("-123456789012345678901").unwrap_err().to_string();
        assert_eq!(e, "`max_queue` must be at least 0");
        assert!(
            read("8.0")
                .unwrap_err()
                .to_string()
                .contains("expected a whole number")
        );
    }

    #[test]
    fn a_value_is_checked_against_both_bounds() {
        assert_eq!(QUEUE.check(0), Ok(0));
        assert_eq!(QUEUE.check(1 << 20), Ok(1 << 20));
        assert_eq!(
            QUEUE.check(-1).unwrap_err(),
            "`max_queue` must be at least 0, not -1"
        );
        assert_eq!(
            QUEUE.check(i128::MAX).unwrap_err(),
            format!(
                "`max_queue` must be at most 1048576, not {}: each waits",
                i128::MAX
            )
        );
        assert_eq!(
            QUEUE.check_usize(usize::MAX).unwrap_err(),
            QUEUE.check(i128::from(u64::MAX)).unwrap_err()
        );
    }
}
