//! Rolling restarts vs vtgate discovery (`spec/rollout.md`, seed `000_baaf1458e77f4857`).
//!
//! The vitess-operator restarts one tablet per shard at a time and goes on once the restarted
//! pod has been Ready for `tablet_available_timeout` (30 s). Each vtgate learns a restarted
//! tablet's new address only at its next topology poll (every `tablet_refresh_interval`, 1 m).
//! A vtgate that has not yet discovered the first restarted replica when the second is
//! drained knows no serving REPLICA and fails every replica read. This model reproduces that:
//! per vtgate, the exposure is the time it cannot serve a replica read; with uniform phases,
//! two replicas and no other delays its mean per drain is (T − A)² / (2T).
//!
//! Where the spec and the code (`reference/vitess-semantics.md`) differ, the code is followed:
//! - Exposure is "discovery lag − timeout" only to first order: the next drain comes
//!   `serving_after_publish` (the address is published before the tablet serves), up to one
//!   readiness-probe period, the timeout and one controller step after the tablet serves, and
//!   the vtgate can discover the address before the tablet serves (ref §B.1, §D).
//! - After PRS, a vtgate with no health stream to the new primary reloads the shard at once
//!   (`loadTabletsTrigger`, ref §B.1), which also discovers any replica it had missed. A vtgate
//!   that knows the new primary does not, so the seed's burst 2 (the old primary drained while
//!   two vtgates still missed replica B) happens when PRS promotes the replica restarted first.
//!   In the code this is a race, and the model picks one outcome: `reparentTablets` starts
//!   `SetReplicationSource` on the old primary (which turns it REPLICA at once) before
//!   `PromoteReplica` on the new one (planned_reparenter.go), so a vtgate may see the old
//!   primary's REPLICA update while it knows no PRIMARY and reload too (healthcheck.go), which
//!   would remove burst 2. The seed's burst 2 supports the outcome modelled here.
//! - A restarted tablet's health stream answers only from its first serving state (vttablet
//!   starts its gRPC server after `tmState.Open`), though its record is published earlier.
//! - Primary writes are buffered during PRS (`enable_buffer`, 10 s, set by the operator, ref
//!   §A.1), so they fail only when the primary outage at a vtgate exceeds the buffer window.
//!
//! Not modelled: Kubernetes' 1 s resolution of the Ready `LastTransitionTime` (Available may
//! come up to 1 s earlier in reality), the lameduck period between SIGTERM and NOT_SERVING
//! (affects only `routed_to_dead_errors`), and topology-server outages.
//!
//! Metrics: `bursts` merges exposure intervals that had at least one failed read (a burst's
//! bounds are exposure bounds, not first and last error); `goodput` counts over the whole run,
//! which ends at the last re-discovery, so compare errors per rollout across gates rather than
//! goodput.
//!
//! Digest (the rule is in [`crate::sim::trace`]): besides the events, the draw records are the
//! Fast-mode Poisson counts, one per closed read or write interval of a (vtgate, shard) route
//! (`workload`, route `g × shards + shard`, `reads_ok` / `reads_dead` / `reads_none` /
//! `writes_ok` / `writes_outage`, count, interval length in ns), those of the intervals closed
//! when the run stops included, and in per-query mode the shard each query picks when there
//! are several (`workload`, vtgate, `shard`, shard). Every other draw (phases, jitter, tablet
//! and operator durations, replica order, PRS candidate) is an event time or shows in an
//! event (`Drain { tablet }`, `HealthPush { primary }`).
//!
//! Files: [`params`] (every parameter, default and source), [`event`], [`world`] (state and
//! dispatch), [`tablet`], [`vtgate`], [`operator`], [`workload`], [`metrics`].

pub mod event;
pub mod metrics;
pub mod operator;
pub mod params;
pub mod tablet;
pub mod vtgate;
pub mod workload;
pub mod world;

pub use metrics::Burst;
pub use params::{
    DurationDist, OperatorParams, Phase, PrsCandidate, PrsReload, ReplicaOrder, RolloutParams,
    TabletParams, VtgateParams, WorkloadMode, WorkloadParams,
};
pub use world::{Exposure, RestartRec, RolloutWorld};

use super::{close_run, MetricDef, Model, RunOptions, RunOutput};
use crate::sim::SimTime;

/// The rollout model.
pub struct Rollout;

/// Everything one run produced, for tests and tools that need more than the metric row.
pub struct RolloutRun {
    /// The metric row, digest and report.
    pub output: RunOutput,
    /// Every restart with its times and per-vtgate discovery.
    pub restarts: Vec<RestartRec>,
    /// Every exposure interval.
    pub exposures: Vec<Exposure>,
    /// Error bursts.
    pub bursts: Vec<Burst>,
    /// Every full topology poll (vtgate, time).
    pub poll_log: Vec<(u16, SimTime)>,
    /// When the run ended.
    pub end: SimTime,
}

impl RolloutRun {
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
    let mut sim = RolloutWorld::simulation(p, seed, opts.trace);
    sim.run_until(SimTime::ZERO + p.horizon);
    let (end, events) = (sim.now(), sim.events());
    // The open intervals close with Poisson draws: before the digest is taken.
    let (w, mut draws) = sim.world_and_draws();
    w.finish(&mut draws);
    let w = &sim.world;
    let bursts = metrics::bursts(&w.exposures, p.workload.burst_merge_gap);
    let values = metrics::values(w, &bursts, end, events);
    let (w, fin) = close_run(sim, &metrics::defs(), values);
    let report = opts
        .report
        .then(|| metrics::report(&w, &bursts, &fin.metrics, &fin.digest));
    RolloutRun {
        output: RunOutput::new(fin, report, vec![]),
        restarts: w.restarts,
        exposures: w.exposures,
        bursts,
        poll_log: w.poll_log,
        end,
    }
}

impl Model for Rollout {
    type Params = RolloutParams;
    fn validate(p: &RolloutParams) -> Result<(), (String, String)> {
        p.check()
    }
    fn metric_defs() -> Vec<MetricDef> {
        metrics::defs()
    }
    fn run(p: &RolloutParams, seed: u64, opts: RunOptions) -> RunOutput {
        run_detailed(p, seed, opts).output
    }
}
