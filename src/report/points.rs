//! `points.csv`: one row per point (mean, sd, 95 % interval, p50/p90/p99/max; the Wilson
//! interval for 0/1 metrics), with a numeric column beside each duration axis.

use crate::experiment::accumulate::PointStats;
use crate::experiment::plan::Plan;
use crate::io::write;
use crate::model::MetricKind;
use anyhow::Result;
use std::path::Path;

/// Whether an axis label is a duration with its unit (`30s`, `1m`, `250ms`), not a number.
fn is_duration_label(l: &str) -> bool {
    l.parse::<f64>().is_err() && crate::sim::SimDuration::parse(l).is_ok()
}

/// For each axis column, the name of its numeric column (`gate` → `gate_s`, seconds) when
/// every label of the axis is a duration; `None` otherwise (numbers already load as numbers;
/// other labels have no number). A name another column has is not used.
pub fn numeric_axes(plan: &Plan) -> Vec<Option<String>> {
    let taken = |n: &str| {
        plan.columns.iter().any(|c| c == n)
            || plan.kept_defs().iter().any(|d| d.name == n)
            || crate::model::metric::RESERVED_COLUMNS.contains(&n)
    };
    (0..plan.columns.len())
        .map(|i| {
            let all = !plan.points.is_empty()
                && plan.points.iter().all(|p| is_duration_label(&p.labels[i]));
            let name = format!("{}_s", plan.columns[i]);
            (all && !taken(&name)).then_some(name)
        })
        .collect()
}

/// The seconds of a duration label.
pub(super) fn label_seconds(l: &str) -> f64 {
    crate::sim::SimDuration::parse(l)
        .map(|d| d.as_secs_f64())
        .unwrap_or(f64::NAN)
}
/// Column names of `points.csv`.
pub fn points_header(plan: &Plan) -> Vec<String> {
    let mut h = vec!["point".to_string()];
    for (c, n) in plan.columns.iter().zip(numeric_axes(plan)) {
        h.push(c.clone());
        h.extend(n);
    }
    h.push("n".into());
    for d in plan.kept_defs() {
        for s in ["mean", "sd", "ci_lo", "ci_hi", "p50", "p90", "p99", "max"] {
            h.push(format!("{}_{s}", d.name));
        }
        if d.kind == MetricKind::Indicator {
            h.push(format!("{}_wilson_lo", d.name));
            h.push(format!("{}_wilson_hi", d.name));
        }
    }
    h
}

pub(super) fn write_points_csv(plan: &Plan, points: &[PointStats], dir: &Path) -> Result<()> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(vec![]);
    w.write_record(points_header(plan))?;
    let numeric = numeric_axes(plan);
    let defs = plan.kept_defs();
    for p in points {
        let mut row = vec![p.index.to_string()];
        for (l, n) in p.labels.iter().zip(&numeric) {
            row.push(l.clone());
            if n.is_some() {
                row.push(label_seconds(l).to_string());
            }
        }
        row.push(plan.replicates().to_string());
        for (i, (s, wl)) in p.summaries.iter().zip(&p.wilson).enumerate() {
            let (lo, hi) = p.interval(i, defs[i]);
            for v in [s.mean, s.sd, lo, hi, s.p50, s.p90, s.p99, s.max] {
                row.push(v.to_string());
            }
            if let Some((lo, hi)) = wl {
                row.push(lo.to_string());
                row.push(hi.to_string());
            }
        }
        w.write_record(&row)?;
    }
    write(&dir.join("points.csv"), &w.into_inner()?)?;
    Ok(())
}
