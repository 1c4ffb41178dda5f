//! The rollout world: its state, its construction from parameters, and the event dispatch.
//! The behaviour of each component lives beside it: [`super::tablet`], [`super::vtgate`],
//! [`super::operator`], [`super::workload`].

use super::event::Event;
use super::metrics::Burst;
use super::params::{DurationDist, Phase, RolloutParams, WorkloadMode};
use crate::model::dist::{offset_of, uniform_offset};
use crate::sim::rng::{cached_stream, exponential, first_u64s, uniform01, unit_f64, LazyRng};
use crate::sim::{Scheduler, SimDuration, SimRng, SimTime, Simulation, Trace, World};

/// "No address" / "no restart" marker in u32 fields.
pub const NONE: u32 = u32::MAX;

/// One tablet (a vttablet pod).
pub struct Tablet {
    /// Its shard.
    pub(crate) shard: u16,
    /// Type PRIMARY (else REPLICA).
    pub(crate) primary: bool,
    /// The query service serves.
    pub(crate) serving: bool,
    /// The vttablet's gRPC server answers at `addr`, so a health stream can connect: from the
    /// first serving state after a restart until the pod is gone. vttablet starts its gRPC
    /// server only after `tm.Start` returns (after `tmState.Open`), and `StreamHealth` is
    /// UNAVAILABLE until the first `SetServingType` (go/cmd/vttablet/cli/cli.go,
    /// health_streamer.go); the topology record is published earlier, at `initTablet`. A vtgate
    /// that polls in between reaches the tablet through its retry backoff.
    pub(crate) process_up: bool,
    /// The current pod's address.
    pub(crate) addr: u32,
    /// The address in its topology record (`NONE` once cleared by `tm.Close`).
    pub(crate) record: u32,
    /// Index of its restart in [`RolloutWorld::restarts`], or `NONE`.
    pub(crate) restart: u32,
    /// When the new process publishes its address (known from Down on).
    pub(crate) publish_at: SimTime,
    /// When the new process first serves, so `process_up` turns true (known from Publish on:
    /// valid while the record is published and the process is not up).
    pub(crate) serve_at: SimTime,
    /// Origin of the readiness-probe grid of the current pod.
    pub(crate) probe_origin: SimTime,
    /// Availability generation: a Ready, Flap or Available event of an older one is stale.
    pub(crate) avail_gen: u32,
    /// Its random stream (`"tablet"`, index).
    pub(crate) rng: LazyRng,
}

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
    /// What the view adds to its route's counters ([`RolloutWorld::contrib`]) as last
    /// counted by [`RolloutWorld::recount`].
    pub(crate) contrib: u8,
}

impl View {
    /// The view counts in the vtgate's routing ([`RolloutWorld::route_state`] skips every
    /// other one).
    #[inline]
    pub(crate) fn routes(&self) -> bool {
        self.connected && self.serving
    }
}

/// One vtgate.
pub struct Vtgate {
    /// Phase of its topology ticker.
    pub(crate) phase: SimTime,
    /// Next tick of its ticker (before jitter).
    pub(crate) next_base: SimTime,
    /// Its stream (`"vtgate"`, index): phase, then jitter ([`phase_draw`]).
    pub(crate) rng: LazyRng,
    /// Its workload stream (`"workload"`, index).
    pub(crate) wl_rng: LazyRng,
}

/// Routing state of one (vtgate, shard) and the open intervals of the workload accounting.
#[derive(Clone, Copy)]
pub struct Route {
    /// 0 = a replica read succeeds, 1 = it is routed to a dead tablet, 2 = no healthy tablet.
    pub read: u8,
    /// Start of the current read-state interval.
    pub(crate) read_since: SimTime,
    /// Start of the current exposure (read ≠ 0).
    pub(crate) exp_start: SimTime,
    /// Routed-to-dead errors in the current exposure.
    pub(crate) exp_dead: u64,
    /// No-healthy-tablet errors in the current exposure.
    pub(crate) exp_none: u64,
    /// A primary write can be served.
    pub write_ok: bool,
    /// Start of the current write-state interval.
    pub(crate) write_since: SimTime,
    /// Writes buffered in the current primary outage (per-query mode).
    pub(crate) pending_writes: u64,
    /// Views of this route that count as a believed replica, a live believed replica and a
    /// live primary, in the 16-bit lanes 0, 1 and 2 ([`super::vtgate::lanes`]):
    /// [`RolloutWorld::route_state`] from these is O(1).
    pub(crate) counts: u64,
}

impl Route {
    /// A route at time zero: reads succeed, writes succeed, nothing open (the constructor's
    /// and the reset's start state).
    pub(crate) const START: Route = Route {
        read: 0,
        read_since: SimTime::ZERO,
        exp_start: SimTime::ZERO,
        exp_dead: 0,
        exp_none: 0,
        write_ok: true,
        write_since: SimTime::ZERO,
        pending_writes: 0,
        counts: 0,
    };
}

/// The record of one tablet restart.
#[derive(Clone, Debug)]
pub struct RestartRec {
    /// The tablet.
    pub tablet: u16,
    /// Its shard.
    pub shard: u16,
    /// It was the shard's primary when the rollout started (restarted after PRS).
    pub old_primary: bool,
    /// SIGTERM.
    pub drain_at: SimTime,
    /// Old pod gone.
    pub down_at: SimTime,
    /// New address published.
    pub publish_at: SimTime,
    /// New process serving.
    pub serving_at: SimTime,
    /// First Ready.
    pub ready_at: SimTime,
    /// Available (the operator may go on).
    pub available_at: SimTime,
    /// Readiness flaps while waiting for Available.
    pub flaps: u32,
    /// When each vtgate first routed to the new process (`SimTime::MAX`: not yet).
    pub discovered: Vec<SimTime>,
}

/// One exposure interval of one (vtgate, shard): no replica read can succeed.
#[derive(Clone, Copy, Debug)]
pub struct Exposure {
    /// vtgate.
    pub g: u16,
    /// shard.
    pub shard: u16,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
    /// Reads routed to a tablet that had died before the vtgate noticed.
    pub dead_errors: u64,
    /// Reads failed with "no healthy tablet available".
    pub none_errors: u64,
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

/// One PlannedReparentShard.
#[derive(Clone, Copy, Debug)]
pub struct PrsRec {
    /// The shard.
    pub shard: u16,
    /// The old primary.
    pub old: u16,
    /// The new primary.
    pub new: u16,
    /// When it started (the old primary stopped serving as primary).
    pub start: SimTime,
    /// When it ended.
    pub end: SimTime,
}

/// Per-shard operator state.
pub struct ShardOp {
    /// Tablets to restart, in order.
    pub(crate) order: Vec<u16>,
    /// Next position in `order`.
    pub(crate) next: usize,
    /// Replicas restarted so far, in order.
    pub(crate) restarted: Vec<u16>,
    /// Old primary of the PRS in progress.
    pub(crate) prs_old: u16,
    /// Candidate of the PRS in progress.
    pub(crate) prs_new: u16,
    /// All of `order` is Available.
    pub(crate) done: bool,
    /// Its stream (`"operator"`, shard).
    pub(crate) rng: LazyRng,
}

/// The whole rollout world.
pub struct RolloutWorld {
    /// The parameters.
    pub(crate) p: RolloutParams,
    /// Tablets, shard-major: tablet `s*(R+1)` is shard s's first primary.
    pub(crate) tablets: Vec<Tablet>,
    /// vtgates.
    pub(crate) vtgates: Vec<Vtgate>,
    /// `views[g * n_tablets + t]`.
    pub(crate) views: Vec<View>,
    /// `routes[g * shards + s]`.
    pub routes: Vec<Route>,
    /// Operator state per shard.
    pub(crate) shard_ops: Vec<ShardOp>,
    /// Every restart, in drain order.
    pub(crate) restarts: Vec<RestartRec>,
    /// (vtgate, restart) pairs not yet discovered.
    pub pending_discoveries: u64,
    /// Shards whose rollout is complete.
    pub(crate) shards_done: u32,
    /// When the first tablet was released (first SIGTERM).
    pub(crate) rollout_start: SimTime,
    /// When the last shard's last tablet became Available.
    pub(crate) rollout_end: SimTime,
    /// Next fresh pod address.
    pub(crate) next_addr: u32,
    /// Full topology polls.
    pub(crate) polls: u64,
    /// Partial (one-shard) reloads.
    pub(crate) partial_reloads: u64,
    /// Every full poll: (vtgate, time).
    pub(crate) poll_log: Vec<(u16, SimTime)>,
    /// Closed exposure intervals.
    pub(crate) exposures: Vec<Exposure>,
    /// The exposures with errors merged into bursts (filled when the run ends).
    pub(crate) bursts: Vec<Burst>,
    /// Successful replica reads.
    pub(crate) reads_ok: u64,
    /// Reads routed to a dead tablet.
    pub(crate) reads_dead: u64,
    /// Reads with no healthy tablet.
    pub(crate) reads_none: u64,
    /// Successful primary writes.
    pub(crate) writes_ok: u64,
    /// Time (ns) summed over every closed read interval in which a route had a serving
    /// replica: the successful reads are one Poisson draw over it when the run ends. (A
    /// `u128`: routes × run length can pass 2^64 ns in a large, long run.)
    pub(crate) ok_read_ns: u128,
    /// Time (ns) summed over every closed write interval with a primary or in an outage the
    /// buffer rides out: the successful writes are one Poisson draw over it when the run
    /// ends.
    pub(crate) ok_write_ns: u128,
    /// Failed primary writes.
    pub(crate) writes_failed: u64,
    /// Replica reads per second per (vtgate, shard).
    pub(crate) read_rate_s: f64,
    /// Primary writes per second per (vtgate, shard).
    pub(crate) write_rate_s: f64,
    /// Per-query mode.
    pub(crate) per_query: bool,
    /// What the vtgates' logs would show, in time order (only when the run keeps its logs).
    pub(crate) journal: Option<Vec<(SimTime, Note)>>,
    /// Every PRS, in start order.
    pub(crate) prs: Vec<PrsRec>,
    /// The cells, when the model lists them (`None`: one cell, every tablet watched).
    pub(crate) shape: Option<super::cells::Shape>,
    /// The topology outage, if any.
    pub(crate) outage: Option<super::cells::Outage>,
    /// Step every health-check dial that must fail as an event (the hidden twin
    /// `RolloutSteppedDials`), instead of scheduling the first one that can succeed.
    pub(crate) step_dials: bool,
    /// The vtgates' polls are kept in [`Self::ticks`] (polls without jitter, in a world that
    /// is not nested in a host's scheduler): only the earliest is a pending event.
    pub(crate) use_ticks: bool,
    /// Every vtgate's next poll, read cyclically from [`Self::tick_head`] in the order they
    /// pop; each holds the sequence number its event would have had ([`Scheduler::reserve`]).
    pub(crate) ticks: Vec<Tick>,
    /// The slot of the pending poll in [`Self::ticks`].
    pub(crate) tick_head: usize,
    /// The vtgates' first `u64`s of a run ([`phase_firsts`]), kept for the next run's.
    pub(crate) firsts: Vec<u64>,
    /// The `discovered` vectors of a reset world's restarts, for the next run's (so a reused
    /// world allocates none).
    pub(crate) spare_discovered: Vec<Vec<SimTime>>,
}

/// A vtgate's next poll, kept by the world (`RolloutWorld::ticks`).
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

impl RolloutWorld {
    /// Tablets per shard.
    #[inline]
    pub(crate) fn per_shard(&self) -> usize {
        self.p.replicas_per_shard as usize + 1
    }
    /// Number of vtgates.
    #[inline]
    pub(crate) fn m(&self) -> usize {
        self.vtgates.len()
    }
    /// Index of (vtgate g, tablet t) in `views`.
    #[inline]
    pub(crate) fn vi(&self, g: usize, t: usize) -> usize {
        g * self.tablets.len() + t
    }

    /// A primed simulation of the rollout world with `seed`.
    pub fn simulation(p: &RolloutParams, seed: u64, trace: Trace) -> Simulation<RolloutWorld> {
        Self::simulation_with_logs(p, seed, trace, false)
    }

    /// [`Self::simulation`], keeping the vtgates' log notes when `logs` (same digest).
    pub fn simulation_with_logs(
        p: &RolloutParams,
        seed: u64,
        trace: Trace,
        logs: bool,
    ) -> Simulation<RolloutWorld> {
        Self::simulation_built(p, seed, trace, logs, true)
    }

    /// [`Self::simulation_with_logs`] for a host world that embeds the rollout
    /// ([`Simulation::into_parts`], [`Scheduler::nest`]): every poll is its own event, since
    /// the host renumbers the events its components schedule.
    pub fn simulation_nested(p: &RolloutParams, seed: u64, logs: bool) -> Simulation<RolloutWorld> {
        Self::simulation_built(p, seed, Trace::off(), logs, false)
    }

    /// The world, with its polls kept in [`Self::ticks`] where `ticks` allows it.
    pub(crate) fn simulation_built(
        p: &RolloutParams,
        seed: u64,
        trace: Trace,
        logs: bool,
        ticks: bool,
    ) -> Simulation<RolloutWorld> {
        let m = p.vtgates as usize;
        let s_n = p.shards as usize;
        let per = p.replicas_per_shard as usize + 1;
        let n = s_n * per;
        let tper = p.vtgate.tablet_refresh_interval;

        let tablets: Vec<Tablet> = (0..n)
            .map(|t| Tablet {
                shard: (t / per) as u16,
                primary: t % per == 0,
                serving: true,
                process_up: true,
                addr: t as u32,
                record: t as u32,
                restart: NONE,
                publish_at: SimTime::ZERO,
                serve_at: SimTime::ZERO,
                probe_origin: SimTime::ZERO,
                avail_gen: 0,
                rng: LazyRng::new(seed, "tablet", t as u32),
            })
            .collect();

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
            first_polls.push(first);
            vtgates.push(Vtgate {
                phase,
                next_base: phase,
                rng,
                wl_rng: LazyRng::new(seed, "workload", g as u32),
            });
        }

        let views = vec![
            View {
                hc_addr: 0,
                gen: 0,
                connected: true,
                serving: true,
                primary: false,
                backoff: p.vtgate.health_check_retry_delay.as_nanos(),
                contrib: 0,
            };
            m * n
        ];

        let mut shard_ops = Vec::with_capacity(s_n);
        for s in 0..s_n {
            let rng = LazyRng::new(seed, "operator", s as u32);
            shard_ops.push(ShardOp {
                order: Vec::new(),
                next: 0,
                restarted: Vec::new(),
                prs_old: 0,
                prs_new: 0,
                done: false,
                rng,
            });
        }

        let mut world = RolloutWorld {
            p: p.clone(),
            tablets,
            vtgates,
            views,
            routes: vec![Route::START; m * s_n],
            shard_ops,
            restarts: Vec::with_capacity(n),
            pending_discoveries: 0,
            shards_done: 0,
            rollout_start: SimTime::MAX,
            rollout_end: SimTime::ZERO,
            next_addr: n as u32,
            polls: 0,
            partial_reloads: 0,
            // Sized for a typical rollout (a few polls per vtgate), to spare regrowth.
            poll_log: Vec::with_capacity(m * 8),
            exposures: Vec::with_capacity(m),
            bursts: Vec::new(),
            reads_ok: 0,
            reads_dead: 0,
            reads_none: 0,
            writes_ok: 0,
            ok_read_ns: 0,
            ok_write_ns: 0,
            writes_failed: 0,
            read_rate_s: p.workload.replica_read_rps / s_n as f64,
            write_rate_s: p.workload.primary_write_rps / s_n as f64,
            per_query: p.workload.mode == WorkloadMode::PerQuery,
            journal: logs.then(Vec::new),
            prs: Vec::new(),
            shape: super::cells::Shape::of(p),
            outage: super::cells::Outage::of(p),
            step_dials: false,
            use_ticks: ticks && p.vtgate.poll_jitter == SimDuration::ZERO,
            ticks: Vec::with_capacity(m),
            firsts,
            tick_head: 0,
            spare_discovered: Vec::new(),
        };
        for g in 0..m {
            for t in 0..n {
                let i = world.vi(g, t);
                world.views[i].hc_addr = t as u32;
                world.views[i].primary = world.tablets[t].primary;
            }
        }
        world.mask_unwatched();

        let mut sim = Simulation::with_trace(world, trace);
        sim.world.ticks.extend(first_polls.into_iter().enumerate().map(|(g, at)| Tick {
            at,
            seq: 0,
            g: g as u16,
        }));
        RolloutWorld::schedule_first_polls(&mut sim);
        RolloutWorld::plan_rollout(&mut sim);
        Self::schedule_first_queries(&mut sim);
        sim
    }

    /// Schedule the vtgates' first polls, held in `ticks` in vtgate order (`at`, `g`), as
    /// the constructor always did: one event each in vtgate order, or with
    /// [`Self::use_ticks`] their sequence numbers reserved in that order, the ring sorted by
    /// when they pop and only the earliest scheduled.
    pub(super) fn schedule_first_polls(sim: &mut Simulation<RolloutWorld>) {
        let mut ticks = std::mem::take(&mut sim.world.ticks);
        if sim.world.use_ticks {
            for k in ticks.iter_mut() {
                k.seq = sim.reserve();
            }
            // Stable by time: at equal times the numbers, reserved in vtgate order, already
            // ascend.
            ticks.sort_by_key(|k| k.at);
            if let Some(k) = ticks.first() {
                sim.schedule_reserved(k.at, k.seq, Event::Poll { g: k.g });
            }
        } else {
            for k in ticks.drain(..) {
                sim.schedule(k.at, Event::Poll { g: k.g });
            }
        }
        sim.world.tick_head = 0;
        sim.world.ticks = ticks;
    }

    /// Per-query mode: each vtgate's first replica read and first primary write (in that
    /// order, vtgate by vtgate), drawn from its workload stream. The constructor and the reset
    /// (`reuse.rs`) both start a run with it.
    pub(crate) fn schedule_first_queries(sim: &mut Simulation<RolloutWorld>) {
        if !sim.world.per_query {
            return;
        }
        let (rr, wr) = (
            sim.world.p.workload.replica_read_rps,
            sim.world.p.workload.primary_write_rps,
        );
        for g in 0..sim.world.vtgates.len() {
            if rr > 0.0 {
                let v = &mut sim.world.vtgates[g];
                let d = SimDuration::from_secs_f64(exponential(v.wl_rng.get(), 1.0 / rr));
                sim.schedule(SimTime::ZERO + d, Event::Read { g: g as u16 });
            }
            if wr > 0.0 {
                let v = &mut sim.world.vtgates[g];
                let d = SimDuration::from_secs_f64(exponential(v.wl_rng.get(), 1.0 / wr));
                sim.schedule(SimTime::ZERO + d, Event::Write { g: g as u16 });
            }
        }
    }

    /// Cells: a vtgate has no health check on a tablet of a cell it does not watch, and its
    /// routes start in the state its watched tablets give (one cell: nothing to do). Used by
    /// the constructor and by the reset (`reuse.rs`), on views and routes in their
    /// all-connected start state.
    pub(crate) fn mask_unwatched(&mut self) {
        let (m, n, s_n) = (self.vtgates.len(), self.tablets.len(), self.p.shards as usize);
        // All connected and serving: a primary's view adds a live primary, a replica's a
        // live believed replica (`recount` below corrects what the cells mask out).
        let r = u64::from(self.p.replicas_per_shard);
        for route in self.routes.iter_mut() {
            route.counts = r | r << 16 | 1 << 32;
        }
        for row in self.views.chunks_exact_mut(n) {
            use super::vtgate::{BELIEVED, READ_OK, WRITE_OK};
            for (v, tab) in row.iter_mut().zip(&self.tablets) {
                v.contrib = if tab.primary {
                    WRITE_OK
                } else {
                    BELIEVED | READ_OK
                };
            }
        }
    if let Some(shape) = self.shape.take() {
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
        self.shape = Some(shape);
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

    /// Keep `note` for the logs (a no-op unless the run keeps them).
    #[inline]
    pub(crate) fn note(&mut self, now: SimTime, note: Note) {
        if let Some(j) = &mut self.journal {
            j.push((now, note));
        }
    }

    /// vtgate `g` watches tablet `t`'s cell.
    #[inline]
    pub(crate) fn watches(&self, g: usize, t: usize) -> bool {
        self.shape.as_ref().is_none_or(|sh| sh.watches(g, t))
    }

    /// vtgates that watch tablet `t`'s cell.
    pub(crate) fn watchers(&self, t: usize) -> usize {
        match &self.shape {
            None => self.m(),
            Some(sh) => (0..self.m()).filter(|&g| sh.watches(g, t)).count(),
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

    /// The run is over: every shard rolled and every vtgate re-discovered every restart.
    #[inline]
    pub(crate) fn complete(&self) -> bool {
        self.shards_done as usize == self.shard_ops.len() && self.pending_discoveries == 0
    }
}

/// `sim::rng::stream(seed, tag, index)` with the tag's hash computed once per thread.
fn stream(seed: u64, tag: &'static str, index: u32) -> SimRng {
    cached_stream(seed, tag, index)
}

/// Uniform jitter in [0, j) drawn from `rng` (no draw when j is zero).
pub fn jitter(rng: &mut LazyRng, j: SimDuration) -> SimDuration {
    if j == SimDuration::ZERO {
        SimDuration::ZERO
    } else {
        uniform_offset(rng.get(), j)
    }
}

/// `d.sample_at(rng, index)` from a lazy stream, made only for a draw: a fixed duration
/// draws nothing, so a component whose durations are all fixed costs no generator.
#[inline]
pub(crate) fn sample_lazy(d: &DurationDist, rng: &mut LazyRng, index: usize) -> SimDuration {
    match d {
        DurationDist::Fixed { value } => *value,
        _ => d.sample_at(rng.get(), index),
    }
}

/// A vtgate's phase draw, the first of its stream `rng`: without jitter it is the stream's
/// only draw, `first`, its first `u64`, computed with the other vtgates' four at a time
/// ([`first_u64s`]) and no generator made ([`LazyRng`]); with jitter the generator is made at
/// once, as the polls draw from it (`first` unused).
#[inline]
pub(crate) fn phase_draw(rng: &mut LazyRng, jitter: SimDuration, first: u64) -> f64 {
    if jitter == SimDuration::ZERO {
        rng.first_u64_drawn(first);
        unit_f64(first)
    } else {
        uniform01(rng.get())
    }
}

/// The vtgates' first `u64`s for [`phase_draw`] into `out` (one per vtgate; left as they are
/// when there is jitter, where the phase comes from the generator).
pub(crate) fn phase_firsts(seed: u64, jitter: SimDuration, out: &mut [u64]) {
    if jitter == SimDuration::ZERO {
        first_u64s(seed, "vtgate", out);
    }
}

impl World for RolloutWorld {
    type Event = Event;
    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::Poll { g } => self.on_poll(now, g as usize, s),
            Event::ShardReload { g, shard } => self.on_shard_reload(now, g as usize, shard, s),
            Event::HealthConnect { g, tablet, gen } => {
                self.on_health_connect(now, g as usize, tablet as usize, gen, s)
            }
            Event::HealthPush {
                tablet,
                addr,
                serving,
                primary,
            } => self.on_health_push(now, tablet as usize, addr, serving, primary, s),
            Event::Drain { tablet } => self.on_drain(now, tablet as usize, s),
            Event::Down { tablet } => self.on_down(now, tablet as usize, s),
            Event::Publish { tablet } => self.on_publish(now, tablet as usize, s),
            Event::Serve { tablet } => self.on_serve(now, tablet as usize, s),
            Event::Ready { tablet, gen } => self.on_ready(now, tablet as usize, gen, s),
            Event::Flap { tablet, gen } => self.on_flap(now, tablet as usize, gen, s),
            Event::Available { tablet, gen } => self.on_available(now, tablet as usize, gen, s),
            Event::Release { shard } => self.on_release(now, shard as usize, s),
            Event::PrsStart { shard } => self.on_prs_start(now, shard as usize, s),
            Event::PrsEnd { shard } => self.on_prs_end(now, shard as usize, s),
            Event::Read { g } => self.on_read(now, g as usize, s),
            Event::Write { g } => self.on_write(now, g as usize, s),
        }
        if self.complete() {
            s.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cached_streams_are_the_kernel_streams() {
        use rand::Rng;
        for tag in [
            "vtgate",
            "workload",
            "tablet",
            "operator",
            "vtgate-fleet",
            "other",
        ] {
            for i in [0u32, 1, 7, 65535] {
                let mut a = super::stream(99, tag, i);
                let mut b = crate::sim::rng::stream(99, tag, i);
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
    }
}
