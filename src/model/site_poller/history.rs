//! What the poll loop recorded: every state transition, every Poll (when asked for) and the
//! loop's counters. The report reads these, never the world.

use super::tracker::{ProbeResult, SiteState};
use crate::sim::{SimDuration, SimTime};

/// A state transition the operator logged (`state transition` site, from, to).
#[derive(Clone, Copy, Debug)]
pub struct TransitionRec {
    /// When (`ProbesDone` of the Poll).
    pub(crate) at: SimTime,
    /// Site index.
    pub site: u16,
    /// Previous state.
    pub from: SiteState,
    /// New state.
    pub to: SiteState,
    /// The Poll's sequence number (1 = the first Poll).
    pub(crate) poll: u64,
    /// Counters after the Poll.
    pub(crate) fail_count: u32,
    /// Counters after the Poll.
    pub(crate) recovery_count: u32,
    /// A transition to Unreachable caused by a transient error on an answering site.
    pub(crate) false_unreachable: bool,
}

/// One Poll, kept when the world logs polls.
#[derive(Clone, Debug)]
pub struct PollRec {
    /// Sequence number (1 = first).
    pub seq: u64,
    /// Start.
    pub start: SimTime,
    /// The slowest probe returned.
    pub probes_done: SimTime,
    /// The Poll returned.
    pub end: SimTime,
    /// Per site: probe result and latency.
    pub results: Vec<(ProbeResult, SimDuration)>,
    /// Per site: state after the Poll.
    pub states: Vec<SiteState>,
    /// The interval computed after the Poll.
    pub next_interval: SimDuration,
}

/// The poll loop's books.
pub struct History {
    /// Every state transition.
    pub(crate) transitions: Vec<TransitionRec>,
    /// Every Poll (only when `log_polls`).
    pub(crate) polls: Vec<PollRec>,
    /// Keep [`Self::polls`].
    pub(crate) log_polls: bool,
    /// Polls started.
    pub(crate) poll_count: u64,
    /// Probes sent.
    pub(crate) probe_count: u64,
    /// Longest start-to-start period.
    pub(crate) max_period: SimDuration,
    /// First and latest Poll start.
    pub(crate) first_start: SimTime,
    /// Latest Poll start.
    pub(crate) last_start: SimTime,
}

impl History {
    /// Nothing recorded yet; the first Poll starts at `start`.
    pub(super) fn new(start: SimTime, log_polls: bool) -> Self {
        History {
            transitions: Vec::new(),
            polls: Vec::new(),
            log_polls,
            poll_count: 0,
            probe_count: 0,
            max_period: SimDuration::ZERO,
            first_start: start,
            last_start: start,
        }
    }
}
