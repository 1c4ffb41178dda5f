//! `summary.json`: the inputs echoed, the vtsim version, the seed, the digests and each
//! point's means with their intervals.

use super::points::{label_seconds, numeric_axes};
use crate::experiment::accumulate::PointStats;
use crate::experiment::plan::Plan;
use crate::io::write;
use anyhow::Result;
use std::path::Path;

pub(super) fn write_summary(
    plan: &Plan,
    points: &[PointStats],
    runs_digest: &str,
    events_total: u64,
    dir: &Path,
) -> Result<()> {
    let x = &plan.experiment;
    let metrics: Vec<_> = plan
        .kept_defs()
        .iter()
        .map(|d| serde_json::json!({"name": d.name, "kind": d.kind, "help": d.help}))
        .collect();
    let pts: Vec<_> = points
        .iter()
        .map(|p| {
            let mut m = serde_json::Map::new();
            for (i, (d, s)) in plan.kept_defs().iter().zip(&p.summaries).enumerate() {
                let (lo, hi) = p.interval(i, d);
                let how = if p.wilson[i].is_some() {
                    "wilson"
                } else {
                    "student_t"
                };
                m.insert(
                    d.name.to_string(),
                    serde_json::json!({"mean": s.mean, "ci_lo": lo, "ci_hi": hi, "interval": how}),
                );
            }
            let numeric: serde_json::Map<_, _> = numeric_axes(plan)
                .iter()
                .zip(&p.labels)
                .filter_map(|(n, l)| Some((n.clone()?, serde_json::json!(label_seconds(l)))))
                .collect();
            serde_json::json!({"point": p.index, "axes": plan.columns.iter().zip(&p.labels)
                .map(|(c, l)| (c.clone(), serde_json::Value::from(l.clone())))
                .collect::<serde_json::Map<_, _>>(), "axes_numeric": numeric, "metrics": m})
        })
        .collect();
    let v = serde_json::json!({
        "vtsim_version": env!("CARGO_PKG_VERSION"),
        "experiment": x,
        "model": {
            "file": x.model,
            "name": plan.model.name,
            "description": plan.model.description,
            "world": plan.model.world,
        },
        "seed": crate::experiment::layout::seed_text(x.seed),
        "seed_decimal": x.seed.to_string(),
        "replicates": x.replicates,
        "points": plan.points.len(),
        "jobs": plan.jobs(),
        "events_total": events_total,
        "metrics": metrics,
        "fingerprint": plan.fingerprint,
        "digests": {
            "runs": runs_digest,
            "about": "runs = BLAKE3 of every run's trace digest followed by a newline, in job order",
        },
        "point_means": pts,
    });
    let mut s = serde_json::to_string_pretty(&v)?;
    s.push('\n');
    write(&dir.join("summary.json"), s.as_bytes())?;
    Ok(())
}
