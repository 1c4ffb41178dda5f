//! The workload: open-loop arrivals (piecewise-constant Poisson stages) and closed-loop
//! clients, and a request's life from its draws to `Get`, the wait (wake-up, handoff) and
//! its end.

use super::event::Event;
use super::waitlist::{Waiter, WaiterState, NONE};
use super::world::PoolWorld;
use crate::model::dist::DurationDist;
use crate::sim::rng::{exponential, uniform01};
use crate::sim::{Scheduler, SimDuration, SimRng, SimTime, TraceRecord};

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

/// What a request draws when it arrives ([`PoolWorld::draw_request`]).
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

impl PoolWorld {
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

    pub(super) fn new_request(&mut self, now: SimTime, client: u32, s: &mut Scheduler<Event>) {
        let req = self.draw_request();
        // The deadline and setting reach the counters (late, timed out, setting changes)
        // without being event times of their own: a draw record per request.
        s.draw(&self.request_record(&req));
        self.request_drawn(now, client, req, s);
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

    /// A drawn (and recorded) request calls `Get` now.
    #[inline]
    pub(crate) fn request_drawn(&mut self, now: SimTime, client: u32, req: Request, s: &mut Scheduler<Event>) {
        let Request {
            deadline_ns: dl,
            setting,
            service_ns,
        } = req;
        let w = match self.free_waiters.pop() {
            Some(w) => w,
            None => {
                self.waiters.push(Waiter::EMPTY);
                (self.waiters.len() - 1) as u32
            }
        };
        let gen = self.waiters[w as usize].gen;
        let deadline = SimTime(now.0.saturating_add(dl));
        self.waiters[w as usize] = Waiter {
            gen,
            setting,
            state: WaiterState::Busy,
            age: 0,
            handed: false,
            woken_by_ctx: false,
            late: false,
            arrival: now,
            deadline,
            // Until `arm_deadline_timer` draws the timer's lateness: exact for every
            // `expired(t)` with t < deadline, the only ones asked of an unarmed request.
            cancel_at: deadline,
            service_ns,
            seq: 0,
            conn: NONE,
            client,
        };
        self.m.requests += 1;
        if let Some(k) = self.stage_of(now) {
            self.m.arrivals_by_stage[k] += 1;
        }
        self.timeline_at(now).arrivals += 1;
        self.in_flight += 1;
        self.get(now, w, s);
    }

    /// The request is over (success or failure): free its slot; a closed-loop client thinks.
    pub(super) fn finish(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let wt = &mut self.waiters[w as usize];
        let client = wt.client;
        wt.state = WaiterState::Free;
        wt.gen = wt.gen.wrapping_add(1);
        self.free_waiters.push(w);
        self.in_flight -= 1;
        if client != NONE && now < self.closed_end {
            let d = draw_ns(&self.think, self.rng_clients.get());
            s.after(SimDuration(d), Event::ClientIssue { client });
        }
        if self.arrivals_done && self.in_flight == 0 {
            s.stop();
        }
    }

    pub(super) fn timed_out(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        self.m.timeouts += 1;
        self.timeline_at(now).timeouts += 1;
        self.m.queue_time_all_ns += (now.0 - self.waiters[w as usize].arrival.0) as u128;
        self.m.queue_time_all_n += 1;
        self.finish(now, w, s);
    }

    /// The waiter's goroutine becomes runnable, committed to the case that woke it (`by_ctx`:
    /// its deadline; else `done`); it runs after the wake-up latency.
    /// `offset` ns from now (what the waker spent before this wake), the Go scheduler's delay.
    pub(super) fn wake(&mut self, w: u32, by_ctx: bool, offset: u64, s: &mut Scheduler<Event>) {
        self.waiters[w as usize].state = WaiterState::Waking;
        self.waiters[w as usize].woken_by_ctx = by_ctx;
        let d = self.sched.ready(self.rng_sched.get());
        let delay = offset.saturating_add(d);
        if delay == 0 && self.inline_wakes {
            // Runs in this instant: at the end of the current event, not as an event of its
            // own (see [`PoolWorld::run_now`]).
            self.runs_now.push(w);
        } else {
            s.after(SimDuration(delay), Event::WaiterRuns { w });
        }
    }

    /// A returner hands `c` (or nothing: `NONE`, an eviction) to `w`, readying it `offset` ns
    /// from now.
    pub(super) fn hand(&mut self, w: u32, c: u32, offset: u64, s: &mut Scheduler<Event>) {
        let wt = &mut self.waiters[w as usize];
        wt.handed = true;
        wt.conn = c;
        if wt.state == WaiterState::Parked {
            self.wake(w, false, offset, s);
        }
    }

    /// A timer's lateness now: the idle distribution when nothing waits and nothing is
    /// runnable, else the busy one. A random lateness is a draw record (it reaches counters,
    /// ctx-cancelled vs by-the-clock, without always being an event time).
    pub(super) fn timer_lateness(&mut self, s: &mut Scheduler<Event>) -> u64 {
        let busy = !self.waitlist.is_empty() || self.sched.runnable > 0;
        let d = if busy {
            &self.lateness_busy
        } else {
            &self.lateness_idle
        };
        if let DurationDist::Fixed { value } = d {
            return value.as_nanos();
        }
        let l = draw_ns(d, self.rng_timers.get());
        s.draw(&TraceRecord {
            component: "timer",
            index: busy as u32,
            kind: "lateness",
            a: l,
            b: 0,
        });
        self.m.timer_lateness.add(l);
        l
    }

    /// Draw the lateness of `w`'s ctx timer, now, at its arrival (`ConnPool.Get` runs in the
    /// instant of the arrival; nothing between the arrival and this call changes the
    /// process's busy state or draws a lateness). Only a request whose ctx can be asked
    /// about at or after its deadline needs it: one that dials, one that waits, or one whose
    /// deadline is already due. A request served at once from a stack before its deadline
    /// never looks at its timer again, so it draws none: each drawn lateness is still an
    /// independent draw from the same distribution, chosen by the same busy state.
    pub(super) fn arm_deadline_timer(&mut self, w: u32, s: &mut Scheduler<Event>) {
        let l = self.timer_lateness(s);
        let wt = &mut self.waiters[w as usize];
        wt.cancel_at = SimTime(wt.deadline.0.saturating_add(l));
    }

    /// `waitForConn` returns what it was handed (after `<-done`).
    pub(super) fn take_handoff(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let c = self.waiters[w as usize].conn;
        if c == NONE {
            self.m.evicted_timeouts += 1;
            self.timed_out(now, w, s);
        } else {
            self.acquired(now, w, c, true, s);
        }
    }
}
