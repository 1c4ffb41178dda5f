//! `vtsim advise`: the smallest (or largest) value of any model's knob whose metric clears a
//! target at 95 %, decided sequentially with a stated error, within a budget, with common
//! random numbers. The presets ([`rollout`]) are this engine with the knob, metric and target
//! of a real question filled in (`docs/advise.md`).
//!
//! # The search
//! The candidates are the knob's values `A, A+S, …, B` (`--range A..B --step S`). They are
//! scanned from the unsafe end (`--direction min`: smallest first; `max`: largest first) and
//! the scan stops at the first candidate that *clears* the target: its answer is that value.
//!
//! # The sequential test and its error
//! A candidate runs replicates in batches whose sizes double: it is looked at after `b, 2b,
//! 4b, …` runs up to `--max-runs` (`K` looks at most). At each look it gets an interval of
//! the metric (Wilson for a 0/1 metric, Student t for a value) and is decided as soon as the
//! interval lies wholly on one side of the target: *clears* or *misses*; at the last look
//! without a decision it is *undecided* (treated as not clearing). Peeking `K` times at `C`
//! candidates is paid for with a Bonferroni split: every interval is computed at level
//! `1 − α / (C · K)` with `α` = 5 %, so with probability at least 95 % every interval of the
//! whole search covers its candidate's true value at once, and then every decision is right:
//! the answer truly clears the target (and every candidate reported as missing truly misses)
//! with probability ≥ 95 %, however many looks were taken. (For a value metric the t interval
//! is the usual normal approximation of a mean.) `tests/advise.rs` checks the error rate by
//! simulation on Bernoulli and normal cases whose truth is known, against naive peeking.
//!
//! # Common random numbers and the budget
//! Replicate `r` has the seed `replicate_seed(seed, r)` at every candidate, so neighbouring
//! candidates differ by the knob, not by luck. The whole search stops when the next batch
//! would exceed `--budget` runs; the answer then says so.

pub mod connpool;
pub mod fleet;
pub mod frontier;
pub mod proxysql;
pub mod rollout;
pub mod site_poller;

use crate::experiment::plan::{duration_label, with_overrides, OverrideError};
use crate::model::{MetricKind, RunOptions, WorldSpec};
use crate::sim::rng::replicate_seed;
use crate::sim::SimDuration;
use crate::stats::{t_two_sided, wilson, wilson_z, z_two_sided, CONFIDENCE};
use rayon::prelude::*;
use serde_json::{json, Value};

/// Most candidates one search may scan.
pub const MAX_CANDIDATES: u64 = 1000;
/// Most runs one candidate may take (`--max-runs`).
pub const MAX_RUNS_PER_CANDIDATE: u64 = 10_000_000;
/// Most runs one search may take in all (`--budget`).
pub const MAX_BUDGET: u64 = 1_000_000_000;
/// The budget when none is given: two million runs (about half an hour of the default rollout
/// model on two cores; a typical search takes a few percent of it).
pub const DEFAULT_BUDGET: u64 = 2_000_000;
/// The version of the `--json` document ([`to_json`]); bumped on any incompatible change.
pub const JSON_VERSION: u32 = 1;

/// Which end of the range is the answer: the smallest or the largest value that clears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The smallest value that clears (larger values are assumed safer).
    Min,
    /// The largest value that clears (smaller values are assumed safer).
    Max,
}

/// On which side of the target the metric must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// The metric (its probability, for a 0/1 metric) must be below the target.
    Below,
    /// The metric must be above the target.
    Above,
}

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

    fn label_of(self, x: f64, up: bool) -> String {
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

/// What one search looks for (see the module doc).
#[derive(Clone, Debug)]
pub struct Search {
    /// The knob's parameter path (for messages and JSON).
    pub knob: String,
    /// Its kind.
    pub knob_kind: KnobKind,
    /// Its candidate values, in increasing order.
    pub candidates: Vec<KnobValue>,
    /// The metric's name.
    pub metric: String,
    /// Wilson (indicator) or Student t (value).
    pub metric_kind: MetricKind,
    /// The target.
    pub target: f64,
    /// The side of the target the metric must be on.
    pub want: Want,
    /// Which end of the range the answer is.
    pub direction: Direction,
    /// Runs in the first batch (later ones double).
    pub batch: u64,
    /// Most runs per candidate.
    pub max_runs: u64,
    /// Most runs in all.
    pub budget: u64,
    /// The seed of replicate 0 is `replicate_seed(seed, 0)`, at every candidate.
    pub seed: u64,
    /// Names of the cost metrics reported beside the answer (means).
    pub costs: Vec<String>,
    /// The whole search's error: 5 % ([`alpha`]), or the share of it a preset gives this
    /// search when it runs several.
    pub alpha: f64,
}

/// Total error of the search: 5 % (the intervals are 95 % intervals, jointly).
pub fn alpha() -> f64 {
    1.0 - CONFIDENCE
}

/// The runs at which a candidate is looked at: `batch · 2^k`, capped at `max_runs`.
pub fn looks(batch: u64, max_runs: u64) -> Vec<u64> {
    let mut v = vec![];
    let mut n = batch.max(1);
    while n < max_runs {
        v.push(n);
        n = n.saturating_mul(2);
    }
    v.push(max_runs);
    v
}

/// The miss probability of each interval: α / (candidates × looks).
pub fn alpha_per_look(candidates: u64, looks: u64) -> f64 {
    alpha_per_look_at(alpha(), candidates, looks)
}

/// The miss probability of each interval of a search whose whole error is `alpha` (a preset
/// that runs several searches splits its 5 % among them).
pub fn alpha_per_look_at(alpha: f64, candidates: u64, looks: u64) -> f64 {
    alpha / (candidates.max(1) * looks.max(1)) as f64
}

/// Runs a 0/1 metric needs with zero events for the upper Wilson bound at critical value `z`
/// to fall below `target`: `z²(1 − t)/t`.
pub fn zero_event_runs(target: f64, z: f64) -> f64 {
    z * z * (1.0 - target) / target
}

/// The default most runs per candidate for a 0/1 metric's `target`: three times what zero
/// events need at the search's own level (so a candidate with a few events can still clear),
/// rounded up to a multiple of `batch`. `None`: beyond [`MAX_RUNS_PER_CANDIDATE`].
pub fn default_max_runs(target: f64, candidates: u64, batch: u64) -> Option<u64> {
    default_max_runs_at(alpha(), target, candidates, batch)
}

/// [`default_max_runs`] for a search whose whole error is `alpha`.
pub fn default_max_runs_at(alpha: f64, target: f64, candidates: u64, batch: u64) -> Option<u64> {
    let t = target.min(1.0 - target);
    let mut max = 10_000u64;
    for _ in 0..6 {
        let k = looks(batch, max).len() as u64;
        let z = z_two_sided(alpha_per_look_at(alpha, candidates, k));
        let need = 3.0 * zero_event_runs(t, z);
        if need > MAX_RUNS_PER_CANDIDATE as f64 {
            return None;
        }
        max = ((need / batch as f64).ceil() as u64 * batch).max(batch);
    }
    Some(max)
}

impl Search {
    /// Check the bounds; the error names the flag.
    pub fn check(&self) -> Result<(), String> {
        let c = self.candidates.len() as u64;
        if c == 0 {
            return Err("--range: no candidates".into());
        }
        if c > MAX_CANDIDATES {
            return Err(format!("--range: {c} candidates; at most {MAX_CANDIDATES}"));
        }
        if self.batch == 0 {
            return Err("--batch must be at least 1".into());
        }
        if self.max_runs == 0 || self.max_runs > MAX_RUNS_PER_CANDIDATE {
            return Err(format!(
                "--max-runs {}: at least 1 and at most {MAX_RUNS_PER_CANDIDATE:.0e} per candidate",
                self.max_runs
            ));
        }
        if self.batch > self.max_runs {
            return Err(format!(
                "--batch {} is above --max-runs {}",
                self.batch, self.max_runs
            ));
        }
        if self.budget < self.batch || self.budget > MAX_BUDGET {
            return Err(format!(
                "--budget {}: at least --batch ({}) and at most {MAX_BUDGET:.0e} runs",
                self.budget, self.batch
            ));
        }
        if !self.target.is_finite() {
            return Err(format!("--target {}: not a number", self.target));
        }
        if self.metric_kind == MetricKind::Indicator {
            if !(self.target > 0.0 && self.target < 1.0) {
                return Err(format!(
                    "--target {}: `{}` is a 0/1 metric; its probability target must be in (0, 1)",
                    show(self.target),
                    self.metric
                ));
            }
            // Can the best outcome (no events for below, all events for above) clear at all?
            let z = self.z();
            let n = self.max_runs;
            let (lo, hi) = match self.want {
                Want::Below => wilson_z(0, n, z),
                Want::Above => wilson_z(n, n, z),
            };
            let ok = match self.want {
                Want::Below => hi < self.target,
                Want::Above => lo > self.target,
            };
            if !ok {
                let t = self.target.min(1.0 - self.target);
                let need = zero_event_runs(t, z).ceil() as u64 + 1;
                return Err(format!(
                    "--target {}: even {} in all {n} runs of a candidate would not show it at \
                     the search's level (its bound is {:.2e}); raise --max-runs to at least \
                     {need} (at most {MAX_RUNS_PER_CANDIDATE:.0e}) or ease the target",
                    show(self.target),
                    if self.want == Want::Below {
                        "no event"
                    } else {
                        "an event"
                    },
                    if self.want == Want::Below { hi } else { lo },
                ));
            }
        }
        Ok(())
    }

    /// The looks of one candidate.
    pub fn looks(&self) -> Vec<u64> {
        looks(self.batch, self.max_runs)
    }

    /// The miss probability of each interval.
    pub fn alpha_per_look(&self) -> f64 {
        alpha_per_look_at(
            self.alpha,
            self.candidates.len() as u64,
            self.looks().len() as u64,
        )
    }

    /// The normal critical value of each interval.
    pub fn z(&self) -> f64 {
        z_two_sided(self.alpha_per_look())
    }

    /// Candidate indices in scan order (unsafe end first).
    pub fn scan_order(&self) -> Vec<usize> {
        let n = self.candidates.len();
        match self.direction {
            Direction::Min => (0..n).collect(),
            Direction::Max => (0..n).rev().collect(),
        }
    }
}

/// One run's numbers, as the engine needs them.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The metric.
    pub metric: f64,
    /// The cost metrics, in [`Search::costs`] order.
    pub costs: Vec<f64>,
    /// The run's trace digest.
    pub digest: String,
}

/// How a candidate ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Its interval lies on the target's good side.
    Clears,
    /// Its interval lies on the target's bad side.
    Misses,
    /// Neither at its last look (or the budget ran out): not shown to clear.
    Undecided,
}

impl Decision {
    /// `clears`, `misses`, `undecided`.
    pub fn word(self) -> &'static str {
        match self {
            Decision::Clears => "clears",
            Decision::Misses => "misses",
            Decision::Undecided => "undecided",
        }
    }
}

/// A tested candidate.
#[derive(Clone, Debug)]
pub struct Tested {
    /// Index in [`Search::candidates`].
    pub index: usize,
    /// Its value.
    pub value: KnobValue,
    /// Runs it took.
    pub runs: u64,
    /// Looks taken.
    pub looks: u64,
    /// Runs with the 0/1 metric at 1 (indicators only).
    pub events: u64,
    /// The mean of the metric (the proportion for an indicator).
    pub estimate: f64,
    /// Sample standard deviation of the metric.
    pub sd: f64,
    /// The plain 95 % interval at the last look (Wilson or Student t).
    pub ci95: (f64, f64),
    /// The interval the decision used (level `1 − α/(C·K)`).
    pub ci_decision: (f64, f64),
    /// How it ended.
    pub decision: Decision,
    /// Means of the cost metrics.
    pub costs: Vec<f64>,
    /// The trace digest of its replicate 0.
    pub digest0: String,
    /// BLAKE3 over every run's trace digest (its 64 hex characters) in replicate order: the
    /// proof of every run the candidate's figures rest on.
    pub digest_runs: String,
}

/// Why the scan ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A candidate cleared.
    Found,
    /// Every candidate was tested and none cleared.
    NoneCleared,
    /// The budget ran out before a candidate cleared.
    BudgetSpent,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The candidates tested, in scan order.
    pub tested: Vec<Tested>,
    /// Why it ended.
    pub ending: Ending,
    /// Runs in all.
    pub runs: u64,
}

impl Outcome {
    /// The answer: the candidate that cleared.
    pub fn answer(&self) -> Option<&Tested> {
        self.tested.iter().find(|t| t.decision == Decision::Clears)
    }
}

/// Running sums of one candidate.
struct Acc {
    n: u64,
    events: u64,
    sum: f64,
    sumsq: f64,
    costs: Vec<f64>,
    digest0: String,
    runs: blake3::Hasher,
}

/// Runs evaluated per parallel chunk (bounds the memory of a large batch, and sets how often
/// [`search_with`]'s `tick` hears of progress).
const CHUNK: u64 = 1 << 12;

/// Run the search with `sample(candidate, replicate)`; `progress` hears each decided
/// candidate. The result is the same for any number of threads (sums are taken in replicate
/// order).
pub fn search<F>(s: &Search, sample: F, progress: &mut dyn FnMut(&Tested, u64)) -> Outcome
where
    F: Fn(usize, u64) -> Sample + Sync,
{
    search_with(s, sample, progress, &mut |_, _| {})
}

/// [`search`], with `tick(candidate, runs so far)` after every chunk of runs (for a progress
/// display within a long candidate).
pub fn search_with<F>(
    s: &Search,
    sample: F,
    progress: &mut dyn FnMut(&Tested, u64),
    tick: &mut dyn FnMut(usize, u64),
) -> Outcome
where
    F: Fn(usize, u64) -> Sample + Sync,
{
    let looks = s.looks();
    let a_look = s.alpha_per_look();
    let z = z_two_sided(a_look);
    let mut tested = vec![];
    let mut runs = 0u64;
    let mut ending = Ending::NoneCleared;
    'scan: for c in s.scan_order() {
        let mut acc = Acc {
            n: 0,
            events: 0,
            sum: 0.0,
            sumsq: 0.0,
            costs: vec![0.0; s.costs.len()],
            digest0: String::new(),
            runs: blake3::Hasher::new(),
        };
        let mut decision = Decision::Undecided;
        let mut taken = 0u64;
        let mut last = None;
        for (k, &n_look) in looks.iter().enumerate() {
            let more = n_look - acc.n;
            if runs + more > s.budget {
                ending = Ending::BudgetSpent;
                break;
            }
            let mut r = acc.n;
            while r < n_look {
                let hi = (r + CHUNK).min(n_look);
                let batch: Vec<Sample> = (r..hi).into_par_iter().map(|i| sample(c, i)).collect();
                for (i, x) in batch.into_iter().enumerate() {
                    acc.runs.update(x.digest.as_bytes());
                    if r + i as u64 == 0 {
                        acc.digest0 = x.digest;
                    }
                    acc.sum += x.metric;
                    acc.sumsq += x.metric * x.metric;
                    if x.metric >= 0.5 {
                        acc.events += 1;
                    }
                    for (a, v) in acc.costs.iter_mut().zip(&x.costs) {
                        *a += v;
                    }
                }
                tick(c, runs + (hi - acc.n));
                r = hi;
            }
            runs += more;
            acc.n = n_look;
            taken = k as u64 + 1;
            let final_look = k + 1 == looks.len();
            let (est, sd, ci) = interval(s, &acc, z, a_look, final_look);
            last = Some((est, sd, ci));
            decision = decide(s, ci);
            if decision != Decision::Undecided {
                break;
            }
        }
        if acc.n == 0 {
            break 'scan;
        }
        let (estimate, sd, ci_decision) = last.expect("a look was taken");
        let ci95 = interval(s, &acc, crate::stats::z_critical(), alpha(), true).2;
        let t = Tested {
            index: c,
            value: s.candidates[c].clone(),
            runs: acc.n,
            looks: taken,
            events: acc.events,
            estimate,
            sd,
            ci95,
            ci_decision,
            decision,
            costs: acc.costs.iter().map(|v| v / acc.n as f64).collect(),
            digest0: acc.digest0,
            digest_runs: acc.runs.finalize().to_hex().to_string(),
        };
        progress(&t, runs);
        tested.push(t);
        if decision == Decision::Clears {
            ending = Ending::Found;
            break;
        }
        if ending == Ending::BudgetSpent {
            break;
        }
    }
    Outcome {
        tested,
        ending,
        runs,
    }
}

/// (estimate, sd, interval) of a candidate at critical value `z` (indicators) or miss
/// probability `a` (values). A value metric with no spread is decided only at its last look.
fn interval(s: &Search, acc: &Acc, z: f64, a: f64, final_look: bool) -> (f64, f64, (f64, f64)) {
    let n = acc.n as f64;
    let mean = acc.sum / n;
    let var = if acc.n > 1 {
        ((acc.sumsq - n * mean * mean) / (n - 1.0)).max(0.0)
    } else {
        0.0
    };
    let sd = var.sqrt();
    let ci = match s.metric_kind {
        MetricKind::Indicator => {
            if (z - crate::stats::z_critical()).abs() < 1e-12 {
                wilson(acc.events, acc.n)
            } else {
                wilson_z(acc.events, acc.n, z)
            }
        }
        MetricKind::Value => {
            if sd == 0.0 && !final_look {
                (f64::NEG_INFINITY, f64::INFINITY)
            } else {
                let h = t_two_sided(acc.n - 1, a) * sd / n.sqrt();
                let h = if h.is_finite() { h } else { f64::INFINITY };
                (mean - h, mean + h)
            }
        }
    };
    let est = if s.metric_kind == MetricKind::Indicator {
        acc.events as f64 / n
    } else {
        mean
    };
    (est, sd, ci)
}

fn decide(s: &Search, (lo, hi): (f64, f64)) -> Decision {
    match s.want {
        Want::Below if hi < s.target => Decision::Clears,
        Want::Below if lo > s.target => Decision::Misses,
        Want::Above if lo > s.target => Decision::Clears,
        Want::Above if hi < s.target => Decision::Misses,
        _ => Decision::Undecided,
    }
}

/// The model runs behind a search: one world per candidate, the metric and cost columns.
pub struct ModelSampler {
    worlds: Vec<WorldSpec>,
    metric: usize,
    exceeds: Option<f64>,
    costs: Vec<usize>,
    seed: u64,
}

impl ModelSampler {
    /// One run of candidate `c`, replicate `r`, with its trace digest (every run's digest
    /// goes into the candidate's `digest_runs`).
    pub fn sample(&self, c: usize, r: u64) -> Sample {
        let o = self.worlds[c].run(replicate_seed(self.seed, r), RunOptions::default());
        let v = o.metrics[self.metric];
        Sample {
            metric: match self.exceeds {
                Some(x) => f64::from(u8::from(v > x)),
                None => v,
            },
            costs: self.costs.iter().map(|&i| o.metrics[i]).collect(),
            digest: o.digest,
        }
    }

    /// The world of candidate `c` (its knob and tied parameters set).
    pub fn world(&self, c: usize) -> &WorldSpec {
        &self.worlds[c]
    }
}

/// How many runs a search may take, and its seed: the part of a question every form and
/// preset shares (`--batch`, `--max-runs`, `--budget`, `--seed`).
#[derive(Clone, Debug, Default)]
pub struct SearchBudget {
    /// First batch [default: 100 for a 0/1 metric, 20 for a value].
    pub batch: Option<u64>,
    /// Most runs per candidate [default: see [`default_max_runs`]; 10 000 for a value].
    pub max_runs: Option<u64>,
    /// Most runs in all [default: [`DEFAULT_BUDGET`]].
    pub budget: Option<u64>,
    /// The seed: replicate r of every candidate has seed `replicate_seed(seed, r)`.
    pub seed: u64,
}

/// What a user asks for on the command line (the generic form).
#[derive(Clone, Debug)]
pub struct Ask {
    /// The knob's parameter path.
    pub knob: String,
    /// The metric's name.
    pub metric: String,
    /// Judge the 0/1 event `metric > exceeds` instead of the metric itself (`--exceeds X`):
    /// "p99 of the delay below 60 s" is "P(delay > 60 s) below 0.01".
    pub exceeds: Option<f64>,
    /// The target.
    pub target: f64,
    /// Side of the target.
    pub want: Want,
    /// Which end is the answer.
    pub direction: Direction,
    /// `A..B` [default: step .. 4 × the model's value].
    pub range: Option<String>,
    /// `S` [default: the model's value / 10].
    pub step: Option<String>,
    /// Batch, most runs, budget and seed.
    pub search: SearchBudget,
    /// Cost metrics to report.
    pub costs: Vec<String>,
    /// The search's error [default: 5 %]; a preset running several searches splits it.
    pub alpha: Option<f64>,
}

fn override_err(path: &str, label: &str, e: OverrideError) -> String {
    match e {
        OverrideError::At(_, m) | OverrideError::Whole(m) => {
            format!("--knob {path}={label}: {m}")
        }
    }
}

/// Build the search and its sampler for `ask` on `world` (every candidate's parameters are
/// checked before anything runs). Errors are bad input naming the flag.
pub fn prepare(world: &WorldSpec, ask: &Ask) -> Result<(Search, ModelSampler), String> {
    prepare_with(world, ask, &|_| vec![])
}

/// [`prepare`] where each candidate also sets other parameters, computed from its value
/// (`tied`): e.g. a pool's capacity with the load scale that keeps the offered rate fixed.
pub fn prepare_with(
    world: &WorldSpec,
    ask: &Ask,
    tied: &dyn Fn(&KnobValue) -> Vec<(String, Value)>,
) -> Result<(Search, ModelSampler), String> {
    let (kind, current) = KnobKind::of(world, &ask.knob)?;
    let defs = world.metric_defs();
    let find = |flag: &str, name: &str| {
        defs.iter().position(|d| d.name == name).ok_or_else(|| {
            format!(
                "{flag} {name}: the {} model reports no such metric; it reports: {}",
                world.kind(),
                defs.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
            )
        })
    };
    let mi = find("--metric", &ask.metric)?;
    let costs = ask
        .costs
        .iter()
        .map(|c| find("--cost", c))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(x) = ask.exceeds {
        if !x.is_finite() {
            return Err(format!("--exceeds {x}: not a number"));
        }
    }
    let err = ask.alpha.unwrap_or_else(alpha);
    if !(err > 0.0 && err <= alpha()) {
        return Err(format!("the search's error {err} must be in (0, 0.05]"));
    }
    let cur = kind.parse("the model's value", current.to_string().trim_matches('"'))?;
    let step = match &ask.step {
        Some(s) => s.clone(),
        None => {
            let x = if kind == KnobKind::Integer {
                (cur.x / 10.0).round().max(1.0)
            } else {
                cur.x / 10.0
            };
            if x <= 0.0 {
                return Err(format!(
                    "--knob {}: the model's value is {}; give --range and --step",
                    ask.knob, cur.label
                ));
            }
            kind.label_of(x, false)
        }
    };
    let range = match &ask.range {
        Some(r) => r.clone(),
        None => {
            let s = kind.parse("--step", &step)?;
            format!("{}..{}", s.label, kind.label_of(cur.x * 4.0, false))
        }
    };
    let candidates = kind.candidates(&range, &step)?;
    let metric_kind = if ask.exceeds.is_some() {
        MetricKind::Indicator
    } else {
        defs[mi].kind
    };
    let metric_name = match ask.exceeds {
        Some(x) => format!("{} > {}", ask.metric, show(x)),
        None => ask.metric.clone(),
    };
    let b = &ask.search;
    let batch = b.batch.unwrap_or(match metric_kind {
        MetricKind::Indicator => 100,
        MetricKind::Value => 20,
    });
    if batch == 0 {
        return Err("--batch must be at least 1".into());
    }
    let max_runs = match b.max_runs {
        Some(m) => m,
        None => match metric_kind {
            MetricKind::Value => 10_000.max(batch),
            MetricKind::Indicator => {
                if !(ask.target > 0.0 && ask.target < 1.0) {
                    return Err(format!(
                        "--target {}: `{metric_name}` is a 0/1 metric; its probability target must be in (0, 1)",
                        show(ask.target)
                    ));
                }
                default_max_runs_at(err, ask.target, candidates.len() as u64, batch).ok_or_else(
                    || {
                        format!(
                            "--target {}: showing it needs more than {MAX_RUNS_PER_CANDIDATE:.0e} \
                             runs per candidate; ease the target, or give fewer candidates \
                             (--range, --step)",
                            show(ask.target)
                        )
                    },
                )?
            }
        },
    };
    let s = Search {
        knob: ask.knob.clone(),
        knob_kind: kind,
        candidates,
        metric: metric_name,
        metric_kind,
        target: ask.target,
        want: ask.want,
        direction: ask.direction,
        batch,
        max_runs,
        budget: b.budget.unwrap_or(DEFAULT_BUDGET),
        seed: b.seed,
        costs: ask.costs.clone(),
        alpha: err,
    };
    s.check()?;
    let worlds = s
        .candidates
        .iter()
        .map(|v| {
            let mut sets = vec![(ask.knob.clone(), v.json.clone())];
            sets.extend(tied(v));
            with_overrides(world, &sets).map_err(|e| override_err(&ask.knob, &v.label, e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((
        s,
        ModelSampler {
            worlds,
            metric: mi,
            exceeds: ask.exceeds,
            costs,
            seed: b.seed,
        },
    ))
}

/// Prepare and run one search (a preset's step): the engine, with `progress` hearing each
/// decided candidate and the runs so far.
pub fn run_one(
    world: &WorldSpec,
    ask: &Ask,
    tied: &dyn Fn(&KnobValue) -> Vec<(String, Value)>,
    progress: &mut dyn FnMut(&Search, &Tested, u64),
) -> Result<(Search, Outcome), String> {
    run_one_ticked(world, ask, tied, progress, &mut |_, _, _| {})
}

/// [`run_one`] with `tick(search, candidate, runs so far)` after every chunk of runs.
pub fn run_one_ticked(
    world: &WorldSpec,
    ask: &Ask,
    tied: &dyn Fn(&KnobValue) -> Vec<(String, Value)>,
    progress: &mut dyn FnMut(&Search, &Tested, u64),
    tick: &mut dyn FnMut(&Search, usize, u64),
) -> Result<(Search, Outcome), String> {
    let (s, m) = prepare_with(world, ask, tied)?;
    let o = search_with(
        &s,
        |c, r| m.sample(c, r),
        &mut |t, n| progress(&s, t, n),
        &mut |c, n| tick(&s, c, n),
    );
    Ok((s, o))
}

/// `found`, `none_cleared`, `budget_spent`.
pub fn ending_word(e: Ending) -> &'static str {
    match e {
        Ending::Found => "found",
        Ending::NoneCleared => "none_cleared",
        Ending::BudgetSpent => "budget_spent",
    }
}

/// The `--json` document of a preset that runs several searches (schema
/// `vtsim.advise.preset`, [`JSON_VERSION`]): the preset's own answer and every search as
/// [`to_json`] writes it.
pub fn preset_doc(
    model: &str,
    kind: &str,
    preset: Value,
    searches: &[(&Search, &Outcome)],
) -> Value {
    json!({
        "schema": "vtsim.advise.preset",
        "version": JSON_VERSION,
        "vtsim": env!("CARGO_PKG_VERSION"),
        "model": {"name": model, "kind": kind},
        "preset": preset,
        "runs": searches.iter().map(|(_, o)| o.runs).sum::<u64>(),
        "searches": searches.iter().map(|(s, o)| to_json(model, kind, s, o)).collect::<Vec<_>>(),
    })
}

/// A target as a user writes it (`1e-3`, `0.25`).
pub fn show(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The cells a preset's table gives a candidate that answers: `**label** | estimate [lo, hi]`
/// (its plain 95 % interval).
pub fn answer_cells(t: &Tested) -> String {
    format!(
        "**{}** | {} [{}, {}]",
        t.value.label,
        num(t.estimate),
        num(t.ci95.0),
        num(t.ci95.1)
    )
}

/// A number in a sensible precision: 3 significant digits, scientific below 0.01.
pub fn num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if !v.is_finite() {
        format!("{v}")
    } else if v.abs() < 0.01 || v.abs() >= 1e6 {
        format!("{v:.2e}")
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn side(w: Want) -> &'static str {
    match w {
        Want::Below => "below",
        Want::Above => "above",
    }
}

/// The Markdown account of a search.
pub fn render(model: &str, s: &Search, o: &Outcome) -> String {
    let mut out = String::new();
    let what = if s.metric_kind == MetricKind::Indicator {
        format!("P({} = 1)", s.metric)
    } else {
        format!("mean {}", s.metric)
    };
    out.push_str(&format!(
        "{model}: {} {} of `{}` with {what} {} {} at 95 %\n\n",
        match s.direction {
            Direction::Min => "smallest",
            Direction::Max => "largest",
        },
        "value",
        s.knob,
        side(s.want),
        num(s.target)
    ));
    out.push_str(&format!(
        "| {} | runs | {what} | 95 % interval | decision interval | decision |",
        s.knob
    ));
    for c in &s.costs {
        out.push_str(&format!(" {c} (mean) |"));
    }
    out.push('\n');
    out.push_str("|---|---|---|---|---|---|");
    for _ in &s.costs {
        out.push_str("---|");
    }
    out.push('\n');
    for t in &o.tested {
        out.push_str(&format!(
            "| {} | {} | {} | [{}, {}] | [{}, {}] | {} |",
            t.value.label,
            t.runs,
            num(t.estimate),
            num(t.ci95.0),
            num(t.ci95.1),
            num(t.ci_decision.0),
            num(t.ci_decision.1),
            if t.decision == Decision::Clears {
                "**clears**"
            } else {
                t.decision.word()
            }
        ));
        for c in &t.costs {
            out.push_str(&format!(" {} |", num(*c)));
        }
        out.push('\n');
    }
    out.push('\n');
    match o.answer() {
        Some(a) => out.push_str(&format!(
            "Answer: **{} = {}** ({what} = {}, 95 % interval [{}, {}]; it rests on {} runs{}).\n",
            s.knob,
            a.value.label,
            num(a.estimate),
            num(a.ci95.0),
            num(a.ci95.1),
            a.runs,
            if s.metric_kind == MetricKind::Indicator {
                format!(", {} with the event", a.events)
            } else {
                String::new()
            }
        )),
        None => out.push_str(&match o.ending {
            Ending::BudgetSpent => format!(
                "No answer: the budget of {} runs ran out before a candidate cleared.\n",
                s.budget
            ),
            _ => "No candidate in the range cleared the target.\n".to_string(),
        }),
    }
    out.push_str(&format!(
        "The search took {} runs in all over {} candidates. Each decision interval is at level \
         1 − {:.1e} ({} % split over {} candidates × {} looks, Bonferroni), so every decision \
         above is right with probability ≥ {} % at once; common random numbers (replicate r has \
         the same seed at every candidate, seed {:#x}).\n",
        o.runs,
        o.tested.len(),
        s.alpha_per_look(),
        pct(s.alpha),
        s.candidates.len(),
        s.looks().len(),
        pct(1.0 - s.alpha),
        s.seed
    ));
    out
}

/// A percentage as a user writes it (`5`, `1.25`, `98.75`).
pub fn pct(p: f64) -> String {
    let v = format!("{:.4}", p * 100.0);
    v.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn pair(p: (f64, f64)) -> Value {
    json!([finite(p.0), finite(p.1)])
}

fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The `--json` document of a search (schema `vtsim.advise`, [`JSON_VERSION`];
/// `docs/outputs.md`).
pub fn to_json(model: &str, kind: &str, s: &Search, o: &Outcome) -> Value {
    let cand = |t: &Tested| {
        json!({
            "value": t.value.json,
            "label": t.value.label,
            "x": t.value.x,
            "runs": t.runs,
            "looks": t.looks,
            "events": if s.metric_kind == MetricKind::Indicator { json!(t.events) } else { Value::Null },
            "estimate": finite(t.estimate),
            "sd": finite(t.sd),
            "ci95": pair(t.ci95),
            "ci_decision": pair(t.ci_decision),
            "decision": t.decision.word(),
            "costs": s.costs.iter().zip(&t.costs).map(|(k, v)| (k.clone(), finite(*v))).collect::<serde_json::Map<_, _>>(),
            "digest_replicate_0": t.digest0,
            "digest_runs": t.digest_runs,
        })
    };
    json!({
        "schema": "vtsim.advise",
        "version": JSON_VERSION,
        "vtsim": env!("CARGO_PKG_VERSION"),
        "model": {"name": model, "kind": kind},
        "knob": {"path": s.knob, "unit": s.knob_kind.unit(), "candidates": s.candidates.len()},
        "metric": {"name": s.metric, "kind": match s.metric_kind { MetricKind::Indicator => "indicator", MetricKind::Value => "value" }},
        "target": s.target,
        "want": side(s.want),
        "direction": match s.direction { Direction::Min => "min", Direction::Max => "max" },
        "test": {
            "method": "bonferroni over candidates and looks",
            "interval": match s.metric_kind { MetricKind::Indicator => "wilson", MetricKind::Value => "student_t" },
            "alpha": s.alpha,
            "alpha_per_look": s.alpha_per_look(),
            "looks": s.looks(),
            "batch": s.batch,
            "max_runs_per_candidate": s.max_runs,
        },
        "budget": s.budget,
        "seed": format!("{:#018x}", s.seed),
        "ending": ending_word(o.ending),
        "runs": o.runs,
        "answer": o.answer().map(cand).unwrap_or(Value::Null),
        "tested": o.tested.iter().map(cand).collect::<Vec<_>>(),
    })
}
