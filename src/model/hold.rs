//! The hold model of event-set benchmarks (Vaucher & Duval 1975; `reference/des-anchors.md` §4):
//! a constant number of pending events; each pop schedules one new event at
//! now + Exp(mean increment). It measures the kernel, and is the fixture the experiment tests use.
//! Its only draws are event times, so its digest holds events and metrics, no draw records.

use super::{close_run, MetricDef, Model, RunOptions, RunOutput};
use crate::sim::rng::{exponential, stream};
use crate::sim::{Scheduler, SimDuration, SimRng, SimTime, Simulation, TraceRecord, Traced, World};
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
    rng: SimRng,
    mean_s: f64,
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
    pub fn simulation(
        p: &HoldParams,
        seed: u64,
        trace: crate::sim::Trace,
    ) -> Simulation<HoldWorld> {
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

/// The hold model.
pub struct Hold;

impl Model for Hold {
    type Params = HoldParams;
    fn validate(p: &HoldParams) -> Result<(), (String, String)> {
        if p.pending == 0 {
            return Err(("pending".into(), "at least 1 pending event".into()));
        }
        if p.events == 0 {
            return Err(("events".into(), "at least 1 event".into()));
        }
        if p.mean_increment == SimDuration::ZERO {
            return Err(("mean_increment".into(), "a duration > 0".into()));
        }
        // Every pending event is a heap entry; the kernel benchmark goes to 1e5.
        if p.pending > 1_000_000 {
            return Err(("pending".into(), "at most 1000000 pending events".into()));
        }
        // ~10 s a run at ~1e7 events/s; more never ends in a sweep.
        if p.events > 100_000_000 {
            return Err(("events".into(), "at most 100000000 events".into()));
        }
        // The run lasts about events x mean_increment / pending; keep it far below the
        // 584 years a u64 of nanoseconds holds, or the end time saturates.
        let span_s = p.events as f64 * p.mean_increment.as_secs_f64() / p.pending as f64;
        if span_s > 100.0 * 365.0 * 86_400.0 {
            return Err((
                "mean_increment".into(),
                "events x mean_increment / pending <= 100 years of simulated time".into(),
            ));
        }
        Ok(())
    }
    fn metric_defs() -> Vec<MetricDef> {
        vec![
            MetricDef::value("events", "events handled"),
            MetricDef::value("end_time_s", "simulated time of the last event"),
            MetricDef::indicator("ended_late", "1 when the last event is after late_after"),
        ]
    }
    fn run(p: &HoldParams, seed: u64, opts: RunOptions) -> RunOutput {
        let mut sim = HoldWorld::simulation(p, seed, opts.trace);
        sim.run_until(SimTime::MAX);
        let (events, end) = (sim.events(), sim.now());
        let late = if end > SimTime::ZERO + p.late_after {
            1.0
        } else {
            0.0
        };
        let values = vec![events as f64, end.as_secs_f64(), late];
        let (_, fin) = close_run(sim, &Self::metric_defs(), values);
        let report = opts.report.then(|| {
            format!(
                "hold model: {} events, last at {:.6} s",
                fin.events,
                fin.end.as_secs_f64()
            )
        });
        RunOutput::new(fin, report, vec![])
    }
}
