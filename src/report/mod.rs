//! The outputs of a sweep under `notebooks-out/<experiment>/`: `runs.csv` (one row per
//! replicate, written by the runner), and from it `points.csv` (one row per point: mean, sd,
//! 95 % CI, p50/p90/p99/max; Wilson interval for 0/1 metrics), `summary.json` (inputs echoed,
//! vtsim version, seed, digests), the charts (PNG + SVG) and `index.html`.
//!
//! Everything here is computed from the rows in job order, accumulated ([`Outputs`]) as the
//! runner writes them (a fresh run) or verifies them (a resumed run's kept rows, a merge's
//! shard rows), never by reading a finished `runs.csv` back; all of them share one code path
//! and give byte-identical files.
//! Nothing here depends on the clock, the thread count or the machine.//!
//! Here: [`finalize`] and the run and merge that end with it ([`run_plan`], [`merge`]), and
//! the `run --json` document; the files are written by `points.rs` (`points.csv`),
//! `summary.rs` (`summary.json`), `dictionary.rs` (`data-dictionary.csv`), `charts.rs` (the
//! charts), `verdict.rs` (the verdicts) and `index.rs` (`index.html`).

mod charts;
mod dictionary;
mod index;
mod points;
mod summary;
mod verdict;

pub use crate::experiment::accumulate::{Outputs, PointStats};
pub use charts::chart_footer;
pub use dictionary::unit_of;
pub use points::{numeric_axes, points_header};
pub use verdict::{verdicts, SeriesVerdict};

use crate::experiment::accumulate::Accumulated;
use crate::experiment::hooks::abort_in_outputs_hook;
use crate::experiment::plan::Plan;
use crate::experiment::runner::{self, RunConfig, RunSummary};
use anyhow::{anyhow, Result};
use charts::draw_charts;
use dictionary::write_dictionary;
use index::write_index;
use points::write_points_csv;
use std::path::Path;
use summary::write_summary;

/// Run a plan (or one shard of it) and, unless sharded, write every output: the runner's
/// [`run_plan_with`](runner::run_plan_with), finished by [`finalize`].
pub fn run_plan(plan: &Plan, cfg: &RunConfig) -> Result<RunSummary> {
    runner::run_plan_with(plan, cfg, finalize)
}

/// `vtsim merge`: the runner's [`merge_with`](runner::merge_with), finished by [`finalize`].
pub fn merge(plan: &Plan, out: &Path) -> Result<()> {
    runner::merge_with(plan, out, finalize)
}

/// Write everything but `runs.csv` into `dir` from `acc`, which must hold every job's row.
///
/// `dir` is a private staging folder (the runner swaps it in whole), so the files are written
/// in place, each flushed to disk.
pub fn finalize(plan: &Plan, dir: &Path, acc: Outputs) -> Result<()> {
    let Accumulated {
        points,
        runs_digest,
        events_total,
    } = acc.finish()?;

    write_points_csv(plan, &points, dir)?;
    write_summary(plan, &points, &runs_digest, events_total, dir)?;
    write_dictionary(plan, dir)?;
    abort_in_outputs_hook("with points.csv and summary.json staged");
    let charts = draw_charts(plan, &points, &runs_digest, dir)?;
    write_index(plan, &points, &charts, &runs_digest, dir)?;
    Ok(())
}

/// The version of the `run --json` document (schema `vtsim.run`, `docs/outputs.md`).
pub const RUN_JSON_VERSION: u32 = 1;

/// The `run --json` document: what ran, where the files are, and (for a whole run) the
/// `summary.json` just written, read back.
pub fn run_json(
    plan: &Plan,
    dir: &Path,
    whole: bool,
    runs: u64,
    resumed: u64,
    events: u64,
) -> Result<serde_json::Value> {
    let summary = if whole {
        let p = dir.join("summary.json");
        let text = std::fs::read_to_string(&p).map_err(|e| {
            anyhow!(
                "reading {}: {}",
                p.display(),
                crate::experiment::error::io_words(&e)
            )
        })?;
        serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", p.display()))?
    } else {
        serde_json::Value::Null
    };
    let files: Vec<String> = if whole {
        let mut f = vec!["runs.csv", "points.csv", "summary.json", "index.html"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
        for c in &plan.experiment.charts {
            f.push(format!("{}.png", c.name));
            f.push(format!("{}.svg", c.name));
        }
        f
    } else {
        vec![]
    };
    Ok(serde_json::json!({
        "schema": "vtsim.run",
        "version": RUN_JSON_VERSION,
        "vtsim": env!("CARGO_PKG_VERSION"),
        "experiment": plan.experiment.name,
        "model": plan.model.name,
        "points": plan.points.len(),
        "replicates": plan.replicates(),
        "jobs": plan.jobs(),
        "runs_simulated": runs,
        "runs_resumed": resumed,
        "events_simulated": events,
        "out": dir.display().to_string(),
        "files": files,
        "summary": summary,
    }))
}
