//! The events of the pool world: small `Copy` values (ids only).

use super::gosync::MutexEvent;
use crate::sim::{TraceRecord, Traced};

/// Something that happens in the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The next open-loop request arrives (`Get` is called).
    Arrival,
    /// A closed-loop client issues its next request.
    ClientIssue {
        /// The client.
        client: u32,
    },
    /// `connNew` finished for waiter `w` (its connection id is in the waiter).
    DialDone {
        /// The waiter.
        w: u32,
    },
    /// `ResetSetting`/`ApplySetting` round trips finished; the query starts.
    SettingDone {
        /// The waiter.
        w: u32,
    },
    /// The query finished; the connection is recycled (`put`).
    QueryDone {
        /// The waiter.
        w: u32,
    },
    /// Waiter `w`'s ctx expires (`ctx.Done` fires). Stale when `gen` no longer matches.
    /// Only with one event per timer (`PoolWorld::set_deadline_events`, a check's switch);
    /// otherwise the pool keeps its timers itself and fires them from [`Event::DeadlineAlarm`].
    Deadline {
        /// The waiter.
        w: u32,
        /// Its generation when the timer was set.
        gen: u32,
    },
    /// The earliest of the parked waiters' ctx timers the pool keeps may be due: every timer
    /// due now fires, in arming order (`super::timers`).
    DeadlineAlarm,
    /// Waiter `w`'s goroutine runs its `select` after a wake-up.
    WaiterRuns {
        /// The waiter.
        w: u32,
    },
    /// The holder of `wl.mu` releases it.
    MutexRelease,
    /// The starvation worker's ticker fires.
    StarvationTick,
    /// An event of the `GoSync` `wl.mu` (a woken or handed-off goroutine runs, a spin ends).
    Mutex(MutexEvent),
}

impl Traced for Event {
    #[inline]
    fn record(&self) -> TraceRecord {
        let (kind, index, a) = match *self {
            Event::Arrival => ("arrival", 0, 0),
            Event::ClientIssue { client } => ("client_issue", client, 0),
            Event::DialDone { w } => ("dial_done", w, 0),
            Event::SettingDone { w } => ("setting_done", w, 0),
            Event::QueryDone { w } => ("query_done", w, 0),
            Event::Deadline { w, gen } => ("deadline", w, gen as u64),
            Event::DeadlineAlarm => ("deadline_alarm", 0, 0),
            Event::WaiterRuns { w } => ("waiter_runs", w, 0),
            Event::MutexRelease => ("mutex_release", 0, 0),
            Event::StarvationTick => ("starvation_tick", 0, 0),
            Event::Mutex(m) => {
                let (kind, g) = m.describe();
                (kind, g, 0)
            }
        };
        TraceRecord {
            component: "connpool",
            index,
            kind,
            a,
            b: 0,
        }
    }
}
