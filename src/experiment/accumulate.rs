//! The rows of a sweep accumulated, in job order, into what its outputs are computed from:
//! each point's statistics ([`PointStats`]), the runs digest and the event total
//! ([`Outputs`]). The runner feeds it as it writes rows (a fresh run) or verifies them (a
//! resumed run's kept rows, a merge's shard rows); the report writes the files from it.

use super::plan::Plan;
use crate::model::MetricKind;
use crate::sketch::QuantileSketch;
use crate::stats::{summarize, t_critical, wilson, Summary};
use anyhow::{anyhow, bail, Result};

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

/// Every job's row accumulated ([`Outputs::finish`]): what the output files are written from.
pub struct Accumulated {
    /// One per point, in grid order.
    pub points: Vec<PointStats>,
    /// The runs digest: BLAKE3 of every row's trace digest followed by a newline, in job
    /// order (hex).
    pub runs_digest: String,
    /// Events handled by all the runs.
    pub events_total: u64,
}

impl Outputs<'_> {
    /// The accumulated rows, which must be every job's (an error says the run is
    /// incomplete).
    pub fn finish(self) -> Result<Accumulated> {
        if self.next != self.plan.jobs() {
            bail!(
                "{} rows for {} jobs; the run is incomplete",
                self.next,
                self.plan.jobs()
            );
        }
        let Outputs {
            points,
            mut digest,
            digest_buf,
            events_total,
            ..
        } = self;
        digest.update(&digest_buf);
        let runs_digest = digest.finalize().to_hex().to_string();
        Ok(Accumulated {
            points,
            runs_digest,
            events_total,
        })
    }
}
