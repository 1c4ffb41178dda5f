//! The hold model of event-set benchmarks (Vaucher & Duval 1975, "A comparison of simulation event
//! list algorithms"):
//! a constant number of pending events; each pop schedules one new event at
//! now + Exp(mean increment). It measures the kernel, and is the fixture the experiment tests use.
//! Its only draws are event times, so its digest holds events and metrics, no draw records.

use super::kit::{count, fail, positive, Checked};
use super::Model;
use crate::sim::rng::{exponential, stream};
use crate::sim::{
    RunEnd, Scheduler, SimDuration, SimRng, SimTime, Simulation, Trace, TraceRecord, Traced, World,
};
use serde::{Deserialize, Serialize};

/// Parameters of the hold model.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldParams {
    /// Events pending at all times.
    pub pending: u32,
    /// Events to handle before the run stops.
    pub events: u64,
    /// Mean of the exponential increment.
    pub mean_increment: SimDuration,
    /// A run "ends late" (the indicator metric) when its last event is after this time.
    #[serde(default = "default_late")]
    pub late_after: SimDuration,
}

fn default_late() -> SimDuration {
    SimDuration::from_secs(1)
}

/// One pending event of the hold model.
#[derive(Clone, Copy, Debug)]
pub struct HoldEvent(pub u32);

impl Traced for HoldEvent {
    #[inline]
    fn record(&self) -> TraceRecord {
        TraceRecord {
            component: "hold",
            index: self.0,
            kind: "hold",
            a: 0,
            b: 0,
        }
    }
}

/// The hold world: one stream, a countdown.
pub struct HoldWorld {
    /// The one stream (`"hold"`): every increment.
    rng: SimRng,
    /// Mean increment, in seconds.
    mean_s: f64,
    /// Events still to handle before the run stops.
    left: u64,
}

impl World for HoldWorld {
    type Event = HoldEvent;
    #[inline]
    fn handle(&mut self, _now: SimTime, ev: HoldEvent, s: &mut Scheduler<HoldEvent>) {
        self.left -= 1;
        if self.left == 0 {
            s.stop();
            return;
        }
        let d = SimDuration::from_secs_f64(exponential(&mut self.rng, self.mean_s));
        s.after(d, ev);
    }
}

impl HoldWorld {
    /// A primed simulation of the hold model.
    pub fn simulation(p: &HoldParams, seed: u64, trace: Trace) -> Simulation<HoldWorld> {
        let mut rng = stream(seed, "hold", 0);
        let mean_s = p.mean_increment.as_secs_f64();
        let mut first = Vec::with_capacity(p.pending as usize);
        for _ in 0..p.pending {
            first.push(SimDuration::from_secs_f64(exponential(&mut rng, mean_s)));
        }
        let world = HoldWorld {
            rng,
            mean_s,
            left: p.events,
        };
        let mut sim = Simulation::with_trace(world, trace);
        for (i, d) in first.into_iter().enumerate() {
            sim.schedule(SimTime::ZERO + d, HoldEvent(i as u32));
        }
        sim
    }
}

crate::metric_set! {
    /// What one run of the hold model reports.
    pub struct HoldMetrics {
        /// Events handled (the same count as the runner's `events` column).
        handled_events: Value = "events handled",
        /// Simulated time of the last event, in seconds.
        end_time_s: Value = "simulated time of the last event",
        /// 1 when the last event is after `late_after`.
        ended_late: Indicator = "1 when the last event is after late_after",
    }
}

/// The hold model.
pub struct Hold;

impl Model for Hold {
    type Params = HoldParams;
    type World = HoldWorld;
    type Metrics = HoldMetrics;
    type Detail = ();
    fn validate(p: &HoldParams) -> Checked {
        let pending = ("pending event", "pending events");
        count("pending", p.pending.into(), (1, u64::MAX), pending)?;
        count("events", p.events, (1, u64::MAX), ("event", "events"))?;
        positive("mean_increment", p.mean_increment)?;
        // Every pending event is a heap entry; the kernel benchmark goes to 1e5.
        count("pending", p.pending.into(), (0, 1_000_000), pending)?;
        // ~10 s a run at ~1e7 events/s; more never ends in a sweep.
        count("events", p.events, (0, 100_000_000), ("event", "events"))?;
        // The run lasts about events x mean_increment / pending; keep it far below the
        // 584 years a u64 of nanoseconds holds, or the end time saturates.
        let span_s = p.events as f64 * p.mean_increment.as_secs_f64() / p.pending as f64;
        if span_s > 100.0 * 365.0 * 86_400.0 {
            return fail(
                "mean_increment",
                "events x mean_increment / pending <= 100 years of simulated time",
            );
        }
        Ok(())
    }
    fn simulation(p: &HoldParams, seed: u64, trace: Trace, _logs: bool) -> Simulation<HoldWorld> {
        HoldWorld::simulation(p, seed, trace)
    }
    fn horizon(_p: &HoldParams, _w: &HoldWorld) -> SimTime {
        SimTime::MAX
    }
    fn metrics(p: &HoldParams, _w: &HoldWorld, end: SimTime, events: u64) -> HoldMetrics {
        HoldMetrics {
            handled_events: events as f64,
            end_time_s: end.as_secs_f64(),
            ended_late: if end > SimTime::ZERO + p.late_after {
                1.0
            } else {
                0.0
            },
        }
    }
    fn report(_p: &HoldParams, _w: &HoldWorld, run: &RunEnd) -> String {
        format!(
            "hold model: {} events, last at {:.6} s",
            run.events,
            run.end.as_secs_f64()
        )
    }
    fn detail(_p: &HoldParams, _w: HoldWorld, _end: SimTime) {}
}
