//! A question on a model: [`Ask`] (the knob, the metric, the target and the budget as a user
//! gives them) bound to a model by [`prepare`] into a [`Search`] and its [`ModelSampler`]
//! (one world per candidate), and [`run_one`], the two run together.

use super::{
    alpha, default_max_runs_at, search_with, show, Direction, KnobKind, KnobValue, Outcome, Sample,
    Search, Tested, Want, DEFAULT_BUDGET, MAX_RUNS_PER_CANDIDATE,
};
use crate::experiment::plan::{with_overrides, OverrideError};
use crate::model::{MetricKind, RunOptions, WorldSpec};
use crate::sim::rng::replicate_seed;
use serde_json::Value;

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
    /// Most runs per candidate [default: see
    /// [`default_max_runs`](super::default_max_runs); 10 000 for a value].
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

/// The message of an override a candidate's value cannot make.
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
