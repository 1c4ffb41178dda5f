//! `vtsim advise --refresh-interval`: the rollout's smallest safe gate for a refresh interval.

use crate::cli::bad;
use crate::cli::progress::{lock, Ticker};
use anyhow::Result;
use std::process::ExitCode;
use std::time::Instant;
use vtsim::advise;

/// `advise --refresh-interval`: the smallest safe gate for a refresh interval.
#[allow(clippy::too_many_arguments)]
pub fn advise_gate(
    world: &vtsim::model::WorldSpec,
    refresh_interval: &str,
    vtgates: u32,
    target_risk: f64,
    rollouts: Option<u64>,
    step: &str,
    search: advise::SearchBudget,
    model_name: &str,
    json: bool,
    pool: &rayon::ThreadPool,
) -> Result<ExitCode> {
    use vtsim::model::rollout::advise as gate;
    let dur = |flag: &str, v: &str| {
        vtsim::sim::SimDuration::parse(v).map_err(|m| bad(format!("{flag}: {m}")))
    };
    let refresh = dur("--refresh-interval", refresh_interval)?;
    let step = dur("--step", step)?;
    if vtgates == 0 {
        return Err(bad("--vtgates must be at least 1"));
    }
    gate::check_request(refresh, step, target_risk, rollouts).map_err(bad)?;
    let q = advise::rollout::GateFor {
        refresh,
        vtgates,
        target: target_risk,
        step,
        search: advise::SearchBudget {
            batch: search.batch.or(rollouts.map(|n| n.min(100))),
            max_runs: search.max_runs.or(rollouts),
            ..search
        },
    };
    eprintln!(
        "vtsim advise: gates 0s..{} in steps of {}, the engine's sequential test...",
        vtsim::experiment::plan::duration_label(gate::max_gate(refresh)),
        vtsim::experiment::plan::duration_label(step)
    );
    let t0 = Instant::now();
    let ticker = std::sync::Mutex::new(Ticker::new());
    let a = pool
        .install(|| {
            advise::rollout::gate_for(
                world,
                &q,
                &mut |s, t, n| lock(&ticker).decided(s, t, n),
                &mut |s, c, n| lock(&ticker).runs(&s.knob, &s.candidates[c].label, n),
            )
        })
        .map_err(bad)?;
    let ticker = ticker.into_inner().unwrap_or_else(|e| e.into_inner());
    ticker.finish();
    if json {
        let mut searches = vec![(&a.scan.0, &a.scan.1)];
        let _ = &mut searches;
        let refs: Vec<serde_json::Value> = a
            .references
            .iter()
            .map(|(l, t)| {
                serde_json::json!({"label": l, "gate": t.value.label, "gate_s": t.value.x,
                    "estimate": t.estimate, "ci95": [t.ci95.0, t.ci95.1], "runs": t.runs,
                    "decision": t.decision.word(), "rollout_duration_s": t.costs[1]})
            })
            .collect();
        let mut v = advise::to_json(model_name, world.kind(), &a.scan.0, &a.scan.1);
        v["preset"] = serde_json::json!({
            "name": "rollout-gate",
            "refresh_s": refresh.as_secs_f64(),
            "vtgates": vtgates,
            "target_risk": target_risk,
            "references": refs,
            "runs_with_references": a.runs,
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print!("{}", advise::rollout::render_gate_for(&q, &a));
    }
    eprintln!("({:.1} s)", t0.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}
