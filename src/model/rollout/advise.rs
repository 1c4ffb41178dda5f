//! `vtsim advise`: the smallest `tablet_available_timeout` whose risk of any failed replica
//! read per rollout is below a target, with the rollout time it costs, next to the incident's
//! 1.5 × refresh-interval rule of thumb and the 2 × rule of vitess-operator PR #797.
//!
//! "Below the target" means the upper end of the 95 % Wilson interval of P(any error per
//! rollout) is below it, so the answer carries its own uncertainty: with the default number of
//! rollouts per gate, zero errors in every rollout is what it takes at a 1e-3 target.
//! Every gate is simulated with the same seeds (common random numbers).

use crate::experiment::plan::{duration_label, with_overrides, OverrideError};
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

/// Most rollouts simulated per gate: 1e7. A rollout of the default model is about a
/// millisecond of CPU, so a gate costs at most a few CPU-hours, and the per-gate results
/// (three numbers a rollout) stay under 250 MB. It is what a target of about 4.3e-7 needs
/// ([`smallest_target`]).
pub const MAX_ROLLOUTS_PER_GATE: u64 = 10_000_000;
/// Most gates scanned (0, step, 2·step, … up to 4 × refresh): 1000.
pub const MAX_GATES: u64 = 1000;
/// Longest refresh interval advise accepts: 1 h (vtgate's `--tablet_refresh_interval`
/// defaults to 1 m; the scan goes up to 4 × refresh, and a rollout must finish within the
/// model's horizon for the answer to mean anything).
pub const MAX_REFRESH: SimDuration = SimDuration::from_secs(3600);

/// Rollouts per gate so that zero errors in all of them puts the Wilson upper bound below
/// `target` (with 10 % to spare). Saturates for a tiny target; see [`check_request`].
pub fn rollouts_for(target: f64) -> u64 {
    rollouts_needed(target).ceil().max(100.0) as u64
}

fn rollouts_needed(target: f64) -> f64 {
    let z2 = z_critical().powi(2);
    (z2 / target) * 1.1
}

/// The smallest target whose default rollout count is within [`MAX_ROLLOUTS_PER_GATE`]
/// (about 4.3e-7), rounded up to two significant digits.
pub fn smallest_target() -> f64 {
    let t = z_critical().powi(2) * 1.1 / MAX_ROLLOUTS_PER_GATE as f64;
    let e = 10f64.powf(t.log10().floor() - 1.0);
    (t / e).ceil() * e
}

/// The scan goes up to this many refresh intervals (a gate of 4 × refresh is far past every
/// rule of thumb: 1.5 × in the incident report, 2 × in vitess-operator PR #797).
pub const SCAN_REFRESHES: f64 = 4.0;

/// The largest gate the scan visits: [`SCAN_REFRESHES`] × refresh.
pub fn max_gate(refresh: SimDuration) -> SimDuration {
    refresh.mul_f64(SCAN_REFRESHES)
}

/// Gates the scan visits: 0, step, … up to 4 × refresh.
pub fn gates_scanned(refresh: SimDuration, step: SimDuration) -> u64 {
    (max_gate(refresh).as_nanos() / step.as_nanos().max(1)).saturating_add(1)
}

/// Check a request against the bounds; returns the rollouts per gate. The error names the
/// flag, the bound and what to do instead.
pub fn check_request(
    refresh: SimDuration,
    step: SimDuration,
    target: f64,
    rollouts: Option<u64>,
) -> Result<u64, String> {
    if refresh == SimDuration::ZERO || step == SimDuration::ZERO {
        return Err("--refresh-interval and --step must be > 0".into());
    }
    if refresh > MAX_REFRESH {
        return Err(format!(
            "--refresh-interval {}: at most {} (vtgate's default is 1m; the scan goes up to 4 × refresh)",
            duration_label(refresh),
            duration_label(MAX_REFRESH)
        ));
    }
    let gates = gates_scanned(refresh, step);
    if gates > MAX_GATES {
        // The smallest step within the bound, rounded up to a whole millisecond.
        let exact = max_gate(refresh).as_nanos() / MAX_GATES + 1;
        let min_step = exact.div_ceil(1_000_000) * 1_000_000;
        return Err(format!(
            "--step {} scans {gates} gates (0 to 4 × --refresh-interval {}); at most {MAX_GATES}: \
             use a --step of at least {}",
            duration_label(step),
            duration_label(refresh),
            duration_label(SimDuration::from_nanos(min_step))
        ));
    }
    if !(target > 0.0 && target < 1.0) {
        return Err("--target-risk must be in (0, 1)".into());
    }
    match rollouts {
        Some(0) => Err("--rollouts must be at least 1".into()),
        Some(n) if n > MAX_ROLLOUTS_PER_GATE => Err(format!(
            "--rollouts {n}: at most {MAX_ROLLOUTS_PER_GATE:.0e} per gate"
        )),
        Some(n) => Ok(n),
        None => {
            let need = rollouts_needed(target);
            if need > MAX_ROLLOUTS_PER_GATE as f64 {
                return Err(format!(
                    "--target-risk {target:e} needs {need:.2e} rollouts per gate (zero errors in \
                     all of them); at most {MAX_ROLLOUTS_PER_GATE:.0e}: the smallest target is \
                     {:e} (or give --rollouts N, at most {MAX_ROLLOUTS_PER_GATE:.0e})",
                    smallest_target()
                ));
            }
            Ok(rollouts_for(target))
        }
    }
}

fn with(world: &WorldSpec, sets: &[(&str, serde_json::Value)]) -> Result<WorldSpec, String> {
    let sets: Vec<(String, serde_json::Value)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    with_overrides(world, &sets).map_err(|e| match e {
        OverrideError::At(i, m) => format!("{}: {m}", sets[i].0),
        OverrideError::Whole(m) => m,
    })
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
    // Two columns, collected directly (not a row vector copied into them): 16 bytes a rollout.
    let (any, (errors, dur)): (Vec<bool>, (Vec<f64>, Vec<f64>)) = (0..n)
        .into_par_iter()
        .map(|r| {
            let o = w.run(replicate_seed(seed, r), RunOptions::default());
            (o.metrics[ia] >= 0.5, (o.metrics[ie], o.metrics[id]))
        })
        .unzip();
    let with_errors = any.iter().filter(|&&a| a).count() as u64;
    Ok(GateResult {
        gate,
        n,
        with_errors,
        p_ci: wilson(with_errors, n),
        errors: summarize(&errors),
        duration_s: summarize(&dur),
    })
}

/// Scan gates 0, step, 2·step, … up to [`max_gate`] and stop at the first that passes.
pub fn advise(
    model: &WorldSpec,
    refresh: SimDuration,
    vtgates: u32,
    target: f64,
    n: u64,
    step: SimDuration,
    seed: u64,
) -> Result<Advice, String> {
    check_request(refresh, step, target, Some(n))?;
    let max_gate = max_gate(refresh);
    let gates = (max_gate.as_nanos() / step.as_nanos()).saturating_add(1);
    if gates > MAX_GATES {
        return Err(format!(
            "scanning up to {} in steps of {} is {gates} gates; at most {MAX_GATES}",
            duration_label(max_gate),
            duration_label(step)
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_hold_at_their_edges() {
        let s = SimDuration::from_secs;
        let t_min = smallest_target();
        assert!((4.2e-7..4.4e-7).contains(&t_min), "{t_min}");
        let n = check_request(s(60), s(5), t_min, None).unwrap();
        assert!(
            n <= MAX_ROLLOUTS_PER_GATE && n > MAX_ROLLOUTS_PER_GATE * 9 / 10,
            "{n}"
        );
        let e = check_request(s(60), s(5), t_min * 0.9, None).unwrap_err();
        assert!(e.contains("the smallest target is 4.3e-7"), "{e}");
        assert_eq!(check_request(s(60), s(5), 1e-9, Some(50)), Ok(50));
        assert!(check_request(s(60), s(5), 1e-3, Some(MAX_ROLLOUTS_PER_GATE + 1)).is_err());
        // 4 × 60 s / 241 ms = 995.8: 996 gates; 240 ms would be 1001.
        assert_eq!(gates_scanned(s(60), SimDuration::from_millis(241)), 996);
        assert!(check_request(s(60), SimDuration::from_millis(241), 1e-3, None).is_ok());
        let e = check_request(s(60), SimDuration::from_millis(240), 1e-3, None).unwrap_err();
        assert!(
            e.contains("1001 gates") && e.contains("at least 241ms"),
            "{e}"
        );
        assert!(check_request(MAX_REFRESH, s(15), 1e-3, None).is_ok());
        let e = check_request(MAX_REFRESH + SimDuration::from_nanos(1), s(15), 1e-3, None);
        assert!(e.unwrap_err().contains("at most 3600s"));
        assert_eq!(rollouts_for(1e-3), 4226);
    }
}
