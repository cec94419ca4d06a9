//! The path routes match: RFC 3986 §6.2.2 normalisation, as nginx does before it matches a
//! `location`, so `/%70ay`, `//pay` and `/./pay` all reach the `/pay` route.
//!
//! A path that is already normal (the common case) is only scanned, never copied.

use std::borrow::Cow;
use std::sync::Arc;

use http::Request;
use http::uri::{PathAndQuery, Uri};

use crate::gate::Gate;

/// Why a path cannot be routed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadPath {
    /// A `..` segment climbs above `/`.
    AboveRoot,
    /// A `%2F` (an encoded `/`) would route elsewhere once an upstream decodes it.
    EncodedSlash,
}

impl BadPath {
    /// The answer body: what is wrong, for the client.
    pub fn message(self) -> &'static str {
        match self {
            BadPath::AboveRoot => "the path climbs above `/` with `..` segments\n",
            BadPath::EncodedSlash => {
                "the path has an encoded `/` (`%2F`) that would change the route it takes once decoded\n"
            }
        }
    }
}

/// The normal form of `path`: percent-encoded unreserved characters decoded
/// (§6.2.2.2), other percent-encodings in upper case (§6.2.2.1), `//` merged (as nginx's
/// `merge_slashes`), `.` and `..` segments resolved (§6.2.2.3, §5.2.4). A path that does not
/// start with `/` is left alone.
///
/// # Errors
///
/// [`BadPath::AboveRoot`] when a `..` climbs above `/`.
///
/// # Examples
///
/// ```
/// use sluicegate_gate::path::normalise;
///
/// assert_eq!(normalise("/pay/x").unwrap(), "/pay/x");
/// assert_eq!(normalise("//%70ay/./a/../x").unwrap(), "/pay/x");
/// assert!(normalise("/../x").is_err());
/// ```
pub fn normalise(path: &str) -> Result<Cow<'_, str>, BadPath> {
    if is_normal(path.as_bytes()) {
        return Ok(Cow::Borrowed(path));
    }
    normalise_slow(path, false).map(Cow::Owned)
}

/// [`normalise`], with `%2F` decoded too: what an upstream that decodes every escape before
/// it merges slashes and resolves dots would see.
///
/// # Errors
///
/// [`BadPath::AboveRoot`] when a `..` climbs above `/`.
pub fn normalise_decoding_slashes(path: &str) -> Result<String, BadPath> {
    normalise_slow(path, true)
}

/// Puts `req`'s path in normal form before it is routed and forwarded, so that the
/// upstream gets the very path the route was chosen on (the query is left as it is). An
/// already normal path costs one scan; the config in force is read only for a path with
/// a `%2F`.
///
/// # Errors
///
/// [`BadPath::AboveRoot`] for a `..` above `/`; [`BadPath::EncodedSlash`] for a `%2F`
/// that, decoded (as some upstreams do), would lead to another pool than kept encoded.
pub fn normalise_request<B>(gate: &Gate, req: &mut Request<B>) -> Result<(), BadPath> {
    let normal = normalise(req.uri().path())?;
    if has_encoded_slash(&normal) {
        let decoded = normalise_decoding_slashes(&normal)?;
        let same =
            gate.with_state(
                |s| match (s.route_path(req, &normal), s.route_path(req, &decoded)) {
                    (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                    (a, b) => a.is_none() && b.is_none(),
                },
            );
        if !same {
            return Err(BadPath::EncodedSlash);
        }
    }
    if let Cow::Owned(path) = normal {
        let mut parts = req.uri().clone().into_parts();
        let target = match parts.path_and_query.as_ref().and_then(|pq| pq.query()) {
            Some(q) => format!("{path}?{q}"),
            None => path,
        };
        // Decoding made only unreserved characters, which a URI always takes.
        if let Ok(pq) = PathAndQuery::try_from(target) {
            parts.path_and_query = Some(pq);
            if let Ok(uri) = Uri::from_parts(parts) {
                *req.uri_mut() = uri;
            }
        }
    }
    Ok(())
}

/// Whether `path` holds an encoded `/` (`%2F` or `%2f`).
pub fn has_encoded_slash(path: &str) -> bool {
    path.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1] == b'2' && (w[2] | 0x20) == b'f')
}

/// Whether `path` is already in normal form: one scan, no allocation. Only a `/` or a
/// `%` is looked at more closely.
fn is_normal(p: &[u8]) -> bool {
    if p.first() != Some(&b'/') {
        return true;
    }
    let at = |i: usize| p.get(i).copied();
    for (i, &c) in p.iter().enumerate() {
        match c {
            b'/' => match (at(i + 1), at(i + 2), at(i + 3)) {
                // `//`, `/.` or `/..` ending a segment.
                (Some(b'/'), _, _)
                | (Some(b'.'), None | Some(b'/'), _)
                | (Some(b'.'), Some(b'.'), None | Some(b'/')) => return false,
                _ => {}
            },
            b'%' => {
                if let (Some(h), Some(l)) = (at(i + 1), at(i + 2))
                    && let Some(b) = hex_pair(h, l)
                    && (is_unreserved(b) || h.is_ascii_lowercase() || l.is_ascii_lowercase())
                {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

fn normalise_slow(path: &str, decode_slashes: bool) -> Result<String, BadPath> {
    if !path.starts_with('/') {
        return Ok(path.to_owned());
    }
    let decoded = decode(path.as_bytes(), decode_slashes);
    let mut segments: Vec<&[u8]> = Vec::new();
    let mut trailing = false;
    for seg in decoded[1..].split(|&c| c == b'/') {
        trailing = true;
        match seg {
            b"" | b"." => {}
            b".." => {
                if segments.pop().is_none() {
                    return Err(BadPath::AboveRoot);
                }
            }
            s => {
                segments.push(s);
                trailing = false;
            }
        }
    }
    let mut out = Vec::with_capacity(decoded.len());
    for s in &segments {
        out.push(b'/');
        out.extend_from_slice(s);
    }
    if trailing || segments.is_empty() {
        out.push(b'/');
    }
    // Only ASCII was decoded and the rest copied whole, so the bytes stay UTF-8.
    Ok(String::from_utf8(out).expect("decoding ASCII escapes keeps UTF-8"))
}

/// Decodes the escapes of unreserved characters (and of `/` when asked) and upper-cases
/// the hex digits of the others.
fn decode(p: &[u8], decode_slashes: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        if p[i] == b'%'
            && let (Some(&h), Some(&l)) = (p.get(i + 1), p.get(i + 2))
            && let Some(b) = hex_pair(h, l)
        {
            if is_unreserved(b) || (decode_slashes && b == b'/') {
                out.push(b);
            } else {
                out.extend_from_slice(&[b'%', h.to_ascii_uppercase(), l.to_ascii_uppercase()]);
            }
            i += 3;
        } else {
            out.push(p[i]);
            i += 1;
        }
    }
    out
}

pub(crate) fn hex_pair(h: u8, l: u8) -> Option<u8> {
    let v = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    Some(v(h)? << 4 | v(l)?)
}

/// RFC 3986 §2.3: `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_paths_are_borrowed_not_copied() {
        for p in [
            "/",
            "/pay",
            "/pay/",
            "/pay/x.json",
            "/a/.hidden/..x/x..",
            "/a%2Fb",
            "/caf%C3%A9",
            "/100%",
            "/%zz",
            "*",
        ] {
            assert!(
                matches!(normalise(p), Ok(Cow::Borrowed(_))),
                "{p} should take the fast path"
            );
        }
    }

    #[test]
    fn equivalent_spellings_of_a_path_normalise_to_one() {
        for (raw, want) in [
            ("/%70ay/x", "/pay/x"),
            ("//pay/x", "/pay/x"),
            ("/./pay/x", "/pay/x"),
            ("/a/../pay/x", "/pay/x"),
            ("/pay//x//", "/pay/x/"),
            ("/pay/x/.", "/pay/x/"),
            ("/pay/x/..", "/pay/"),
            ("/a/%2E%2e/", "/"),
            ("/x/%2e%2E/pay", "/pay"),
            ("/a%2fb", "/a%2Fb"),
            ("/%7euser", "/~user"),
            ("/caf%c3%a9", "/caf%C3%A9"),
            ("/.", "/"),
            ("/..a/.b.", "/..a/.b."),
        ] {
            assert_eq!(normalise(raw).unwrap(), want, "{raw}");
        }
    }

    proptest::proptest! {
        /// The scan that lets a path through untouched agrees with the full normalisation:
        /// a path it passes is its own normal form, one it stops is not, and the normal
        /// form passes it.
        #[test]
        fn the_fast_path_is_taken_exactly_for_normal_paths(p in "/[a/.%2fFE0_~-]{0,12}") {
            let slow = normalise_slow(&p, false);
            match normalise(&p) {
                Ok(Cow::Borrowed(b)) => proptest::prop_assert_eq!(slow, Ok(b.to_owned())),
                Ok(Cow::Owned(o)) => {
                    proptest::prop_assert_ne!(&o, &p);
                    proptest::prop_assert!(matches!(normalise(&o), Ok(Cow::Borrowed(_))), "{o}");
                    proptest::prop_assert_eq!(slow, Ok(o));
                }
                Err(e) => proptest::prop_assert_eq!(slow, Err(e)),
            }
        }
    }

    #[test]
    fn climbing_above_the_root_is_refused() {
        for p in ["/..", "/../x", "/a/../../x", "/%2e%2e/x", "//../x"] {
            assert_eq!(normalise(p), Err(BadPath::AboveRoot), "{p}");
        }
    }

    #[test]
    fn encoded_slashes_are_kept_unless_asked_to_decode() {
        assert!(has_encoded_slash("/a%2fb"));
        assert!(!has_encoded_slash("/a%25b"));
        assert_eq!(normalise_decoding_slashes("/%2Fpay/x").unwrap(), "/pay/x");
        assert_eq!(
            normalise_decoding_slashes("/pay/..%2F..%2Fx"),
            Err(BadPath::AboveRoot)
        );
    }
}
