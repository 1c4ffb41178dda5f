//! The vitess-operator rolling restart (vitess-operator
//! `pkg/controller/vitessshard/reconcile_rollout.go`), per shard: one tablet at a time, every
//! tablet Available before the next release; replicas first in a seeded random order (a Go
//! map walk), then PlannedReparentShard to a Ready replica, the demoted primary serves as a
//! REPLICA for `prs_replica_window`, and is restarted last. Shards roll in parallel
//! (vitess-operator `pkg/controller/vitesskeyspace/reconcile_shards.go`) unless `parallel_shards`
//! is false.
//!
//! Controller round trips between Available and the next SIGTERM are one `step_latency` draw.
//!
//! Holds the operator's state ([`ShardOp`] per shard, [`Operator`]) and its steps; what a PRS
//! means to the vtgates is theirs (`Gates::primary_moved`).

use super::event::Event;
use super::params::{DurationDist, PrsCandidate, ReplicaOrder, RolloutParams};
use super::streams::sample_lazy;
use super::tablet::Tablet;
use crate::sim::rng::{below, shuffle, LazyRng};
use crate::sim::{Scheduler, SimTime};

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

/// The operator: every shard's rollout, and every PRS.
pub struct Operator {
    /// Operator state per shard.
    pub(crate) shard_ops: Vec<ShardOp>,
    /// Shards whose rollout is complete.
    pub(crate) shards_done: u32,
    /// When the last shard's last tablet became Available.
    pub(crate) rollout_end: SimTime,
    /// Every PRS, in start order.
    pub(crate) prs: Vec<PrsRec>,
}

impl Operator {
    /// The operator of `p` before it starts, its streams from `seed`.
    pub(crate) fn new(p: &RolloutParams, seed: u64) -> Operator {
        let s_n = p.shards as usize;
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
        Operator {
            shard_ops,
            shards_done: 0,
            rollout_end: SimTime::ZERO,
            prs: Vec::new(),
        }
    }

    /// Every shard has rolled.
    #[inline]
    pub(crate) fn done(&self) -> bool {
        self.shards_done as usize == self.shard_ops.len()
    }

    /// Fix shard `s`'s restart order, built in the shard's kept vector, and return when its
    /// first release is due (`None`: it waits for the shard before it). The constructor and
    /// the reset (`reuse.rs`) plan every shard in order after the first polls
    /// (`RolloutWorld::plan_rollout`).
    pub(crate) fn plan_shard(&mut self, s: usize, p: &RolloutParams) -> Option<SimTime> {
        let fixed = |d: &DurationDist| matches!(d, DurationDist::Fixed { .. });
        let per = p.replicas_per_shard as usize + 1;
        let o = &p.operator;
        // With two replicas and fixed durations the shuffle's one draw is the stream's
        // only one: it comes from the stream's first block, with no generator made
        // (`LazyRng`; the draws are the same either way).
        let one_draw = per == 3
            && fixed(&o.step_latency)
            && (!o.restart_primary
                || (fixed(&o.prs_duration) && !matches!(o.prs_candidate, PrsCandidate::Random)));
        let op = &mut self.shard_ops[s];
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
            Some(start + d)
        } else {
            None
        }
    }

    /// The shard's in-flight tablet is Available: release the next one or finish.
    pub(crate) fn step_done(
        &mut self,
        now: SimTime,
        shard: usize,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        let per = p.replicas_per_shard as usize + 1;
        let op = &mut self.shard_ops[shard];
        if op.next < op.order.len() {
            let i = shard * per + op.next;
            let d = sample_lazy(&p.operator.step_latency, &mut op.rng, i);
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
        if !p.operator.parallel_shards && shard + 1 < self.shard_ops.len() {
            let op = &mut self.shard_ops[shard + 1];
            let i = (shard + 1) * per;
            let d = sample_lazy(&p.operator.step_latency, &mut op.rng, i);
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
    pub(crate) fn on_release(
        &mut self,
        now: SimTime,
        shard: usize,
        tablets: &[Tablet],
        s: &mut Scheduler<Event>,
    ) {
        let op = &mut self.shard_ops[shard];
        let t = op.order[op.next];
        op.next += 1;
        if tablets[t as usize].primary {
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

    /// PRS starts: the old primary, returned, stops serving as primary (writes buffer at the
    /// vtgates, which learn it from its health push).
    pub(crate) fn on_prs_start(
        &mut self,
        now: SimTime,
        shard: usize,
        tablets: &mut [Tablet],
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) -> usize {
        let per = p.replicas_per_shard as usize + 1;
        let old = (shard * per..(shard + 1) * per)
            .find(|&t| tablets[t].primary)
            .expect("a shard has a primary");
        let replicas: Vec<u16> = (shard * per..(shard + 1) * per)
            .filter(|&t| t != old)
            .map(|t| t as u16)
            .collect();
        let op = &mut self.shard_ops[shard];
        let cand = match &p.operator.prs_candidate {
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
        self.prs.push(PrsRec {
            shard: shard as u16,
            old: old as u16,
            new: cand,
            start: now,
            end: SimTime::MAX,
        });
        let d = sample_lazy(&p.operator.prs_duration, &mut op.rng, shard);
        tablets[old].serving = false;
        tablets[old].push_health(now, old, p, s);
        s.after(
            d,
            Event::PrsEnd {
                shard: shard as u16,
            },
        );
        old
    }

    /// PRS ends: the candidate is PRIMARY, the old primary a serving REPLICA, and both push
    /// their new state; returns (old, new). What the vtgates make of it is
    /// `Gates::primary_moved`; then [`Self::drain_demoted`].
    pub(crate) fn on_prs_end(
        &mut self,
        now: SimTime,
        shard: usize,
        tablets: &mut [Tablet],
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) -> (usize, usize) {
        let (old, new) = {
            let op = &self.shard_ops[shard];
            (op.prs_old as usize, op.prs_new as usize)
        };
        if let Some(r) = self.prs.iter_mut().rev().find(|r| r.shard as usize == shard) {
            r.end = now;
        }
        tablets[old].primary = false;
        tablets[old].serving = true;
        tablets[new].primary = true;
        tablets[old].push_health(now, old, p, s);
        tablets[new].push_health(now, new, p, s);
        (old, new)
    }

    /// After PRS: the demoted primary `old` serves as a REPLICA for `prs_replica_window`, and
    /// is drained last.
    pub(crate) fn drain_demoted(
        &mut self,
        shard: usize,
        old: usize,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        let op = &mut self.shard_ops[shard];
        op.restarted.push(old as u16);
        s.after(
            p.operator.prs_replica_window,
            Event::Drain { tablet: old as u16 },
        );
    }
}
