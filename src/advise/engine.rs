//! The engine: a search's scan over its candidates, each run in batches of doubling size and
//! decided by its interval at each look ([`search`], [`search_with`]), with what a run gives
//! it ([`Sample`]) and what it finds ([`Tested`], [`Decision`], [`Outcome`], [`Ending`]).

use super::{alpha, KnobValue, Search, Want};
use crate::model::MetricKind;
use crate::stats::{t_two_sided, wilson, wilson_z, z_two_sided};
use rayon::prelude::*;

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

/// The decision of interval `(lo, hi)` against the search's target.
fn decide(s: &Search, (lo, hi): (f64, f64)) -> Decision {
    match s.want {
        Want::Below if hi < s.target => Decision::Clears,
        Want::Below if lo > s.target => Decision::Misses,
        Want::Above if lo > s.target => Decision::Clears,
        Want::Above if hi < s.target => Decision::Misses,
        _ => Decision::Undecided,
    }
}

/// `found`, `none_cleared`, `budget_spent`.
pub fn ending_word(e: Ending) -> &'static str {
    match e {
        Ending::Found => "found",
        Ending::NoneCleared => "none_cleared",
        Ending::BudgetSpent => "budget_spent",
    }
}
