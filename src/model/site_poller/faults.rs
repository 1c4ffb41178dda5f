//! Scripted faults: when each lands in the poll period, what it changes in its site's truth,
//! what it restores at its end, and what detecting it means.
//!
//! A fault is detected at the `ProbesDone` of the first Poll that started after it (and before
//! its end) and leaves its site in the expected state; a site already believed in that state
//! when the fault starts is counted (`already_believed`), never credited with a zero delay.

use super::event::Event;
use super::params::{Answer, FaultKind, FaultPhase, SitePollerParams};
use super::site::{Down, Site};
use super::tracker::SiteState;
use crate::sim::rng::{uniform, LazyRng};
use crate::sim::{Scheduler, SimDuration, SimRng, SimTime};

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

/// The scripted faults, in file order, and their streams.
pub struct Faults {
    /// The faults and what became of them.
    pub(crate) recs: Vec<FaultRec>,
    /// One stream per fault (`"fault"`, index): where in the poll period it starts and
    /// ends; lazy, since an `Exact` fault draws nothing.
    rngs: Vec<LazyRng>,
}

impl Faults {
    /// The faults of `p`, none started yet.
    pub(super) fn new(p: &SitePollerParams, seed: u64) -> Self {
        let recs = p
            .faults
            .iter()
            .map(|f| FaultRec {
                site: p.site_index(&f.site).expect("validated") as u16,
                kind: f.kind,
                nominal: SimTime::ZERO + f.at,
                start: SimTime::MAX,
                end: SimTime::MAX,
                duration: f.duration,
                expect: match f.kind {
                    FaultKind::Refused | FaultKind::Dark | FaultKind::Hang => {
                        Some(SiteState::Unreachable)
                    }
                    FaultKind::ReadOnlyFlip => Some(SiteState::ReadOnly),
                    FaultKind::WritableFlip => Some(SiteState::Writable),
                    FaultKind::Flaky { .. } => None,
                },
                detected: SimTime::MAX,
                already_believed: false,
                start_poll: 0,
                phase: f.phase,
                back_to: None,
                recovered: SimTime::MAX,
                saved_answer: Answer::ReadOnly,
                saved_down: None,
                saved_flaky: 0.0,
            })
            .collect();
        Faults {
            recs,
            rngs: (0..p.faults.len())
                .map(|i| LazyRng::new(seed, "fault", i as u32))
                .collect(),
        }
    }

    /// Fault `i`'s stream.
    pub(super) fn rng(&mut self, i: usize) -> &mut SimRng {
        self.rngs[i].get()
    }

    /// Fault `i` reaches its nominal time: it starts at + U[0, `period`), the current poll
    /// period.
    pub(super) fn due(
        &mut self,
        i: usize,
        now: SimTime,
        period: SimDuration,
        s: &mut Scheduler<Event>,
    ) {
        let u = uniform(self.rngs[i].get(), 0.0, period.as_secs_f64());
        s.at(
            now + SimDuration::from_secs_f64(u),
            Event::FaultStart(i as u16),
        );
    }

    /// The nominal end (start + duration) is reached: the end lands at + U[0, current poll
    /// period), from the fault's own stream, like the start. Without it the end is phase-locked
    /// to the (backoff) cadence the fault itself set up, and `recovery_s` would be a function
    /// of `duration` modulo the period (e.g. 7 / 27 / 17 s for 2m / 2m10s / 2m20s).
    pub(super) fn end_due(
        &mut self,
        i: usize,
        now: SimTime,
        period: SimDuration,
        s: &mut Scheduler<Event>,
    ) {
        let u = uniform(self.rngs[i].get(), 0.0, period.as_secs_f64());
        s.at(
            now + SimDuration::from_secs_f64(u),
            Event::FaultEnd(i as u16),
        );
    }

    /// Fault `i` starts: it changes its site's truth; `poll_count` Polls have started so far.
    pub(super) fn start(
        &mut self,
        i: usize,
        now: SimTime,
        sites: &mut [Site],
        poll_count: u64,
        s: &mut Scheduler<Event>,
    ) {
        let site = self.recs[i].site as usize;
        let st = &mut sites[site];
        let f = &mut self.recs[i];
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
        f.start_poll = poll_count;
        f.already_believed = f.expect == Some(st.tracker.state);
        if let Some(d) = f.duration {
            let ev = match f.phase {
                FaultPhase::Exact => Event::FaultEnd(i as u16),
                _ => Event::FaultEndDue(i as u16),
            };
            s.at(now + d, ev);
        }
    }

    /// Fault `i` is over: restore what it changed.
    pub(super) fn end(&mut self, i: usize, now: SimTime, sites: &mut [Site]) {
        let site = self.recs[i].site as usize;
        let st = &mut sites[site];
        let f = &mut self.recs[i];
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

    /// Site `i` entered `to` at `now`: detections and recoveries.
    pub(super) fn on_state(&mut self, i: usize, to: SiteState, now: SimTime) {
        for f in &mut self.recs {
            if f.site as usize != i || f.start > now {
                continue;
            }
            if f.end <= now && f.recovered == SimTime::MAX && f.back_to == Some(to) {
                f.recovered = now;
            }
        }
    }

    /// Detections at `now`, the `ProbesDone` of Poll `poll` (started at `poll_start`): this
    /// Poll started after the fault (its probes saw it) and before its end.
    pub(super) fn detect(&mut self, now: SimTime, poll: u64, poll_start: SimTime, sites: &[Site]) {
        for f in &mut self.recs {
            if f.detected == SimTime::MAX
                && f.start_poll < poll
                && f.start <= poll_start
                && poll_start < f.end
                && f.expect == Some(sites[f.site as usize].tracker.state)
            {
                f.detected = now;
            }
        }
    }
}
