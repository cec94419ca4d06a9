//! When a client call gives its permit back: at the response head, or when the response
//! body ends.

use http::Response;

use crate::middleware::body::LimitBody;
use crate::middleware::permit::HeldPermit;

/// The permit of one client call: the call counts against the limit for as long as this
/// lives; dropping it gives the permit back.
#[derive(Debug)]
pub struct CallPermit(pub(crate) HeldPermit);

/// How long a call through a [`ClientLimit`](super::ClientLimit) keeps its permit once the
/// response arrives. Implemented by [`AtHead`] and [`ThroughBody`]; implement it to tie the
/// permit to something else that lives as long as the call's work.
pub trait Hold<R> {
    /// What the caller gets back.
    type Output;

    /// Hands the response to the caller, releasing `permit` now or storing it in what is
    /// returned.
    fn finish(response: R, permit: CallPermit) -> Self::Output;
}

/// Release the permit when the response head arrives (the default). Works with any response
/// type, e.g. `reqwest::Response`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AtHead;

impl<R> Hold<R> for AtHead {
    type Output = R;

    #[inline]
    fn finish(response: R, permit: CallPermit) -> R {
        permit.0.complete();
        response
    }
}

/// Keep the permit until the response body has been read to its end or dropped: the remote
/// is still working while it streams. For `http::Response` clients (hyper-util).
#[derive(Clone, Copy, Debug, Default)]
pub struct ThroughBody;

impl<B> Hold<Response<B>> for ThroughBody {
    type Output = Response<LimitBody<B>>;

    #[inline]
    fn finish(response: Response<B>, permit: CallPermit) -> Self::Output {
        response.map(|body| LimitBody::inner(body, Some(permit.0)))
    }
}
