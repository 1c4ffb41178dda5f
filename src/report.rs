//! The outputs of a sweep under `notebooks-out/<experiment>/`: `runs.csv` (one row per
//! replicate, written by the runner), and from it `points.csv` (one row per point: mean, sd,
//! 95 % CI, p50/p90/p99/max; Wilson interval for 0/1 metrics), `summary.json` (inputs echoed,
//! vtsim version, seed, digests), the charts (PNG + SVG) and `index.html`.
//!
//! Everything here is computed from the rows in job order, accumulated ([`Outputs`]) as the
//! runner writes them (a fresh run) or verifies them (a resumed run's kept rows, a merge's
//! shard rows), never by reading a finished `runs.csv` back; all of them share one code path
//! and give byte-identical files.
//! Nothing here depends on the clock, the thread count or the machine.

use crate::chart::{self, Curve, CurvePoint};
use crate::experiment::files::{Mark, Stat};
use crate::experiment::hooks::abort_in_outputs_hook;
use crate::experiment::plan::Plan;
use crate::io::write;
use crate::model::MetricKind;
use crate::sketch::QuantileSketch;
use crate::stats::{summarize, t_critical, wilson, Summary};
use anyhow::{anyhow, bail, Result};
use std::path::Path;

/// Statistics of one sweep point.
#[derive(Clone, Debug)]
pub struct PointStats {
    /// Grid index.
    pub index: usize,
    /// Axis labels.
    pub labels: Vec<String>,
    /// One summary per kept metric.
    pub summaries: Vec<Summary>,
    /// Wilson interval per kept metric (only for 0/1 metrics).
    pub wilson: Vec<Option<(f64, f64)>>,
}

/// One kept metric's replicate values at the current point, held in memory that does not grow
/// with the replicates: up to [`QuantileSketch`]'s exact limit (1024 by default) the values
/// themselves (so the summary is exactly [`summarize`]'s, bit for bit, as before the sketch),
/// and past it a running sum in job order (the same fold as `summarize`'s mean, so the mean is
/// bit-identical), Welford's running variance (the sd may differ from the two-pass sd in the
/// last bits), the count of ones for the Wilson interval, and the sketch for the quantiles
/// (within the sketch's relative error α = 1e-3 of the exact nearest-rank values; the maximum
/// is exact).
struct MetricAcc {
    sketch: QuantileSketch,
    sum: f64,
    ones: u64,
    /// Welford's running mean and sum of squared deviations.
    w_mean: f64,
    w_m2: f64,
}

impl MetricAcc {
    fn new() -> Self {
        MetricAcc {
            sketch: QuantileSketch::default(),
            // -0.0 is the identity of f64 addition, as `Iterator::sum` starts from it.
            sum: -0.0,
            ones: 0,
            w_mean: 0.0,
            w_m2: 0.0,
        }
    }

    fn add(&mut self, x: f64) {
        self.sketch.add(x);
        self.sum += x;
        self.ones += u64::from(x >= 0.5);
        let n = self.sketch.count() as f64;
        let d = x - self.w_mean;
        self.w_mean += d / n;
        self.w_m2 += d * (x - self.w_mean);
    }

    fn summary(&self) -> Summary {
        if let Some(v) = self.sketch.exact_values() {
            return summarize(v);
        }
        let n = self.sketch.count();
        let mean = self.sum / n as f64;
        let sd = (self.w_m2 / (n - 1) as f64).sqrt();
        let half = t_critical(n - 1) * sd / (n as f64).sqrt();
        Summary {
            n,
            mean,
            sd,
            ci_lo: mean - half,
            ci_hi: mean + half,
            p50: self.sketch.quantile(0.50),
            p90: self.sketch.quantile(0.90),
            p99: self.sketch.quantile(0.99),
            max: self.sketch.max(),
        }
    }

    fn wilson(&self) -> (f64, f64) {
        match self.sketch.exact_values() {
            Some(v) => wilson(
                v.iter().filter(|x| **x >= 0.5).count() as u64,
                v.len() as u64,
            ),
            None => wilson(self.ones, self.sketch.count()),
        }
    }
}

fn close_point(plan: &Plan, index: usize, values: &[MetricAcc]) -> PointStats {
    let defs = plan.kept_defs();
    let summaries: Vec<Summary> = values.iter().map(MetricAcc::summary).collect();
    let wilson = defs
        .iter()
        .zip(values)
        .map(|(d, v)| (d.kind == MetricKind::Indicator).then(|| v.wilson()))
        .collect();
    PointStats {
        index,
        labels: plan.points[index].labels.clone(),
        summaries,
        wilson,
    }
}

impl PointStats {
    /// The 95 % interval of metric `i`'s mean as the outputs state it: Wilson for a 0/1
    /// metric, Student t for a value, clamped to the values the metric can take
    /// ([`MetricDef::range`](crate::model::MetricDef::range)).
    pub fn interval(&self, i: usize, def: &crate::model::MetricDef) -> (f64, f64) {
        if let Some(w) = self.wilson[i] {
            return w;
        }
        let s = &self.summaries[i];
        let (lo, hi) = def.range();
        (s.ci_lo.clamp(lo, hi), s.ci_hi.clamp(lo, hi))
    }
}

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
fn label_seconds(l: &str) -> f64 {
    crate::sim::SimDuration::parse(l)
        .map(|d| d.as_secs_f64())
        .unwrap_or(f64::NAN)
}

/// What the outputs are computed from, accumulated row by row in job order as the rows are
/// written (a fresh run), verified (a resumed run's kept rows, a merge's shard rows) or both,
/// so that `runs.csv` is never read back to compute them. It holds one point's values (at
/// most [`QuantileSketch`]'s exact limit per metric, then the sketch) and one
/// [`PointStats`] per finished point: its memory does not grow with the replicates.
pub struct Outputs<'p> {
    plan: &'p Plan,
    next: u64,
    values: Vec<MetricAcc>,
    points: Vec<PointStats>,
    digest: blake3::Hasher,
    /// The rows' digests, hashed 64 KiB at a time: the same bytes as row by row (so the same
    /// runs digest), without BLAKE3's per-call cost on 65-byte updates.
    digest_buf: Vec<u8>,
    events_total: u64,
}

impl<'p> Outputs<'p> {
    /// Nothing accumulated yet: the next row is job 0's.
    pub fn new(plan: &'p Plan) -> Self {
        Outputs {
            plan,
            next: 0,
            values: (0..plan.keep.len()).map(|_| MetricAcc::new()).collect(),
            points: Vec::with_capacity(plan.points.len()),
            digest: blake3::Hasher::new(),
            digest_buf: Vec::with_capacity(64 * 1024 + 128),
            events_total: 0,
        }
    }

    /// Rows accumulated (the next row is this job's).
    pub fn rows(&self) -> u64 {
        self.next
    }

    /// Add the next job's row: its kept metrics (in header order), events and trace digest.
    /// A NaN counts as the NaN `runs.csv` reads back (`"NaN"`), whatever its sign bit.
    pub fn add(
        &mut self,
        metrics: impl IntoIterator<Item = f64>,
        events: u64,
        digest: &[u8],
    ) -> Result<()> {
        let plan = self.plan;
        let j = self.next;
        if j >= plan.jobs() {
            bail!("more rows than the experiment's {} jobs", plan.jobs());
        }
        for (v, x) in self.values.iter_mut().zip(metrics) {
            v.add(if x.is_nan() { f64::NAN } else { x });
        }
        self.events_total = self
            .events_total
            .checked_add(events)
            .ok_or_else(|| anyhow!("the event counts overflow at job {j}"))?;
        self.digest_buf.extend_from_slice(digest);
        self.digest_buf.push(b'\n');
        if self.digest_buf.len() >= 64 * 1024 {
            self.digest.update(&self.digest_buf);
            self.digest_buf.clear();
        }
        let reps = plan.replicates();
        if j % reps == reps - 1 {
            self.points
                .push(close_point(plan, (j / reps) as usize, &self.values));
            for v in &mut self.values {
                *v = MetricAcc::new();
            }
        }
        self.next = j + 1;
        Ok(())
    }
}

/// Write everything but `runs.csv` into `dir` from `acc`, which must hold every job's row.
///
/// `dir` is a private staging folder (the runner swaps it in whole), so the files are written
/// in place, each flushed to disk.
pub fn finalize(plan: &Plan, dir: &Path, acc: Outputs) -> Result<()> {
    if acc.next != plan.jobs() {
        bail!(
            "{} rows for {} jobs; the run is incomplete",
            acc.next,
            plan.jobs()
        );
    }
    let Outputs {
        points,
        mut digest,
        digest_buf,
        events_total,
        ..
    } = acc;
    digest.update(&digest_buf);
    let runs_digest = digest.finalize().to_hex().to_string();

    write_points_csv(plan, &points, dir)?;
    write_summary(plan, &points, &runs_digest, events_total, dir)?;
    write_dictionary(plan, dir)?;
    abort_in_outputs_hook("with points.csv and summary.json staged");
    let charts = draw_charts(plan, &points, &runs_digest, dir)?;
    write_index(plan, &points, &charts, &runs_digest, dir)?;
    Ok(())
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

fn write_points_csv(plan: &Plan, points: &[PointStats], dir: &Path) -> Result<()> {
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

fn write_summary(
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
fn write_dictionary(plan: &Plan, dir: &Path) -> Result<()> {
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

/// The one-line footer of every chart of a sweep.
pub fn chart_footer(plan: &Plan, runs_digest: &str) -> String {
    format!(
        "vtsim {} · {} · model {} ({}) · {} points × {} runs · runs digest {}",
        env!("CARGO_PKG_VERSION"),
        plan.experiment.name,
        plan.model.name,
        plan.points.first().map(|p| p.world.kind()).unwrap_or(""),
        plan.points.len(),
        plan.replicates(),
        &runs_digest[..runs_digest.len().min(12)]
    )
}

/// One series' verdict: the series' labels, and the passing point (or none).
pub struct SeriesVerdict {
    /// `refresh = 60s, phase = uniform` (empty for a single series).
    pub series: String,
    /// The passing point's index and its axis label.
    pub answer: Option<(usize, String)>,
}

/// The verdict of an experiment that declares one: per combination of the other axes (within
/// the filter), the smallest (largest) axis value whose metric's upper bound is below target.
pub fn verdicts(plan: &Plan, points: &[PointStats]) -> Vec<SeriesVerdict> {
    let Some(v) = &plan.experiment.verdict else {
        return vec![];
    };
    let ai = plan.column(&v.axis).expect("checked");
    let defs = plan.kept_defs();
    let mi = defs
        .iter()
        .position(|d| d.name == v.metric)
        .expect("checked");
    let filters: Vec<(usize, &String)> = v
        .filter
        .iter()
        .map(|(k, val)| (plan.column(k).expect("checked"), val))
        .collect();
    let others: Vec<usize> = (0..plan.columns.len())
        .filter(|&i| i != ai && !filters.iter().any(|(f, _)| *f == i))
        .collect();
    let mut groups: Vec<(Vec<String>, Vec<&PointStats>)> = vec![];
    for p in points
        .iter()
        .filter(|p| filters.iter().all(|(i, val)| &p.labels[*i] == *val))
    {
        let key: Vec<String> = others.iter().map(|&i| p.labels[i].clone()).collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    groups
        .into_iter()
        .map(|(key, mut g)| {
            g.sort_by(|a, b| {
                let x = |p: &PointStats| Plan::numeric(&p.labels[ai]).unwrap_or(f64::NAN);
                x(a).total_cmp(&x(b))
            });
            if v.largest {
                g.reverse();
            }
            let answer = g
                .iter()
                .find(|p| p.interval(mi, defs[mi]).1 < v.target)
                .map(|p| (p.index, p.labels[ai].clone()));
            SeriesVerdict {
                series: others
                    .iter()
                    .zip(&key)
                    .map(|(&i, l)| format!("{} = {l}", plan.columns[i]))
                    .collect::<Vec<_>>()
                    .join(", "),
                answer,
            }
        })
        .collect()
}

fn verdict_box(plan: &Plan, points: &[PointStats], runs_digest: &str) -> String {
    let x = &plan.experiment;
    let mut h = String::from("<div id=\"verdict\" style=\"border:2px solid #333;background:#f6f8fa;padding:0.6em 1em;margin:1em 0\">\n");
    let provenance = format!(
        "<p class=\"provenance\">Model <code>{}</code> ({}), {} points × {} replicates = {} runs \
         (common random numbers: replicate r has the same seed at every point); vtsim {}; runs \
         digest <code>{}</code>.</p>\n",
        html_escape(&plan.model.name),
        plan.points.first().map(|p| p.world.kind()).unwrap_or(""),
        plan.points.len(),
        x.replicates,
        plan.jobs(),
        env!("CARGO_PKG_VERSION"),
        runs_digest
    );
    let Some(v) = &x.verdict else {
        h.push_str(
            "<h2>Verdict</h2>\n<p>This experiment declares no verdict (no target): it \
            describes how the metrics move, and decides nothing. Give the experiment a \
            <code>verdict: Verdict(axis: .., metric: .., target: ..)</code> to have \
            this box answer a question, or use <code>vtsim advise</code>.</p>\n",
        );
        h.push_str(&provenance);
        h.push_str("</div>\n");
        return h;
    };
    let defs = plan.kept_defs();
    let mi = defs
        .iter()
        .position(|d| d.name == v.metric)
        .expect("checked");
    let ci = v
        .cost
        .as_ref()
        .and_then(|c| defs.iter().position(|d| d.name == c));
    let what = if defs[mi].kind == MetricKind::Indicator {
        format!("P({})", v.metric)
    } else {
        format!("mean {}", v.metric)
    };
    h.push_str("<h2>Verdict</h2>\n");
    if !v.question.is_empty() {
        h.push_str(&format!("<p>{}</p>\n", html_escape(&v.question)));
    }
    h.push_str(&format!(
        "<p>The {} <code>{}</code> whose {what} has its upper 95 % bound below <b>{}</b>{}:</p>\n",
        if v.largest { "largest" } else { "smallest" },
        html_escape(&v.axis),
        fmt_num(v.target),
        if v.filter.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                html_escape(
                    &v.filter
                        .iter()
                        .map(|(k, l)| format!("{k} = {l}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            )
        }
    ));
    h.push_str("<table class=\"verdict\"><tr><th>series</th><th>answer</th>");
    h.push_str(&format!("<th>{what} [95 % interval]</th><th>runs</th>"));
    if let Some(c) = &v.cost {
        h.push_str(&format!("<th>cost: {} (mean)</th>", html_escape(c)));
    }
    h.push_str("</tr>\n");
    for sv in verdicts(plan, points) {
        let series = if sv.series.is_empty() {
            "all".to_string()
        } else {
            sv.series.clone()
        };
        match sv.answer {
            Some((pi, label)) => {
                let p = &points[pi];
                let (lo, hi) = p.interval(mi, defs[mi]);
                h.push_str(&format!(
                    "<tr><td>{}</td><td><b>{}</b></td><td>{} [{}, {}]</td><td>{}</td>",
                    html_escape(&series),
                    html_escape(&label),
                    fmt_num(p.summaries[mi].mean),
                    fmt_num(lo),
                    fmt_num(hi),
                    p.summaries[mi].n
                ));
                if let Some(ci) = ci {
                    h.push_str(&format!("<td>{}</td>", fmt_num(p.summaries[ci].mean)));
                }
            }
            None => {
                h.push_str(&format!(
                    "<tr><td>{}</td><td>none in the sweep</td><td></td><td></td>",
                    html_escape(&series)
                ));
                if ci.is_some() {
                    h.push_str("<td></td>");
                }
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h.push_str(&provenance);
    h.push_str("</div>\n");
    h
}

/// A safe value marked on a chart: (x, y, label).
type ChartAnswer = (f64, f64, String);

fn draw_charts(
    plan: &Plan,
    points: &[PointStats],
    runs_digest: &str,
    dir: &Path,
) -> Result<Vec<String>> {
    let footer = chart_footer(plan, runs_digest);
    let mut names = vec![];
    for c in &plan.experiment.charts {
        let xi = plan.column(&c.x).expect("checked");
        let si = c.series.as_ref().map(|s| plan.column(s).expect("checked"));
        let filters: Vec<(usize, &String)> = c
            .filter
            .iter()
            .map(|(k, v)| (plan.column(k).expect("checked"), v))
            .collect();
        let selected: Vec<&PointStats> = points
            .iter()
            .filter(|p| filters.iter().all(|(i, v)| &p.labels[*i] == *v))
            .collect();
        let mut series_labels: Vec<String> = vec![];
        if let Some(si) = si {
            for p in &selected {
                if !series_labels.contains(&p.labels[si]) {
                    series_labels.push(p.labels[si].clone());
                }
            }
        } else {
            series_labels.push(String::new());
        }
        let defs = plan.kept_defs();
        // The verdict's target marks the safe value on every chart of its metric's mean over
        // its axis (the verdict box decides the points of its own filter; a chart of other
        // points, e.g. clustered phases, gets the same rule applied to its curves).
        let verdict = plan
            .experiment
            .verdict
            .as_ref()
            .filter(|v| v.axis == c.x && c.y.contains(&v.metric) && c.stat == Stat::Mean);
        let verdict_metric = verdict.map(|v| v.metric.clone()).unwrap_or_default();
        let mut curves = vec![];
        for y in &c.y {
            let mi = defs.iter().position(|d| d.name == y).expect("checked");
            for sl in &series_labels {
                let mut pts: Vec<CurvePoint> = selected
                    .iter()
                    .filter(|p| si.is_none_or(|si| &p.labels[si] == sl))
                    .filter_map(|p| {
                        let x = Plan::numeric(&p.labels[xi])?;
                        let s = &p.summaries[mi];
                        let (y, band) = match c.stat {
                            Stat::Mean => (s.mean, Some(p.interval(mi, defs[mi]))),
                            Stat::P50 => (s.p50, None),
                            Stat::P90 => (s.p90, None),
                            Stat::P99 => (s.p99, None),
                            Stat::Max => (s.max, None),
                        };
                        Some(CurvePoint { x, y, band })
                    })
                    .collect();
                pts.sort_by(|a, b| a.x.total_cmp(&b.x));
                // The verdict's answer on this curve: its safe value (the same rule as the
                // verdict box: the first point from the unsafe end whose upper 95 % bound is
                // below the target).
                let answer = verdict.filter(|_| *y == verdict_metric).and_then(|v| {
                    let mut ps: Vec<(f64, &PointStats)> = selected
                        .iter()
                        .filter(|p| si.is_none_or(|si| &p.labels[si] == sl))
                        .filter_map(|p| Some((Plan::numeric(&p.labels[xi])?, *p)))
                        .collect();
                    ps.sort_by(|a, b| a.0.total_cmp(&b.0));
                    if v.largest {
                        ps.reverse();
                    }
                    let (x, p) = ps
                        .into_iter()
                        .find(|(_, p)| p.interval(mi, defs[mi]).1 < v.target)?;
                    let y = pts.iter().find(|q| q.x == x).map(|q| q.y)?;
                    Some((
                        x,
                        y,
                        match si {
                            Some(_) => format!("{sl}: safe at {}", p.labels[xi]),
                            None => format!("safe at {}", p.labels[xi]),
                        },
                    ))
                });
                let label = match (c.y.len() > 1, si) {
                    (_, None) => y.clone(),
                    (false, Some(si)) => format!("{} = {sl}", plan.columns[si]),
                    (true, Some(si)) => format!("{y}, {} = {sl}", plan.columns[si]),
                };
                let series_x = Plan::numeric(sl);
                curves.push((
                    Curve {
                        label,
                        points: pts,
                        series_x,
                    },
                    answer,
                ));
            }
        }
        // Curves that are identical point for point are drawn once, with their labels joined
        // (five refresh intervals giving one rollout duration are one line, not five).
        let mut merged: Vec<(Curve, Option<ChartAnswer>)> = vec![];
        for (cv, answer) in curves {
            let same = |(a, _): &(Curve, Option<ChartAnswer>)| {
                a.points.len() == cv.points.len()
                    && a.points
                        .iter()
                        .zip(&cv.points)
                        .all(|(p, q)| p.x == q.x && p.y == q.y && p.band == q.band)
            };
            match merged.iter_mut().find(|m| same(m)) {
                Some((m, _)) => {
                    let tail = cv
                        .label
                        .rsplit(" = ")
                        .next()
                        .unwrap_or(&cv.label)
                        .to_string();
                    m.label = format!("{}, {tail}", m.label);
                    m.series_x = None;
                }
                None => merged.push((cv, answer)),
            }
        }
        let mut marks = vec![];
        for (i, (_, a)) in merged.iter().enumerate() {
            if let Some((x, y, label)) = a {
                marks.push(chart::MarkLine::Answer {
                    x: *x,
                    y: *y,
                    label: label.clone(),
                    series: Some(i),
                });
            }
        }
        if let Some(v) = verdict {
            if marks
                .iter()
                .any(|m| matches!(m, chart::MarkLine::Answer { .. }))
                && !c
                    .marks
                    .iter()
                    .any(|m| matches!(m, Mark::HLine { y, .. } if *y == v.target))
                && c.stat == Stat::Mean
            {
                marks.push(chart::MarkLine::H {
                    y: v.target,
                    label: format!("the verdict's target: {}", fmt_num(v.target)),
                });
            }
        }
        let curves: Vec<Curve> = merged.into_iter().map(|(c, _)| c).collect();
        for m in &c.marks {
            match m {
                Mark::VLine {
                    x,
                    label,
                    color,
                    dashed,
                } => marks.push(match (color, dashed) {
                    (None, false) => chart::MarkLine::V {
                        x: *x,
                        label: label.clone(),
                    },
                    _ => chart::MarkLine::VStyled {
                        x: *x,
                        label: label.clone(),
                        style: chart::LineStyle {
                            rgb: color.unwrap_or((0, 0, 0)),
                            dashed: *dashed,
                        },
                    },
                }),
                Mark::HLine { y, label } => marks.push(chart::MarkLine::H {
                    y: *y,
                    label: label.clone(),
                }),
                Mark::SeriesMultiple { factor, label } => marks.push(chart::MarkLine::PerSeries {
                    factor: *factor,
                    label: label.clone(),
                }),
            }
        }
        let spec = chart::ChartData {
            title: c.title.clone(),
            x_label: c.x_label.clone(),
            y_label: c.y_label.clone(),
            log_x: c.log_x,
            log_y: c.log_y,
            curves,
            marks,
        };
        chart::draw_files_footed(&spec, dir, &c.name, &footer)?;
        names.push(c.name.clone());
    }
    Ok(names)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number for the page: four significant digits (trailing zeros dropped), scientific
/// below 1e-3 and from 1e6, so that every cell has one format.
fn fmt_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.2e}")
    }
}

/// A column name that may wrap after its underscores (long metric names fit the page).
fn wrap_name(s: &str) -> String {
    html_escape(s).replace('_', "_<wbr>")
}

fn write_index(
    plan: &Plan,
    points: &[PointStats],
    charts: &[String],
    runs_digest: &str,
    dir: &Path,
) -> Result<()> {
    let x = &plan.experiment;
    let mut h = String::new();
    h.push_str("<!doctype html>\n<html><head><meta charset=\"utf-8\">\n");
    h.push_str(&format!("<title>vtsim: {}</title>\n", html_escape(&x.name)));
    h.push_str(
        "<style>body{font-family:sans-serif;margin:2em;max-width:1340px}\
         table{border-collapse:collapse;font-size:11px}small{color:#555}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
         th{background:#eee}img{max-width:100%;border:1px solid #ddd;margin:1em 0}code{background:#f4f4f4}</style>\n",
    );
    h.push_str("</head><body>\n");
    h.push_str(&format!("<h1>{}</h1>\n", html_escape(&x.name)));
    h.push_str(&verdict_box(plan, points, runs_digest));
    if !x.description.is_empty() {
        h.push_str(&format!("<p>{}</p>\n", html_escape(&x.description)));
    }
    h.push_str(&format!(
        "<p>Model <code>{}</code> ({}), {} points × {} replicates = {} runs, experiment seed {}. \
         vtsim {}. Runs digest <code>{}</code>.</p>\n",
        html_escape(&x.model),
        html_escape(&plan.model.name),
        plan.points.len(),
        x.replicates,
        plan.jobs(),
        x.seed,
        env!("CARGO_PKG_VERSION"),
        runs_digest
    ));
    h.push_str("<p>Files: <a href=\"points.csv\">points.csv</a> · <a href=\"runs.csv\">runs.csv</a> · <a href=\"summary.json\">summary.json</a>. Intervals are 95 %: Student t for means, Wilson for proportions.</p>\n");
    for c in charts {
        h.push_str(&format!(
            "<div><a href=\"{c}.svg\"><img src=\"{c}.png\" alt=\"{c}\"></a></div>\n"
        ));
    }
    h.push_str("<h2>Points</h2>\n<table><tr><th>point</th>");
    for c in &plan.columns {
        h.push_str(&format!("<th>{}</th>", html_escape(c)));
    }
    for d in plan.kept_defs() {
        h.push_str(&format!(
            "<th title=\"{}\">{}<br><small>mean [95 %]</small></th>",
            html_escape(d.help),
            wrap_name(d.name)
        ));
    }
    h.push_str("</tr>\n");
    for p in points {
        h.push_str(&format!("<tr><td>{}</td>", p.index));
        for l in &p.labels {
            h.push_str(&format!("<td>{}</td>", html_escape(l)));
        }
        for (i, (s, d)) in p.summaries.iter().zip(plan.kept_defs()).enumerate() {
            let (lo, hi) = p.interval(i, d);
            h.push_str(&format!(
                "<td>{}<br><small>[{}, {}]</small></td>",
                fmt_num(s.mean),
                fmt_num(lo),
                fmt_num(hi)
            ));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n</body></html>\n");
    write(&dir.join("index.html"), h.as_bytes())?;
    Ok(())
}
