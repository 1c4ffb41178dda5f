//! fleet: the smallest replicas × pool capacity that survives a rolling restart at a given
//! replica read rate (issue 13, item 3).
//!
//! `vtsim advise --preset fleet [--read-rps 1000] [--replicas 2..3] [--gate 120s]
//! [--target 0.1] [--variant Unfixed]` on `models/fleet-default.ron`: for each replica count
//! R of `--replicas`, the engine's search of `pool.capacity` (step 1) for the smallest
//! capacity whose P(any pool timeout per rollout) (`any_pool_timeout`) is below `--target`,
//! with `replicas_per_shard` = R, `--read-rps` replica reads/s per shard and the gate
//! (`operator.tablet_available_timeout`) set. Each search is at 5 % / (replica counts), so
//! every row holds at once with probability ≥ 95 %. The answer is the row with the fewest
//! connections in all (R × capacity); a tie goes to fewer replicas (a tablet, with its
//! mysqld and its pod, costs more than connections).
//!
//! # Why `any_pool_timeout` and not `any_failed_read`
//! The pool's capacity decides the pool timeouts. The other causes (no healthy tablet,
//! routed to a dead tablet) are the gate's and the refresh interval's (`docs/fleet.md`):
//! with two replicas and a short gate every rollout has them at any capacity, so a search on
//! `any_failed_read` would say "no capacity" where the answer is "change the gate". P(any
//! failed read) is reported beside each row as a cost, so what the gate leaves shows.
//!
//! # The Erlang floor
//! While one replica is drained a survivor receives λ / (R − 1) of the shard's λ reads/s;
//! its offered load is a = λ / (R − 1) × mean query time erlangs, and a pool of fewer than a
//! connections cannot serve it. The search starts at ⌈a⌉ and runs up to ⌈a⌉ + max(8, ⌈4√a⌉)
//! (square-root staffing: a queue with deadlines needs about a + β√a servers, β a few).
//!
//! # The shortened rollout (a choice, stated in the output)
//! The default fleet rollout restarts R replicas and then the primary (PRS), each behind a
//! 120 s gate, and runs 30 s on: 0.3-0.6 s a run at 1000 reads/s. So that the preset takes
//! about a minute on two cores, it restarts the replicas only (`operator.restart_primary`
//! false: the demoted primary's drain is one more drain of one replica, with the same load on
//! the same R − 1 survivors) and ends 5 s after the rollout (`tail`). A parameter the user
//! sets with `--set` is left as set (`--set operator.restart_primary=true --set tail=30s`
//! runs the whole rollout).

use super::{answer_cells, num, Ask, Direction, Outcome, Search, SearchBudget, Tested, Want};
use crate::chart::{ChartData, Curve, CurvePoint, MarkLine};
use crate::experiment::plan::{duration_label, with_overrides, OverrideError};
use crate::model::WorldSpec;
use crate::sim::SimDuration;
use serde_json::{json, Value};

/// The metric the capacity must clear.
pub const METRIC: &str = "any_pool_timeout";
/// Default `--target`: P(any pool timeout per rollout) below 10 %.
pub const DEFAULT_TARGET: f64 = 0.1;
/// Default `--read-rps`: replica reads/s per shard.
pub const DEFAULT_READ_RPS: f64 = 1000.0;
/// Largest `--read-rps`.
pub const MAX_READ_RPS: f64 = 1e6;
/// Largest replica count.
pub const MAX_REPLICAS: u32 = 16;
/// Default `--gate` (vitess-operator PR #797's 2 × the 60 s refresh interval).
pub const DEFAULT_GATE: SimDuration = SimDuration::from_secs(120);
/// Largest `--gate`.
pub const MAX_GATE: SimDuration = SimDuration::from_secs(600);
/// The costs reported beside each answer (means per rollout).
pub const COSTS: [&str; 4] = [
    "goodput",
    "pool_timeouts",
    "any_failed_read",
    "rollout_duration_s",
];

/// The settings that shorten the rollout (module doc), as `--set` would write them.
pub fn shortening() -> Vec<(String, Value)> {
    vec![
        ("operator.restart_primary".into(), json!(false)),
        ("tail".into(), json!("5s")),
    ]
}

/// The question.
#[derive(Clone, Debug)]
pub struct Question {
    /// Replica reads/s per shard (λ).
    pub read_rps: f64,
    /// Replica counts, lowest and highest.
    pub replicas: (u32, u32),
    /// `operator.tablet_available_timeout`.
    pub gate: SimDuration,
    /// P(any pool timeout per rollout) must be below this.
    pub target: f64,
    /// The waitlist variant (`None`: the model's).
    pub variant: Option<String>,
    /// vtgates (`None`: the model's).
    pub vtgates: Option<u32>,
    /// Parameter paths the user set (`--set`): the shortening leaves them alone.
    pub keep: Vec<String>,
    /// Batch, most runs per candidate, budget (all searches together), seed.
    pub search: SearchBudget,
}

/// One replica count's search.
pub struct Row {
    /// Replicas per shard.
    pub replicas: u32,
    /// A survivor's offered load while one replica is drained, λ / (R − 1) × mean (erlangs).
    pub erlangs: f64,
    /// ⌈erlangs⌉: the smallest capacity searched.
    pub floor: u32,
    /// The capacity search.
    pub result: (Search, Outcome),
}

impl Row {
    /// The smallest capacity that cleared.
    pub fn capacity(&self) -> Option<u32> {
        self.result.1.answer().map(|t| t.value.x as u32)
    }
    /// Connections in all, R × capacity.
    pub fn connections(&self) -> Option<u32> {
        self.capacity().map(|c| c * self.replicas)
    }
}

/// Parse `--replicas 2..4` (or one count, `3`); a shard needs at least two replicas, so
/// that a drained one leaves a survivor.
pub fn parse_replicas(s: &str) -> Result<(u32, u32), String> {
    let one = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("--replicas {s}: expected A..B or N, counts of replicas"))
    };
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (one(a)?, one(b)?),
        None => (one(s)?, one(s)?),
    };
    if a > b {
        return Err(format!("--replicas {s}: A is above B"));
    }
    if a < 2 {
        return Err(format!(
            "--replicas {s}: at least 2 replicas per shard (with {a} a drained replica leaves \
             no survivor: every read fails with no healthy tablet, at any capacity)"
        ));
    }
    if b > MAX_REPLICAS {
        return Err(format!("--replicas {s}: at most {MAX_REPLICAS}"));
    }
    Ok((a, b))
}

/// The variant as a model file writes it (`--variant fixed` → `Fixed`).
pub fn parse_variant(s: &str) -> Result<String, String> {
    super::connpool::VARIANTS
        .iter()
        .find(|n| n.eq_ignore_ascii_case(s.trim()))
        .map(|n| n.to_string())
        .ok_or_else(|| {
            format!(
                "--variant {s}: not a variant; one of {}",
                super::connpool::VARIANTS.join(", ")
            )
        })
}

/// The mean query time (s) of a Fleet world.
pub fn mean_service(world: &WorldSpec) -> Result<f64, String> {
    match world {
        WorldSpec::Fleet(p) => Ok(p.reads.service.mean_s()),
        other => Err(format!(
            "--preset fleet needs a Fleet model (builtin:fleet-default); --model is a {} model",
            other.kind()
        )),
    }
}

/// A survivor's offered load (erlangs) while one of `r` replicas is drained.
pub fn erlangs(read_rps: f64, r: u32, service_s: f64) -> f64 {
    read_rps / (r - 1) as f64 * service_s
}

/// ⌈a⌉ (at least 1), robust to a product like 1000 × 0.01 landing a hair above 10.
pub fn floor_of(a: f64) -> u32 {
    ((a * 1e9).round() / 1e9).ceil().max(1.0) as u32
}

/// The top of the capacity range for floor `f` and load `a`: f + max(8, ⌈4√a⌉).
pub fn range_top(f: u32, a: f64) -> u32 {
    f + 8u32.max((4.0 * a.sqrt()).ceil() as u32)
}

fn set(world: &WorldSpec, flag: &str, sets: &[(String, Value)]) -> Result<WorldSpec, String> {
    with_overrides(world, sets).map_err(|e| match e {
        OverrideError::At(_, m) | OverrideError::Whole(m) => format!("{flag}: {m}"),
    })
}

/// `world` with the gate, the variant and the shortening (module doc) set, after checking
/// the question's bounds; the error names the flag.
pub fn prepared(world: &WorldSpec, q: &Question) -> Result<WorldSpec, String> {
    mean_service(world)?;
    if !(q.read_rps > 0.0 && q.read_rps <= MAX_READ_RPS) {
        return Err(format!(
            "--read-rps {}: must be in (0, {MAX_READ_RPS:.0e}] replica reads/s per shard",
            super::show(q.read_rps)
        ));
    }
    parse_replicas(&format!("{}..{}", q.replicas.0, q.replicas.1))?;
    if q.gate > MAX_GATE {
        return Err(format!(
            "--gate {}: at most {}",
            duration_label(q.gate),
            duration_label(MAX_GATE)
        ));
    }
    if !(q.target > 0.0 && q.target < 1.0) {
        return Err(format!(
            "--target {}: P(any pool timeout per rollout) must be in (0, 1)",
            super::show(q.target)
        ));
    }
    let mut sets = vec![(
        "operator.tablet_available_timeout".to_string(),
        json!(duration_label(q.gate)),
    )];
    if let Some(n) = q.vtgates {
        sets.push(("vtgates".into(), json!(n)));
    }
    if let Some(v) = &q.variant {
        sets.push(("variant".into(), json!({ "kind": parse_variant(v)? })));
    }
    sets.extend(
        shortening()
            .into_iter()
            .filter(|(p, _)| !q.keep.iter().any(|k| k == p)),
    );
    set(world, "--preset fleet", &sets)
}

/// `w` with `r` replicas per shard and `read_rps` replica reads/s per shard (spread over the
/// vtgates: `reads.rate` = PerVtgate with λ × shards / vtgates).
pub fn with_replicas(w: &WorldSpec, read_rps: f64, r: u32) -> Result<WorldSpec, String> {
    let (vtgates, shards) = match w {
        WorldSpec::Fleet(p) => (p.vtgates.max(1), p.shards.max(1)),
        _ => return Err(mean_service(w).unwrap_err()),
    };
    let rps = read_rps * shards as f64 / vtgates as f64;
    set(
        w,
        &format!("--read-rps {} with --replicas {r}", num(read_rps)),
        &[
            ("replicas_per_shard".into(), json!(r)),
            (
                "reads.rate".into(),
                json!({"kind": "PerVtgate", "rps": rps}),
            ),
        ],
    )
}

/// The engine's search of `pool.capacity` in `lo..=hi` (step 1) on `w` (a [`prepared`]
/// world) with `r` replicas and `read_rps` reads/s: the smallest capacity whose
/// P(any pool timeout per rollout) is below `target`, at error `alpha`.
#[allow(clippy::too_many_arguments)]
pub fn capacity_search(
    w: &WorldSpec,
    read_rps: f64,
    r: u32,
    (lo, hi): (u32, u32),
    target: f64,
    search: SearchBudget,
    alpha: f64,
    progress: &mut dyn FnMut(&Search, &Tested, u64),
) -> Result<(Search, Outcome), String> {
    let w = with_replicas(w, read_rps, r)?;
    super::run_one(
        &w,
        &Ask {
            knob: "pool.capacity".into(),
            metric: METRIC.into(),
            exceeds: None,
            target,
            want: Want::Below,
            direction: Direction::Min,
            range: Some(format!("{lo}..{hi}")),
            step: Some("1".into()),
            search,
            costs: COSTS.iter().map(|c| c.to_string()).collect(),
            alpha: Some(alpha),
        },
        &|_| vec![],
        progress,
    )
}

/// The default most runs per candidate: the fewest (a multiple of `batch`) at which a
/// candidate with no pool timeout at all clears `target` at the search's own level (the
/// engine's default is three times that, so that one with a few can clear too; here a
/// capacity with any timeout in that many rollouts stays undecided, and the next one is
/// tried: the cliff is steep, and a run costs a rollout).
pub fn clear_runs(target: f64, candidates: u32, batch: u64, alpha: f64) -> u64 {
    let batch = batch.max(1);
    let mut n = batch;
    for _ in 0..16 {
        let k = super::looks(batch, n).len() as u64;
        let z = crate::stats::z_two_sided(super::alpha_per_look_at(alpha, candidates.into(), k));
        let need = super::zero_event_runs(target, z).floor() as u64 + 1;
        let m = need.div_ceil(batch) * batch;
        if m <= n {
            break;
        }
        n = m;
    }
    n
}

/// The searches the preset runs: one per replica count.
pub fn searches(q: &Question) -> usize {
    (q.replicas.1 - q.replicas.0 + 1) as usize
}

/// Run the preset (see the module doc).
pub fn run(
    world: &WorldSpec,
    q: &Question,
    progress: &mut dyn FnMut(&str, &Search, &Tested, u64),
) -> Result<Vec<Row>, String> {
    let w = prepared(world, q)?;
    let service = mean_service(world)?;
    let share = super::alpha() / searches(q) as f64;
    let total = q.search.budget.unwrap_or(super::DEFAULT_BUDGET);
    let batch = q.search.batch.unwrap_or(10);
    let mut spent = 0u64;
    let mut rows = vec![];
    for r in q.replicas.0..=q.replicas.1 {
        let a = erlangs(q.read_rps, r, service);
        let floor = floor_of(a);
        let tag = format!("{r} replicas");
        let before = spent;
        let result = capacity_search(
            &w,
            q.read_rps,
            r,
            (floor, range_top(floor, a)),
            q.target,
            SearchBudget {
                batch: Some(batch),
                max_runs: Some(q.search.max_runs.unwrap_or_else(|| {
                    clear_runs(q.target, range_top(floor, a) - floor + 1, batch, share)
                })),
                budget: Some(total.saturating_sub(spent).max(1)),
                seed: q.search.seed,
            },
            share,
            &mut |s, t, n| progress(&tag, s, t, before + n),
        )?;
        spent += result.1.runs;
        let out = result.1.ending == super::Ending::BudgetSpent;
        rows.push(Row {
            replicas: r,
            erlangs: a,
            floor,
            result,
        });
        if out {
            break;
        }
    }
    Ok(rows)
}

/// The answer: the row with the fewest connections in all; a tie goes to fewer replicas.
pub fn best(rows: &[Row]) -> Option<&Row> {
    rows.iter()
        .filter_map(|r| r.connections().map(|c| (c, r.replicas, r)))
        .min_by_key(|&(c, n, _)| (c, n))
        .map(|(_, _, r)| r)
}

fn settings_line(q: &Question) -> String {
    let applied: Vec<String> = shortening()
        .into_iter()
        .filter(|(p, _)| !q.keep.iter().any(|k| k == p))
        .map(|(p, v)| format!("{p} = {}", v.as_str().map_or(v.to_string(), str::to_string)))
        .collect();
    if applied.is_empty() {
        "Rollout: as the model (and --set) give it, not shortened.".into()
    } else {
        format!(
            "Rollout shortened (a choice, so the preset runs in about a minute): {} (the \
             replicas restart, the primary does not; its drain would be one more drain of \
             one replica on the same R − 1 survivors). `--set operator.restart_primary=true \
             --set tail=30s` runs the whole rollout.",
            applied.join(", ")
        )
    }
}

/// The Markdown account.
pub fn render(model: &str, world: &WorldSpec, q: &Question, rows: &[Row]) -> String {
    let service = mean_service(world).unwrap_or(f64::NAN);
    let variant = q.variant.clone().unwrap_or_else(|| {
        world.params_json()["variant"]["kind"]
            .as_str()
            .unwrap_or("?")
            .to_string()
    });
    let mut out = format!(
        "{model}: per replica count, the smallest pool capacity with P(any pool timeout per \
         rollout) below {} at 95 %, at {} replica reads/s per shard (mean query {} ms), gate \
         {}, variant {variant} ({} at {} % each, so every row holds at once with \
         probability ≥ 95 %)\n{}\n\n",
        super::show(q.target),
        num(q.read_rps),
        num(service * 1e3),
        duration_label(q.gate),
        match searches(q) {
            1 => "one search".to_string(),
            n => format!("{n} searches"),
        },
        super::pct(super::alpha() / searches(q) as f64),
        settings_line(q),
    );
    out.push_str(
        "| replicas R | survivor's load a = λ/(R−1) × mean (erlangs) | Erlang floor ⌈a⌉ \
         | smallest capacity | P(any pool timeout) [95 %] | connections R × c | goodput \
         | pool timeouts | P(any failed read) | tested (runs) |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (s, o) = &r.result;
        let tested: Vec<String> = o
            .tested
            .iter()
            .map(|t| format!("{} {} ({})", t.value.label, t.decision.word(), t.runs))
            .collect();
        let mid = match o.answer() {
            Some(t) => format!(
                "{} | {} | {} | {} | {}",
                answer_cells(t),
                t.value.x as u32 * r.replicas,
                num(t.costs[0]),
                num(t.costs[1]),
                num(t.costs[2]),
            ),
            None => format!(
                "{} | | | | | ",
                match o.ending {
                    super::Ending::BudgetSpent => "budget spent".to_string(),
                    _ => format!(
                        "none ≤ {}",
                        s.candidates.last().map_or("?".into(), |c| c.label.clone())
                    ),
                }
            ),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {mid} | {} |\n",
            r.replicas,
            num(r.erlangs),
            r.floor,
            tested.join(", ")
        ));
    }
    let runs: u64 = rows.iter().map(|r| r.result.1.runs).sum();
    out.push('\n');
    match best(rows) {
        Some(b) => out.push_str(&format!(
            "Answer: **{} replicas × capacity {} = {} connections** (the fewest in all; a tie \
             goes to fewer replicas). A survivor runs at {} of its capacity while one replica \
             is drained.\n",
            b.replicas,
            b.capacity().unwrap_or(0),
            b.connections().unwrap_or(0),
            num(b.erlangs / b.capacity().unwrap_or(1) as f64),
        )),
        None => out.push_str("No replica count cleared the target in its range.\n"),
    }
    out.push_str(&format!(
        "{runs} rollouts in all (seed {:#x}). Goodput, pool timeouts and P(any failed read, \
         any cause) are the answer's means per rollout; a failed read that is not a pool \
         timeout is the gate's (no healthy tablet, routed to a dead one), which capacity does \
         not fix.\n",
        q.search.seed,
    ));
    out
}

/// The preset's part of the `--json` document.
pub fn preset_json(q: &Question, rows: &[Row]) -> Value {
    let b = best(rows);
    json!({
        "name": "fleet",
        "metric": METRIC,
        "target": q.target,
        "read_rps": q.read_rps,
        "replicas": [q.replicas.0, q.replicas.1],
        "gate_s": q.gate.as_secs_f64(),
        "variant": q.variant,
        "shortened": shortening().into_iter()
            .filter(|(p, _)| !q.keep.iter().any(|k| k == p))
            .collect::<serde_json::Map<_, _>>(),
        "alpha_per_search": super::alpha() / searches(q) as f64,
        "rows": rows.iter().map(|r| {
            let t = r.result.1.answer();
            json!({
                "replicas": r.replicas,
                "erlangs": r.erlangs,
                "erlang_floor": r.floor,
                "smallest_capacity": r.capacity(),
                "connections": r.connections(),
                "p_any_pool_timeout": t.map(|t| t.estimate),
                "p_any_pool_timeout_ci95": t.map(|t| json!([t.ci95.0, t.ci95.1])),
                "goodput": t.map(|t| t.costs[0]),
                "pool_timeouts": t.map(|t| t.costs[1]),
                "p_any_failed_read": t.map(|t| t.costs[2]),
                "rollout_duration_s": t.map(|t| t.costs[3]),
                "ending": super::ending_word(r.result.1.ending),
                "runs": r.result.1.runs,
            })
        }).collect::<Vec<_>>(),
        "answer": b.map(|b| json!({
            "replicas": b.replicas,
            "capacity": b.capacity(),
            "connections": b.connections(),
        })),
    })
}

/// The chart: the smallest capacity per replica count beside the Erlang floor, the answer
/// marked.
pub fn chart(q: &Question, rows: &[Row]) -> ChartData {
    let pt = |x: f64, y: f64| CurvePoint { x, y, band: None };
    let found: Vec<CurvePoint> = rows
        .iter()
        .filter_map(|r| r.capacity().map(|c| pt(r.replicas as f64, c as f64)))
        .collect();
    let best_r = best(rows).map(|b| b.replicas);
    let marks = rows
        .iter()
        .filter_map(|r| {
            let c = r.capacity()?;
            Some(MarkLine::Answer {
                x: r.replicas as f64,
                y: c as f64,
                label: format!(
                    "{c} ({} in all{})",
                    c * r.replicas,
                    if Some(r.replicas) == best_r {
                        ": fewest"
                    } else {
                        ""
                    }
                ),
                series: Some(0),
            })
        })
        .collect();
    ChartData {
        title: format!(
            "Smallest pool capacity per replica count, {} reads/s per shard, gate {}",
            num(q.read_rps),
            duration_label(q.gate)
        ),
        x_label: "replicas per shard R".into(),
        y_label: "pool capacity per vttablet (connections)".into(),
        log_x: false,
        log_y: false,
        curves: vec![
            Curve {
                label: format!(
                    "smallest capacity with P(any pool timeout) < {} (tested)",
                    super::show(q.target)
                ),
                points: found,
                series_x: None,
            },
            Curve {
                label: "Erlang floor ⌈λ/(R−1) × mean query⌉".into(),
                points: rows
                    .iter()
                    .map(|r| pt(r.replicas as f64, r.floor as f64))
                    .collect(),
                series_x: None,
            },
        ],
        marks,
    }
}
