//! A raw HTTP/1.1 upstream written byte by byte: it answers each request with whatever
//! bytes a test scripts for its path, and counts the connections it accepts. For upstreams
//! that bend or break the rules, which no HTTP library would write. A request's body
//! (by `Content-Length` only) is read and dropped. An answer can be written whole, one
//! byte per write, or up to a mark and the rest when the test says.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// The bytes to answer a request for a path with, and whether to close the connection
/// after them.
pub type Script = Arc<dyn Fn(&str) -> (Vec<u8>, bool) + Send + Sync>;

/// A running raw upstream.
pub struct RawUpstream {
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    written: Arc<AtomicUsize>,
}

impl RawUpstream {
    /// Where a scripted answer stops until the upstream is released (with
    /// [`RawUpstream::start_holding`]).
    pub const HOLD: &'static [u8] = b"<hold>";

    /// Listens on a free loopback port and answers by `script`.
    pub async fn start(script: Script) -> RawUpstream {
        RawUpstream::listen(script, Pace::Whole).await
    }

    /// Like [`RawUpstream::start`], but writes each answer one byte per write.
    pub async fn start_dribbling(script: Script) -> RawUpstream {
        RawUpstream::listen(script, Pace::Dribble).await
    }

    /// Like [`RawUpstream::start`], but an answer stops at [`RawUpstream::HOLD`] until
    /// `release` is notified, then goes on with what follows it.
    pub async fn start_holding(script: Script, release: Arc<Notify>) -> RawUpstream {
        RawUpstream::listen(script, Pace::Hold(release)).await
    }

    async fn listen(script: Script, pace: Pace) -> RawUpstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let written = Arc::new(AtomicUsize::new(0));
        let (count, answers) = (accepted.clone(), written.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_nodelay(true);
                let answers = answers.clone();
                tokio::spawn(answer_each(stream, script.clone(), pace.clone(), answers));
            }
        });
        RawUpstream {
            addr,
            accepted,
            written,
        }
    }

    /// The connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// The answers written to the end so far.
    pub fn written(&self) -> usize {
        self.written.load(Ordering::SeqCst)
    }
}

/// How an answer is written.
#[derive(Clone)]
enum Pace {
    Whole,
    Dribble,
    Hold(Arc<Notify>),
}

/// A request head's `Content-Length`, 0 without one.
fn body_length(head: &str) -> usize {
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The next request's head off `stream` (its body, by `Content-Length`, read and dropped);
/// `buf` keeps what was read past it. `None` once the connection ends.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<String> {
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    buf.drain(..end);
    let body = body_length(&head);
    while buf.len() < body {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    buf.drain(..body);
    Some(head)
}

async fn answer_each(mut stream: TcpStream, script: Script, pace: Pace, written: Arc<AtomicUsize>) {
    let mut buf = Vec::new();
    while let Some(head) = read_request(&mut stream, &mut buf).await {
        let path = head.split(' ').nth(1).unwrap_or("/");
        let (answer, close) = script(path);
        let ok = match &pace {
            Pace::Whole => stream.write_all(&answer).await.is_ok(),
            Pace::Dribble => {
                let mut ok = true;
                for b in &answer {
                    ok = ok && stream.write_all(&[*b]).await.is_ok();
                    tokio::task::yield_now().await;
                }
                ok
            }
            Pace::Hold(release) => match answer.windows(6).position(|w| w == RawUpstream::HOLD) {
                Some(at) => {
                    let first = stream.write_all(&answer[..at]).await.is_ok();
                    release.notified().await;
                    first && stream.write_all(&answer[at + 6..]).await.is_ok()
                }
                None => stream.write_all(&answer).await.is_ok(),
            },
        };
        if !ok {
            return;
        }
        written.fetch_add(1, Ordering::SeqCst);
        if close {
            return;
        }
    }
}
