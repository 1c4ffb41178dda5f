//! From an experiment file to a plan: the model with its overrides, the sweep points (the full
//! grid of the dimensions, zipped axes moving together), the metrics kept, and the jobs.
//! Everything is checked here, before anything is written.
//!
//! Bounds (each refusal names the field and the bound; the CLI exits 2):
//! - an axis has at most [`MAX_AXIS_VALUES`] values (a range's count is computed, not looped);
//! - the grid has at most [`MAX_POINTS`] points (a checked product of the dimensions' sizes);
//! - points × replicates is at most [`MAX_JOBS`] runs (checked `u64` arithmetic);
//! - validating builds every point's parameters once: points × the model's parameter bytes is
//!   at most [`MAX_VALIDATION_BYTES`];
//! - a point keeps its built world only while all of them fit in [`POINT_MEMORY_BUDGET`];
//!   above that it keeps its grid position and rebuilds the world for each run.
//!
//! Names and labels go into CSV rows, file names and an HTML page: experiment and chart names
//! are letters, digits, `-` and `_`; axis names and labels are non-empty, at most
//! [`MAX_TEXT_CHARS`] characters and have no control characters. Axis names may not be a
//! reserved column ([`RESERVED_COLUMNS`]) or a metric of the model; no two axes may set one
//! parameter (or one inside the other), and `set` may not set what an axis sweeps.//!
//! Here: the plan and its points; [`load_plan`] (`load.rs`) builds one, from the axes
//! (`axis.rs`: values, ranges, labels, columns), the overrides (`overrides.rs`: `set` and
//! `--set` paths) and the checks on names and labels (`text.rs`).

mod axis;
mod load;
mod overrides;
#[cfg(test)]
mod tests;
mod text;

pub use crate::io::label::duration_label;
pub use load::{load_plan, plan_from_text};
pub use overrides::{apply_override, with_overrides, OverrideError};
pub use text::check_text;

use super::files::{ExperimentFile, ModelFile};
use crate::model::{MetricDef, RunOptions, RunOutput, WorldSpec};
use crate::sim::SimDuration;
use axis::Column;
use serde_json::Value;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

/// Most values one axis may take (a range's count is computed before anything is built).
pub const MAX_AXIS_VALUES: u64 = 100_000;
/// Most points in a grid.
pub const MAX_POINTS: u64 = 1_000_000;
/// Most runs (points × replicates) in one experiment: 1e12. A `runs.csv` row is about 100
/// bytes, so that is 100 TB of rows and, at a million runs a second, 11 days; anything larger
/// is a typo, and `u64` job arithmetic stays far from overflow below it.
pub const MAX_JOBS: u64 = 1_000_000_000_000;
/// Most parameter bytes (points × the model's parameters as JSON) validation builds: 2e9,
/// about half a minute on one core. (500 points of a 65 535-vtgate `Explicit` offsets model
/// is 3.3e8.)
pub const MAX_VALIDATION_BYTES: u64 = 2_000_000_000;
/// Memory the built worlds of all points may take (estimated from the model's size): 256 MiB.
/// Above it, points rebuild their world for each run instead of keeping it.
pub const POINT_MEMORY_BUDGET: u64 = 256 << 20;
/// Longest experiment or chart name, in characters (they name a folder and files).
pub const MAX_NAME_CHARS: usize = 100;
/// Longest axis name or label, in characters.
pub const MAX_TEXT_CHARS: usize = 200;
/// Columns `runs.csv` and `points.csv` always have; no axis may take these names.
pub const RESERVED_COLUMNS: &[&str] = &["job", "point", "replicate", "seed", "events", "digest"];

/// One sweep point: a label per axis column and the world to simulate.
#[derive(Clone, Debug)]
pub struct Point {
    /// Position in the grid (row of `points.csv`).
    pub index: usize,
    /// One label per axis column (`"30s"`, `"uniform"`, `"10"`).
    pub labels: Vec<String>,
    /// The model with this point's parameters (`world.run(seed, opts)`).
    pub world: PointWorld,
}

/// A point's world: built once and kept, or (for a sweep too big to keep every world in
/// memory) rebuilt from the grid for each run. Both give the same world, checked at planning.
#[derive(Clone, Debug)]
pub struct PointWorld(Repr);

#[derive(Clone, Debug)]
enum Repr {
    Built(Box<WorldSpec>),
    Lazy { grid: Arc<Grid>, index: usize },
}

impl PointWorld {
    /// The world (borrowed when kept, built when not).
    pub fn spec(&self) -> Cow<'_, WorldSpec> {
        match &self.0 {
            Repr::Built(w) => Cow::Borrowed(w),
            Repr::Lazy { grid, index } => Cow::Owned(
                grid.build(*index)
                    .expect("a point's world was built once at planning"),
            ),
        }
    }
    /// Simulate one run of this point (see [`WorldSpec::run`]).
    pub fn run(&self, seed: u64, opts: RunOptions) -> RunOutput {
        self.spec().run(seed, opts)
    }
    /// The model's name (see [`WorldSpec::kind`]).
    pub fn kind(&self) -> &'static str {
        match &self.0 {
            Repr::Built(w) => w.kind(),
            Repr::Lazy { grid, .. } => grid.model.kind(),
        }
    }
    /// The metrics a run reports (see [`WorldSpec::metric_defs`]).
    pub fn metric_defs(&self) -> Vec<MetricDef> {
        match &self.0 {
            Repr::Built(w) => w.metric_defs(),
            Repr::Lazy { grid, .. } => grid.model.metric_defs(),
        }
    }
    /// The parameters as a JSON tree (see [`WorldSpec::params_json`]).
    pub fn params_json(&self) -> Value {
        self.spec().params_json()
    }
    /// Is the world kept in memory (else rebuilt for each run)?
    pub fn is_kept(&self) -> bool {
        matches!(self.0, Repr::Built(_))
    }
}

/// The grid: the base parameters (model + `set`) and the dimensions' columns.
#[derive(Debug)]
struct Grid {
    model: WorldSpec,
    base: Value,
    groups: Vec<Vec<Column>>,
    sizes: Vec<usize>,
}

impl Grid {
    /// The value index of each dimension at point `index` (first dimension slowest).
    fn picks(&self, index: usize) -> Vec<usize> {
        let mut rem = index;
        let mut pick = vec![0usize; self.sizes.len()];
        for d in (0..self.sizes.len()).rev() {
            pick[d] = rem % self.sizes[d];
            rem /= self.sizes[d];
        }
        pick
    }
    fn labels(&self, index: usize) -> Vec<String> {
        let mut labels = vec![];
        for (g, i) in self.groups.iter().zip(self.picks(index)) {
            for c in g {
                labels.push(c.labels[i].clone());
            }
        }
        labels
    }
    fn params(&self, index: usize) -> Result<Value, (String, String)> {
        let mut params = self.base.clone();
        for (g, i) in self.groups.iter().zip(self.picks(index)) {
            for c in g {
                apply_override(&mut params, &c.param, c.values[i].clone())
                    .map_err(|m| (c.param.clone(), m))?;
            }
        }
        Ok(params)
    }
    /// The world of point `index`; on failure, the axis parameter to blame and why.
    fn build(&self, index: usize) -> Result<WorldSpec, (String, String)> {
        let params = self.params(index)?;
        self.model.with_params_json(params).map_err(|m| {
            // Which axis's value does not fit? Apply them one at a time to the base (which
            // is known to build) to find the first that fails.
            let picks = self.picks(index);
            for (g, &i) in self.groups.iter().zip(&picks) {
                for c in g {
                    let mut p = self.base.clone();
                    if apply_override(&mut p, &c.param, c.values[i].clone()).is_ok()
                        && self.model.with_params_json(p).is_err()
                    {
                        return (c.param.clone(), m);
                    }
                }
            }
            ("axes".to_string(), m)
        })
    }
}

/// A checked experiment, ready to run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The experiment as written.
    pub experiment: ExperimentFile,
    /// Where it was read from.
    pub experiment_path: PathBuf,
    /// Where the model was read from: the file path resolved against the experiment's folder,
    /// or `builtin:NAME` for a built-in model.
    pub model_path: PathBuf,
    /// The model file, before the sweep's overrides.
    pub model: ModelFile,
    /// Axis column names, in dimension order.
    pub columns: Vec<String>,
    /// The grid.
    pub points: Vec<Point>,
    /// Every metric the model reports.
    pub metric_defs: Vec<MetricDef>,
    /// Indices (into `metric_defs`) of the metrics kept, in the model's order.
    pub keep: Vec<usize>,
    /// BLAKE3 of the plan's inputs: shards and resumed runs must agree on it.
    pub fingerprint: String,
}

impl Plan {
    /// Replicates per point.
    pub fn replicates(&self) -> u64 {
        self.experiment.replicates
    }
    /// Total jobs = points × replicates (at most [`MAX_JOBS`]); job `j` is point `j / R`,
    /// replicate `j % R`.
    pub fn jobs(&self) -> u64 {
        (self.points.len() as u64).saturating_mul(self.experiment.replicates)
    }
    /// The kept metric definitions.
    pub fn kept_defs(&self) -> Vec<&MetricDef> {
        self.keep.iter().map(|&i| &self.metric_defs[i]).collect()
    }
    /// Numeric value of an axis label: durations in seconds, numbers as they are.
    pub fn numeric(label: &str) -> Option<f64> {
        if let Ok(v) = label.parse::<f64>() {
            return Some(v);
        }
        SimDuration::parse(label).ok().map(|d| d.as_secs_f64())
    }
    /// Column index of an axis by name.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}
