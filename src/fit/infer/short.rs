//! The short-form path: a write-up's `[t+44s] vtgate-02: replica-A false => true` lines
//! alone (no vtgate log). They give each vtgate's discovery lag of one restart, so the phases
//! (relative to that tablet's serving instant) and nothing else.

use super::{Fit, FitOptions, FitResult, Inferred, TabletFit};
use crate::fit::names::NS;
use crate::fit::parse::{Alias, ShortLine};
use crate::model::rollout::{Phase, RolloutParams};
use crate::sim::SimDuration;
use std::collections::BTreeMap;

/// The short form alone: the phases relative to the restarted tablet's serving instant
/// (`t+0`), everything else the model's defaults.
pub(super) fn fit_short(
    path: &std::path::Path,
    lines: &[ShortLine],
    opts: &FitOptions,
    mut warnings: Vec<String>,
    inputs: Vec<String>,
) -> FitResult<Fit> {
    let tablet = lines
        .iter()
        .find(|l| !l.from && l.to)
        .map(|l| l.tablet.clone())
        .ok_or_else(|| format!("{}: no `false => true` line: no discovery", path.display()))?;
    let tper = match opts.refresh_interval {
        Some(t) => t.as_nanos() as i64,
        None => {
            warnings.push(
                "the short form shows one restart: the refresh interval cannot be estimated; \
                 assumed 1m (give --refresh-interval)"
                    .into(),
            );
            60 * NS
        }
    };
    let mut by_gate: BTreeMap<String, (usize, i64)> = BTreeMap::new();
    for l in lines
        .iter()
        .filter(|l| l.tablet == tablet && !l.from && l.to)
    {
        let t = l.at.as_nanos() as i64;
        if let Some((line, prev)) = by_gate.get(&l.vtgate) {
            if *prev != t {
                return Err(format!(
                    "{}:{}: vtgate {} discovers {tablet} twice (first at line {line})",
                    path.display(),
                    l.line,
                    l.vtgate
                ));
            }
        }
        by_gate.entry(l.vtgate.clone()).or_insert((l.line, t));
    }
    let names: Vec<String> = by_gate.keys().cloned().collect();
    let phases: Vec<(i64, bool)> = by_gate
        .values()
        .map(|(_, t)| (t.rem_euclid(tper), true))
        .collect();
    let res = NS; // the short form's whole seconds
    warnings.push(format!(
        "short form only: phases are relative to {tablet}'s serving instant (offset = lag mod \
         T); shift them by that instant in your timeline. Tablet, operator and workload \
         timings are not in the input (model defaults)"
    ));
    let mut p = RolloutParams {
        vtgates: names.len() as u32,
        ..RolloutParams::default()
    };
    p.vtgate.tablet_refresh_interval = SimDuration::from_nanos(tper as u64);
    p.vtgate.phase = Phase::Explicit {
        offsets: phases
            .iter()
            .map(|(o, _)| SimDuration::from_nanos(*o as u64))
            .collect(),
    };
    p.check()
        .map_err(|e| format!("the fitted model is not valid: {e}"))?;
    let discovered = by_gate.values().map(|(_, t)| Some(*t)).collect();
    Ok(Fit {
        params: p,
        t0: 0,
        vtgates: names,
        tablets: vec![],
        restarts: vec![TabletFit {
            alias: Alias {
                cell: tablet.clone(),
                uid: 0,
            },
            shard: String::new(),
            drain: Inferred {
                ns: 0,
                resolution: 0,
                censored: true,
            },
            down: Inferred {
                ns: 0,
                resolution: 0,
                censored: true,
            },
            publish: Inferred {
                ns: 0,
                resolution: 0,
                censored: true,
            },
            serve: Inferred {
                ns: 0,
                resolution: res / 2,
                censored: false,
            },
            ready: None,
            discovered,
        }],
        bursts: vec![],
        refresh: (tper, 0, opts.refresh_interval.is_some()),
        phases,
        delays: [(0, true), (0, true)],
        warnings,
        inputs,
    })
}
