//! vtgate: topology watcher, health checks and routing (vitessio/vitess `go/vt/discovery`).
//!
//! - *Topology watcher* (vitessio/vitess `go/vt/discovery/topology_watcher.go`): a fixed-period
//!   ticker from the vtgate's phase, no jitter by
//!   default. A poll diffs every tablet record against the health checks: a cleared record
//!   drops the health check, a new address replaces it (`ReplaceTablet` = remove + add).
//! - *Health check* (vitessio/vitess `go/vt/discovery/tablet_health_check.go`): a new one gets the
//!   tablet's state `first_health_delay` (plus
//!   `topo_read_latency`) after the poll; later changes arrive after `health_stream_delay`.
//!   A dead address is never healthy again; with `keep_address_on_restart` the retry backoff
//!   reconnects without a poll.
//! - *Routing*: a replica read goes to a tablet the vtgate believes serving as REPLICA; it
//!   fails at once with none ("no healthy tablet available", no buffering, no fallback to
//!   another type). A read to a tablet already shutting down is retried on another believed
//!   replica, so it fails only when every believed one is dead (`routed_to_dead`). The retry
//!   limit of 3 attempts never binds here: at most one tablet per shard is in flight.

use super::event::Event;
use super::tablet::first_attempt_at_or_after;
use super::world::{RolloutWorld, View, NONE};
use crate::sim::{Scheduler, SimDuration, SimTime};

/// [`RolloutWorld::contrib`]: a believed replica.
pub(super) const BELIEVED: u8 = 1;
/// [`RolloutWorld::contrib`]: a believed replica that is alive.
pub(super) const READ_OK: u8 = 2;
/// [`RolloutWorld::contrib`]: a live primary.
pub(super) const WRITE_OK: u8 = 4;

/// A contribution spread on the 16-bit lanes of [`super::world::Route::counts`]: bit k of
/// `c` to lane k.
#[inline]
pub(super) fn lanes(c: u8) -> u64 {
    let c = u64::from(c);
    (c & 1) | (c & 2) << 15 | (c & 4) << 30
}

/// What a view `v` adds to its route ([`RolloutWorld::contrib`]), given its tablet's
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

impl RolloutWorld {
    /// A full `loadTablets`.
    pub(super) fn on_poll(&mut self, now: SimTime, g: usize, s: &mut Scheduler<Event>) {
        self.polls += 1;
        self.poll_log.push((g as u16, now));
        if self.shape.is_none() && self.outage.is_none() {
            for t in 0..self.tablets.len() {
                self.apply_record(now, g, t, s);
            }
        } else {
            // One watcher per watched cell, all on this ticker: a cell whose read fails
            // skips this tick (`loadTablets` returns before `storeTabletInfos`).
            let cells = self.shape.as_ref().map_or(1, |sh| sh.names.len());
            let mut down = vec![false; cells];
            for (c, d) in down.iter_mut().enumerate() {
                let watched = self.shape.as_ref().is_none_or(|sh| {
                    sh.watch[sh.vtgate_cell[g] as usize * cells + c]
                });
                *d = self.outage.as_ref().is_some_and(|o| o.down(c as u16, now));
                if watched && *d {
                    let note = super::world::Note::TopoError {
                        g: g as u16,
                        cell: c as u16,
                        shard: NONE,
                    };
                    self.note(now, note);
                }
            }
            for t in 0..self.tablets.len() {
                if self.watches(g, t) && !down[self.cell_of(t) as usize] {
                    self.apply_record(now, g, t, s);
                }
            }
        }
        let tper = self.p.vtgate.tablet_refresh_interval;
        let j = self.p.vtgate.poll_jitter;
        let v = &mut self.vtgates[g];
        v.next_base += tper;
        let at = v.next_base + super::world::jitter(&mut v.rng, j);
        if self.use_ticks {
            // The poll after this one joins the end of the ring with the number its event
            // would take now, and the ring's next poll becomes the pending event
            // (`world::Tick`).
            let seq = s.reserve();
            let h = self.tick_head;
            debug_assert_eq!((self.ticks[h].g, self.ticks[h].at), (g as u16, now));
            self.ticks[h] = super::world::Tick {
                at,
                seq,
                g: g as u16,
            };
            let h = if h + 1 == self.ticks.len() { 0 } else { h + 1 };
            self.tick_head = h;
            let k = self.ticks[h];
            s.at_reserved(k.at, k.seq, Event::Poll { g: k.g });
        } else {
            s.at(at, Event::Poll { g: g as u16 });
        }
    }

    /// `loadTabletsForKeyspaceShard`: one shard, after the primary left (vitessio/vitess
    /// `go/vt/discovery/topology_watcher.go`).
    pub(super) fn on_shard_reload(
        &mut self,
        now: SimTime,
        g: usize,
        shard: u16,
        s: &mut Scheduler<Event>,
    ) {
        self.partial_reloads += 1;
        let per = self.per_shard();
        let base = shard as usize * per;
        let demoted = self.shard_ops[shard as usize].prs_old;
        // The one watcher that takes the trigger reloads the shard in its cell only.
        let cell = match &self.shape {
            None => Some(0),
            Some(sh) => sh.reload_cell[sh.vtgate_cell[g] as usize],
        };
        let Some(cell) = cell else { return };
        if self.outage.as_ref().is_some_and(|o| o.down(cell, now)) {
            let note = super::world::Note::TopoError {
                g: g as u16,
                cell,
                shard: shard as u32,
            };
            self.note(now, note);
            return;
        }
        self.note(
            now,
            super::world::Note::Reload {
                g: g as u16,
                shard,
                demoted,
            },
        );
        for t in base..base + per {
            if self.shape.is_none() || self.cell_of(t) == cell {
                self.apply_record(now, g, t, s);
            }
        }
    }

    /// Diff tablet `t`'s topology record against vtgate `g`'s health check (inlined: most
    /// records of a poll are unchanged).
    #[inline]
    fn apply_record(&mut self, now: SimTime, g: usize, t: usize, s: &mut Scheduler<Event>) {
        if self.views[self.vi(g, t)].hc_addr != self.tablets[t].record {
            self.replace_check(now, g, t, s);
        }
    }

    /// Replace vtgate `g`'s health check on tablet `t` by one on its record's address.
    #[inline(never)]
    fn replace_check(&mut self, now: SimTime, g: usize, t: usize, s: &mut Scheduler<Event>) {
        let rec = self.tablets[t].record;
        let i = self.vi(g, t);
        let retry = self.p.vtgate.health_check_retry_delay.as_nanos();
        let delay = self.p.vtgate.topo_read_latency + self.p.vtgate.first_health_delay;
        if self.journal.is_some() {
            let v = self.views[i];
            let note = super::world::Note::Record {
                g: g as u16,
                tablet: t as u16,
                from: v.hc_addr,
                to: rec,
                was_serving: v.connected && v.serving,
                primary: self.tablets[t].primary,
            };
            self.note(now, note);
        }
        let v = &mut self.views[i];
        v.hc_addr = rec;
        v.connected = false;
        v.serving = false;
        v.gen += 1;
        v.backoff = retry;
        let gen = v.gen;
        let shard = self.tablets[t].shard as usize;
        let changed = self.recount(g, t);
        self.reevaluate_if(changed, now, g, shard, s);
        if rec != NONE {
            // Always through an event, even with zero delay: the dial happens after whatever
            // else is due at this instant (e.g. the tablet starting to serve).
            let (at, backoff) = self.live_dial(t, rec, now + delay, retry);
            self.views[i].backoff = backoff;
            s.at(
                at,
                Event::HealthConnect {
                    g: g as u16,
                    tablet: t as u16,
                    gen,
                },
            );
        }
    }

    /// The dial to schedule for a health check on tablet `t` at `addr` whose next dial is due
    /// `at` with `backoff` after it, and the backoff after the one returned.
    ///
    /// That dial itself, unless it must fail: the tablet's record is published at `addr` but
    /// its new process does not answer until the Serve event, due at
    /// [`Tablet::serve_at`](super::world::Tablet). A failed dial changes nothing but its
    /// backoff (`on_health_connect`), so the dials before that time are not stepped as
    /// events: the first dial at or after it is returned, with the backoff stepping would
    /// leave (as `on_down` does for a kept address). Nothing else can make such a dial succeed
    /// earlier; a newer health check (`gen`) makes the scheduled one stale exactly as it would
    /// the stepped ones. The hidden twin `RolloutSteppedDials` steps them, for the check that
    /// the runs are the same (`tests/rollout.rs`).
    #[inline]
    fn live_dial(&self, t: usize, addr: u32, at: SimTime, backoff: u64) -> (SimTime, u64) {
        let tab = &self.tablets[t];
        let up = tab.serve_at.0;
        if self.step_dials || tab.process_up || tab.record != addr || tab.addr != addr || at.0 >= up
        {
            return (at, backoff);
        }
        let cap = self.p.vtgate.healthcheck_timeout.as_nanos();
        let (at, backoff) = first_attempt_at_or_after(at.0, backoff, cap, up);
        (SimTime(at), backoff)
    }

    /// The health check dials; if the process is up at that address the stream delivers its
    /// current state at once (vitessio/vitess `go/vt/discovery/tablet_health_check.go`), else it
    /// retries with its backoff.
    pub(super) fn on_health_connect(
        &mut self,
        now: SimTime,
        g: usize,
        t: usize,
        gen: u32,
        s: &mut Scheduler<Event>,
    ) {
        let i = self.vi(g, t);
        if self.views[i].gen != gen {
            return;
        }
        let cap = self.p.vtgate.healthcheck_timeout.as_nanos();
        let retry = self.p.vtgate.health_check_retry_delay.as_nanos();
        let tab = &self.tablets[t];
        let v = &mut self.views[i];
        if tab.process_up && tab.addr == v.hc_addr {
            let note = super::world::Note::Serving {
                g: g as u16,
                tablet: t as u16,
                addr: v.hc_addr,
                from: false,
                to: tab.serving,
                primary: tab.primary,
            };
            v.connected = true;
            v.serving = tab.serving;
            v.primary = tab.primary;
            v.backoff = retry;
            let shard = tab.shard as usize;
            self.note(now, note);
            let changed = self.recount(g, t);
            self.reevaluate_if(changed, now, g, shard, s);
            self.check_discovery(now, g, t);
        } else {
            let (d, addr) = (v.backoff, v.hc_addr);
            let next = d.saturating_mul(2).min(cap);
            let (at, backoff) = self.live_dial(t, addr, now + SimDuration(d), next);
            self.views[i].backoff = backoff;
            s.at(
                at,
                Event::HealthConnect {
                    g: g as u16,
                    tablet: t as u16,
                    gen,
                },
            );
        }
    }

    /// A state change of tablet `t` arrives on the health stream of address `addr`, at every
    /// vtgate streaming from it.
    pub(super) fn on_health_push(
        &mut self,
        now: SimTime,
        t: usize,
        addr: u32,
        serving: bool,
        primary: bool,
        s: &mut Scheduler<Event>,
    ) {
        for g in 0..self.m() {
            let i = self.vi(g, t);
            let v = &mut self.views[i];
            if !(v.connected && v.hc_addr == addr) {
                continue;
            }
            let was = v.serving;
            v.serving = serving;
            v.primary = primary;
            if was != serving {
                let note = super::world::Note::Serving {
                    g: g as u16,
                    tablet: t as u16,
                    addr,
                    from: was,
                    to: serving,
                    primary,
                };
                self.note(now, note);
            }
            let shard = self.tablets[t].shard as usize;
            let changed = self.recount(g, t);
            self.reevaluate_if(changed, now, g, shard, s);
            self.check_discovery(now, g, t);
        }
    }

    /// [`Self::check_discovery`] of every vtgate, with the tablet's and its restart's fields
    /// read once.
    pub(super) fn check_discovery_all(&mut self, now: SimTime, t: usize) {
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
        self.pending_discoveries -= found;
    }

    /// Record the first time vtgate `g` routes to tablet `t`'s restarted process.
    pub(super) fn check_discovery(&mut self, now: SimTime, g: usize, t: usize) {
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
        self.pending_discoveries -= 1;
    }

    /// What the view of (`g`, `t`) adds to its route: [`BELIEVED`] (a replica the vtgate
    /// may route a read to), [`READ_OK`] (one that is alive too), [`WRITE_OK`] (a live
    /// primary). [`Self::route_scan`] is the OR over a shard's views.
    #[inline]
    pub(super) fn contrib(&self, g: usize, t: usize) -> u8 {
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
            || self.shape.is_none()
            || self.cell_of(t) == self.gate_cell(g)
    }

    /// [`Self::recount`] and [`Self::reevaluate_if`] of every vtgate's view of tablet `t`,
    /// vtgate by vtgate (after a change of the tablet's own state), with the tablet's
    /// fields read once.
    pub(super) fn recount_all(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        let (n, s_n) = (self.tablets.len(), self.shard_ops.len());
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
    pub(super) fn recount(&mut self, g: usize, t: usize) -> bool {
        let now = self.contrib(g, t);
        let i = self.vi(g, t);
        let was = self.views[i].contrib;
        if now == was {
            return false;
        }
        let idx = g * self.shard_ops.len() + self.tablets[t].shard as usize;
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
    pub(super) fn route_state(&self, g: usize, shard: usize) -> (u8, bool) {
        let c = self.routes[g * self.shard_ops.len() + shard].counts;
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
    pub(super) fn route_scan(&self, g: usize, shard: usize) -> (u8, bool) {
        let per = self.per_shard();
        let base = shard * per;
        let views = &self.views[self.vi(g, base)..][..per];
        let tablets = &self.tablets[base..][..per];
        // A replica of another cell is not in the healthy list (no shared alias,
        // `isIncluded`) when replica reads stay in the vtgate's cell; one cell: all local.
        let other_cells_out = !self.p.vtgate.replica_reads_other_cells && self.shape.is_some();
        let (mut believed, mut read_ok, mut write_ok) = (false, false, false);
        for (k, (v, tab)) in views.iter().zip(tablets).enumerate() {
            if !v.routes() {
                continue;
            }
            let alive = tab.serving && tab.addr == v.hc_addr;
            if v.primary {
                write_ok |= alive && tab.primary;
            } else if other_cells_out && self.cell_of(base + k) != self.gate_cell(g) {
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
    pub(super) fn reevaluate_if(
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
    pub(super) fn route_is_current(&self, g: usize, shard: usize) -> bool {
        let r = &self.routes[g * self.shard_ops.len() + shard];
        self.route_scan(g, shard) == (r.read, r.write_ok)
    }

    /// Re-derive vtgate `g`'s routing for `shard`; close accounting intervals on a change
    /// (inlined: most re-evaluations find the route as it was, a few instructions).
    #[inline]
    pub(super) fn reevaluate(
        &mut self,
        now: SimTime,
        g: usize,
        shard: usize,
        s: &mut Scheduler<Event>,
    ) {
        let (read, write_ok) = self.route_state(g, shard);
        let idx = g * self.shard_ops.len() + shard;
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
            self.close_read(now, idx, read, &mut s.draws());
        }
        if write_ok != self.routes[idx].write_ok {
            self.close_write(now, idx, write_ok, &mut s.draws());
        }
    }
}
