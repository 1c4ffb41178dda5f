//! The modelled systems, and the one place they are registered.
//!
//! A model is a folder (or file) under `src/model/` with a type implementing [`Model`]: its
//! typed parameters (read from a model file), its world (a [`World`] for the kernel), its
//! metrics (a [`metric_set!`](crate::metric_set) struct) and the few steps that differ from
//! model to model. The run skeleton, [`run_detailed`], is written once: build the world,
//! simulate to the horizon, end-of-run accounting, close with the metrics and the digest, the
//! report and the artifacts.
//!
//! [`WorldSpec`], the closed list of models a model file may name, comes from one table (the
//! `models!` invocation below: one line per model); dispatch is a `match`, so every model is
//! monomorphised (no `dyn` in the hot loop).

/// A hidden twin of model `$base` for an exactness check: the same parameters run through
/// another simulation (`$sim`, called as `simulation` is), every other step delegated to
/// `$base`, so the twin's runs differ from the base's only in how the world is built (e.g.
/// more events, another digest, every figure equal). No model file names a twin.
macro_rules! twin_model {
    ($(#[$meta:meta])* $twin:ident of $base:ty, simulation: $sim:expr) => {
        $(#[$meta])*
        #[doc(hidden)]
        pub struct $twin;

        impl $crate::model::Model for $twin {
            type Params = <$base as $crate::model::Model>::Params;
            type World = <$base as $crate::model::Model>::World;
            type Metrics = <$base as $crate::model::Model>::Metrics;
            type Detail = <$base as $crate::model::Model>::Detail;
            fn validate(p: &Self::Params) -> Result<(), $crate::model::ParamError> {
                <$base as $crate::model::Model>::validate(p)
            }
            fn simulation(
                p: &Self::Params,
                seed: u64,
                trace: $crate::sim::Trace,
                logs: bool,
            ) -> $crate::sim::Simulation<Self::World> {
                ($sim)(p, seed, trace, logs)
            }
            fn horizon(p: &Self::Params, w: &Self::World) -> $crate::sim::SimTime {
                <$base as $crate::model::Model>::horizon(p, w)
            }
            fn finish(p: &Self::Params, w: &mut Self::World, draws: $crate::sim::Draws<'_>) {
                <$base as $crate::model::Model>::finish(p, w, draws)
            }
            fn metrics(
                p: &Self::Params,
                w: &Self::World,
                end: $crate::sim::SimTime,
                events: u64,
            ) -> Self::Metrics {
                <$base as $crate::model::Model>::metrics(p, w, end, events)
            }
            fn report(p: &Self::Params, w: &Self::World, run: &$crate::sim::RunEnd) -> String {
                <$base as $crate::model::Model>::report(p, w, run)
            }
            fn artifacts(
                p: &Self::Params,
                w: &Self::World,
                end: $crate::sim::SimTime,
            ) -> Vec<$crate::model::Artifact> {
                <$base as $crate::model::Model>::artifacts(p, w, end)
            }
            fn detail(p: &Self::Params, w: Self::World, end: $crate::sim::SimTime) -> Self::Detail {
                <$base as $crate::model::Model>::detail(p, w, end)
            }
        }
    };
}

pub mod dist;
pub mod kit;
pub mod metric;

pub use kit::{check_events, EventTerm, ParamError, MAX_EVENTS_PER_RUN};
pub use metric::{MetricDef, MetricKind, MetricSet};

use crate::sim::{Draws, RunEnd, SimTime, Simulation, Trace, World};
use serde::{Deserialize, Serialize};

/// The model table: `Name => module::Type`. `Name` is what a model file writes
/// (`world: Name( .. )`); the line also declares the module. Adding a model is adding its
/// folder and one line here.
macro_rules! models {
    ( $( $(#[$doc:meta])* $variant:ident => $module:ident :: $model:ident, )* ) => {
        $( pub mod $module; )*

        /// The world a model file describes: which model, with its parameters.
        /// (Variants differ in size; a spec is built once per sweep point, never in a hot loop.)
        #[derive(Clone, Debug, Serialize, Deserialize)]
        #[allow(clippy::large_enum_variant)]
        pub enum WorldSpec {
            $( $(#[$doc])* $variant(<$module::$model as Model>::Params), )*
        }

        /// The model names a model file may use (`world: NAME( .. )`), in table order.
        pub const MODEL_NAMES: &[&str] = &[ $( stringify!($variant) ),* ];

        /// Every model's name and metric definitions, in table order.
        pub fn all_metric_defs() -> Vec<(&'static str, Vec<MetricDef>)> {
            vec![ $( (stringify!($variant), <$module::$model as Model>::metric_defs()) ),* ]
        }

        impl WorldSpec {
            /// The model's name as written in model files.
            pub fn kind(&self) -> &'static str {
                match self { $( WorldSpec::$variant(_) => stringify!($variant), )* }
            }
            /// See [`Model::validate`].
            pub fn validate(&self) -> Result<(), ParamError> {
                match self { $( WorldSpec::$variant(p) => <$module::$model as Model>::validate(p), )* }
            }
            /// See [`Model::metric_defs`].
            pub fn metric_defs(&self) -> Vec<MetricDef> {
                match self { $( WorldSpec::$variant(_) => <$module::$model as Model>::metric_defs(), )* }
            }
            /// Simulate one run with `seed` (see [`run_detailed`]).
            pub fn run(&self, seed: u64, opts: RunOptions) -> RunOutput {
                match self {
                    $( WorldSpec::$variant(p) => run_detailed::<$module::$model>(p, seed, opts).output, )*
                }
            }
            /// A runner for many runs of this spec on one thread: a model that resets its
            /// world in place ([`Model::REUSES_WORLD`]) reuses one world from run to run (the
            /// outputs are those of [`Self::run`]).
            pub fn runner(&self) -> SpecRunner<'_> {
                SpecRunner::new(std::borrow::Cow::Borrowed(self))
            }
            /// The parameters as a JSON tree (the form overrides are applied to).
            pub fn params_json(&self) -> serde_json::Value {
                match self {
                    $( WorldSpec::$variant(p) => serde_json::to_value(p).expect("params serialise"), )*
                }
            }
            /// The same model with parameters read back from a JSON tree.
            pub fn with_params_json(&self, v: serde_json::Value) -> Result<WorldSpec, String> {
                Ok(match self {
                    $( WorldSpec::$variant(_) => {
                        WorldSpec::$variant(serde_json::from_value(v).map_err(|e| e.to_string())?)
                    } )*
                })
            }
        }

        /// The simulation a [`SpecRunner`] keeps between runs (used in place: a world is
        /// several kilobytes, and moving it in and out cost a run of the small models about
        /// 2 % of its instructions).
        #[allow(clippy::large_enum_variant)]
        enum Slot {
            Empty,
            $( $variant(Option<Simulation<<$module::$model as Model>::World>>), )*
        }

        /// Runs of one [`WorldSpec`] that reuse one world when the model can
        /// ([`WorldSpec::runner`]).
        pub struct SpecRunner<'a> {
            spec: std::borrow::Cow<'a, WorldSpec>,
            slot: Slot,
        }

        impl<'a> SpecRunner<'a> {
            /// A runner of `spec` (borrowed or owned), with no world yet.
            pub fn new(spec: std::borrow::Cow<'a, WorldSpec>) -> Self {
                SpecRunner { spec, slot: Slot::Empty }
            }
            /// The spec this runner runs.
            pub fn spec(&self) -> &WorldSpec {
                &self.spec
            }
            /// Simulate one run with `seed`: the output of [`WorldSpec::run`].
            pub fn run(&mut self, seed: u64, opts: RunOptions) -> RunOutput {
                match &*self.spec {
                    $( WorldSpec::$variant(p) => {
                        if !matches!(self.slot, Slot::$variant(_)) {
                            self.slot = Slot::$variant(None);
                        }
                        let Slot::$variant(sim) = &mut self.slot else {
                            unreachable!("set just above")
                        };
                        run_reusing::<$module::$model>(p, seed, opts, sim)
                    } )*
                }
            }
        }
    };
}

models! {
    /// Rolling restarts vs vtgate discovery (`docs/rollout.md`).
    Rollout => rollout::Rollout,
    /// The hold model of event-set benchmarks (a kernel fixture).
    Hold => hold::Hold,
    /// Multi-site read_only poller: debounce, backoff, detection (`docs/site_poller.md`).
    SitePoller => site_poller::SitePoller,
    /// smartconnpool waiters with heterogeneous deadlines (`docs/connpool.md`).
    ConnPool => connpool::ConnPool,
    /// ProxySQL reader routing when replicas die (`docs/proxysql.md`).
    Proxysql => proxysql::Proxysql,
    /// A rolling restart whose drained reads land on the survivors' pools (`docs/fleet.md`).
    Fleet => fleet::Fleet,
}

pub use output::RunOutput;

/// [`RunOutput`] lives in its own module so that its private field keeps every model from
/// building one by hand: the only constructor takes the [`RunEnd`] of
/// [`Simulation::close_with_metrics`](crate::sim::Simulation::close_with_metrics), so every
/// model's metrics, events and digest come from the one path that digests the metrics.
mod output {
    use super::{Artifact, MetricDef};
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
        /// The definitions of `metrics`, in the same order (for [`RunOutput::metric`]).
        defs: &'static [MetricDef],
        /// Only this module builds one.
        #[allow(dead_code)]
        sealed: Sealed,
    }

    impl RunOutput {
        /// The output of a run that ended with `end`; `defs` name its metrics.
        pub(crate) fn new(
            end: RunEnd,
            defs: &'static [MetricDef],
            report: Option<String>,
            artifacts: Vec<Artifact>,
        ) -> Self {
            RunOutput {
                metrics: end.metrics,
                events: end.events,
                digest: end.digest,
                report,
                trace_error: end.trace_error,
                artifacts,
                defs,
                sealed: Sealed,
            }
        }

        /// The value of metric `name` (`None`: the model reports no such metric).
        pub fn metric(&self, name: &str) -> Option<f64> {
            let i = self.defs.iter().position(|d| d.name == name)?;
            self.metrics.get(i).copied()
        }

        /// The definitions of [`Self::metrics`], in order.
        pub fn metric_defs(&self) -> &'static [MetricDef] {
            self.defs
        }
    }
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

/// A modelled system: the steps of a run that differ from model to model. The rest of a run
/// is [`run_detailed`], shared by every model.
pub trait Model: Sized + 'static {
    /// The model file's parameters (`deny_unknown_fields`, durations as strings).
    type Params: Serialize + for<'de> Deserialize<'de> + Clone + Send + Sync + std::fmt::Debug;
    /// The state the kernel simulates.
    type World: World;
    /// The metrics one run reports, declared with [`metric_set!`](crate::metric_set).
    type Metrics: MetricSet;
    /// What a run keeps besides its output, for tests and tools (restarts, counters, logs).
    type Detail;

    /// Check values serde cannot (see [`kit`] for the vocabulary of checks).
    fn validate(p: &Self::Params) -> Result<(), ParamError>;
    /// The world with its initial events, seeded with `seed`. `logs`: keep the per-event logs
    /// a report or a caller of [`run_with`] asks for (the digest is the same either way).
    fn simulation(p: &Self::Params, seed: u64, trace: Trace, logs: bool)
        -> Simulation<Self::World>;
    /// When the run stops at the latest (events exactly then are handled).
    fn horizon(p: &Self::Params, w: &Self::World) -> SimTime;
    /// End-of-run accounting before the digest is taken: close open intervals, recording any
    /// draw they make in `draws` (stamped with the time the run stopped).
    fn finish(_p: &Self::Params, _w: &mut Self::World, _draws: Draws<'_>) {}
    /// The metrics of the run that ended at `end` after `events` events.
    fn metrics(p: &Self::Params, w: &Self::World, end: SimTime, events: u64) -> Self::Metrics;
    /// The readable account `vtsim replay` prints (`run.metrics` are the digested values).
    fn report(p: &Self::Params, w: &Self::World, run: &RunEnd) -> String;
    /// Files `vtsim replay --out DIR` writes (built only with a report).
    fn artifacts(_p: &Self::Params, _w: &Self::World, _end: SimTime) -> Vec<Artifact> {
        vec![]
    }
    /// What the run keeps for its caller, from the world at the end.
    fn detail(p: &Self::Params, w: Self::World, end: SimTime) -> Self::Detail;

    /// Whether [`Self::reset`] rebuilds a finished run's world in place, so that a worker
    /// running many replicates of one parameter set reuses one world and its allocations
    /// ([`WorldSpec::runner`]). Default: no, every run builds its world afresh.
    const REUSES_WORLD: bool = false;
    /// Make `sim`'s world, left by a finished run of these same parameters `p`, the world of
    /// a fresh run seeded with `seed` (`logs` as for [`Self::simulation`]), and schedule its
    /// initial events on `sim`, which is already [`Simulation::restart`]ed: the run that
    /// follows must be exactly the one [`Self::simulation`] starts, digest included. Called
    /// only when [`Self::REUSES_WORLD`].
    fn reset(_p: &Self::Params, _seed: u64, _logs: bool, _sim: &mut Simulation<Self::World>) {}

    /// The metrics a run reports, in order.
    fn metric_defs() -> Vec<MetricDef> {
        <Self::Metrics as MetricSet>::DEFS.to_vec()
    }
}

/// One run of model `M`: its output (metric row, digest, report, artifacts) and its details.
/// The details' fields and methods are reachable on the run itself (`run.restarts`).
pub struct Run<M: Model> {
    /// The metric row, digest, report and artifacts.
    pub output: RunOutput,
    /// What the model keeps for tests and tools.
    pub detail: M::Detail,
    /// When the run ended.
    pub end: SimTime,
}

impl<M: Model> Run<M> {
    /// The value of metric `name`. Panics when the model reports no such metric.
    pub fn metric(&self, name: &str) -> f64 {
        let i = <M::Metrics as MetricSet>::DEFS
            .iter()
            .position(|d| d.name == name)
            .unwrap_or_else(|| panic!("no metric {name}"));
        self.output.metrics[i]
    }
}

impl<M: Model> std::ops::Deref for Run<M> {
    type Target = M::Detail;
    fn deref(&self) -> &M::Detail {
        &self.detail
    }
}

/// Simulate one run of `M` with `seed` and keep its details (per-event logs only when a
/// report is asked for).
pub fn run_detailed<M: Model>(p: &M::Params, seed: u64, opts: RunOptions) -> Run<M> {
    run_with(p, seed, opts, false)
}

/// The run skeleton, the same for every model: build the world, simulate to the horizon,
/// end-of-run accounting, close with the metrics (digested by name, in declaration order),
/// then the report, the artifacts and the details.
pub fn run_with<M: Model>(p: &M::Params, seed: u64, opts: RunOptions, logs: bool) -> Run<M> {
    let report = opts.report;
    let mut sim = M::simulation(p, seed, opts.trace, logs || report);
    let (output, end) = simulate::<M>(p, &mut sim, report);
    Run {
        output,
        detail: M::detail(p, sim.world, end),
        end,
    }
}

/// [`run_with`] (without logs or details) on the simulation `slot` holds from an earlier run
/// of the same parameters `p`, when the model resets its world in place
/// ([`Model::REUSES_WORLD`]; else a fresh one is built). The simulation is left in `slot`
/// for the next run. The output is the one [`run_with`] gives.
pub fn run_reusing<M: Model>(
    p: &M::Params,
    seed: u64,
    opts: RunOptions,
    slot: &mut Option<Simulation<M::World>>,
) -> RunOutput {
    let report = opts.report;
    if !M::REUSES_WORLD {
        let mut sim = M::simulation(p, seed, opts.trace, report);
        return simulate::<M>(p, &mut sim, report).0;
    }
    // The kept simulation is reset where it lies, not moved out and back.
    let sim = match slot {
        Some(sim) => {
            sim.restart(opts.trace);
            M::reset(p, seed, report, sim);
            sim
        }
        None => slot.insert(M::simulation(p, seed, opts.trace, report)),
    };
    simulate::<M>(p, sim, report).0
}

/// The steps of a run after its world is built: simulate to the horizon, end-of-run
/// accounting, the metrics and the digest, then the report and the artifacts.
fn simulate<M: Model>(
    p: &M::Params,
    sim: &mut Simulation<M::World>,
    report: bool,
) -> (RunOutput, SimTime) {
    let horizon = M::horizon(p, &sim.world);
    sim.run_until(horizon);
    let (end, events) = (sim.now(), sim.events());
    let (w, draws) = sim.world_and_draws();
    M::finish(p, w, draws);
    let values = M::metrics(p, &sim.world, end, events).values();
    let defs = <M::Metrics as MetricSet>::DEFS;
    let names_digest = <M::Metrics as MetricSet>::names_digest();
    let fin = sim.end_with_metrics(names_digest, defs.iter().map(|d| d.name), values);
    let (report, artifacts) = if report {
        (
            Some(M::report(p, &sim.world, &fin)),
            M::artifacts(p, &sim.world, end),
        )
    } else {
        (None, vec![])
    };
    (RunOutput::new(fin, defs, report, artifacts), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_declares_metrics_with_distinct_unreserved_names() {
        let all = all_metric_defs();
        assert_eq!(all.len(), MODEL_NAMES.len());
        for (model, defs) in all {
            assert!(!defs.is_empty(), "{model}");
            for (i, d) in defs.iter().enumerate() {
                assert!(!metric::is_reserved(d.name), "{model}: {}", d.name);
                assert!(
                    defs[..i].iter().all(|e| e.name != d.name),
                    "{model}: {} twice",
                    d.name
                );
            }
        }
    }
}
