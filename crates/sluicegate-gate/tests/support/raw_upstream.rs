//! A raw HTTP/1.1 upstream written byte by byte: it answers each request (without a body)
//! with whatever bytes a test scripts for its path, and counts the connections it accepts.
//! For upstreams that bend or break the rules, which no HTTP library would write.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The bytes to answer a request for a path with, and whether to close the connection
/// after them.
pub type Script = Arc<dyn Fn(&str) -> (Vec<u8>, bool) + Send + Sync>;

/// A running raw upstream.
pub struct RawUpstream {
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

impl RawUpstream {
    /// Listens on a free loopback port and answers by `script`.
    pub async fn start(script: Script) -> RawUpstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(answer_each(stream, script.clone()));
            }
        });
        RawUpstream { addr, accepted }
    }

    /// The connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

async fn answer_each(mut stream: TcpStream, script: Script) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        // Requests without bodies: one ends at its blank line.
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let path = head.split(' ').nth(1).unwrap_or("/");
        let (answer, close) = script(path);
        if stream.write_all(&answer).await.is_err() || close {
            return;
        }
    }
}
