//! Cells: where each vtgate and tablet lives, which cells each vtgate watches, and when a
//! cell's topology reads fail (`docs/rollout.md`, "Cells and topology outages").
//!
//! - *One topology watcher per watched cell* (vitessio/vitess `go/vt/discovery/healthcheck.go`
//!   `NewHealthCheck`: one `NewTopologyWatcher` per entry of `--cells_to_watch`, all started in
//!   one loop with the same `--tablet_refresh_interval`). A vtgate discovers only the tablets of
//!   the cells it watches. Its watchers share its ticker phase here: they start back to back,
//!   within microseconds of each other.
//! - *The shard reload after PRS* (`loadTabletsTrigger`) is one message on one channel shared
//!   by the vtgate's watchers (`healthcheck.go`: `loadTabletsTrigger chan topo.KeyspaceShard`,
//!   one send; `topology_watcher.go` `Start`: every watcher selects on it), so exactly one
//!   watcher takes it and reloads the shard in its own cell only (`getTabletsByShard`:
//!   `GetTabletsByShardCell(.., []string{tw.cell})`). Which one is a Go scheduling race; the
//!   model picks the watcher of the vtgate's own cell when it watches it, else the first
//!   cell of its list. The trigger fires only in a vtgate that streams from the demoted
//!   primary (it needs the PRIMARY→REPLICA health update), so only where the primary's cell
//!   is watched.
//! - *Topology outages* (`vtgate.topo_outage`): a tick or a shard reload of a cell whose topology
//!   reads fail changes nothing (`topology_watcher.go` `loadTablets` returns on an error
//!   before `storeTabletInfos`).

pub use super::params::DEFAULT_CELL;
use super::params::RolloutParams;
use crate::sim::SimTime;

/// The cells of a run: its shape and its topology outage (the constructor's, kept by a reset:
/// both depend only on the parameters).
pub struct Cells {
    /// The cells, when the model lists them (`None`: one cell, every tablet watched).
    pub(crate) shape: Option<Shape>,
    /// The topology outage, if any.
    pub(crate) outage: Option<Outage>,
}

impl Cells {
    /// The cells of `p` (checked).
    pub fn of(p: &RolloutParams) -> Cells {
        Cells {
            shape: Shape::of(p),
            outage: Outage::of(p),
        }
    }

    /// vtgate `g` watches tablet `t`'s cell.
    #[inline]
    pub(crate) fn watches(&self, g: usize, t: usize) -> bool {
        self.shape.as_ref().is_none_or(|sh| sh.watches(g, t))
    }

    /// The vtgates, of `m`, that watch tablet `t`'s cell.
    pub(crate) fn watchers(&self, t: usize, m: usize) -> usize {
        match &self.shape {
            None => m,
            Some(sh) => (0..m).filter(|&g| sh.watches(g, t)).count(),
        }
    }

    /// Tablet `t`'s cell index.
    #[inline]
    pub(crate) fn cell_of(&self, t: usize) -> u16 {
        self.shape.as_ref().map_or(0, |sh| sh.tablet_cell[t])
    }

    /// vtgate `g`'s cell index.
    #[inline]
    pub(crate) fn gate_cell(&self, g: usize) -> u16 {
        self.shape.as_ref().map_or(0, |sh| sh.vtgate_cell[g])
    }
}

/// The cluster shape of a model that lists its `cells`.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Cell names, in the model's order.
    pub names: Vec<String>,
    /// Each tablet's cell.
    pub tablet_cell: Vec<u16>,
    /// Each vtgate's cell.
    pub vtgate_cell: Vec<u16>,
    /// `watch[c * cells + d]`: the vtgates of cell c watch cell d.
    pub watch: Vec<bool>,
    /// The cell whose watcher takes a vtgate's shard-reload trigger, per vtgate cell (`None`:
    /// the vtgate watches no cell).
    pub reload_cell: Vec<Option<u16>>,
}

impl Shape {
    /// The shape of `p`'s cells (`None` when it lists none: one cell, all watched). `p` is
    /// checked ([`RolloutParams::check`]).
    pub fn of(p: &RolloutParams) -> Option<Shape> {
        if p.cells.is_empty() {
            return None;
        }
        let names: Vec<String> = p.cells.iter().map(|c| c.name.clone()).collect();
        let idx = |n: &str| names.iter().position(|x| x == n).unwrap_or(0) as u16;
        let k = names.len();
        let per = p.replicas_per_shard as usize + 1;
        let primary_cell = p.cells.iter().position(|c| c.primary).unwrap_or(0) as u16;
        let mut in_shard = Vec::with_capacity(per);
        in_shard.push(primary_cell);
        for (c, cell) in p.cells.iter().enumerate() {
            in_shard.extend(std::iter::repeat_n(c as u16, cell.replicas as usize));
        }
        let tablet_cell = (0..p.shards as usize)
            .flat_map(|_| in_shard.iter().copied())
            .collect();
        let mut vtgate_cell = Vec::with_capacity(p.vtgates as usize);
        for (c, cell) in p.cells.iter().enumerate() {
            vtgate_cell.extend(std::iter::repeat_n(c as u16, cell.vtgates as usize));
        }
        let mut watch = vec![false; k * k];
        let mut reload_cell = Vec::with_capacity(k);
        for (c, cell) in p.cells.iter().enumerate() {
            let list: Vec<u16> = match &cell.cells_to_watch {
                None => (0..k as u16).collect(),
                Some(l) if l.is_empty() => vec![c as u16],
                Some(l) => l.iter().map(|n| idx(n)).collect(),
            };
            for &d in &list {
                watch[c * k + d as usize] = true;
            }
            let own = list.contains(&(c as u16));
            reload_cell.push(if own { Some(c as u16) } else { list.first().copied() });
        }
        Some(Shape {
            names,
            tablet_cell,
            vtgate_cell,
            watch,
            reload_cell,
        })
    }

    /// vtgate `g` watches the cell of tablet `t`.
    #[inline]
    pub fn watches(&self, g: usize, t: usize) -> bool {
        let k = self.names.len();
        self.watch[self.vtgate_cell[g] as usize * k + self.tablet_cell[t] as usize]
    }

    /// Tablet `t` is in vtgate `g`'s cell.
    #[inline]
    pub fn local(&self, g: usize, t: usize) -> bool {
        self.vtgate_cell[g] == self.tablet_cell[t]
    }
}

/// When the topology reads of which cells fail (`vtgate.topo_outage`).
#[derive(Clone, Debug)]
pub struct Outage {
    /// First failing instant.
    pub start: SimTime,
    /// First instant reads succeed again.
    pub end: SimTime,
    /// `cells[c]`: cell c's reads fail (empty: every cell).
    pub cells: Vec<bool>,
}

impl Outage {
    /// The outage of `p` (`None`: zero length). `p` is checked.
    pub fn of(p: &RolloutParams) -> Option<Outage> {
        let o = &p.vtgate.topo_outage;
        if o.length.as_nanos() == 0 {
            return None;
        }
        let start = SimTime::ZERO + o.start;
        let names = cell_names(p);
        let cells = if o.cells.is_empty() {
            Vec::new()
        } else {
            names.iter().map(|n| o.cells.contains(n)).collect()
        };
        Some(Outage {
            start,
            end: start + o.length,
            cells,
        })
    }

    /// Cell `c`'s topology reads fail at `now`.
    #[inline]
    pub fn down(&self, c: u16, now: SimTime) -> bool {
        now >= self.start && now < self.end && (self.cells.is_empty() || self.cells[c as usize])
    }
}

/// The model's cell names (`zone1` when it lists none: [`RolloutParams::cell_names`]).
pub fn cell_names(p: &RolloutParams) -> Vec<String> {
    p.cell_names()
}
