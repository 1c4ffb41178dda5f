//! Tablet lifecycle (`docs/rollout.md` "Tablet"; vitessio/vitess `go/vt/servenv/run.go`,
//! `go/vt/vttablet/tabletserver/state_manager.go`, `docs/rollout.md`, the derived timing model):
//! `Serving` → SIGTERM (stops serving at once, clears its topology record) → `Down` after
//! `drain_grace` → new process publishes its address after `restart` → serves after
//! `serving_after_publish` → Ready at the next readiness probe → Available after
//! `tablet_available_timeout` of continuous Ready (a flap restarts the timer).

use super::event::Event;
use super::world::{sample_lazy, RestartRec, RolloutWorld, NONE};
use crate::model::dist::uniform_offset;
use crate::sim::rng::exponential;
use crate::sim::{Scheduler, SimDuration, SimTime};

impl RolloutWorld {
    /// Tell every vtgate (after `health_stream_delay`) about tablet `t`'s current state.
    pub(super) fn push_health(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        let tab = &self.tablets[t];
        s.at(
            now + self.p.vtgate.health_stream_delay,
            Event::HealthPush {
                tablet: t as u16,
                addr: tab.addr,
                serving: tab.serving,
                primary: tab.primary,
            },
        );
    }

    /// The first readiness probe of tablet `t`'s current pod at or after `x`.
    fn probe_at_or_after(&self, t: usize, x: SimTime) -> SimTime {
        let period = self.p.tablets.readiness_probe_period.as_nanos();
        let o = self.tablets[t].probe_origin;
        if period == 0 || x <= o {
            return if period == 0 { x } else { o };
        }
        let k = (x.0 - o.0).div_ceil(period);
        SimTime(o.0.saturating_add(k.saturating_mul(period)))
    }

    /// SIGTERM: the tablet rejects new queries at once and `tm.Close` clears its record.
    pub(super) fn on_drain(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        let m = self.m();
        let shard = self.tablets[t].shard;
        if self.rollout_start == SimTime::MAX {
            self.rollout_start = now;
        }
        let old_primary = t.is_multiple_of(self.per_shard());
        self.tablets[t].restart = self.restarts.len() as u32;
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
        self.pending_discoveries += self.watchers(t) as u64;
        let tab = &mut self.tablets[t];
        tab.serving = false;
        tab.record = NONE;
        self.push_health(now, t, s);
        self.recount_all(now, t, s);
        let d = sample_lazy(&self.p.tablets.drain_grace, &mut self.tablets[t].rng, t);
        s.after(d, Event::Down { tablet: t as u16 });
    }

    /// The old pod is gone: every health stream to it fails. With a kept address, each
    /// vtgate's health check retries with its backoff and finds the new process.
    pub(super) fn on_down(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        let shard = self.tablets[t].shard as usize;
        let r = self.tablets[t].restart as usize;
        self.restarts[r].down_at = now;
        let d = sample_lazy(&self.p.tablets.restart, &mut self.tablets[t].rng, t);
        let publish_at = now + d;
        let tab = &mut self.tablets[t];
        tab.process_up = false;
        tab.publish_at = publish_at;
        let addr = tab.addr;
        s.at(publish_at, Event::Publish { tablet: t as u16 });
        let keep = self.p.tablets.keep_address_on_restart;
        let first = self.p.vtgate.health_check_retry_delay.as_nanos();
        let cap = self.p.vtgate.healthcheck_timeout.as_nanos();
        for g in 0..self.m() {
            let i = self.vi(g, t);
            let v = &mut self.views[i];
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
                let note = super::world::Note::StreamError {
                    g: g as u16,
                    tablet: t as u16,
                    addr,
                };
                self.note(now, note);
            }
            let changed = self.recount(g, t);
            self.reevaluate_if(changed, now, g, shard, s);
        }
    }

    /// The new vttablet writes its record (a new address unless kept), before it serves.
    pub(super) fn on_publish(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        let keep = self.p.tablets.keep_address_on_restart;
        let period = self.p.tablets.readiness_probe_period;
        if !keep {
            // Not serving (drained): no view's contribution to a route reads the new address.
            debug_assert!(!self.tablets[t].serving);
            self.tablets[t].addr = self.next_addr;
            self.next_addr += 1;
        }
        let r = self.tablets[t].restart as usize;
        self.restarts[r].publish_at = now;
        let sap = sample_lazy(
            &self.p.tablets.serving_after_publish,
            &mut self.tablets[t].rng,
            t,
        );
        let tab = &mut self.tablets[t];
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

    /// The new process serves; the pod turns Ready at the next probe.
    pub(super) fn on_serve(&mut self, now: SimTime, t: usize, s: &mut Scheduler<Event>) {
        debug_assert_eq!(now, self.tablets[t].serve_at);
        self.tablets[t].serving = true;
        self.tablets[t].process_up = true;
        let r = self.tablets[t].restart as usize;
        self.restarts[r].serving_at = now;
        self.push_health(now, t, s);
        // Recounting touches no field a discovery reads, nor the other way round: the
        // discoveries can follow all the recounts.
        self.recount_all(now, t, s);
        self.check_discovery_all(now, t);
        let ready = self.probe_at_or_after(t, now);
        self.tablets[t].avail_gen += 1;
        let gen = self.tablets[t].avail_gen;
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
    pub(super) fn on_ready(&mut self, now: SimTime, t: usize, gen: u32, s: &mut Scheduler<Event>) {
        if gen != self.tablets[t].avail_gen {
            return;
        }
        let r = self.tablets[t].restart as usize;
        if self.restarts[r].ready_at == SimTime::MAX {
            self.restarts[r].ready_at = now;
        }
        let a = self.p.operator.tablet_available_timeout;
        s.after(
            a,
            Event::Available {
                tablet: t as u16,
                gen,
            },
        );
        let rate = self.p.tablets.readiness_flaps_per_hour;
        if rate > 0.0 {
            let x = exponential(self.tablets[t].rng.get(), 3600.0 / rate);
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
    pub(super) fn on_flap(&mut self, now: SimTime, t: usize, gen: u32, s: &mut Scheduler<Event>) {
        if gen != self.tablets[t].avail_gen {
            return;
        }
        let r = self.tablets[t].restart as usize;
        self.restarts[r].flaps += 1;
        self.tablets[t].avail_gen += 1;
        let back = self.probe_at_or_after(t, now + self.p.tablets.readiness_flap_duration);
        s.at(
            back,
            Event::Ready {
                tablet: t as u16,
                gen: self.tablets[t].avail_gen,
            },
        );
    }

    /// Available: the operator may release the next tablet of the shard.
    pub(super) fn on_available(
        &mut self,
        now: SimTime,
        t: usize,
        gen: u32,
        s: &mut Scheduler<Event>,
    ) {
        if gen != self.tablets[t].avail_gen {
            return;
        }
        let r = self.tablets[t].restart as usize;
        self.restarts[r].available_at = now;
        let shard = self.tablets[t].shard as usize;
        self.step_done(now, shard, s);
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
