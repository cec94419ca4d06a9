//! A handshake for a tunnel (WebSocket, or any `Upgrade` but `h2c`) to the upstream: on a
//! new hyper connection that can be upgraded, never an idle one (its connection could not
//! hand its socket over) and never the gate's own path.

use super::super::client_body::ClientBody;
use super::wire::WireError;
use super::{HyperConn, SendError, UpstreamBody, handshake, relay};
use http::header::{CONNECTION, HeaderValue, UPGRADE};
use http::uri::Authority;
use http::{Request, Response};
use hyper::body::Incoming;

/// A `101` without an `Upgrade` naming the protocol switched to (RFC 9110 §15.2.2).
const NO_PROTOCOL: &str = "101 Switching Protocols without Upgrade";

/// Sends the handshake `req` (its `Upgrade` and `Connection: upgrade` in place) on a new
/// connection of its own. A `101` comes back as [`switched`] makes it; any other answer as
/// an ordinary one, whose connection is then closed (hyper never finds a connection that
/// can be upgraded ready for another request: kept idle, it would only hold the upstream's
/// socket until the sweep).
///
/// # Errors
///
/// As [`super::send`]'s.
pub(super) async fn send(
    authority: Authority,
    req: Request<ClientBody>,
) -> Result<Response<UpstreamBody>, SendError> {
    let mut conn = handshake(&authority, true).await?;
    match conn.sender.send_request(req).await {
        Ok(response) => relay(response, conn, authority, true),
        Err(e) => Err(SendError::Http(e)),
    }
}

/// The upstream's `101` for the client: its hop-by-hop headers gone but `Upgrade`, and
/// `Connection: upgrade`. The upstream's socket is in the response's extensions
/// ([`hyper::upgrade::on`]); the body (empty) holds the connection's sender until the
/// tunnel has taken the socket, and is never checked in.
///
/// # Errors
///
/// A `101` that names no protocol.
pub(super) fn switched(
    response: Response<Incoming>,
    conn: HyperConn,
    authority: Authority,
) -> Result<Response<UpstreamBody>, SendError> {
    let (mut parts, body) = response.into_parts();
    let protocols: Vec<HeaderValue> = parts.headers.get_all(UPGRADE).iter().cloned().collect();
    if protocols.is_empty() {
        return Err(SendError::Wire(WireError::Head(NO_PROTOCOL)));
    }
    super::super::headers::strip_hop_by_hop(&mut parts.headers);
    for p in protocols {
        parts.headers.append(UPGRADE, p);
    }
    parts
        .headers
        .insert(CONNECTION, HeaderValue::from_static("upgrade"));
    Ok(Response::from_parts(
        parts,
        UpstreamBody::Hyper {
            body,
            ended: true,
            conn,
            authority,
            keep_for: None,
        },
    ))
}
