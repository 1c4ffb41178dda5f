//! site_poller: the `failureThreshold` × `pollInterval` pairs that keep a second fault's
//! detection p99 under a budget with false alarms under N per day, at a probe error rate.
//!
//! `vtsim advise --preset site-poller [--probe-error 0.01] [--false-alarms-per-day 1]
//! [--detect-budget 75s] [--first-down 5m] [--intervals 1s,2s,5s,10s]` runs two searches of
//! `poller.failure_threshold` (1..8) per poll interval, each at 5 % / (2 × intervals), so every
//! row holds at once with probability ≥ 95 %:
//!
//! - **false alarms** (smallest threshold that is quiet enough): runs of one hour with every
//!   site answering and every probe failing with probability p; the 0/1 metric
//!   `any_false_unreachable` must be below 1 − e^(−N/24) (for alarms that arrive as a Poisson
//!   stream this is "fewer than N per day"; `false_unreachable_per_h` × 24 is shown beside
//!   it).
//! - **second-fault detection** (largest threshold that is fast enough): the model's second
//!   site goes dark-by-refusal at 60 s, the first site `--first-down` later (a phase uniform
//!   over 34 s, the longest gap between polls), with the same probe errors; the 0/1 event
//!   `detect_second_s > budget` must be below 1 % (that is, p99 below the budget). A fault not
//!   detected by the horizon (budget + 5 s after its window) counts as exceeding it.
//!
//! The pairs are the thresholds between the two answers, per interval.
//!
//! # Closed forms (what `tests/advise.rs` checks the runs against)
//! - False alarms: with independent probe errors, a site turns falsely Unreachable at a poll
//!   where its failure count reaches k while it is not already Unreachable: a success then k
//!   failures for a site that is believed again after one good answer (a read-only or a
//!   non-promotable site), r successes then k failures for a writable primary candidate with
//!   recoveryThreshold r (`computeState`). Per day: (86 400 / T) · p^k · Σ_sites (1 − p)^r_s.
//! - Detection: once the first site has been down a while its failure count holds the
//!   adaptive interval at I = min(T · 2^maxPollBackoffExponent, 30 s); the second site is
//!   believed Unreachable at its k-th failed poll, so its delay lies in ((k − 1) · I, k · I]
//!   (uniform over its phase): p99 ≈ (k − 0.01) · I.

use super::{answer_cells, num, Ask, Direction, Outcome, Search, SearchBudget, Tested, Want};
use crate::experiment::plan::{duration_label, with_overrides, OverrideError};
use crate::model::WorldSpec;
use crate::sim::SimDuration;
use serde_json::{json, Value};

/// The knob.
pub const THRESHOLD: &str = "poller.failure_threshold";
/// Hours per false-alarm run.
pub const FALSE_ALARM_RUN: SimDuration = SimDuration::from_secs(3600);
/// Default poll intervals.
pub const DEFAULT_INTERVALS: [u64; 4] = [1, 2, 5, 10];

/// The question.
#[derive(Clone, Debug)]
pub struct Question {
    /// Poll intervals, increasing.
    pub intervals: Vec<SimDuration>,
    /// Largest threshold tried (from 1).
    pub max_threshold: u32,
    /// Per-probe transient error probability.
    pub probe_error: f64,
    /// Most false Unreachable transitions per day, all sites.
    pub false_per_day: f64,
    /// Budget for the second fault's detection p99.
    pub detect_budget: SimDuration,
    /// How long the first site has been down when the second dies.
    pub first_down: SimDuration,
    /// Batch, most runs, budget (all searches together), seed.
    pub search: SearchBudget,
}

/// One interval's two searches.
pub struct Row {
    /// The poll interval.
    pub interval: SimDuration,
    /// The false-alarm search (smallest quiet threshold).
    pub quiet: (Search, Outcome),
    /// The detection search (largest fast threshold).
    pub fast: (Search, Outcome),
}

impl Row {
    /// The smallest threshold whose false alarms clear.
    pub fn k_quiet(&self) -> Option<u32> {
        self.quiet.1.answer().map(|t| t.value.x as u32)
    }
    /// The largest threshold whose detection clears.
    pub fn k_fast(&self) -> Option<u32> {
        self.fast.1.answer().map(|t| t.value.x as u32)
    }
    /// The thresholds that satisfy both (empty when none).
    pub fn pairs(&self) -> Vec<u32> {
        match (self.k_quiet(), self.k_fast()) {
            (Some(a), Some(b)) if a <= b => (a..=b).collect(),
            _ => vec![],
        }
    }
}

/// Parse `--intervals 1s,2s`.
pub fn parse_intervals(s: &str) -> Result<Vec<SimDuration>, String> {
    let mut v = vec![];
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let d = SimDuration::parse(part).map_err(|m| format!("--intervals {part}: {m}"))?;
        if d < SimDuration::from_millis(100) || d > SimDuration::from_secs(600) {
            return Err(format!("--intervals {part}: each must be in 100ms..10m"));
        }
        v.push(d);
    }
    if v.is_empty() || v.len() > 10 {
        return Err("--intervals: give 1 to 10 intervals, e.g. 1s,2s,5s".into());
    }
    v.sort();
    v.dedup();
    Ok(v)
}

fn sites(world: &WorldSpec) -> Vec<(String, bool, bool)> {
    // (name, primary candidate, initially writable)
    let p = world.params_json();
    p["sites"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        s["name"].as_str().unwrap_or("").to_string(),
                        s["role"]["kind"] == "PrimaryCandidate",
                        s["initial"]["kind"] == "Writable",
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Closed form: false Unreachable transitions per day (see the module doc).
pub fn false_per_day_closed(world: &WorldSpec, p: f64, k: u32, interval: SimDuration) -> f64 {
    let params = world.params_json();
    let r = params["poller"]["recovery_threshold"].as_u64().unwrap_or(2) as i32;
    let sum: f64 = sites(world)
        .iter()
        .map(|&(_, cand, writable)| {
            let rs = if cand && writable { r } else { 1 };
            (1.0 - p).powi(rs)
        })
        .sum();
    86_400.0 / interval.as_secs_f64() * p.powi(k as i32) * sum
}

/// The adaptive interval's ceiling: min(T · 2^maxPollBackoffExponent, max_interval).
pub fn backoff_ceiling(world: &WorldSpec, interval: SimDuration) -> f64 {
    let params = world.params_json();
    let e = params["poller"]["max_backoff_exponent"]
        .as_u64()
        .unwrap_or(4) as i32;
    let cap = params["poller"]["max_interval"]
        .as_str()
        .and_then(|s| SimDuration::parse(s).ok())
        .map_or(30.0, |d| d.as_secs_f64());
    let on = params["poller"]["adaptive_backoff"]
        .as_bool()
        .unwrap_or(true);
    if on {
        (interval.as_secs_f64() * 2f64.powi(e)).min(cap)
    } else {
        interval.as_secs_f64()
    }
}

/// The false-alarm target per one-hour run: 1 − e^(−N/24).
pub fn per_run_target(false_per_day: f64) -> f64 {
    1.0 - (-false_per_day * FALSE_ALARM_RUN.as_secs_f64() / 86_400.0).exp()
}

fn set(world: &WorldSpec, sets: Vec<(String, Value)>) -> Result<WorldSpec, String> {
    with_overrides(world, &sets).map_err(|e| match e {
        OverrideError::At(_, m) | OverrideError::Whole(m) => format!("site-poller preset: {m}"),
    })
}

/// Check the question; the error names the flag.
pub fn check(world: &WorldSpec, q: &Question) -> Result<(), String> {
    if world.kind() != "SitePoller" {
        return Err(format!(
            "--preset site-poller needs a SitePoller model (builtin:playground); --model is a {} model",
            world.kind()
        ));
    }
    if sites(world).len() < 2 {
        return Err("--preset site-poller: the model needs at least two sites".into());
    }
    if !(q.probe_error > 0.0 && q.probe_error < 0.5) {
        return Err(format!(
            "--probe-error {}: must be in (0, 0.5)",
            q.probe_error
        ));
    }
    if !(q.false_per_day > 0.0 && q.false_per_day <= 1000.0) {
        return Err(format!(
            "--false-alarms-per-day {}: must be in (0, 1000]",
            q.false_per_day
        ));
    }
    if q.detect_budget < SimDuration::from_secs(1) || q.detect_budget > SimDuration::from_secs(3600)
    {
        return Err("--detect-budget: must be in 1s..1h".into());
    }
    if q.first_down > SimDuration::from_secs(3600) {
        return Err("--first-down: at most 1h".into());
    }
    if !(1..=20).contains(&q.max_threshold) {
        return Err("--max-threshold: must be in 1..20".into());
    }
    Ok(())
}

/// Run the preset: two searches per interval (see the module doc).
pub fn run(
    world: &WorldSpec,
    q: &Question,
    progress: &mut dyn FnMut(&str, &Search, &Tested, u64),
) -> Result<Vec<Row>, String> {
    check(world, q)?;
    let names = sites(world);
    let (first, second) = (names[1].0.clone(), names[0].0.clone());
    let share = super::alpha() / (2 * q.intervals.len()) as f64;
    let total = q.search.budget.unwrap_or(super::DEFAULT_BUDGET);
    let mut spent = 0u64;
    let mut rows = vec![];
    let at_second = SimDuration::from_secs(60) + q.first_down;
    let window = SimDuration::from_secs(34);
    let horizon = at_second + window + q.detect_budget + SimDuration::from_secs(5);
    for &t in &q.intervals {
        let common = vec![
            ("poller.poll_interval".to_string(), json!(duration_label(t))),
            ("probes.flaky_p".to_string(), json!(q.probe_error)),
        ];
        let mut quiet_sets = common.clone();
        quiet_sets.push(("faults".into(), json!([])));
        quiet_sets.push(("horizon".into(), json!(duration_label(FALSE_ALARM_RUN))));
        let quiet_world = set(world, quiet_sets)?;
        let mut fast_sets = common;
        fast_sets.push((
            "faults".into(),
            json!([
                {"site": first, "at": "60s", "kind": {"kind": "Refused"}},
                {"site": second, "at": duration_label(at_second),
                 "phase": {"kind": "Uniform", "window": duration_label(window)},
                 "kind": {"kind": "Refused"}},
            ]),
        ));
        fast_sets.push(("horizon".into(), json!(duration_label(horizon))));
        let fast_world = set(world, fast_sets)?;
        let range = format!("1..{}", q.max_threshold);
        let mut ask = |w: &WorldSpec,
                       tag: &str,
                       ask: Ask,
                       spent: &mut u64|
         -> Result<(Search, Outcome), String> {
            let before = *spent;
            let mut a = ask;
            a.search.budget = Some(total.saturating_sub(before).max(1));
            let r = super::run_one(w, &a, &|_| vec![], &mut |s, t, n| {
                progress(tag, s, t, before + n)
            })?;
            *spent += r.1.runs;
            Ok(r)
        };
        let quiet = ask(
            &quiet_world,
            &format!("false alarms, interval {}", duration_label(t)),
            Ask {
                knob: THRESHOLD.into(),
                metric: "any_false_unreachable".into(),
                exceeds: None,
                target: per_run_target(q.false_per_day),
                want: Want::Below,
                direction: Direction::Min,
                range: Some(range.clone()),
                step: Some("1".into()),
                search: q.search.clone(),
                costs: vec!["false_unreachable_per_h".into(), "probes_per_s".into()],
                alpha: Some(share),
            },
            &mut spent,
        )?;
        let fast = ask(
            &fast_world,
            &format!("detection, interval {}", duration_label(t)),
            Ask {
                knob: THRESHOLD.into(),
                metric: "detect_second_s".into(),
                exceeds: Some(q.detect_budget.as_secs_f64()),
                target: 0.01,
                want: Want::Below,
                direction: Direction::Max,
                range: Some(range),
                step: Some("1".into()),
                search: q.search.clone(),
                costs: vec!["detect_second_s".into()],
                alpha: Some(share),
            },
            &mut spent,
        )?;
        let out_of_budget = quiet.1.ending == super::Ending::BudgetSpent
            || fast.1.ending == super::Ending::BudgetSpent;
        rows.push(Row {
            interval: t,
            quiet,
            fast,
        });
        if out_of_budget {
            break;
        }
    }
    Ok(rows)
}

/// The Markdown account.
pub fn render(model: &str, world: &WorldSpec, q: &Question, rows: &[Row]) -> String {
    let mut out = format!(
        "{model}: failureThreshold × pollInterval pairs with the second fault's detection p99 \
         under {} (the first site down {} before) and fewer than {} false Unreachable per day \
         at probe error rate {} ({} searches at {} % each, so every row holds at once with \
         probability ≥ 95 %)\n\n",
        duration_label(q.detect_budget),
        duration_label(q.first_down),
        num(q.false_per_day),
        num(q.probe_error),
        2 * q.intervals.len(),
        super::pct(super::alpha() / (2 * q.intervals.len()) as f64),
    );
    out.push_str(
        "| pollInterval | smallest quiet k | its false alarms/day [95 %] (closed form) | runs \
         | largest fast k | its P(delay > budget) [95 %], mean delay (closed-form max k·I) | runs \
         | pairs (k) | probes/s |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let t = r.interval;
        let q_cell = match r.quiet.1.answer() {
            Some(a) => format!(
                "**{}** | {} [{}, {}] ({}) | {}",
                a.value.label,
                num(a.costs[0] * 24.0),
                num(-(1.0 - a.ci95.0).ln() * 24.0),
                num(-(1.0 - a.ci95.1).ln() * 24.0),
                num(false_per_day_closed(
                    world,
                    q.probe_error,
                    a.value.x as u32,
                    t
                )),
                a.runs
            ),
            None => format!("none ≤ {} | | {}", q.max_threshold, r.quiet.1.runs),
        };
        let f_cell = match r.fast.1.answer() {
            Some(a) => format!(
                "{}, {} s ({} s) | {}",
                answer_cells(a),
                num(a.costs[0]),
                num(a.value.x * backoff_ceiling(world, t)),
                a.runs
            ),
            None => format!("none ≥ 1 | | {}", r.fast.1.runs),
        };
        let pairs = r.pairs();
        let probes = r
            .quiet
            .1
            .answer()
            .map_or(String::new(), |a| num(a.costs[1]));
        out.push_str(&format!(
            "| {} | {q_cell} | {f_cell} | {} | {probes} |\n",
            duration_label(t),
            if pairs.is_empty() {
                "none".to_string()
            } else {
                pairs
                    .iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    let runs: u64 = rows.iter().map(|r| r.quiet.1.runs + r.fast.1.runs).sum();
    out.push_str(&format!(
        "\n{runs} runs in all (false alarms: one-hour runs, all sites answering; detection: the \
         second site refused {} after the first; seed {:#x}).\n",
        duration_label(q.first_down),
        q.search.seed
    ));
    let ok: Vec<String> = rows
        .iter()
        .filter(|r| !r.pairs().is_empty())
        .map(|r| {
            let p = r.pairs();
            format!(
                "pollInterval {} with failureThreshold {}",
                duration_label(r.interval),
                if p.len() == 1 {
                    p[0].to_string()
                } else {
                    format!("{}..{}", p[0], p[p.len() - 1])
                }
            )
        })
        .collect();
    if ok.is_empty() {
        out.push_str(
            "No pair meets both: ease the detection budget or the false-alarm limit, or try \
             shorter intervals.\n",
        );
    } else {
        out.push_str(&format!("Pairs that meet both: **{}**.\n", ok.join("; ")));
    }
    out
}

/// The preset's part of the `--json` document.
pub fn preset_json(world: &WorldSpec, q: &Question, rows: &[Row]) -> Value {
    json!({
        "name": "site-poller",
        "probe_error": q.probe_error,
        "false_alarms_per_day": q.false_per_day,
        "per_run_target": per_run_target(q.false_per_day),
        "detect_budget_s": q.detect_budget.as_secs_f64(),
        "first_down_s": q.first_down.as_secs_f64(),
        "alpha_per_search": super::alpha() / (2 * q.intervals.len()) as f64,
        "rows": rows.iter().map(|r| json!({
            "interval_s": r.interval.as_secs_f64(),
            "smallest_quiet_threshold": r.k_quiet(),
            "false_per_day": r.quiet.1.answer().map(|a| a.costs[0] * 24.0),
            "false_per_day_closed_form": r.k_quiet().map(|k| false_per_day_closed(world, q.probe_error, k, r.interval)),
            "largest_fast_threshold": r.k_fast(),
            "p_delay_over_budget": r.fast.1.answer().map(|a| a.estimate),
            "p_delay_over_budget_ci95": r.fast.1.answer().map(|a| json!([a.ci95.0, a.ci95.1])),
            "detect_max_closed_form_s": r.k_fast().map(|k| k as f64 * backoff_ceiling(world, r.interval)),
            "pairs": r.pairs(),
            "runs": r.quiet.1.runs + r.fast.1.runs,
        })).collect::<Vec<_>>(),
    })
}
