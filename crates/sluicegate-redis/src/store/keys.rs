//! Key names: every key of one limit shares a hash tag, so a cluster keeps them on one slot.

use crate::Error;

/// The key `{prefix:name}:kind`, after checking that `name` can sit inside a hash tag.
pub(crate) fn key(prefix: &str, name: &str, kind: &str) -> Result<String, Error> {
    if name.is_empty() || name.contains(['{', '}']) {
        return Err(Error::Name(name.to_owned()));
    }
    Ok(format!("{{{prefix}:{name}}}:{kind}"))
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
}
