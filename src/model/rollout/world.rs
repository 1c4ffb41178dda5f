//! The rollout world: its components composed, its construction from parameters, and the
//! event dispatch.
//!
//! Each component owns its state and its behaviour, in its own file: the tablets and their
//! restarts ([`super::tablet`]), the vtgates' topology watchers and health checks
//! ([`super::vtgate`]), the routing their views give ([`super::routing`]), the operator
//! ([`super::operator`]) and the workload ([`super::workload`]). An event goes to the
//! component it belongs to; what it means for the others follows here. A tablet's own step
//! schedules its next event before the vtgates recount the tablet: a recount only closes
//! accounting intervals (draws and their records), it schedules nothing, so the queue and the
//! trace are those of the two in either order.

use super::cells::Cells;
use super::event::Event;
use super::metrics::{Burst, Outcome};
use super::operator::Operator;
use super::params::RolloutParams;
use super::routing::Net;
use super::vtgate::Gates;
use super::workload::Workload;
use crate::sim::{Draws, Scheduler, SimTime, Simulation, Trace, World};

// The components' records, re-exported for the reset (`reuse.rs`), which sets every field.
pub use super::operator::ShardOp;
pub use super::routing::View;
pub(crate) use super::streams::{jitter, phase_draw, phase_firsts};
pub use super::tablet::{Tablet, Tablets, NONE};
pub use super::vtgate::{Tick, Vtgate};
pub use super::workload::Route;

/// The whole rollout world.
pub struct RolloutWorld {
    /// The parameters.
    pub(crate) p: RolloutParams,
    /// The cells (which vtgate watches which tablet; the topology outage).
    pub(crate) cells: Cells,
    /// Every tablet and its restarts.
    pub(crate) tablets: Tablets,
    /// Every vtgate: tickers, polls, log.
    pub(crate) gates: Gates,
    /// `views[g * n_tablets + t]`: what vtgate g's health check knows of tablet t.
    pub(crate) views: Vec<View>,
    /// `routes[g * shards + s]`.
    pub routes: Vec<Route>,
    /// (vtgate, restart) pairs not yet discovered.
    pub pending_discoveries: u64,
    /// The operator.
    pub(crate) operator: Operator,
    /// The workload: its counters, exposures and streams.
    pub(crate) workload: Workload,
    /// The exposures with errors merged into bursts (filled when the run ends).
    pub(crate) bursts: Vec<Burst>,
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
        self.gates.vtgates.len()
    }
    /// Number of shards.
    #[inline]
    pub(crate) fn shards(&self) -> usize {
        self.operator.shard_ops.len()
    }
    /// Index of (vtgate g, tablet t) in `views`.
    #[inline]
    pub(crate) fn vi(&self, g: usize, t: usize) -> usize {
        g * self.tablets.list.len() + t
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

    /// The world, with its polls kept in [`Gates::ticks`] where `ticks` allows it.
    pub(crate) fn simulation_built(
        p: &RolloutParams,
        seed: u64,
        trace: Trace,
        logs: bool,
        ticks: bool,
    ) -> Simulation<RolloutWorld> {
        let (m, s_n) = (p.vtgates as usize, p.shards as usize);
        let tablets = Tablets::new(p, seed);
        let gates = Gates::new(p, seed, logs, ticks);
        let views = View::start_all(p, &tablets.list);
        let mut world = RolloutWorld {
            p: p.clone(),
            cells: Cells::of(p),
            tablets,
            gates,
            views,
            routes: vec![Route::START; m * s_n],
            pending_discoveries: 0,
            operator: Operator::new(p, seed),
            workload: Workload::new(p, seed),
            bursts: Vec::new(),
        };
        world.mask_unwatched();
        let mut sim = Simulation::with_trace(world, trace);
        RolloutWorld::schedule_first_polls(&mut sim);
        RolloutWorld::plan_rollout(&mut sim);
        Self::schedule_first_queries(&mut sim);
        sim
    }

    /// Schedule the vtgates' first polls, held in [`Gates::ticks`] in vtgate order (`at`,
    /// `g`), as the constructor always did: one event each in vtgate order, or with
    /// [`Gates::use_ticks`] their sequence numbers reserved in that order, the ring sorted by
    /// when they pop and only the earliest scheduled.
    pub(super) fn schedule_first_polls(sim: &mut Simulation<RolloutWorld>) {
        let mut ticks = std::mem::take(&mut sim.world.gates.ticks);
        if sim.world.gates.use_ticks {
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
        sim.world.gates.tick_head = 0;
        sim.world.gates.ticks = ticks;
    }

    /// Fix each shard's restart order and schedule the first releases, shard by shard
    /// ([`Operator::plan_shard`]; the constructor and the reset, `reuse.rs`, call it after
    /// the first polls).
    pub(super) fn plan_rollout(sim: &mut Simulation<RolloutWorld>) {
        for s in 0..sim.world.shards() {
            let w = &mut sim.world;
            if let Some(at) = w.operator.plan_shard(s, &w.p) {
                sim.schedule(at, Event::Release { shard: s as u16 });
            }
        }
    }

    /// Per-query mode: each vtgate's first replica read and first primary write (in that
    /// order, vtgate by vtgate), drawn from its workload stream ([`Workload::first_queries`]).
    /// The constructor and the reset (`reuse.rs`) both start a run with it.
    pub(crate) fn schedule_first_queries(sim: &mut Simulation<RolloutWorld>) {
        if !sim.world.workload.per_query {
            return;
        }
        for g in 0..sim.world.m() {
            let w = &mut sim.world;
            let (read, write) = w.workload.first_queries(g, &w.p);
            if let Some(at) = read {
                sim.schedule(at, Event::Read { g: g as u16 });
            }
            if let Some(at) = write {
                sim.schedule(at, Event::Write { g: g as u16 });
            }
        }
    }

    /// [`Net::mask_unwatched`]: the cells' mask on views and routes in their all-connected
    /// start state (the constructor's and the reset's, `reuse.rs`).
    pub(crate) fn mask_unwatched(&mut self) {
        self.net().mask_unwatched();
    }

    /// The vtgates, and what they read and move besides their own state ([`Net`]).
    #[inline(always)]
    fn split(&mut self) -> (&mut Gates, Net<'_>) {
        let RolloutWorld {
            p,
            cells,
            tablets,
            gates,
            views,
            routes,
            pending_discoveries,
            workload,
            operator,
            ..
        } = self;
        let net = Net {
            shards: operator.shard_ops.len(),
            p,
            cells,
            tablets: &tablets.list,
            restarts: &mut tablets.restarts,
            pending_discoveries,
            views,
            routes,
            workload,
        };
        (gates, net)
    }

    /// The views and routes, with what routing reads and moves besides ([`Net`]).
    #[inline(always)]
    fn net(&mut self) -> Net<'_> {
        self.split().1
    }

    /// Close every open interval at the end of the run (an exposure still open ends here;
    /// `Workload::finish`). Its draws go to the trace: call it before the run's digest is
    /// taken.
    pub fn finish(&mut self, d: &mut Draws<'_>) {
        self.workload.finish(&mut self.routes, &self.p, d);
    }

    /// What the metrics of the ended run read ([`super::metrics::values`]).
    pub(crate) fn outcome(&self) -> Outcome<'_> {
        Outcome {
            p: &self.p,
            gates: &self.gates,
            operator: &self.operator,
            restarts: &self.tablets.restarts,
            workload: &self.workload,
            bursts: &self.bursts,
            complete: self.complete(),
        }
    }

    /// The run is over: every shard rolled and every vtgate re-discovered every restart.
    #[inline]
    pub(crate) fn complete(&self) -> bool {
        self.operator.done() && self.pending_discoveries == 0
    }

    /// SIGTERM ([`Tablets::on_drain`]): every vtgate that watches the tablet's cell has a
    /// restart to discover, and every vtgate's view of it is recounted.
    fn on_drain(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        let m = self.m();
        self.tablets.on_drain(now, t, m, &self.p, s);
        self.pending_discoveries += self.cells.watchers(t, m) as u64;
        self.net().recount_all(now, t, s);
    }

    /// The old pod is gone ([`Tablets::on_down`]): every health stream to it fails
    /// ([`Gates::pod_gone`]).
    fn on_down(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        self.tablets.on_down(now, t, &self.p, s);
        let (gates, mut net) = self.split();
        gates.pod_gone(now, t, &mut net, s);
    }

    /// The new process serves ([`Tablets::on_serve`]): every vtgate's view of it is
    /// recounted, and each one streaming from it discovers it.
    fn on_serve(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        self.tablets.on_serve(now, t, &self.p, s);
        let mut net = self.net();
        // Recounting touches no field a discovery reads, nor the other way round: the
        // discoveries can follow all the recounts.
        net.recount_all(now, t, s);
        net.check_discovery_all(now, t);
    }

    /// PRS starts ([`Operator::on_prs_start`]): every vtgate's view of the old primary is
    /// recounted.
    fn on_prs_start(&mut self, now: SimTime, shard: usize, s: &mut Scheduler<Event>) {
        let old = self
            .operator
            .on_prs_start(now, shard, &mut self.tablets.list, &self.p, s);
        self.net().recount_all(now, old, s);
    }

    /// PRS ends ([`Operator::on_prs_end`]), the vtgates react ([`Gates::primary_moved`]),
    /// and the demoted primary's drain follows ([`Operator::drain_demoted`]).
    fn on_prs_end(&mut self, now: SimTime, shard: usize, s: &mut Scheduler<Event>) {
        let moved = self
            .operator
            .on_prs_end(now, shard, &mut self.tablets.list, &self.p, s);
        let (gates, mut net) = self.split();
        gates.primary_moved(now, shard, moved, &mut net, s);
        self.operator.drain_demoted(shard, moved.0, &self.p, s);
    }
}

impl World for RolloutWorld {
    type Event = Event;
    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::Poll { g } => {
                let (gates, mut net) = self.split();
                gates.on_poll(now, g as usize, &mut net, s);
            }
            Event::ShardReload { g, shard } => {
                let demoted = self.operator.shard_ops[shard as usize].prs_old;
                let (gates, mut net) = self.split();
                gates.on_shard_reload(now, g as usize, shard, demoted, &mut net, s);
            }
            Event::HealthConnect { g, tablet, gen } => {
                let (gates, mut net) = self.split();
                gates.on_health_connect(now, g as usize, tablet as usize, gen, &mut net, s);
            }
            Event::HealthPush {
                tablet,
                addr,
                serving,
                primary,
            } => {
                let (gates, mut net) = self.split();
                gates.on_health_push(now, tablet as usize, addr, serving, primary, &mut net, s);
            }
            Event::Drain { tablet } => self.on_drain(now, tablet as usize, s),
            Event::Down { tablet } => self.on_down(now, tablet as usize, s),
            Event::Publish { tablet } => self.tablets.on_publish(now, tablet as usize, &self.p, s),
            Event::Serve { tablet } => self.on_serve(now, tablet as usize, s),
            Event::Ready { tablet, gen } => {
                self.tablets.on_ready(now, tablet as usize, gen, &self.p, s)
            }
            Event::Flap { tablet, gen } => {
                self.tablets.on_flap(now, tablet as usize, gen, &self.p, s)
            }
            Event::Available { tablet, gen } => {
                if let Some(shard) = self.tablets.on_available(now, tablet as usize, gen) {
                    self.operator.step_done(now, shard, &self.p, s);
                }
            }
            Event::Release { shard } => {
                self.operator
                    .on_release(now, shard as usize, &self.tablets.list, s)
            }
            Event::PrsStart { shard } => self.on_prs_start(now, shard as usize, s),
            Event::PrsEnd { shard } => self.on_prs_end(now, shard as usize, s),
            Event::Read { g } => {
                self.workload
                    .on_read(now, g as usize, &mut self.routes, &self.p, s)
            }
            Event::Write { g } => {
                self.workload
                    .on_write(now, g as usize, &mut self.routes, &self.p, s)
            }
        }
        if self.complete() {
            s.stop();
        }
    }
}
