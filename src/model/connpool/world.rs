//! The pool world: the `Pool` (connections, idle stacks), the `Waitlist`, `wl.mu` as a FIFO
//! server, the workload, and the dispatch of every event.
//!
//! `wl.mu` ([`WlMutex`]): an operation asks for the lock; operations run one at a time in
//! request order (Go's `sync.Mutex` enters starvation mode, i.e. FIFO handoff, once a waiter
//! has waited 1 ms, which is the regime that matters here). An operation's list work happens
//! when it acquires the lock; it holds the lock for `base + per_node × nodes visited`; what
//! it does after unlocking (wake the target, stack the connection) happens at the release.
//! With zero cost the release is immediate and no event is scheduled.

use super::event::Event;
use super::metrics::Metrics;
use super::params::{Arrivals, ConnPoolParams, Variant};
use super::waitlist::{Waiter, WaiterState, Waitlist, NONE};
use crate::model::dist::DurationDist;
use crate::sim::rng::{exponential, stream, uniform01};
use crate::sim::{Scheduler, SimDuration, SimRng, SimTime, Simulation, Trace, TraceRecord, World};
use std::collections::VecDeque;

/// One MySQL connection of the pool.
#[derive(Clone, Copy, Debug)]
pub struct Conn {
    /// Its current setting (0: none/clean).
    pub setting: u8,
}

/// An operation that takes `wl.mu`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutexOp {
    /// `waitForConn` links the waiter at the back. O(1).
    Enqueue(u32),
    /// The ctx branch of `waitForConn`: the waiter removes itself (scan or `RemoveIfPresent`).
    SelfRemove(u32),
    /// `tryReturnConnSlow` with this connection (`starving`: from the starvation worker).
    Return {
        /// The connection.
        conn: u32,
        /// Issued by the starvation worker.
        starving: bool,
    },
    /// `maybeStarvingCount`: an O(n) scan.
    StarvationScan,
}

/// What an operation does once it releases `wl.mu`.
#[derive(Clone, Copy, Debug)]
enum AfterUnlock {
    Enqueued(u32),
    Removed {
        w: u32,
        found: bool,
    },
    Returned {
        conn: u32,
        target: u32,
        starving: bool,
    },
    Scanned {
        count: usize,
    },
}

/// `wl.mu` as one FIFO server.
#[derive(Debug, Default)]
pub struct WlMutex {
    /// Held (or being driven): new requests queue.
    held: bool,
    /// Waiting operations and when each asked.
    queue: VecDeque<(MutexOp, SimTime)>,
    /// The holder's after-unlock action.
    after: Option<AfterUnlock>,
}

/// A sampler of a weighted mix: cumulative weights (normalised) and parts.
#[derive(Clone, Debug)]
struct Mix<T> {
    cum: Vec<f64>,
    parts: Vec<T>,
}

impl<T> Mix<T> {
    fn new(weights: &[f64], parts: Vec<T>) -> Self {
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
    fn pick(&self, rng: &mut SimRng) -> usize {
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

/// Draw from a duration distribution, in nanoseconds ([`DurationDist::sample`]'s rule: float
/// seconds rounded to the nearest nanosecond).
#[inline]
fn draw_ns(d: &DurationDist, rng: &mut SimRng) -> u64 {
    d.sample(rng).as_nanos()
}

/// The whole modelled system.
pub struct PoolWorld {
    // --- configuration
    variant: Variant,
    max_age: u32,
    capacity: u32,
    base_ns: u64,
    per_node_ns: u64,
    query_checks_deadline: bool,
    starvation_ns: u64,
    dial: DurationDist,
    rtt: DurationDist,
    wakeup: DurationDist,
    service: DurationDist,
    deadlines: Mix<DurationDist>,
    settings: Mix<u8>,
    think: DurationDist,
    // --- random streams (one per component)
    rng_arrivals: SimRng,
    rng_requests: SimRng,
    rng_dial: SimRng,
    rng_mysql: SimRng,
    rng_sched: SimRng,
    rng_clients: SimRng,
    // --- the pool
    /// Every connection ever created (closed ones are reused through `free_conns`).
    pub conns: Vec<Conn>,
    free_conns: Vec<u32>,
    /// The clean stack (LIFO).
    clean: Vec<u32>,
    /// Per-setting stacks, indexed by setting (0 unused).
    setting_stacks: Vec<Vec<u32>>,
    fresh_settings: usize,
    /// Connections that exist (`active`).
    pub active: u32,
    // --- waiters
    /// Every `Get` in flight, by slot.
    pub waiters: Vec<Waiter>,
    free_waiters: Vec<u32>,
    /// The waitlist.
    pub waitlist: Waitlist,
    evicted: Vec<u32>,
    /// `wl.mu`.
    pub mutex: WlMutex,
    starving_left: usize,
    // --- workload
    stage_ends: Vec<SimTime>,
    stage_rates: Vec<f64>,
    arrival_stage: usize,
    requests_left: u64,
    arrivals_done: bool,
    closed_end: SimTime,
    in_flight: u64,
    // --- measurement
    stages_end: SimTime,
    depth_last_t: SimTime,
    /// Everything counted.
    pub m: Metrics,
}

impl PoolWorld {
    /// A primed simulation of `p` with `seed`.
    pub fn simulation(p: &ConnPoolParams, seed: u64, trace: Trace) -> Simulation<PoolWorld> {
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
        let mut world = PoolWorld {
            variant: p.variant,
            max_age: p.pool.max_age,
            capacity: p.pool.capacity,
            base_ns: p.costs.base.as_nanos(),
            per_node_ns: p.costs.per_node.as_nanos(),
            query_checks_deadline: p.pool.query_checks_deadline,
            starvation_ns: p.pool.starvation_interval.as_nanos(),
            dial: p.pool.dial_latency.clone(),
            rtt: p.pool.setting_rtt.clone(),
            wakeup: p.costs.wakeup_latency.clone(),
            service: w.service.clone(),
            deadlines: Mix::new(
                &w.deadline.iter().map(|x| x.weight).collect::<Vec<_>>(),
                w.deadline.iter().map(|x| x.value.clone()).collect(),
            ),
            settings: Mix::new(&w.settings, (0..nsettings as u8).collect()),
            think,
            rng_arrivals: stream(seed, "connpool.arrivals", 0),
            rng_requests: stream(seed, "connpool.requests", 0),
            rng_dial: stream(seed, "connpool.dial", 0),
            rng_mysql: stream(seed, "connpool.mysql", 0),
            rng_sched: stream(seed, "connpool.scheduler", 0),
            rng_clients: stream(seed, "connpool.clients", 0),
            conns: Vec::with_capacity(p.pool.capacity as usize),
            free_conns: Vec::new(),
            clean: Vec::with_capacity(p.pool.capacity as usize),
            setting_stacks: vec![Vec::new(); nsettings.max(1)],
            fresh_settings: 1,
            active: 0,
            waiters: Vec::with_capacity(1024),
            free_waiters: Vec::with_capacity(1024),
            waitlist: Waitlist::new(!p.variant.o1_removal()),
            evicted: Vec::new(),
            mutex: WlMutex::default(),
            starving_left: 0,
            stage_ends: stage_ends.clone(),
            stage_rates,
            arrival_stage: 0,
            requests_left,
            arrivals_done: false,
            closed_end: *stage_ends.last().expect("a stage"),
            in_flight: 0,
            stages_end: *stage_ends.last().expect("a stage"),
            depth_last_t: SimTime::ZERO,
            m: Metrics {
                arrivals_by_stage: vec![0; stages.len()],
                goodput_by_stage: vec![0; stages.len()],
                post_deadline_by_stage: vec![0; stages.len()],
                depth_time: vec![0; 64],
                ..Metrics::default()
            },
        };
        for _ in 0..p.pool.prefill {
            let c = world.new_conn();
            world.clean.push(c);
            world.m.conns_opened += 1;
        }
        let mut sim = Simulation::with_trace(world, trace);
        match closed {
            None => {
                if let Some(t) = sim.world.next_arrival(SimTime::ZERO) {
                    sim.schedule(t, Event::Arrival);
                }
            }
            Some(clients) => {
                for c in 0..clients {
                    let d = draw_ns(&sim.world.think, &mut sim.world.rng_clients);
                    sim.schedule(SimTime(d), Event::ClientIssue { client: c });
                }
            }
        }
        if sim.world.starvation_ns > 0 {
            sim.schedule(SimTime(sim.world.starvation_ns), Event::StarvationTick);
        }
        sim
    }

    /// Variant simulated.
    pub fn variant(&self) -> Variant {
        self.variant
    }
    /// End of the last stage.
    pub fn stages_end(&self) -> SimTime {
        self.stages_end
    }
    /// Requests in flight.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    fn new_conn(&mut self) -> u32 {
        self.active += 1;
        match self.free_conns.pop() {
            Some(c) => {
                self.conns[c as usize] = Conn { setting: 0 };
                c
            }
            None => {
                self.conns.push(Conn { setting: 0 });
                (self.conns.len() - 1) as u32
            }
        }
    }

    fn close_conn(&mut self, c: u32) {
        self.active -= 1;
        self.free_conns.push(c);
        self.m.conns_closed += 1;
    }

    fn stage_of(&self, t: SimTime) -> Option<usize> {
        self.stage_ends.iter().position(|e| t < *e)
    }

    /// The time of the next open-loop arrival after `from` (piecewise-constant Poisson rate:
    /// a gap that crosses a stage boundary restarts at the boundary, which is exact by
    /// memorylessness). `None` when the stages are over.
    fn next_arrival(&mut self, from: SimTime) -> Option<SimTime> {
        if self.requests_left == 0 {
            return None;
        }
        let mut t = from;
        while self.arrival_stage < self.stage_ends.len() {
            let end = self.stage_ends[self.arrival_stage];
            let rate = self.stage_rates[self.arrival_stage];
            if rate > 0.0 {
                let gap = (exponential(&mut self.rng_arrivals, 1e9 / rate) + 0.5) as u64;
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

    // ------------------------------------------------------------------ requests

    fn new_request(&mut self, now: SimTime, client: u32, s: &mut Scheduler<Event>) {
        let part = self.deadlines.pick(&mut self.rng_requests);
        let dl = draw_ns(&self.deadlines.parts[part], &mut self.rng_requests);
        let setting = self.settings.parts[self.settings.pick(&mut self.rng_requests)];
        let service_ns = draw_ns(&self.service, &mut self.rng_requests);
        // The deadline and setting reach the counters (late, timed out, setting changes)
        // without being event times of their own: a draw record per request.
        s.draw(&TraceRecord {
            component: "request",
            index: setting as u32,
            kind: "request",
            a: dl,
            b: service_ns,
        });
        let w = match self.free_waiters.pop() {
            Some(w) => w,
            None => {
                self.waiters.push(Waiter::EMPTY);
                (self.waiters.len() - 1) as u32
            }
        };
        let gen = self.waiters[w as usize].gen;
        self.waiters[w as usize] = Waiter {
            gen,
            setting,
            state: WaiterState::Busy,
            age: 0,
            handed: false,
            woken_by_ctx: false,
            late: false,
            arrival: now,
            deadline: SimTime(now.0.saturating_add(dl)),
            service_ns,
            seq: 0,
            conn: NONE,
            client,
        };
        self.m.requests += 1;
        if let Some(k) = self.stage_of(now) {
            self.m.arrivals_by_stage[k] += 1;
        }
        self.in_flight += 1;
        self.get(now, w, s);
    }

    /// `ConnPool.Get` (ref §C.2): stacks, then a dial, then any settings stack, then wait.
    fn get(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let setting = self.waiters[w as usize].setting as usize;
        let mut conn = None;
        if setting != 0 {
            conn = self.setting_stacks[setting].pop();
        }
        if conn.is_none() {
            conn = self.clean.pop();
        }
        if conn.is_none() && self.active < self.capacity {
            let c = self.new_conn();
            let wt = &mut self.waiters[w as usize];
            wt.conn = c;
            wt.state = WaiterState::Dialing;
            let d = draw_ns(&self.dial, &mut self.rng_dial);
            s.after(SimDuration(d), Event::DialDone { w });
            return;
        }
        if conn.is_none() {
            conn = self.pop_any_settings_stack();
        }
        match conn {
            Some(c) => self.acquired(now, w, c, false, s),
            None => {
                self.waiters[w as usize].state = WaiterState::Enqueuing;
                self.lock(now, MutexOp::Enqueue(w), s);
            }
        }
    }

    fn pop_any_settings_stack(&mut self) -> Option<u32> {
        let n = self.setting_stacks.len();
        for k in 0..n.saturating_sub(1) {
            let i = 1 + (self.fresh_settings - 1 + k) % (n - 1);
            if let Some(c) = self.setting_stacks[i].pop() {
                return Some(c);
            }
        }
        None
    }

    fn pop_any(&mut self) -> Option<u32> {
        self.clean.pop().or_else(|| self.pop_any_settings_stack())
    }

    fn stack_push(&mut self, c: u32) {
        let st = self.conns[c as usize].setting as usize;
        if st == 0 {
            self.clean.push(c);
        } else {
            self.setting_stacks[st].push(c);
            self.fresh_settings = st;
        }
    }

    /// `w` has connection `c` (`waited`: it came through the waitlist).
    fn acquired(&mut self, now: SimTime, w: u32, c: u32, waited: bool, s: &mut Scheduler<Event>) {
        let wt = self.waiters[w as usize];
        let latency = now.0 - wt.arrival.0;
        self.m.acquisition.add(latency);
        self.m.queue_time_all_ns += latency as u128;
        self.m.queue_time_all_n += 1;
        if waited {
            self.m.wait_count += 1;
            self.m.wait_time_ns += latency as u128;
            if wt.expired(now) {
                self.m.post_deadline_handoffs += 1;
                if let Some(k) = self.stage_of(now) {
                    self.m.post_deadline_by_stage[k] += 1;
                }
            }
        }
        let wt = &mut self.waiters[w as usize];
        wt.conn = c;
        wt.state = WaiterState::Busy;
        wt.late = wt.expired(now);
        let have = self.conns[c as usize].setting;
        if have == wt.setting {
            self.start_query(now, w, s);
            return;
        }
        if wt.expired(now) {
            // ResetSetting/ApplySetting with an expired ctx fail at once; the connection is
            // closed and connReopen(expired ctx) fails: `active--` (ref §C.6 step 4).
            self.m.wasted_handoffs += 1;
            self.m.setting_failures += 1;
            self.close_conn(c);
            self.finish(now, w, s);
            return;
        }
        let want = wt.setting;
        let trips = (have != 0) as u32 + (want != 0) as u32;
        let mut d = 0;
        for _ in 0..trips {
            d = draw_ns(&self.rtt, &mut self.rng_mysql).saturating_add(d);
        }
        self.conns[c as usize].setting = want;
        s.after(SimDuration(d), Event::SettingDone { w });
    }

    fn start_query(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let wt = self.waiters[w as usize];
        if self.query_checks_deadline && wt.expired(now) {
            // execOnce with an expired ctx fails before execution; the connection is recycled.
            self.m.wasted_handoffs += 1;
            self.put(now, wt.conn, s);
            self.finish(now, w, s);
            return;
        }
        s.after(SimDuration(wt.service_ns), Event::QueryDone { w });
    }

    /// The request is over (success or failure): free its slot; a closed-loop client thinks.
    fn finish(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let wt = &mut self.waiters[w as usize];
        let client = wt.client;
        wt.state = WaiterState::Free;
        wt.gen = wt.gen.wrapping_add(1);
        self.free_waiters.push(w);
        self.in_flight -= 1;
        if client != NONE && now < self.closed_end {
            let d = draw_ns(&self.think, &mut self.rng_clients);
            s.after(SimDuration(d), Event::ClientIssue { client });
        }
        if self.arrivals_done && self.in_flight == 0 {
            s.stop();
        }
    }

    fn timed_out(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        self.m.timeouts += 1;
        self.m.queue_time_all_ns += (now.0 - self.waiters[w as usize].arrival.0) as u128;
        self.m.queue_time_all_n += 1;
        self.finish(now, w, s);
    }

    /// `put` → `tryReturnConn` (ref §C.4): lock-free `Len()` check, else the slow path.
    fn put(&mut self, now: SimTime, c: u32, s: &mut Scheduler<Event>) {
        if self.waitlist.is_empty() {
            self.stack_push(c);
        } else {
            self.lock(
                now,
                MutexOp::Return {
                    conn: c,
                    starving: false,
                },
                s,
            );
        }
    }

    /// The waiter's goroutine becomes runnable, committed to the case that woke it (`by_ctx`:
    /// its deadline; else `done`); it runs after the wake-up latency.
    fn wake(&mut self, w: u32, by_ctx: bool, s: &mut Scheduler<Event>) {
        self.waiters[w as usize].state = WaiterState::Waking;
        self.waiters[w as usize].woken_by_ctx = by_ctx;
        let d = draw_ns(&self.wakeup, &mut self.rng_sched);
        s.after(SimDuration(d), Event::WaiterRuns { w });
    }

    /// A returner hands `c` (or nothing: `NONE`, an eviction) to `w`.
    fn hand(&mut self, w: u32, c: u32, s: &mut Scheduler<Event>) {
        let wt = &mut self.waiters[w as usize];
        wt.handed = true;
        wt.conn = c;
        if wt.state == WaiterState::Parked {
            self.wake(w, false, s);
        }
    }

    /// `waitForConn` returns what it was handed (after `<-done`).
    fn take_handoff(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let c = self.waiters[w as usize].conn;
        if c == NONE {
            self.m.evicted_timeouts += 1;
            self.timed_out(now, w, s);
        } else {
            self.acquired(now, w, c, true, s);
        }
    }

    // ------------------------------------------------------------------ wl.mu

    fn lock(&mut self, now: SimTime, op: MutexOp, s: &mut Scheduler<Event>) {
        self.mutex.queue.push_back((op, now));
        if !self.mutex.held {
            self.drive_mutex(now, s);
        }
    }

    /// Run queued operations until one holds the lock for a positive time (or none is left).
    fn drive_mutex(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        self.mutex.held = true;
        while let Some((op, asked)) = self.mutex.queue.pop_front() {
            self.m.mutex_wait.add(now.0 - asked.0);
            self.note_depth(now);
            let (nodes, after) = self.critical_section(now, op);
            self.note_depth_after();
            let hold = self
                .base_ns
                .saturating_add(self.per_node_ns.saturating_mul(nodes as u64));
            if hold > 0 {
                self.m.mutex_busy_ns += hold.min(self.stages_end.0.saturating_sub(now.0));
                self.mutex.after = Some(after);
                s.after(SimDuration(hold), Event::MutexRelease);
                return;
            }
            self.after_unlock(now, after, s);
        }
        self.mutex.held = false;
    }

    fn critical_section(&mut self, now: SimTime, op: MutexOp) -> (u32, AfterUnlock) {
        match op {
            MutexOp::Enqueue(w) => {
                self.waitlist.push_back(&mut self.waiters, w);
                (0, AfterUnlock::Enqueued(w))
            }
            MutexOp::SelfRemove(w) => {
                let found = self.waitlist.contains(&self.waiters, w);
                let nodes = if self.variant.o1_removal() {
                    0
                } else if found {
                    self.waitlist.position(&self.waiters, w) as u32 + 1
                } else {
                    self.waitlist.len() as u32
                };
                if found {
                    self.waitlist.remove(&mut self.waiters, w);
                }
                (nodes, AfterUnlock::Removed { w, found })
            }
            MutexOp::Return { conn, starving } => {
                let sel = self.waitlist.select(
                    &mut self.waiters,
                    self.variant,
                    self.max_age,
                    self.conns[conn as usize].setting,
                    now,
                    &mut self.evicted,
                );
                self.m.evictions += self.evicted.len() as u64;
                if sel.target.is_some() {
                    self.m.selections += 1;
                    self.m.invariant_a_violations += sel.target_expired as u64;
                }
                (
                    sel.visited,
                    AfterUnlock::Returned {
                        conn,
                        target: sel.target.unwrap_or(NONE),
                        starving,
                    },
                )
            }
            MutexOp::StarvationScan => {
                let count = self
                    .waitlist
                    .starving_count(&self.waiters, self.variant, now);
                (self.waitlist.len() as u32, AfterUnlock::Scanned { count })
            }
        }
    }

    fn after_unlock(&mut self, now: SimTime, after: AfterUnlock, s: &mut Scheduler<Event>) {
        match after {
            AfterUnlock::Enqueued(w) => {
                let wt = &mut self.waiters[w as usize];
                if wt.expired(now) {
                    // The goroutine runs on into `select`: ctx is ready, done is not.
                    wt.state = WaiterState::Removing;
                    self.lock(now, MutexOp::SelfRemove(w), s);
                } else {
                    wt.state = WaiterState::Parked;
                    let (deadline, gen) = (wt.deadline, wt.gen);
                    s.at(deadline, Event::Deadline { w, gen });
                }
            }
            AfterUnlock::Removed { w, found } => {
                if found {
                    self.timed_out(now, w, s);
                } else {
                    // A returner owns it: `<-done` yields the connection (or nil if evicted).
                    self.take_handoff(now, w, s);
                }
            }
            AfterUnlock::Returned {
                conn,
                target,
                starving,
            } => {
                // Fixed (the seed's backport) hands off first and wakes evictees after;
                // OnlyA follows upstream v23, which notifies evictees inline, before the target.
                let evictees_first = self.variant == Variant::OnlyA;
                if evictees_first {
                    self.notify_evictees(s);
                }
                if target != NONE {
                    self.hand(target, conn, s);
                } else {
                    self.stack_push(conn);
                }
                if !evictees_first {
                    self.notify_evictees(s);
                }
                if starving {
                    if target != NONE {
                        self.starvation_step(now, s);
                    } else {
                        self.starving_left = 0;
                    }
                }
            }
            AfterUnlock::Scanned { count } => {
                self.starving_left = count;
                self.starvation_step(now, s);
            }
        }
    }

    fn notify_evictees(&mut self, s: &mut Scheduler<Event>) {
        for k in 0..self.evicted.len() {
            let e = self.evicted[k];
            self.hand(e, NONE, s);
        }
        self.evicted.clear();
    }

    /// `tryReturnAnyConn`, up to the starving count, stopping at the first failure.
    fn starvation_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        if self.starving_left == 0 {
            return;
        }
        let Some(c) = self.pop_any() else {
            self.starving_left = 0;
            return;
        };
        self.starving_left -= 1;
        if self.waitlist.is_empty() {
            self.stack_push(c);
            self.starving_left = 0;
        } else {
            self.lock(
                now,
                MutexOp::Return {
                    conn: c,
                    starving: true,
                },
                s,
            );
        }
    }

    fn note_depth(&mut self, now: SimTime) {
        let t = now.min(self.stages_end);
        if t > self.depth_last_t {
            let d = self.waitlist.len();
            if d >= self.m.depth_time.len() {
                self.m.depth_time.resize(d + 1, 0);
            }
            self.m.depth_time[d] += t.0 - self.depth_last_t.0;
            self.depth_last_t = t;
        }
    }

    fn note_depth_after(&mut self) {
        self.m.depth_max = self.m.depth_max.max(self.waitlist.len());
    }

    /// Close the books at the end of the run.
    pub fn finish_run(&mut self, end: SimTime) {
        self.note_depth(end);
    }
}

impl World for PoolWorld {
    type Event = Event;

    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::Arrival => {
                self.requests_left -= 1;
                self.new_request(now, NONE, s);
                match self.next_arrival(now) {
                    Some(t) => s.at(t, Event::Arrival),
                    None => {
                        self.arrivals_done = true;
                        if self.in_flight == 0 {
                            s.stop();
                        }
                    }
                }
            }
            Event::ClientIssue { client } => {
                if now < self.closed_end {
                    self.new_request(now, client, s);
                } else {
                    self.arrivals_done = true;
                    if self.in_flight == 0 {
                        s.stop();
                    }
                }
            }
            Event::DialDone { w } => {
                let wt = self.waiters[w as usize];
                if wt.expired(now) {
                    // The dial used the request ctx: it fails, `active--` (ref §C.2 step 2).
                    self.active -= 1;
                    self.free_conns.push(wt.conn);
                    self.m.dial_failures += 1;
                    self.timed_out(now, w, s);
                } else {
                    self.m.conns_opened += 1;
                    self.acquired(now, w, wt.conn, false, s);
                }
            }
            Event::SettingDone { w } => self.start_query(now, w, s),
            Event::QueryDone { w } => {
                let wt = self.waiters[w as usize];
                // Acquired before the deadline iff the query could start (or, with
                // `query_checks_deadline` off, iff the wait ended before the deadline).
                if wt.late {
                    self.m.late_completions += 1;
                } else {
                    self.m.completed += 1;
                    if let Some(k) = self.stage_of(now) {
                        self.m.goodput_by_stage[k] += 1;
                    }
                }
                self.put(now, wt.conn, s);
                self.finish(now, w, s);
            }
            Event::Deadline { w, gen } => {
                let wt = &self.waiters[w as usize];
                if wt.gen == gen && wt.state == WaiterState::Parked {
                    self.wake(w, true, s);
                }
            }
            Event::WaiterRuns { w } => {
                let wt = self.waiters[w as usize];
                debug_assert_eq!(wt.state, WaiterState::Waking);
                // A goroutine parked in select runs the case that woke it: `done` (a handoff or
                // an eviction) or its ctx, even if the other became ready while it waited to
                // be scheduled.
                if !wt.woken_by_ctx {
                    debug_assert!(wt.handed, "woken by done with nothing handed");
                    self.take_handoff(now, w, s);
                } else {
                    debug_assert!(wt.expired(now), "woken by a ctx that has not expired");
                    self.waiters[w as usize].state = WaiterState::Removing;
                    self.lock(now, MutexOp::SelfRemove(w), s);
                }
            }
            Event::MutexRelease => {
                let after = self.mutex.after.take().expect("a holder");
                self.after_unlock(now, after, s);
                self.drive_mutex(now, s);
            }
            Event::StarvationTick => {
                if self.arrivals_done && self.in_flight == 0 {
                    return;
                }
                self.lock(now, MutexOp::StarvationScan, s);
                s.after(SimDuration(self.starvation_ns), Event::StarvationTick);
            }
        }
    }
}
