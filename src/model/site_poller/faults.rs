//! Scripted faults: when each lands in the poll period, what it changes in its site's truth,
//! what it restores at its end, and what detecting it means.
//!
//! A fault is detected at the `ProbesDone` of the first Poll that started after it (and before
//! its end) and leaves its site in the expected state; a site already believed in that state
//! when the fault starts is counted (`already_believed`), never credited with a zero delay.

use super::event::Event;
use super::params::{Answer, FaultKind, FaultPhase};
use super::tracker::SiteState;
use super::world::SitePollerWorld;
use crate::sim::rng::uniform;
use crate::sim::{Scheduler, SimDuration, SimTime};

/// Why a site does not answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Down {
    /// Probes error fast.
    Refused,
    /// Probes fail at min(driver timeout, probe timeout).
    Dark,
    /// Probes fail at the probe timeout.
    Hang,
}

/// One scripted fault and what became of it.
#[derive(Clone, Copy, Debug)]
pub struct FaultRec {
    /// Site index.
    pub site: u16,
    /// What it does.
    pub(crate) kind: FaultKind,
    /// Nominal start.
    pub(crate) nominal: SimTime,
    /// Actual start (`SimTime::MAX`: not started before the horizon).
    pub start: SimTime,
    /// End (`SimTime::MAX`: lasts to the end).
    pub end: SimTime,
    /// How long it lasts.
    pub(crate) duration: Option<SimDuration>,
    /// The state that detects it (None: nothing to detect, e.g. Flaky).
    pub(crate) expect: Option<SiteState>,
    /// Detection: the end of probing (`ProbesDone`) of the first Poll that started after the
    /// fault did (its probes saw the new truth), started before the end, and left the site in
    /// `expect`. Never the fault's start itself, even when the site was already believed in
    /// `expect` then (see [`Self::already_believed`]).
    pub(crate) detected: SimTime,
    /// The site was already believed in `expect` when the fault started (e.g. a false
    /// Unreachable from flaky probes): counted, not credited as a zero-delay detection.
    pub(crate) already_believed: bool,
    /// Polls started before the fault started: Poll `seq > start_poll` saw the new truth.
    pub(crate) start_poll: u64,
    /// How the start was placed; the end's phase is drawn the same way unless `Exact`.
    pub(crate) phase: FaultPhase,
    /// After the end: the state the restored truth implies.
    pub(crate) back_to: Option<SiteState>,
    /// When the site reached `back_to` after the end.
    pub(crate) recovered: SimTime,
    /// The site's answer before the fault (restored at its end).
    pub(super) saved_answer: Answer,
    /// Why the site did not answer before the fault, if it did not (restored at its end).
    pub(super) saved_down: Option<Down>,
    /// The site's transient failure probability before the fault (restored at its end).
    pub(super) saved_flaky: f64,
}

impl SitePollerWorld {
    /// The current poll period: this Poll's start to the next one's when it is known, else the
    /// most recent full period.
    pub(super) fn current_period(&self) -> SimDuration {
        match self.next_start {
            Some(n) if self.poll_count > 0 => n.since(self.last_start),
            _ => self.last_period,
        }
    }

    pub(super) fn fault_due(&mut self, i: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let period = self.current_period();
        let u = uniform(self.fault_rngs[i].get(), 0.0, period.as_secs_f64());
        s.at(
            now + SimDuration::from_secs_f64(u),
            Event::FaultStart(i as u16),
        );
    }

    /// The nominal end (start + duration) is reached: the end lands at + U[0, current poll
    /// period), from the fault's own stream, like the start. Without it the end is phase-locked
    /// to the (backoff) cadence the fault itself set up, and `recovery_s` would be a function
    /// of `duration` modulo the period (e.g. 7 / 27 / 17 s for 2m / 2m10s / 2m20s).
    pub(super) fn fault_end_due(&mut self, i: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let period = self.current_period();
        let u = uniform(self.fault_rngs[i].get(), 0.0, period.as_secs_f64());
        s.at(
            now + SimDuration::from_secs_f64(u),
            Event::FaultEnd(i as u16),
        );
    }

    pub(super) fn fault_start(&mut self, i: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let site = self.faults[i].site as usize;
        let st = &mut self.sites[site];
        let f = &mut self.faults[i];
        f.start = now;
        f.saved_answer = st.answer;
        f.saved_down = st.down;
        f.saved_flaky = st.flaky_p;
        match f.kind {
            FaultKind::Refused => st.down = Some(Down::Refused),
            FaultKind::Dark => st.down = Some(Down::Dark),
            FaultKind::Hang => st.down = Some(Down::Hang),
            FaultKind::ReadOnlyFlip => st.answer = Answer::ReadOnly,
            FaultKind::WritableFlip => st.answer = Answer::Writable,
            FaultKind::Flaky { p } => st.flaky_p = p,
        }
        f.start_poll = self.poll_count;
        f.already_believed = f.expect == Some(st.tracker.state);
        if let Some(d) = f.duration {
            let ev = match f.phase {
                FaultPhase::Exact => Event::FaultEnd(i as u16),
                _ => Event::FaultEndDue(i as u16),
            };
            s.at(now + d, ev);
        }
    }

    pub(super) fn fault_end(&mut self, i: usize, now: SimTime) {
        let site = self.faults[i].site as usize;
        let st = &mut self.sites[site];
        let f = &mut self.faults[i];
        f.end = now;
        match f.kind {
            FaultKind::Refused | FaultKind::Dark | FaultKind::Hang => st.down = f.saved_down,
            FaultKind::ReadOnlyFlip | FaultKind::WritableFlip => st.answer = f.saved_answer,
            FaultKind::Flaky { .. } => st.flaky_p = f.saved_flaky,
        }
        f.back_to = match (st.down, st.answer) {
            (Some(_), _) => Some(SiteState::Unreachable),
            (None, Answer::Writable) => Some(SiteState::Writable),
            (None, Answer::ReadOnly) => Some(SiteState::ReadOnly),
        };
        if f.back_to == Some(st.tracker.state) {
            f.recovered = now;
        }
    }
}
