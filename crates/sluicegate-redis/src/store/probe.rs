//! A health probe: one `PING`, which marks Redis up or down as a decision's call would.

use std::time::Duration;

use super::RedisStore;
use super::health::Health;

impl RedisStore {
    /// Sends Redis a `PING` and waits at most `within` for its answer: an answer marks Redis
    /// up, an error marks it down, and no answer in time is a late answer (two rounds in a
    /// row mark it down), as for a decision's call (without counting a fallback, and whether
    /// or not a probe of a Redis that is down is due). Except that a PONG does not mark up a
    /// Redis that is down for a call it *refused* (out of memory under `noeviction`, a
    /// read-only replica, an ACL without the scripts: Redis answers `PING` all along; not a
    /// refused password, which a PING meets too): that outage ends with the first answered call of a limit, its probe (before redis111 each
    /// ping ended it and the next decision began another).
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
        let cmd = redis::cmd("PING");
        let call = || async { cmd.query_async::<()>(&mut self.connection()).await };
        self.timed(within, call, Health::pinged).await
    }
}
