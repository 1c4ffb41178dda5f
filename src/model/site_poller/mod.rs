//! Multi-site `read_only` poller: debounce, adaptive backoff and detection delays
//! (`docs/site_poller.md`; the playground of the bloodraven poller walkthrough "The poll loop
//! and per-site state").
//!
//! The operator is ShipStream/bloodraven's `TopologyManager` (`internal/controller/topology.go`
//! @025b10dc; Go's timer semantics from `src/time/tick.go` and `runtime/time.go`). One loop
//! probes every site in parallel (`SELECT @@read_only`, 5 s context each), applies
//! `computeState` with the non-promotable bypass ([`tracker`]), looks for transitions, runs
//! the serial extras, then sleeps `adaptivePollInterval` — the base interval doubled per
//! failure beyond the threshold of the *worst* site, capped at 30 s — so one long outage slows
//! detection on every other site (the walkthrough's 6 s vs 90 s).
//!
//! Where the code and the specification (`docs/site_poller.md`) differ, the code is followed:
//! - The current loop is a one-shot timer re-armed after each Poll (period = Poll duration +
//!   interval), not a ticker; the ticker of older versions is [`params::LoopDriver::Ticker`].
//! - A dark site's probe fails at the driver's 4 s `statusNetTimeout`, not at the 5 s context
//!   (ShipStream/bloodraven `internal/mysql/checker.go` (`statusNetTimeout`)); `Hang` (5 s) is the
//!   pre-PR #95 behaviour.
//! - Cross-site promotions are attempted only in a Poll with a state transition (code), not on
//!   every poll (docs): `failover.retry_every_poll`, default false.
//! - `EvalCrossSite` is simplified to the roles modelled: non-promotable sites are the
//!   `read-only` role (never core); `dr-only` is not modelled separately; "freshest candidate"
//!   ties resolve to declared order (GTID sets are not modelled).
//!
//! Known limits of the figures:
//! - Failover timing is not calibrated. With `failover.enabled` at the defaults, `new_primary_s`
//!   (fault start -> `recordFailover`) is about 5.6 s for a refused primary and 17.6 s for a
//!   dark one (detection dominates; the promotion steps add about 0.5 s), while the third-party
//!   course "Bloodraven in Production" (pinned to bloodraven v0.9.1-3-gecb1799) measured
//!   about 12.0 s for a clean kill. The step latencies (`gtid_pick`,
//!   `relay_drain`, `promotion_sql`, `confirm`, `dns`) are guesses, not measurements: read
//!   `new_primary_s` as detection + a nominal promotion, not as a predicted outage.
//! - Detection p99 is not monotone in `failure_threshold` at high transient-error rates
//!   (`experiments/flaky-probes.ron`, chart `tradeoff-detection-vs-threshold`; at p = 0.3 the
//!   p99 is about 18, 24, 18, 9, 10, 12 s for thresholds 1..6): the backoff starts once the
//!   worst fail count (any site) exceeds the threshold, so with a low threshold transient
//!   errors often double the interval, and the dead site's remaining polls come at those
//!   longer intervals; a high threshold needs more polls but they stay at the base interval.
//!
//! Not modelled: operator restarts (`Unknown` again), the `authorityEpoch` early return, keyring
//! blocking, the sidecar's lease fencing, split-brain resolution (counted only), taints and DNS
//! other than as a latency. A probe's outcome is fixed by the truth at its start; the serial
//! extras use the truth when the probes return.
//!
//! Digest (the rule is in [`crate::sim::trace`]): besides the events, each Poll's probe round
//! is a batch of draw records, one per site (`probe`, site, `writable` / `read_only` / `error`
//! / `flaky_error`, latency in ns): only the slowest latency is an event time, and every
//! outcome reaches the trackers. A promotion attempt is one more (`failover`, candidate,
//! `failed` or `recorded`, time from the Poll's `ProbesDone` in ns). Fault phases, extras and
//! step latencies are event times.
//!
//! Files: [`world`] (the poll loop, composing the rest, and the dispatch), [`report`]
//! (metrics, timeline, CSV, from the books), [`failover`] (promotions), [`faults`] (scripted
//! faults), [`history`] (the loop's books), [`site`] (a site's truth), [`tracker`]
//! (`computeState`, `adaptivePollInterval`), [`event`], [`params`] (every parameter, default
//! and source).
//!
//! Reading order, top-down (a file imports only files after it): mod.rs, world.rs,
//! report.rs, failover.rs, faults.rs, history.rs, site.rs, tracker.rs, event.rs, params.rs.

pub mod event;
pub mod failover;
pub mod faults;
pub mod history;
pub mod params;
pub mod report;
pub mod site;
pub mod tracker;
pub mod world;

pub use params::{
    Answer, DurationDist, FailoverParams, Fault, FaultKind, FaultPhase, LoopDriver, PollerParams,
    ProbeParams, Role, SiteParams, SitePollerParams,
};
pub use tracker::{Backoff, ProbeResult, SiteState, SiteTracker, Thresholds};
pub use failover::FailoverRec;
pub use faults::FaultRec;
pub use history::{PollRec, TransitionRec};
pub use world::SitePollerWorld;

use super::{Artifact, Model, Run, RunOptions};
use crate::model::kit::Checked;
use crate::sim::{RunEnd, SimTime, Simulation, Trace};

/// The site-poller model.
pub struct SitePoller;

/// One site-poller run: its output and its [`SitePollerDetail`].
pub type SitePollerRun = Run<SitePoller>;

/// What a site-poller run keeps besides the metric row, for tests and tools.
pub struct SitePollerDetail {
    /// Every state transition.
    pub transitions: Vec<TransitionRec>,
    /// Every Poll (when asked for).
    pub polls: Vec<PollRec>,
    /// The faults and their detection.
    pub faults: Vec<FaultRec>,
    /// Promotion attempts.
    pub failovers: Vec<FailoverRec>,
    /// Site names.
    pub site_names: Vec<String>,
}

impl SitePollerDetail {
    /// Detection delay of fault `i` in seconds (None: not detected, or nothing to detect).
    pub fn detection_s(&self, i: usize) -> Option<f64> {
        let f = self.faults.get(i)?;
        (f.detected != SimTime::MAX).then(|| f.detected.since(f.start).as_secs_f64())
    }
}

/// What the report reads of a world: its parameters and its books.
fn books(w: &SitePollerWorld) -> report::Books<'_> {
    report::Books {
        p: &w.p,
        history: &w.history,
        faults: &w.faults.recs,
        failover: &w.failover,
    }
}

/// Simulate one run; keep every Poll when `log_polls` (the report does too).
pub fn run_detailed(
    p: &SitePollerParams,
    seed: u64,
    opts: RunOptions,
    log_polls: bool,
) -> SitePollerRun {
    super::run_with(p, seed, opts, log_polls)
}

impl Model for SitePoller {
    type Params = SitePollerParams;
    type World = SitePollerWorld;
    type Metrics = report::SitePollerMetrics;
    type Detail = SitePollerDetail;
    fn validate(p: &SitePollerParams) -> Checked {
        p.check()
    }
    /// `logs`: keep every Poll.
    fn simulation(
        p: &SitePollerParams,
        seed: u64,
        trace: Trace,
        logs: bool,
    ) -> Simulation<SitePollerWorld> {
        SitePollerWorld::simulation(p, seed, trace, logs)
    }
    fn horizon(p: &SitePollerParams, _w: &SitePollerWorld) -> SimTime {
        SimTime::ZERO + p.horizon
    }
    fn metrics(
        _p: &SitePollerParams,
        w: &SitePollerWorld,
        end: SimTime,
        events: u64,
    ) -> Self::Metrics {
        report::values(&books(w), end, events)
    }
    fn report(_p: &SitePollerParams, w: &SitePollerWorld, run: &RunEnd) -> String {
        report::timeline(&books(w), &run.metrics, &run.digest, run.end)
    }
    fn artifacts(_p: &SitePollerParams, w: &SitePollerWorld, _end: SimTime) -> Vec<Artifact> {
        vec![
            Artifact::Text {
                name: "transitions.csv".into(),
                text: report::transitions_csv(&books(w)),
            },
            Artifact::Text {
                name: "polls.csv".into(),
                text: report::polls_csv(&books(w)),
            },
        ]
    }
    fn detail(_p: &SitePollerParams, w: SitePollerWorld, _end: SimTime) -> SitePollerDetail {
        SitePollerDetail {
            site_names: w.sites.iter().map(|s| s.name.clone()).collect(),
            transitions: w.history.transitions,
            polls: w.history.polls,
            faults: w.faults.recs,
            failovers: w.failover.recs,
        }
    }
}
