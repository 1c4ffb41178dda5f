//! Parameters of the rollout model, with their real defaults and where each comes from.
//!
//! Sources are cited by upstream repository, file and function (planetscale/vitess-operator,
//! vitessio/vitess release-22.0), `docs/rollout.md`, and "the incident": the vitess-operator
//! report that `tabletAvailableSeconds` (30 s, hard-coded) is shorter than vtgate's 1 m
//! `--tablet_refresh_interval`, which led to PR #797, and whose rolling restart
//! `models/incident-000.ron` replays. Values marked *\[inferred\]* are not in any code; they
//! are a reading of runtime behaviour, or a modelling choice.
//!
//! Every enum is internally tagged (`kind`), so a sweep can override a field through a JSON
//! tree and back: `phase: (kind: "Clustered", window: "20s")`.

pub use crate::model::dist::{DurationDist, ObservedDraw};
use crate::sim::SimDuration;
use crate::model::kit::{count, fail, positive, Checked};
use serde::{Deserialize, Serialize};

/// The implicit cell of a model with no `cells` (the name `vtsim replay --emit-logs` prints).
pub const DEFAULT_CELL: &str = "zone1";

/// Parameters of the rollout model (`docs/rollout.md`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RolloutParams {
    /// Number of vtgates watching the cell (the incident: 10 vtgate pods).
    pub vtgates: u32,
    /// Number of shards; all shards roll in parallel unless `operator.parallel_shards` is false
    /// (vitess-operator `pkg/controller/vitesskeyspace/reconcile_shards.go`: every shard cascades
    /// independently). Default 1 (the incident).
    pub shards: u32,
    /// REPLICA tablets per shard besides the primary (`docs/rollout.md`: default R = 2; the
    /// incident: replicas A, B).
    pub replicas_per_shard: u32,
    /// vtgate topology watcher and health check.
    pub vtgate: VtgateParams,
    /// Tablet restart lifecycle.
    pub tablets: TabletParams,
    /// vitess-operator rolling restart.
    pub operator: OperatorParams,
    /// Replica reads and primary writes.
    pub workload: WorkloadParams,
    /// Stop the run here even if the rollout or the re-discovery is not complete.
    pub horizon: SimDuration,
    /// The cluster's cells (`docs/rollout.md`, "Cells"): each with its vtgates, its tablets
    /// per shard and the cells its vtgates watch. Empty (the default): one cell holding every
    /// vtgate and tablet, each vtgate watching it. When given, the cells' `vtgates` add up to
    /// `vtgates` and their `replicas` to `replicas_per_shard`, and exactly one cell holds the
    /// shards' primaries. vtgate `g` is in the cell its index falls in (cells in order), and
    /// a shard's tablets are its primary, then each cell's replicas in cell order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<CellParams>,
}

/// One cell (a `spec.cells[]` entry of a VitessCluster, vitess-operator
/// `pkg/apis/planetscale/v2/vitesscell_types.go`, with the tablet pools of that cell).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CellParams {
    /// The cell's name (the tablet alias's `cell`, vtgate's `--cell`).
    pub name: String,
    /// vtgates in this cell (`spec.cells[].gateway.replicas`; the operator's default is 2,
    /// vitess-operator `pkg/apis/planetscale/v2/defaults.go` `defaultVtgateReplicas`).
    pub vtgates: u32,
    /// REPLICA tablets per shard in this cell, besides the primary (the cell's `replica`
    /// tablet pool `replicas`, less the primary in the primary's cell).
    pub replicas: u32,
    /// Each shard's primary starts in this cell (exactly one cell).
    pub primary: bool,
    /// `--cells_to_watch` of this cell's vtgates: one topology watcher per listed cell, and a
    /// vtgate discovers tablets only in those (vitessio/vitess `go/vt/discovery/healthcheck.go`
    /// `NewHealthCheck`: `strings.Split(cellsToWatch, ",")`, the local cell only when the flag
    /// is empty). `None` (default): every cell, what vitess-operator passes
    /// (`pkg/operator/vtgate/deployment.go`: `cells_to_watch` = all the cluster's cells).
    /// `Some([])`: the empty flag, the local cell only.
    pub cells_to_watch: Option<Vec<String>>,
}

/// One topology-server outage (`vtgate.topo_outage`): every topology read of the affected
/// cells fails from `start` for `length`. A failed read skips that tick: vitessio/vitess
/// `go/vt/discovery/topology_watcher.go` `loadTablets` logs "error getting tablets for cell"
/// and returns before `storeTabletInfos`, so the health checks it knows stay as they are
/// (nothing added, removed or replaced) and the ticker keeps its phase; a shard reload
/// (`loadTabletsForKeyspaceShard`) that fails returns the same way. Health streams do not
/// read the topology and go on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TopoOutage {
    /// When the outage starts (simulated time from zero, like `operator.start_at`).
    pub start: SimDuration,
    /// How long it lasts; zero (default): no outage.
    pub length: SimDuration,
    /// The cells whose topology reads fail; empty (default): every cell, as an outage of the
    /// global topology server does (each tick reads the cell's `CellInfo` from the global
    /// topo first, vitessio/vitess `go/vt/topo/server.go` `ConnForCell`; on a vitess-operator
    /// cluster the cells share the global etcd unless given their own lockserver).
    pub cells: Vec<String>,
}


/// The vtgate side: topology watcher, health streams, buffering.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VtgateParams {
    /// `--tablet_refresh_interval`: period of the topology watcher's ticker. Default 1m on
    /// every release 15.0-23.0 and main (vitessio/vitess `go/vt/discovery/topology_watcher.go`,
    /// `healthcheck.go` L181-186); the operator does
    /// not set it (vitess-operator `pkg/controller/vitessshard/reconcile_tablets.go`).
    pub tablet_refresh_interval: SimDuration,
    /// When each vtgate's ticker fires relative to the others (vitessio/vitess
    /// `go/vt/discovery/topology_watcher.go`: a fixed-phase ticker
    /// from the watcher's start time; "draw the phase per vtgate as U[0, interval)").
    pub phase: Phase,
    /// Extra delay added to each poll, uniform in [0, poll_jitter), without moving the ticker.
    /// Default 0: the code has no jitter (vitessio/vitess `go/vt/discovery/topology_watcher.go`
    /// runs a plain ticker).
    pub poll_jitter: SimDuration,
    /// Time for one topology read (one `List(TabletsPath)`, vitessio/vitess
    /// `go/vt/discovery/topology_watcher.go`); it delays the health
    /// checks a poll starts. Default 0 *[inferred: a few ms for etcd]*.
    pub topo_read_latency: SimDuration,
    /// A tablet's serving/not-serving/type change reaches each vtgate after this delay
    /// (push-based stream, "a few ms": vitessio/vitess `go/vt/discovery/tablet_health_check.go`;
    /// the derived timing model of `docs/rollout.md` says ~0.05 s after SIGTERM). Default 50ms.
    pub health_stream_delay: SimDuration,
    /// From `AddTablet` to the first health response (dial + one RTT; the tablet sends its
    /// state on subscribe: vitessio/vitess `go/vt/vttablet/tabletserver` `StreamHealth`).
    /// Default 10ms *\[inferred\]*.
    pub first_health_delay: SimDuration,
    /// `--healthcheck_retry_delay`: first reconnect backoff, doubling after each failure
    /// (vitessio/vitess `go/vt/discovery/tablet_health_check.go`: vtgate default 2 ms, not the 5 s
    /// constant). Used only when a restarted
    /// tablet keeps its address.
    pub health_check_retry_delay: SimDuration,
    /// `--healthcheck_timeout`: the cap of the reconnect backoff (vitessio/vitess
    /// `go/vt/discovery/tablet_health_check.go`, default 1m).
    pub healthcheck_timeout: SimDuration,
    /// `--enable_buffer`: primary writes are buffered during a failover (the operator sets it
    /// to true, vitess-operator `pkg/controller/vitessshard/reconcile_tablets.go` vtgate flags).
    pub enable_buffer: bool,
    /// `--buffer_max_failover_duration`: a primary outage longer than this fails the buffered
    /// writes (the operator sets 10s, vitess-operator
    /// `pkg/controller/vitessshard/reconcile_tablets.go`).
    pub buffer_max_failover_duration: SimDuration,
    /// Which vtgates reload the shard from the topology when PRS ends. In the code this is a
    /// race (`reparentTablets` turns the old primary REPLICA before promoting the new one, and
    /// `loadTabletsTrigger` fires on a PRIMARY→REPLICA update while no PRIMARY is known,
    /// healthcheck.go): `UnknownPrimaryOnly` (default; what the incident's second burst shows)
    /// reloads only in vtgates with no health stream to the new primary; `AllVtgates` in every
    /// vtgate, which also finds any replica a vtgate had missed.
    pub prs_reload: PrsReload,
    /// REPLICA reads may go to a replica of another watched cell when no local one serves
    /// (default true). vtgate keeps a non-primary tablet in its healthy list only when it is
    /// in the vtgate's cell or the same cell alias (vitessio/vitess
    /// `go/vt/discovery/healthcheck.go` `isIncluded`), and vitess-operator puts every cell in
    /// one alias (`pkg/controller/vitesscluster/build_cells_alias.go`). false: plain Vitess
    /// without aliases, local-cell replicas only. Local replicas are always tried first
    /// (`go/vt/vtgate/tabletgateway.go` `shuffleTablets`); a read fails only when no believed
    /// replica serves, so the order changes which replica serves, not whether the read does.
    pub replica_reads_other_cells: bool,
    /// A topology outage (default: none).
    pub topo_outage: TopoOutage,
}

/// Which vtgates reload a shard's tablets when PRS ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum PrsReload {
    /// Only vtgates with no health stream to the new primary.
    #[default]
    UnknownPrimaryOnly,
    /// Every vtgate (the old primary's REPLICA update arrived first everywhere).
    AllVtgates,
}

/// How the vtgates' poll phases are drawn (`docs/rollout.md`, vtgate).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Phase {
    /// Each vtgate's phase is independent U[0, T): vtgates started at unrelated times.
    #[default]
    Uniform,
    /// vtgates started within a deploy window: phase = (base + U[0, window)) mod T with one
    /// fleet-wide base U[0, T) (the incident: 9 of 10 discovered within 44-51 s).
    Clustered {
        /// Width of the deploy window.
        window: SimDuration,
    },
    /// Replay: vtgate i's first poll is at `offsets[i]` (each < T), then every T.
    Explicit {
        /// One offset per vtgate.
        offsets: Vec<SimDuration>,
    },
}

/// Tablet restart lifecycle: Serving → drain → Down → address published → Serving → Ready.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TabletParams {
    /// From SIGTERM (tablet stops serving at once, vitessio/vitess `go/vt/servenv/run.go`,
    /// `go/vt/vttablet/tabletserver/state_manager.go`) to the pod being gone: lameduck
    /// 50 ms + `shutdown_grace_period` ≤ 3 s + mysqld shutdown (vitessio/vitess
    /// `go/vt/servenv/run.go`, `go/vt/vttablet/tabletserver/state_manager.go`, `docs/rollout.md`,
    /// the derived timing model "pod object
    /// gone: variable"). Default Uniform(3s, 10s) *\[inferred\]*.
    pub drain_grace: DurationDist,
    /// From the old pod being gone to the new vttablet writing its new address in the topology
    /// (`initTablet` runs early in vttablet's start-up, which is why a restarted tablet's new
    /// address is in the topology before it serves): scheduling, image, mysqld
    /// start. Default 10s + Exp(mean 10s) *\[inferred\]*.
    pub restart: DurationDist,
    /// From the address being published to the tablet serving (restore, replication init;
    /// `docs/rollout.md`, the derived timing model t_s ≥ t_w). Default Uniform(2s, 8s)
    /// *\[inferred\]*.
    pub serving_after_publish: DurationDist,
    /// Kubernetes readiness probe period of the vttablet container (`/healthz`; the operator
    /// sets no timing, so the k8s default 10 s applies, vitess-operator
    /// `pkg/controller/vitessshard/reconcile_tablets.go`). Probes run every period from
    /// a phase drawn U[0, period) per restart, so Ready lags serving by 0-10 s. `0s` = Ready the
    /// instant the tablet serves.
    pub readiness_probe_period: SimDuration,
    /// Readiness flaps (Ready lost briefly) per hour while the operator waits for Available;
    /// each restarts the Available timer (Ready LastTransitionTime moves, vitess-operator
    /// `pkg/controller/vitessshard/reconcile_tablets.go`). Default 0.
    pub readiness_flaps_per_hour: f64,
    /// How long a flap keeps the pod not-Ready (Ready returns at the next probe after it;
    /// k8s failureThreshold 3 × 10 s, vitess-operator
    /// `pkg/controller/vitessshard/reconcile_tablets.go`). Default 30s.
    pub readiness_flap_duration: SimDuration,
    /// A restarted pod keeps its address (false on k8s: `tablet_hostname=$(POD_IP)`,
    /// vitess-operator `pkg/controller/vitessshard/reconcile_tablets.go`).
    /// When true, a vtgate whose health check was not dropped by a poll finds the tablet again
    /// through the health check's retry backoff (vitessio/vitess
    /// `go/vt/discovery/tablet_health_check.go` step 6).
    pub keep_address_on_restart: bool,
}

/// vitess-operator rolling restart (vitess-operator
/// `pkg/controller/vitessshard/reconcile_rollout.go`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OperatorParams {
    /// `tabletAvailableSeconds`: a restarted pod is Available once Ready continuously for this
    /// long; only then is the next tablet released (hard-coded 30 s, `reconcile_tablets.go`
    /// L47-53, vitess-operator `pkg/controller/vitessshard/reconcile_tablets.go`; PR #797 would
    /// make it 2 × refresh interval = 120 s).
    pub tablet_available_timeout: SimDuration,
    /// From Available (or PRS end) to the next tablet's SIGTERM: release, drain started, ack,
    /// finish, delete are 4-5 controller round trips (vitess-operator
    /// `pkg/controller/vitessshard/reconcile_rollout.go`; each step is a reconcile, sub-second
    /// to a few seconds). Default Uniform(500ms, 3s) *\[inferred\]*.
    pub step_latency: DurationDist,
    /// The order in which a shard's replicas restart (vitess-operator
    /// `pkg/controller/vitessshard/reconcile_rollout.go` step 3(b): a Go map walk, random).
    pub replica_order: ReplicaOrder,
    /// Which replica PRS promotes. The code picks the most advanced GTID position among Ready
    /// REPLICAs (vitess-operator `pkg/controller/vitessshard/reconcile_rollout.go` step 4.5); in a
    /// quiet shard all are caught up, so default `Random`.
    pub prs_candidate: PrsCandidate,
    /// PlannedReparentShard duration: from the old primary stopping serving as primary to the
    /// new one serving (candidate query ≤ 2 s, PRS ≤ 30 s, vitess-operator
    /// `pkg/controller/vitessshard/reconcile_rollout.go`). Default Uniform(1s, 5s)
    /// *\[inferred\]*.
    pub prs_duration: DurationDist,
    /// How long the demoted primary serves as a REPLICA before its SIGTERM (one more drain pass
    /// marks it Finished, then the shard controller deletes it; vitess-operator
    /// `pkg/controller/vitessshard/reconcile_rollout.go` step 4.5; seed
    /// burst 2). Default 2s *[inferred: one or two controller hops]*.
    pub prs_replica_window: SimDuration,
    /// Shards roll at the same time (true, vitess-operator
    /// `pkg/controller/vitesskeyspace/reconcile_shards.go`: keyspace controller cascades every
    /// shard)
    /// or one after the other.
    pub parallel_shards: bool,
    /// Restart the primary too (PRS, then the old primary). False models a change scheduled on
    /// the replicas only (vitess-operator `pkg/controller/vitessshard/reconcile_rollout.go` step
    /// 3: only scheduled pods roll); used for the peer
    /// comparison, whose rollout restarts replicas only.
    pub restart_primary: bool,
    /// When the rollout starts (first release = start + one step latency). Default 0s.
    pub start_at: SimDuration,
}

/// Replica restart order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum ReplicaOrder {
    /// A seeded random order per shard (the Go map walk).
    #[default]
    Random,
    /// Alias order (replica 1, 2, ...): for replays.
    Alias,
    /// Replay (`vtsim fit` of a multi-cell incident, where the model's tablet order is by
    /// cell): shard s restarts its replicas in the order `order[s]`, each entry a replica's
    /// index in the shard (1 ..= `replicas_per_shard`; 0 is the primary).
    Listed {
        /// One permutation of 1 ..= `replicas_per_shard` per shard.
        order: Vec<Vec<u32>>,
    },
}

/// PRS candidate choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum PrsCandidate {
    /// Uniform among the shard's replicas (all equally advanced).
    #[default]
    Random,
    /// The replica restarted first in this rollout (the incident's replica A).
    FirstRestarted,
    /// The replica restarted last.
    LastRestarted,
    /// Replay (`vtsim fit`): shard s promotes the `positions[s]`-th replica it restarted
    /// (0 = the first), one position per shard.
    Restarted {
        /// One position per shard, each < `replicas_per_shard`.
        positions: Vec<u32>,
    },
}

/// The client load through each vtgate.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadParams {
    /// Replica reads per second through each vtgate (Poisson), spread uniformly over shards.
    /// Default 50 *[illustrative: no source]*; the incident model uses the rate that gives the
    /// incident's burst sizes.
    pub replica_read_rps: f64,
    /// Primary writes per second through each vtgate (Poisson). Default 10 *\[illustrative\]*.
    pub primary_write_rps: f64,
    /// Fast (Poisson counts over state intervals) or per-query (one event per query).
    pub mode: WorkloadMode,
    /// Error intervals (of any vtgate) closer than this are one burst. Default 1s.
    pub burst_merge_gap: SimDuration,
}

/// How queries are simulated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum WorkloadMode {
    /// Poisson counts over each interval of constant routing state (DESIGN: simulate state
    /// changes, not every query).
    #[default]
    Fast,
    /// One event per query.
    PerQuery,
}


impl Default for VtgateParams {
    fn default() -> Self {
        VtgateParams {
            tablet_refresh_interval: SimDuration::from_secs(60),
            phase: Phase::Uniform,
            poll_jitter: SimDuration::ZERO,
            topo_read_latency: SimDuration::ZERO,
            health_stream_delay: SimDuration::from_millis(50),
            first_health_delay: SimDuration::from_millis(10),
            health_check_retry_delay: SimDuration::from_millis(2),
            healthcheck_timeout: SimDuration::from_secs(60),
            enable_buffer: true,
            buffer_max_failover_duration: SimDuration::from_secs(10),
            prs_reload: PrsReload::default(),
            replica_reads_other_cells: true,
            topo_outage: TopoOutage::default(),
        }
    }
}

impl Default for TabletParams {
    fn default() -> Self {
        TabletParams {
            drain_grace: DurationDist::Uniform {
        min: SimDuration::from_secs(3),
        max: SimDuration::from_secs(10),
    },
            restart: DurationDist::ShiftedExponential {
        min: SimDuration::from_secs(10),
        mean: SimDuration::from_secs(10),
    },
            serving_after_publish: DurationDist::Uniform {
        min: SimDuration::from_secs(2),
        max: SimDuration::from_secs(8),
    },
            readiness_probe_period: SimDuration::from_secs(10),
            readiness_flaps_per_hour: 0.0,
            readiness_flap_duration: SimDuration::from_secs(30),
            keep_address_on_restart: false,
        }
    }
}

impl Default for OperatorParams {
    fn default() -> Self {
        OperatorParams {
            tablet_available_timeout: SimDuration::from_secs(30),
            step_latency: DurationDist::Uniform {
        min: SimDuration::from_millis(500),
        max: SimDuration::from_secs(3),
    },
            replica_order: ReplicaOrder::Random,
            prs_candidate: PrsCandidate::Random,
            prs_duration: DurationDist::Uniform {
        min: SimDuration::from_secs(1),
        max: SimDuration::from_secs(5),
    },
            prs_replica_window: SimDuration::from_secs(2),
            parallel_shards: true,
            restart_primary: true,
            start_at: SimDuration::ZERO,
        }
    }
}

impl Default for WorkloadParams {
    fn default() -> Self {
        WorkloadParams {
            replica_read_rps: 50.0,
            primary_write_rps: 10.0,
            mode: WorkloadMode::Fast,
            burst_merge_gap: SimDuration::from_secs(1),
        }
    }
}

impl Default for RolloutParams {
    fn default() -> Self {
        RolloutParams {
            vtgates: 10,
            shards: 1,
            replicas_per_shard: 2,
            vtgate: VtgateParams::default(),
            tablets: TabletParams::default(),
            operator: OperatorParams::default(),
            workload: WorkloadParams::default(),
            horizon: SimDuration::from_secs(6 * 3600),
            cells: Vec::new(),
        }
    }
}

impl RolloutParams {
    /// The model's cell names ([`DEFAULT_CELL`] when it lists none).
    pub fn cell_names(&self) -> Vec<String> {
        if self.cells.is_empty() {
            vec![DEFAULT_CELL.to_string()]
        } else {
            self.cells.iter().map(|c| c.name.clone()).collect()
        }
    }

    /// Zero every delay and every randomness except the vtgate phases: the setting of the
    /// closed-form checks and the SimPy peer (restart takes `down`, nothing else takes time).
    pub fn zero_delays(mut self, down: SimDuration) -> Self {
        let z = DurationDist::fixed(SimDuration::ZERO);
        self.vtgate.health_stream_delay = SimDuration::ZERO;
        self.vtgate.first_health_delay = SimDuration::ZERO;
        self.vtgate.topo_read_latency = SimDuration::ZERO;
        self.tablets.drain_grace = z.clone();
        self.tablets.restart = DurationDist::fixed(down);
        self.tablets.serving_after_publish = z.clone();
        self.tablets.readiness_probe_period = SimDuration::ZERO;
        self.operator.step_latency = z.clone();
        self.operator.prs_duration = z;
        self.operator.prs_replica_window = SimDuration::ZERO;
        self
    }

    /// Check what serde cannot; the error names the field.
    pub fn check(&self) -> Checked {
        let vtgates = ("vtgate", "vtgates");
        count("vtgates", self.vtgates.into(), (1, u16::MAX.into()), vtgates)?;
        count("shards", self.shards.into(), (1, u64::MAX), ("shard", "shards"))?;
        if self.replicas_per_shard == 0 {
            return fail(
                "replicas_per_shard",
                "at least 1 replica (a lone primary is deleted without PRS; not modelled)",
            );
        }
        if (self.shards as u64) * (self.replicas_per_shard as u64 + 1) > u16::MAX as u64 {
            return fail(
                "shards",
                "shards × (replicas_per_shard + 1) ≤ 65535 tablets",
            );
        }
        // Each vtgate keeps a health check per tablet: bound the pairs so a run fits in memory.
        let tablets = self.shards as u64 * (self.replicas_per_shard as u64 + 1);
        if self.vtgates as u64 * tablets > 10_000_000 {
            return fail(
                "vtgates",
                "vtgates × tablets ≤ 1e7 (health checks, one per vtgate and tablet)",
            );
        }
        self.check_cells()?;
        let v = &self.vtgate;
        let t = v.tablet_refresh_interval;
        // A shorter period would only make runs of millions of polls; vtgate takes seconds.
        if t < SimDuration::from_millis(100) {
            return fail("vtgate.tablet_refresh_interval", "a duration >= 100ms");
        }
        if v.poll_jitter >= t {
            return fail(
                "vtgate.poll_jitter",
                "a duration < vtgate.tablet_refresh_interval",
            );
        }
        match &v.phase {
            Phase::Uniform => {}
            Phase::Clustered { window } => {
                if *window == SimDuration::ZERO {
                    return fail("vtgate.phase.window", "a duration > 0");
                }
            }
            Phase::Explicit { offsets } => {
                if offsets.len() != self.vtgates as usize {
                    return fail(
                        "vtgate.phase.offsets",
                        format!(
                            "one offset per vtgate ({} offsets, found {})",
                            self.vtgates,
                            offsets.len()
                        ));
                }
                if let Some(i) = offsets.iter().position(|o| *o >= t) {
                    return fail(
                        format!("vtgate.phase.offsets[{i}]"),
                        "an offset < vtgate.tablet_refresh_interval");
                }
            }
        }
        positive("vtgate.health_check_retry_delay", v.health_check_retry_delay)?;
        if v.healthcheck_timeout < v.health_check_retry_delay {
            return fail(
                "vtgate.healthcheck_timeout",
                "a duration >= vtgate.health_check_retry_delay",
            );
        }
        let tb = &self.tablets;
        // Observed InOrder samples are indexed: a tablet's by tablet, a step by shard and
        // step (shard x tablets per shard + k), a PRS by shard.
        let n_tablets = tablets as usize;
        tb.drain_grace
            .check_indexed("tablets.drain_grace", n_tablets)?;
        tb.restart.check_indexed("tablets.restart", n_tablets)?;
        tb.serving_after_publish
            .check_indexed("tablets.serving_after_publish", n_tablets)?;
        if !(tb.readiness_flaps_per_hour >= 0.0 && tb.readiness_flaps_per_hour.is_finite()) {
            return fail("tablets.readiness_flaps_per_hour", "a finite rate >= 0");
        }
        let o = &self.operator;
        if let PrsCandidate::Restarted { positions } = &o.prs_candidate {
            if positions.len() != self.shards as usize {
                return fail(
                    "operator.prs_candidate.positions",
                    format!(
                        "one position per shard ({} shards, found {})",
                        self.shards,
                        positions.len()
                    ),
                );
            }
            if let Some(i) = positions.iter().position(|x| *x >= self.replicas_per_shard) {
                return fail(
                    format!("operator.prs_candidate.positions[{i}]"),
                    "a position < replicas_per_shard",
                );
            }
        }
        if let ReplicaOrder::Listed { order } = &o.replica_order {
            if order.len() != self.shards as usize {
                return fail(
                    "operator.replica_order.order",
                    format!(
                        "one list per shard ({} shards, found {})",
                        self.shards,
                        order.len()
                    ),
                );
            }
            for (s, l) in order.iter().enumerate() {
                let mut seen = vec![false; self.replicas_per_shard as usize + 1];
                let ok = l.len() == self.replicas_per_shard as usize
                    && l.iter().all(|&k| {
                        k >= 1
                            && (k as usize) < seen.len()
                            && !std::mem::replace(&mut seen[k as usize], true)
                    });
                if !ok {
                    return fail(
                        format!("operator.replica_order.order[{s}]"),
                        format!(
                            "a permutation of 1 ..= replicas_per_shard ({})",
                            self.replicas_per_shard
                        ),
                    );
                }
            }
        }
        o.step_latency
            .check_indexed("operator.step_latency", n_tablets)?;
        o.prs_duration
            .check_indexed("operator.prs_duration", self.shards as usize)?;
        let w = &self.workload;
        // Query counts are u64 sums of Poisson draws: keep them far from overflow.
        if !(w.replica_read_rps >= 0.0 && w.replica_read_rps <= 1e7) {
            return fail(
                "workload.replica_read_rps",
                "a rate between 0 and 1e7 per second",
            );
        }
        if !(w.primary_write_rps >= 0.0 && w.primary_write_rps <= 1e7) {
            return fail(
                "workload.primary_write_rps",
                "a rate between 0 and 1e7 per second",
            );
        }
        positive("horizon", self.horizon)?;
        // A rollout that never completes (a huge gate or delay) runs to the horizon, polling
        // all the way: bound the polls so such a run ends in seconds (6h x 10 vtgates at 1m
        // is 3600).
        let polls = self.vtgates as f64 * self.horizon.as_secs_f64() / t.as_secs_f64();
        if polls > 1e7 {
            return fail(
                "horizon",
                format!(
                    "at most 1e7 topology polls (vtgates x horizon / \
                     vtgate.tablet_refresh_interval); found {polls:.3e}"
                ));
        }
        // Each poll diffs every tablet record: not events, but the same kind of work.
        if polls * tablets as f64 > 1e10 {
            return fail(
                "horizon",
                format!(
                    "at most 1e10 tablet-record diffs (topology polls x tablets); found {:.3e}",
                    polls * tablets as f64
                ));
        }
        crate::model::check_events(&self.event_terms())
    }

    /// The checks of `cells` and `vtgate.topo_outage`.
    fn check_cells(&self) -> Checked {
        let names = self.cell_names();
        if !self.cells.is_empty() {
            if self.cells.len() > u16::MAX as usize {
                return fail("cells", "at most 65535 cells");
            }
            for (i, c) in self.cells.iter().enumerate() {
                let bad = c.name.is_empty()
                    || !c
                        .name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                if bad {
                    return fail(
                        format!("cells[{i}].name"),
                        "a cell name of letters, digits, '-' and '_'",
                    );
                }
                if names[..i].contains(&c.name) {
                    return fail(
                        format!("cells[{i}].name"),
                        format!("a name not used by another cell (`{}` is)", c.name),
                    );
                }
                if let Some(list) = &c.cells_to_watch {
                    if let Some(j) = list.iter().position(|n| !names.contains(n)) {
                        return fail(
                            format!("cells[{i}].cells_to_watch[{j}]"),
                            format!("one of the cells ({}); found `{}`", names.join(", "), list[j]),
                        );
                    }
                }
            }
            let primaries = self.cells.iter().filter(|c| c.primary).count();
            if primaries != 1 {
                return fail(
                    "cells",
                    format!("exactly one cell with `primary: true` (found {primaries})"),
                );
            }
            let gates: u64 = self.cells.iter().map(|c| c.vtgates as u64).sum();
            if gates != self.vtgates as u64 {
                return fail(
                    "vtgates",
                    format!("the sum of cells[].vtgates ({gates}); found {}", self.vtgates),
                );
            }
            let reps: u64 = self.cells.iter().map(|c| c.replicas as u64).sum();
            if reps != self.replicas_per_shard as u64 {
                return fail(
                    "replicas_per_shard",
                    format!(
                        "the sum of cells[].replicas ({reps}); found {}",
                        self.replicas_per_shard
                    ),
                );
            }
        }
        let o = &self.vtgate.topo_outage;
        if let Some(j) = o.cells.iter().position(|n| !names.contains(n)) {
            return fail(
                format!("vtgate.topo_outage.cells[{j}]"),
                format!("one of the cells ({}); found `{}`", names.join(", "), o.cells[j]),
            );
        }
        if o.start.as_nanos().checked_add(o.length.as_nanos()).is_none() {
            return fail("vtgate.topo_outage.length", "start + length within 584 years");
        }
        Ok(())
    }

    /// The terms of the events-per-run estimate ([`crate::model::check_events`]), each an
    /// upper estimate over the whole horizon (a run usually stops when the rollout and the
    /// re-discoveries are done, long before it):
    /// - topology polls: vtgates x (horizon / `tablet_refresh_interval` + 1);
    /// - per-query mode: (reads + writes per second) x vtgates x horizon;
    /// - readiness flaps (a flap and the Ready after it) while pods wait for Available:
    ///   2 x tablets x flaps per second x horizon;
    /// - health-check dials per (vtgate, tablet) and restart: the doubling backoff from
    ///   `health_check_retry_delay` to its cap `healthcheck_timeout`, then one dial per cap
    ///   over the mean wait for the new process (`serving_after_publish`), twice (a poll and a
    ///   reconnect may each start a chain);
    /// - the restart events themselves: tablets x (16 + 2 x vtgates) (drain, down, publish,
    ///   serve, ready, available, release, PRS, health pushes, a shard reload and a first dial
    ///   per vtgate).
    pub fn event_terms(&self) -> Vec<crate::model::EventTerm> {
        let m = self.vtgates as f64;
        let tablets = self.shards as f64 * (self.replicas_per_shard as f64 + 1.0);
        let h = self.horizon.as_secs_f64();
        let v = &self.vtgate;
        let polls = m * (h / v.tablet_refresh_interval.as_secs_f64() + 1.0);
        let w = &self.workload;
        let queries = if w.mode == WorkloadMode::PerQuery {
            (w.replica_read_rps + w.primary_write_rps) * m * h
        } else {
            0.0
        };
        let query_field = if w.replica_read_rps >= w.primary_write_rps {
            "workload.replica_read_rps"
        } else {
            "workload.primary_write_rps"
        };
        let flaps = 2.0 * tablets * self.tablets.readiness_flaps_per_hour / 3600.0 * h;
        let first = v.health_check_retry_delay.as_secs_f64();
        let cap = v.healthcheck_timeout.as_secs_f64();
        let doublings = (cap / first).log2().max(0.0) + 2.0;
        let wait = self.tablets.serving_after_publish.mean_s();
        let dials = 2.0 * m * tablets * (doublings + wait / cap);
        let restarts = tablets * (16.0 + 2.0 * m);
        vec![
            (
                "horizon",
                "topology polls (vtgates x horizon / vtgate.tablet_refresh_interval)",
                polls,
            ),
            (
                query_field,
                "per-query reads and writes (rate x vtgates x horizon)",
                queries,
            ),
            (
                "tablets.readiness_flaps_per_hour",
                "readiness flaps (tablets x rate x horizon, two events each)",
                flaps,
            ),
            (
                "vtgate.healthcheck_timeout",
                "health-check dials (vtgates x tablets x the reconnect backoff over \
                 tablets.serving_after_publish)",
                dials,
            ),
            (
                "vtgates",
                "restart events (tablets x (16 + 2 x vtgates))",
                restarts,
            ),
        ]
    }
}
