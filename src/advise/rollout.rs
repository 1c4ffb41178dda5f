//! The rollout presets of the advise engine.
//!
//! *Today's knob* (`vtsim advise --gate 30s --vtgates 10`): every released vitess-operator
//! hard-codes the Available gate at 30 s, so the knob an SRE controls is vtgate's
//! `--tablet_refresh_interval`. The preset finds the largest refresh interval whose
//! P(any failed replica read per rollout) is below the target, and prices it in topology
//! polls: a vtgate polls once per interval, so polls/s per vtgate = 1/T and for the fleet
//! = vtgates/T.
//!
//! With uniform poll phases and no other delays a vtgate is exposed at a drain with
//! probability (T − A)/T (`docs/rollout.md`): zero for T ≤ A, so in that setting the largest
//! safe T is exactly the gate A (`tests/advise.rs` checks the preset finds it). The default
//! model's restart and readiness delays give some margin beyond A.

use super::{prepare, Ask, Direction, ModelSampler, Outcome, Search, SearchBudget, Want};
use crate::experiment::plan::{duration_label, with_overrides, OverrideError};
use crate::model::WorldSpec;
use crate::sim::SimDuration;

/// The knob of today's preset.
pub const REFRESH: &str = "vtgate.tablet_refresh_interval";
/// The gate the preset fixes.
pub const GATE: &str = "operator.tablet_available_timeout";
/// The number of vtgates.
pub const VTGATES: &str = "vtgates";
/// The metric: 1 if any replica read failed during the rollout.
pub const METRIC: &str = "any_error";
/// The measured cost metrics reported beside the answer.
pub const COSTS: [&str; 2] = ["topo_polls_per_s", "rollout_duration_s"];
/// vtgate's default `--tablet_refresh_interval` (go/vt/discovery/healthcheck.go).
pub const VTGATE_DEFAULT_REFRESH: SimDuration = SimDuration::from_secs(60);

/// Today's-knob question.
#[derive(Clone, Debug)]
pub struct Today {
    /// The operator's Available gate (30 s in every release).
    pub gate: SimDuration,
    /// vtgates in the cell.
    pub vtgates: u32,
    /// Target P(any failed replica read per rollout).
    pub target: f64,
    /// `A..B` of refresh intervals [default: 1s .. 3 × gate].
    pub range: Option<String>,
    /// Step [default: 1s].
    pub step: Option<String>,
    /// First batch, most runs per candidate, budget, seed: as in [`Ask`].
    pub search: SearchBudget,
    /// The search's error [default: 5 %] (the frontier preset splits it over its gates).
    pub alpha: Option<f64>,
}

/// The search of today's preset on the rollout model `world`.
pub fn today(world: &WorldSpec, q: &Today) -> Result<(Search, ModelSampler), String> {
    if world.kind() != "Rollout" {
        return Err(format!(
            "--gate: the rollout preset needs a Rollout model; --model is a {} model",
            world.kind()
        ));
    }
    if q.vtgates == 0 {
        return Err("--vtgates must be at least 1".into());
    }
    if q.gate > SimDuration::from_secs(3600) {
        return Err(format!("--gate {}: at most 3600s", duration_label(q.gate)));
    }
    let base = with_overrides(
        world,
        &[
            (GATE.to_string(), duration_label(q.gate).into()),
            (VTGATES.to_string(), q.vtgates.into()),
        ],
    )
    .map_err(|e| match e {
        OverrideError::At(_, m) | OverrideError::Whole(m) => format!("--gate/--vtgates: {m}"),
    })?;
    let top = SimDuration::from_secs((q.gate.as_secs_f64() * 3.0).ceil().max(2.0) as u64);
    let ask = Ask {
        knob: REFRESH.into(),
        metric: METRIC.into(),
        target: q.target,
        want: Want::Below,
        direction: Direction::Max,
        range: Some(
            q.range
                .clone()
                .unwrap_or_else(|| format!("1s..{}", duration_label(top))),
        ),
        step: Some(q.step.clone().unwrap_or_else(|| "1s".into())),
        search: q.search.clone(),
        costs: COSTS.iter().map(|s| s.to_string()).collect(),
        exceeds: None,
        alpha: q.alpha,
    };
    prepare(&base, &ask)
}

/// Polls per second of one vtgate at refresh `t_s` seconds.
pub fn polls_per_vtgate(t_s: f64) -> f64 {
    1.0 / t_s
}

/// The lines after the engine's table: the answer, its cost, against the closed form.
pub fn render_today(q: &Today, s: &Search, o: &Outcome) -> String {
    let mut out = String::new();
    let a = duration_label(q.gate);
    match o.answer() {
        Some(t) => {
            let per = polls_per_vtgate(t.value.x);
            let fleet = per * q.vtgates as f64;
            let def = q.vtgates as f64 / VTGATE_DEFAULT_REFRESH.as_secs_f64();
            out.push_str(&format!(
                "\nLargest safe --tablet_refresh_interval under the {a} gate with {} vtgates: \
                 **{}** (P(any failed replica read per rollout) {} [95 %: {}, {}], {} runs, \
                 {} with errors).\n",
                q.vtgates,
                t.value.label,
                super::num(t.estimate),
                super::num(t.ci95.0),
                super::num(t.ci95.1),
                t.runs,
                t.events
            ));
            out.push_str(&format!(
                "Its topology-poll cost: {} polls/s per vtgate, {} polls/s for the fleet of {} \
                 ({:.2} × the {} default's {} polls/s; measured over the rollout: {} polls/s).\n",
                super::num(per),
                super::num(fleet),
                q.vtgates,
                fleet / def,
                duration_label(VTGATE_DEFAULT_REFRESH),
                super::num(def),
                super::num(t.costs[0])
            ));
        }
        None => out.push_str(&format!(
            "\nNo refresh interval in {} cleared the target under the {a} gate.\n",
            s.candidates
                .first()
                .zip(s.candidates.last())
                .map(|(x, y)| format!("{}..{}", x.label, y.label))
                .unwrap_or_default()
        )),
    }
    out.push_str(&format!(
        "Closed form (uniform poll phases, no other delays): P(a vtgate exposed per drain) = \
         (T − A)/T, zero for T ≤ A, so its largest safe T is the gate itself, {a}; the model's \
         restart, serving and readiness delays are the margin beyond it.\n"
    ));
    out
}

/// The preset's part of the `--json` document: the question and the answer's poll cost.
pub fn preset_json(q: &Today, o: &Outcome) -> serde_json::Value {
    let a = o.answer();
    serde_json::json!({
        "name": "rollout-today",
        "gate_s": q.gate.as_secs_f64(),
        "vtgates": q.vtgates,
        "target_risk": q.target,
        "refresh_s": a.map(|t| t.value.x),
        "polls_per_s_per_vtgate": a.map(|t| polls_per_vtgate(t.value.x)),
        "polls_per_s_fleet": a.map(|t| polls_per_vtgate(t.value.x) * q.vtgates as f64),
        "closed_form_refresh_s": q.gate.as_secs_f64(),
    })
}

/// The earlier form, now on the engine: the smallest Available gate for a refresh interval
/// (`vtsim advise --refresh-interval 1m --vtgates 10`).
#[derive(Clone, Debug)]
pub struct GateFor {
    /// vtgate's `--tablet_refresh_interval`.
    pub refresh: SimDuration,
    /// vtgates in the cell.
    pub vtgates: u32,
    /// Target P(any failed replica read per rollout).
    pub target: f64,
    /// Gate step (the candidates are 0, step, … up to 4 × refresh).
    pub step: SimDuration,
    /// Batch, most runs per gate (`--rollouts`), budget, seed.
    pub search: SearchBudget,
}

/// The rules of thumb and today's gate, checked beside the answer: (label, gate).
pub fn references(refresh: SimDuration) -> Vec<(String, SimDuration)> {
    vec![
        (
            "today's operator (hard-coded 30 s)".to_string(),
            SimDuration::from_secs(30),
        ),
        (
            "1.5 × refresh (the seed's rule)".to_string(),
            refresh.mul_f64(1.5),
        ),
        (
            "2 × refresh (vitess-operator PR #797)".to_string(),
            refresh.mul_f64(2.0),
        ),
    ]
}

fn gate_ask(q: &GateFor, range: String, step: String, alpha: Option<f64>) -> Ask {
    Ask {
        knob: GATE.into(),
        metric: METRIC.into(),
        exceeds: None,
        target: q.target,
        want: Want::Below,
        direction: Direction::Min,
        range: Some(range),
        step: Some(step),
        search: q.search.clone(),
        costs: vec!["errors".into(), "rollout_duration_s".into()],
        alpha,
    }
}

/// The gate search and its references. The main search and the three references share the
/// 5 % (the main search 2.5 %, each reference 2.5 % / 3), so the answer and every reference's
/// decision hold at once with probability ≥ 95 %. A reference that the scan already decided
/// is taken from it.
pub struct GateAnswer {
    /// The scan of gates 0, step, … up to 4 × refresh.
    pub scan: (Search, Outcome),
    /// (label, its one-candidate search, or the scan's candidate).
    pub references: Vec<(String, super::Tested)>,
    /// Runs in all.
    pub runs: u64,
}

/// Run the gate search (see [`GateAnswer`]).
pub fn gate_for(
    world: &WorldSpec,
    q: &GateFor,
    progress: &mut dyn FnMut(&Search, &super::Tested, u64),
    tick: &mut dyn FnMut(&Search, usize, u64),
) -> Result<GateAnswer, String> {
    if world.kind() != "Rollout" {
        return Err(format!(
            "--refresh-interval: needs a Rollout model; --model is a {} model",
            world.kind()
        ));
    }
    let base = with_overrides(
        world,
        &[
            (REFRESH.to_string(), duration_label(q.refresh).into()),
            (VTGATES.to_string(), q.vtgates.into()),
        ],
    )
    .map_err(|e| match e {
        OverrideError::At(_, m) | OverrideError::Whole(m) => {
            format!("--refresh-interval/--vtgates: {m}")
        }
    })?;
    let top = crate::model::rollout::advise::max_gate(q.refresh);
    // The largest multiple of the step within 4 × refresh.
    let steps = top.as_nanos() / q.step.as_nanos().max(1);
    let last = SimDuration::from_nanos(steps * q.step.as_nanos());
    let scan = super::run_one_ticked(
        &base,
        &gate_ask(
            q,
            format!("0s..{}", duration_label(last)),
            duration_label(q.step),
            Some(super::alpha() / 2.0),
        ),
        &|_| vec![],
        progress,
        tick,
    )?;
    let mut runs = scan.1.runs;
    let mut refs = vec![];
    for (label, g) in references(q.refresh) {
        if let Some(t) = scan
            .1
            .tested
            .iter()
            .find(|t| (t.value.x - g.as_secs_f64()).abs() < 1e-9)
        {
            refs.push((label, t.clone()));
            continue;
        }
        let gl = duration_label(g);
        let mut ask = gate_ask(
            q,
            format!("{gl}..{gl}"),
            "1s".into(),
            Some(super::alpha() / 6.0),
        );
        ask.search.budget = Some(
            q.search
                .budget
                .unwrap_or(super::DEFAULT_BUDGET)
                .saturating_sub(runs)
                .max(1),
        );
        let before = runs;
        let r = super::run_one_ticked(
            &base,
            &ask,
            &|_| vec![],
            &mut |s, t, n| progress(s, t, before + n),
            &mut |s, c, n| tick(s, c, before + n),
        )?;
        runs += r.1.runs;
        if let Some(t) = r.1.tested.first() {
            refs.push((label, t.clone()));
        }
    }
    Ok(GateAnswer {
        scan,
        references: refs,
        runs,
    })
}

/// The Markdown table of the gate form (the earlier layout: the answer, the gate one step
/// shorter, the references).
pub fn render_gate_for(q: &GateFor, a: &GateAnswer) -> String {
    use super::num;
    let mut s = format!(
        "tablet_refresh_interval = {}, {} vtgates, target P(any failed replica read per rollout) < {}\n\n",
        duration_label(q.refresh),
        q.vtgates,
        super::show(q.target)
    );
    s.push_str(
        "| tablet_available_timeout | | P(any error per rollout) [95 % CI] | failed reads per \
         rollout (mean) | rollout duration (mean) | rollouts | decision |\n|---|---|---|---|---|---|---|\n",
    );
    let row = |label: &str, t: &super::Tested| {
        format!(
            "| {} | {label} | {} [{}, {}] | {:.2} | {:.0} s | {} | {} |\n",
            t.value.label,
            num(t.estimate),
            num(t.ci95.0),
            num(t.ci95.1),
            t.costs[0],
            t.costs[1],
            t.runs,
            t.decision.word()
        )
    };
    let tested = &a.scan.1.tested;
    if let Some(ans) = a.scan.1.answer() {
        if tested.len() >= 2 {
            s.push_str(&row(
                "one step shorter: not below target",
                &tested[tested.len() - 2],
            ));
        }
        s.push_str(&row("**smallest below target**", ans));
    }
    for (label, t) in &a.references {
        s.push_str(&row(label, t));
    }
    s.push('\n');
    match a.scan.1.answer() {
        Some(ans) => {
            let base = a
                .references
                .first()
                .map(|(_, b)| b.costs[1])
                .unwrap_or(f64::NAN);
            s.push_str(&format!(
                "Smallest gate that clears the target at 95 %: **{}** ({} rollouts, {} with errors). \
                 It costs {:+.0} s of rollout time per shard against today's 30 s gate.\n",
                ans.value.label,
                ans.runs,
                ans.events,
                ans.costs[1] - base
            ));
        }
        None => s.push_str(&format!(
            "No scanned gate up to {} reached the target{}.\n",
            a.scan
                .0
                .candidates
                .last()
                .map(|c| c.label.clone())
                .unwrap_or_default(),
            if a.scan.1.ending == super::Ending::BudgetSpent {
                " (the budget ran out)"
            } else {
                ""
            }
        )),
    }
    s.push_str(&format!(
        "Simulated with vtsim: {} rollouts in all, the engine's sequential test (Wilson intervals, \
         5 % split over the scan and the three references, Bonferroni over candidates and looks), \
         common random numbers across gates (seed {:#x}).\n",
        a.runs, q.search.seed
    ));
    s
}
