//! The modelled systems. Each is a [`Model`]: typed parameters read from a model file, the
//! metrics one run reports (in a fixed order), and a `run` that builds its world, simulates it
//! with one seed and returns those metrics with the trace digest.
//!
//! [`WorldSpec`] is the closed list of models a model file may name; dispatch is a `match`,
//! so every model is monomorphised (no `dyn` in the hot loop).

pub mod connpool;
pub mod dist;
pub mod hold;
pub mod proxysql;
pub mod rollout;
pub mod site_poller;

use crate::sim::{RunEnd, Simulation, Trace, World};
use serde::{Deserialize, Serialize};

/// The most events one run may be expected to handle, estimated from the parameters before
/// it runs ([`check_events`]). The kernel and the models handle 2e6-1e7 events a second on
/// one core (`vtsim bench`; proxysql-lab 3e5 events in 0.15 s), so 1e9 events is a run of
/// two to eight minutes: the longest one run can reasonably take (a sweep runs thousands),
/// and far below the estimates of the inputs that never end (rollout `PerQuery` at 1e7
/// reads/s and 10 vtgates over 6 h is 2.2e12).
pub const MAX_EVENTS_PER_RUN: f64 = 1e9;

/// One term of a model's event estimate: the field that drives it, what it counts, and the
/// expected number of events.
pub type EventTerm = (&'static str, &'static str, f64);

/// Refuse parameters whose estimated events per run exceed [`MAX_EVENTS_PER_RUN`]. The error
/// names the field of the largest term and what it counts. A NaN or infinite term (a zero
/// period) is refused too.
pub fn check_events(terms: &[EventTerm]) -> Result<(), (String, String)> {
    let total: f64 = terms.iter().map(|t| t.2).sum();
    if total.is_finite() && total <= MAX_EVENTS_PER_RUN {
        return Ok(());
    }
    let (field, what, n) = terms
        .iter()
        .copied()
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .expect("a term");
    Err((
        field.to_string(),
        format!(
            "at most 1e9 events per run (estimated before running); these parameters give \
             {total:.3e}, of which {what}: {n:.3e}"
        ),
    ))
}

/// Is a metric a measurement, or a 0/1 outcome whose mean is a probability?
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MetricKind {
    /// A measurement: mean, sd, Student-t CI, quantiles.
    Value,
    /// A 0/1 outcome: additionally a proportion with a Wilson interval.
    Indicator,
}

/// One metric a model reports per run. Names carry their unit (`exposure_s`, `goodput_rps`).
#[derive(Clone, Debug, Serialize)]
pub struct MetricDef {
    /// Column name, with its unit as a suffix where it has one.
    pub name: &'static str,
    /// Measurement or 0/1 outcome.
    pub kind: MetricKind,
    /// One line for the report page.
    pub help: &'static str,
}

impl MetricDef {
    /// A measurement.
    pub const fn value(name: &'static str, help: &'static str) -> Self {
        MetricDef {
            name,
            kind: MetricKind::Value,
            help,
        }
    }
    /// A 0/1 outcome.
    pub const fn indicator(name: &'static str, help: &'static str) -> Self {
        MetricDef {
            name,
            kind: MetricKind::Indicator,
            help,
        }
    }
}

pub use output::RunOutput;

/// [`RunOutput`] lives in its own module so that its private field keeps every model from
/// building one by hand: the only constructor takes the [`RunEnd`] of
/// [`Simulation::close_with_metrics`](crate::sim::Simulation::close_with_metrics), so every
/// model's metrics, events and digest come from the one path that digests the metrics.
mod output {
    use super::Artifact;
    use crate::sim::RunEnd;

    /// Makes [`RunOutput`] impossible to build outside this module.
    #[derive(Clone, Copy, Debug)]
    struct Sealed;

    /// What one run returns.
    #[derive(Clone, Debug)]
    pub struct RunOutput {
        /// One value per [`MetricDef`](super::MetricDef), in the same order (each one is in
        /// the digest).
        pub metrics: Vec<f64>,
        /// Events handled.
        pub events: u64,
        /// BLAKE3 digest of the trace (events, draws, metrics), 64 hex characters.
        pub digest: String,
        /// A human-readable account of the run (for `vtsim replay`), when asked for.
        pub report: Option<String>,
        /// The first error writing the JSONL trace (`replay --trace`), if any.
        pub trace_error: Option<String>,
        /// Files a replay writes with `--out DIR` (timelines, charts), built only with `report`.
        pub artifacts: Vec<Artifact>,
        #[allow(dead_code)]
        sealed: Sealed,
    }

    impl RunOutput {
        /// The output of a run that ended with `end`.
        pub fn new(end: RunEnd, report: Option<String>, artifacts: Vec<Artifact>) -> Self {
            RunOutput {
                metrics: end.metrics,
                events: end.events,
                digest: end.digest,
                report,
                trace_error: end.trace_error,
                artifacts,
                sealed: Sealed,
            }
        }
    }
}

/// End a model's run: digest `values` under the names of `defs`, in order, and take the
/// digest (see [`Simulation::close_with_metrics`]). Every model's run ends here.
pub fn close_run<W: World>(
    sim: Simulation<W>,
    defs: &[MetricDef],
    values: Vec<f64>,
) -> (W, RunEnd) {
    sim.close_with_metrics(defs.iter().map(|d| d.name), values)
}

/// A file a single run can produce for `vtsim replay --out DIR`.
#[derive(Clone, Debug)]
pub enum Artifact {
    /// A CSV (or other text) file: `DIR/<name>`.
    Text {
        /// File name, e.g. `timeline.csv`.
        name: String,
        /// Its contents.
        text: String,
    },
    /// A chart: `DIR/<name>.png` and `DIR/<name>.svg`.
    Chart {
        /// File stem.
        name: String,
        /// What to draw.
        data: crate::chart::ChartData,
    },
}

/// How a run is observed (default: digest only, no report).
#[derive(Default)]
pub struct RunOptions {
    /// The trace sink (digest only, or digest plus JSONL).
    pub trace: Trace,
    /// Build [`RunOutput::report`].
    pub report: bool,
}

/// A modelled system.
pub trait Model {
    /// The model file's parameters (`deny_unknown_fields`, durations as strings).
    type Params: Serialize + for<'de> Deserialize<'de> + Clone + Send + Sync + std::fmt::Debug;
    /// Check values serde cannot: `Err((field path, what was expected))`.
    fn validate(p: &Self::Params) -> Result<(), (String, String)>;
    /// The metrics a run reports, in order.
    fn metric_defs() -> Vec<MetricDef>;
    /// Simulate one run with `seed`.
    fn run(p: &Self::Params, seed: u64, opts: RunOptions) -> RunOutput;
}

/// The world a model file describes: which model, with its parameters.
/// (Variants differ in size; a spec is built once per sweep point, never in a hot loop.)
#[derive(Clone, Debug, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
pub enum WorldSpec {
    /// Rolling restarts vs vtgate discovery (`spec/rollout.md`).
    Rollout(rollout::RolloutParams),
    /// The hold model of event-set benchmarks (a kernel fixture).
    Hold(hold::HoldParams),
    /// Multi-site read_only poller: debounce, backoff, detection (`spec/site_poller.md`).
    SitePoller(site_poller::SitePollerParams),
    /// smartconnpool waiters with heterogeneous deadlines (`spec/connpool.md`).
    ConnPool(connpool::ConnPoolParams),
    /// ProxySQL reader routing when replicas die (`spec/proxysql.md`).
    Proxysql(proxysql::ProxysqlParams),
}

macro_rules! dispatch {
    ($spec:expr, $p:ident => $body:expr) => {
        match $spec {
            WorldSpec::Rollout($p) => {
                #[allow(dead_code)]
                type M = rollout::Rollout;
                $body
            }
            WorldSpec::Hold($p) => {
                #[allow(dead_code)]
                type M = hold::Hold;
                $body
            }
            WorldSpec::SitePoller($p) => {
                #[allow(dead_code)]
                type M = site_poller::SitePoller;
                $body
            }
            WorldSpec::ConnPool($p) => {
                #[allow(dead_code)]
                type M = connpool::ConnPool;
                $body
            }
            WorldSpec::Proxysql($p) => {
                #[allow(dead_code)]
                type M = proxysql::Proxysql;
                $body
            }
        }
    };
}

impl WorldSpec {
    /// The model's name as written in model files.
    pub fn kind(&self) -> &'static str {
        match self {
            WorldSpec::Rollout(_) => "Rollout",
            WorldSpec::Hold(_) => "Hold",
            WorldSpec::SitePoller(_) => "SitePoller",
            WorldSpec::ConnPool(_) => "ConnPool",
            WorldSpec::Proxysql(_) => "Proxysql",
        }
    }
    /// See [`Model::validate`].
    pub fn validate(&self) -> Result<(), (String, String)> {
        dispatch!(self, p => M::validate(p))
    }
    /// See [`Model::metric_defs`].
    pub fn metric_defs(&self) -> Vec<MetricDef> {
        dispatch!(self, _p => M::metric_defs())
    }
    /// See [`Model::run`].
    pub fn run(&self, seed: u64, opts: RunOptions) -> RunOutput {
        dispatch!(self, p => M::run(p, seed, opts))
    }
    /// The parameters as a JSON tree (the form overrides are applied to).
    pub fn params_json(&self) -> serde_json::Value {
        dispatch!(self, p => serde_json::to_value(p).expect("params serialise"))
    }
    /// The same model with parameters read back from a JSON tree.
    pub fn with_params_json(&self, v: serde_json::Value) -> Result<WorldSpec, String> {
        Ok(match self {
            WorldSpec::Rollout(_) => {
                WorldSpec::Rollout(serde_json::from_value(v).map_err(|e| e.to_string())?)
            }
            WorldSpec::Hold(_) => {
                WorldSpec::Hold(serde_json::from_value(v).map_err(|e| e.to_string())?)
            }
            WorldSpec::SitePoller(_) => {
                WorldSpec::SitePoller(serde_json::from_value(v).map_err(|e| e.to_string())?)
            }
            WorldSpec::ConnPool(_) => {
                WorldSpec::ConnPool(serde_json::from_value(v).map_err(|e| e.to_string())?)
            }
            WorldSpec::Proxysql(_) => {
                WorldSpec::Proxysql(serde_json::from_value(v).map_err(|e| e.to_string())?)
            }
        })
    }
}
