//! Is Redis up? One flag, a probe schedule with backoff, and counters that only grow.
//!
//! # When Redis is marked down
//!
//! A call that **fails** marks Redis down at once: the connection could not be made or was
//! closed, or Redis answered with an error (out of memory, a wrong password). None of those
//! is a hiccup, and asking again would only cost the next decisions their wait.
//!
//! Except an error about one key: `WRONGTYPE` (a key of another type under a limit's name:
//! another program, or an old version, on the same prefix). Redis answered, so it is up;
//! that limit's decision falls back, and a warning names the error at most every
//! [`KEY_WARNING_EVERY`]. (It used to mark the whole store down, every other limit on it
//! falling back with it, again after each probe the broken limit made.)
//!
//! A call that is only **late** (no answer within the budget) falls back for its own
//! decision and, alone, marks nothing down. On a busy host an answer misses a 20 ms budget
//! now and then; when one such answer marked the whole store down, every decision fell back
//! for a probe backoff (review 3, item 5: 48 outages in 10 s with no fault injected, and each
//! one let the `local` policy admit on top of what Redis had counted). Late answers are
//! counted in rounds instead:
//!
//! - state: `late_rounds`, the rounds of late answers in a row, and `last_late`, when the
//!   last round was counted;
//! - a late answer is a new round only when its call was sent at or after the last round was
//!   counted; calls that were in flight together (one multiplexed connection) missed the
//!   budget for one cause, so a hiccup is one round however many decisions it delays;
//! - [`LATE_ROUNDS`] (2) rounds in a row mark Redis down, as a failure does: a call sent
//!   after a late answer that is late too says Redis is not answering;
//! - any answered call resets the rounds to 0.
//!
//! How late an answer would have been is not known (the call is abandoned at the budget),
//! so "late by far" is no rule of its own: a Redis that stays silent (stopped, or packets
//! dropped) is marked down by the second round, within about two budgets of the first call
//! it left unanswered, and until then each decision waits its budget and falls back alone.
//! While Redis is down a late probe is a failed probe (the backoff doubles), as before.
//!
//! # When Redis is marked up
//!
//! Any answered call of a limit marks Redis up. An answer that only says Redis answers — a
//! `PING` ([`RedisStore::ping`](super::RedisStore::ping)), a subscription on the pub/sub
//! connection — marks it up too, unless Redis is down because it *refused* a call for what
//! the call asks (an error reply: out of memory under `noeviction`, a read-only replica, an
//! ACL without the scripts; not a refused password, which a PING meets too): Redis answers
//! `PING` all along then, and each ping marked it up and the next decision
//! down again (redis111: the gate, which pings every second, logged an outage and a recovery
//! a second for as long as the refusal lasted). Such an outage ends with the first answered
//! call of a limit (a probe), as an outage where Redis was out of reach always could.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Rounds of late answers in a row that mark Redis down (see the module docs).
pub(crate) const LATE_ROUNDS: u32 = 2;

/// What a store has seen of Redis so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HealthSnapshot {
    /// Whether Redis is taken to be up: no failed call, nor two rounds of late answers in a
    /// row, since it last answered.
    pub up: bool,
    /// Times Redis was lost (up → down).
    pub outages: u64,
    /// Times Redis came back (down → up).
    pub recoveries: u64,
    /// Decisions made by a failure policy instead of by Redis.
    pub fallbacks: u64,
    /// Calls Redis did not answer within the budget while it was up (each one's decision
    /// fell back); a lone late answer is no outage.
    pub late: u64,
}

#[derive(Debug)]
pub(super) struct Health {
    down: AtomicBool,
    /// Whether the failure that (last) marked Redis down was an error Redis answered: then
    /// only a limit's call marks it up again, not a PING ([`pinged`](Self::pinged)).
    refused: AtomicBool,
    /// The kinds of failure logged during this outage (bits of [`Health::kind`]): each is
    /// logged once per outage, the first as the outage's start.
    logged: AtomicU8,
    epoch: Instant,
    // Nanoseconds after `epoch` at which the next probe may go to a Redis that is down.
    next_probe: AtomicU64,
    backoff: AtomicU64,
    min_backoff: u64,
    max_backoff: u64,
    /// Rounds of late answers in a row since Redis last answered.
    late_rounds: AtomicU32,
    /// Nanoseconds after `epoch` at which the last round of late answers was counted.
    last_late: AtomicU64,
    outages: AtomicU64,
    recoveries: AtomicU64,
    fallbacks: AtomicU64,
    late: AtomicU64,
    /// Woken when Redis is marked down: callers waiting for a global permit then get their
    /// failure policy's answer at once.
    went_down: Notify,
    /// Woken when Redis is marked up again: callers waiting on a concurrency limit's local
    /// share then ask Redis again.
    came_up: Notify,
    /// Nanoseconds after `epoch` of the last warning about a key Redis refused (0: none).
    key_warned: AtomicU64,
}

/// `why` on one line, for a log line (a log shipper takes a line for a record): redis-rs's
/// parse errors (something that is not Redis answering) list what they met line by line.
/// Written once per outage or new cause, so the allocation is no cost.
pub(super) fn one_line(why: &dyn Display) -> String {
    let text = why.to_string();
    if !text.contains('\n') {
        return text;
    }
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// The least time between two warnings about keys Redis refused.
pub(super) const KEY_WARNING_EVERY: Duration = Duration::from_secs(10);

impl Health {
    pub(super) fn new(min_backoff: Duration, max_backoff: Duration) -> Self {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Health {
            down: AtomicBool::new(false),
            refused: AtomicBool::new(false),
            logged: AtomicU8::new(0),
            epoch: Instant::now(),
            next_probe: AtomicU64::new(0),
            backoff: AtomicU64::new(nanos(min_backoff)),
            min_backoff: nanos(min_backoff),
            max_backoff: nanos(max_backoff),
            late_rounds: AtomicU32::new(0),
            last_late: AtomicU64::new(0),
            outages: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            late: AtomicU64::new(0),
            went_down: Notify::new(),
            came_up: Notify::new(),
            key_warned: AtomicU64::new(0),
        }
    }

    /// Nanoseconds since the store was made: what [`late`](Self::late) is told a call was
    /// sent at.
    pub(super) fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Whether this decision may ask Redis: always while it is up; while it is down, only the
    /// one caller that claims a due probe.
    pub(super) fn may_call(&self) -> bool {
        if !self.down.load(Ordering::Acquire) {
            return true;
        }
        let now = self.now();
        let due = self.next_probe.load(Ordering::Acquire);
        // Claim the probe by pushing the next one a backoff ahead; losers fall back.
        now >= due
            && self
                .next_probe
                .compare_exchange(
                    due,
                    now.saturating_add(self.backoff.load(Ordering::Relaxed)),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
    }

    /// How long a caller denied by a fallback should wait before it asks again: the time to
    /// the next probe while Redis is down, and at least the least backoff (while it is up, a
    /// decision fell back for a late answer: the next may go to Redis at once).
    pub(super) fn retry_hint(&self) -> Duration {
        let mut wait = self.min_backoff;
        if self.down.load(Ordering::Acquire) {
            let due = self.next_probe.load(Ordering::Acquire);
            wait = wait.max(due.saturating_sub(self.now()));
        }
        Duration::from_nanos(wait)
    }

    pub(super) fn succeeded(&self) {
        // A load first: the hot path writes nothing while no answer was late.
        if self.late_rounds.load(Ordering::Relaxed) != 0 {
            self.late_rounds.store(0, Ordering::Relaxed);
        }
        if self.down.swap(false, Ordering::AcqRel) {
            self.recoveries.fetch_add(1, Ordering::Release);
            self.backoff.store(self.min_backoff, Ordering::Relaxed);
            self.came_up.notify_waiters();
            tracing::info!("redis reachable again: global limits are decided by redis");
        }
    }

    /// Redis answered a call that only shows it answers (a `PING`, a subscription): marks it
    /// up as [`succeeded`](Self::succeeded) does, unless it is down for a call it refused
    /// (module docs, "When Redis is marked up").
    pub(super) fn pinged(&self) {
        if self.down.load(Ordering::Acquire) && self.refused.load(Ordering::Acquire) {
            return;
        }
        self.succeeded();
    }

    /// Redis answered a call with an error about its key (`WRONGTYPE`): Redis is up, the
    /// call's decision falls back. Warns at most every [`KEY_WARNING_EVERY`].
    pub(super) fn key_refused(&self, why: &dyn Display) {
        self.succeeded();
        let now = self.now().max(1);
        let last = self.key_warned.load(Ordering::Relaxed);
        let every = u64::try_from(KEY_WARNING_EVERY.as_nanos()).unwrap_or(u64::MAX);
        if (last == 0 || now.saturating_sub(last) >= every)
            && self
                .key_warned
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(
                error = %why,
                "redis refused a global limit's key (another program or version writes it? \
                 remove it, or give this store another prefix): that limit falls back to its \
                 failure policy, the others are unaffected"
            );
        }
    }

    /// A call sent at `sent` (from [`now`](Self::now)) got no answer within the budget
    /// (`why` says so): the second round of late answers in a row marks Redis down, as
    /// does a late probe; a lone one only counts.
    pub(super) fn late(&self, sent: u64, headline: &str, why: &dyn Display) {
        if self.down.load(Ordering::Acquire) {
            self.failed(headline, why);
            return;
        }
        self.late.fetch_add(1, Ordering::Relaxed);
        let last = self.last_late.load(Ordering::Acquire);
        let rounds = self.late_rounds.load(Ordering::Acquire);
        if rounds > 0 && sent < last {
            // In flight when this round was counted: the same hiccup.
            return;
        }
        // Claim the new round; a caller late at the same moment counted it already.
        if self
            .last_late
            .compare_exchange(last, self.now(), Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        if self.late_rounds.fetch_add(1, Ordering::AcqRel) + 1 >= LATE_ROUNDS {
            self.failed(
                headline,
                &format_args!("{why} ({LATE_ROUNDS} calls in a row)"),
            );
        } else {
            tracing::debug!(error = %why, "late answer from redis: this decision falls back");
        }
    }

    /// Marks Redis down after a failed call; `headline` says what kind of failure (the first
    /// one of an outage is logged as `headline: ...`, with `why` as its error).
    pub(super) fn failed(&self, headline: &str, why: &dyn Display) {
        self.down_for(false, headline, why);
    }

    /// Marks Redis down after it refused a call for what the call asks (out of memory, a
    /// read-only replica, an ACL), which a `PING` does not meet: only a limit's answered call
    /// ends this outage ([`pinged`](Self::pinged)).
    pub(super) fn refused(&self, headline: &str, why: &dyn Display) {
        self.down_for(true, headline, why);
    }

    /// One bit per kind of failure, for [`logged`](Self::logged): out of reach, a refused
    /// call, a refused password, anything else.
    fn kind(refused: bool, headline: &str) -> u8 {
        match (refused, headline) {
            (_, super::UNREACHABLE) => 1,
            (true, _) => 2,
            (false, super::REFUSED) => 4,
            (false, _) => 8,
        }
    }

    fn down_for(&self, refused: bool, headline: &str, why: &dyn Display) {
        // Before `down`: whoever sees Redis down sees why.
        self.refused.store(refused, Ordering::Release);
        let kind = Self::kind(refused, headline);
        let backoff = if self.down.swap(true, Ordering::AcqRel) {
            // A failed probe: wait twice as long before the next one. A new kind of failure
            // is logged once: the outage's first line may name another cause than the one
            // that lasts (redis111: `unreachable` as Redis was killed, then every probe
            // refused `NOAUTH` by the Redis started in its place, and nothing said so).
            if self.logged.fetch_or(kind, Ordering::AcqRel) & kind == 0 {
                tracing::warn!(
                    error = %one_line(why),
                    "redis still down, now {headline}: global limits keep to their failure policy"
                );
            }
            let b = self.backoff.load(Ordering::Relaxed);
            let b = b.saturating_mul(2).min(self.max_backoff);
            self.backoff.store(b, Ordering::Relaxed);
            b
        } else {
            self.logged.store(kind, Ordering::Release);
            self.outages.fetch_add(1, Ordering::Relaxed);
            self.went_down.notify_waiters();
            tracing::warn!(
                error = %one_line(why),
                "{headline}: global limits fall back to their failure policy"
            );
            self.backoff.load(Ordering::Relaxed)
        };
        self.next_probe
            .store(self.now().saturating_add(backoff), Ordering::Release);
    }

    /// Completes when Redis is next marked down (up → down).
    pub(super) fn went_down(&self) -> tokio::sync::futures::Notified<'_> {
        self.went_down.notified()
    }

    /// Completes when Redis is next marked up (down → up).
    pub(super) fn came_up(&self) -> tokio::sync::futures::Notified<'_> {
        self.came_up.notified()
    }

    /// Times Redis came back (down → up) so far.
    pub(super) fn recoveries(&self) -> u64 {
        self.recoveries.load(Ordering::Acquire)
    }

    pub(super) fn fell_back(&self) {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn snapshot(&self) -> HealthSnapshot {
        HealthSnapshot {
            up: !self.down.load(Ordering::Acquire),
            outages: self.outages.load(Ordering::Relaxed),
            recoveries: self.recoveries.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
            late: self.late.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[tokio::test(start_paused = true)]
    async fn a_down_redis_is_probed_by_one_caller_at_a_time_with_growing_backoff() {
        let h = Health::new(Duration::from_millis(50), Duration::from_millis(150));
        assert!(h.may_call());
        h.failed("redis unreachable", &"boom");
        assert!(!h.may_call(), "no probe before the backoff");
        tokio::time::advance(Duration::from_millis(50)).await;
        assert!(h.may_call(), "the first caller after the backoff probes");
        assert!(!h.may_call(), "only one caller probes");
        h.failed("redis unreachable", &"still down");
        tokio::time::advance(Duration::from_millis(99)).await;
        assert!(!h.may_call(), "the backoff doubled");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(h.may_call());
        h.succeeded();
        assert!(h.may_call() && h.may_call(), "up: everyone calls");
        let s = h.snapshot();
        assert_eq!((s.up, s.outages, s.recoveries), (true, 1, 1));
    }

    const BUDGET: Duration = Duration::from_millis(20);

    /// Sends a call now and lets it miss the budget.
    async fn sent_then_late(h: &Health) -> u64 {
        let sent = h.now();
        tokio::time::advance(BUDGET).await;
        sent
    }

    /// Review 3, item 5: one late answer marked the whole store down (48 outages in 10 s on
    /// a busy host, each a probe backoff of fallbacks). A lone late answer, however many
    /// calls were in flight with it, now falls back alone; a second round in a row (a call
    /// sent after the first late answer) marks Redis down.
    #[tokio::test(start_paused = true)]
    async fn a_lone_late_answer_is_no_outage_and_two_rounds_in_a_row_are() {
        let h = Health::new(Duration::from_millis(50), Duration::from_millis(150));
        let first = h.now();
        let also_in_flight = h.now();
        tokio::time::advance(BUDGET).await;
        h.late(first, "redis unreachable", &"no answer within 20ms");
        h.late(
            also_in_flight,
            "redis unreachable",
            &"no answer within 20ms",
        );
        let s = h.snapshot();
        assert_eq!((s.up, s.outages, s.late), (true, 0, 2), "one hiccup: {s:?}");
        assert!(h.may_call(), "up: the next decision asks redis");

        // An answer in between: the next late one starts again from one round.
        h.succeeded();
        let sent = sent_then_late(&h).await;
        h.late(sent, "redis unreachable", &"late again");
        assert!(h.snapshot().up, "an answer reset the rounds");

        // Sent after that late answer was seen, and late too: Redis is not answering.
        let sent = sent_then_late(&h).await;
        let notified = h.went_down();
        tokio::pin!(notified);
        notified.as_mut().enable();
        h.late(sent, "redis unreachable", &"still no answer");
        let s = h.snapshot();
        assert_eq!((s.up, s.outages, s.late), (false, 1, 4), "{s:?}");
        assert!(notified.now_or_never().is_some(), "waiters are woken");
        assert!(
            !h.may_call(),
            "down: decisions fall back at once until the probe"
        );

        // While down a late probe is a failed probe: the backoff doubles.
        tokio::time::advance(Duration::from_millis(50)).await;
        assert!(h.may_call());
        let sent = sent_then_late(&h).await;
        h.late(sent, "redis unreachable", &"probe late");
        tokio::time::advance(Duration::from_millis(99)).await;
        assert!(!h.may_call(), "the backoff doubled");
        let s = h.snapshot();
        assert_eq!(
            (s.outages, s.late),
            (1, 4),
            "a late probe is no new outage: {s:?}"
        );
    }
}
