//! The plan loader: an experiment file read, its model resolved, its axes, charts and verdict
//! checked against each other and the grid built (every point validated once).

use super::axis::{axis_at, axis_column, Column};
use super::overrides::apply_override;
use super::text::check_file_name;
use super::{
    Grid, Plan, Point, PointWorld, Repr, MAX_JOBS, MAX_POINTS, MAX_VALIDATION_BYTES,
    POINT_MEMORY_BUDGET,
};
use crate::experiment::error::{locate_field_after_quoted, locate_quoted_after, InputError};
use crate::experiment::files::{
    parse_experiment, parse_model, read_text, resolve_model, Axis, Dimension,
};
use crate::model::WorldSpec;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

/// Read an experiment file and everything it names, and check it whole.
pub fn load_plan(experiment_path: &Path) -> Result<Plan, InputError> {
    let text = read_text(experiment_path)?;
    plan_from_text(experiment_path, &text)
}

/// `a` is `b`, or one is inside the other (`vtgate.phase` and `vtgate.phase.window`).
pub(super) fn overlaps(a: &str, b: &str) -> bool {
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
pub(super) fn plan_with_budget(path: &Path, text: &str, budget: u64) -> Result<Plan, InputError> {
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
