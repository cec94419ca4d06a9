//! Key names: every key of one limit shares a hash tag, so a cluster keeps them on one slot.
//!
//! The format is `{prefix:name}:kind`, with `%` and `:` in the prefix written `%25` and
//! `%3A`: the first `:` inside the braces then always ends the prefix, so two limits get the
//! same key only when their prefixes and names are both the same. (Before, the prefix `a`
//! with the name `b:c` and the prefix `a:b` with the name `c` both made `{a:b:c}:…`, and the
//! two limits shared one counter.) A prefix without `%` or `:` (the default `sluicegate`
//! included) makes the same keys as before. Names may hold `:` (the prefix ends first);
//! neither part may hold a brace (it would end the hash tag early).

use std::borrow::Cow;

use crate::Error;

/// The key `{prefix:name}:kind` (prefix escaped, see the module docs), after checking that
/// `name` can sit inside a hash tag.
pub(crate) fn key(prefix: &str, name: &str, kind: &str) -> Result<String, Error> {
    if name.is_empty() || name.contains(['{', '}']) {
        return Err(Error::Name(name.to_owned()));
    }
    let prefix = escape(prefix);
    Ok(format!("{{{prefix}:{name}}}:{kind}"))
}

/// `prefix` with `%` written `%25` and `:` written `%3A` (borrowed when it holds neither).
fn escape(prefix: &str) -> Cow<'_, str> {
    if !prefix.contains(['%', ':']) {
        return Cow::Borrowed(prefix);
    }
    Cow::Owned(prefix.replace('%', "%25").replace(':', "%3A"))
}

/// The ACL pattern (`ACL SETUSER ... &pattern`) of every release channel of the store with
/// `prefix`: its escaped prefix, with the glob's own characters escaped too.
pub(crate) fn channel_pattern(prefix: &str) -> String {
    let mut tag = String::new();
    for c in escape(prefix).chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            tag.push('\\');
        }
        tag.push(c);
    }
    format!("{{{tag}:*}}:released")
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

    #[test]
    fn the_channel_pattern_matches_the_channels_of_its_prefix_only() {
        assert_eq!(channel_pattern("sluicegate"), "{sluicegate:*}:released");
        assert_eq!(channel_pattern("a:b*"), "{a%3Ab\\*:*}:released");
    }

    #[test]
    fn no_two_prefix_and_name_pairs_make_one_key() {
        assert_eq!(key("a", "b:c", "k").unwrap(), "{a:b:c}:k");
        assert_eq!(key("a:b", "c", "k").unwrap(), "{a%3Ab:c}:k");
        assert_eq!(key("a%3Ab", "c", "k").unwrap(), "{a%253Ab:c}:k");
        let parts = [
            "", "a", "b", ":", "%", "%3A", "a:", ":b", "a:b", "a%b", "%25",
        ];
        let mut seen = std::collections::HashMap::new();
        for prefix in parts {
            for name in parts.iter().filter(|n| !n.is_empty()) {
                let made = key(prefix, name, "k").unwrap();
                if let Some(before) = seen.insert(made.clone(), (prefix, *name)) {
                    panic!("{before:?} and {:?} both make {made}", (prefix, name));
                }
            }
        }
    }
}
