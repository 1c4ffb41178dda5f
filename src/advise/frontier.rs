//! Rollout, both knobs: the (refresh interval, Available gate) frontier.
//!
//! `vtsim advise --preset rollout-frontier --vtgates 10` runs today's-knob search
//! ([`super::rollout::today`]: the largest safe `tablet_refresh_interval` under a gate) once
//! per gate of `--gates` (default 10s, 20s, 30s, 45s, 60s, 90s). The searches split the 5 %
//! error between them (Bonferroni again), so with probability ≥ 95 % every point of the
//! frontier is safe at once. Between two gates the safe region is drawn by joining their
//! answers with a straight line (an interpolation, not a tested claim).
//!
//! The chart (`rollout-frontier.png` / `.svg`): x is the refresh interval, y the gate; the
//! safe region (refresh at most the frontier's) is shaded, the frontier drawn, the closed form
//! of uniform phases with no delays (T = A) dashed beside it, the fleet's topology-poll cost
//! (vtgates / T polls/s, which depends on T only) drawn as labelled vertical contours, and the
//! operator's 30 s gate and vtgate's 60 s default refresh marked.

use super::rollout::{polls_per_vtgate, today, Today, VTGATE_DEFAULT_REFRESH};
use super::{num, Outcome, Search, SearchBudget, Tested};
use crate::chart::{ChartData, Curve, CurvePoint, MarkLine};
use crate::experiment::plan::duration_label;
use crate::model::WorldSpec;
use crate::sim::SimDuration;
use serde_json::{json, Value};

/// The gates the frontier is drawn at when `--gates` is not given.
pub const DEFAULT_GATES: [u64; 6] = [10, 20, 30, 45, 60, 90];
/// The operator's hard-coded gate (pkg/controller/vitessshard/reconcile_tablets.go).
pub const OPERATOR_GATE: SimDuration = SimDuration::from_secs(30);

/// The frontier question.
#[derive(Clone, Debug)]
pub struct Frontier {
    /// The gates, increasing.
    pub gates: Vec<SimDuration>,
    /// vtgates in the cell.
    pub vtgates: u32,
    /// Target P(any failed replica read per rollout).
    pub target: f64,
    /// Batch, most runs per candidate, budget (for all gates together), seed.
    pub search: SearchBudget,
}

/// One gate's search.
pub struct GateResult {
    /// The gate.
    pub gate: SimDuration,
    /// Its search.
    pub search: Search,
    /// What it found.
    pub outcome: Outcome,
}

/// Parse `--gates 10s,20s,30s`.
pub fn parse_gates(s: &str) -> Result<Vec<SimDuration>, String> {
    let mut v = vec![];
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let d = SimDuration::parse(part).map_err(|m| format!("--gates {part}: {m}"))?;
        if d < SimDuration::from_secs(1) || d > SimDuration::from_secs(3600) {
            return Err(format!("--gates {part}: each gate must be in 1s..3600s"));
        }
        v.push(d);
    }
    if v.is_empty() {
        return Err("--gates: give at least one gate, e.g. 10s,30s,60s".into());
    }
    if v.len() > 20 {
        return Err(format!("--gates: {} gates; at most 20", v.len()));
    }
    v.sort();
    v.dedup();
    Ok(v)
}

/// The refresh intervals searched under gate `a`: 1 s .. 2A + 10 s, in steps of A/30
/// rounded to whole seconds (at least 1 s).
pub fn range_for(a: SimDuration) -> (String, String) {
    let secs = a.as_secs_f64();
    let step = (secs / 30.0).round().max(1.0) as u64;
    let top = ((2.0 * secs + 10.0) / step as f64).ceil() as u64 * step;
    (format!("{step}s..{top}s"), format!("{step}s"))
}

/// Run the frontier: one today's-knob search per gate, each at 5 % / gates, with what is left
/// of the budget. `progress` hears each decided candidate (gate, candidate, runs so far).
pub fn run(
    world: &WorldSpec,
    q: &Frontier,
    progress: &mut dyn FnMut(SimDuration, &Search, &Tested, u64),
) -> Result<Vec<GateResult>, String> {
    let total = q.search.budget.unwrap_or(super::DEFAULT_BUDGET);
    let mut left = total;
    let mut out = vec![];
    let share = super::alpha() / q.gates.len() as f64;
    for &gate in &q.gates {
        let (range, step) = range_for(gate);
        let t = Today {
            gate,
            vtgates: q.vtgates,
            target: q.target,
            range: Some(range),
            step: Some(step),
            search: SearchBudget {
                budget: Some(left),
                ..q.search.clone()
            },
            alpha: Some(share),
        };
        let (s, m) = today(world, &t)?;
        let done_before = total - left;
        let o = super::search(&s, |c, r| m.sample(c, r), &mut |t, n| {
            progress(gate, &s, t, done_before + n)
        });
        left = left.saturating_sub(o.runs);
        let spent = o.ending == super::Ending::BudgetSpent;
        out.push(GateResult {
            gate,
            search: s,
            outcome: o,
        });
        if spent || left < q.search.batch.unwrap_or(100) {
            break;
        }
    }
    Ok(out)
}

/// The chart of the frontier (see the module doc).
pub fn chart(q: &Frontier, res: &[GateResult]) -> ChartData {
    let pts: Vec<(f64, f64)> = res
        .iter()
        .filter_map(|g| {
            g.outcome
                .answer()
                .map(|a| (a.value.x, g.gate.as_secs_f64()))
        })
        .collect();
    let lo_x = res
        .iter()
        .filter_map(|g| g.search.candidates.first().map(|c| c.x))
        .fold(f64::INFINITY, f64::min)
        .min(1.0);
    let mut marks = vec![];
    if let (Some(first), Some(last)) = (pts.first(), pts.last()) {
        let mut poly = vec![(lo_x, first.1)];
        poly.extend(pts.iter().copied());
        poly.push((lo_x, last.1));
        marks.push(MarkLine::Shade {
            points: poly,
            label: format!(
                "safe: P(failed read per rollout) < {} at 95 %",
                super::show(q.target)
            ),
        });
    }
    // Cost contours: the fleet's polls/s = vtgates / T, at round rates, skipping one that
    // would sit within 9 % of the x range of the last one drawn (their labels would collide).
    let hi_x = pts.iter().map(|p| p.0).fold(0.0, f64::max).max(1.0);
    let mut last = f64::NEG_INFINITY;
    let rates = [
        20.0, 10.0, 5.0, 2.0, 1.0, 0.5, 0.3, 0.2, 0.15, 0.1, 0.05, 0.02, 0.01,
    ];
    for c in rates {
        let t = q.vtgates as f64 / c;
        if t < lo_x || t > hi_x || t - last < 0.09 * hi_x {
            continue;
        }
        last = t;
        marks.push(MarkLine::Note {
            x: t,
            label: format!("{c} polls/s"),
        });
    }
    marks.push(MarkLine::H {
        y: OPERATOR_GATE.as_secs_f64(),
        label: "operator's gate: 30 s in every release".into(),
    });
    marks.push(MarkLine::V {
        x: VTGATE_DEFAULT_REFRESH.as_secs_f64(),
        label: "vtgate's default refresh: 60 s".into(),
    });
    for g in res {
        if let Some(a) = g.outcome.answer() {
            marks.push(MarkLine::Answer {
                x: a.value.x,
                y: g.gate.as_secs_f64(),
                label: a.value.label.clone(),
                series: Some(0),
            });
        }
    }
    let gates: Vec<f64> = res.iter().map(|g| g.gate.as_secs_f64()).collect();
    let diag = Curve {
        label: "closed form, no delays: T = gate".into(),
        points: gates
            .iter()
            .map(|&a| CurvePoint {
                x: a,
                y: a,
                band: None,
            })
            .collect(),
        series_x: None,
    };
    ChartData {
        title: format!(
            "Largest safe refresh interval per Available gate ({} vtgates, risk < {})",
            q.vtgates,
            super::show(q.target)
        ),
        x_label: "vtgate --tablet_refresh_interval T (s); dotted: fleet topology polls/s".into(),
        y_label: "operator Available gate (s)".into(),
        log_x: false,
        log_y: false,
        curves: vec![
            Curve {
                label: "frontier: largest safe T (tested)".into(),
                points: pts
                    .iter()
                    .map(|&(x, y)| CurvePoint { x, y, band: None })
                    .collect(),
                series_x: None,
            },
            diag,
        ],
        marks,
    }
}

/// The Markdown account: one row per gate, then the answer at the operator's gate.
pub fn render(model: &str, q: &Frontier, res: &[GateResult]) -> String {
    let mut out = format!(
        "{model}: the largest safe vtgate --tablet_refresh_interval per Available gate, {} \
         vtgates, P(any failed replica read per rollout) below {} (each gate's search at \
         {} %, so all rows hold at once with probability ≥ 95 %)\n\n",
        q.vtgates,
        num(q.target),
        super::pct(super::alpha() / q.gates.len() as f64)
    );
    out.push_str(
        "| gate | largest safe refresh | P(failed read) | 95 % interval | runs (answer / search) \
         | fleet polls/s | rollout (s) |\n|---|---|---|---|---|---|---|\n",
    );
    for g in res {
        match g.outcome.answer() {
            Some(a) => out.push_str(&format!(
                "| {} | **{}** | {} | [{}, {}] | {} / {} | {} | {} |\n",
                duration_label(g.gate),
                a.value.label,
                num(a.estimate),
                num(a.ci95.0),
                num(a.ci95.1),
                a.runs,
                g.outcome.runs,
                num(polls_per_vtgate(a.value.x) * q.vtgates as f64),
                num(a.costs.get(1).copied().unwrap_or(f64::NAN)),
            )),
            None => out.push_str(&format!(
                "| {} | none in {}..{} ({}) | | | – / {} | | |\n",
                duration_label(g.gate),
                g.search.candidates.first().map_or("", |c| c.label.as_str()),
                g.search.candidates.last().map_or("", |c| c.label.as_str()),
                match g.outcome.ending {
                    super::Ending::BudgetSpent => "budget spent",
                    _ => "none cleared",
                },
                g.outcome.runs
            )),
        }
    }
    let runs: u64 = res.iter().map(|g| g.outcome.runs).sum();
    out.push_str(&format!(
        "\n{} runs in all over {} gates (seed {:#x}; common random numbers within each gate).\n",
        runs,
        res.len(),
        q.search.seed
    ));
    if res.len() < q.gates.len() {
        out.push_str(&format!(
            "The budget ran out after {} of the {} gates.\n",
            res.len(),
            q.gates.len()
        ));
    }
    if let Some(g) = res.iter().find(|g| g.gate == OPERATOR_GATE) {
        if let Some(a) = g.outcome.answer() {
            out.push_str(&format!(
                "Under today's 30 s gate: refresh at most **{}** ({} polls/s for the fleet, \
                 {:.2} × the 60 s default's).\n",
                a.value.label,
                num(polls_per_vtgate(a.value.x) * q.vtgates as f64),
                VTGATE_DEFAULT_REFRESH.as_secs_f64() / a.value.x
            ));
        }
    }
    out
}

/// The preset's part of the `--json` document.
pub fn preset_json(q: &Frontier, res: &[GateResult]) -> Value {
    json!({
        "name": "rollout-frontier",
        "vtgates": q.vtgates,
        "target_risk": q.target,
        "alpha_per_gate": super::alpha() / q.gates.len() as f64,
        "gates_s": q.gates.iter().map(|g| g.as_secs_f64()).collect::<Vec<_>>(),
        "frontier": res.iter().map(|g| {
            let a = g.outcome.answer();
            json!({
                "gate_s": g.gate.as_secs_f64(),
                "refresh_s": a.map(|t| t.value.x),
                "estimate": a.map(|t| t.estimate),
                "ci95": a.map(|t| json!([t.ci95.0, t.ci95.1])),
                "runs_answer": a.map(|t| t.runs),
                "runs_search": g.outcome.runs,
                "polls_per_s_fleet": a.map(|t| polls_per_vtgate(t.value.x) * q.vtgates as f64),
                "rollout_duration_s": a.and_then(|t| t.costs.get(1).copied()),
                "ending": super::ending_word(g.outcome.ending),
            })
        }).collect::<Vec<_>>(),
    })
}
