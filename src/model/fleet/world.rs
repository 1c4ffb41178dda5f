//! The fleet world: the rollout model's world, one connpool pool per vttablet process, and
//! the replica reads routed between them as vtgate's tablet gateway does.
//!
//! Composition (`crate::sim::nest`): the rollout world and every pool run their own
//! `handle` on a [`Nested`] scheduler of their own event type; the fleet wraps what they
//! schedule ([`Event::Rollout`], [`Event::Pool`]). The fleet only *reads* the rollout's
//! state (each vtgate's view of each tablet, each tablet's state) to route a read, and reacts
//! after a rollout event: `Drain` starts the drained process's shutdown grace, `Down` closes
//! its pool, `Serve` opens the new process's pool.

use super::counts::{second_of, Second, Totals};
use super::event::Event;
use super::metrics::Outcome;
use super::params::FleetParams;
use super::slot::Slot;
use crate::model::connpool::{ConnPoolParams, Event as PoolEvent, PoolWorld};
use crate::model::rollout::event::Event as RolloutEvent;
use crate::model::rollout::RolloutWorld;
use crate::sim::rng::{below, cached_stream, exponential};
use rand::Rng;
use crate::sim::{Nested, Scheduler, SimDuration, SimRng, SimTime, Simulation, Trace, TraceRecord, World};

/// The whole fleet world.
pub struct FleetWorld {
    /// The rollout world (vtgates, topology, health streams, tablets, operator).
    pub(crate) rollout: RolloutWorld,
    rollout_sched: Nested<RolloutEvent>,
    /// Every pool, in creation order: tablet t's first process is pool t.
    pub(crate) pools: Vec<Slot>,
    pool_sched: Nested<PoolEvent>,
    /// The current process's pool of each tablet.
    pub(crate) tablet_pool: Vec<u32>,
    /// What each new pool is built from.
    pool_params: ConnPoolParams,
    seed: u64,
    /// Each vtgate's read stream (`fleet.reads`, vtgate).
    reads_rng: Vec<SimRng>,
    /// Mean gap between two reads of one vtgate (s; 0: no reads).
    read_gap_s: f64,
    retry_count: u32,
    grace: SimDuration,
    tail: SimDuration,
    /// When the rollout and every re-discovery completed (`SimTime::MAX`: not yet).
    pub(crate) complete_at: SimTime,
    /// One entry per second.
    pub(crate) seconds: Vec<Second>,
    /// Run totals.
    pub(crate) totals: Totals,
    /// Scratch: the healthy tablets of one read.
    healthy: Vec<u16>,
    /// `GetHealthyTabletStats` of each (vtgate, shard), `vtgates × shards` lists, valid while
    /// `healthy_ok` is set: only a rollout event changes what they are built from, and each
    /// one clears every flag.
    healthy_cache: Vec<Vec<u16>>,
    healthy_ok: Vec<bool>,
    /// `below`'s rejection threshold `(2^64 - n) mod n` for each healthy-list length `n`.
    below_threshold: Vec<u64>,
    /// New pools defer their query ends (`PoolWorld::settle`): off only to check that the
    /// run is the same either way.
    defer_releases: bool,
}

impl FleetWorld {
    /// A primed simulation of the fleet `p` with `seed`.
    pub fn simulation(p: &FleetParams, seed: u64, trace: Trace, logs: bool) -> Simulation<FleetWorld> {
        Self::simulation_deferring(p, seed, trace, logs, true)
    }

    /// [`Self::simulation`] with the pools' query ends deferred (`defer`, the default) or
    /// each scheduled as an event: every figure of the run is the same, only the event count
    /// and the digest differ (`tests/fleet.rs`).
    pub fn simulation_deferring(
        p: &FleetParams,
        seed: u64,
        trace: Trace,
        logs: bool,
        defer: bool,
    ) -> Simulation<FleetWorld> {
        let rp = p.rollout_params();
        // The rollout world exactly as the rollout model builds it (same seed, same streams):
        // its draws are shared, so its exposures are the rollout model's (common random numbers).
        let (rollout, primed) =
            RolloutWorld::simulation_nested(&rp, seed, logs).into_parts();
        let pool_params = p.pool_params();
        let n = rollout.tablets.list.len();
        let pools: Vec<Slot> = (0..n)
            .map(|t| Slot {
                w: {
                    let mut w = PoolWorld::embedded(&pool_params, seed, t as u32);
                    w.set_defer_releases(defer);
                    w
                },
                tablet: t as u16,
                closes_at: SimTime::MAX,
                dead: false,
            })
            .collect();
        let m = p.vtgates as usize;
        let rps = p.rps_per_vtgate();
        let lists = m * p.shards as usize;
        let per = p.replicas_per_shard as usize + 1;
        let world = FleetWorld {
            rollout,
            rollout_sched: Nested::new(),
            pools,
            pool_sched: Nested::new(),
            tablet_pool: (0..n as u32).collect(),
            pool_params,
            seed,
            reads_rng: (0..m).map(|g| cached_stream(seed, "fleet.reads", g as u32)).collect(),
            read_gap_s: if rps > 0.0 { 1.0 / rps } else { 0.0 },
            retry_count: p.gateway.retry_count,
            grace: p.vttablet.shutdown_grace_period,
            tail: p.tail,
            complete_at: SimTime::MAX,
            seconds: Vec::with_capacity(600),
            totals: Totals::default(),
            healthy: Vec::with_capacity(per),
            healthy_cache: vec![Vec::with_capacity(per); lists],
            healthy_ok: vec![false; lists],
            below_threshold: (0..=per as u64)
                .map(|n| if n == 0 { 0 } else { n.wrapping_neg() % n })
                .collect(),
            defer_releases: defer,
        };
        let mut sim = Simulation::with_trace(world, trace);
        for (t, e) in primed {
            sim.schedule(t, Event::Rollout(e));
        }
        // Each first pool opens at time zero (its starvation worker), through an event so
        // that its draws are recorded on this run's trace.
        for pool in 0..n as u32 {
            sim.schedule(SimTime::ZERO, Event::Open { pool });
        }
        if sim.world.read_gap_s > 0.0 {
            for g in 0..m {
                let w = &mut sim.world;
                let d = exponential(&mut w.reads_rng[g], w.read_gap_s);
                sim.schedule(
                    SimTime::ZERO + SimDuration::from_secs_f64(d),
                    Event::Read { g: g as u16 },
                );
            }
        }
        sim
    }

    /// What the fleet's metrics read of the ended run ([`super::metrics::values`]).
    pub(crate) fn outcome(&self) -> Outcome<'_> {
        Outcome {
            rollout: &self.rollout,
            seconds: &self.seconds,
            totals: &self.totals,
            pools: &self.pools,
            complete_at: self.complete_at,
        }
    }

    /// The second `now` falls in, grown on demand.
    #[inline]
    fn second(&mut self, now: SimTime) -> &mut Second {
        second_of(&mut self.seconds, now)
    }

    /// Apply pool `i`'s deferred query ends up to `now` (`PoolWorld::settle`), each counted
    /// in its own second and against the pool's closing time at its own instant, as its
    /// `QueryDone` event would have been counted by [`Self::account`].
    #[inline]
    fn settle(&mut self, i: usize, now: SimTime) {
        let FleetWorld {
            pools,
            seconds,
            totals,
            ..
        } = self;
        let slot = &mut pools[i];
        let closes_at = slot.closes_at;
        slot.w.settle(now, |t, late| {
            let sec = second_of(seconds, t);
            let all = &mut totals.all;
            if t >= closes_at {
                sec.pool_closed += 1;
                all.pool_closed += 1;
            } else if late {
                sec.pool_timeouts += 1;
                all.pool_timeouts += 1;
            } else {
                sec.good += 1;
                all.good += 1;
            }
        });
    }

    /// Learn the outcomes of the last call into pool `pool` from its counters (before: the
    /// counters before the call).
    #[inline]
    fn account(&mut self, now: SimTime, pool: usize, before: (u64, u64, u64)) {
        let slot = &self.pools[pool];
        let after = slot.w.outcome_counts();
        let good = after.1 - before.1;
        let failed = (after.0 - after.1 - after.2) - (before.0 - before.1 - before.2);
        if good == 0 && failed == 0 {
            return;
        }
        let closed = now >= slot.closes_at;
        let sec = self.second(now);
        if closed {
            sec.pool_closed += good + failed;
        } else {
            sec.good += good;
            sec.pool_timeouts += failed;
        }
        let t = &mut self.totals.all;
        if closed {
            t.pool_closed += good + failed;
        } else {
            t.good += good;
            t.pool_timeouts += failed;
        }
    }

    /// Run one event of pool `pool`.
    fn on_pool(&mut self, now: SimTime, pool: u32, ev: PoolEvent, s: &mut Scheduler<Event>) {
        let i = pool as usize;
        if self.pools[i].dead {
            return;
        }
        self.settle(i, now);
        let before = self.pools[i].w.outcome_counts();
        let w = &mut self.pools[i].w;
        s.nest(&mut self.pool_sched, |ev| Event::Pool { pool, ev }, |n| w.handle(now, ev, n));
        self.account(now, i, before);
    }

    /// A rollout event, then what it means for the pools.
    fn on_rollout(&mut self, now: SimTime, e: RolloutEvent, s: &mut Scheduler<Event>) {
        let rw = &mut self.rollout;
        s.nest(&mut self.rollout_sched, Event::Rollout, |n| rw.handle(now, e, n));
        // What the healthy lists are built from may have changed.
        self.healthy_ok.fill(false);
        match e {
            RolloutEvent::Drain { tablet } => {
                // SIGTERM: new queries are refused (the rollout's tablet stops serving); the
                // ones in flight have the grace period.
                let p = self.tablet_pool[tablet as usize] as usize;
                self.pools[p].closes_at = now + self.grace;
            }
            RolloutEvent::Down { tablet } => {
                // The pod is gone: whatever is still in its pool fails.
                let p = self.tablet_pool[tablet as usize] as usize;
                if !self.pools[p].dead {
                    // Query ends before now completed; the rest are in flight.
                    self.settle(p, now);
                }
                let slot = &mut self.pools[p];
                if !slot.dead {
                    slot.dead = true;
                    let left = slot.w.in_flight();
                    self.second(now).pool_closed += left;
                    self.totals.all.pool_closed += left;
                }
            }
            RolloutEvent::Serve { tablet } => {
                // The new process serves with a new, empty pool.
                let pool = self.pools.len() as u32;
                let mut w = PoolWorld::embedded(&self.pool_params, self.seed, pool);
                w.set_defer_releases(self.defer_releases);
                s.nest(&mut self.pool_sched, |ev| Event::Pool { pool, ev }, |n| w.start(n));
                self.pools.push(Slot {
                    w,
                    tablet,
                    closes_at: SimTime::MAX,
                    dead: false,
                });
                self.tablet_pool[tablet as usize] = pool;
            }
            _ => {}
        }
        if self.rollout_sched.stopped() && self.complete_at == SimTime::MAX {
            self.complete_at = now;
            s.after(self.tail, Event::End);
        }
    }

    /// One replica read at vtgate `g`: `withRetry` of vitessio/vitess
    /// `go/vt/vtgate/tabletgateway.go` (see `docs/fleet.md` "Routing").
    fn on_read(&mut self, now: SimTime, g: usize, s: &mut Scheduler<Event>) {
        let gap = exponential(&mut self.reads_rng[g], self.read_gap_s);
        s.at(now + SimDuration::from_secs_f64(gap), Event::Read { g: g as u16 });
        self.second(now).offered += 1;
        self.totals.all.offered += 1;
        let rw = &self.rollout;
        let per = rw.per_shard();
        let shards = rw.shards();
        let shard = if shards == 1 {
            0
        } else {
            below(&mut self.reads_rng[g], shards as u64) as usize
        };
        // `GetHealthyTabletStats`: the REPLICAs this vtgate's health checks show serving
        // (rebuilt after a rollout event, in tablet order).
        let li = g * shards + shard;
        if !self.healthy_ok[li] {
            let list = &mut self.healthy_cache[li];
            list.clear();
            for t in shard * per..(shard + 1) * per {
                let v = &rw.views[rw.vi(g, t)];
                if v.connected && v.serving && !v.primary {
                    list.push(t as u16);
                }
            }
            self.healthy_ok[li] = true;
        }
        // (outcome: 0 served by a pool, 1 routed to dead, 2 no healthy; tablet + 1 or 0).
        let (mut outcome, mut tablet, mut attempts) = (2u64, 0u64, 0u64);
        if !self.healthy_cache[li].is_empty() {
            outcome = 1;
            // Each attempt: a uniform pick among the healthy tablets not tried yet (the
            // shuffle, then the first valid one); retry only on a retryable error, at once.
            // The first attempt picks from the cached list; a retry works on a copy without
            // the tablets tried.
            let mut first = true;
            while attempts <= self.retry_count as u64 {
                let list: &[u16] = if first {
                    &self.healthy_cache[li]
                } else {
                    &self.healthy
                };
                let n = list.len();
                if n == 0 {
                    break;
                }
                attempts += 1;
                let k = if n == 1 {
                    0
                } else {
                    below_with(&mut self.reads_rng[g], n as u64, self.below_threshold[n])
                        as usize
                };
                let t = list[k] as usize;
                let tab = &rw.tablets.list[t];
                let v = &rw.views[rw.vi(g, t)];
                if tab.serving && tab.addr == v.hc_addr {
                    outcome = 0;
                    tablet = t as u64 + 1;
                    break;
                }
                // SHUTTING_DOWN / NOT_SERVING (CLUSTER_EVENT) or a gone pod (UNAVAILABLE).
                if first {
                    self.healthy.clear();
                    self.healthy.extend_from_slice(&self.healthy_cache[li]);
                    first = false;
                }
                self.healthy.swap_remove(k);
            }
        }
        // A read served at its first attempt shows its pick in the pool's events (the pool is
        // in each record); a retry, a failure, or a shard picked for a failed read only in
        // counters: a draw record then.
        if (outcome != 0 || attempts > 1) && (attempts > 0 || shards > 1) {
            s.draw(&TraceRecord {
                component: "fleet",
                index: g as u32,
                kind: "route",
                a: (shard as u64) << 32 | tablet,
                b: outcome << 8 | attempts,
            });
        }
        if attempts > 1 {
            self.totals.retries += 1;
        }
        match outcome {
            0 => {
                let pool = self.tablet_pool[tablet as usize - 1];
                let i = pool as usize;
                self.settle(i, now);
                // The request's draws and their record (the pool's own), then `Get`: with a
                // connection on the stack, served at once with nothing to schedule or
                // record, else through the nested scheduler.
                let w = &mut self.pools[i].w;
                let req = w.draw_request();
                s.draw(&w.request_record(&req));
                if w.serves_at_once(&req) {
                    w.admit_drawn(now, req, self.pool_sched.untraced(now));
                    self.pool_sched.untraced_done();
                } else {
                    let before = w.outcome_counts();
                    s.nest(&mut self.pool_sched, |ev| Event::Pool { pool, ev }, |n| {
                        w.admit_drawn(now, req, n)
                    });
                    self.account(now, i, before);
                }
            }
            1 => {
                self.second(now).routed_to_dead += 1;
                self.totals.all.routed_to_dead += 1;
            }
            _ => {
                self.second(now).no_healthy += 1;
                self.totals.all.no_healthy += 1;
            }
        }
    }

    /// The run stopped at `end`: apply the query ends up to it, count the reads still in a
    /// pool.
    pub(crate) fn finish(&mut self, end: SimTime) {
        for i in 0..self.pools.len() {
            if !self.pools[i].dead {
                self.settle(i, end);
            }
        }
        self.totals.in_flight_at_end = self
            .pools
            .iter()
            .filter(|p| !p.dead)
            .map(|p| p.w.in_flight())
            .sum();
    }
}

/// `below(rng, n)` (`crate::sim::rng::below`: the same draws, the same result) with its
/// threshold `(2^64 - n) mod n` computed once rather than by a division per call.
#[inline]
fn below_with(rng: &mut SimRng, n: u64, threshold: u64) -> u64 {
    debug_assert_eq!(threshold, n.wrapping_neg() % n);
    loop {
        let m = (rng.next_u64() as u128) * (n as u128);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

impl World for FleetWorld {
    type Event = Event;
    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::Rollout(e) => self.on_rollout(now, e, s),
            Event::Pool { pool, ev } => self.on_pool(now, pool, ev, s),
            Event::Read { g } => self.on_read(now, g as usize, s),
            Event::Open { pool } => {
                let w = &mut self.pools[pool as usize].w;
                s.nest(&mut self.pool_sched, |ev| Event::Pool { pool, ev }, |n| w.start(n));
            }
            Event::End => s.stop(),
        }
    }
}
