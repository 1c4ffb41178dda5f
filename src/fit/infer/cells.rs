//! The cells: the cells of the tablets and of the vtgates' `--cells_to_watch`, each
//! vtgate's own cell, what it watches and which cell its shard reload reads; and the model's
//! `cells` from them.

use super::roster::FirstSeen;
use super::FitResult;
use crate::fit::parse::{Alias, Said, VtgateLog};
use std::collections::{BTreeMap, BTreeSet};

/// The cells a fit found (`None` from [`cells_of`]: one cell, every vtgate watching it).
pub(super) struct Cells {
    /// Cell names in model order.
    pub names: Vec<String>,
    /// Per vtgate (model order): its cell index.
    pub own: Vec<usize>,
    /// Per vtgate: the cells it watches.
    pub watch: Vec<Vec<String>>,
    /// Per vtgate: its `--cells_to_watch` as logged (`None`: no start-up line).
    pub flag: Vec<Option<String>>,
    /// Per vtgate: the cell its shard reload reads (the model's rule: its own when watched,
    /// else the first listed; `None`: it watches none).
    pub reload: Vec<Option<String>>,
}

impl Cells {
    /// The model index of `cell` (`usize::MAX`: not a known cell).
    pub(super) fn index(&self, cell: &str) -> usize {
        self.names
            .iter()
            .position(|n| n == cell)
            .unwrap_or(usize::MAX)
    }

    /// The model's `cells`: vtgates per cell, replicas per shard in each cell, the primary's
    /// cell and each cell's `cells_to_watch`.
    pub(super) fn params(
        &self,
        per_shard: &[Vec<Alias>],
        shards: &[String],
    ) -> FitResult<Vec<crate::model::rollout::CellParams>> {
        let count = |v: &[Alias]| -> Vec<u32> {
            let mut n = vec![0u32; self.names.len()];
            for a in &v[1..] {
                n[self.index(&a.cell)] += 1;
            }
            n
        };
        let reps = count(&per_shard[0]);
        let primary = &per_shard[0][0].cell;
        for (s, v) in per_shard.iter().enumerate() {
            if &v[0].cell != primary {
                return Err(format!(
                    "shard {}'s primary is in cell {} and shard {}'s in {}: the rollout model \
                     needs every shard's primary in one cell",
                    shards[s], v[0].cell, shards[0], primary
                ));
            }
            if count(v) != reps {
                return Err(format!(
                    "shards {} and {} have different numbers of replicas per cell: the rollout \
                     model needs the same shape in every shard",
                    shards[0], shards[s]
                ));
            }
        }
        let all: BTreeSet<&str> = self.names.iter().map(|s| s.as_str()).collect();
        let mut out = vec![];
        for (c, name) in self.names.iter().enumerate() {
            let gates: Vec<usize> = (0..self.own.len()).filter(|&g| self.own[g] == c).collect();
            let flags: BTreeSet<Option<&str>> =
                gates.iter().map(|&g| self.flag[g].as_deref()).collect();
            let cells_to_watch = match gates.first() {
                None => None,
                Some(&g) => {
                    let w: BTreeSet<&str> = self.watch[g].iter().map(|s| s.as_str()).collect();
                    if flags.len() > 1 {
                        return Err(format!(
                            "the vtgates of cell {name} log different --cells_to_watch values \
                             ({flags:?}): the rollout model gives one per cell"
                        ));
                    }
                    match self.flag[g].as_deref() {
                        None => None,
                        Some("") => Some(vec![]),
                        Some(_) if w == all => None,
                        Some(_) => Some(self.watch[g].clone()),
                    }
                }
            };
            out.push(crate::model::rollout::CellParams {
                name: name.clone(),
                vtgates: gates.len() as u32,
                replicas: reps[c],
                primary: name == primary,
                cells_to_watch,
            });
        }
        Ok(out)
    }
}

/// Find the cells: the tablets' alias cells and the cells the vtgates' start-up lines list
/// (`loading tablets for cells: a,b`, vitessio/vitess `go/vt/discovery/healthcheck.go`
/// `NewHealthCheck`). A vtgate's own cell is not in its log: it is taken from its name (a
/// `-`-separated part naming a cell, as the operator's vtgate pod names
/// `<cluster>-<cell>-vtgate-<hash>` do), else the one cell it watches. One cell in all: `None`
/// (the model's implicit cell). Reorders `logs` cell by cell (name order within a cell).
pub(super) fn cells_of(
    logs: &mut [VtgateLog],
    first_seen: &BTreeMap<Alias, FirstSeen>,
    warnings: &mut Vec<String>,
) -> Option<Cells> {
    let flag_of = |l: &VtgateLog| {
        l.lines.iter().find_map(|x| match &x.said {
            Said::Start(s) => Some(s.clone()),
            _ => None,
        })
    };
    let listed = |f: &str| -> Vec<String> {
        f.split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let mut known: BTreeSet<String> = first_seen.keys().map(|a| a.cell.clone()).collect();
    for l in logs.iter() {
        if let Some(f) = flag_of(l) {
            known.extend(listed(&f));
        }
    }
    if known.len() <= 1 {
        return None;
    }
    let own_of = |l: &VtgateLog| -> Option<String> {
        let parts: Vec<&str> = l.name.split('-').collect();
        let mut best: Option<&String> = None;
        for c in &known {
            let k = c.split('-').count();
            if parts.windows(k).any(|w| w.join("-") == *c) && best.is_none_or(|b| c.len() > b.len())
            {
                best = Some(c);
            }
        }
        best.cloned().or_else(|| {
            let w = listed(&flag_of(l)?);
            (w.len() == 1).then(|| w[0].clone())
        })
    };
    // Cell order: as the vtgates' names first name them, then the other cells by name.
    let mut names: Vec<String> = vec![];
    for l in logs.iter() {
        if let Some(c) = own_of(l) {
            if !names.contains(&c) {
                names.push(c);
            }
        }
    }
    for c in &known {
        if !names.contains(c) {
            names.push(c.clone());
        }
    }
    let mut own = vec![];
    for l in logs.iter() {
        own.push(match own_of(l) {
            Some(c) => names.iter().position(|n| *n == c).unwrap_or(0),
            None => {
                warnings.push(format!(
                    "vtgate {}: its cell is not in its name and it watches several cells: \
                     assumed {} (name the log file after the vtgate pod, \
                     <cluster>-<cell>-vtgate-...)",
                    l.name, names[0]
                ));
                0
            }
        });
    }
    // Stable: name order within a cell.
    let mut idx: Vec<usize> = (0..logs.len()).collect();
    idx.sort_by_key(|&g| own[g]);
    let sorted: Vec<VtgateLog> = idx.iter().map(|&g| logs[g].clone()).collect();
    let own: Vec<usize> = idx.iter().map(|&g| own[g]).collect();
    logs.clone_from_slice(&sorted);
    let mut watch = vec![];
    let mut flag = vec![];
    let mut reload = vec![];
    for (g, l) in logs.iter().enumerate() {
        let f = flag_of(l);
        let here = names[own[g]].clone();
        let w = match &f {
            Some(f) if !listed(f).is_empty() => listed(f),
            Some(_) => vec![here.clone()],
            None => {
                warnings.push(format!(
                    "vtgate {}: no `loading tablets for cells` line (the log starts after \
                     vtgate did): assumed it watches every cell",
                    l.name
                ));
                names.clone()
            }
        };
        reload.push(if w.contains(&here) {
            Some(here)
        } else {
            w.first().cloned()
        });
        watch.push(w);
        flag.push(f);
    }
    Some(Cells {
        names,
        own,
        watch,
        flag,
        reload,
    })
}

/// Whether vtgate `g` watches `cell` (every vtgate watches the one implicit cell).
pub(super) fn watches(cells: Option<&Cells>, g: usize, cell: &str) -> bool {
    cells.is_none_or(|c| c.watch[g].iter().any(|x| x == cell))
}

/// The cell vtgate `g`'s shard reload reads (`None`: one implicit cell; `Some(None)`: it
/// watches none).
pub(super) fn reload_cell(cells: Option<&Cells>, g: usize) -> Option<Option<String>> {
    cells.map(|c| c.reload[g].clone())
}
