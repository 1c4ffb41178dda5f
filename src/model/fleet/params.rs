//! Parameters of the fleet model, with their defaults and where each comes from.
//!
//! The rollout side (`vtgates`, `shards`, `replicas_per_shard`, `vtgate`, `tablets`,
//! `operator`) is the rollout model's own parameter types, with the same field names, so a
//! value means what it means in `models/rollout-default.ron` (`docs/rollout.md`). The pool
//! side (`variant`, `pool`, `costs`) is the connpool model's (`docs/connpool.md`). The fleet's
//! own fields are the replica reads (`reads`), the tablet gateway (`gateway`) and the
//! vttablet shutdown (`vttablet`). Sources are vitessio/vitess (tag v22.0.3) and
//! planetscale/vitess-operator, by file and function; *\[inferred\]* marks a modelling
//! choice with no source in the code.

use crate::model::connpool::{
    ConnPoolParams, CostParams, PoolParams, Variant, Weighted, WorkloadParams as PoolWorkload,
};
use crate::model::dist::DurationDist;
use crate::model::kit::{count, fail, range, Checked, EventTerm};
use crate::model::rollout::{
    OperatorParams, RolloutParams, TabletParams, VtgateParams, WorkloadMode,
    WorkloadParams as RolloutWorkload,
};
use crate::sim::SimDuration;
use serde::{Deserialize, Serialize};

/// Parameters of the fleet model (`docs/fleet.md`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FleetParams {
    /// vtgates (the rollout model's `vtgates`; default 10, the incident's fleet).
    pub vtgates: u32,
    /// Shards, each rolled by the operator (the rollout model's `shards`; default 1).
    pub shards: u32,
    /// REPLICA tablets per shard besides the primary (the rollout model's; default 2). With
    /// an operator `tabletPools` entry of `type: replica` and `replicas: 3`, one is the
    /// primary and 2 serve replica reads (vitess-operator `pkg/apis/planetscale/v2/vitessshard_types.go`
    /// pool type doc).
    pub replicas_per_shard: u32,
    /// vtgate topology watcher and health streams (the rollout model's `vtgate`).
    pub vtgate: VtgateParams,
    /// Tablet restart lifecycle (the rollout model's `tablets`).
    pub tablets: TabletParams,
    /// vitess-operator rolling restart (the rollout model's `operator`); `start_at` beyond
    /// `horizon` runs the fleet with no rollout.
    pub operator: OperatorParams,
    /// The waitlist code of every vttablet pool (the connpool model's `variant`). Default
    /// `Unfixed` (release-22.0).
    pub variant: Variant,
    /// Every vttablet's OLTP read pool (the connpool model's `pool`). Default capacity 96:
    /// `--queryserver-config-pool-size` as vitess-operator sets it (`pkg/operator/vttablet/constants.go`,
    /// `flags.go`; Vitess' own default is 16, vitessio/vitess `go/vt/vttablet/tabletserver/tabletenv/config.go`
    /// `defaultConfig`); dial on demand (smartconnpool `ConnPool.Get`).
    pub pool: PoolParams,
    /// `wl.mu` and Go scheduler costs (the connpool model's `costs`, one calibration).
    pub costs: CostParams,
    /// The replica reads.
    pub reads: ReadParams,
    /// The tablet gateway's retries.
    pub gateway: GatewayParams,
    /// vttablet shutdown.
    pub vttablet: VttabletParams,
    /// After the rollout and every re-discovery completed, the run goes on this long (the
    /// goodput back at its level). Default 30s *\[inferred\]*.
    pub tail: SimDuration,
    /// Stop the run here even if the rollout is not complete. Default 1h.
    pub horizon: SimDuration,
}

/// Replica reads: a Poisson stream through each vtgate, spread uniformly over the shards.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReadParams {
    /// How many reads arrive. Default 500 per second per vtgate (the 10 vtgates ×
    /// 500/s) *\[illustrative\]*.
    pub rate: ReadRate,
    /// How long a read holds its pool connection (the query's execution). Default exponential,
    /// mean 10 ms (the connpool harness of github/vitess-gh PR #241) *\[inferred\]*.
    pub service: DurationDist,
    /// The read's deadline, measured from its arrival at vtgate: a weighted mix. It is the
    /// client's `query_timeout` / `QUERY_TIMEOUT_MS`, sent to vttablet as the authoritative
    /// timeout (`ExecuteOptions.Timeout`, vitessio/vitess `go/vt/vtgate/executorcontext/vcursor_impl.go`,
    /// v21+), so it bounds the pool wait (`tabletserver.go` `execRequest` `withTimeout`, smartconnpool
    /// `ConnPool.Get`). Default 75 % 1 s, 25 % 150 ms (the connpool harness) *\[illustrative:
    /// a default cluster sets no deadline, and the pool wait is bounded only by the 900 s query
    /// timeout vitess-operator sets\]*.
    pub deadline: Vec<Weighted>,
}

/// The replica read rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum ReadRate {
    /// Reads per second through each vtgate.
    PerVtgate {
        /// Reads per second.
        rps: f64,
    },
    /// The offered load per REPLICA with every replica serving, as a fraction of its pool's
    /// service capacity (`pool.capacity` / mean `reads.service`): the fleet's total rate is
    /// `per_replica × replicas_per_shard × shards × capacity / mean service`. During a drain
    /// each survivor receives `R / (R − 1)` times this.
    Load {
        /// Load per replica (1 = the pool's capacity).
        per_replica: f64,
    },
}

/// The tablet gateway (vitessio/vitess `go/vt/vtgate/tabletgateway.go` `withRetry`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewayParams {
    /// `--retry-count`: a read makes at most `retry_count + 1` attempts, each on a tablet not
    /// tried yet, and only after UNAVAILABLE / FAILED_PRECONDITION / CLUSTER_EVENT
    /// (`go/vt/vttablet/queryservice/wrapped.go` `canRetry`). Default 2 (`tabletgateway.go`
    /// `fs.IntVar(&retryCount, "retry-count", 2, ...)`; the operator does not set it).
    pub retry_count: u32,
}

/// vttablet shutdown (vitessio/vitess `go/vt/vttablet/tabletserver/state_manager.go`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VttabletParams {
    /// `--shutdown_grace_period`: after SIGTERM the queries in flight (executing or waiting
    /// in the pool) may finish for this long; then running queries are killed
    /// (`unserveCommon` → `terminateAllQueries`) and the pool is closed, so a waiter still
    /// queued gets INTERNAL "connection pool is closed" (smartconnpool `ErrConnPoolClosed`),
    /// which vtgate does not retry. Default 3s (`tabletenv/config.go` `GracePeriods.Shutdown`).
    pub shutdown_grace_period: SimDuration,
}

impl Default for ReadParams {
    fn default() -> Self {
        let pool = PoolWorkload::default();
        ReadParams {
            rate: ReadRate::PerVtgate { rps: 500.0 },
            service: pool.service,
            deadline: pool.deadline,
        }
    }
}

impl Default for GatewayParams {
    fn default() -> Self {
        GatewayParams { retry_count: 2 }
    }
}

impl Default for VttabletParams {
    fn default() -> Self {
        VttabletParams {
            shutdown_grace_period: SimDuration::from_secs(3),
        }
    }
}

impl Default for FleetParams {
    fn default() -> Self {
        let r = RolloutParams::default();
        FleetParams {
            vtgates: r.vtgates,
            shards: r.shards,
            replicas_per_shard: r.replicas_per_shard,
            vtgate: r.vtgate,
            tablets: r.tablets,
            operator: r.operator,
            variant: Variant::Unfixed,
            pool: PoolParams {
                capacity: 96,
                ..PoolParams::default()
            },
            costs: CostParams::default(),
            reads: ReadParams::default(),
            gateway: GatewayParams::default(),
            vttablet: VttabletParams::default(),
            tail: SimDuration::from_secs(30),
            horizon: SimDuration::from_secs(3600),
        }
    }
}

/// Longest `horizon` (one bucket of the goodput timeline per second is kept).
const MAX_HORIZON_S: u64 = 7 * 24 * 3600;
/// Most connection slots over all pools (each is memory).
const MAX_CONNS: u64 = 10_000_000;

impl FleetParams {
    /// The rollout model's parameters of this fleet: the same rollout, with no read or write
    /// of its own (the fleet's reads are `reads`; primary writes are not modelled here).
    pub fn rollout_params(&self) -> RolloutParams {
        RolloutParams {
            vtgates: self.vtgates,
            shards: self.shards,
            replicas_per_shard: self.replicas_per_shard,
            vtgate: self.vtgate.clone(),
            tablets: self.tablets.clone(),
            operator: self.operator.clone(),
            workload: RolloutWorkload {
                replica_read_rps: 0.0,
                primary_write_rps: 0.0,
                mode: WorkloadMode::Fast,
                ..RolloutWorkload::default()
            },
            horizon: self.horizon,
            // One cell: the fleet's routing has no cell preference to model yet.
            cells: Vec::new(),
        }
    }

    /// The connpool model's parameters of every vttablet pool (its arrivals unused).
    pub fn pool_params(&self) -> ConnPoolParams {
        ConnPoolParams {
            variant: self.variant,
            pool: self.pool.clone(),
            costs: self.costs.clone(),
            workload: PoolWorkload {
                deadline: self.reads.deadline.clone(),
                settings: vec![1.0],
                service: self.reads.service.clone(),
                ..PoolWorkload::default()
            },
        }
    }

    /// Reads per second through each vtgate.
    pub fn rps_per_vtgate(&self) -> f64 {
        match self.reads.rate {
            ReadRate::PerVtgate { rps } => rps,
            ReadRate::Load { per_replica } => {
                let cap = self.pool.capacity as f64 / self.reads.service.mean_s();
                per_replica * (self.replicas_per_shard as f64) * (self.shards as f64) * cap
                    / self.vtgates.max(1) as f64
            }
        }
    }

    /// The terms of the events-per-run estimate over the horizon: per read its arrival and
    /// up to [`crate::model::connpool::params::EVENTS_PER_REQUEST`] pool events; the rollout's
    /// polls; every pool's starvation ticks (tablets plus their restarts).
    pub fn event_terms(&self) -> Vec<EventTerm> {
        let h = self.horizon.as_secs_f64();
        let reads = self.rps_per_vtgate() * self.vtgates as f64 * h;
        let tablets = self.shards as f64 * (self.replicas_per_shard as f64 + 1.0);
        let tick = self.pool.starvation_interval.as_secs_f64();
        let polls = self.vtgates as f64 * h / self.vtgate.tablet_refresh_interval.as_secs_f64();
        vec![
            (
                "reads.rate",
                "replica reads over the horizon x (1 + 10 pool events)",
                reads * (1.0 + crate::model::connpool::params::EVENTS_PER_REQUEST),
            ),
            (
                "vtgate.tablet_refresh_interval",
                "topology polls (vtgates x horizon / interval, each diffing every tablet)",
                polls * tablets,
            ),
            (
                "pool.starvation_interval",
                "starvation ticks of 2 x tablets pools over the horizon",
                if tick > 0.0 { 2.0 * tablets * h / tick } else { 0.0 },
            ),
        ]
    }

    /// Check what serde cannot; the error names the field as a fleet model file writes it.
    pub fn check(&self) -> Checked {
        if self.horizon.as_nanos() > MAX_HORIZON_S * 1_000_000_000 {
            return fail("horizon", "at most 7 days (168h)");
        }
        // The rollout side, with the rollout model's checks: its field names are ours.
        self.rollout_params().check()?;
        let r = &self.reads;
        match r.rate {
            ReadRate::PerVtgate { rps } => {
                range("reads.rate.rps", rps, (0.0, 1e7), "a rate in [0, 1e7] reads per second")?
            }
            ReadRate::Load { per_replica } => range(
                "reads.rate.per_replica",
                per_replica,
                (0.0, 1000.0),
                "a load in [0, 1000] (1 = the pool's capacity)",
            )?,
        }
        r.service.check("reads.service")?;
        if r.service.mean_s().is_nan() || r.service.mean_s() <= 0.0 {
            return fail("reads.service", "a distribution with a mean > 0");
        }
        if r.deadline.is_empty() {
            return fail("reads.deadline", "at least one (weight, value) part");
        }
        for (i, part) in r.deadline.iter().enumerate() {
            if !(part.weight > 0.0 && part.weight.is_finite()) {
                return fail(format!("reads.deadline[{i}].weight"), "a finite weight > 0");
            }
            part.value.check(&format!("reads.deadline[{i}].value"))?;
        }
        count(
            "gateway.retry_count",
            self.gateway.retry_count.into(),
            (0, 64),
            ("retry", "retries"),
        )?;
        let tablets = self.shards as u64 * (self.replicas_per_shard as u64 + 1);
        if tablets.saturating_mul(2).saturating_mul(self.pool.capacity as u64) > MAX_CONNS {
            return fail(
                "pool.capacity",
                "2 x tablets x capacity <= 1e7 connection slots (a pool per process)",
            );
        }
        // The pool side, with the connpool model's checks (its workload is ours: reads).
        self.pool_params().check().map_err(|mut e| {
            if let Some(rest) = e.field.strip_prefix("workload.") {
                e.field = format!("reads.{rest}");
            }
            e
        })?;
        crate::model::check_events(&self.event_terms())
    }
}
