//! The events of the site-poller world and their trace records.

use crate::sim::{TraceRecord, Traced};

/// Events of the site-poller world.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// A Poll starts: probe every site.
    PollStart,
    /// The slowest probe returned: compute states, act, run the serial extras.
    ProbesDone,
    /// The Poll returned: schedule the next one.
    PollEnd,
    /// Fault `i` reaches its nominal time: draw where in the poll period it lands.
    FaultDue(u16),
    /// Fault `i` changes its site's truth.
    FaultStart(u16),
    /// Fault `i` reaches its nominal end (start + duration): draw where in the poll period
    /// its end lands.
    FaultEndDue(u16),
    /// Fault `i` is over: restore what it changed.
    FaultEnd(u16),
    /// A statement changed a site's `read_only` (a fence, or a promotion).
    SetAnswer {
        /// The site.
        site: u16,
        /// It now answers `read_only=0`.
        writable: bool,
    },
}

impl Traced for Event {
    fn record(&self) -> TraceRecord {
        let (component, index, kind, a) = match *self {
            Event::PollStart => ("poller", 0, "poll_start", 0),
            Event::ProbesDone => ("poller", 0, "probes_done", 0),
            Event::PollEnd => ("poller", 0, "poll_end", 0),
            Event::FaultDue(i) => ("fault", i as u32, "due", 0),
            Event::FaultStart(i) => ("fault", i as u32, "start", 0),
            Event::FaultEndDue(i) => ("fault", i as u32, "end_due", 0),
            Event::FaultEnd(i) => ("fault", i as u32, "end", 0),
            Event::SetAnswer { site, writable } => {
                ("site", site as u32, "set_answer", writable as u64)
            }
        };
        TraceRecord {
            component,
            index,
            kind,
            a,
            b: 0,
        }
    }
}

