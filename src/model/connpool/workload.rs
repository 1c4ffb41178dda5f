//! The workload: open-loop arrivals (piecewise-constant Poisson stages), closed-loop
//! clients' think times, and what each request draws when it arrives (deadline, setting,
//! service time).

use super::params::{Arrivals, ConnPoolParams};
use crate::model::dist::{DurationDist, NsDraw};
use crate::sim::rng::{exponential, stream, uniform01, LazyRng};
use crate::sim::{SimDuration, SimRng, SimTime, TraceRecord};

/// A sampler of a weighted mix: cumulative weights (normalised) and parts.
#[derive(Clone, Debug)]
pub(super) struct Mix<T> {
    /// Cumulative normalised weights, one per part.
    cum: Vec<f64>,
    /// The parts.
    pub(super) parts: Vec<T>,
}

impl<T> Mix<T> {
    pub(super) fn new(weights: &[f64], parts: Vec<T>) -> Self {
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cum = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Mix { cum, parts }
    }
    /// Pick a part (no randomness consumed when there is one part).
    #[inline]
    pub(super) fn pick(&self, rng: &mut SimRng) -> usize {
        if self.parts.len() == 1 {
            return 0;
        }
        let u = uniform01(rng);
        self.cum
            .iter()
            .position(|c| u < *c)
            .unwrap_or(self.parts.len() - 1)
    }
}

/// What a request draws when it arrives ([`Workload::draw_request`]).
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// Its deadline after its arrival (ns).
    pub deadline_ns: u64,
    /// Its setting (0: none).
    pub setting: u8,
    /// Its query's service time (ns).
    pub service_ns: u64,
}

/// An exponential gap with mean `mean_s` seconds, in nanoseconds, rounded like every drawn
/// duration ([`SimDuration::from_secs_f64`]).
#[inline]
fn draw_exp_ns(rng: &mut SimRng, mean_s: f64) -> u64 {
    SimDuration::from_secs_f64(exponential(rng, mean_s)).as_nanos()
}

/// Draw from a duration distribution, in nanoseconds ([`DurationDist::sample`]'s rule: float
/// seconds rounded to the nearest nanosecond).
#[inline]
pub(super) fn draw_ns(d: &DurationDist, rng: &mut SimRng) -> u64 {
    d.sample(rng).as_nanos()
}

/// The workload's state and streams.
pub struct Workload {
    /// Query service time once a request holds a connection.
    pub(super) service: NsDraw,
    /// The mix of request deadlines.
    pub(super) deadlines: Mix<NsDraw>,
    /// The mix of request settings (0: none).
    pub(super) settings: Mix<u8>,
    /// A closed-loop client's think time (fixed zero for open-loop arrivals).
    pub(super) think: DurationDist,
    /// Open-loop arrival gaps (`connpool.arrivals`).
    pub(super) rng_arrivals: SimRng,
    /// A request's deadline, setting and service time (`connpool.requests`).
    pub(super) rng_requests: SimRng,
    /// Closed-loop think times (`connpool.clients`).
    pub(super) rng_clients: LazyRng,
    /// The component index of the streams; an embedded pool's request records carry it.
    pub(super) index: u32,
    /// End of each stage.
    pub(crate) stage_ends: Vec<SimTime>,
    /// Arrival rate of each stage (per second).
    pub(super) stage_rates: Vec<f64>,
    /// The mean gap between arrivals of each stage, `1 / rate` seconds (computed once, not
    /// at every arrival; unused where the rate is 0).
    pub(super) stage_gaps_s: Vec<f64>,
    /// The stage the next open-loop arrival is drawn in.
    pub(super) arrival_stage: usize,
    /// Requests still to arrive (`workload.arrivals.requests`).
    pub(super) requests_left: u64,
    /// No request arrives any more: the run stops when the last one is done.
    pub(super) arrivals_done: bool,
    /// Closed-loop clients issue no request from this time on.
    pub(super) closed_end: SimTime,
    /// End of the last stage (rates and depths are measured up to it).
    pub(super) stages_end: SimTime,
}

impl Workload {
    /// The workload of `p`, its streams at component index `index`; and the closed-loop
    /// client count, if any.
    pub(super) fn new(p: &ConnPoolParams, seed: u64, index: u32) -> (Self, Option<u32>) {
        let w = &p.workload;
        let stages = p.stages();
        let mut t = SimTime::ZERO;
        let mut stage_ends = Vec::with_capacity(stages.len());
        let mut stage_rates = Vec::with_capacity(stages.len());
        for s in &stages {
            t += s.duration;
            stage_ends.push(t);
            stage_rates.push(p.rate_of(s.load));
        }
        let (requests_left, think, closed) = match &w.arrivals {
            Arrivals::OpenLoop { requests, .. } => (
                requests.unwrap_or(u64::MAX),
                DurationDist::fixed(SimDuration::ZERO),
                None,
            ),
            Arrivals::ClosedLoop { clients, think, .. } => {
                (u64::MAX, think.clone(), Some(*clients))
            }
        };
        let nsettings = w.settings.len();
        let last = *stage_ends.last().expect("a stage");
        let wl = Workload {
            service: NsDraw::new(&w.service),
            deadlines: Mix::new(
                &w.deadline.iter().map(|x| x.weight).collect::<Vec<_>>(),
                w.deadline.iter().map(|x| NsDraw::new(&x.value)).collect(),
            ),
            settings: Mix::new(&w.settings, (0..nsettings as u8).collect()),
            think,
            rng_arrivals: stream(seed, "connpool.arrivals", index),
            rng_requests: stream(seed, "connpool.requests", index),
            rng_clients: LazyRng::new(seed, "connpool.clients", index),
            index,
            stage_gaps_s: stage_rates.iter().map(|r| 1.0 / r).collect(),
            stage_rates,
            stage_ends,
            arrival_stage: 0,
            requests_left,
            arrivals_done: false,
            closed_end: last,
            stages_end: last,
        };
        (wl, closed)
    }

    /// No arrivals of its own and no stages (an embedded pool: the host hands it requests).
    pub(super) fn embed(&mut self) {
        self.stage_ends = vec![SimTime::MAX];
        self.stage_rates = vec![0.0];
        self.stage_gaps_s = vec![f64::INFINITY];
        self.requests_left = u64::MAX;
        self.closed_end = SimTime::MAX;
        self.stages_end = SimTime::MAX;
    }

    /// The stage `t` falls in (`None`: after the last).
    pub(super) fn stage_of(&self, t: SimTime) -> Option<usize> {
        self.stage_ends.iter().position(|e| t < *e)
    }

    /// The time of the next open-loop arrival after `from` (piecewise-constant Poisson rate:
    /// a gap that crosses a stage boundary restarts at the boundary, which is exact by
    /// memorylessness). `None` when the stages are over.
    pub(super) fn next_arrival(&mut self, from: SimTime) -> Option<SimTime> {
        if self.requests_left == 0 {
            return None;
        }
        let mut t = from;
        while self.arrival_stage < self.stage_ends.len() {
            let end = self.stage_ends[self.arrival_stage];
            if self.stage_rates[self.arrival_stage] > 0.0 {
                let gap = draw_exp_ns(
                    &mut self.rng_arrivals,
                    self.stage_gaps_s[self.arrival_stage],
                );
                let next = SimTime(t.0.saturating_add(gap));
                if next < end {
                    return Some(next);
                }
            }
            t = end;
            self.arrival_stage += 1;
        }
        None
    }

    /// A request's draws, in their order: the deadline's part of the mix and its value, the
    /// setting, the service time (`connpool.requests`).
    #[inline]
    pub fn draw_request(&mut self) -> Request {
        let part = self.deadlines.pick(&mut self.rng_requests);
        let dl = self.deadlines.parts[part].sample_ns(&mut self.rng_requests);
        let setting = self.settings.parts[self.settings.pick(&mut self.rng_requests)];
        let service_ns = self.service.sample_ns(&mut self.rng_requests);
        Request {
            deadline_ns: dl,
            setting,
            service_ns,
        }
    }

    /// The draw record of a request (`request`, pool << 8 | setting, `request`, deadline,
    /// service time; an embedded pool's index, 0 for a standalone pool).
    #[inline]
    pub fn request_record(&self, req: &Request) -> TraceRecord {
        TraceRecord {
            component: "request",
            index: req.setting as u32 | self.index << 8,
            kind: "request",
            a: req.deadline_ns,
            b: req.service_ns,
        }
    }

    /// A closed-loop client's think time (ns).
    #[inline]
    pub(super) fn think_ns(&mut self) -> u64 {
        draw_ns(&self.think, self.rng_clients.get())
    }
}
