//! Arrivals: open-loop Poisson (steady or bursty) and closed-loop clients, each request with a
//! client deadline.

use std::time::Duration;

/// How requests arrive.
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    /// Open loop: Poisson arrivals at `rate` per second, whatever happens to them.
    Poisson {
        /// Mean arrivals per second.
        rate: f64,
    },
    /// Open loop, bursty: Poisson at `high` for `on` out of every `period`, `low` otherwise.
    Bursty {
        /// Arrivals per second during a burst.
        high: f64,
        /// Arrivals per second between bursts.
        low: f64,
        /// Burst length.
        on: Duration,
        /// Time from one burst's start to the next.
        period: Duration,
    },
    /// Closed loop: `clients` each send a request, wait for its answer (or deadline), think
    /// for an exponential time of mean `think`, and repeat.
    Closed {
        /// Number of clients.
        clients: usize,
        /// Mean think time.
        think: Duration,
    },
}

impl Load {
    /// Open-loop arrival rate at `t` (per second); `None` for closed-loop load.
    pub fn rate_at(&self, t: Duration) -> Option<f64> {
        match *self {
            Load::Poisson { rate } => Some(rate),
            Load::Bursty {
                high,
                low,
                on,
                period,
            } => {
                let phase = t.as_nanos() % period.as_nanos().max(1);
                Some(if phase < on.as_nanos() { high } else { low })
            }
            Load::Closed { .. } => None,
        }
    }
}

/// The client side: load, deadline.
#[derive(Clone, Debug, PartialEq)]
pub struct Clients {
    /// How requests arrive.
    pub load: Load,
    /// A request answered later than this after it arrived is not goodput (the client has
    /// gone); a request still queued at its deadline leaves the queue.
    pub deadline: Duration,
}
