//! Key names: every key of one limit shares a hash tag, so a cluster keeps them on one slot.
//!
//! A key is `{prefix:name}:kind`. The prefix holds no `:`, so the tag's first `:` ends it and
//! no two (prefix, name) pairs spell the same key; names may hold `:`, but no brace.

use crate::Error;

/// The key `{prefix:name}:kind`, after checking that `name` can sit inside a hash tag.
pub(crate) fn key(prefix: &str, name: &str, kind: &str) -> Result<String, Error> {
    if name.is_empty() || name.contains(['{', '}']) {
        return Err(Error::Name(name.to_owned()));
    }
    Ok(format!("{{{prefix}:{name}}}:{kind}"))
}

/// Refuses a prefix that would make keys ambiguous (a `:`) or break their hash tag (a brace).
pub(crate) fn check_prefix(prefix: &str) -> Result<(), Error> {
    if prefix.contains([':', '{', '}']) {
        return Err(Error::Prefix(prefix.to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_one_limit_share_a_hash_tag() {
        assert_eq!(key("sg", "payments", "gcra").unwrap(), "{sg:payments}:gcra");
        assert!(key("sg", "a}b", "gcra").is_err());
        assert!(key("sg", "", "gcra").is_err());
    }

    /// The prefix ends at the key's first `:`, so no prefix and name pair spells another's
    /// key: before, prefix `a` with limit `b:c` and prefix `a:b` with limit `c` both wrote
    /// `{a:b:c}:gcra`, one counter for two limits.
    #[test]
    fn no_two_prefix_and_name_pairs_share_a_key() {
        let pairs = [("a", "b:c"), ("a:b", "c"), ("a", "b"), ("", "a:b")];
        let keys: Vec<_> = pairs
            .iter()
            .filter_map(|(p, n)| check_prefix(p).ok().and(key(p, n, "gcra").ok()))
            .collect();
        let mut distinct = keys.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(keys.len(), distinct.len(), "{keys:?}");
        assert!(check_prefix("a:b").is_err());
        assert!(check_prefix("a{b").is_err());
        assert!(check_prefix("sluicegate").is_ok());
    }
}
