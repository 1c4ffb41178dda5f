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
//! parameter (or one inside the other), and `set` may not set what an axis sweeps.

use super::error::{
    locate_field_after_quoted, locate_nth_quoted_after, locate_quoted_after, InputError,
};
use super::files::{
    parse_experiment, parse_model, read_text, resolve_model, Axis, Dimension, ExperimentFile,
    ModelFile,
};
use crate::model::{MetricDef, RunOptions, RunOutput, WorldSpec};
use crate::sim::SimDuration;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
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

/// The label of a duration: whole seconds as `90s`, else milliseconds or nanoseconds.
pub fn duration_label(d: SimDuration) -> String {
    let ns = d.as_nanos();
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{ns}ns")
    }
}

fn default_label(v: &Value) -> String {
    match v {
        Value::String(s) => match SimDuration::parse(s) {
            Ok(d) => duration_label(d),
            Err(_) => s.clone(),
        },
        Value::Object(m) => match m.get("kind") {
            Some(Value::String(k)) => k.to_lowercase(),
            _ => v.to_string(),
        },
        other => other.to_string(),
    }
}

/// Apply `value` at dotted `path` in the parameter tree; the path must already exist.
pub fn apply_override(root: &mut Value, path: &str, value: Value) -> Result<(), String> {
    check_param_path(path)?;
    let mut node = root;
    let mut walked = String::new();
    for seg in path.split('.') {
        let Value::Object(map) = node else {
            return Err(format!(
                "`{walked}` has no fields, so `{path}` does not exist"
            ));
        };
        if !map.contains_key(seg) {
            let keys: Vec<&str> = map.keys().map(|s| s.as_str()).collect();
            return Err(format!(
                "unknown parameter `{seg}`{}; expected one of: {}",
                if walked.is_empty() {
                    String::new()
                } else {
                    format!(" in `{walked}`")
                },
                keys.join(", ")
            ));
        }
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(seg);
        node = map.get_mut(seg).expect("checked");
    }
    *node = value;
    Ok(())
}

/// Why overrides did not apply: override `i` (its path is missing, or its value does not fit
/// the parameter), or the overridden parameters as a whole (a check failed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OverrideError {
    /// Override `i` of the list, and why.
    At(usize, String),
    /// The parameters with every override applied, and why.
    Whole(String),
}

/// `world` with each `(path, value)` override applied in order (see [`apply_override`]) and
/// validated: the one way `replay --set` and `advise` change a model's parameters.
pub fn with_overrides(
    world: &WorldSpec,
    sets: &[(String, Value)],
) -> Result<WorldSpec, OverrideError> {
    let mut params = world.params_json();
    for (i, (k, v)) in sets.iter().enumerate() {
        apply_override(&mut params, k, v.clone()).map_err(|m| OverrideError::At(i, m))?;
        // Checked one at a time, so that the error names the override that does not fit.
        world
            .with_params_json(params.clone())
            .map_err(|m| OverrideError::At(i, m))?;
    }
    let w = world
        .with_params_json(params)
        .map_err(OverrideError::Whole)?;
    w.validate()
        .map_err(|e| OverrideError::Whole(e.to_string()))?;
    Ok(w)
}

/// A parameter path is dot-separated names, none empty.
fn check_param_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("an empty parameter path; write a dotted path such as `vtgate.phase`".into());
    }
    if path.split('.').any(str::is_empty) {
        return Err(format!(
            "`{path}` has an empty segment; write a dotted path such as `vtgate.phase`"
        ));
    }
    Ok(())
}

/// Refuse text that cannot round-trip through a CSV row, a file name or an HTML page:
/// empty, longer than `max` characters, or with a control character (newline, tab, NUL, DEL,
/// U+0080–U+009F) or a Unicode line/paragraph separator.
pub fn check_text(what: &str, s: &str, max: usize) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("an empty {what}"));
    }
    let n = s.chars().count();
    if n > max {
        return Err(format!("{what} {s:?} has {n} characters; at most {max}"));
    }
    if let Some((i, c)) = s
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err(format!(
            "{what} {s:?} has the control character U+{:04X} at character {}; names and \
             labels go into CSV rows and an HTML page, so they must be printable",
            c as u32,
            i + 1
        ));
    }
    Ok(())
}

/// An experiment or chart name: letters, digits, `-` and `_`, at most [`MAX_NAME_CHARS`].
fn check_file_name(what: &str, s: &str) -> Result<(), String> {
    if s.is_empty()
        || s.chars().count() > MAX_NAME_CHARS
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "{what} {s:?}: 1 to {MAX_NAME_CHARS} letters, digits, '-' and '_' (it names {})",
            if what == "chart name" {
                "the chart's files"
            } else {
                "the output folder"
            }
        ));
    }
    Ok(())
}

fn number_of(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn too_many(n: f64) -> String {
    format!(
        "the range has {n:.4e} values; at most {MAX_AXIS_VALUES} (a larger step, or fewer values)"
    )
}

fn expand_range(axis: &Axis) -> Result<Vec<Value>, String> {
    let r = axis.range.as_ref().expect("caller checked");
    let as_dur = |v: &Value| v.as_str().map(SimDuration::parse);
    match (as_dur(&r.from), as_dur(&r.to), as_dur(&r.step)) {
        (Some(a), Some(b), Some(s)) => {
            let (a, b, s) = (a?, b?, s?);
            if s == SimDuration::ZERO {
                return Err("range step must be > 0".into());
            }
            if b < a {
                return Err("range `to` is before `from`".into());
            }
            let (a, b, s) = (a.as_nanos(), b.as_nanos(), s.as_nanos());
            let n = (b - a) / s + 1;
            if n > MAX_AXIS_VALUES {
                return Err(too_many(n as f64));
            }
            Ok((0..n)
                .map(|i| Value::String(duration_label(SimDuration::from_nanos(a + i * s))))
                .collect())
        }
        (None, None, None) => {
            let ints = (r.from.as_i64(), r.to.as_i64(), r.step.as_i64());
            if let (Some(a), Some(b), Some(s)) = ints {
                if s <= 0 {
                    return Err("range step must be > 0".into());
                }
                if b < a {
                    return Err("range `to` is before `from`".into());
                }
                // Exact in i128: no rounding, no overflow.
                let n = (b as i128 - a as i128) / s as i128 + 1;
                if n > MAX_AXIS_VALUES as i128 {
                    return Err(too_many(n as f64));
                }
                return Ok((0..n as i64).map(|i| Value::from(a + i * s)).collect());
            }
            let (Some(a), Some(b), Some(s)) =
                (number_of(&r.from), number_of(&r.to), number_of(&r.step))
            else {
                return Err("range wants numbers, or duration strings, in from/to/step".into());
            };
            if s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                return Err("range step must be > 0".into());
            }
            if b < a {
                return Err("range `to` is before `from`".into());
            }
            let n = ((b - a) / s + 1e-9).floor() + 1.0;
            if n.is_nan() || n > MAX_AXIS_VALUES as f64 {
                return Err(too_many(n));
            }
            Ok((0..n as u64)
                .map(|i| Value::from(a + i as f64 * s))
                .collect())
        }
        _ => Err("range from/to/step must all be durations or all numbers".into()),
    }
}

#[derive(Debug)]
struct Column {
    /// This axis is the `nth` (0-based) in the file on its parameter (for locating it).
    nth: usize,
    param: String,
    name: String,
    values: Vec<Value>,
    labels: Vec<String>,
}

/// Where an axis is written: the `nth` `param: "…"` of its parameter inside `axes`.
fn axis_at(text: &str, param: &str, nth: usize) -> Option<(usize, usize)> {
    locate_nth_quoted_after(text, "axes", param, nth)
}

fn axis_column(path: &Path, text: &str, axis: &Axis, nth: usize) -> Result<Column, InputError> {
    let field = if axis.param.is_empty() {
        "param"
    } else {
        axis.param.as_str()
    };
    let err = |msg: String| InputError::at(path, axis_at(text, &axis.param, nth), field, msg);
    check_param_path(&axis.param).map_err(err)?;
    let values = match (&axis.range, axis.values.is_empty()) {
        (Some(_), true) => expand_range(axis).map_err(err)?,
        (None, false) => {
            if axis.values.len() as u64 > MAX_AXIS_VALUES {
                return Err(err(format!(
                    "{} values; at most {MAX_AXIS_VALUES}",
                    axis.values.len()
                )));
            }
            axis.values.clone()
        }
        (Some(_), false) => return Err(err("give either `values` or `range`, not both".into())),
        (None, true) => return Err(err("an axis needs `values` or a `range`".into())),
    };
    let labels: Vec<String> = if axis.labels.is_empty() {
        values.iter().map(default_label).collect()
    } else if axis.labels.len() == values.len() {
        axis.labels.clone()
    } else {
        return Err(err(format!(
            "{} labels for {} values",
            axis.labels.len(),
            values.len()
        )));
    };
    for l in &labels {
        check_text("label", l, MAX_TEXT_CHARS).map_err(|m| {
            if axis.labels.is_empty() {
                err(format!(
                    "{m} (the label of a value; give the axis `labels`)"
                ))
            } else {
                err(m)
            }
        })?;
    }
    let name = axis.name.clone().unwrap_or_else(|| {
        axis.param
            .rsplit('.')
            .next()
            .unwrap_or(&axis.param)
            .to_string()
    });
    check_text("axis name", &name, MAX_TEXT_CHARS).map_err(err)?;
    if let Some(r) = RESERVED_COLUMNS
        .iter()
        .find(|r| r.eq_ignore_ascii_case(&name))
    {
        return Err(err(format!(
            "the axis name `{name}` is the reserved column `{r}` (reserved: {}); give the \
             axis another `name`",
            RESERVED_COLUMNS.join(", ")
        )));
    }
    Ok(Column {
        nth,
        param: axis.param.clone(),
        name,
        values,
        labels,
    })
}

/// Read an experiment file and everything it names, and check it whole.
pub fn load_plan(experiment_path: &Path) -> Result<Plan, InputError> {
    let text = read_text(experiment_path)?;
    plan_from_text(experiment_path, &text)
}

/// `a` is `b`, or one is inside the other (`vtgate.phase` and `vtgate.phase.window`).
fn overlaps(a: &str, b: &str) -> bool {
    let inside =
        |x: &str, y: &str| x.len() > y.len() && x.starts_with(y) && x.as_bytes()[y.len()] == b'.';
    a == b || inside(a, b) || inside(b, a)
}

/// As [`load_plan`], from the experiment's text.
pub fn plan_from_text(path: &Path, text: &str) -> Result<Plan, InputError> {
    plan_with_budget(path, text, POINT_MEMORY_BUDGET)
}

/// [`plan_from_text`] with the points' memory budget as a parameter (tests use 0: every
/// point rebuilds its world).
fn plan_with_budget(path: &Path, text: &str, budget: u64) -> Result<Plan, InputError> {
    let x = parse_experiment(path, text)?;
    let field_err = |f: &str, m: String| InputError::field(path, text, f, m);
    check_file_name("experiment name", &x.name).map_err(|m| field_err("name", m))?;
    if x.replicates == 0 {
        return Err(field_err("replicates", "at least 1 replicate".into()));
    }
    let (model_path, model_text) = resolve_model(path, text, &x.model)?;
    let model = parse_model(&model_path, &model_text)?;
    let metric_defs = model.world.metric_defs();

    // Base parameters with `set` applied; each key is checked on its own, so a bad value is
    // reported at its key.
    let mut base = model.world.params_json();
    for (k, v) in &x.set {
        let f = format!("set.{k}");
        let err = |m: String| InputError::at(path, locate_quoted_after(text, "set", k), &f, m);
        apply_override(&mut base, k, v.clone()).map_err(err)?;
        model
            .world
            .with_params_json(base.clone())
            .map_err(|m| err(format!("the value {v}: {m}")))?;
    }

    // Dimensions -> columns, grouped.
    let mut groups: Vec<Vec<Column>> = vec![];
    let mut seen_params: Vec<String> = vec![];
    let mut column = |a: &Axis| {
        let nth = seen_params.iter().filter(|p| **p == a.param).count();
        seen_params.push(a.param.clone());
        axis_column(path, text, a, nth)
    };
    for d in &x.axes {
        match d {
            Dimension::Axis(a) => groups.push(vec![column(a)?]),
            Dimension::Zip(axes) => {
                if axes.is_empty() {
                    return Err(field_err("axes", "an empty Zip".into()));
                }
                let cols = axes
                    .iter()
                    .map(&mut column)
                    .collect::<Result<Vec<_>, _>>()?;
                let n = cols[0].values.len();
                if let Some(c) = cols.iter().find(|c| c.values.len() != n) {
                    return Err(InputError::at(
                        path,
                        axis_at(text, &c.param, c.nth),
                        &c.param,
                        format!(
                            "zipped axes need equal lengths: {} has {}, {} has {n}",
                            c.param,
                            c.values.len(),
                            cols[0].param
                        ),
                    ));
                }
                groups.push(cols);
            }
        }
    }
    let param_bytes = serde_json::to_string(&base).map(|s| s.len()).unwrap_or(0) as u64;
    let sizes: Vec<usize> = groups.iter().map(|g| g[0].values.len()).collect();
    let grid = Arc::new(Grid {
        model: model.world.clone(),
        base,
        groups,
        sizes,
    });
    let cols: Vec<&Column> = grid.groups.iter().flatten().collect();
    let columns: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
    let axis_err =
        |c: &Column, m: String| InputError::at(path, axis_at(text, &c.param, c.nth), &c.param, m);
    let mut seen = HashSet::new();
    for c in &cols {
        if !seen.insert(c.name.as_str()) {
            return Err(axis_err(
                c,
                format!("two axes are named `{}`; give one a `name`", c.name),
            ));
        }
        if let Some(d) = metric_defs
            .iter()
            .find(|d| d.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(axis_err(
                c,
                format!(
                    "the axis name `{}` is a metric of the model (`{}`); give the axis \
                     another `name`",
                    c.name, d.name
                ),
            ));
        }
    }
    // One parameter, one axis: a second would overwrite the first's value in every row.
    let mut params: HashSet<&str> = HashSet::new();
    for c in &cols {
        let mut prefix = c.param.as_str();
        let clash = loop {
            if params.contains(prefix) {
                break Some(prefix);
            }
            match prefix.rfind('.') {
                Some(i) => prefix = &prefix[..i],
                None => break None,
            }
        }
        .map(str::to_string)
        .or_else(|| {
            params
                .iter()
                .find(|p| overlaps(p, &c.param))
                .map(|p| p.to_string())
        });
        if let Some(other) = clash {
            return Err(axis_err(
                c,
                format!(
                    "two axes set `{other}`{}: the later would overwrite the earlier in every \
                     row; sweep it once (a Zip moves several parameters together)",
                    if other == c.param {
                        String::new()
                    } else {
                        format!(" (`{}` is inside it)", c.param)
                    }
                ),
            ));
        }
        params.insert(&c.param);
    }
    for k in x.set.keys() {
        if let Some(c) = cols
            .iter()
            .find(|c| k == &c.param || overlaps(k, &c.param) && k.len() > c.param.len())
        {
            return Err(InputError::at(
                path,
                locate_quoted_after(text, "set", k),
                &format!("set.{k}"),
                format!(
                    "the axis `{}` sweeps `{}`, which would overwrite this value at every \
                     point; remove one",
                    c.name, c.param
                ),
            ));
        }
    }
    // Each value of a dimension must have its own labels, or rows are indistinguishable.
    for g in &grid.groups {
        let mut seen: HashSet<Vec<&str>> = HashSet::new();
        for i in 0..g[0].values.len() {
            let key: Vec<&str> = g.iter().map(|c| c.labels[i].as_str()).collect();
            if !seen.insert(key.clone()) {
                let first = (0..i)
                    .find(|&j| g.iter().all(|c| c.labels[j] == c.labels[i]))
                    .unwrap_or(0);
                return Err(axis_err(
                    &g[0],
                    format!(
                        "values {first} and {i} have the same label{} `{}`; give the axis \
                         distinct `labels`",
                        if g.len() > 1 { "s" } else { "" },
                        key.join("`, `")
                    ),
                ));
            }
        }
    }

    // Full grid, first dimension slowest: a checked product.
    let sizes = &grid.sizes;
    let total = sizes
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n as u64))
        .filter(|&t| t <= MAX_POINTS);
    let Some(total) = total else {
        let product: f64 = sizes.iter().map(|&n| n as f64).product();
        return Err(field_err(
            "axes",
            format!(
                "the grid has {} = {product:.4e} points; at most {MAX_POINTS}",
                sizes
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(" × ")
            ),
        ));
    };
    if total.checked_mul(x.replicates).is_none_or(|j| j > MAX_JOBS) {
        return Err(field_err(
            "replicates",
            format!(
                "{total} points × {} replicates = {:.4e} runs; at most {MAX_JOBS:.0e}",
                x.replicates,
                total as f64 * x.replicates as f64
            ),
        ));
    }
    if total.saturating_mul(param_bytes) > MAX_VALIDATION_BYTES {
        return Err(field_err(
            "axes",
            format!(
                "validating {total} points of a model with {param_bytes} bytes of parameters \
                 builds {:.3e} bytes; at most {MAX_VALIDATION_BYTES:.0e} (fewer points, or a \
                 smaller model)",
                total as f64 * param_bytes as f64
            ),
        ));
    }
    let per_point = std::mem::size_of::<WorldSpec>() as u64 + param_bytes;
    let keep_worlds = total.saturating_mul(per_point) <= budget;

    let at_point = |index: usize, labels: &[String]| {
        let axes: Vec<String> = columns
            .iter()
            .zip(labels)
            .map(|(c, l)| format!("{c}={l}"))
            .collect();
        if axes.is_empty() {
            String::new()
        } else {
            format!(" (at point {index}: {})", axes.join(", "))
        }
    };
    let total = total as usize;
    let mut points = Vec::with_capacity(total);
    for index in 0..total {
        let labels = grid.labels(index);
        let world = grid.build(index).map_err(|(param, m)| {
            let m = format!("{m}{}", at_point(index, &labels));
            match cols.iter().find(|c| c.param == param) {
                Some(c) => axis_err(c, m),
                None => field_err("axes", m),
            }
        })?;
        if let Err(e) = world.validate() {
            let (f, m) = (e.field, e.expected);
            let m = format!("{m}{}", at_point(index, &labels));
            // A field no axis sweeps, but `set` sets: report it at its `set` key.
            let under = |k: &str| {
                f == k
                    || f.strip_prefix(k)
                        .is_some_and(|r| r.starts_with('.') || r.starts_with('['))
            };
            if !cols.iter().any(|c| under(&c.param)) {
                if let Some(k) = x.set.keys().find(|k| under(k)) {
                    return Err(InputError::at(
                        path,
                        locate_quoted_after(text, "set", k),
                        &format!("set.{k}"),
                        format!("`{f}`: {m}"),
                    ));
                }
            }
            return Err(field_err(&f, m));
        }
        points.push(Point {
            index,
            labels,
            world: PointWorld(if keep_worlds {
                Repr::Built(Box::new(world))
            } else {
                Repr::Lazy {
                    grid: grid.clone(),
                    index,
                }
            }),
        });
    }

    // Metrics.
    let keep: Vec<usize> = if x.metrics.is_empty() {
        (0..metric_defs.len()).collect()
    } else {
        let mut keep = vec![];
        for m in &x.metrics {
            match metric_defs.iter().position(|d| d.name == m) {
                Some(i) => keep.push(i),
                None => {
                    let names: Vec<&str> = metric_defs.iter().map(|d| d.name).collect();
                    return Err(field_err(
                        "metrics",
                        format!(
                            "unknown metric `{m}`; the {} model reports: {}",
                            model.world.kind(),
                            names.join(", ")
                        ),
                    ));
                }
            }
        }
        keep.sort_unstable();
        keep.dedup();
        keep
    };

    // Charts refer to columns, labels and kept metrics.
    let mut chart_names: Vec<&str> = vec![];
    for c in &x.charts {
        // Locate a chart's fields from its `name: "…"` (the nth chart of that name).
        let nth = chart_names.iter().filter(|n| **n == c.name).count();
        let field_err = |f: &str, m: String| {
            InputError::at(
                path,
                locate_field_after_quoted(text, "charts", &c.name, nth, f),
                f,
                m,
            )
        };
        check_file_name("chart name", &c.name).map_err(|m| field_err("name", m))?;
        if nth > 0 {
            return Err(field_err(
                "name",
                format!(
                    "two charts are named `{}`; one would overwrite the other",
                    c.name
                ),
            ));
        }
        chart_names.push(&c.name);
        let known = |n: &str| columns.iter().any(|k| k == n);
        if !known(&c.x) {
            return Err(field_err(
                "x",
                format!(
                    "chart `{}`: x `{}` is not an axis; axes: {}",
                    c.name,
                    c.x,
                    columns.join(", ")
                ),
            ));
        }
        if let Some(s) = &c.series {
            if !known(s) {
                return Err(field_err(
                    "series",
                    format!("chart `{}`: series `{s}` is not an axis", c.name),
                ));
            }
        }
        for (k, v) in &c.filter {
            let Some(col) = cols.iter().find(|col| &col.name == k) else {
                return Err(field_err(
                    "filter",
                    format!("chart `{}`: filter `{k}` is not an axis", c.name),
                ));
            };
            if !col.labels.contains(v) {
                return Err(field_err(
                    "filter",
                    format!("chart `{}`: `{k}` never takes the value `{v}`", c.name),
                ));
            }
        }
        for y in &c.y {
            if !keep.iter().any(|&i| metric_defs[i].name == y) {
                return Err(field_err(
                    "y",
                    format!("chart `{}`: `{y}` is not a kept metric", c.name),
                ));
            }
        }
        if c.y.is_empty() {
            return Err(field_err("y", format!("chart `{}`: no metric", c.name)));
        }
    }

    if let Some(v) = &x.verdict {
        let err = |f: &str, m: String| {
            InputError::at(path, locate_quoted_after(text, "verdict", f), f, m)
        };
        if !columns.contains(&v.axis) {
            return Err(err(
                "axis",
                format!(
                    "verdict: `{}` is not an axis; axes: {}",
                    v.axis,
                    columns.join(", ")
                ),
            ));
        }
        let kept = |n: &str| keep.iter().any(|&i| metric_defs[i].name == n);
        if !kept(&v.metric) {
            return Err(err(
                "metric",
                format!("verdict: `{}` is not a kept metric", v.metric),
            ));
        }
        if let Some(c) = &v.cost {
            if !kept(c) {
                return Err(err("cost", format!("verdict: `{c}` is not a kept metric")));
            }
        }
        if !v.target.is_finite() {
            return Err(err("target", "verdict: the target must be a number".into()));
        }
        for (k, val) in &v.filter {
            match cols.iter().find(|col| &col.name == k) {
                Some(col) if col.labels.contains(val) => {}
                Some(_) => {
                    return Err(err(
                        "filter",
                        format!("verdict: `{k}` never takes the value `{val}`"),
                    ))
                }
                None => {
                    return Err(err(
                        "filter",
                        format!("verdict: filter `{k}` is not an axis"),
                    ))
                }
            }
        }
    }

    let fingerprint = {
        let echo = serde_json::json!({
            "experiment": &x,
            "model": &model,
            "vtsim": env!("CARGO_PKG_VERSION"),
        });
        blake3::hash(echo.to_string().as_bytes())
            .to_hex()
            .to_string()
    };

    Ok(Plan {
        experiment: x,
        experiment_path: path.to_path_buf(),
        model_path,
        model,
        columns,
        points,
        metric_defs,
        keep,
        fingerprint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: &str = r#"Experiment(
    name: "x",
    model: "builtin:hold-fixture",
    seed: 7,
    replicates: 2,
    set: { "events": 200 },
    axes: [
        Axis(param: "pending", values: [5, 50]),
        Zip([
            Axis(param: "mean_increment", values: ["1ms", "2ms", "3ms"]),
            Axis(param: "late_after", values: ["1s", "2s", "3s"]),
        ]),
    ],
)"#;

    #[test]
    fn rebuilt_points_run_like_kept_ones() {
        let p = Path::new("x.ron");
        let kept = plan_with_budget(p, X, u64::MAX).unwrap();
        let lazy = plan_with_budget(p, X, 0).unwrap();
        assert_eq!(kept.points.len(), 6);
        assert!(kept.points.iter().all(|p| p.world.is_kept()));
        assert!(lazy.points.iter().all(|p| !p.world.is_kept()));
        for (a, b) in kept.points.iter().zip(&lazy.points) {
            assert_eq!(a.labels, b.labels);
            let (ra, rb) = (
                a.world.run(3, RunOptions::default()),
                b.world.run(3, RunOptions::default()),
            );
            assert_eq!(ra.digest, rb.digest);
            assert_eq!(ra.metrics, rb.metrics);
        }
        // The grid order: first dimension slowest, zipped axes together.
        assert_eq!(lazy.points[4].labels, ["50", "2ms", "2s"]);
        let json = serde_json::to_value(&*lazy.points[4].world.spec()).unwrap();
        assert_eq!(json["Hold"]["pending"], 50);
        assert_eq!(json["Hold"]["events"], 200);
        assert_eq!(json["Hold"]["late_after"], "2s");
    }

    #[test]
    fn ranges_count_before_they_build() {
        let axis = |r: &str| -> Axis {
            ron::from_str(&format!("(param: \"p\", range: Some({r}))")).unwrap()
        };
        let n = |r: &str| expand_range(&axis(r)).map(|v| v.len());
        assert_eq!(n("(from: 1, to: 10, step: 3)"), Ok(4));
        assert_eq!(n("(from: \"1s\", to: \"2s\", step: \"250ms\")"), Ok(5));
        assert_eq!(n("(from: 0.0, to: 1.0, step: 0.25)"), Ok(5));
        assert_eq!(
            n("(from: 9223372036854775800, to: 9223372036854775807, step: 3)"),
            Ok(3)
        );
        for (r, want) in [
            ("(from: 1.0, to: 2.0, step: 1e-300)", "1.0000e300 values"),
            (
                "(from: 0, to: 9223372036854775807, step: 1)",
                "9.2234e18 values",
            ),
            (
                "(from: \"0s\", to: \"1h\", step: \"1ns\")",
                "3.6000e12 values",
            ),
        ] {
            let e = n(r).unwrap_err();
            assert!(e.contains(want) && e.contains("at most 100000"), "{r}: {e}");
        }
    }

    #[test]
    fn text_checks() {
        assert!(check_text("label", "30s", 10).is_ok());
        assert!(check_text("label", "a,b \"c\" <d>", 20).is_ok());
        for (s, want) in [
            ("", "an empty label"),
            ("a\nb", "U+000A at character 2"),
            ("\u{0}", "U+0000"),
            ("x\u{7f}", "U+007F"),
            ("a\u{2028}", "U+2028"),
            ("0123456789a", "11 characters; at most 10"),
        ] {
            let e = check_text("label", s, 10).unwrap_err();
            assert!(e.contains(want), "{s:?}: {e}");
        }
        assert!(overlaps("a.b", "a"));
        assert!(overlaps("a", "a.b"));
        assert!(overlaps("a", "a"));
        assert!(!overlaps("ab", "a"));
        assert!(!overlaps("a-x", "a"));
    }
}
