//! From an experiment file to a plan: the model with its overrides, the sweep points (the full
//! grid of the dimensions, zipped axes moving together), the metrics kept, and the jobs.
//! Everything is checked here, before anything is written.

use super::error::InputError;
use super::files::{
    parse_experiment, parse_model, read_text, resolve_model, Axis, Dimension, ExperimentFile,
    ModelFile,
};
use crate::model::{MetricDef, WorldSpec};
use crate::sim::SimDuration;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One sweep point: a label per axis column and the world to simulate.
#[derive(Clone, Debug)]
pub struct Point {
    /// Position in the grid (row of `points.csv`).
    pub index: usize,
    /// One label per axis column (`"30s"`, `"uniform"`, `"10"`).
    pub labels: Vec<String>,
    /// The model with this point's parameters.
    pub world: WorldSpec,
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
    /// Total jobs = points × replicates; job `j` is point `j / R`, replicate `j % R`.
    pub fn jobs(&self) -> u64 {
        self.points.len() as u64 * self.experiment.replicates
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

fn number_of(v: &Value) -> Option<f64> {
    v.as_f64()
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
            let mut out = vec![];
            let mut x = a;
            while x <= b {
                out.push(Value::String(duration_label(x)));
                x += s;
                if out.len() > 100_000 {
                    return Err("range has more than 100000 values".into());
                }
            }
            Ok(out)
        }
        (None, None, None) => {
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
            let ints = r.from.is_i64() && r.step.is_i64() && r.to.is_i64();
            let n = ((b - a) / s + 1e-9).floor() as u64 + 1;
            if n > 100_000 {
                return Err("range has more than 100000 values".into());
            }
            Ok((0..n)
                .map(|i| {
                    if ints {
                        Value::from(r.from.as_i64().unwrap() + i as i64 * r.step.as_i64().unwrap())
                    } else {
                        Value::from(a + i as f64 * s)
                    }
                })
                .collect())
        }
        _ => Err("range from/to/step must all be durations or all numbers".into()),
    }
}

struct Column {
    param: String,
    name: String,
    values: Vec<Value>,
    labels: Vec<String>,
}

fn axis_column(path: &Path, text: &str, axis: &Axis) -> Result<Column, InputError> {
    let err = |msg: String| InputError::field(path, text, &axis.param, msg);
    let values = match (&axis.range, axis.values.is_empty()) {
        (Some(_), true) => expand_range(axis).map_err(err)?,
        (None, false) => axis.values.clone(),
        (Some(_), false) => return Err(err("give either `values` or `range`, not both".into())),
        (None, true) => return Err(err("an axis needs `values` or a `range`".into())),
    };
    let labels = if axis.labels.is_empty() {
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
    let name = axis.name.clone().unwrap_or_else(|| {
        axis.param
            .rsplit('.')
            .next()
            .unwrap_or(&axis.param)
            .to_string()
    });
    Ok(Column {
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

/// As [`load_plan`], from the experiment's text.
pub fn plan_from_text(path: &Path, text: &str) -> Result<Plan, InputError> {
    let x = parse_experiment(path, text)?;
    let field_err = |f: &str, m: String| InputError::field(path, text, f, m);
    if x.name.is_empty()
        || !x
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(field_err(
            "name",
            "a non-empty name of letters, digits, '-' and '_' (it names the output folder)".into(),
        ));
    }
    if x.replicates == 0 {
        return Err(field_err("replicates", "at least 1 replicate".into()));
    }
    let (model_path, model_text) = resolve_model(path, text, &x.model)?;
    let model = parse_model(&model_path, &model_text)?;

    // Base parameters with `set` applied.
    let mut base = model.world.params_json();
    for (k, v) in &x.set {
        apply_override(&mut base, k, v.clone()).map_err(|m| field_err(k, m))?;
    }

    // Dimensions -> columns, grouped.
    let mut groups: Vec<Vec<Column>> = vec![];
    for d in &x.axes {
        match d {
            Dimension::Axis(a) => groups.push(vec![axis_column(path, text, a)?]),
            Dimension::Zip(axes) => {
                if axes.is_empty() {
                    return Err(field_err("axes", "an empty Zip".into()));
                }
                let cols = axes
                    .iter()
                    .map(|a| axis_column(path, text, a))
                    .collect::<Result<Vec<_>, _>>()?;
                let n = cols[0].values.len();
                if let Some(c) = cols.iter().find(|c| c.values.len() != n) {
                    return Err(field_err(
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
    let columns: Vec<String> = groups
        .iter()
        .flat_map(|g| g.iter().map(|c| c.name.clone()))
        .collect();
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].contains(c) {
            return Err(field_err(
                "axes",
                format!("two axes are named `{c}`; give one a `name`"),
            ));
        }
    }

    // Full grid, first dimension slowest.
    let sizes: Vec<usize> = groups.iter().map(|g| g[0].values.len()).collect();
    let total: usize = sizes.iter().product();
    if total > 1_000_000 {
        return Err(field_err(
            "axes",
            format!("{total} points is more than 1000000"),
        ));
    }
    let mut points = Vec::with_capacity(total);
    for index in 0..total {
        let mut rem = index;
        let mut pick = vec![0usize; sizes.len()];
        for d in (0..sizes.len()).rev() {
            pick[d] = rem % sizes[d];
            rem /= sizes[d];
        }
        let mut params = base.clone();
        let mut labels = vec![];
        for (g, &i) in groups.iter().zip(&pick) {
            for c in g {
                apply_override(&mut params, &c.param, c.values[i].clone())
                    .map_err(|m| field_err(&c.param, m))?;
                labels.push(c.labels[i].clone());
            }
        }
        let world = model.world.with_params_json(params).map_err(|m| {
            let axes: Vec<String> = columns
                .iter()
                .zip(&labels)
                .map(|(c, l)| format!("{c}={l}"))
                .collect();
            InputError::field(
                path,
                text,
                "axes",
                format!("at point {index} ({}): {m}", axes.join(", ")),
            )
        })?;
        if let Err((f, m)) = world.validate() {
            let axes: Vec<String> = columns
                .iter()
                .zip(&labels)
                .map(|(c, l)| format!("{c}={l}"))
                .collect();
            return Err(field_err(
                &f,
                format!("{m} (at point {index}: {})", axes.join(", ")),
            ));
        }
        points.push(Point {
            index,
            labels,
            world,
        });
    }

    // Metrics.
    let metric_defs = model.world.metric_defs();
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
    for c in &x.charts {
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
            let Some(ci) = columns.iter().position(|n| n == k) else {
                return Err(field_err(
                    "filter",
                    format!("chart `{}`: filter `{k}` is not an axis", c.name),
                ));
            };
            if !points.iter().any(|p| &p.labels[ci] == v) {
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
        if c.name.is_empty() || c.name.contains(['/', '\\', '.']) {
            return Err(field_err(
                "name",
                format!("chart name `{}` is not a file stem", c.name),
            ));
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
