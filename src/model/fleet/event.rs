//! The fleet world's events: the rollout model's events and the connpool model's events
//! (each pool's tagged with its index), wrapped, plus the reads and the end of the run.

use crate::model::connpool::Event as PoolEvent;
use crate::model::rollout::event::Event as RolloutEvent;
use crate::sim::{TraceRecord, Traced};

/// One event of the fleet world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// An event of the rollout world (vtgates, topology, health streams, tablets, operator);
    /// its trace record is the rollout model's.
    Rollout(RolloutEvent),
    /// An event of the pool of vttablet process `pool`; its trace record is the connpool
    /// model's with `b` = the pool's index.
    Pool {
        /// The pool (one per vttablet process: the tablets' first processes, then one per
        /// restart).
        pool: u32,
        /// The pool's event.
        ev: PoolEvent,
    },
    /// One replica read arrives at vtgate `g`.
    Read {
        /// vtgate index.
        g: u16,
    },
    /// A tablet's first pool opens (at time zero).
    Open {
        /// The pool.
        pool: u32,
    },
    /// The tail after the rollout is over: the run ends.
    End,
}

impl Traced for Event {
    #[inline]
    fn record(&self) -> TraceRecord {
        match *self {
            Event::Rollout(e) => e.record(),
            Event::Pool { pool, ev } => {
                let mut r = ev.record();
                r.b = pool as u64;
                r
            }
            Event::Read { g } => TraceRecord {
                component: "fleet",
                index: g as u32,
                kind: "read",
                a: 0,
                b: 0,
            },
            Event::Open { pool } => TraceRecord {
                component: "fleet",
                index: pool,
                kind: "open",
                a: 0,
                b: 0,
            },
            Event::End => TraceRecord {
                component: "fleet",
                index: 0,
                kind: "end",
                a: 0,
                b: 0,
            },
        }
    }
}
