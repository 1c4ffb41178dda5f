//! The pool of one vttablet process, as the fleet world keeps it.

use crate::model::connpool::PoolWorld;
use crate::sim::SimTime;

/// The pool of one vttablet process.
pub struct Slot {
    /// The pool.
    pub(crate) w: PoolWorld,
    /// Its tablet.
    pub(crate) tablet: u16,
    /// From this time on (SIGTERM + `shutdown_grace_period`) what ends in this pool fails as
    /// "pool closed" (queries killed, pool closed); `SimTime::MAX` while it serves.
    pub(crate) closes_at: SimTime,
    /// The pod is gone: its remaining events are dropped.
    pub(crate) dead: bool,
}
