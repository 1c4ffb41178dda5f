//! connpool: the largest offered load each variant sustains at ≥ 95 % of its capacity
//! goodput, and the smallest capacity for a given offered rate and deadline mix.
//!
//! `vtsim advise --preset connpool [--variants Unfixed,OnlyA,OnlyB,Fixed] [--load-rps 3000]`
//! on `models/connpool-default.ron` (capacity 20, exponential 10 ms queries, deadlines 75 % 1 s
//! / 25 % 150 ms):
//!
//! - **Sustained load** per variant: `workload.load_scale` (the offered load as a multiple of
//!   the capacity rate capacity / mean service, 2000 requests/s at the defaults) from 1.0 to
//!   8.0 in steps of 0.5 (the collapse of `experiments/pool-overload.ron` is between 5 and 6
//!   for Unfixed), the largest whose goodput stays at ≥ 95 % of the capacity rate
//!   (mean `goodput_s2_rps` above 0.95 × capacity / mean service, Student t).
//! - **Smallest capacity**, for the model's own variant, for `--load-rps` requests/s with the model's deadline
//!   mix: `pool.capacity` from 2 to 100 in steps of 2, each candidate's load scale tied so that
//!   the offered rate stays at `--load-rps`; the smallest whose goodput is ≥ 95 % of it.
//!
//! The stages, so that a run takes 50-100 ms: a 1 s warm-up at the candidate's load (the
//! waitlist fills to the 1 s deadlines), then the 2 s measured stage (stage 2:
//! `goodput_s2_rps`), then a 0.5 s drain. Each search is at 5 % / (variants + 1),
//! so every row holds at once with probability ≥ 95 %.

use super::{answer_cells, num, Ask, Direction, Outcome, Search, SearchBudget, Tested, Want};
use crate::experiment::plan::{with_overrides, OverrideError};
use crate::model::WorldSpec;
use serde_json::{json, Value};

/// Warm-up stage (s).
pub const WARMUP_S: f64 = 1.0;
/// Measured stage (s).
pub const MEASURE_S: f64 = 2.0;
/// Drain after the stages (s).
pub const DRAIN_S: f64 = 0.5;
/// The sustained-load candidates: `LOAD_LO..LOAD_HI` × capacity, step 0.5.
pub const LOAD_LO: f64 = 1.0;
/// See [`LOAD_LO`].
pub const LOAD_HI: f64 = 8.0;
/// The capacity candidates: `CAP_STEP, 2 · CAP_STEP, …, CAP_HI`.
pub const CAP_STEP: u32 = 2;
/// See [`CAP_STEP`].
pub const CAP_HI: u32 = 100;
/// The share of the capacity rate a sustained load keeps.
pub const SUSTAIN: f64 = 0.95;
/// The variants, as model files write them.
pub const VARIANTS: [&str; 4] = ["Unfixed", "OnlyA", "OnlyB", "Fixed"];

/// The question.
#[derive(Clone, Debug)]
pub struct Question {
    /// The variants to compare.
    pub variants: Vec<String>,
    /// Offered requests/s for the capacity search.
    pub load_rps: f64,
    /// Batch, most runs, budget (all searches together), seed.
    pub search: SearchBudget,
}

/// One variant's two searches.
pub struct Row {
    /// The variant.
    pub variant: String,
    /// Its capacity rate (requests/s) at the model's capacity.
    pub capacity_rps: f64,
    /// Largest sustained load scale.
    pub load: (Search, Outcome),
    /// Smallest capacity for `load_rps` (the model's own variant only).
    pub capacity: Option<(Search, Outcome)>,
}

/// Parse `--variants Unfixed,Fixed`.
pub fn parse_variants(s: &str) -> Result<Vec<String>, String> {
    let mut v = vec![];
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let name = VARIANTS
            .iter()
            .find(|n| n.eq_ignore_ascii_case(part))
            .ok_or_else(|| {
                format!(
                    "--variants {part}: not a variant; one of {}",
                    VARIANTS.join(", ")
                )
            })?;
        if !v.iter().any(|x: &String| x == name) {
            v.push(name.to_string());
        }
    }
    if v.is_empty() {
        return Err("--variants: give at least one variant".into());
    }
    Ok(v)
}

fn set(world: &WorldSpec, sets: &[(String, Value)]) -> Result<WorldSpec, String> {
    with_overrides(world, sets).map_err(|e| match e {
        OverrideError::At(_, m) | OverrideError::Whole(m) => format!("connpool preset: {m}"),
    })
}

/// (capacity, mean service in seconds) of a ConnPool world.
pub fn capacity_and_service(world: &WorldSpec) -> Result<(u32, f64), String> {
    match world {
        WorldSpec::ConnPool(p) => Ok((p.pool.capacity, p.workload.service.mean_s())),
        other => Err(format!(
            "--preset connpool needs a ConnPool model (builtin:connpool-default); --model is a {} model",
            other.kind()
        )),
    }
}

/// The smallest `pool.capacity` (2, 4, …, 100) whose goodput is ≥ 95 % of `rps` requests/s
/// offered, on `w` (a world with the preset's stages): each candidate's load scale is tied so
/// that the offered rate stays at `rps`.
pub fn capacity_search(
    w: &WorldSpec,
    rps: f64,
    search: SearchBudget,
    alpha: f64,
    progress: &mut dyn FnMut(&Search, &Tested, u64),
) -> Result<(Search, Outcome), String> {
    let (_, service) = capacity_and_service(w)?;
    super::run_one(
        w,
        &Ask {
            knob: "pool.capacity".into(),
            metric: "goodput_s2_rps".into(),
            exceeds: None,
            target: SUSTAIN * rps,
            want: Want::Above,
            direction: Direction::Min,
            range: Some(format!("{CAP_STEP}..{CAP_HI}")),
            step: Some(CAP_STEP.to_string()),
            search,
            costs: vec!["goodput_s2_rps".into(), "timeout_frac".into()],
            alpha: Some(alpha),
        },
        &|c| vec![("workload.load_scale".into(), json!(rps * service / c.x))],
        progress,
    )
}

/// `world` with `variant` and the preset's stages (1 s warm-up, 2 s measured, 0.5 s drain).
pub fn staged(world: &WorldSpec, variant: &str) -> Result<WorldSpec, String> {
    let stages = json!({"kind": "OpenLoop", "stages": [
        {"load": 1.0, "duration": format!("{WARMUP_S}s")},
        {"load": 1.0, "duration": format!("{MEASURE_S}s")},
    ]});
    set(
        world,
        &[
            ("variant".into(), json!({"kind": variant})),
            ("workload.arrivals".into(), stages),
            ("workload.drain".into(), json!(format!("{DRAIN_S}s"))),
            ("workload.load_scale".into(), json!(1.0)),
        ],
    )
}

/// The searches the preset runs: one per variant, and the capacity search (for the model's own
/// variant, when it is among `--variants`).
pub fn searches(q: &Question) -> usize {
    q.variants.len() + 1
}

/// Run the preset (see the module doc).
pub fn run(
    world: &WorldSpec,
    q: &Question,
    progress: &mut dyn FnMut(&str, &Search, &Tested, u64),
) -> Result<Vec<Row>, String> {
    let (cap, service) = capacity_and_service(world)?;
    if !(q.load_rps > 0.0 && q.load_rps <= 1e6) {
        return Err(format!(
            "--load-rps {}: must be in (0, 1e6]",
            num(q.load_rps)
        ));
    }
    let share = super::alpha() / searches(q) as f64;
    let own = world.params_json()["variant"]["kind"]
        .as_str()
        .unwrap_or("Unfixed")
        .to_string();
    let total = q.search.budget.unwrap_or(super::DEFAULT_BUDGET);
    let mut spent = 0u64;
    let mut rows = vec![];
    let budget = |spent: u64| SearchBudget {
        batch: Some(q.search.batch.unwrap_or(10)),
        max_runs: Some(q.search.max_runs.unwrap_or(160)),
        budget: Some(total.saturating_sub(spent).max(1)),
        seed: q.search.seed,
    };
    for v in &q.variants {
        let w = staged(world, v)?;
        let capacity_rps = cap as f64 / service;
        let before = spent;
        let tag = format!("{v}: sustained load");
        let load = super::run_one(
            &w,
            &Ask {
                knob: "workload.load_scale".into(),
                metric: "goodput_s2_rps".into(),
                exceeds: None,
                target: SUSTAIN * capacity_rps,
                want: Want::Above,
                direction: Direction::Max,
                range: Some(format!("{LOAD_LO}..{LOAD_HI}")),
                step: Some("0.5".into()),
                search: budget(spent),
                costs: vec!["goodput_s2_rps".into(), "timeout_frac".into()],
                alpha: Some(share),
            },
            &|_| vec![],
            &mut |s, t, n| progress(&tag, s, t, before + n),
        )?;
        spent += load.1.runs;
        if load.1.ending == super::Ending::BudgetSpent {
            rows.push(Row {
                variant: v.clone(),
                capacity_rps,
                load,
                capacity: None,
            });
            break;
        }
        if *v != own {
            rows.push(Row {
                variant: v.clone(),
                capacity_rps,
                load,
                capacity: None,
            });
            continue;
        }
        let before = spent;
        let tag = format!("{v}: capacity for {} rps", num(q.load_rps));
        let capacity = capacity_search(&w, q.load_rps, budget(spent), share, &mut |s, t, n| {
            progress(&tag, s, t, before + n)
        })?;
        spent += capacity.1.runs;
        let out = capacity.1.ending == super::Ending::BudgetSpent;
        rows.push(Row {
            variant: v.clone(),
            capacity_rps,
            load,
            capacity: Some(capacity),
        });
        if out {
            break;
        }
    }
    Ok(rows)
}

/// The Markdown account.
pub fn render(model: &str, world: &WorldSpec, q: &Question, rows: &[Row]) -> String {
    let (cap, service) = capacity_and_service(world).unwrap_or((0, f64::NAN));
    let mut out = format!(
        "{model}: per variant, the largest offered load sustained at ≥ 95 % of the capacity \
         goodput (capacity {cap}, mean service {} ms: {} requests/s), and the smallest capacity \
         for {} requests/s with the model's deadline mix (its own variant); stages {WARMUP_S} s warm-up + \
         {MEASURE_S} s measured + {DRAIN_S} s drain ({} searches at {} % each, so every row \
         holds at once with probability ≥ 95 %)\n\n",
        num(service * 1e3),
        num(cap as f64 / service),
        num(q.load_rps),
        searches(q),
        super::pct(super::alpha() / searches(q) as f64),
    );
    out.push_str(
        "| variant | largest sustained load (× capacity) | goodput there [95 %] (rps) | runs \
         | smallest capacity | goodput there [95 %] (rps) | timeouts | runs |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let a = match r.load.1.answer() {
            Some(t) => format!(
                "**{}{}** ({} rps) | {} [{}, {}] | {}",
                if t.value.x >= LOAD_HI { "≥ " } else { "" },
                t.value.label,
                num(t.value.x * r.capacity_rps),
                num(t.estimate),
                num(t.ci95.0),
                num(t.ci95.1),
                r.load.1.runs
            ),
            None => format!("below {LOAD_LO} | | {}", r.load.1.runs),
        };
        let b = match r.capacity.as_ref().map(|c| (c.1.answer(), c.1.runs)) {
            None => "– | | | ".to_string(),
            Some((None, runs)) => format!("none ≤ {CAP_HI} | | | {runs}"),
            Some((Some(t), runs)) => {
                format!("{} | {} | {}", answer_cells(t), num(t.costs[1]), runs)
            }
        };
        out.push_str(&format!("| {} | {a} | {b} |\n", r.variant));
    }
    let runs: u64 = rows
        .iter()
        .map(|r| r.load.1.runs + r.capacity.as_ref().map_or(0, |c| c.1.runs))
        .sum();
    out.push_str(&format!(
        "\n{runs} runs in all (seed {:#x}). The floor for any pool is the offered load in \
         connections, {} requests/s × {} s = {} (Erlang's ρ = 1).\n",
        q.search.seed,
        num(q.load_rps),
        num(service),
        num(q.load_rps * service),
    ));
    out
}

/// The preset's part of the `--json` document.
pub fn preset_json(q: &Question, rows: &[Row]) -> Value {
    json!({
        "name": "connpool",
        "load_rps": q.load_rps,
        "sustain": SUSTAIN,
        "stages_s": {"warmup": WARMUP_S, "measured": MEASURE_S, "drain": DRAIN_S},
        "alpha_per_search": super::alpha() / searches(q) as f64,
        "rows": rows.iter().map(|r| json!({
            "variant": r.variant,
            "capacity_rps": r.capacity_rps,
            "largest_sustained_load": r.load.1.answer().map(|t| t.value.x),
            "largest_sustained_rps": r.load.1.answer().map(|t| t.value.x * r.capacity_rps),
            "goodput_rps_there": r.load.1.answer().map(|t| t.estimate),
            "smallest_capacity": r.capacity.as_ref().and_then(|c| c.1.answer()).map(|t| t.value.x),
            "goodput_rps_at_capacity": r.capacity.as_ref().and_then(|c| c.1.answer()).map(|t| t.estimate),
            "runs": r.load.1.runs + r.capacity.as_ref().map_or(0, |c| c.1.runs),
        })).collect::<Vec<_>>(),
    })
}
