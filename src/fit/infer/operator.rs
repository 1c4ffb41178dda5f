//! The operator: each shard's restart order, the step before each release (after
//! the previous tablet served plus the Available gate), the PRS and its candidate (the
//! method's step 4, in [`super`]).

use super::drains::Drains;
use super::layout::Layout;
use super::{dur, fmt_t, TabletFit};
use crate::fit::parse::Alias;
use crate::sim::SimDuration;
use std::collections::BTreeMap;

/// What the operator did, as the model's operator parameters take it.
pub(super) struct OperatorFit {
    /// Per model tablet slot (shard by shard, release by release): the step before the
    /// release.
    pub steps: Vec<SimDuration>,
    /// Per shard: the PRS duration (3 s when it does not show).
    pub prs: Vec<SimDuration>,
    /// How long the old primary served as a REPLICA before its SIGTERM (the first shard's).
    pub window: Option<i64>,
    /// Per shard: the PRS candidate's position among the restarted replicas.
    pub positions: Vec<u32>,
    /// Per shard: the replicas' restart order as indices in the shard.
    pub restart_orders: Vec<Vec<u32>>,
    /// The Available gate (ns).
    pub available_gate: i64,
}

/// The operator's steps. Reads: the layout, the timelines, the PRS of each shard's primary
/// (`drains`), the `PlannedReparent` candidates (old primary uid to new) and the Available
/// gate `a_gate` (ns). A release earlier than the previous tablet could be Available, a
/// missing PRS or candidate, or shards disagreeing on the replica window: a warning each.
pub(super) fn operator(
    layout: &Layout,
    restarts: &[TabletFit],
    drains: &Drains,
    candidates: &BTreeMap<u64, u64>,
    a_gate: i64,
    warnings: &mut Vec<String>,
) -> OperatorFit {
    let (shards, per, res) = (&layout.shards, layout.per, drains.res);
    let n = per * shards.len();
    let fit_of = |a: &Alias| restarts.iter().find(|r| r.alias == *a);
    // Operator steps, PRS.
    let mut steps = vec![SimDuration::ZERO; n];
    let mut prs_d = vec![];
    let mut window = None;
    let mut positions: Vec<u32> = vec![];
    let mut restart_orders: Vec<Vec<u32>> = vec![];
    for (s, v) in layout.per_shard.iter().enumerate() {
        let mut replicas: Vec<&TabletFit> = v[1..].iter().filter_map(&fit_of).collect();
        replicas.sort_by_key(|r| r.drain.ns);
        // The restart order as indices in the shard (never-restarted replicas last).
        let mut order: Vec<u32> = replicas
            .iter()
            .filter_map(|r| v.iter().position(|a| *a == r.alias).map(|k| k as u32))
            .collect();
        for k in 1..v.len() as u32 {
            if !order.contains(&k) {
                order.push(k);
            }
        }
        restart_orders.push(order);
        let prs = drains.prs_of(&v[0]);
        let mut releases: Vec<i64> = replicas.iter().map(|r| r.drain.ns).collect();
        if layout.restart_primary {
            match prs {
                Some((start, end)) => {
                    releases.push(start);
                    prs_d.push(dur(end - start));
                    if let Some(pf) = fit_of(&v[0]) {
                        let w = pf.drain.ns - end;
                        if window.is_some_and(|x: i64| (x - w).abs() > 2 * res) {
                            warnings.push(format!(
                                "shard {}: the old primary served as a REPLICA for {} before \
                                 its SIGTERM, unlike the first shard: the first is kept",
                                shards[s],
                                fmt_t(w)
                            ));
                        }
                        window.get_or_insert(w);
                    }
                }
                None => {
                    warnings.push(format!(
                        "shard {}: the primary restarted but no PRS shows in the logs \
                         (default PRS timing)",
                        shards[s]
                    ));
                    prs_d.push(SimDuration::from_secs(3));
                }
            }
            let new = candidates.get(&v[0].uid);
            let pos = new.and_then(|u| replicas.iter().position(|r| r.alias.uid == *u));
            if pos.is_none() && !candidates.is_empty() {
                warnings.push(format!(
                    "shard {}: no PlannedReparent event names the new primary: assumed the \
                     replica restarted first",
                    shards[s]
                ));
            }
            positions.push(pos.unwrap_or(0) as u32);
        } else {
            prs_d.push(SimDuration::from_secs(3));
            positions.push(0);
        }
        for (k, rel) in releases.iter().enumerate() {
            let prev_avail = if k == 0 {
                0
            } else {
                replicas[k - 1].serve.ns + a_gate
            };
            let d = rel - prev_avail;
            if d < 0 {
                warnings.push(format!(
                    "shard {}: release {} came {} before the previous tablet could be \
                     Available (serving + {}): not replayed exactly",
                    shards[s],
                    k + 1,
                    fmt_t(-d),
                    fmt_t(a_gate)
                ));
            }
            steps[s * per + k] = dur(d);
        }
    }
    OperatorFit {
        steps,
        prs: prs_d,
        window,
        positions,
        restart_orders,
        available_gate: a_gate,
    }
}
