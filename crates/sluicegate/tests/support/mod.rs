//! Helpers shared by the HTTP middleware tests.
#![allow(dead_code)] // each test file uses its own subset

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};

/// A request with no body.
pub(crate) type Req = Request<()>;
/// A response with a complete body.
pub(crate) type Res = Response<Full<Bytes>>;

/// A `200` answering `text`.
pub(crate) fn ok(text: &'static str) -> Res {
    Response::new(Full::new(Bytes::from_static(text.as_bytes())))
}

/// Reads a whole body as text.
pub(crate) async fn text<B: http_body::Body>(body: B) -> String
where
    B::Error: std::fmt::Debug,
{
    String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap()
}
