//! The question a search answers and its error budget: [`Search`] (the knob's candidates, the
//! metric, the target and its side, the direction, the runs allowed), the looks of a
//! candidate, the Bonferroni split of the error `α` over candidates and looks, and the
//! default most runs per candidate.

use super::render::show;
use super::{KnobKind, KnobValue, MAX_BUDGET, MAX_CANDIDATES, MAX_RUNS_PER_CANDIDATE};
use crate::model::MetricKind;
use crate::stats::{wilson_z, z_two_sided, CONFIDENCE};

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
