//! A minimal HTTP/1.1 client over one fresh connection per request (hyper's own), and a
//! raw socket for clients that misbehave.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// Sends `req` to `addr` and reads the whole answer.
pub async fn request(addr: SocketAddr, req: Request<Full<Bytes>>) -> Reply {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let resp = send.send_request(req).await.unwrap();
    let (parts, body) = resp.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// `GET path` with header `x-id: id`.
pub async fn get(addr: SocketAddr, path: &str, id: &str) -> Reply {
    let req = Request::get(path)
        .header("host", "gate.test")
        .header("x-id", id)
        .body(Full::new(Bytes::new()))
        .unwrap();
    request(addr, req).await
}

/// A raw connection that has sent `bytes`.
pub async fn raw(addr: SocketAddr, bytes: &[u8]) -> TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(bytes).await.unwrap();
    s
}

/// Sends `bytes` on a fresh connection (a request that says `Connection: close`) and reads
/// the answer to its end: its status line and its body.
pub async fn status_and_body(addr: SocketAddr, bytes: &[u8]) -> (String, String) {
    use tokio::io::AsyncReadExt;
    let mut s = raw(addr, bytes).await;
    let mut answer = Vec::new();
    tokio::time::timeout(super::PATIENCE, s.read_to_end(&mut answer))
        .await
        .expect("no answer")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    )
}
