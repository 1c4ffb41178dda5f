//! Tablet lifecycle (`docs/rollout.md` "Tablet"; vitessio/vitess `go/vt/servenv/run.go`,
//! `go/vt/vttablet/tabletserver/state_manager.go`, `docs/rollout.md`, the derived timing model):
//! `Serving` → SIGTERM (stops serving at once, clears its topology record) → `Down` after
//! `drain_grace` → new process publishes its address after `restart` → serves after
//! `serving_after_publish` → Ready at the next readiness probe → Available after
//! `tablet_available_timeout` of continuous Ready (a flap restarts the timer).
//!
//! Holds each [`Tablet`], each [`RestartRec`], and [`Tablets`]: all of them, with the
//! lifecycle steps. What a step means for the vtgates (a recount, a broken stream, a
//! discovery) and for the operator (Available) the world applies after it.

use super::event::Event;
use super::params::RolloutParams;
use super::streams::sample_lazy;
use crate::model::dist::uniform_offset;
use crate::sim::rng::{exponential, LazyRng};
use crate::sim::{Scheduler, SimDuration, SimTime};

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
    /// Index of its restart in [`Tablets::restarts`], or `NONE`.
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

/// Every tablet and its restarts: the state the tablet lifecycle changes (the vtgates read
/// the tablets, and record in a restart when they first route to its new process).
pub struct Tablets {
    /// Tablets, shard-major: tablet `s*(R+1)` is shard s's first primary.
    pub(crate) list: Vec<Tablet>,
    /// Every restart, in drain order.
    pub(crate) restarts: Vec<RestartRec>,
    /// When the first tablet was released (first SIGTERM).
    pub(crate) rollout_start: SimTime,
    /// Next fresh pod address.
    pub(crate) next_addr: u32,
    /// The `discovered` vectors of a reset world's restarts, for the next run's (so a reused
    /// world allocates none).
    pub(crate) spare_discovered: Vec<Vec<SimTime>>,
}

impl Tablet {
    /// Tell every vtgate (after `health_stream_delay`) about this tablet's (`t`) current state.
    #[inline]
    pub(crate) fn push_health(
        &self,
        now: SimTime,
        t: usize,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        s.at(
            now + p.vtgate.health_stream_delay,
            Event::HealthPush {
                tablet: t as u16,
                addr: self.addr,
                serving: self.serving,
                primary: self.primary,
            },
        );
    }

    /// The first readiness probe of the tablet's current pod at or after `x`.
    fn probe_at_or_after(&self, p: &RolloutParams, x: SimTime) -> SimTime {
        let period = p.tablets.readiness_probe_period.as_nanos();
        let o = self.probe_origin;
        if period == 0 || x <= o {
            return if period == 0 { x } else { o };
        }
        let k = (x.0 - o.0).div_ceil(period);
        SimTime(o.0.saturating_add(k.saturating_mul(period)))
    }
}

impl Tablets {
    /// The tablets of `p` at time zero, each serving at its first address, their streams
    /// from `seed`.
    pub(crate) fn new(p: &RolloutParams, seed: u64) -> Tablets {
        let per = p.replicas_per_shard as usize + 1;
        let n = p.shards as usize * per;
        let list = (0..n)
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
        Tablets {
            list,
            restarts: Vec::with_capacity(n),
            rollout_start: SimTime::MAX,
            next_addr: n as u32,
            spare_discovered: Vec::new(),
        }
    }

    /// SIGTERM: the tablet rejects new queries at once and `tm.Close` clears its record. Its
    /// restart record starts, with a discovery slot for each of the `m` vtgates.
    pub(crate) fn on_drain(
        &mut self,
        now: SimTime,
        t: usize,
        m: usize,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        let shard = self.list[t].shard;
        if self.rollout_start == SimTime::MAX {
            self.rollout_start = now;
        }
        let old_primary = t.is_multiple_of(p.replicas_per_shard as usize + 1);
        self.list[t].restart = self.restarts.len() as u32;
        let mut discovered = self.spare_discovered.pop().unwrap_or_default();
        discovered.clear();
        discovered.resize(m, SimTime::MAX);
        self.restarts.push(RestartRec {
            tablet: t as u16,
            shard,
            old_primary,
            drain_at: now,
            down_at: SimTime::MAX,
            publish_at: SimTime::MAX,
            serving_at: SimTime::MAX,
            ready_at: SimTime::MAX,
            available_at: SimTime::MAX,
            flaps: 0,
            discovered,
        });
        let tab = &mut self.list[t];
        tab.serving = false;
        tab.record = NONE;
        tab.push_health(now, t, p, s);
        let d = sample_lazy(&p.tablets.drain_grace, &mut tab.rng, t);
        s.after(d, Event::Down { tablet: t as u16 });
    }

    /// The old pod is gone (every health stream to it fails: the vtgates' part). The new
    /// process publishes its record after `restart`.
    pub(crate) fn on_down(
        &mut self,
        now: SimTime,
        t: usize,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        let r = self.list[t].restart as usize;
        self.restarts[r].down_at = now;
        let tab = &mut self.list[t];
        let d = sample_lazy(&p.tablets.restart, &mut tab.rng, t);
        let publish_at = now + d;
        tab.process_up = false;
        tab.publish_at = publish_at;
        s.at(publish_at, Event::Publish { tablet: t as u16 });
    }

    /// The new vttablet writes its record (a new address unless kept), before it serves.
    pub(crate) fn on_publish(
        &mut self,
        now: SimTime,
        t: usize,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        let keep = p.tablets.keep_address_on_restart;
        let period = p.tablets.readiness_probe_period;
        if !keep {
            // Not serving (drained): no view's contribution to a route reads the new address.
            debug_assert!(!self.list[t].serving);
            self.list[t].addr = self.next_addr;
            self.next_addr += 1;
        }
        let r = self.list[t].restart as usize;
        self.restarts[r].publish_at = now;
        let tab = &mut self.list[t];
        let sap = sample_lazy(&p.tablets.serving_after_publish, &mut tab.rng, t);
        // The record is published now (initTablet runs early), but the gRPC server, and so the
        // health stream, only answers from the first serving state (process_up in on_serve).
        tab.record = tab.addr;
        tab.serve_at = now + sap;
        let phase = if period == SimDuration::ZERO {
            SimDuration::ZERO
        } else {
            uniform_offset(tab.rng.get(), period)
        };
        tab.probe_origin = now + phase;
        s.after(sap, Event::Serve { tablet: t as u16 });
    }

    /// The new process serves (the vtgates streaming from it learn it: their part); the pod
    /// turns Ready at the next probe.
    pub(crate) fn on_serve(
        &mut self,
        now: SimTime,
        t: usize,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        let tab = &mut self.list[t];
        debug_assert_eq!(now, tab.serve_at);
        tab.serving = true;
        tab.process_up = true;
        self.restarts[tab.restart as usize].serving_at = now;
        tab.push_health(now, t, p, s);
        let ready = tab.probe_at_or_after(p, now);
        tab.avail_gen += 1;
        let gen = tab.avail_gen;
        s.at(
            ready,
            Event::Ready {
                tablet: t as u16,
                gen,
            },
        );
    }

    /// Ready: the Available timer starts (Available = Ready since + timeout; the operator's
    /// 30 ns requeue notices it within ms, vitess-operator
    /// `pkg/controller/vitessshard/reconcile_tablets.go`).
    pub(crate) fn on_ready(
        &mut self,
        now: SimTime,
        t: usize,
        gen: u32,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        if gen != self.list[t].avail_gen {
            return;
        }
        let r = self.list[t].restart as usize;
        if self.restarts[r].ready_at == SimTime::MAX {
            self.restarts[r].ready_at = now;
        }
        let a = p.operator.tablet_available_timeout;
        s.after(
            a,
            Event::Available {
                tablet: t as u16,
                gen,
            },
        );
        let rate = p.tablets.readiness_flaps_per_hour;
        if rate > 0.0 {
            let x = exponential(self.list[t].rng.get(), 3600.0 / rate);
            let x = SimDuration::from_secs_f64(x);
            if x < a {
                s.after(
                    x,
                    Event::Flap {
                        tablet: t as u16,
                        gen,
                    },
                );
            }
        }
    }

    /// Ready lost briefly: the Available timer restarts at the next Ready.
    pub(crate) fn on_flap(
        &mut self,
        now: SimTime,
        t: usize,
        gen: u32,
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        if gen != self.list[t].avail_gen {
            return;
        }
        let r = self.list[t].restart as usize;
        self.restarts[r].flaps += 1;
        let tab = &mut self.list[t];
        tab.avail_gen += 1;
        let back = tab.probe_at_or_after(p, now + p.tablets.readiness_flap_duration);
        s.at(
            back,
            Event::Ready {
                tablet: t as u16,
                gen: tab.avail_gen,
            },
        );
    }

    /// Available: the operator may release the next tablet of the shard, which is returned
    /// (`None`: a stale generation).
    pub(crate) fn on_available(&mut self, now: SimTime, t: usize, gen: u32) -> Option<usize> {
        if gen != self.list[t].avail_gen {
            return None;
        }
        let r = self.list[t].restart as usize;
        self.restarts[r].available_at = now;
        Some(self.list[t].shard as usize)
    }
}

/// The reconnect attempts of a health check from `start`: the first after `first` ns, each
/// next delay doubled up to `cap` (`first <= cap`). Returns the first attempt time at or after
/// `target` and the delay after it, as stepping attempt by attempt would, in at most 64
/// doublings and one division (a 1 ns cap over a 10 s wait was 1e10 steps).
pub fn first_attempt_at_or_after(start: u64, first: u64, cap: u64, target: u64) -> (u64, u64) {
    let (mut at, mut delay) = (start, first);
    loop {
        at = at.saturating_add(delay);
        delay = delay.saturating_mul(2).min(cap);
        if at >= target {
            return (at, delay);
        }
        if delay == cap {
            // Every later step adds `cap`: jump to the first one at or after `target`.
            let k = (target - at).div_ceil(cap);
            return (at.saturating_add(k.saturating_mul(cap)), cap);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::first_attempt_at_or_after;

    #[test]
    fn the_closed_form_backoff_is_the_stepped_one() {
        let stepped = |start: u64, first: u64, cap: u64, target: u64| {
            let (mut at, mut delay) = (start, first);
            loop {
                at += delay;
                delay = (delay * 2).min(cap);
                if at >= target {
                    return (at, delay);
                }
            }
        };
        for (first, cap) in [
            (1, 1),
            (2, 7),
            (3, 3),
            (5, 1000),
            (2_000_000, 60_000_000_000),
        ] {
            for start in [0u64, 17, 1_000_000] {
                // (Stepping takes dt / cap steps: keep it small for the small caps.)
                let far = if cap > 1_000_000 {
                    12_345_678_901
                } else {
                    1_000_001
                };
                for dt in [0u64, 1, 2, 3, 10, 999, 1_000_000, far] {
                    let target = start + dt;
                    assert_eq!(
                        first_attempt_at_or_after(start, first, cap, target),
                        stepped(start, first, cap, target),
                        "first {first} cap {cap} start {start} target {target}"
                    );
                }
            }
        }
    }
}
