//! Routing: what each vtgate's health checks know of each tablet ([`View`]), what each view
//! contributes to its (vtgate, shard) route's counters, the route re-derived from them after
//! every change (closing the workload's accounting intervals when it moves), and the first
//! time a vtgate routes to a restarted tablet's new process (its discovery).
//!
//! The vtgates' health checks change the views ([`super::vtgate`]); this file keeps the
//! routes current, through `Net`: the views and what routing reads and moves besides, lent
//! by the world for one event.

use super::cells::Cells;
use super::event::Event;
use super::params::RolloutParams;
use super::tablet::{RestartRec, Tablet, NONE};
use super::workload::{Route, Workload};
use crate::sim::{Scheduler, SimTime};

/// What one vtgate's health check knows of one tablet.
#[derive(Clone, Copy)]
pub struct View {
    /// The address the health check streams from (`NONE`: no health check).
    pub(crate) hc_addr: u32,
    /// Generation of the health check / of the pending connect attempt.
    pub(crate) gen: u32,
    /// The stream is up.
    pub(crate) connected: bool,
    /// The tablet is in the vtgate's healthy list.
    pub(crate) serving: bool,
    /// The vtgate sees it as PRIMARY.
    pub(crate) primary: bool,
    /// Next reconnect backoff (ns).
    pub(crate) backoff: u64,
    /// What the view adds to its route's counters ([`Net::contrib`]) as last
    /// counted by [`Net::recount`].
    pub(crate) contrib: u8,
}

impl View {
    /// Every vtgate's views at time zero, `views[g * n_tablets + t]`: each connected to its
    /// tablet's first address and told it serves, with its type (the constructor's; a reset
    /// writes the same; [`Net::mask_unwatched`] then masks the cells a vtgate does not watch).
    pub(crate) fn start_all(p: &RolloutParams, tablets: &[Tablet]) -> Vec<View> {
        let n = tablets.len();
        let mut views = vec![
            View {
                hc_addr: 0,
                gen: 0,
                connected: true,
                serving: true,
                primary: false,
                backoff: p.vtgate.health_check_retry_delay.as_nanos(),
                contrib: 0,
            };
            p.vtgates as usize * n
        ];
        for row in views.chunks_exact_mut(n) {
            for (t, (v, tab)) in row.iter_mut().zip(tablets).enumerate() {
                v.hc_addr = t as u32;
                v.primary = tab.primary;
            }
        }
        views
    }

    /// The view counts in the vtgate's routing ([`Net::route_state`] skips every
    /// other one).
    #[inline]
    pub(crate) fn routes(&self) -> bool {
        self.connected && self.serving
    }
}

/// [`Net::contrib`]: a believed replica.
pub(crate) const BELIEVED: u8 = 1;
/// [`Net::contrib`]: a believed replica that is alive.
pub(crate) const READ_OK: u8 = 2;
/// [`Net::contrib`]: a live primary.
pub(crate) const WRITE_OK: u8 = 4;

/// A contribution spread on the 16-bit lanes of [`Route::counts`]: bit k of
/// `c` to lane k.
#[inline]
pub(crate) fn lanes(c: u8) -> u64 {
    let c = u64::from(c);
    (c & 1) | (c & 2) << 15 | (c & 4) << 30
}

/// What a view `v` adds to its route ([`Net::contrib`]), given its tablet's
/// (serving, address, primary) and whether the vtgate may route a replica read to it by
/// its cell (asked only of a view believed REPLICA).
#[inline(always)]
fn contrib_of(v: &View, (serving, addr, primary): (bool, u32, bool), local: impl FnOnce() -> bool) -> u8 {
    if !v.routes() {
        return 0;
    }
    let alive = serving && addr == v.hc_addr;
    if v.primary {
        if alive && primary {
            WRITE_OK
        } else {
            0
        }
    } else if !local() {
        0
    } else if alive {
        BELIEVED | READ_OK
    } else {
        BELIEVED
    }
}

/// A view that routes to the process at `addr`: connected to it and told it serves (what
/// a discovery of a restarted tablet waits for).
#[inline(always)]
fn discovers(v: &View, addr: u32) -> bool {
    v.connected && v.serving && v.hc_addr == addr
}

/// The views and the routes, with what routing reads (the parameters, the cells, the
/// tablets) and moves besides (the workload's accounting, the restarts' discoveries): the
/// world's fields, lent for one event (`RolloutWorld::net`).
pub(crate) struct Net<'a> {
    /// The parameters.
    pub(crate) p: &'a RolloutParams,
    /// The cells.
    pub(crate) cells: &'a Cells,
    /// The tablets ([`super::tablet::Tablets::list`]).
    pub(crate) tablets: &'a [Tablet],
    /// Every restart ([`super::tablet::Tablets::restarts`]).
    pub(crate) restarts: &'a mut [RestartRec],
    /// (vtgate, restart) pairs not yet discovered.
    pub(crate) pending_discoveries: &'a mut u64,
    /// `views[g * n_tablets + t]`.
    pub(crate) views: &'a mut [View],
    /// `routes[g * shards + s]`.
    pub(crate) routes: &'a mut [Route],
    /// The workload, whose intervals a moved route closes.
    pub(crate) workload: &'a mut Workload,
    /// Number of shards (the routes of a vtgate), kept here: every route index reads it.
    pub(crate) shards: usize,
}

impl Net<'_> {
    /// Tablets per shard.
    #[inline]
    pub(crate) fn per_shard(&self) -> usize {
        self.p.replicas_per_shard as usize + 1
    }
    /// Number of vtgates.
    #[inline]
    pub(crate) fn m(&self) -> usize {
        self.p.vtgates as usize
    }
    /// Index of (vtgate g, tablet t) in `views`.
    #[inline]
    pub(crate) fn vi(&self, g: usize, t: usize) -> usize {
        g * self.tablets.len() + t
    }

    /// [`Self::check_discovery`] of every vtgate, with the tablet's and its restart's fields
    /// read once.
    pub(crate) fn check_discovery_all(&mut self, now: SimTime, t: usize) {
        let n = self.tablets.len();
        let tab = &self.tablets[t];
        if tab.restart == NONE || !tab.serving {
            return;
        }
        let addr = tab.addr;
        let r = &mut self.restarts[tab.restart as usize];
        if r.serving_at == SimTime::MAX {
            return;
        }
        let mut found = 0;
        for (g, d) in r.discovered.iter_mut().enumerate() {
            let v = &self.views[g * n + t];
            if discovers(v, addr) && *d == SimTime::MAX {
                *d = now;
                found += 1;
            }
        }
        *self.pending_discoveries -= found;
    }

    /// Record the first time vtgate `g` routes to tablet `t`'s restarted process.
    pub(crate) fn check_discovery(&mut self, now: SimTime, g: usize, t: usize) {
        let tab = &self.tablets[t];
        if tab.restart == NONE || !tab.serving {
            return;
        }
        if !discovers(&self.views[self.vi(g, t)], tab.addr) {
            return;
        }
        let r = &mut self.restarts[tab.restart as usize];
        if r.serving_at == SimTime::MAX || r.discovered[g] != SimTime::MAX {
            return;
        }
        r.discovered[g] = now;
        *self.pending_discoveries -= 1;
    }

    /// What the view of (`g`, `t`) adds to its route: [`BELIEVED`] (a replica the vtgate
    /// may route a read to), [`READ_OK`] (one that is alive too), [`WRITE_OK`] (a live
    /// primary). [`Self::route_scan`] is the OR over a shard's views.
    #[inline]
    pub(crate) fn contrib(&self, g: usize, t: usize) -> u8 {
        let tab = &self.tablets[t];
        contrib_of(
            &self.views[self.vi(g, t)],
            (tab.serving, tab.addr, tab.primary),
            || self.replica_may_route(g, t),
        )
    }

    /// vtgate `g` may route a replica read to tablet `t` by its cell: one cell, or replica
    /// reads allowed to other cells, or `t` in `g`'s cell.
    #[inline]
    fn replica_may_route(&self, g: usize, t: usize) -> bool {
        self.p.vtgate.replica_reads_other_cells
            || self.cells.shape.is_none()
            || self.cells.cell_of(t) == self.cells.gate_cell(g)
    }

    /// [`Self::recount`] and [`Self::reevaluate_if`] of every vtgate's view of tablet `t`,
    /// vtgate by vtgate (after a change of the tablet's own state), with the tablet's
    /// fields read once.
    pub(crate) fn recount_all(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        let (n, s_n) = (self.tablets.len(), self.shards);
        let tab = &self.tablets[t];
        let (state, shard) = ((tab.serving, tab.addr, tab.primary), tab.shard as usize);
        for g in 0..self.m() {
            let i = g * n + t;
            let v = &self.views[i];
            let (was, c) = (v.contrib, contrib_of(v, state, || self.replica_may_route(g, t)));
            debug_assert_eq!(c, self.contrib(g, t));
            if c == was {
                debug_assert!(self.route_is_current(g, shard), "vtgate {g} shard {shard}");
                continue;
            }
            self.set_contrib(i, g * s_n + shard, was, c);
            self.reevaluate(now, g, shard, s);
        }
    }

    /// Bring the counters of the route of (`g`, tablet `t`'s shard) up to date with the view
    /// of (`g`, `t`): called after every change of a field [`Self::contrib`] reads (the view's
    /// or the tablet's), before the route is re-evaluated.
    /// Returns whether the contribution changed: when it did not, the route cannot have
    /// moved (it is an OR over the contributions and was current before the change).
    #[inline]
    pub(crate) fn recount(&mut self, g: usize, t: usize) -> bool {
        let now = self.contrib(g, t);
        let i = self.vi(g, t);
        let was = self.views[i].contrib;
        if now == was {
            return false;
        }
        let idx = g * self.shards + self.tablets[t].shard as usize;
        self.set_contrib(i, idx, was, now);
        true
    }

    /// View `i`'s contribution becomes `c` (it was `was`); route `idx`'s counters move with it.
    #[inline(always)]
    fn set_contrib(&mut self, i: usize, idx: usize, was: u8, c: u8) {
        self.views[i].contrib = c;
        let counts = &mut self.routes[idx].counts;
        // The lanes never underflow: the counts include what the view added before.
        *counts = counts.wrapping_add(lanes(c)).wrapping_sub(lanes(was));
    }

    /// (read state, write ok) of vtgate `g` for `shard`, from the route's counters (O(1));
    /// equal to [`Self::route_scan`] (checked under debug assertions).
    #[inline]
    pub(crate) fn route_state(&self, g: usize, shard: usize) -> (u8, bool) {
        let c = self.routes[g * self.shards + shard].counts;
        let read = if c & 0xffff_0000 != 0 {
            0
        } else if c & 0xffff != 0 {
            1
        } else {
            2
        };
        let st = (read, c >> 32 != 0);
        debug_assert_eq!(st, self.route_scan(g, shard), "vtgate {g} shard {shard}");
        st
    }

    /// (read state, write ok) of vtgate `g` for `shard`, from its views and the tablets.
    pub(crate) fn route_scan(&self, g: usize, shard: usize) -> (u8, bool) {
        let per = self.per_shard();
        let base = shard * per;
        let views = &self.views[self.vi(g, base)..][..per];
        let tablets = &self.tablets[base..][..per];
        // A replica of another cell is not in the healthy list (no shared alias,
        // `isIncluded`) when replica reads stay in the vtgate's cell; one cell: all local.
        let other_cells_out = !self.p.vtgate.replica_reads_other_cells && self.cells.shape.is_some();
        let (mut believed, mut read_ok, mut write_ok) = (false, false, false);
        for (k, (v, tab)) in views.iter().zip(tablets).enumerate() {
            if !v.routes() {
                continue;
            }
            let alive = tab.serving && tab.addr == v.hc_addr;
            if v.primary {
                write_ok |= alive && tab.primary;
            } else if other_cells_out && self.cells.cell_of(base + k) != self.cells.gate_cell(g) {
                continue;
            } else {
                believed = true;
                read_ok |= alive;
            }
        }
        let read = if read_ok {
            0
        } else if believed {
            1
        } else {
            2
        };
        (read, write_ok)
    }

    /// [`Self::reevaluate`] when `changed`: a caller passes what [`Self::recount`] returned
    /// for every view it changed (OR-ed), so `false` means no contribution to the route
    /// moved. The route is re-evaluated after every change of a contribution, so it is then
    /// already current (checked under debug assertions).
    #[inline]
    pub(crate) fn reevaluate_if(
        &mut self,
        changed: bool,
        now: SimTime,
        g: usize,
        shard: usize,
        s: &mut Scheduler<Event>,
    ) {
        if changed {
            self.reevaluate(now, g, shard, s);
        } else {
            debug_assert!(self.route_is_current(g, shard), "vtgate {g} shard {shard}");
        }
    }

    /// The route of (`g`, `shard`) is what its views and tablets give now.
    pub(crate) fn route_is_current(&self, g: usize, shard: usize) -> bool {
        let r = &self.routes[g * self.shards + shard];
        self.route_scan(g, shard) == (r.read, r.write_ok)
    }

    /// Re-derive vtgate `g`'s routing for `shard`; close accounting intervals on a change
    /// (inlined: most re-evaluations find the route as it was, a few instructions).
    #[inline]
    pub(crate) fn reevaluate(
        &mut self,
        now: SimTime,
        g: usize,
        shard: usize,
        s: &mut Scheduler<Event>,
    ) {
        let (read, write_ok) = self.route_state(g, shard);
        let idx = g * self.shards + shard;
        let r = &self.routes[idx];
        if read != r.read || write_ok != r.write_ok {
            self.route_moved(now, idx, read, write_ok, s);
        }
    }

    /// [`Self::reevaluate`] of route `idx` whose state is now (`read`, `write_ok`), one of
    /// them changed: close the intervals that changed.
    #[inline(never)]
    fn route_moved(
        &mut self,
        now: SimTime,
        idx: usize,
        read: u8,
        write_ok: bool,
        s: &mut Scheduler<Event>,
    ) {
        if read != self.routes[idx].read {
            self.workload
                .close_read(now, self.routes, idx, read, &mut s.draws());
        }
        if write_ok != self.routes[idx].write_ok {
            self.workload
                .close_write(now, self.routes, idx, write_ok, self.p, &mut s.draws());
        }
    }

    /// Cells: a vtgate has no health check on a tablet of a cell it does not watch, and its
    /// routes start in the state its watched tablets give (one cell: nothing to do). Used by
    /// the constructor and by the reset (`reuse.rs`), on views and routes in their
    /// all-connected start state.
    pub(crate) fn mask_unwatched(&mut self) {
        let (m, n, s_n) = (self.m(), self.tablets.len(), self.shards);
        // All connected and serving: a primary's view adds a live primary, a replica's a
        // live believed replica (`recount` below corrects what the cells mask out).
        let r = u64::from(self.p.replicas_per_shard);
        for route in self.routes.iter_mut() {
            route.counts = r | r << 16 | 1 << 32;
        }
        for row in self.views.chunks_exact_mut(n) {
            for (v, tab) in row.iter_mut().zip(self.tablets) {
                v.contrib = if tab.primary {
                    WRITE_OK
                } else {
                    BELIEVED | READ_OK
                };
            }
        }
        let cells = self.cells;
        if let Some(shape) = &cells.shape {
            // A vtgate has no health check on a tablet of a cell it does not watch.
            for g in 0..m {
                for t in 0..n {
                    if !shape.watches(g, t) {
                        let i = self.vi(g, t);
                        let v = &mut self.views[i];
                        v.hc_addr = NONE;
                        v.connected = false;
                        v.serving = false;
                        v.primary = false;
                    }
                }
            }
            // The routes start in the state the watched tablets give (a vtgate that sees no
            // replica it may route to is exposed from the start).
            for g in 0..m {
                for sh in 0..s_n {
                    let (read, write_ok) = self.route_scan(g, sh);
                    let r = &mut self.routes[g * s_n + sh];
                    r.read = read;
                    r.write_ok = write_ok;
                }
            }
            // The routes' counters, corrected for the masked views (and, with replica reads
            // kept in the vtgate's cell, the other cells' replicas).
            for g in 0..m {
                for t in 0..n {
                    self.recount(g, t);
                }
            }
        }
    }
}
