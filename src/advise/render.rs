//! The rendering of a search: its Markdown account ([`render`]), its `--json` document
//! ([`to_json`], and a preset's, [`preset_doc`]), and the number formats they share ([`num`],
//! [`show`], [`pct`]).

use super::{
    ending_word, Decision, Direction, Ending, Outcome, Search, Tested, Want, JSON_VERSION,
};
use crate::model::MetricKind;
use serde_json::{json, Value};

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
