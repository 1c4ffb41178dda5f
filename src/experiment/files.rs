//! The two file formats: a *model file* describes a world and its parameters; an
//! *experiment file* names a model file, overrides parameters, lists sweep axes, the number of
//! replicates, the metrics to keep and the charts to draw. Both are RON with unknown fields
//! rejected; `Some(..)` may be omitted around optional values (RON's `implicit_some`), and a
//! model's parameters are written inside its name: `world: Rollout( vtgates: 10, .. )`.

use super::error::InputError;
use crate::model::WorldSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A model file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename = "Model")]
pub struct ModelFile {
    /// Short name (used in reports).
    pub name: String,
    /// What the model file describes.
    #[serde(default)]
    pub description: String,
    /// The seed `vtsim replay` uses when none is given (an incident's own seed).
    #[serde(default)]
    pub seed: Option<u64>,
    /// The world and its parameters.
    pub world: WorldSpec,
}

/// An experiment file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename = "Experiment")]
pub struct ExperimentFile {
    /// Names the output folder `notebooks-out/<name>/`.
    pub name: String,
    /// What the experiment asks.
    #[serde(default)]
    pub description: String,
    /// The model file, relative to this file (or the name of a model built into vtsim).
    pub model: String,
    /// Experiment seed; replicate `r` runs with `replicate_seed(seed, r)` at every point.
    pub seed: u64,
    /// Replicates per sweep point (at least 1).
    pub replicates: u64,
    /// Parameter overrides applied to every point: `{ "section.field": value }`.
    #[serde(default)]
    pub set: BTreeMap<String, serde_json::Value>,
    /// Sweep dimensions; the points are their full grid (first dimension slowest).
    #[serde(default)]
    pub axes: Vec<Dimension>,
    /// Metrics to keep (empty: all the model reports).
    #[serde(default)]
    pub metrics: Vec<String>,
    /// Charts to draw.
    #[serde(default)]
    pub charts: Vec<ChartSpec>,
}

/// One dimension of the grid.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Dimension {
    /// One parameter taking a list of values.
    Axis(Axis),
    /// Several parameters varied together (equal lengths): value i of each goes with value i
    /// of the others.
    Zip(Vec<Axis>),
}

/// A swept parameter.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// Dotted parameter path in the model, e.g. `"operator.tablet_available_timeout"`.
    pub param: String,
    /// Column name in the outputs (default: the last segment of `param`).
    #[serde(default)]
    pub name: Option<String>,
    /// Explicit values (numbers, duration strings, or structured values such as
    /// `(kind: "Uniform")`).
    #[serde(default)]
    pub values: Vec<serde_json::Value>,
    /// A range instead of a list.
    #[serde(default)]
    pub range: Option<Range>,
    /// Labels for the values (default: the value itself, or the `kind` of a structured value).
    #[serde(default)]
    pub labels: Vec<String>,
}

/// An inclusive range of numbers or of durations: `(from: "0s", to: "150s", step: "10s")`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    /// First value.
    pub from: serde_json::Value,
    /// Last value (included when the steps land on it).
    pub to: serde_json::Value,
    /// Step (> 0).
    pub step: serde_json::Value,
}

/// Which statistic a chart draws, with its band.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
pub enum Stat {
    /// Mean with its 95 % Student-t CI (for a 0/1 metric: the proportion with its Wilson band).
    #[default]
    Mean,
    /// Median, no band.
    P50,
    /// 90th percentile, no band.
    P90,
    /// 99th percentile, no band.
    P99,
    /// Largest value, no band.
    Max,
}

/// A reference mark on a chart.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Mark {
    /// A vertical line at `x`.
    VLine {
        /// Position on the x axis.
        x: f64,
        /// Legend text.
        label: String,
    },
    /// A horizontal line at `y`.
    HLine {
        /// Position on the y axis.
        y: f64,
        /// Legend text.
        label: String,
    },
    /// For each series whose value v is numeric (durations in seconds), a vertical line at
    /// `factor × v` in the series colour (e.g. the 1.5 × refresh-interval rule of thumb).
    SeriesMultiple {
        /// Multiplier.
        factor: f64,
        /// Legend text.
        label: String,
    },
}

/// A line chart over one axis, with one curve per value of another axis and per metric.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename = "Chart")]
pub struct ChartSpec {
    /// File stem: `<name>.png`, `<name>.svg`.
    pub name: String,
    /// Title.
    pub title: String,
    /// Axis (by column name) on the x axis. Durations are drawn in seconds.
    pub x: String,
    /// x-axis title, with units.
    pub x_label: String,
    /// Metrics on the y axis.
    pub y: Vec<String>,
    /// y-axis title, with units.
    pub y_label: String,
    /// Statistic to draw.
    #[serde(default)]
    pub stat: Stat,
    /// Axis whose values give one curve each.
    #[serde(default)]
    pub series: Option<String>,
    /// Fix other axes at one label each: `{ "phase": "uniform" }`.
    #[serde(default)]
    pub filter: BTreeMap<String, String>,
    /// Logarithmic x axis.
    #[serde(default)]
    pub log_x: bool,
    /// Logarithmic y axis (values <= 0 are drawn at the axis floor).
    #[serde(default)]
    pub log_y: bool,
    /// Reference marks.
    #[serde(default)]
    pub marks: Vec<Mark>,
}

fn ron_options() -> ron::Options {
    use ron::extensions::Extensions;
    ron::Options::default()
        .with_default_extension(Extensions::IMPLICIT_SOME | Extensions::UNWRAP_VARIANT_NEWTYPES)
}

/// Models built into the binary, by file name, so the README's main job runs on a fresh
/// machine from any directory.
pub const EMBEDDED_MODELS: &[(&str, &str)] = &[
    (
        "hold-fixture.ron",
        include_str!("../../models/hold-fixture.ron"),
    ),
    (
        "rollout-default.ron",
        include_str!("../../models/rollout-default.ron"),
    ),
    (
        "incident-000.ron",
        include_str!("../../models/incident-000.ron"),
    ),
    (
        "playground.ron",
        include_str!("../../models/playground.ron"),
    ),
    (
        "connpool-default.ron",
        include_str!("../../models/connpool-default.ron"),
    ),
    (
        "proxysql-lab.ron",
        include_str!("../../models/proxysql-lab.ron"),
    ),
    (
        "proxysql-reader-fallback.ron",
        include_str!("../../models/proxysql-reader-fallback.ron"),
    ),
    (
        "proxysql-seed-1-idle-replica-dies.ron",
        include_str!("../../models/proxysql-seed-1-idle-replica-dies.ron"),
    ),
    (
        "proxysql-seed-2-read-replica-dies.ron",
        include_str!("../../models/proxysql-seed-2-read-replica-dies.ron"),
    ),
    (
        "proxysql-seed-3-both-replicas-die.ron",
        include_str!("../../models/proxysql-seed-3-both-replicas-die.ron"),
    ),
    (
        "proxysql-seed-4-writer-is-also-reader.ron",
        include_str!("../../models/proxysql-seed-4-writer-is-also-reader.ron"),
    ),
    (
        "proxysql-seed-5-writer-into-readers.ron",
        include_str!("../../models/proxysql-seed-5-writer-into-readers.ron"),
    ),
];

fn read(path: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|e| InputError::file(path, format!("cannot read: {e}")))
}

/// Parse a model file's text; `path` is used in messages.
pub fn parse_model(path: &Path, text: &str) -> Result<ModelFile, InputError> {
    let m: ModelFile = ron_options()
        .from_str(text)
        .map_err(|e| InputError::from_ron(path, text, &e))?;
    if let Err((field, msg)) = m.world.validate() {
        return Err(InputError::field(path, text, &field, msg));
    }
    Ok(m)
}

/// Read and check a model file.
pub fn load_model_file(path: &Path) -> Result<ModelFile, InputError> {
    let text = read(path)?;
    parse_model(path, &text)
}

/// Parse an experiment file's text (syntax and field names only).
pub fn parse_experiment(path: &Path, text: &str) -> Result<ExperimentFile, InputError> {
    let x: ExperimentFile = ron_options()
        .from_str(text)
        .map_err(|e| InputError::from_ron(path, text, &e))?;
    Ok(x)
}

/// Find the model an experiment names: beside the experiment file, else built in.
pub fn resolve_model(experiment_path: &Path, model: &str) -> Result<(PathBuf, String), InputError> {
    let base = experiment_path.parent().unwrap_or(Path::new("."));
    let candidate = base.join(model);
    if candidate.is_file() {
        let text = read(&candidate)?;
        return Ok((candidate, text));
    }
    let file_name = Path::new(model)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or(model);
    if let Some((_, text)) = EMBEDDED_MODELS.iter().find(|(n, _)| *n == file_name) {
        return Ok((
            PathBuf::from(format!("<built-in>/{file_name}")),
            text.to_string(),
        ));
    }
    Err(InputError::field(
        experiment_path,
        &std::fs::read_to_string(experiment_path).unwrap_or_default(),
        "model",
        format!(
            "model file `{}` not found (and no built-in model named `{file_name}`)",
            candidate.display()
        ),
    ))
}
