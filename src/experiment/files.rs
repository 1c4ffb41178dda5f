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
    /// The model file, relative to this file, or `builtin:NAME` for a model built into vtsim
    /// (`builtin:rollout-default`). A file that does not exist is an error.
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
    /// The question the page answers first (its verdict box); none: the page says the
    /// experiment describes and does not decide. (Left out of the echo when absent, so
    /// experiments without one keep their fingerprint.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<VerdictSpec>,
}

/// The verdict an experiment declares: per series, the smallest (or largest) value of `axis`
/// whose metric's upper 95 % bound is below `target`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename = "Verdict")]
pub struct VerdictSpec {
    /// One sentence: what is being decided.
    #[serde(default)]
    pub question: String,
    /// The axis whose value is the answer.
    pub axis: String,
    /// A kept metric; its upper 95 % bound (Wilson for a 0/1 metric) must be below `target`.
    pub metric: String,
    /// The target.
    pub target: f64,
    /// The largest passing value instead of the smallest.
    #[serde(default)]
    pub largest: bool,
    /// Only the points with these labels (`{ "phase": "uniform" }`).
    #[serde(default)]
    pub filter: BTreeMap<String, String>,
    /// A kept metric reported at the answer as its cost (`rollout_duration_s`).
    #[serde(default)]
    pub cost: Option<String>,
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

/// A colour written back as `"#rrggbb"`.
fn ser_rgb<S: serde::Serializer>(c: &Option<(u8, u8, u8)>, s: S) -> Result<S::Ok, S::Error> {
    let (r, g, b) = c.unwrap_or((0, 0, 0));
    s.serialize_str(&format!("#{r:02x}{g:02x}{b:02x}"))
}

/// A `"#rrggbb"` colour.
fn de_rgb<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<(u8, u8, u8)>, D::Error> {
    let s = String::deserialize(d)?;
    let hex = s
        .strip_prefix('#')
        .filter(|h| h.len() == 6 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    let Some(h) = hex else {
        return Err(serde::de::Error::custom(format!(
            "`color` is `{s}`, not \"#rrggbb\" (six hex digits)"
        )));
    };
    let c = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).expect("hex digits");
    Ok(Some((c(0), c(2), c(4))))
}

/// A reference mark on a chart.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Mark {
    /// A vertical line at `x` (solid black unless `color` or `dashed` is given).
    VLine {
        /// Position on the x axis.
        x: f64,
        /// Legend text.
        label: String,
        /// Colour as `"#rrggbb"` (default black).
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_rgb",
            serialize_with = "ser_rgb"
        )]
        color: Option<(u8, u8, u8)>,
        /// Dashed rather than solid (default false).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        dashed: bool,
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

/// Models built into the binary, by file name, so the README's commands run on a fresh
/// machine from any directory: every `models/*.ron`, in name order (`build.rs` lists the
/// folder). They are named explicitly, `builtin:NAME` with NAME the file's stem
/// (`builtin:rollout-default`); a file path never falls back to them.
pub const EMBEDDED_MODELS: &[(&str, &str)] =
    include!(concat!(env!("OUT_DIR"), "/embedded_models.rs"));

/// How a model is named as built in: `builtin:NAME` (NAME is the shipped file's stem, e.g.
/// `builtin:rollout-default`).
pub const BUILTIN_PREFIX: &str = "builtin:";

/// The largest model or experiment file read (16 MiB; the shipped ones are a few KB, and a
/// 65 535-vtgate offsets list is under 1 MB). A bigger input (or `/dev/zero`) is refused
/// instead of filling memory.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// The names `builtin:NAME` accepts, in the order of [`EMBEDDED_MODELS`].
pub fn builtin_names() -> Vec<&'static str> {
    EMBEDDED_MODELS
        .iter()
        .map(|(n, _)| n.strip_suffix(".ron").unwrap_or(n))
        .collect()
}

/// The text of built-in model `name` (`rollout-default`; a `.ron` suffix is accepted).
pub fn builtin(name: &str) -> Option<&'static str> {
    let stem = name.strip_suffix(".ron").unwrap_or(name);
    EMBEDDED_MODELS
        .iter()
        .find(|(n, _)| n.strip_suffix(".ron") == Some(stem))
        .map(|(_, t)| *t)
}

/// Built-in model `name`, parsed (the shipped files always parse: tests/shipped_files.rs).
/// Panics when there is no such model (a caller's bug: the names are vtsim's own).
pub fn builtin_model(name: &str) -> ModelFile {
    let text = builtin(name).expect("a built-in model of that name");
    parse_model(Path::new(&format!("{BUILTIN_PREFIX}{name}")), text).expect("built-in models parse")
}

/// `Some(NAME)` when `spec` is `builtin:NAME`.
pub fn builtin_ref(spec: &str) -> Option<&str> {
    spec.strip_prefix(BUILTIN_PREFIX)
}

fn unknown_builtin(name: &str) -> String {
    format!(
        "no built-in model `{name}`; the built-in models are: {}",
        builtin_names()
            .iter()
            .map(|n| format!("{BUILTIN_PREFIX}{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Read a model or experiment file as UTF-8 text, refusing a file over [`MAX_INPUT_BYTES`]
/// and naming the first bad byte of one that is not UTF-8.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    use std::io::Read;
    let cannot = |e: std::io::Error| {
        InputError::file(path, format!("cannot read: {}", super::error::io_words(&e)))
    };
    let f = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = vec![];
    f.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(InputError::file(
            path,
            format!(
                "larger than {} MiB; a model or experiment file is text of a few KB",
                MAX_INPUT_BYTES >> 20
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| InputError::not_utf8(path, e.as_bytes(), &e.utf8_error()))
}

/// Parse a model file's text; `path` is used in messages.
pub fn parse_model(path: &Path, text: &str) -> Result<ModelFile, InputError> {
    let m: ModelFile = ron_options()
        .from_str(text)
        .map_err(|e| InputError::from_ron(path, text, &e))?;
    if let Err(e) = m.world.validate() {
        return Err(InputError::field(path, text, &e.field, e.expected));
    }
    Ok(m)
}

/// Read and check a model file.
pub fn load_model_file(path: &Path) -> Result<ModelFile, InputError> {
    let text = read_text(path)?;
    parse_model(path, &text)
}

/// A model named on the command line: `builtin:NAME`, or a file path. Returns where it came
/// from (the path, or `builtin:NAME`) and its text. A missing file is an error, with a hint
/// when a built-in model has its name; nothing is substituted.
pub fn model_source(arg: &Path) -> Result<(PathBuf, String), InputError> {
    if let Some(name) = arg.to_str().and_then(builtin_ref) {
        return match builtin(name) {
            Some(t) => Ok((
                PathBuf::from(format!("{BUILTIN_PREFIX}{}", name.trim_end_matches(".ron"))),
                t.to_string(),
            )),
            None => Err(InputError::file(arg, unknown_builtin(name))),
        };
    }
    match read_text(arg) {
        Ok(t) => Ok((arg.to_path_buf(), t)),
        Err(mut e) => {
            if let Some(hint) = builtin_hint(arg) {
                e.message.push_str(&hint);
            }
            Err(e)
        }
    }
}

/// Load a model named on the command line (see [`model_source`]).
pub fn load_model_arg(arg: &Path) -> Result<ModelFile, InputError> {
    let (path, text) = model_source(arg)?;
    parse_model(&path, &text)
}

fn builtin_hint(p: &Path) -> Option<String> {
    if p.exists() {
        return None;
    }
    let name = p.file_name()?.to_str()?;
    builtin(name)?;
    Some(format!(
        " (a model of that name is built in: `{BUILTIN_PREFIX}{}`)",
        name.trim_end_matches(".ron")
    ))
}

/// Parse an experiment file's text (syntax and field names only).
pub fn parse_experiment(path: &Path, text: &str) -> Result<ExperimentFile, InputError> {
    let x: ExperimentFile = ron_options()
        .from_str(text)
        .map_err(|e| InputError::from_ron(path, text, &e))?;
    Ok(x)
}

/// Find the model an experiment names: `builtin:NAME`, or a file relative to the experiment
/// file (an absolute path as it is). The file must exist: there is no fallback. Returns the
/// resolved path (or `builtin:NAME`) and the text.
pub fn resolve_model(
    experiment_path: &Path,
    experiment_text: &str,
    model: &str,
) -> Result<(PathBuf, String), InputError> {
    let err = |m: String| InputError::field(experiment_path, experiment_text, "model", m);
    if let Some(name) = builtin_ref(model) {
        return match builtin(name) {
            Some(t) => Ok((
                PathBuf::from(format!("{BUILTIN_PREFIX}{}", name.trim_end_matches(".ron"))),
                t.to_string(),
            )),
            None => Err(err(unknown_builtin(name))),
        };
    }
    if model.is_empty() {
        return Err(err(format!(
            "empty; name a model file (relative to this file) or `{BUILTIN_PREFIX}NAME`"
        )));
    }
    let base = experiment_path.parent().unwrap_or(Path::new("."));
    let candidate = base.join(model);
    if !candidate.is_file() {
        let why = match std::fs::metadata(&candidate) {
            Ok(_) => "not a file".to_string(),
            Err(e) => super::error::io_words(&e),
        };
        return Err(err(format!(
            "model file `{}` not found ({why}){}",
            candidate.display(),
            builtin_hint(&candidate).unwrap_or_default()
        )));
    }
    let text = read_text(&candidate)?;
    Ok((candidate, text))
}

/// What a file is, from the name of its top-level struct (`Model(..)` or `Experiment(..)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A model file.
    Model,
    /// An experiment file.
    Experiment,
}

/// Decide from the file's top-level struct name, read as RON reads it: whitespace, `//` and
/// (nested) `/* */` comments and `#![..]` attributes are skipped, then the identifier before
/// the first `(` is the struct name.
pub fn file_kind(path: &Path, text: &str) -> Result<FileKind, InputError> {
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i..].starts_with(b"#![") {
            while i < b.len() && b[i] != b']' {
                i += 1;
            }
            i = (i + 1).min(b.len());
        } else {
            break;
        }
    }
    let i = i.min(b.len());
    let start = if b[i..].starts_with(b"r#") { i + 2 } else { i };
    let end = start
        + b[start..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
    let name = &text[start..end];
    let at = super::error::locate_offset(text, i);
    match name {
        "Model" => Ok(FileKind::Model),
        "Experiment" => Ok(FileKind::Experiment),
        "" => Err(InputError::at(
            path,
            Some(at),
            "",
            "expected `Model(` or `Experiment(` at the start of the file",
        )),
        other => Err(InputError::at(
            path,
            Some(at),
            "",
            format!("the file is a `{other}`; expected `Model(` or `Experiment(`"),
        )),
    }
}
