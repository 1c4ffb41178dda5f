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
//!
//! Holds each vtgate's state ([`Vtgate`], and [`Gates`], all of them: the poll ring, the
//! counters, the log), its topology watcher (polls and shard reloads) and its health checks;
//! what a view contributes to routing is [`super::routing`]'s.

use super::event::Event;
use super::params::{Phase, PrsReload, RolloutParams};
use super::routing::Net;
use super::streams::{jitter, phase_draw, phase_firsts, stream};
use super::tablet::{first_attempt_at_or_after, NONE};
use crate::model::dist::offset_of;
use crate::sim::rng::{uniform01, LazyRng};
use crate::sim::{Scheduler, SimDuration, SimTime};

/// One vtgate.
pub struct Vtgate {
    /// Phase of its topology ticker.
    pub(crate) phase: SimTime,
    /// Next tick of its ticker (before jitter).
    pub(crate) next_base: SimTime,
    /// Its stream (`"vtgate"`, index): phase, then jitter ([`phase_draw`]).
    pub(crate) rng: LazyRng,
}

/// A vtgate's next poll, kept by the vtgates (`Gates::ticks`).
///
/// Without jitter a vtgate polls at its phase + k·T, so the fleet's polls fall in one cyclic
/// order of the vtgates that never changes: a handled poll's next one, at now + T with a
/// sequence number taken now, orders after every other vtgate's next poll (each was made at
/// or before now, so it is due at or before now + T, and at now + T only if its number was
/// taken earlier). So the polls are kept in a ring in that order and only the earliest is in
/// the event queue, with the number its own event would have had: the queue pops every event
/// in exactly the order it did with one pending poll a vtgate (the same trace and digest),
/// and holds about `vtgates` fewer entries.
#[derive(Clone, Copy, Debug)]
pub struct Tick {
    pub(crate) at: SimTime,
    pub(crate) seq: u64,
    pub(crate) g: u16,
}

/// What one vtgate saw that its log would show (kept only when a run keeps its logs, for
/// `vtsim replay --emit-logs`; nothing here feeds the simulation or the digest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    /// A poll (or a shard reload) found tablet `tablet`'s record changed: the health check on
    /// address `from` is replaced by one on `to` (`NONE`: no record / cleared record).
    Record {
        /// vtgate.
        g: u16,
        /// tablet.
        tablet: u16,
        /// Address of the replaced health check.
        from: u32,
        /// Address of the record now (NONE: cleared by `tm.Close`).
        to: u32,
        /// The replaced health check was serving (its `finalizeConn` logs true => false).
        was_serving: bool,
        /// The tablet is PRIMARY in the topology record.
        primary: bool,
    },
    /// vtgate `g`'s health check on `addr` changed serving state, or got its first response.
    Serving {
        /// vtgate.
        g: u16,
        /// tablet.
        tablet: u16,
        /// Address of the stream.
        addr: u32,
        /// Serving before.
        from: bool,
        /// Serving now.
        to: bool,
        /// Type PRIMARY now.
        primary: bool,
    },
    /// The health stream of vtgate `g` on `addr` broke (the pod is gone).
    StreamError {
        /// vtgate.
        g: u16,
        /// tablet.
        tablet: u16,
        /// Address of the stream.
        addr: u32,
    },
    /// vtgate `g`'s topology read of `cell` failed (a tick, or a shard reload when `shard`
    /// is not `NONE`): nothing changed (`loadTablets` logs "error getting tablets for cell").
    TopoError {
        /// vtgate.
        g: u16,
        /// cell index.
        cell: u16,
        /// The shard of a failed shard reload, else `NONE`.
        shard: u32,
    },
    /// vtgate `g` reloads `shard` after seeing its primary `demoted` turn REPLICA
    /// (`loadTabletsTrigger`); the reload's record changes follow as `Record` notes.
    Reload {
        /// vtgate.
        g: u16,
        /// shard.
        shard: u16,
        /// The demoted primary.
        demoted: u16,
    },
}

/// Every vtgate: its ticker, the poll ring, the topology counters and the log.
pub struct Gates {
    /// vtgates.
    pub(crate) vtgates: Vec<Vtgate>,
    /// Full topology polls.
    pub(crate) polls: u64,
    /// Partial (one-shard) reloads.
    pub(crate) partial_reloads: u64,
    /// Every full poll: (vtgate, time).
    pub(crate) poll_log: Vec<(u16, SimTime)>,
    /// What the vtgates' logs would show, in time order (only when the run keeps its logs).
    pub(crate) journal: Option<Vec<(SimTime, Note)>>,
    /// Step every health-check dial that must fail as an event (the hidden twin
    /// `RolloutSteppedDials`), instead of scheduling the first one that can succeed.
    pub(crate) step_dials: bool,
    /// The vtgates' polls are kept in [`Self::ticks`] (polls without jitter, in a world that
    /// is not nested in a host's scheduler): only the earliest is a pending event.
    pub(crate) use_ticks: bool,
    /// Every vtgate's next poll, read cyclically from [`Self::tick_head`] in the order they
    /// pop; each holds the sequence number its event would have had ([`Scheduler::reserve`]).
    /// The constructor and the reset leave the first polls here in vtgate order, for
    /// `RolloutWorld::schedule_first_polls`.
    pub(crate) ticks: Vec<Tick>,
    /// The slot of the pending poll in [`Self::ticks`].
    pub(crate) tick_head: usize,
    /// The vtgates' first `u64`s of a run ([`phase_firsts`]), kept for the next run's.
    pub(crate) firsts: Vec<u64>,
}

impl Gates {
    /// The vtgates of `p` with `seed`: each one's phase and first poll (in [`Self::ticks`],
    /// vtgate by vtgate), keeping the logs when `logs`, the polls in the ring where `ticks`
    /// allows it.
    pub(crate) fn new(p: &RolloutParams, seed: u64, logs: bool, ticks: bool) -> Gates {
        let m = p.vtgates as usize;
        let tper = p.vtgate.tablet_refresh_interval;
        let fleet_base = match &p.vtgate.phase {
            Phase::Clustered { .. } => {
                let mut r = stream(seed, "vtgate-fleet", 0);
                uniform01(&mut r)
            }
            _ => 0.0,
        };
        let mut vtgates = Vec::with_capacity(m);
        let mut first_polls = Vec::with_capacity(m);
        let mut firsts = vec![0u64; m];
        phase_firsts(seed, p.vtgate.poll_jitter, &mut firsts);
        for g in 0..m {
            let mut rng = LazyRng::new(seed, "vtgate", g as u32);
            let u = phase_draw(&mut rng, p.vtgate.poll_jitter, firsts[g]);
            let phase = match &p.vtgate.phase {
                Phase::Uniform => offset_of(u, tper),
                Phase::Clustered { window } => {
                    let x = fleet_base * tper.as_nanos() as f64 + u * window.as_nanos() as f64;
                    SimDuration::from_nanos((x as u64) % tper.as_nanos())
                }
                Phase::Explicit { offsets } => offsets[g],
            };
            let phase = SimTime::ZERO + phase;
            let first = phase + jitter(&mut rng, p.vtgate.poll_jitter);
            first_polls.push(Tick {
                at: first,
                seq: 0,
                g: g as u16,
            });
            vtgates.push(Vtgate {
                phase,
                next_base: phase,
                rng,
            });
        }
        Gates {
            vtgates,
            polls: 0,
            partial_reloads: 0,
            // Sized for a typical rollout (a few polls per vtgate), to spare regrowth.
            poll_log: Vec::with_capacity(m * 8),
            journal: logs.then(Vec::new),
            step_dials: false,
            use_ticks: ticks && p.vtgate.poll_jitter == SimDuration::ZERO,
            ticks: first_polls,
            tick_head: 0,
            firsts,
        }
    }

    /// Keep `note` for the logs (a no-op unless the run keeps them).
    #[inline]
    pub(crate) fn note(&mut self, now: SimTime, note: Note) {
        if let Some(j) = &mut self.journal {
            j.push((now, note));
        }
    }

    /// A full `loadTablets`.
    pub(crate) fn on_poll(
        &mut self,
        now: SimTime,
        g: usize,
        net: &mut Net<'_>,
        s: &mut Scheduler<Event>,
    ) {
        self.polls += 1;
        self.poll_log.push((g as u16, now));
        let cl = net.cells;
        if cl.shape.is_none() && cl.outage.is_none() {
            for t in 0..net.tablets.len() {
                self.apply_record(now, g, t, net, s);
            }
        } else {
            // One watcher per watched cell, all on this ticker: a cell whose read fails
            // skips this tick (`loadTablets` returns before `storeTabletInfos`).
            let cells = cl.shape.as_ref().map_or(1, |sh| sh.names.len());
            let mut down = vec![false; cells];
            for (c, d) in down.iter_mut().enumerate() {
                let watched = cl.shape.as_ref().is_none_or(|sh| {
                    sh.watch[sh.vtgate_cell[g] as usize * cells + c]
                });
                *d = cl.outage.as_ref().is_some_and(|o| o.down(c as u16, now));
                if watched && *d {
                    let note = Note::TopoError {
                        g: g as u16,
                        cell: c as u16,
                        shard: NONE,
                    };
                    self.note(now, note);
                }
            }
            for t in 0..net.tablets.len() {
                if cl.watches(g, t) && !down[cl.cell_of(t) as usize] {
                    self.apply_record(now, g, t, net, s);
                }
            }
        }
        let tper = net.p.vtgate.tablet_refresh_interval;
        let j = net.p.vtgate.poll_jitter;
        let v = &mut self.vtgates[g];
        v.next_base += tper;
        let at = v.next_base + jitter(&mut v.rng, j);
        if self.use_ticks {
            // The poll after this one joins the end of the ring with the number its event
            // would take now, and the ring's next poll becomes the pending event
            // ([`Tick`]).
            let seq = s.reserve();
            let h = self.tick_head;
            debug_assert_eq!((self.ticks[h].g, self.ticks[h].at), (g as u16, now));
            self.ticks[h] = Tick {
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
    /// `go/vt/discovery/topology_watcher.go`); `demoted` is the PRS's old primary (for the
    /// log).
    pub(crate) fn on_shard_reload(
        &mut self,
        now: SimTime,
        g: usize,
        shard: u16,
        demoted: u16,
        net: &mut Net<'_>,
        s: &mut Scheduler<Event>,
    ) {
        self.partial_reloads += 1;
        let per = net.per_shard();
        let base = shard as usize * per;
        let cl = net.cells;
        // The one watcher that takes the trigger reloads the shard in its cell only.
        let cell = match &cl.shape {
            None => Some(0),
            Some(sh) => sh.reload_cell[sh.vtgate_cell[g] as usize],
        };
        let Some(cell) = cell else { return };
        if cl.outage.as_ref().is_some_and(|o| o.down(cell, now)) {
            let note = Note::TopoError {
                g: g as u16,
                cell,
                shard: shard as u32,
            };
            self.note(now, note);
            return;
        }
        self.note(
            now,
            Note::Reload {
                g: g as u16,
                shard,
                demoted,
            },
        );
        for t in base..base + per {
            if cl.shape.is_none() || cl.cell_of(t) == cell {
                self.apply_record(now, g, t, net, s);
            }
        }
    }

    /// Diff tablet `t`'s topology record against vtgate `g`'s health check (inlined: most
    /// records of a poll are unchanged).
    #[inline]
    fn apply_record(
        &mut self,
        now: SimTime,
        g: usize,
        t: usize,
        net: &mut Net<'_>,
        s: &mut Scheduler<Event>,
    ) {
        if net.views[net.vi(g, t)].hc_addr != net.tablets[t].record {
            self.replace_check(now, g, t, net, s);
        }
    }

    /// Replace vtgate `g`'s health check on tablet `t` by one on its record's address.
    #[inline(never)]
    fn replace_check(
        &mut self,
        now: SimTime,
        g: usize,
        t: usize,
        net: &mut Net<'_>,
        s: &mut Scheduler<Event>,
    ) {
        let rec = net.tablets[t].record;
        let i = net.vi(g, t);
        let retry = net.p.vtgate.health_check_retry_delay.as_nanos();
        let delay = net.p.vtgate.topo_read_latency + net.p.vtgate.first_health_delay;
        if self.journal.is_some() {
            let v = net.views[i];
            let note = Note::Record {
                g: g as u16,
                tablet: t as u16,
                from: v.hc_addr,
                to: rec,
                was_serving: v.connected && v.serving,
                primary: net.tablets[t].primary,
            };
            self.note(now, note);
        }
        let v = &mut net.views[i];
        v.hc_addr = rec;
        v.connected = false;
        v.serving = false;
        v.gen += 1;
        v.backoff = retry;
        let gen = v.gen;
        let shard = net.tablets[t].shard as usize;
        let changed = net.recount(g, t);
        net.reevaluate_if(changed, now, g, shard, s);
        if rec != NONE {
            // Always through an event, even with zero delay: the dial happens after whatever
            // else is due at this instant (e.g. the tablet starting to serve).
            let (at, backoff) = self.live_dial(t, rec, now + delay, retry, net);
            net.views[i].backoff = backoff;
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
    /// [`Tablet::serve_at`](super::tablet::Tablet). A failed dial changes nothing but its
    /// backoff (`on_health_connect`), so the dials before that time are not stepped as
    /// events: the first dial at or after it is returned, with the backoff stepping would
    /// leave (as `on_down` does for a kept address). Nothing else can make such a dial succeed
    /// earlier; a newer health check (`gen`) makes the scheduled one stale exactly as it would
    /// the stepped ones. The hidden twin `RolloutSteppedDials` steps them, for the check that
    /// the runs are the same (`tests/rollout.rs`).
    #[inline]
    fn live_dial(
        &self,
        t: usize,
        addr: u32,
        at: SimTime,
        backoff: u64,
        net: &Net<'_>,
    ) -> (SimTime, u64) {
        let tab = &net.tablets[t];
        let up = tab.serve_at.0;
        if self.step_dials || tab.process_up || tab.record != addr || tab.addr != addr || at.0 >= up
        {
            return (at, backoff);
        }
        let cap = net.p.vtgate.healthcheck_timeout.as_nanos();
        let (at, backoff) = first_attempt_at_or_after(at.0, backoff, cap, up);
        (SimTime(at), backoff)
    }

    /// The health check dials; if the process is up at that address the stream delivers its
    /// current state at once (vitessio/vitess `go/vt/discovery/tablet_health_check.go`), else it
    /// retries with its backoff.
    pub(crate) fn on_health_connect(
        &mut self,
        now: SimTime,
        g: usize,
        t: usize,
        gen: u32,
        net: &mut Net<'_>,
        s: &mut Scheduler<Event>,
    ) {
        let i = net.vi(g, t);
        if net.views[i].gen != gen {
            return;
        }
        let cap = net.p.vtgate.healthcheck_timeout.as_nanos();
        let retry = net.p.vtgate.health_check_retry_delay.as_nanos();
        let tab = &net.tablets[t];
        let v = &mut net.views[i];
        if tab.process_up && tab.addr == v.hc_addr {
            let note = Note::Serving {
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
            let changed = net.recount(g, t);
            net.reevaluate_if(changed, now, g, shard, s);
            net.check_discovery(now, g, t);
        } else {
            let (d, addr) = (v.backoff, v.hc_addr);
            let next = d.saturating_mul(2).min(cap);
            let (at, backoff) = self.live_dial(t, addr, now + SimDuration(d), next, net);
            net.views[i].backoff = backoff;
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
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_health_push(
        &mut self,
        now: SimTime,
        t: usize,
        addr: u32,
        serving: bool,
        primary: bool,
        net: &mut Net<'_>,
        s: &mut Scheduler<Event>,
    ) {
        for g in 0..net.m() {
            let i = net.vi(g, t);
            let v = &mut net.views[i];
            if !(v.connected && v.hc_addr == addr) {
                continue;
            }
            let was = v.serving;
            v.serving = serving;
            v.primary = primary;
            if was != serving {
                let note = Note::Serving {
                    g: g as u16,
                    tablet: t as u16,
                    addr,
                    from: was,
                    to: serving,
                    primary,
                };
                self.note(now, note);
            }
            let shard = net.tablets[t].shard as usize;
            let changed = net.recount(g, t);
            net.reevaluate_if(changed, now, g, shard, s);
            net.check_discovery(now, g, t);
        }
    }

    /// Tablet `t`'s old pod is gone: every health stream to its address fails. With a kept
    /// address, each vtgate's health check retries with its backoff and finds the new
    /// process (published at the tablet's `publish_at`).
    pub(crate) fn pod_gone(
        &mut self,
        now: SimTime,
        t: usize,
        net: &mut Net<'_>,
        s: &mut Scheduler<Event>,
    ) {
        let tab = &net.tablets[t];
        let (shard, addr, publish_at) = (tab.shard as usize, tab.addr, tab.publish_at);
        let keep = net.p.tablets.keep_address_on_restart;
        let first = net.p.vtgate.health_check_retry_delay.as_nanos();
        let cap = net.p.vtgate.healthcheck_timeout.as_nanos();
        for g in 0..net.m() {
            let i = net.vi(g, t);
            let v = &mut net.views[i];
            if v.hc_addr != addr {
                continue;
            }
            let broke = v.connected;
            v.connected = false;
            v.serving = false;
            if keep {
                // Backoff 2 ms, 4 ms, ... capped: the first attempt at or after the new process.
                let (at, delay) = first_attempt_at_or_after(now.0, first, cap, publish_at.0);
                v.gen += 1;
                v.backoff = delay;
                s.at(
                    SimTime(at),
                    Event::HealthConnect {
                        g: g as u16,
                        tablet: t as u16,
                        gen: v.gen,
                    },
                );
            }
            if broke {
                let note = Note::StreamError {
                    g: g as u16,
                    tablet: t as u16,
                    addr,
                };
                self.note(now, note);
            }
            let changed = net.recount(g, t);
            net.reevaluate_if(changed, now, g, shard, s);
        }
    }

    /// PRS of `shard` ended: `new` is PRIMARY, `old` a serving REPLICA. A vtgate that has no
    /// health stream to the new primary sees its PRIMARY entry vanish and reloads the shard
    /// from the topology (`loadTabletsTrigger`, vitessio/vitess
    /// `go/vt/discovery/topology_watcher.go`, PR #12893), when the tablets' health pushes
    /// reach it; every vtgate's route of the shard is recounted.
    pub(crate) fn primary_moved(
        &mut self,
        now: SimTime,
        shard: usize,
        (old, new): (usize, usize),
        net: &mut Net<'_>,
        s: &mut Scheduler<Event>,
    ) {
        let seen = now + net.p.vtgate.health_stream_delay;
        let new_addr = net.tablets[new].addr;
        let all = net.p.vtgate.prs_reload == PrsReload::AllVtgates;
        for g in 0..net.m() {
            let v = net.views[net.vi(g, new)];
            // The trigger needs the demoted primary's PRIMARY -> REPLICA update, so a health
            // stream to it: its cell must be watched.
            let knows_new = v.connected && v.hc_addr == new_addr;
            if (all || !knows_new) && net.cells.watches(g, old) {
                s.at(
                    seen,
                    Event::ShardReload {
                        g: g as u16,
                        shard: shard as u16,
                    },
                );
            }
            let changed = net.recount(g, old) | net.recount(g, new);
            net.reevaluate_if(changed, now, g, shard, s);
        }
    }
}
