//! `data-dictionary.csv`: every column of `runs.csv` and `points.csv` with its type, unit and
//! meaning, and the unit a metric's name states.

use super::points::numeric_axes;
use crate::experiment::plan::Plan;
use crate::io::write;
use crate::model::MetricKind;
use anyhow::Result;
use std::path::Path;

/// The unit a metric's name states by its suffix.
pub fn unit_of(d: &crate::model::MetricDef) -> &'static str {
    let n = d.name;
    if d.kind == MetricKind::Indicator {
        return "0/1";
    }
    for (suffix, unit) in [
        ("_per_s", "1/s"),
        ("_per_h", "1/h"),
        ("_rps", "1/s"),
        ("_tps", "1/s"),
        ("_ms", "ms"),
        ("_us", "us"),
        ("_s", "s"),
    ] {
        if n.ends_with(suffix) {
            return unit;
        }
    }
    if d.range().1 == 1.0 {
        "fraction"
    } else {
        "count"
    }
}

/// `data-dictionary.csv`: every column of `runs.csv` and `points.csv` with its type, unit and
/// meaning.
pub(super) fn write_dictionary(plan: &Plan, dir: &Path) -> Result<()> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(vec![]);
    w.write_record(["file", "column", "type", "unit", "meaning"])?;
    let mut row = |f: &str, c: &str, t: &str, u: &str, m: &str| w.write_record([f, c, t, u, m]);
    let numeric = numeric_axes(plan);
    for f in ["runs.csv", "points.csv"] {
        if f == "runs.csv" {
            row(
                f,
                "job",
                "integer",
                "",
                "job index: point × replicates + replicate",
            )?;
        }
        row(f, "point", "integer", "", "sweep point (row of points.csv)")?;
        if f == "runs.csv" {
            row(f, "replicate", "integer", "", "replicate within the point")?;
            row(f, "seed", "string", "", "the run's seed, 0x + 16 hex digits (vtsim replay MODEL --seed SEED, with the point's --set)")?;
        }
        for (i, (c, n)) in plan.columns.iter().zip(&numeric).enumerate() {
            let labels = || plan.points.iter().map(|p| p.labels[i].as_str());
            let t = if labels().all(|l| l.parse::<i64>().is_ok()) {
                "integer"
            } else if labels().all(|l| l.parse::<f64>().is_ok()) {
                "float"
            } else {
                "string"
            };
            row(f, c, t, "", "axis label, as the experiment writes it")?;
            if let (Some(n), "points.csv") = (n, f) {
                row(f, n, "float", "s", &format!("axis `{c}` in seconds"))?;
            }
        }
        if f == "points.csv" {
            row(f, "n", "integer", "", "replicates at the point")?;
        }
        for d in plan.kept_defs() {
            let u = unit_of(d);
            if f == "runs.csv" {
                let t = if d.kind == MetricKind::Indicator {
                    "integer"
                } else {
                    "float"
                };
                row(f, d.name, t, u, d.help)?;
                continue;
            }
            let ci = if d.kind == MetricKind::Indicator {
                "95 % Wilson interval of the proportion"
            } else {
                "95 % Student t interval of the mean, clamped to the metric's range"
            };
            for (s, what) in [
                (
                    "mean",
                    "mean over replicates (a proportion for a 0/1 metric)",
                ),
                ("sd", "sample standard deviation"),
                ("ci_lo", &format!("lower end of the {ci}")[..]),
                ("ci_hi", &format!("upper end of the {ci}")[..]),
                ("p50", "median (nearest rank)"),
                ("p90", "90th percentile (nearest rank)"),
                ("p99", "99th percentile (nearest rank)"),
                ("max", "largest value"),
            ] {
                let uu = if d.kind == MetricKind::Indicator && s != "sd" {
                    "probability"
                } else {
                    u
                };
                row(
                    f,
                    &format!("{}_{s}", d.name),
                    "float",
                    uu,
                    &format!("{}: {what}", d.help),
                )?;
            }
            if d.kind == MetricKind::Indicator {
                row(
                    f,
                    &format!("{}_wilson_lo", d.name),
                    "float",
                    "probability",
                    &format!(
                        "{}: lower end of the 95 % Wilson interval (= _ci_lo)",
                        d.help
                    ),
                )?;
                row(
                    f,
                    &format!("{}_wilson_hi", d.name),
                    "float",
                    "probability",
                    &format!(
                        "{}: upper end of the 95 % Wilson interval (= _ci_hi)",
                        d.help
                    ),
                )?;
            }
        }
        if f == "runs.csv" {
            row(f, "events", "integer", "count", "events the run handled")?;
            row(
                f,
                "digest",
                "string",
                "",
                "BLAKE3 digest of the run's trace, 64 hex digits",
            )?;
        }
    }
    write(&dir.join("data-dictionary.csv"), &w.into_inner()?)?;
    Ok(())
}
