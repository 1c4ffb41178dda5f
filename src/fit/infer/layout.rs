//! The layout: the model's tablets per shard (the original primary, then replicas
//! in restart order, then replicas never restarted; cell by cell when there are cells), and
//! each model tablet's durations.

use super::cells::Cells;
use super::roster::Roster;
use super::{dur, FitResult, TabletFit};
use crate::fit::parse::Alias;
use crate::sim::SimDuration;

/// The model's shape.
pub(super) struct Layout {
    /// The shards, in name order.
    pub shards: Vec<String>,
    /// Per shard: its tablets in model order (the primary first).
    pub per_shard: Vec<Vec<Alias>>,
    /// Tablets per shard (the same in every shard).
    pub per: usize,
    /// Every shard restarted its primary.
    pub restart_primary: bool,
}

/// The layout of the roster's shards. Reads: which tablet of each shard was primary when
/// the logs start, the restarts (in drain order) and the cells. Fails unless every shard has
/// one primary and the same number of tablets.
pub(super) fn layout(
    roster: &Roster,
    restarts: &[TabletFit],
    cells: Option<&Cells>,
    warnings: &mut Vec<String>,
) -> FitResult<Layout> {
    let shards = &roster.shards;
    let mut per_shard: Vec<Vec<Alias>> = vec![];
    let mut primary_restarted = vec![];
    for sh in shards {
        let mut primary: Vec<Alias> = roster
            .first_seen
            .iter()
            .filter(|(a, f)| f.primary && roster.shard_of.get(*a) == Some(sh))
            .map(|(a, _)| a.clone())
            .collect();
        if primary.len() != 1 {
            return Err(format!(
                "shard {sh}: {} tablets were PRIMARY when the logs start (expected one)",
                primary.len()
            ));
        }
        let p = primary.remove(0);
        let mut v = vec![p.clone()];
        for r in restarts {
            if r.shard == *sh && r.alias != p {
                v.push(r.alias.clone());
            }
        }
        for (a, s) in &roster.shard_of {
            if s == sh && !v.contains(a) {
                warnings.push(format!(
                    "tablet {a}: never restarted in the logs: its durations are censored \
                     (the median of the others)"
                ));
                v.push(a.clone());
            }
        }
        if let Some(c) = cells {
            // The model's order: the primary, then each cell's replicas, cell by cell
            // (restart order kept within a cell: the sort is stable).
            v[1..].sort_by_key(|a| c.index(&a.cell));
        }
        primary_restarted.push(restarts.iter().any(|r| r.alias == p));
        per_shard.push(v);
    }
    let per = per_shard[0].len();
    if let Some((i, v)) = per_shard.iter().enumerate().find(|(_, v)| v.len() != per) {
        return Err(format!(
            "shard {} has {} tablets and shard {} has {per}: the rollout model needs the same \
             number of tablets in every shard",
            shards[i],
            v.len(),
            shards[0]
        ));
    }
    let restart_primary = primary_restarted.iter().all(|x| *x);
    if !restart_primary && primary_restarted.iter().any(|x| *x) {
        warnings.push("some shards restarted their primary and others not: modelled as not".into());
    }
    Ok(Layout {
        shards: shards.clone(),
        per_shard,
        per,
        restart_primary,
    })
}

/// Each model tablet's durations, in model order.
pub(super) struct TabletDurations {
    /// The tablets (the model's order).
    pub tablets: Vec<Option<Alias>>,
    /// SIGTERM to old pod gone.
    pub drain_grace: Vec<SimDuration>,
    /// Old pod gone to new address published.
    pub restart: Vec<SimDuration>,
    /// Published to serving.
    pub serving_after_publish: Vec<SimDuration>,
}

/// The durations of each tablet of `layout` from its timeline; a tablet never restarted gets
/// the median of the restarted ones'.
pub(super) fn durations(layout: &Layout, restarts: &[TabletFit]) -> TabletDurations {
    let fit_of = |a: &Alias| restarts.iter().find(|r| r.alias == *a);
    let median = |f: &dyn Fn(&TabletFit) -> i64| -> i64 {
        let mut v: Vec<i64> = restarts.iter().map(f).collect();
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let mut drain_grace = vec![];
    let mut restart_d = vec![];
    let mut sap = vec![];
    let mut tablets = vec![];
    for v in &layout.per_shard {
        for a in v {
            tablets.push(Some(a.clone()));
            let (dg, rs, sp) = match fit_of(a) {
                Some(r) => (
                    r.down.ns - r.drain.ns,
                    r.publish.ns - r.down.ns,
                    r.serve.ns - r.publish.ns,
                ),
                None => (
                    median(&|r| r.down.ns - r.drain.ns),
                    median(&|r| r.publish.ns - r.down.ns),
                    median(&|r| r.serve.ns - r.publish.ns),
                ),
            };
            drain_grace.push(dur(dg));
            restart_d.push(dur(rs));
            sap.push(dur(sp));
        }
    }
    TabletDurations {
        tablets,
        drain_grace,
        restart: restart_d,
        serving_after_publish: sap,
    }
}
