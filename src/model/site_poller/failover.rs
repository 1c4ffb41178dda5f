//! The failover layer: a cross-site promotion inside a Poll (`EvalCrossSite`: candidate,
//! relay drain, promotion SQL, confirmation, DNS), its cooldown, and the record of each
//! attempt.

use super::event::Event;
use super::params::{FailoverParams, ProbeParams};
use super::site::Site;
use super::tracker::SiteState;
use crate::sim::rng::{uniform01, LazyRng};
use crate::sim::{Scheduler, SimTime, TraceRecord};

/// One promotion attempt of the failover layer.
#[derive(Clone, Copy, Debug)]
pub struct FailoverRec {
    /// The Poll's `ProbesDone` that started it.
    pub(crate) started: SimTime,
    /// The candidate promoted.
    pub candidate: u16,
    /// `recordFailover` (the cooldown starts, `activeSite` flips); `SimTime::MAX` if it failed.
    pub(crate) recorded: SimTime,
}

/// The failover layer: its attempts, its counters, its cooldown and its stream.
pub struct Failover {
    /// Every promotion attempt.
    pub(crate) recs: Vec<FailoverRec>,
    /// Promotions the cooldown blocked.
    pub(crate) blocked: u64,
    /// Polls that found more than one writable primary-candidate.
    pub(crate) split_brain_polls: u64,
    /// When the latest promotion was recorded (the cooldown runs from it).
    last_failover: Option<SimTime>,
    /// The site the latest promotion made primary.
    last_target: Option<u16>,
    /// The failover layer's stream (`"failover"`): step latencies, failures; lazy, since
    /// most runs never promote.
    rng: LazyRng,
}

impl Failover {
    /// No attempt yet.
    pub(super) fn new(seed: u64) -> Self {
        Failover {
            recs: Vec::new(),
            blocked: 0,
            split_brain_polls: 0,
            last_failover: None,
            last_target: None,
            rng: LazyRng::new(seed, "failover", 0),
        }
    }

    /// `EvalCrossSite` (simplified to the roles modelled) and `applyCrossSiteAction`'s
    /// failover path. Returns when the Poll goes on.
    pub(super) fn cross_site(
        &mut self,
        fo: &FailoverParams,
        pr: &ProbeParams,
        sites: &mut [Site],
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) -> SimTime {
        let st = |x: &Site| x.tracker.state;
        if sites
            .iter()
            .any(|x| !x.promotable && st(x) == SiteState::Writable)
        {
            return now; // Degraded: fence first, no promotion this cycle.
        }
        let core: Vec<usize> = (0..sites.len()).filter(|&i| sites[i].promotable).collect();
        if core.is_empty()
            || core
                .iter()
                .all(|&i| st(&sites[i]) == SiteState::Unreachable)
        {
            return now; // nothing to do / TotalLoss: alert only.
        }
        let writable = core
            .iter()
            .filter(|&&i| st(&sites[i]) == SiteState::Writable)
            .count();
        if writable > 1 {
            self.split_brain_polls += 1;
            return now;
        }
        let any_unreachable = core
            .iter()
            .any(|&i| st(&sites[i]) == SiteState::Unreachable);
        let candidate = core
            .iter()
            .copied()
            .find(|&i| st(&sites[i]) == SiteState::ReadOnly);
        let Some(cand) = candidate else {
            return now;
        };
        if writable != 0 || !any_unreachable {
            return now;
        }
        if let Some(last) = self.last_failover {
            if now.since(last) < fo.cooldown {
                self.blocked += 1;
                return now;
            }
        }
        let mut t = now + fo.gtid_pick.sample(self.rng.get());
        // Fence + kill the old primary only when it is known (`previousPrimary`).
        if let Some(old) = self.last_target.filter(|&o| o as usize != cand) {
            let old = old as usize;
            t += sites[old].query_latency(pr);
            if sites[old].down.is_none() {
                s.at(
                    t,
                    Event::SetAnswer {
                        site: old as u16,
                        writable: false,
                    },
                );
            }
            t += sites[old].query_latency(pr);
        }
        t += fo.relay_drain.sample(self.rng.get()).min(fo.drain_budget);
        t += fo.promotion_sql.sample(self.rng.get());
        let failed = fo.failure_p > 0.0 && uniform01(self.rng.get()) < fo.failure_p;
        if failed {
            // The outcome reaches the failover metrics without an event of its own.
            s.draw(&TraceRecord {
                component: "failover",
                index: cand as u32,
                kind: "failed",
                a: t.since(now).as_nanos(),
                b: 0,
            });
            self.recs.push(FailoverRec {
                started: now,
                candidate: cand as u16,
                recorded: SimTime::MAX,
            });
            return t;
        }
        s.at(
            t,
            Event::SetAnswer {
                site: cand as u16,
                writable: true,
            },
        );
        t += fo.confirm.sample(self.rng.get());
        // `recordFailover` time (a metric) and its promotion: a draw record.
        s.draw(&TraceRecord {
            component: "failover",
            index: cand as u32,
            kind: "recorded",
            a: t.since(now).as_nanos(),
            b: 0,
        });
        self.recs.push(FailoverRec {
            started: now,
            candidate: cand as u16,
            recorded: t,
        });
        self.last_failover = Some(t);
        self.last_target = Some(cand as u16);
        t + fo.dns.sample(self.rng.get())
    }
}
