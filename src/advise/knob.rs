//! The knob: what kind of parameter a search varies ([`KnobKind`]: a duration, an integer or
//! a real), its values as a user writes them and as the model takes them ([`KnobValue`]), and
//! the candidates of a `--range` and `--step`.

use super::MAX_CANDIDATES;
use crate::experiment::plan::duration_label;
use crate::model::WorldSpec;
use crate::sim::SimDuration;
use serde_json::Value;

/// What the knob's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnobKind {
    /// A duration (written `"30s"` in model files); `x` is in seconds.
    Duration,
    /// An integer parameter.
    Integer,
    /// A real-valued parameter.
    Real,
}

/// One value of the knob.
#[derive(Clone, Debug, PartialEq)]
pub struct KnobValue {
    /// As a user writes it (`45s`, `12`, `0.5`).
    pub label: String,
    /// As a number (seconds for a duration).
    pub x: f64,
    /// As the model file's parameter tree takes it.
    pub json: Value,
}

impl KnobKind {
    /// The kind of the parameter at `path` of `world` (its current value).
    pub fn of(world: &WorldSpec, path: &str) -> Result<(KnobKind, Value), String> {
        let mut node = world.params_json();
        for seg in path.split('.') {
            node = match node {
                Value::Object(mut m) => m.remove(seg).ok_or_else(|| {
                    format!(
                        "--knob {path}: the {} model has no parameter `{path}`",
                        world.kind()
                    )
                })?,
                _ => return Err(format!("--knob {path}: `{seg}` is inside a value")),
            };
        }
        let kind = match &node {
            Value::String(s) if SimDuration::parse(s).is_ok() => KnobKind::Duration,
            Value::Number(n) if n.is_u64() || n.is_i64() => KnobKind::Integer,
            Value::Number(_) => KnobKind::Real,
            _ => {
                return Err(format!(
                    "--knob {path}: the parameter is {node}, not a duration or a number"
                ))
            }
        };
        Ok((kind, node))
    }

    /// The unit of `x` (`s` for a duration, empty otherwise).
    pub fn unit(self) -> &'static str {
        match self {
            KnobKind::Duration => "s",
            _ => "",
        }
    }

    /// Parse one value of this kind (`what` names the flag).
    pub fn parse(self, what: &str, s: &str) -> Result<KnobValue, String> {
        match self {
            KnobKind::Duration => {
                let d = SimDuration::parse(s).map_err(|m| format!("{what}: {m}"))?;
                Ok(KnobValue::duration(d))
            }
            KnobKind::Integer => {
                let v: i64 = s
                    .trim()
                    .parse()
                    .map_err(|_| format!("{what}: `{s}` is not an integer"))?;
                Ok(KnobValue {
                    label: v.to_string(),
                    x: v as f64,
                    json: v.into(),
                })
            }
            KnobKind::Real => {
                let v: f64 = s
                    .trim()
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| format!("{what}: `{s}` is not a number"))?;
                Ok(KnobValue::real(v))
            }
        }
    }

    /// The candidates `a, a+step, …` up to `b`; refused beyond [`MAX_CANDIDATES`].
    pub fn candidates(self, range: &str, step: &str) -> Result<Vec<KnobValue>, String> {
        let (a, b) = range
            .split_once("..")
            .ok_or_else(|| format!("--range `{range}`: expected A..B, e.g. 10s..90s"))?;
        let (a, b) = (self.parse("--range", a)?, self.parse("--range", b)?);
        let s = self.parse("--step", step)?;
        if a.x > b.x {
            return Err(format!("--range {range}: A is above B"));
        }
        if s.x <= 0.0 {
            return Err(format!("--step {step}: must be > 0"));
        }
        let count = ((b.x - a.x) / s.x + 1e-9).floor() + 1.0;
        if count > MAX_CANDIDATES as f64 {
            return Err(format!(
                "--range {range} with --step {step} is {count:.0} candidates; at most \
                 {MAX_CANDIDATES}: use a --step of at least {}",
                self.label_of((b.x - a.x) / (MAX_CANDIDATES - 1) as f64, true)
            ));
        }
        let n = count as u64;
        Ok((0..n)
            .map(|i| match self {
                KnobKind::Duration => KnobValue::duration(SimDuration::from_nanos(
                    a_ns(&a) + i * SimDuration::from_secs_f64(s.x).as_nanos(),
                )),
                KnobKind::Integer => {
                    let v = a.x as i64 + i as i64 * s.x as i64;
                    KnobValue {
                        label: v.to_string(),
                        x: v as f64,
                        json: v.into(),
                    }
                }
                KnobKind::Real => KnobValue::real(a.x + i as f64 * s.x),
            })
            .collect())
    }

    /// `x` as a label of this kind (a duration in whole milliseconds, rounded `up` or to the
    /// nearest; an integer rounded up).
    pub(super) fn label_of(self, x: f64, up: bool) -> String {
        match self {
            KnobKind::Duration => {
                let ms = if up {
                    (x * 1e3).ceil()
                } else {
                    (x * 1e3).round()
                };
                duration_label(SimDuration::from_millis(ms as u64))
            }
            KnobKind::Integer => format!("{}", x.ceil() as i64),
            KnobKind::Real => format!("{x:.3e}"),
        }
    }
}

/// The nanoseconds of a duration value.
fn a_ns(a: &KnobValue) -> u64 {
    SimDuration::from_secs_f64(a.x).as_nanos()
}

impl KnobValue {
    /// A duration value.
    pub fn duration(d: SimDuration) -> Self {
        let label = duration_label(d);
        KnobValue {
            x: d.as_secs_f64(),
            json: label.clone().into(),
            label,
        }
    }
    /// A real value (rounded to 12 significant digits so `0.1 + 2 × 0.1` reads `0.3`).
    pub fn real(v: f64) -> Self {
        let v: f64 = format!("{v:.12e}").parse().unwrap_or(v);
        KnobValue {
            label: format!("{v}"),
            x: v,
            json: v.into(),
        }
    }
}
