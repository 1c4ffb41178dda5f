//! What the fleet counts: the reads of each second of the run, and the run's totals.

use crate::sim::SimTime;

/// Counts of one second of the run (what `timeline.csv` shows).
#[derive(Clone, Copy, Debug, Default)]
pub struct Second {
    /// Reads arriving at a vtgate.
    pub offered: u64,
    /// Reads completed in this second, served before their deadline.
    pub good: u64,
    /// Reads failed with no healthy REPLICA known to their vtgate.
    pub no_healthy: u64,
    /// Reads whose every attempt hit a tablet that had stopped serving.
    pub routed_to_dead: u64,
    /// Reads that timed out in (or were served after their deadline by) a vttablet pool.
    pub pool_timeouts: u64,
    /// Reads that were in a drained tablet's pool when it closed.
    pub pool_closed: u64,
}

impl Second {
    /// Failed reads of this second, all causes.
    pub fn failed(&self) -> u64 {
        self.no_healthy + self.routed_to_dead + self.pool_timeouts + self.pool_closed
    }
}

/// Run totals.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    /// The totals of the causes (same fields as a second).
    pub all: Second,
    /// Reads retried on another tablet after a retryable error.
    pub retries: u64,
    /// Reads still in a pool when the run ended (neither good nor failed).
    pub in_flight_at_end: u64,
}

/// The second `now` falls in, grown on demand.
#[inline]
pub(crate) fn second_of(seconds: &mut Vec<Second>, now: SimTime) -> &mut Second {
    let i = (now.0 / 1_000_000_000) as usize;
    if i >= seconds.len() {
        seconds.resize(i + 1, Second::default());
    }
    &mut seconds[i]
}
