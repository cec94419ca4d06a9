//! A health probe: one `PING`, which marks Redis up or down as a decision's call would.

use std::time::Duration;

use super::RedisStore;

impl RedisStore {
    /// Sends Redis a `PING` and waits at most `within` for its answer: an answer marks Redis
    /// up, an error or no answer in time marks it down, as a decision's call would (without
    /// counting a fallback, and whether or not a probe of a Redis that is down is due).
    ///
    /// For an application that wants the [health](Self::health) to follow Redis while no
    /// decision calls it (the gate pings about once a second), and to learn why Redis is down.
    ///
    /// # Errors
    ///
    /// What the connection or Redis said (a refused password is an error of kind
    /// [`AuthenticationFailed`](redis::ErrorKind::AuthenticationFailed), or one with the code
    /// `NOAUTH` or `WRONGPASS`); no answer within `within` is an I/O error of kind
    /// [`TimedOut`](std::io::ErrorKind::TimedOut).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the health as it was.
    pub async fn ping(&self, within: Duration) -> Result<(), redis::RedisError> {
        let mut conn = self.connection();
        let cmd = redis::cmd("PING");
        let answer = match tokio::time::timeout(within, cmd.query_async::<()>(&mut conn)).await {
            Ok(answer) => answer,
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {within:?}"),
            )
            .into()),
        };
        match &answer {
            Ok(()) => self.inner.health.succeeded(),
            Err(e) => self.inner.health.failed(super::headline(e), e),
        }
        answer
    }
}
