//! Rolling restarts vs vtgate discovery (`docs/rollout.md`; the incident is the vitess-operator
//! report behind PR #797, replayed by `models/incident-000.ron`).
//!
//! The vitess-operator restarts one tablet per shard at a time and goes on once the restarted
//! pod has been Ready for `tablet_available_timeout` (30 s). Each vtgate learns a restarted
//! tablet's new address only at its next topology poll (every `tablet_refresh_interval`, 1 m).
//! A vtgate that has not yet discovered the first restarted replica when the second is
//! drained knows no serving REPLICA and fails every replica read. This model reproduces that:
//! per vtgate, the exposure is the time it cannot serve a replica read; with uniform phases,
//! two replicas and no other delays its mean per drain is (T − A)² / (2T).
//!
//! Where the incident's account and the code (planetscale/vitess-operator, vitessio/vitess
//! release-22.0) differ, the code is followed:
//! - Exposure is "discovery lag − timeout" only to first order: the next drain comes
//!   `serving_after_publish` (the address is published before the tablet serves), up to one
//!   readiness-probe period, the timeout and one controller step after the tablet serves, and
//!   the vtgate can discover the address before the tablet serves (vitessio/vitess
//!   `go/vt/discovery/topology_watcher.go`, `docs/rollout.md`, the derived timing model).
//! - After PRS, a vtgate with no health stream to the new primary reloads the shard at once
//!   (`loadTabletsTrigger`, vitessio/vitess `go/vt/discovery/topology_watcher.go`), which also
//!   discovers any replica it had missed. A vtgate
//!   that knows the new primary does not, so the incident's burst 2 (the old primary drained while
//!   two vtgates still missed replica B) happens when PRS promotes the replica restarted first.
//!   In the code this is a race, and the model picks one outcome: `reparentTablets` starts
//!   `SetReplicationSource` on the old primary (which turns it REPLICA at once) before
//!   `PromoteReplica` on the new one (planned_reparenter.go), so a vtgate may see the old
//!   primary's REPLICA update while it knows no PRIMARY and reload too (healthcheck.go), which
//!   would remove burst 2. The incident's burst 2 supports the outcome modelled here.
//! - A restarted tablet's health stream answers only from its first serving state (vttablet
//!   starts its gRPC server after `tmState.Open`), though its record is published earlier.
//! - Primary writes are buffered during PRS (`enable_buffer`, 10 s, set by the operator:
//!   vitess-operator `pkg/controller/vitessshard/reconcile_tablets.go`), so they fail only when
//!   the primary outage at a vtgate exceeds the buffer window.
//!
//! Not modelled: Kubernetes' 1 s resolution of the Ready `LastTransitionTime` (Available may
//! come up to 1 s earlier in reality), the lameduck period between SIGTERM and NOT_SERVING
//! (affects only `routed_to_dead_errors`), and a topology read that blocks rather than fails.
//!
//! Cells ([`cells`]): vtgates and tablets per cell, which cells each vtgate watches
//! (`--cells_to_watch`), and a topology outage that makes the affected cells' polls skip
//! their tick (vitessio/vitess `go/vt/discovery/topology_watcher.go` `loadTablets`).
//!
//! Metrics: `bursts` merges exposure intervals that had at least one failed read (a burst's
//! bounds are exposure bounds, not first and last error); `goodput` counts over the whole run,
//! which ends at the last re-discovery, so compare errors per rollout across gates rather than
//! goodput.
//!
//! Digest (the rule is in [`crate::sim::trace`]): besides the events, the draw records are the
//! Fast-mode Poisson counts: one per closed read interval of a (vtgate, shard) route with no
//! serving replica and per closed write outage that fails (`workload`, route
//! `g × shards + shard`, `reads_dead` / `reads_none` / `writes_failed`, count, interval length
//! in ns), those of the intervals closed when the run stops included; then, when the run
//! stops, the successful reads and the successful writes, one count each over the time summed
//! across every route's other intervals (`workload`, the sum's bits above 64 (0 below 584
//! years), `reads_ok` / `writes_ok`, count, the sum in ns (its low 64 bits); no record when
//! the sum is 0); and in per-query mode the shard each query picks when there are several
//! (`workload`, vtgate, `shard`, shard). Every other draw (phases, jitter, tablet and operator
//! durations, replica order, PRS candidate) is an event time or shows in an event
//! (`Drain { tablet }`, `HealthPush { primary }`).
//!
//! Files, in reading order: each imports only files after it. [`world`] (the components
//! composed, the constructor, the event dispatch; `reuse.rs`, above it, resets a finished
//! world in place for the next run), [`metrics`] (the metric row, the bursts, the readable
//! account), [`vtgate`] (each vtgate's topology watcher and health checks), [`routing`] (what
//! the vtgates' views route to, and the discoveries), [`operator`] (the rolling restart),
//! [`tablet`] (each tablet's lifecycle and restarts), [`workload`] (the queries and their
//! accounting), [`cells`], [`streams`] (the components' draw helpers), [`event`], and
//! [`params`] (every parameter, default and source). [`advise`] (`vtsim advise`: the smallest
//! `tablet_available_timeout` below a risk target) stands apart.

pub mod advise;
pub mod cells;
pub mod event;
pub mod metrics;
pub mod operator;
pub mod params;
mod reuse;
pub mod routing;
pub mod streams;
pub mod tablet;
pub mod vtgate;
pub mod workload;
pub mod world;

pub use metrics::Burst;
pub use params::{
    CellParams, DurationDist, ObservedDraw, OperatorParams, Phase, PrsCandidate, PrsReload, ReplicaOrder, RolloutParams,
    TabletParams, TopoOutage, VtgateParams, WorkloadMode, WorkloadParams,
};
pub use operator::PrsRec;
pub use tablet::{RestartRec, NONE};
pub use vtgate::Note;
pub use workload::Exposure;
pub use world::RolloutWorld;

use super::{Model, Run, RunOptions};
use crate::model::kit::Checked;
use crate::sim::{Draws, RunEnd, SimTime, Simulation, Trace};

/// The rollout model.
pub struct Rollout;

/// One rollout run: its output and its [`RolloutDetail`].
pub type RolloutRun = Run<Rollout>;

/// What a rollout run keeps besides the metric row, for tests and tools.
pub struct RolloutDetail {
    /// Every restart with its times and per-vtgate discovery.
    pub restarts: Vec<RestartRec>,
    /// Every exposure interval.
    pub exposures: Vec<Exposure>,
    /// Error bursts.
    pub bursts: Vec<Burst>,
    /// Every full topology poll (vtgate, time).
    pub poll_log: Vec<(u16, SimTime)>,
    /// Each vtgate's ticker phase (its first poll, before jitter).
    pub phases: Vec<SimTime>,
    /// What the vtgates' logs show, in time order (empty unless the run kept its logs:
    /// [`run_with_logs`]).
    pub journal: Vec<(SimTime, Note)>,
    /// Every PlannedReparentShard.
    pub prs: Vec<PrsRec>,
    /// When the rollout ended (the last shard's last tablet Available; zero if it did not).
    pub rollout_end: SimTime,
}

impl RolloutDetail {
    /// Discovery lags in seconds, `[restart][vtgate]` (`None`: not discovered).
    pub fn lags_s(&self) -> Vec<Vec<Option<f64>>> {
        self.restarts
            .iter()
            .map(|r| {
                r.discovered
                    .iter()
                    .map(|d| (*d != SimTime::MAX).then(|| d.since(r.serving_at).as_secs_f64()))
                    .collect()
            })
            .collect()
    }
}

/// Simulate one run and keep its details.
pub fn run_detailed(p: &RolloutParams, seed: u64, opts: RunOptions) -> RolloutRun {
    super::run_detailed(p, seed, opts)
}

/// [`run_detailed`], also keeping what the vtgates' logs show ([`RolloutDetail::journal`]);
/// the digest is the same.
pub fn run_with_logs(p: &RolloutParams, seed: u64, opts: RunOptions) -> RolloutRun {
    super::run_with(p, seed, opts, true)
}

impl Model for Rollout {
    type Params = RolloutParams;
    type World = RolloutWorld;
    type Metrics = metrics::RolloutMetrics;
    type Detail = RolloutDetail;
    fn validate(p: &RolloutParams) -> Checked {
        p.check()
    }
    fn simulation(p: &RolloutParams, seed: u64, trace: Trace, logs: bool) -> Simulation<Self::World> {
        RolloutWorld::simulation_with_logs(p, seed, trace, logs)
    }
    /// A worker's runs of one parameter set reuse one world (`reuse.rs`).
    const REUSES_WORLD: bool = true;
    fn reset(_p: &RolloutParams, seed: u64, logs: bool, sim: &mut Simulation<RolloutWorld>) {
        RolloutWorld::reset_in(sim, seed, logs);
    }
    fn horizon(p: &RolloutParams, _w: &RolloutWorld) -> SimTime {
        SimTime::ZERO + p.horizon
    }
    /// The open intervals close with Poisson draws; the bursts merge the exposures.
    fn finish(p: &RolloutParams, w: &mut RolloutWorld, mut draws: Draws<'_>) {
        w.finish(&mut draws);
        w.bursts = metrics::bursts(&w.workload.exposures, p.workload.burst_merge_gap);
    }
    fn metrics(_p: &RolloutParams, w: &RolloutWorld, end: SimTime, events: u64) -> Self::Metrics {
        metrics::values(&w.outcome(), end, events)
    }
    fn report(_p: &RolloutParams, w: &RolloutWorld, run: &RunEnd) -> String {
        metrics::report(&w.outcome(), &run.metrics, &run.digest)
    }
    fn detail(_p: &RolloutParams, w: RolloutWorld, _end: SimTime) -> RolloutDetail {
        RolloutDetail {
            restarts: w.tablets.restarts,
            exposures: w.workload.exposures,
            bursts: w.bursts,
            poll_log: w.gates.poll_log,
            phases: w.gates.vtgates.iter().map(|v| v.phase).collect(),
            journal: w.gates.journal.unwrap_or_default(),
            prs: w.operator.prs,
            rollout_end: w.operator.rollout_end,
        }
    }
}

twin_model! {
    /// [`Rollout`] stepping every health-check dial that must fail before a new process serves
    /// as its own event (`Gates::live_dial`), as the model did before those dials
    /// were skipped: the same runs, every metric but `handled_events` equal, more events,
    /// another digest. Only for the check of that in `tests/rollout.rs`.
    RolloutSteppedDials of Rollout,
    simulation: |p, seed, trace, logs| {
        let mut sim = RolloutWorld::simulation_with_logs(p, seed, trace, logs);
        sim.world.gates.step_dials = true;
        sim
    }
}

twin_model! {
    /// [`Rollout`] with every vtgate's next poll its own pending event, as a nested rollout
    /// runs (`RolloutWorld::simulation_nested`), instead of the ring of `vtgate::Tick`: the
    /// same events in the same order, the same digest. Only for the check of that in
    /// `tests/rollout.rs`.
    RolloutPollEvents of Rollout,
    simulation: |p, seed, trace, logs| RolloutWorld::simulation_built(p, seed, trace, logs, false)
}
