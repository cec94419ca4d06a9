//! A route's `path_prefix`: one a request's path can start with, in the form routes match
//! it (`crate::path`'s normal form), else what to write instead.

use std::fmt::Write as _;

/// `prefix` when a request's normal path can start with it; else why not, with the form to
/// write. A request path holds no raw non-ASCII character, space or control character (hyper
/// refuses such a target with `400`; clients send them percent-encoded), and no `?` or `#`
/// (they end the path: the query is not matched, a fragment never sent), so a prefix with
/// one matches nothing (trial 34, finding 6: `"/é"`, `"/q?x"`, `"/a b"` passed `check`).
pub(super) fn check(prefix: &str) -> Result<(), String> {
    if !prefix.starts_with('/') {
        return Err(format!(
            "route `path_prefix = \"{prefix}\"` must start with `/`"
        ));
    }
    let dead = |why: &str, write: String| {
        format!("route `path_prefix = \"{prefix}\"` would match nothing: {why}: write {write}")
    };
    if let Some(at) = prefix.find(['?', '#']) {
        let (path, mark) = (&prefix[..at], &prefix[at..=at]);
        let why = if mark == "?" {
            "a `?` ends a request's path and starts its query, which routes do not match"
        } else {
            "a `#` starts a fragment, which clients never send"
        };
        return Err(dead(
            why,
            format!(
                "`\"{}\"`, or `\"{}\"` for a `{mark}` that is part of the path (as clients send it)",
                normal_or(path),
                normal_or(&encoded(prefix))
            ),
        ));
    }
    if let Some(c) = prefix
        .chars()
        .find(|c| !c.is_ascii() || c.is_ascii_whitespace() || c.is_ascii_control())
    {
        let why = if c.is_ascii() {
            "a request's path holds no space or control character (clients send them percent-encoded, and hyper refuses a raw one with `400`)".to_owned()
        } else {
            format!(
                "a request's path holds no raw non-ASCII character (clients send `{c}` percent-encoded as UTF-8, and hyper refuses a raw one with `400`)"
            )
        };
        return Err(dead(&why, format!("`\"{}\"`", normal_or(&encoded(prefix)))));
    }
    match crate::path::normalise(prefix) {
        Ok(normal) if normal == prefix => Ok(()),
        Ok(normal) => Err(format!(
            "route `path_prefix = \"{prefix}\"` is not in normal form and would match nothing (paths are matched once `%XX` of letters, digits and `-._~` are decoded, `//` merged and `.`/`..` resolved): write `\"{normal}\"`"
        )),
        Err(_) => Err(format!(
            "route `path_prefix = \"{prefix}\"` climbs above `/` with `..`"
        )),
    }
}

/// `prefix` with every byte a request path cannot hold raw (non-ASCII, space, control,
/// `?`, `#`) percent-encoded, in upper case as the normal form writes it.
fn encoded(prefix: &str) -> String {
    let mut out = String::with_capacity(prefix.len());
    for b in prefix.bytes() {
        if b.is_ascii_graphic() && b != b'?' && b != b'#' {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `path` in normal form, or as it is when it climbs above `/` (the check says so then).
fn normal_or(path: &str) -> String {
    crate::path::normalise(path).map_or_else(|_| path.to_owned(), |n| n.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_takes_each_byte_a_request_path_cannot_hold_raw() {
        assert_eq!(encoded("/é"), "/%C3%A9");
        assert_eq!(encoded("/a b\t?#"), "/a%20b%09%3F%23");
        assert_eq!(encoded("/plain/%2F"), "/plain/%2F");
    }
}
