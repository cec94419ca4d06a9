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
    /// A `%2F` (an encoded `/`), or a `%5C` (an encoded `\`, which IIS reads as `/` once
    /// decoded), would route elsewhere once an upstream decodes it.
    EncodedSlash,
    /// A raw `\` would route elsewhere where the upstream reads it as `/`.
    Backslash,
    /// A `;` parameter on a segment would route elsewhere where the upstream drops it.
    SegmentParameter,
    /// The target is in authority form (`host:port`), which names no path: only `CONNECT`
    /// uses it (RFC 9112 §3.2.3).
    NoPath,
}

impl BadPath {
    /// The answer body: what is wrong, for the client.
    pub fn message(self) -> &'static str {
        match self {
            BadPath::AboveRoot => "the path climbs above `/` with `..` segments\n",
            BadPath::EncodedSlash => {
                "the path has an encoded `/` (`%2F`) or `\\` (`%5C`) that would change the route it takes once decoded\n"
            }
            BadPath::Backslash => {
                "the path has a `\\` that would change the route it takes where it is read as `/`\n"
            }
            BadPath::SegmentParameter => {
                "the path has a `;` parameter on a segment that would change the route it takes where parameters are dropped (`/..;/` is `/../`)\n"
            }
            BadPath::NoPath => {
                "the request target names no path (`host:port`, the authority form, is for CONNECT only): send the path, such as `GET / HTTP/1.1` with the host in `Host`\n"
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

/// [`normalise`], with `%2F` decoded too, and `%5C` read as `/`: what an upstream that
/// decodes every escape before it merges slashes and resolves dots would see (IIS reads a
/// decoded `\` as `/`: `/x%5C..%5Cpay` is `/pay` there).
///
/// # Errors
///
/// [`BadPath::AboveRoot`] when a `..` climbs above `/`.
pub fn normalise_decoding_slashes(path: &str) -> Result<String, BadPath> {
    normalise_slow(path, true)
}

/// Puts `req`'s path in normal form before it is routed and forwarded, so that the
/// upstream gets the very path the route was chosen on (the query is left as it is). An
/// already normal path costs two scans; the config in force is read only for a path with
/// a `%2F`, a `\` or a `;`.
///
/// # Errors
///
/// [`BadPath::AboveRoot`] for a `..` above `/`; [`BadPath::EncodedSlash`],
/// [`BadPath::Backslash`] or [`BadPath::SegmentParameter`] for a path that, read as some
/// upstreams read it (`other_readings`), would lead to another pool than as it is;
/// [`BadPath::NoPath`] for a target in authority form (`GET host:80`).
pub fn normalise_request<B>(gate: &Gate, req: &mut Request<B>) -> Result<(), BadPath> {
    if req.uri().scheme().is_none() && req.uri().authority().is_some() {
        return Err(BadPath::NoPath);
    }
    let normal = normalise(req.uri().path())?;
    let others = other_readings(&normal)?;
    if !others.is_empty() {
        let elsewhere = gate.with_state(|s| {
            let here = s.route_path(req, &normal);
            others.iter().find_map(|(why, other)| {
                let same = match (here, s.route_path(req, other)) {
                    (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                    (a, b) => a.is_none() && b.is_none(),
                };
                (!same).then_some(*why)
            })
        });
        if let Some(why) = elsewhere {
            return Err(why);
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

/// The normal forms of `normal` (a path in normal form) as upstreams that read it otherwise
/// than RFC 3986 would route it, each with the refusal it makes when it leads elsewhere: a
/// `%2F` or `%5C` decoded (an upstream that decodes every escape before it merges slashes;
/// IIS reads the decoded `\` as `/`), a raw `\`
/// read as `/` (the WHATWG URL parser — Deno, Bun, Next.js, `new URL` in Node — and IIS:
/// `/x\..\pay` is `/pay` there), a `;` parameter dropped from each segment (Tomcat and
/// Jetty drop them before they resolve dots: `/x/..;/pay` is `/pay`, the path-parameter
/// bypass that nginx in front of Tomcat is known for). None for a path without any of them,
/// the usual case (one scan).
///
/// # Errors
///
/// A reading that climbs above `/`: [`BadPath::AboveRoot`] for a decoded `%2F` (as
/// before), the reading's own refusal for the others (a WHATWG parser stops at `/` and
/// serves what is below it).
fn other_readings(normal: &str) -> Result<Vec<(BadPath, String)>, BadPath> {
    let mut out = Vec::new();
    if !normal.bytes().any(|b| matches!(b, b'%' | b'\\' | b';')) {
        return Ok(out);
    }
    if has_encoded_slash(normal) {
        out.push((BadPath::EncodedSlash, normalise_decoding_slashes(normal)?));
    }
    if normal.contains('\\') {
        let read = normalise_slow(&normal.replace('\\', "/"), false);
        out.push((BadPath::Backslash, read.map_err(|_| BadPath::Backslash)?));
    }
    if normal.contains(';') {
        let read = normalise_slow(&without_parameters(normal), false);
        out.push((
            BadPath::SegmentParameter,
            read.map_err(|_| BadPath::SegmentParameter)?,
        ));
    }
    Ok(out)
}

/// `path` without the `;` parameter of each segment (from a `;` to the segment's end), as
/// Tomcat and Jetty read it: `/a;x=1/..;/b` is `/a/../b`.
fn without_parameters(path: &str) -> String {
    path.split('/')
        .map(|seg| seg.split_once(';').map_or(seg, |(name, _)| name))
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether `path` holds an encoded `/` (`%2F` or `%2f`) or `\` (`%5C` or `%5c`), which
/// IIS reads as `/` once decoded.
pub fn has_encoded_slash(path: &str) -> bool {
    path.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && matches!((w[1], w[2] | 0x20), (b'2', b'f') | (b'5', b'c')))
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

/// Decodes the escapes of unreserved characters (and of `/` when asked, with `%5C` read as
/// `/` then) and upper-cases the hex digits of the others.
fn decode(p: &[u8], decode_slashes: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        if p[i] == b'%'
            && let (Some(&h), Some(&l)) = (p.get(i + 1), p.get(i + 2))
            && let Some(b) = hex_pair(h, l)
        {
            if is_unreserved(b) {
                out.push(b);
            } else if decode_slashes && matches!(b, b'/' | b'\\') {
                out.push(b'/');
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
    fn other_readings_are_made_only_for_their_characters() {
        assert_eq!(other_readings("/pay/x%C3%A9"), Ok(Vec::new()));
        assert_eq!(
            other_readings("/x\\..\\pay;v=1/a;b"),
            Ok(vec![
                (BadPath::Backslash, "/pay;v=1/a;b".to_owned()),
                (BadPath::SegmentParameter, "/x\\..\\pay/a".to_owned()),
            ])
        );
        assert_eq!(without_parameters("/a;x=1/..;/b;"), "/a/../b");
        assert_eq!(other_readings("/..;/x"), Err(BadPath::SegmentParameter));
        assert_eq!(other_readings("/..\\x"), Err(BadPath::Backslash));
    }

    #[test]
    fn encoded_slashes_are_kept_unless_asked_to_decode() {
        assert!(has_encoded_slash("/a%2fb"));
        assert!(!has_encoded_slash("/a%25b"));
        assert!(has_encoded_slash("/a%5cb") && has_encoded_slash("/a%5Cb"));
        assert!(!has_encoded_slash("/a%5Db"));
        assert_eq!(
            normalise_decoding_slashes("/x%5C..%5Cpay/x").unwrap(),
            "/pay/x"
        );
        assert_eq!(normalise_decoding_slashes("/%2Fpay/x").unwrap(), "/pay/x");
        assert_eq!(
            normalise_decoding_slashes("/pay/..%2F..%2Fx"),
            Err(BadPath::AboveRoot)
        );
    }
}
