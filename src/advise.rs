//! `vtsim advise`: the smallest `tablet_available_timeout` whose risk of any failed replica
//! read per rollout is below a target, with the rollout time it costs, next to the seed's
//! 1.5 × refresh-interval rule of thumb and the 2 × rule of vitess-operator PR #797.
//!
//! "Below the target" means the upper end of the 95 % Wilson interval of P(any error per
//! rollout) is below it, so the answer carries its own uncertainty: with the default number of
//! rollouts per gate, zero errors in every rollout is what it takes at a 1e-3 target.
//! Every gate is simulated with the same seeds (common random numbers).

use crate::experiment::plan::{apply_override, duration_label};
use crate::model::{RunOptions, WorldSpec};
use crate::sim::rng::replicate_seed;
use crate::sim::SimDuration;
use crate::stats::{summarize, wilson, z_critical, Summary};
use rayon::prelude::*;

/// Parameter paths advise sets in the rollout model.
pub const REFRESH: &str = "vtgate.tablet_refresh_interval";
/// Number of vtgates.
pub const VTGATES: &str = "vtgates";
/// The Available gate.
pub const GATE: &str = "operator.tablet_available_timeout";

/// One evaluated gate.
#[derive(Clone, Debug)]
pub struct GateResult {
    /// The gate.
    pub gate: SimDuration,
    /// Rollouts simulated.
    pub n: u64,
    /// Rollouts with at least one failed read.
    pub with_errors: u64,
    /// Wilson 95 % interval of P(any error per rollout).
    pub p_ci: (f64, f64),
    /// Failed reads per rollout.
    pub errors: Summary,
    /// Rollout duration per rollout, seconds.
    pub duration_s: Summary,
}

impl GateResult {
    /// Point estimate of P(any error per rollout).
    pub fn p(&self) -> f64 {
        self.with_errors as f64 / self.n as f64
    }
}

/// What advise found.
#[derive(Clone, Debug)]
pub struct Advice {
    /// Refresh interval asked about.
    pub refresh: SimDuration,
    /// vtgates asked about.
    pub vtgates: u32,
    /// Target risk.
    pub target: f64,
    /// The smallest passing gate of the scan, if one passed.
    pub recommended: Option<GateResult>,
    /// Every gate scanned, in order.
    pub scanned: Vec<GateResult>,
    /// The rules of thumb and today's default: (label, result).
    pub references: Vec<(String, GateResult)>,
}

/// Rollouts per gate so that zero errors in all of them puts the Wilson upper bound below
/// `target` (with 10 % to spare).
pub fn rollouts_for(target: f64) -> u64 {
    let z2 = z_critical().powi(2);
    ((z2 / target) * 1.1).ceil().max(100.0) as u64
}

fn with(world: &WorldSpec, sets: &[(&str, serde_json::Value)]) -> Result<WorldSpec, String> {
    let mut p = world.params_json();
    for (k, v) in sets {
        apply_override(&mut p, k, v.clone()).map_err(|m| format!("{k}: {m}"))?;
    }
    let w = world.with_params_json(p)?;
    w.validate().map_err(|(f, m)| format!("field `{f}`: {m}"))?;
    Ok(w)
}

/// Simulate `n` rollouts at `gate`.
pub fn evaluate(
    base: &WorldSpec,
    gate: SimDuration,
    n: u64,
    seed: u64,
) -> Result<GateResult, String> {
    let w = with(base, &[(GATE, duration_label(gate).into())])?;
    let defs = w.metric_defs();
    let idx = |name: &str| {
        defs.iter()
            .position(|d| d.name == name)
            .ok_or_else(|| format!("the model reports no `{name}`"))
    };
    let (ia, ie, id) = (
        idx("any_error")?,
        idx("errors")?,
        idx("rollout_duration_s")?,
    );
    let rows: Vec<(f64, f64, f64)> = (0..n)
        .into_par_iter()
        .map(|r| {
            let o = w.run(replicate_seed(seed, r), RunOptions::default());
            (o.metrics[ia], o.metrics[ie], o.metrics[id])
        })
        .collect();
    let with_errors = rows.iter().filter(|r| r.0 >= 0.5).count() as u64;
    let errors: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let dur: Vec<f64> = rows.iter().map(|r| r.2).collect();
    Ok(GateResult {
        gate,
        n,
        with_errors,
        p_ci: wilson(with_errors, n),
        errors: summarize(&errors),
        duration_s: summarize(&dur),
    })
}

/// Scan gates 0, step, 2·step, … up to `max_gate` and stop at the first that passes.
#[allow(clippy::too_many_arguments)]
pub fn advise(
    model: &WorldSpec,
    refresh: SimDuration,
    vtgates: u32,
    target: f64,
    n: u64,
    step: SimDuration,
    max_gate: SimDuration,
    seed: u64,
) -> Result<Advice, String> {
    let base = with(
        model,
        &[
            (REFRESH, duration_label(refresh).into()),
            (VTGATES, vtgates.into()),
        ],
    )?;
    let mut scanned = vec![];
    let mut recommended = None;
    let mut g = SimDuration::ZERO;
    while g <= max_gate {
        let r = evaluate(&base, g, n, seed)?;
        let pass = r.p_ci.1 < target;
        scanned.push(r.clone());
        if pass {
            recommended = Some(r);
            break;
        }
        g += step;
    }
    let mut references = vec![];
    for (label, gate) in [
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
    ] {
        let r = match scanned.iter().find(|s| s.gate == gate) {
            Some(s) => s.clone(),
            None => evaluate(&base, gate, n, seed)?,
        };
        references.push((label, r));
    }
    Ok(Advice {
        refresh,
        vtgates,
        target,
        recommended,
        scanned,
        references,
    })
}

fn fmt_p(r: &GateResult) -> String {
    let f = |v: f64| {
        if v == 0.0 {
            "0".to_string()
        } else if v >= 0.01 {
            format!("{v:.3}")
        } else {
            format!("{v:.1e}")
        }
    };
    format!("{} [{}, {}]", f(r.p()), f(r.p_ci.0), f(r.p_ci.1))
}

/// A Markdown table for a PR description.
pub fn render(a: &Advice) -> String {
    let mut s = String::new();
    let t = duration_label(a.refresh);
    s.push_str(&format!(
        "tablet_refresh_interval = {t}, {} vtgates, target P(any failed replica read per rollout) < {}\n\n",
        a.vtgates, a.target
    ));
    s.push_str("| tablet_available_timeout | | P(any error per rollout) [95 % CI] | failed reads per rollout (mean) | rollout duration, mean (p90) |\n");
    s.push_str("|---|---|---|---|---|\n");
    let row = |label: &str, r: &GateResult| {
        format!(
            "| {} | {} | {} | {:.2} | {:.0} s ({:.0} s) |\n",
            duration_label(r.gate),
            label,
            fmt_p(r),
            r.errors.mean,
            r.duration_s.mean,
            r.duration_s.p90
        )
    };
    if let Some(r) = &a.recommended {
        if a.scanned.len() >= 2 {
            let before = &a.scanned[a.scanned.len() - 2];
            s.push_str(&row("one step shorter: above target", before));
        }
        s.push_str(&row("**smallest below target**", r));
    }
    for (label, r) in &a.references {
        s.push_str(&row(label, r));
    }
    s.push('\n');
    match &a.recommended {
        Some(r) => {
            let base = a
                .references
                .first()
                .map(|(_, b)| b.duration_s.mean)
                .unwrap_or(f64::NAN);
            s.push_str(&format!(
                "Smallest gate whose upper 95 % bound is below {}: **{}** ({} rollouts per gate, {} with errors). \
                 It costs {:+.0} s of rollout time per shard against today's 30 s gate.\n",
                a.target,
                duration_label(r.gate),
                r.n,
                r.with_errors,
                r.duration_s.mean - base
            ));
        }
        None => s.push_str(&format!(
            "No scanned gate up to {} reached the target.\n",
            a.scanned
                .last()
                .map(|r| duration_label(r.gate))
                .unwrap_or_default()
        )),
    }
    s.push_str("Simulated with vtsim (common random numbers across gates; Wilson intervals).\n");
    s
}
