//! Numbers to and from the Lua scripts as little-endian doubles (`struct` format `<d…`).
//!
//! A packed argument is one string the script unpacks with one `struct.unpack`, where decimal
//! arguments cost Redis a string per argument and a `strtod` per use; a packed reply is one
//! bulk string, where an array reply costs Redis a conversion per element. Every value here
//! is a whole number below 2^53, exact as a double.

/// `values` as little-endian doubles, one argument for `struct.unpack('<d…', ARGV[i])`.
pub(crate) fn pack<const N: usize>(values: [u64; N]) -> Vec<u8> {
    // Below 2^53 (the builders' ranges), so the conversion is exact.
    values
        .iter()
        .flat_map(|&v| (v as f64).to_le_bytes())
        .collect()
}

/// A reply of little-endian doubles, each a whole number; `None` for anything else.
pub(crate) fn unpack(reply: &[u8]) -> Option<Vec<i64>> {
    if !reply.len().is_multiple_of(8) {
        return None;
    }
    reply
        .chunks_exact(8)
        .map(|b| {
            let v = f64::from_le_bytes(b.try_into().ok()?);
            // Whole and within i64: exact (checked by converting back).
            let i = v as i64;
            (i as f64 == v).then_some(i)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{pack, unpack};

    #[test]
    fn whole_numbers_below_2_53_round_trip_and_anything_else_is_refused() {
        let max = (1u64 << 53) - 1;
        let packed = pack([0, 1, max]);
        assert_eq!(packed.len(), 24);
        assert_eq!(unpack(&packed), Some(vec![0, 1, (1 << 53) - 1]));
        assert_eq!(unpack(&(-1f64).to_le_bytes()), Some(vec![-1]));
        assert_eq!(unpack(&0.5f64.to_le_bytes()), None);
        assert_eq!(unpack(&f64::NAN.to_le_bytes()), None);
        assert_eq!(unpack(&1e300f64.to_le_bytes()), None);
        assert_eq!(unpack(&[0; 7]), None);
        assert_eq!(unpack(&[]), Some(vec![]));
    }
}
