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
use super::params::{PrsCandidate, PrsReload, ReplicaOrder};
use super::world::RolloutWorld;
use crate::sim::rng::{below, shuffle};
use crate::sim::{Scheduler, SimTime};

impl RolloutWorld {
    /// Fix each shard's restart order; return the first releases to schedule.
    pub(super) fn plan_rollout(&mut self) -> Vec<(u16, SimTime)> {
        let per = self.per_shard();
        let start = SimTime::ZERO + self.p.operator.start_at;
        let mut first = Vec::new();
        for s in 0..self.shard_ops.len() {
            let op = &mut self.shard_ops[s];
            let mut replicas: Vec<u16> = (1..per).map(|k| (s * per + k) as u16).collect();
            match &self.p.operator.replica_order {
                ReplicaOrder::Random => shuffle(op.rng.get(), &mut replicas),
                ReplicaOrder::Alias => {}
                ReplicaOrder::Listed { order } => {
                    replicas = order[s].iter().map(|&k| (s * per + k as usize) as u16).collect();
                }
            }
            if self.p.operator.restart_primary {
                replicas.push((s * per) as u16);
            }
            op.order = replicas;
            if s == 0 || self.p.operator.parallel_shards {
                let d = self.p.operator.step_latency.sample_at(op.rng.get(), s * per);
                first.push((s as u16, start + d));
            }
        }
        first
    }

    /// The shard's in-flight tablet is Available: release the next one or finish.
    pub(super) fn step_done(&mut self, now: SimTime, shard: usize, s: &mut Scheduler<Event>) {
        let per = self.per_shard();
        let op = &mut self.shard_ops[shard];
        if op.next < op.order.len() {
            let i = shard * per + op.next;
            let d = self.p.operator.step_latency.sample_at(op.rng.get(), i);
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
            let d = self.p.operator.step_latency.sample_at(op.rng.get(), i);
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
        let d = self.p.operator.prs_duration.sample_at(op.rng.get(), shard);
        self.tablets[old].serving = false;
        self.push_health(now, old, s);
        for g in 0..self.m() {
            let changed = self.recount(g, old);
            self.reevaluate_if(changed, now, g, shard, s);
        }
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
