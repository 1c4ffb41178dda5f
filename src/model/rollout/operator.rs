//! The vitess-operator rolling restart (vitess-operator
//! `pkg/controller/vitessshard/reconcile_rollout.go`), per shard: one tablet at a time, every
//! tablet Available before the next release; replicas first in a seeded random order (a Go
//! map walk), then PlannedReparentShard to a Ready replica, the demoted primary serves as a
//! REPLICA for `prs_replica_window`, and is restarted last. Shards roll in parallel
//! (vitess-operator `pkg/controller/vitesskeyspace/reconcile_shards.go`) unless `parallel_shards`
//! is false.
//!
//! Controller round trips between Available and the next SIGTERM are one `step_latency` draw.

use super::event::Event;
use super::params::{DurationDist, PrsCandidate, PrsReload, ReplicaOrder};
use super::world::{sample_lazy, RolloutWorld};
use crate::sim::rng::{below, shuffle};
use crate::sim::{Scheduler, SimTime, Simulation};

impl RolloutWorld {
    /// Fix each shard's restart order and schedule the first releases, shard by shard (the
    /// constructor and the reset, `reuse.rs`, call it after the first polls). Each order is
    /// built in the shard's kept vector.
    pub(super) fn plan_rollout(sim: &mut Simulation<RolloutWorld>) {
        let fixed = |d: &DurationDist| matches!(d, DurationDist::Fixed { .. });
        for s in 0..sim.world.shard_ops.len() {
            let w = &mut sim.world;
            let per = w.per_shard();
            let o = &w.p.operator;
            // With two replicas and fixed durations the shuffle's one draw is the stream's
            // only one: it comes from the stream's first block, with no generator made
            // (`LazyRng`; the draws are the same either way).
            let one_draw = per == 3
                && fixed(&o.step_latency)
                && (!o.restart_primary
                    || (fixed(&o.prs_duration) && !matches!(o.prs_candidate, PrsCandidate::Random)));
            let op = &mut w.shard_ops[s];
            op.order.clear();
            match &o.replica_order {
                ReplicaOrder::Listed { order } => op
                    .order
                    .extend(order[s].iter().map(|&k| (s * per + k as usize) as u16)),
                _ => op.order.extend((1..per).map(|k| (s * per + k) as u16)),
            }
            if let ReplicaOrder::Random = &o.replica_order {
                if one_draw {
                    shuffle(&mut op.rng, &mut op.order);
                } else {
                    shuffle(op.rng.get(), &mut op.order);
                }
            }
            if o.restart_primary {
                op.order.push((s * per) as u16);
            }
            if s == 0 || o.parallel_shards {
                let start = SimTime::ZERO + o.start_at;
                let d = sample_lazy(&o.step_latency, &mut op.rng, s * per);
                sim.schedule(start + d, Event::Release { shard: s as u16 });
            }
        }
    }

    /// The shard's in-flight tablet is Available: release the next one or finish.
    pub(super) fn step_done(&mut self, now: SimTime, shard: usize, s: &mut Scheduler<Event>) {
        let per = self.per_shard();
        let op = &mut self.shard_ops[shard];
        if op.next < op.order.len() {
            let i = shard * per + op.next;
            let d = sample_lazy(&self.p.operator.step_latency, &mut op.rng, i);
            s.after(
                d,
                Event::Release {
                    shard: shard as u16,
                },
            );
            return;
        }
        if op.done {
            return;
        }
        op.done = true;
        self.shards_done += 1;
        self.rollout_end = self.rollout_end.max(now);
        if !self.p.operator.parallel_shards && shard + 1 < self.shard_ops.len() {
            let op = &mut self.shard_ops[shard + 1];
            let i = (shard + 1) * per;
            let d = sample_lazy(&self.p.operator.step_latency, &mut op.rng, i);
            s.after(
                d,
                Event::Release {
                    shard: (shard + 1) as u16,
                },
            );
        }
    }

    /// Release the next tablet: a replica is drained (SIGTERM) at once; the primary goes
    /// through PRS first.
    pub(super) fn on_release(&mut self, now: SimTime, shard: usize, s: &mut Scheduler<Event>) {
        let op = &mut self.shard_ops[shard];
        let t = op.order[op.next];
        op.next += 1;
        if self.tablets[t as usize].primary {
            s.at(
                now,
                Event::PrsStart {
                    shard: shard as u16,
                },
            );
        } else {
            op.restarted.push(t);
            s.at(now, Event::Drain { tablet: t });
        }
    }

    /// PRS starts: the old primary stops serving as primary (writes buffer at the vtgates).
    pub(super) fn on_prs_start(&mut self, now: SimTime, shard: usize, s: &mut Scheduler<Event>) {
        let per = self.per_shard();
        let old = (shard * per..(shard + 1) * per)
            .find(|&t| self.tablets[t].primary)
            .expect("a shard has a primary");
        let replicas: Vec<u16> = (shard * per..(shard + 1) * per)
            .filter(|&t| t != old)
            .map(|t| t as u16)
            .collect();
        let op = &mut self.shard_ops[shard];
        let cand = match &self.p.operator.prs_candidate {
            PrsCandidate::Random => replicas[below(op.rng.get(), replicas.len() as u64) as usize],
            PrsCandidate::FirstRestarted => *op.restarted.first().unwrap_or(&replicas[0]),
            PrsCandidate::LastRestarted => *op.restarted.last().unwrap_or(&replicas[0]),
            PrsCandidate::Restarted { positions } => *op
                .restarted
                .get(positions[shard] as usize)
                .unwrap_or(&replicas[0]),
        };
        op.prs_old = old as u16;
        op.prs_new = cand;
        self.prs.push(super::world::PrsRec {
            shard: shard as u16,
            old: old as u16,
            new: cand,
            start: now,
            end: SimTime::MAX,
        });
        let d = sample_lazy(&self.p.operator.prs_duration, &mut op.rng, shard);
        self.tablets[old].serving = false;
        self.push_health(now, old, s);
        self.recount_all(now, old, s);
        s.after(
            d,
            Event::PrsEnd {
                shard: shard as u16,
            },
        );
    }

    /// PRS ends: the candidate is PRIMARY, the old primary a serving REPLICA. A vtgate that
    /// has no health stream to the new primary sees its PRIMARY entry vanish and reloads the
    /// shard from the topology (`loadTabletsTrigger`, vitessio/vitess
    /// `go/vt/discovery/topology_watcher.go`, PR #12893).
    pub(super) fn on_prs_end(&mut self, now: SimTime, shard: usize, s: &mut Scheduler<Event>) {
        let (old, new) = {
            let op = &self.shard_ops[shard];
            (op.prs_old as usize, op.prs_new as usize)
        };
        if let Some(r) = self.prs.iter_mut().rev().find(|r| r.shard as usize == shard) {
            r.end = now;
        }
        self.tablets[old].primary = false;
        self.tablets[old].serving = true;
        self.tablets[new].primary = true;
        self.push_health(now, old, s);
        self.push_health(now, new, s);
        let seen = now + self.p.vtgate.health_stream_delay;
        let new_addr = self.tablets[new].addr;
        let all = self.p.vtgate.prs_reload == PrsReload::AllVtgates;
        for g in 0..self.m() {
            let v = self.views[self.vi(g, new)];
            // The trigger needs the demoted primary's PRIMARY -> REPLICA update, so a health
            // stream to it: its cell must be watched.
            let knows_new = v.connected && v.hc_addr == new_addr;
            if (all || !knows_new) && self.watches(g, old) {
                s.at(
                    seen,
                    Event::ShardReload {
                        g: g as u16,
                        shard: shard as u16,
                    },
                );
            }
            let changed = self.recount(g, old) | self.recount(g, new);
            self.reevaluate_if(changed, now, g, shard, s);
        }
        let op = &mut self.shard_ops[shard];
        op.restarted.push(old as u16);
        s.after(
            self.p.operator.prs_replica_window,
            Event::Drain { tablet: old as u16 },
        );
    }
}
