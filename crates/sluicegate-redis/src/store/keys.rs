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

/// The keys of a keyed limit, one per client: `{prefix:name:DIGEST}:kind`, where `DIGEST` is
/// the client key's [`digest`] in 32 lower-case hex digits. Each client's key is a hash tag
/// of its own, so a cluster spreads the clients over its slots. No key of a keyed limit is
/// another limit's: the digest has a fixed length, so the name ends 33 characters before
/// the brace, and a keyed limit's kinds are not those of the other limits (`ktatf64`, not
/// `tatf64`), so a limit named `a:0123…` cannot meet client `0123…` of limit `a` either.
#[derive(Debug)]
pub(crate) struct PerClient {
    /// `{prefix:name:` (prefix escaped).
    head: String,
    /// `}:kind`.
    tail: String,
}

impl PerClient {
    /// The keys of limit `name` of kind `kind`, after checking that `name` can sit inside a
    /// hash tag.
    pub(crate) fn new(prefix: &str, name: &str, kind: &str) -> Result<Self, Error> {
        let whole = key(prefix, name, kind)?;
        let (head, tail) = whole.split_at(whole.len() - kind.len() - 2);
        Ok(PerClient {
            head: format!("{head}:"),
            tail: tail.to_owned(),
        })
    }

    /// The key of the client whose key's digest is `digest`.
    pub(crate) fn of(&self, digest: &Digest) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(self.head.len() + 32 + self.tail.len());
        out.push_str(&self.head);
        for b in digest {
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
        out.push_str(&self.tail);
        out
    }
}

/// A client key's digest: the first 128 bits of its SHA-1.
pub(crate) type Digest = [u8; 16];

/// The digest of the client key `bytes`: what a keyed limit stores it under, whatever its
/// length (a header value of 16 KiB makes a key of the same ~60 bytes as an address). A
/// client that wants its requests counted as another client's needs a second preimage of
/// that client's digest (2^128 work); SHA-1's known weakness is collisions between two
/// inputs both chosen by the attacker, which only merges two keys of its own. Every
/// instance computes the same digest, with no secret to share.
pub(crate) fn digest(bytes: &[u8]) -> Digest {
    let full = sha1_smol::Sha1::from(bytes).digest().bytes();
    let mut out = [0; 16];
    out.copy_from_slice(&full[..16]);
    out
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
    fn a_client_key_is_its_digest_in_a_hash_tag_of_its_own() {
        let keys = PerClient::new("a:b", "api", "ktatf64").unwrap();
        let d = digest(b"10.0.0.1");
        let made = keys.of(&d);
        assert_eq!(made.len(), "{a%3Ab:api:}:ktatf64".len() + 32, "{made}");
        assert!(made.starts_with("{a%3Ab:api:"), "{made}");
        assert!(made.ends_with("}:ktatf64"), "{made}");
        let hex = &made["{a%3Ab:api:".len()..made.len() - "}:ktatf64".len()];
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        // The SHA-1 of "abc" is a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d.
        assert_eq!(
            keys.of(&digest(b"abc")),
            "{a%3Ab:api:a9993e364706816aba3e25717850c26c}:ktatf64"
        );
        // Any bytes, of any length: the same small key, no brace but the tag's own.
        let hostile = [b"}{:\0\r\n".repeat(2000), vec![0xff; 16384], Vec::new()];
        for bytes in &hostile {
            let k = keys.of(&digest(bytes));
            assert_eq!(k.len(), made.len());
            assert_eq!(k.matches(['{', '}']).count(), 2, "{k}");
        }
        assert!(PerClient::new("sg", "a{", "ktatf64").is_err());
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
