//! The fleet world: a rolling restart whose drained reads land on the survivors' vttablet
//! connection pools (`docs/fleet.md`).
//!
//! Composed, not copied: the rollout model's world ([`crate::model::rollout`]: vtgates with
//! their topology watchers and health streams, tablets, the vitess-operator's rolling
//! restart) runs unchanged inside this world, and every vttablet process has the connpool
//! model's pool ([`crate::model::connpool`]: the same waitlist code, all four variants, `wl.mu`
//! as Go's `sync.Mutex` or FIFO) serving per-query replica reads with a service-time
//! distribution and a deadline mix. Each component runs its own `handle` on a nested
//! scheduler ([`crate::sim::nest`]); this world only reads their state and wraps their events
//! ([`event::Event`]).
//!
//! What the fleet adds, following vitessio/vitess v22.0.3:
//! - *Routing* (`go/vt/vtgate/tabletgateway.go` `withRetry`): each attempt picks uniformly
//!   among the healthy REPLICAs the vtgate knows (`GetHealthyTabletStats`: its health checks
//!   connected and serving, `go/vt/discovery/healthcheck.go`) and not tried yet (the
//!   `shuffleTablets` of v22, first tablet not in `invalidTablets`); none: UNAVAILABLE "no
//!   healthy tablet available" at once (`no_healthy_errors`). A tablet that has stopped
//!   serving (SIGTERM, `StartRequest` CLUSTER_EVENT) or whose pod is gone (UNAVAILABLE) is
//!   retryable (`go/vt/vttablet/queryservice/wrapped.go` `canRetry`): the next attempt goes at
//!   once to another tablet, at most `gateway.retry_count + 1` attempts; all dead:
//!   `routed_to_dead_errors`. One cell: every tablet is local.
//! - *The pool*: a read that reaches a serving tablet is a `Get` on its pool with the read's
//!   deadline; a wait past it is RESOURCE_EXHAUSTED "connection pool timed out"
//!   (`go/pools/smartconnpool/pool.go` `get`), never retried (`pool_timeouts`).
//! - *The drain*: SIGTERM (the rollout's `Drain`) refuses new queries; those in the pool have
//!   `vttablet.shutdown_grace_period`, then running queries are killed and the pool closes:
//!   whatever ends in it from then on, and whatever is in it when the pod is gone (the
//!   rollout's `Down`), fails with INTERNAL "connection pool is closed"
//!   (`state_manager.go` `unserveCommon`, smartconnpool `ErrConnPoolClosed`;
//!   `pool_closed_errors`). The restarted process (the rollout's `Serve`) gets a new, empty pool.
//!
//! Not modelled: cells (issue 11's multi-cell rollout would bring local-cell-first order),
//! primary writes (the rollout model has them), the query consolidator (distinct reads), the
//! replication-lag filter, the client giving up before the server's deadline (the deadline is
//! the authoritative timeout sent to vttablet), a query killed by its deadline while it runs
//! (a read that acquired a connection before its deadline is goodput when its query ends).
//!
//! Common random numbers: the rollout world is built and driven exactly as the rollout model
//! builds it, from the same seed and the same streams (`vtgate`, `tablet`, `operator`), and
//! nothing else touches its state, so its trajectory (drains, polls, exposures, discovery
//! lags) is the rollout model's on the same seed, draw for draw. The reads draw from
//! `fleet.reads` (one stream per vtgate), pool k from the connpool streams at index k.
//!
//! Digest: the events (a rollout event's record is the rollout model's, a pool event's the
//! connpool model's with `b` = the pool), the pools' draw records, and a draw record for a
//! read whose routing shows only in counters: retried, routed to dead, or failed with no
//! healthy tablet after a shard pick (`fleet`, vtgate, `route`, shard << 32 | tablet + 1
//! (0: none), outcome << 8 | attempts; outcome 0 served by a pool, 1 routed to dead, 2 no
//! healthy tablet). A read served at its first attempt needs none: the pool it reached is in
//! its request record (the connpool model's, index = pool << 8 | setting, with its deadline
//! and service time). A query end that finds its pool's waitlist empty is no event
//! (`PoolWorld::settle` applies it when the pool is next touched, exactly as the event
//! would have: see there); its time is the read's acquisition (its arrival, an event time,
//! when served at once) plus the service time of that record.
//!
//! Files, in reading order: each imports only files after it. [`world`] (the composition,
//! the routing of each read, the event dispatch), [`metrics`] (the metric row, the dips, the
//! account and charts), [`counts`] (the reads of each second and the totals), [`slot`] (one
//! process's pool), [`event`], and [`params`].

pub mod counts;
pub mod event;
pub mod metrics;
pub mod params;
pub mod slot;
pub mod world;

pub use metrics::{Dip, FleetMetrics};
pub use params::{FleetParams, GatewayParams, ReadParams, ReadRate, VttabletParams};
pub use counts::{Second, Totals};
pub use world::FleetWorld;

use super::{Model, Run, RunOptions};
use crate::model::kit::Checked;
use crate::model::rollout::{Exposure, RestartRec};
use crate::sim::{Draws, RunEnd, SimTime, Simulation, Trace};

/// The fleet model.
pub struct Fleet;

/// One fleet run: its output and its [`FleetDetail`].
pub type FleetRun = Run<Fleet>;

/// One pool's counters at the end of a run.
#[derive(Clone, Copy, Debug)]
pub struct PoolSummary {
    /// The tablet whose process it was.
    pub tablet: u16,
    /// Requests (reads) that reached it.
    pub requests: u64,
    /// Completed before their deadline.
    pub completed: u64,
    /// Timed out waiting.
    pub timeouts: u64,
}

/// What a fleet run keeps besides the metric row.
pub struct FleetDetail {
    /// Counts per second of the run.
    pub seconds: Vec<Second>,
    /// Run totals.
    pub totals: Totals,
    /// The dip after every drain.
    pub dips: Vec<Dip>,
    /// Every restart (the rollout model's records).
    pub restarts: Vec<RestartRec>,
    /// Every exposure interval (the rollout model's).
    pub exposures: Vec<Exposure>,
    /// Every pool, in creation order (tablet t's first process is pool t).
    pub pools: Vec<PoolSummary>,
    /// When the rollout and every re-discovery completed (`SimTime::MAX`: not before the end).
    pub complete_at: SimTime,
}

/// Simulate one run and keep its details.
pub fn run_detailed(p: &FleetParams, seed: u64, opts: RunOptions) -> FleetRun {
    super::run_detailed(p, seed, opts)
}

impl Model for Fleet {
    type Params = FleetParams;
    type World = FleetWorld;
    type Metrics = FleetMetrics;
    type Detail = FleetDetail;
    fn validate(p: &FleetParams) -> Checked {
        p.check()
    }
    fn simulation(p: &FleetParams, seed: u64, trace: Trace, logs: bool) -> Simulation<FleetWorld> {
        FleetWorld::simulation(p, seed, trace, logs)
    }
    fn horizon(p: &FleetParams, _w: &FleetWorld) -> SimTime {
        SimTime::ZERO + p.horizon
    }
    /// The rollout's open intervals close (no draws: it has no reads of its own).
    fn finish(_p: &FleetParams, w: &mut FleetWorld, mut draws: Draws<'_>) {
        w.rollout.finish(&mut draws);
        w.finish(draws.now());
    }
    fn metrics(_p: &FleetParams, w: &FleetWorld, end: SimTime, events: u64) -> FleetMetrics {
        metrics::values(&w.outcome(), end, events)
    }
    fn report(_p: &FleetParams, w: &FleetWorld, run: &RunEnd) -> String {
        metrics::report(&w.outcome(), &run.metrics, &run.digest)
    }
    fn artifacts(_p: &FleetParams, w: &FleetWorld, end: SimTime) -> Vec<super::Artifact> {
        metrics::artifacts(&w.outcome(), end)
    }
    fn detail(_p: &FleetParams, w: FleetWorld, _end: SimTime) -> FleetDetail {
        let dips = metrics::dips(&w.rollout.tablets.restarts, &w.seconds);
        FleetDetail {
            pools: w
                .pools
                .iter()
                .map(|p| PoolSummary {
                    tablet: p.tablet,
                    requests: p.w.m.requests,
                    completed: p.w.m.completed,
                    timeouts: p.w.m.timeouts,
                })
                .collect(),
            seconds: w.seconds,
            totals: w.totals,
            dips,
            restarts: w.rollout.tablets.restarts,
            exposures: w.rollout.workload.exposures,
            complete_at: w.complete_at,
        }
    }
}

twin_model! {
    /// [`Fleet`] with every query end scheduled as a `QueryDone` event instead of deferred
    /// (`PoolWorld::settle`): the same runs, every figure but the event count equal, another
    /// digest. Only for the check of that in `tests/fleet.rs`.
    FleetEager of Fleet,
    simulation: |p, seed, trace, logs| FleetWorld::simulation_deferring(p, seed, trace, logs, false)
}

twin_model! {
    /// [`Fleet`] with its rollout stepping every health-check dial that must fail before a new
    /// process serves (`RolloutSteppedDials`): the same runs, every figure but the event count
    /// equal, another digest. Only for the check of that in `tests/fleet.rs`.
    FleetSteppedDials of Fleet,
    simulation: |p, seed, trace, logs| {
        let mut sim = FleetWorld::simulation(p, seed, trace, logs);
        sim.world.rollout.gates.step_dials = true;
        sim
    }
}
