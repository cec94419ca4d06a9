//! How an upstream's response body is framed (RFC 9112 §6.3), and the decoder that cuts it
//! out of the connection's read buffer.
//!
//! The decoder is a pure state machine over the bytes read so far: each call hands out the
//! body bytes that are complete, asks for more, or says the body has ended. It never reads
//! past the body, so whatever is left in the buffer afterwards was not part of it (and the
//! connection is not reused).
//!
//! ```text
//! Length(n) ──n bytes──▶ Done
//! Chunked:  Size ──"0"──▶ Trailers ──empty line──▶ Done (handing out the trailers, if any)
//!            │ ▲
//!      n > 0 ▼ │ CRLF
//!          Data(n) ──n bytes──▶ DataEnd
//! Close ──end of the connection──▶ Done
//! ```

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderMap;
use http::header::{HeaderName, HeaderValue};

use super::wire::MAX_HEADERS;

/// The longest chunk-size line accepted, not counting its extensions.
const MAX_LINE: usize = 4096;
/// The chunk extensions of one body (the bytes after each size line's `;`) must stay under
/// this: hyper's client limit, so that both paths relay the same bodies. Extensions are
/// ignored (RFC 9112 §7.1.1, which asks for a limit on their total).
const MAX_EXTENSIONS: usize = 16 * 1024;
/// The trailer section's bytes (every line with its CRLF, and the empty line that ends the
/// section) must stay under this: hyper's client limit with the gate's settings (its
/// `max_header_size`, 64 KiB), so that both paths relay the same trailers. At most
/// [`MAX_HEADERS`] fields, as hyper's client holds them.
const MAX_TRAILERS: usize = 64 * 1024;

/// How a response body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body: a `HEAD` request's answer, `204`, `304`.
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Everything until the upstream closes the connection.
    Close,
}

/// What the bytes read so far give.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Body bytes, taken out of the buffer.
    Data(Bytes),
    /// The trailer fields of a chunked body (when it has any); the body has ended.
    Trailers(HeaderMap),
    /// More bytes must be read.
    More,
    /// The body has ended.
    Done,
}

/// A body that does not follow its framing.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecodeError {
    /// A chunk-size line that is not a hexadecimal size, or overflows 64 bits.
    #[error("bad chunk size line")]
    ChunkSize,
    /// A chunk not followed by CRLF.
    #[error("chunk not followed by CRLF")]
    ChunkEnd,
    /// A chunk-size or trailer line ended by a bare LF (hyper's client refuses it too).
    #[error("chunk line not ended by CRLF")]
    LineEnd,
    /// A line longer than [`MAX_LINE`], or trailers longer than [`MAX_TRAILERS`].
    #[error("chunk line or trailers too long")]
    TooLong,
    /// Chunk extensions of [`MAX_EXTENSIONS`] bytes or more in one body.
    #[error("chunk extensions longer than 16 KiB in one body")]
    Extensions,
    /// A trailer section that does not parse, or has more than [`MAX_HEADERS`] fields.
    #[error("bad trailer section")]
    Trailers,
    /// The connection ended before the body did.
    #[error("upstream closed the connection before the end of the body")]
    Truncated,
}

/// Cuts one body out of the read buffer.
#[derive(Debug)]
pub(crate) struct Decoder {
    state: State,
    /// The trailer section read so far (its lines with their CRLFs).
    trailers: BytesMut,
    /// The chunk extensions' bytes so far.
    extensions: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Length(u64),
    Size,
    Data(u64),
    DataEnd,
    Trailers,
    Close,
    Done,
}

impl Decoder {
    /// A decoder for a body framed as `framing`.
    pub(crate) fn new(framing: Framing) -> Self {
        let state = match framing {
            Framing::Empty | Framing::Length(0) => State::Done,
            Framing::Length(n) => State::Length(n),
            Framing::Chunked => State::Size,
            Framing::Close => State::Close,
        };
        Decoder {
            state,
            trailers: BytesMut::new(),
            extensions: 0,
        }
    }

    /// Whether the body has ended.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The body bytes still to come, when known.
    pub(crate) fn remaining(&self) -> Option<u64> {
        match self.state {
            State::Length(n) => Some(n),
            State::Done => Some(0),
            _ => None,
        }
    }

    /// The next step from the bytes in `buf`: body bytes (taken out of `buf`), a request
    /// for more, the trailers, or the end.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] when the bytes do not follow the body's framing.
    pub(crate) fn decode(&mut self, buf: &mut BytesMut) -> Result<Step, DecodeError> {
        loop {
            match self.state {
                State::Done => return Ok(Step::Done),
                State::Length(n) => {
                    return Ok(take(buf, n, |left| match left {
                        0 => State::Done,
                        n => State::Length(n),
                    })
                    .map_or(Step::More, |(bytes, next)| {
                        self.state = next;
                        Step::Data(bytes)
                    }));
                }
                State::Close => {
                    if buf.is_empty() {
                        return Ok(Step::More);
                    }
                    return Ok(Step::Data(buf.split().freeze()));
                }
                State::Size => {
                    let room = MAX_LINE + MAX_EXTENSIONS - self.extensions;
                    let Some(line) = take_line(buf, room)? else {
                        return Ok(Step::More);
                    };
                    let (size, extensions) = chunk_size(&line)?;
                    self.extensions += extensions;
                    if self.extensions >= MAX_EXTENSIONS {
                        return Err(DecodeError::Extensions);
                    }
                    self.state = if size == 0 {
                        State::Trailers
                    } else {
                        State::Data(size)
                    };
                }
                State::Data(n) => {
                    return Ok(take(buf, n, |left| match left {
                        0 => State::DataEnd,
                        n => State::Data(n),
                    })
                    .map_or(Step::More, |(bytes, next)| {
                        self.state = next;
                        Step::Data(bytes)
                    }));
                }
                State::DataEnd => match buf.first() {
                    None => return Ok(Step::More),
                    Some(b'\r') if buf.len() < 2 => return Ok(Step::More),
                    Some(b'\r') if buf[1] == b'\n' => {
                        buf.advance(2);
                        self.state = State::Size;
                    }
                    Some(_) => return Err(DecodeError::ChunkEnd),
                },
                State::Trailers => {
                    let room = MAX_TRAILERS - self.trailers.len();
                    let Some(line) = take_line(buf, room)? else {
                        return Ok(Step::More);
                    };
                    let end = line[..] == *b"\r\n";
                    // Contiguous lines of one read buffer: joined without a copy.
                    self.trailers.unsplit(line);
                    if self.trailers.len() >= MAX_TRAILERS {
                        return Err(DecodeError::TooLong);
                    }
                    if end {
                        self.state = State::Done;
                        let section = std::mem::take(&mut self.trailers);
                        if section.len() > 2 {
                            return parse_trailers(&section).map(Step::Trailers);
                        }
                    }
                }
            }
        }
    }

    /// The connection ended (no more bytes will come).
    ///
    /// # Errors
    ///
    /// [`DecodeError::Truncated`] unless the body runs to the connection's end (or had
    /// already ended).
    pub(crate) fn at_eof(&mut self) -> Result<(), DecodeError> {
        match self.state {
            State::Done => Ok(()),
            State::Close => {
                self.state = State::Done;
                Ok(())
            }
            _ => Err(DecodeError::Truncated),
        }
    }
}

/// Up to `n` bytes out of `buf` and the state for what is left of the `n`; `None` when
/// `buf` is empty.
fn take(buf: &mut BytesMut, n: u64, then: impl FnOnce(u64) -> State) -> Option<(Bytes, State)> {
    if buf.is_empty() {
        return None;
    }
    let count = usize::try_from(n).unwrap_or(usize::MAX).min(buf.len());
    Some((buf.split_to(count).freeze(), then(n - count as u64)))
}

/// The next line of `buf` (with its CRLF, at most `max` bytes), taken out of it; `None`
/// until it is complete.
fn take_line(buf: &mut BytesMut, max: usize) -> Result<Option<BytesMut>, DecodeError> {
    match buf.iter().take(max).position(|&b| b == b'\n') {
        Some(i) if i == 0 || buf[i - 1] != b'\r' => Err(DecodeError::LineEnd),
        Some(i) => Ok(Some(buf.split_to(i + 1))),
        None if buf.len() >= max => Err(DecodeError::TooLong),
        None => Ok(None),
    }
}

/// The fields of a trailer section (ending in its empty line), parsed as hyper's client
/// parses them: by `httparse`, at most [`MAX_HEADERS`] fields, no obsolete line folding.
fn parse_trailers(section: &[u8]) -> Result<HeaderMap, DecodeError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let Ok(httparse::Status::Complete((_, fields))) = httparse::parse_headers(section, &mut fields)
    else {
        return Err(DecodeError::Trailers);
    };
    let mut map = HeaderMap::with_capacity(fields.len());
    for f in fields {
        let name = HeaderName::from_bytes(f.name.as_bytes()).map_err(|_| DecodeError::Trailers)?;
        let value = HeaderValue::from_bytes(f.value).map_err(|_| DecodeError::Trailers)?;
        map.append(name, value);
    }
    Ok(map)
}

/// The size a chunk-size line announces, and how many bytes of extensions follow it:
/// hex digits, then optional spaces and tabs (RFC 9112's `BWS`) and extensions (`;` and
/// anything but a CR up to the CRLF), which are ignored.
fn chunk_size(line: &[u8]) -> Result<(u64, usize), DecodeError> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 {
        return Err(DecodeError::ChunkSize);
    }
    let rest = &line[digits..];
    let rest = rest.strip_suffix(b"\r\n").unwrap_or(rest);
    let blank = rest
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    let extensions = match rest[blank..].split_first() {
        None => 0,
        Some((b';', ext)) if !ext.contains(&b'\r') => ext.len(),
        Some(_) => return Err(DecodeError::ChunkSize),
    };
    let size = line[..digits].iter().try_fold(0u64, |size, &b| {
        let d = u64::from(char::from(b).to_digit(16).expect("a hex digit"));
        size.checked_mul(16)
            .and_then(|s| s.checked_add(d))
            .ok_or(DecodeError::ChunkSize)
    })?;
    Ok((size, extensions))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Feeds `input` in pieces cut at `cuts`, collecting the body; `Err` on a decode error,
    /// `Ok((body, leftover, done))`.
    fn run(
        framing: Framing,
        input: &[u8],
        cuts: &[usize],
        eof: bool,
    ) -> Result<(Vec<u8>, Vec<u8>, bool), DecodeError> {
        let mut d = Decoder::new(framing);
        let mut buf = BytesMut::new();
        let mut body = Vec::new();
        let mut at = 0;
        let mut pieces: Vec<usize> = cuts.iter().map(|&c| c.min(input.len())).collect();
        pieces.sort_unstable();
        pieces.push(input.len());
        for end in pieces {
            buf.extend_from_slice(&input[at..end.max(at)]);
            at = end.max(at);
            loop {
                match d.decode(&mut buf)? {
                    Step::Data(b) => body.extend_from_slice(&b),
                    // The end follows (`trailers_are_handed_out_at_the_end`).
                    Step::Trailers(_) => {}
                    Step::More => break,
                    Step::Done => {
                        // What follows the body: the rest of the buffer and what is unread.
                        let mut left = buf.to_vec();
                        left.extend_from_slice(&input[at..]);
                        return Ok((body, left, true));
                    }
                }
            }
        }
        if eof {
            d.at_eof()?;
        }
        Ok((body, buf.to_vec(), d.is_done()))
    }

    #[test]
    fn a_length_ends_the_body_and_leaves_what_follows() {
        let (body, left, done) = run(Framing::Length(5), b"helloHTTP", &[2], false).unwrap();
        assert_eq!(
            (body.as_slice(), left.as_slice(), done),
            (&b"hello"[..], &b"HTTP"[..], true)
        );
    }

    #[test]
    fn a_length_cut_short_by_the_connection_is_an_error() {
        assert_eq!(
            run(Framing::Length(5), b"hel", &[], true),
            Err(DecodeError::Truncated)
        );
    }

    #[test]
    fn chunks_with_extensions_and_trailers() {
        let wire = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: 1\r\n\r\nNEXT";
        let (body, left, done) = run(Framing::Chunked, wire, &[], false).unwrap();
        assert_eq!(body, b"hello world");
        assert_eq!(left, b"NEXT");
        assert!(done);
    }

    /// The trailer fields come out at the end of the body, once, however the bytes arrive;
    /// a body without any ends without them.
    #[test]
    fn trailers_are_handed_out_at_the_end() {
        let wire = b"3\r\nabc\r\n0\r\nx-a: 1\r\nX-B: two words\r\nx-a: 2\r\n\r\nNEXT";
        for cut in 0..wire.len() {
            let mut d = Decoder::new(Framing::Chunked);
            let mut buf = BytesMut::from(&wire[..cut]);
            let mut steps = Vec::new();
            for more in [&wire[cut..], &b""[..]] {
                loop {
                    match d.decode(&mut buf).unwrap() {
                        Step::More => break,
                        Step::Done => break,
                        step => steps.push(step),
                    }
                }
                buf.extend_from_slice(more);
            }
            let Some(Step::Trailers(t)) = steps.pop() else {
                panic!("cut at {cut}: no trailers last: {steps:?}");
            };
            let a: Vec<_> = t.get_all("x-a").iter().collect();
            assert_eq!(a, ["1", "2"], "cut at {cut}");
            assert_eq!(t["x-b"], "two words", "cut at {cut}");
            assert!(d.is_done(), "cut at {cut}");
            assert_eq!(d.decode(&mut buf), Ok(Step::Done));
        }
        let mut d = Decoder::new(Framing::Chunked);
        let mut buf = BytesMut::from(&b"0\r\n\r\n"[..]);
        assert_eq!(d.decode(&mut buf), Ok(Step::Done), "no trailers, no frame");
    }

    /// Trailers are held as hyper's client holds them: a section under 64 KiB (a single
    /// field as long as that too), at most 100 fields, each one that parses.
    #[test]
    fn trailer_limits_follow_hyper() {
        let section = |fields: &[String]| {
            let mut s = b"0\r\n".to_vec();
            for f in fields {
                s.extend_from_slice(f.as_bytes());
                s.extend_from_slice(b"\r\n");
            }
            s.extend_from_slice(b"\r\n");
            s
        };
        // One field: "x: " + value + CRLF, and the closing CRLF: 7 bytes around the value.
        let one = |total: usize| section(&[format!("x: {}", "v".repeat(total - 7))]);
        let fields = |n: usize| section(&(0..n).map(|i| format!("x-{i}: v")).collect::<Vec<_>>());
        for (what, wire, ok) in [
            ("one field, 64 KiB - 1 in all", one(MAX_TRAILERS - 1), true),
            ("one field, 64 KiB in all", one(MAX_TRAILERS), false),
            ("100 fields", fields(100), true),
            ("101 fields", fields(101), false),
            ("a bad name", section(&["x y: 1".into()]), false),
            (
                "a folded line",
                section(&["x: 1".into(), " 2".into()]),
                false,
            ),
            ("no colon", section(&["x".into()]), false),
        ] {
            let got = run(Framing::Chunked, &wire, &[], true);
            assert_eq!(got.is_ok(), ok, "{what}: {got:?}");
        }
    }

    /// Chunk framing lines end in CRLF, as hyper's client holds them (the gate's own path
    /// accepted a bare LF, so a `GET` got a body where a `POST` got a cut connection).
    #[test]
    fn bare_newlines_are_refused_in_chunk_framing() {
        for wire in [
            &b"3\nabc\r\n0\r\n\r\n"[..],
            b"3;ext\nabc\r\n0\r\n\r\n",
            b"3\r\nabc\n0\r\n\r\n",
            b"3\r\nabc\r\n0\n\r\n",
            b"3\r\nabc\r\n0\r\nx: 1\n\r\n",
            b"3\r\nabc\r\n0\r\n\n",
        ] {
            assert!(
                run(Framing::Chunked, wire, &[], true).is_err(),
                "{:?}",
                String::from_utf8_lossy(wire)
            );
        }
    }

    #[test]
    fn hostile_chunk_sizes_are_refused() {
        for line in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"1 2\r\n",
            b"10000000000000000\r\n",
            b"5\rx\r\n",
            b"5\x0c;x\r\n",
            b"5;x\ry\r\n",
        ] {
            assert_eq!(
                run(Framing::Chunked, line, &[], false),
                Err(DecodeError::ChunkSize),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
        // The largest size that fits is a size, not an error: the body then runs short.
        assert_eq!(
            run(Framing::Chunked, b"ffffffffffffffff\r\nab", &[], true),
            Err(DecodeError::Truncated)
        );
    }

    #[test]
    fn a_chunk_without_its_crlf_is_refused() {
        assert_eq!(
            run(Framing::Chunked, b"3\r\nabcX", &[], false),
            Err(DecodeError::ChunkEnd)
        );
    }

    /// Extensions are skipped, up to 16 KiB - 1 of them in one body (hyper's limit), in
    /// lines as long as that.
    #[test]
    fn chunk_extensions_are_ignored_up_to_hyper_limit() {
        let body = |extensions: &[usize]| {
            let mut wire = Vec::new();
            for &n in extensions {
                wire.extend_from_slice(format!("1 \t;{}\r\na\r\n", "e".repeat(n)).as_bytes());
            }
            wire.extend_from_slice(b"0;x=\"y\"\r\n\r\n");
            run(Framing::Chunked, &wire, &[7, 5000], true)
        };
        let got = body(&[MAX_EXTENSIONS - 6]).unwrap();
        assert_eq!(
            (got.0, got.2),
            (b"a".to_vec(), true),
            "5 more in the last chunk"
        );
        assert_eq!(body(&[MAX_EXTENSIONS - 5]), Err(DecodeError::Extensions));
        assert_eq!(body(&[8000, 8000, 378]).map(|g| g.0.len()), Ok(3));
        assert_eq!(body(&[8000, 8000, 379]), Err(DecodeError::Extensions));
    }

    #[test]
    fn endless_lines_are_refused() {
        let long = vec![b'1'; MAX_LINE + MAX_EXTENSIONS + 1];
        assert_eq!(
            run(Framing::Chunked, &long, &[], false),
            Err(DecodeError::TooLong)
        );
        let mut trailers = b"0\r\n".to_vec();
        for _ in 0..(MAX_TRAILERS / 10 + 1) {
            trailers.extend_from_slice(b"x: 12345\r\n");
        }
        assert_eq!(
            run(Framing::Chunked, &trailers, &[], false),
            Err(DecodeError::TooLong)
        );
    }

    #[test]
    fn close_framing_runs_to_the_end_of_the_connection() {
        let (body, _, done) = run(Framing::Close, b"all of it", &[3], true).unwrap();
        assert_eq!((body.as_slice(), done), (&b"all of it"[..], true));
    }

    #[test]
    fn an_empty_body_is_done_at_once() {
        let mut d = Decoder::new(Framing::Empty);
        let mut buf = BytesMut::from(&b"NEXT"[..]);
        assert_eq!(d.decode(&mut buf), Ok(Step::Done));
        assert_eq!(&buf[..], b"NEXT");
        assert_eq!(Decoder::new(Framing::Length(0)).remaining(), Some(0));
    }

    fn chunked(chunks: &[Vec<u8>]) -> Vec<u8> {
        let mut wire = Vec::new();
        for c in chunks.iter().filter(|c| !c.is_empty()) {
            wire.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
            wire.extend_from_slice(c);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(b"0\r\n\r\n");
        wire
    }

    proptest! {
        /// However the bytes arrive, a chunked body decodes to the same bytes and stops at
        /// its end, leaving what follows.
        #[test]
        fn chunked_decodes_the_same_at_any_cut(
            chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..8),
            cuts in prop::collection::vec(0usize..400, 0..12),
        ) {
            let mut wire = chunked(&chunks);
            wire.extend_from_slice(b"TAIL");
            let (body, left, done) = run(Framing::Chunked, &wire, &cuts, false).unwrap();
            prop_assert_eq!(body, chunks.concat());
            prop_assert_eq!(left, b"TAIL".to_vec());
            prop_assert!(done);
        }

        /// A length-framed body is exactly its length, at any cut.
        #[test]
        fn length_decodes_the_same_at_any_cut(
            body in prop::collection::vec(any::<u8>(), 0..200),
            cuts in prop::collection::vec(0usize..250, 0..8),
        ) {
            let mut wire = body.clone();
            wire.extend_from_slice(b"TAIL");
            let (got, left, done) = run(Framing::Length(body.len() as u64), &wire, &cuts, false).unwrap();
            prop_assert_eq!(got, body);
            prop_assert_eq!(left, b"TAIL".to_vec());
            prop_assert!(done);
        }

        /// Arbitrary bytes never panic the chunk decoder.
        #[test]
        fn garbage_never_panics(input in prop::collection::vec(any::<u8>(), 0..300), cuts in prop::collection::vec(0usize..300, 0..6)) {
            let _ = run(Framing::Chunked, &input, &cuts, true);
        }
    }
}
