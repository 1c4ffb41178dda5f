//! proxysql: reads lost per replica-loss event with and without the writer in the reader
//! hostgroup, for the user's connect budget.
//!
//! `vtsim advise --preset proxysql --connect-budget 10s [--max-reads-lost 1]` on
//! `models/proxysql-reader-fallback.ron` (every replica killed at 10 s under a 2-thread
//! read-only sysbench client, 30 s more simulated): `mysql-connect_timeout_server_max` is set
//! to the budget (the longest a client waits for a backend connection) and the engine runs
//! twice, `servers.writer_in_reader_hostgroup` false and true (the community workaround),
//! each with the one candidate and at 2.5 %, so both rows hold at once with probability
//! ≥ 95 %. The metric is `reads_lost` (read errors returned to the client per event), judged
//! against `--max-reads-lost` by its mean (Student t); the read outage (`read_outage_s`: the
//! time with no successful read, the measure of reads that did not happen) and the time to
//! recover are shown beside it.

use super::{num, Ask, Direction, Outcome, Search, SearchBudget, Tested, Want};
use crate::experiment::plan::{duration_label, with_overrides, OverrideError};
use crate::model::WorldSpec;
use crate::sim::SimDuration;
use serde_json::{json, Value};

/// The connect budget's parameter.
pub const CONNECT: &str = "variables.connect_timeout_server_max";
/// The workaround's parameter.
pub const WRITER_IN_READERS: &str = "servers.writer_in_reader_hostgroup";

/// The question.
#[derive(Clone, Debug)]
pub struct Question {
    /// `mysql-connect_timeout_server_max`.
    pub connect_budget: SimDuration,
    /// The most read errors per event the user accepts.
    pub max_reads_lost: f64,
    /// Batch, most runs, budget, seed.
    pub search: SearchBudget,
}

/// One arm.
pub struct Row {
    /// The writer is in the reader hostgroup.
    pub writer_in_readers: bool,
    /// The search (one candidate).
    pub result: (Search, Outcome),
}

/// Run the preset.
pub fn run(
    world: &WorldSpec,
    q: &Question,
    progress: &mut dyn FnMut(&str, &Search, &Tested, u64),
) -> Result<Vec<Row>, String> {
    if world.kind() != "Proxysql" {
        return Err(format!(
            "--preset proxysql needs a Proxysql model (builtin:proxysql-reader-fallback); \
             --model is a {} model",
            world.kind()
        ));
    }
    if q.connect_budget < SimDuration::from_millis(10)
        || q.connect_budget > SimDuration::from_secs(600)
    {
        return Err("--connect-budget: must be in 10ms..10m".into());
    }
    if !(q.max_reads_lost >= 0.0 && q.max_reads_lost.is_finite()) {
        return Err("--max-reads-lost: must be a number ≥ 0".into());
    }
    let total = q.search.budget.unwrap_or(super::DEFAULT_BUDGET);
    let mut spent = 0;
    let mut rows = vec![];
    let c = duration_label(q.connect_budget);
    for on in [false, true] {
        let w =
            with_overrides(world, &[(WRITER_IN_READERS.to_string(), json!(on))]).map_err(|e| {
                match e {
                    OverrideError::At(_, m) | OverrideError::Whole(m) => {
                        format!("proxysql preset: {m}")
                    }
                }
            })?;
        let tag = format!("writer in readers: {}", if on { "yes" } else { "no" });
        let before = spent;
        let r = super::run_one(
            &w,
            &Ask {
                knob: CONNECT.into(),
                metric: "reads_lost".into(),
                exceeds: None,
                target: q.max_reads_lost,
                want: Want::Below,
                direction: Direction::Min,
                range: Some(format!("{c}..{c}")),
                step: Some("1s".into()),
                search: SearchBudget {
                    batch: Some(q.search.batch.unwrap_or(20)),
                    max_runs: Some(q.search.max_runs.unwrap_or(80)),
                    budget: Some(total.saturating_sub(spent).max(1)),
                    seed: q.search.seed,
                },
                costs: vec![
                    "read_outage_s".into(),
                    "time_to_recover_s".into(),
                    "recovered".into(),
                ],
                alpha: Some(super::alpha() / 2.0),
            },
            &|_| vec![],
            &mut |s, t, n| progress(&tag, s, t, before + n),
        )?;
        spent += r.1.runs;
        rows.push(Row {
            writer_in_readers: on,
            result: r,
        });
    }
    Ok(rows)
}

/// The Markdown account.
pub fn render(model: &str, q: &Question, rows: &[Row]) -> String {
    let mut out = format!(
        "{model}: read errors per replica-loss event with mysql-connect_timeout_server_max = {}, \
         with and without the writer in the reader hostgroup (each at 2.5 %, so both rows \
         hold at once with probability ≥ 95 %; the limit is {} read errors per event)\n\n",
        duration_label(q.connect_budget),
        num(q.max_reads_lost)
    );
    out.push_str(
        "| writer in reader hostgroup | read errors per event [95 %] | vs limit | read outage (s) \
         | time to recover (s) | recovered by the horizon | runs |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let o = &r.result.1;
        if let Some(t) = o.tested.first() {
            out.push_str(&format!(
                "| {} | **{}** [{}, {}] | {} | {} | {} | {:.0} % | {} |\n",
                if r.writer_in_readers { "yes" } else { "no" },
                num(t.estimate),
                num(t.ci95.0),
                num(t.ci95.1),
                match t.decision {
                    super::Decision::Clears => "below",
                    super::Decision::Misses => "above",
                    super::Decision::Undecided => "undecided",
                },
                num(t.costs[0]),
                num(t.costs[1]),
                t.costs[2] * 100.0,
                t.runs
            ));
        }
    }
    if let (Some(a), Some(b)) = (
        rows.first().and_then(|r| r.result.1.tested.first()),
        rows.get(1).and_then(|r| r.result.1.tested.first()),
    ) {
        out.push_str(&format!(
            "\nWith the writer in the reader hostgroup: {} read errors per event instead of {}, \
             and {} s without a successful read instead of {} s. `reads_lost` counts errors \
             returned to the client; a client waiting out the connect budget loses reads \
             without an error, which the read outage measures.\n",
            num(b.estimate),
            num(a.estimate),
            num(b.costs[0]),
            num(a.costs[0])
        ));
    }
    out
}

/// The preset's part of the `--json` document.
pub fn preset_json(q: &Question, rows: &[Row]) -> Value {
    json!({
        "name": "proxysql",
        "connect_budget_s": q.connect_budget.as_secs_f64(),
        "max_reads_lost": q.max_reads_lost,
        "alpha_per_search": super::alpha() / 2.0,
        "rows": rows.iter().map(|r| {
            let t = r.result.1.tested.first();
            json!({
                "writer_in_reader_hostgroup": r.writer_in_readers,
                "reads_lost": t.map(|t| t.estimate),
                "reads_lost_ci95": t.map(|t| json!([t.ci95.0, t.ci95.1])),
                "decision": t.map(|t| t.decision.word()),
                "read_outage_s": t.map(|t| t.costs[0]),
                "time_to_recover_s": t.map(|t| t.costs[1]),
                "recovered_frac": t.map(|t| t.costs[2]),
                "runs": r.result.1.runs,
            })
        }).collect::<Vec<_>>(),
    })
}
