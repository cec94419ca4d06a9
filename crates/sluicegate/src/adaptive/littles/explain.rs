//! [`LittlesLaw`]'s state read as an [`Explanation`] of its limit: what it is doing, what it
//! has measured, what holds the limit and what last moved it. Read only; nothing here
//! changes what the algorithm does.

use super::LittlesLaw;
use crate::adaptive::explanation::{Cap, CapSource, ChangeCause, Explanation, LimitChange, Phase};
use crate::clock::Nanos;

impl LittlesLaw {
    /// The explanation [`LimitAlgorithm::explain`](crate::adaptive::LimitAlgorithm::explain)
    /// gives, as of `now`.
    pub(super) fn explanation(&self, now: Nanos) -> Explanation {
        let window = || self.closed.iter();
        let samples: u64 = window().map(|b| b.passes + b.drops).sum();
        let at_limit: u64 = window().map(|b| b.at_limit).sum();
        let turned_away: u64 = window().map(|b| b.turned_away).sum();
        let span: f64 = window().map(|b| b.span.as_secs_f64()).sum();
        Explanation {
            phase: Some(self.phase(now)),
            steered_limit: Some(self.base),
            cap: self.cap(now),
            shared: Some(self.shared.is_some()),
            knee: match self.shared {
                // The line's knee is a real number and may lie far past any limit.
                Some(line) => Some((line.knee.ceil() as usize).min(self.c.max)),
                None => self.knee,
            },
            min_rt: self.min_rt,
            // Requests that slow each other raise the low RTs with every permit: no queue is
            // read from them, and no floor is measured against.
            floor_rt: self.shared.is_none().then(|| self.floor()).flatten(),
            queue: self
                .shared
                .is_none()
                .then(|| self.queue_estimate())
                .flatten(),
            pass_rate: (!self.closed.is_empty()).then(|| Self::rate_of(window())),
            demand: (span > 0.0).then(|| (samples + turned_away) as f64 / span),
            capacity: (self.capacity > 0.0).then_some(self.capacity),
            at_limit: (samples > 0).then(|| at_limit as f64 / samples as f64),
            last_change: self.last_change(now),
        }
    }

    fn phase(&self, now: Nanos) -> Phase {
        if self.probe.is_some() {
            Phase::Probing
        } else if self.cooling(now) {
            Phase::CoolingDown
        } else if self.shared.is_some() {
            Phase::Steady
        } else if self.min_rt.is_none() && !self.demand.leapt() {
            Phase::WarmingUp
        } else if !self.knee_found && self.restarted {
            Phase::Restarting
        } else if !self.knee_found {
            Phase::Starting
        } else {
            Phase::Steady
        }
    }

    /// The cap learnt from fast failures in force, or the bound on the growth after it
    /// lapsed, or a restarted start's bound: whichever holds, if it is below `max`.
    fn cap(&self, now: Nanos) -> Option<Cap> {
        self.any_cap(now).filter(|cap| cap.limit < self.c.max)
    }

    fn any_cap(&self, now: Nanos) -> Option<Cap> {
        if let Some((_, until)) = self.shed.in_force() {
            return Some(Cap {
                limit: self.shed_cap(),
                source: CapSource::FastFailures,
                holds_for: Some(until.saturating_since(now)),
            });
        }
        if self.shed.limit_bound() != usize::MAX {
            return Some(Cap {
                limit: self.shed_cap(),
                source: CapSource::AfterCap,
                holds_for: None,
            });
        }
        // A restarted start's cap binds until its knee is found; through a delay outside, the
        // knee it found is not passed until the delay ends or lapses.
        let delay = self.delay_restart.is_some() && self.knee_found;
        self.restart_cap
            .filter(|_| self.restarted && !self.knee_found || delay)
            .map(|limit| Cap {
                limit: limit.clamp(self.c.min, self.c.max),
                source: CapSource::Capacity,
                holds_for: delay.then(|| self.delay_lapses.saturating_since(now)),
            })
    }

    /// The last change in the log and its cause, read off the state it left: a probe that
    /// started then, or a rise right after the last probe's cut (its end), a cool-down that
    /// started then (a back-off for drops), a cap in force at the limit; otherwise the
    /// direction.
    fn last_change(&self, now: Nanos) -> Option<LimitChange> {
        let &(at, from) = self.limit_log.back()?;
        let to = self.limit;
        // A probe holds the limit down until it ends: the first rise after its cut ends it.
        let after_probe =
            self.limit_log.iter().rev().nth(1).is_some_and(|&(cut, _)| {
                self.last_probe.0 > Nanos::ZERO && cut == self.last_probe.0
            });
        let cause = if to > from {
            if after_probe || self.probe.is_some_and(|p| p.end <= at) {
                ChangeCause::ProbeEnded
            } else {
                ChangeCause::Raise
            }
        } else if self.probe.is_some_and(|p| p.start == at) {
            ChangeCause::Probe
        } else if self.cool_until > Nanos::ZERO && self.cool_until == at + self.c.cool_down {
            ChangeCause::Drops
        } else if self.shed.in_force().is_some() && to == self.shed_cap() {
            ChangeCause::Cap
        } else {
            ChangeCause::Cut
        };
        Some(LimitChange {
            from,
            to,
            ago: now.saturating_since(at),
            cause,
        })
    }
}
