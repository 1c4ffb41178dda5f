//! One axis of a sweep: its values (listed, or a range counted before it is built), their
//! labels, its column name, and where it is written in the file (for errors).

use super::overrides::check_param_path;
use super::text::check_text;
use super::{MAX_AXIS_VALUES, MAX_TEXT_CHARS, RESERVED_COLUMNS};
use crate::experiment::error::{locate_nth_quoted_after, InputError};
use crate::experiment::files::Axis;
use crate::io::label::duration_label;
use crate::sim::SimDuration;
use serde_json::Value;
use std::path::Path;

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
fn number_of(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn too_many(n: f64) -> String {
    format!(
        "the range has {n:.4e} values; at most {MAX_AXIS_VALUES} (a larger step, or fewer values)"
    )
}

pub(super) fn expand_range(axis: &Axis) -> Result<Vec<Value>, String> {
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
pub(super) struct Column {
    /// This axis is the `nth` (0-based) in the file on its parameter (for locating it).
    pub(super) nth: usize,
    pub(super) param: String,
    pub(super) name: String,
    pub(super) values: Vec<Value>,
    pub(super) labels: Vec<String>,
}

/// Where an axis is written: the `nth` `param: "…"` of its parameter inside `axes`.
pub(super) fn axis_at(text: &str, param: &str, nth: usize) -> Option<(usize, usize)> {
    locate_nth_quoted_after(text, "axes", param, nth)
}

pub(super) fn axis_column(
    path: &Path,
    text: &str,
    axis: &Axis,
    nth: usize,
) -> Result<Column, InputError> {
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
