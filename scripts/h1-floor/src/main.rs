//! How many instructions hyper's HTTP/1 server costs a request, against the least an own
//! server loop could do: `h1-floor hyper PORT` answers every request through hyper's server
//! (configured as the gate configures it: a header-read timer, keep-alive, no writev);
//! `h1-floor raw PORT` parses each request with httparse into the same `HeaderMap` hyper
//! builds, encodes the same answer and writes it, with a read timeout. Both answer the same
//! bytes with three headers and `ok`; both exit 12 s after they start.
//! `scripts/callgrind-h1-floor` runs both under callgrind (see BENCHMARKS.md, gate).

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Response};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn answer_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("server", HeaderValue::from_static("nginx/1.26.3"));
    h.insert(
        "date",
        HeaderValue::from_static("Wed, 02 Dec 2026 04:30:00 GMT"),
    );
    h.insert(
        "content-type",
        HeaderValue::from_static("application/octet-stream"),
    );
    h
}

async fn hyper_conn(s: TcpStream) {
    let mut b = http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        .keep_alive(true)
        .writev(false);
    let _ = b
        .serve_connection(
            TokioIo::new(s),
            service_fn(|_req| async {
                let mut r = Response::new(Full::new(Bytes::from_static(b"ok\n")));
                *r.headers_mut() = answer_headers();
                Ok::<_, Infallible>(r)
            }),
        )
        .await;
}

async fn raw_conn(mut s: TcpStream) {
    let mut buf = BytesMut::with_capacity(8192);
    let mut out: Vec<u8> = Vec::with_capacity(1024);
    loop {
        // Parse what we have; read more if partial.
        let (len, map) = loop {
            if !buf.is_empty() {
                let mut hs = [httparse::EMPTY_HEADER; 64];
                let mut req = httparse::Request::new(&mut hs);
                match req.parse(&buf) {
                    Ok(httparse::Status::Complete(n)) => {
                        let mut map = HeaderMap::with_capacity(req.headers.len());
                        for h in req.headers.iter() {
                            let name = HeaderName::from_bytes(h.name.as_bytes()).unwrap();
                            let v = HeaderValue::from_bytes(h.value).unwrap();
                            map.append(name, v);
                        }
                        break (n, map);
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(_) => return,
                }
            }
            let r = tokio::time::timeout(Duration::from_secs(10), s.read_buf(&mut buf)).await;
            match r {
                Ok(Ok(n)) if n > 0 => {}
                _ => return,
            }
        };
        let _ = buf.split_to(len);
        std::hint::black_box(&map);
        let h = answer_headers();
        out.clear();
        out.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
        for (n, v) in &h {
            out.extend_from_slice(n.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"content-length: 3\r\n\r\nok\n");
        if s.write_all(&out).await.is_err() {
            return;
        }
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap();
    let port: u16 = std::env::args().nth(2).unwrap().parse().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let l = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(12);
        loop {
            let acc = tokio::time::timeout_at(deadline, l.accept()).await;
            let Ok(Ok((s, _))) = acc else { break };
            s.set_nodelay(true).unwrap();
            if mode == "hyper" {
                tokio::spawn(hyper_conn(s));
            } else {
                tokio::spawn(raw_conn(s));
            }
        }
        tokio::time::sleep_until(deadline).await;
    });
}
