//! The pool world as a simulated world: its set-up from parameters (standalone, or
//! embedded in a host world such as the fleet's), the embedding API a host calls, and the
//! dispatch of every event. Its state and a request's path through the pool are in
//! [`super::pool`]; the nouns are in their own files: [`super::conns`] (connections, idle
//! stacks), [`super::mutex`] (`wl.mu`), [`super::workload`] (arrivals, request draws),
//! [`super::waitlist`] (the list and the selection rule), `timers` (the ctx timers).

use super::conns::Conns;
use super::event::Event;
use super::gosync::{GoMutex, GoSched};
use super::metrics::{Metrics, Timeline};
use super::mutex::{Holder, MutexOp, WlMutex};
use super::params::{ConnPoolParams, MutexKind, Variant};
pub use super::pool::PoolWorld;
use super::timers::Timers;
use super::waitlist::{WaiterState, Waitlist, NONE};
use super::workload::{draw_ns, Request, Workload};
use crate::model::dist::DurationDist;
use crate::sim::rng::LazyRng;
use crate::sim::{
    EventQueue, Scheduler, SimDuration, SimTime, Simulation, Trace, TraceRecord, World,
};

impl PoolWorld {
    /// A primed simulation of `p` with `seed`.
    pub fn simulation(p: &ConnPoolParams, seed: u64, trace: Trace) -> Simulation<PoolWorld> {
        Self::simulation_timed(p, seed, trace, false)
    }

    /// [`Self::simulation`] with one `Deadline` event per parked waiter (`deadline_events`)
    /// or the pool's own timers (the default): every figure of the run is the same, only the
    /// event count and the digest differ ([`Self::set_deadline_events`]).
    #[doc(hidden)]
    pub fn simulation_timed(
        p: &ConnPoolParams,
        seed: u64,
        trace: Trace,
        deadline_events: bool,
    ) -> Simulation<PoolWorld> {
        let (mut world, closed) = Self::build(p, seed, 0);
        world.set_deadline_events(deadline_events);
        let mut sim = Simulation::with_trace(world, trace);
        match closed {
            None => {
                if let Some(t) = sim.world.workload.next_arrival(SimTime::ZERO) {
                    sim.schedule(t, Event::Arrival);
                }
            }
            Some(clients) => {
                for c in 0..clients {
                    let d = sim.world.workload.think_ns();
                    sim.schedule(SimTime(d), Event::ClientIssue { client: c });
                }
            }
        }
        if sim.world.starvation_ns > 0 {
            // The first tick's lateness: the process is idle at start.
            let l = match &sim.world.lateness_idle {
                DurationDist::Fixed { value } => value.as_nanos(),
                d => {
                    let d = d.clone();
                    let l = draw_ns(&d, sim.world.rng_timers.get());
                    sim.draw(&TraceRecord {
                        component: "timer",
                        index: 0,
                        kind: "lateness",
                        a: l,
                        b: 0,
                    });
                    sim.world.m.timer_lateness.add(l);
                    l
                }
            };
            sim.world.tick_base = SimTime(sim.world.starvation_ns);
            sim.schedule(
                SimTime(sim.world.starvation_ns.saturating_add(l)),
                Event::StarvationTick,
            );
        }
        sim
    }

    /// The pool world of `p` before its first event: streams at component index `index`
    /// (`connpool.arrivals`, `index`, ...), the prefilled connections; and the closed-loop
    /// client count, if any.
    fn build(p: &ConnPoolParams, seed: u64, index: u32) -> (PoolWorld, Option<u32>) {
        let w = &p.workload;
        let stages = p.stages();
        let (workload, closed) = Workload::new(p, seed, index);
        let end = workload.stages_end;
        let mut world = PoolWorld {
            variant: p.variant,
            max_age: p.pool.max_age,
            base_ns: p.costs.base.as_nanos(),
            per_node_ns: p.costs.per_node.as_nanos(),
            query_checks_deadline: p.pool.query_checks_deadline,
            starvation_ns: p.pool.starvation_interval.as_nanos(),
            dial: p.pool.dial_latency.clone(),
            rtt: p.pool.setting_rtt.clone(),
            sched: GoSched {
                gomaxprocs: p.costs.gomaxprocs,
                wake: p.costs.wakeup_latency.clone(),
                burst_ns: p.costs.wake_burst.as_nanos(),
                semrelease_ns: p.costs.semrelease.as_nanos(),
                handoff: match &p.costs.mutex {
                    MutexKind::GoSync {
                        handoff_latency, ..
                    } => handoff_latency.clone(),
                    MutexKind::Fifo => DurationDist::fixed(SimDuration::ZERO),
                },
                spin: matches!(p.costs.mutex, MutexKind::GoSync { spin: true, .. }),
                spin_iter_ns: match &p.costs.mutex {
                    MutexKind::GoSync { spin_iter, .. } => spin_iter.as_nanos(),
                    MutexKind::Fifo => 0,
                },
                runnable: 0,
                runnable_max: 0,
                wakes: 0,
                wake_ns: 0,
            },
            lateness_idle: p.costs.timer_lateness.clone(),
            lateness_busy: p.costs.timer_lateness_busy.clone(),
            rng_dial: LazyRng::new(seed, "connpool.dial", index),
            rng_mysql: LazyRng::new(seed, "connpool.mysql", index),
            rng_sched: LazyRng::new(seed, "connpool.scheduler", index),
            rng_timers: LazyRng::new(seed, "connpool.timers", index),
            conns: Conns::new(p.pool.capacity, w.settings.len()),
            waiters: Vec::with_capacity(1024),
            free_waiters: Vec::with_capacity(1024),
            waitlist: Waitlist::new(!p.variant.o1_removal()),
            evicted: Vec::new(),
            mutex: WlMutex {
                go: match p.costs.mutex {
                    MutexKind::Fifo => None,
                    MutexKind::GoSync { .. } => Some(GoMutex::default()),
                },
                ..WlMutex::default()
            },
            starving_left: 0,
            tick_base: SimTime::ZERO,
            workload,
            in_flight: 0,
            depth_last_t: SimTime::ZERO,
            last_emptied: SimTime::ZERO,
            defer_releases: false,
            deferred: EventQueue::new(),
            inline_wakes: matches!(
                &p.costs.wakeup_latency,
                DurationDist::Fixed { value } if value.as_nanos() == 0
            ),
            runs_now: Vec::new(),
            timers: Timers::new(),
            deadline_events: false,
            m: Metrics {
                arrivals_by_stage: vec![0; stages.len()],
                goodput_by_stage: vec![0; stages.len()],
                post_deadline_by_stage: vec![0; stages.len()],
                depth_time: vec![0; 64],
                ..Metrics::default()
            },
            timeline: Timeline::new(end + w.drain),
        };
        for _ in 0..p.pool.prefill {
            let c = world.conns.new_conn();
            world.conns.clean.push(c);
            world.m.conns_opened += 1;
        }
        (world, closed)
    }

    /// A pool with no arrivals of its own, for a host world that hands it one request at a
    /// time ([`Self::admit`]; the fleet model, one pool per vttablet process). Its streams are
    /// those of a standalone pool at component index `index`; `p.workload` gives the deadline
    /// mix, the settings and the service time (its arrivals, `load_scale` and `drain` are not
    /// used). Nothing happens until [`Self::start`].
    pub fn embedded(p: &ConnPoolParams, seed: u64, index: u32) -> PoolWorld {
        let (mut w, _) = Self::build(p, seed, index);
        w.workload.embed();
        // The host keeps its own timeline.
        w.timeline = Timeline::off();
        w.defer_releases = true;
        w.inline_wakes = false;
        w.deferred = EventQueue::with_capacity(p.pool.capacity as usize);
        w
    }

    /// Deliver every deferred query end at or before `now`, each at its own time, in time
    /// order; `done(end, late)` is told of each (`late`: acquired at or after its deadline,
    /// not goodput). An embedded pool must be settled up to `now` before each call into it
    /// ([`World::handle`], [`Self::admit`]) and before its counters are read.
    ///
    /// Why this is exact: a query end (`QueryDone`) that finds the waitlist empty only
    /// counts, pushes its connection on a stack (`put`'s lock-free `Len()` check) and frees
    /// the request: it schedules nothing and draws nothing. An embedded pool defers a query's
    /// end only while its waitlist is empty, and moves every deferred end into the host's
    /// queue as a `QueryDone` event as soon as a call leaves the waitlist non-empty
    /// (`flush_deferred`). The waitlist changes only inside a call, and every call is
    /// preceded by a settle, so each deferred end is applied, at its own time, to exactly the
    /// state it would have found as an event: nothing else happened to the pool in between.
    /// (A deferred end at exactly the instant of the next call is applied before it, where
    /// the event would have run in scheduling order: a tie of two nanosecond-resolution
    /// times.) The end of a read so served is in the digest through its request record
    /// (the pool, the deadline and the service time) and its start (an event's time).
    pub fn settle(&mut self, now: SimTime, mut done: impl FnMut(SimTime, bool)) {
        while let Some(t) = self.deferred.peek_time() {
            if t > now {
                break;
            }
            let (t, w) = self.deferred.pop().expect("peeked");
            let late = self.release_quiet(t, w);
            done(t, late);
        }
    }

    /// The deferred query ends become `QueryDone` events if the waitlist is not empty (a
    /// query ending then hands its connection on, which takes `wl.mu` and schedules).
    #[inline]
    fn flush_deferred(&mut self, s: &mut Scheduler<Event>) {
        if !self.deferred.is_empty() && !self.waitlist.is_empty() {
            while let Some((t, w)) = self.deferred.pop() {
                s.at(t, Event::QueryDone { w });
            }
        }
    }

    /// `QueryDone` at `t` with an empty waitlist (what [`Self::settle`] applies): the
    /// counters, the connection back on its stack, the request freed. Returns `late`.
    #[inline]
    fn release_quiet(&mut self, t: SimTime, w: u32) -> bool {
        let wt = self.waiters[w as usize];
        debug_assert!(
            self.waitlist.is_empty() && wt.client == NONE && !self.workload.arrivals_done
        );
        if wt.late {
            self.m.late_completions += 1;
        } else {
            self.m.completed += 1;
            if let Some(k) = self.workload.stage_of(t) {
                self.m.goodput_by_stage[k] += 1;
            }
        }
        self.conns.stack_push(wt.conn);
        let slot = &mut self.waiters[w as usize];
        slot.state = WaiterState::Free;
        slot.gen = slot.gen.wrapping_add(1);
        self.free_waiters.push(w);
        self.in_flight -= 1;
        wt.late
    }

    /// Deferred query ends not yet applied (embedded pools).
    pub fn deferred_len(&self) -> usize {
        self.deferred.len()
    }

    /// Defer query ends (the default of an embedded pool) or schedule each as a `QueryDone`
    /// event (what a standalone pool does): the same run either way, but for the event count
    /// and the digest (`tests/fleet.rs` checks it). Set before the first request.
    pub fn set_defer_releases(&mut self, on: bool) {
        debug_assert!(self.deferred.is_empty());
        self.defer_releases = on;
    }

    /// An embedded pool opens at `now`: its starvation worker's first tick (the process is
    /// idle), as a standalone pool's at time zero.
    pub fn start(&mut self, s: &mut Scheduler<Event>) {
        if self.starvation_ns == 0 {
            return;
        }
        let l = match &self.lateness_idle {
            DurationDist::Fixed { value } => value.as_nanos(),
            d => {
                let d = d.clone();
                let l = draw_ns(&d, self.rng_timers.get());
                s.draw(&TraceRecord {
                    component: "timer",
                    index: 0,
                    kind: "lateness",
                    a: l,
                    b: 0,
                });
                self.m.timer_lateness.add(l);
                l
            }
        };
        self.tick_base = SimTime(s.now().0.saturating_add(self.starvation_ns));
        s.at(
            SimTime(self.tick_base.0.saturating_add(l)),
            Event::StarvationTick,
        );
    }

    /// One request arrives at an embedded pool now (`Get` is called).
    pub fn admit(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        debug_assert!(
            self.deferred.peek_time().is_none_or(|t| t > now),
            "not settled"
        );
        self.new_request(now, NONE, s);
        self.flush_deferred(s);
    }

    /// [`Self::admit`] in three steps, for a host that records the request's draws itself
    /// (the same record, at the same point of the trace: [`Self::draw_request`], then
    /// [`Self::request_record`] on the host's trace, then this): a drawn request calls `Get`
    /// now.
    pub fn admit_drawn(&mut self, now: SimTime, req: Request, s: &mut Scheduler<Event>) {
        debug_assert!(
            self.deferred.peek_time().is_none_or(|t| t > now),
            "not settled"
        );
        self.request_drawn(now, NONE, req, s);
        self.flush_deferred(s);
    }

    /// A request's draws, in their order ([`Workload::draw_request`]).
    #[inline]
    pub fn draw_request(&mut self) -> Request {
        self.workload.draw_request()
    }

    /// The draw record of a request ([`Workload::request_record`]).
    #[inline]
    pub fn request_record(&self, req: &Request) -> TraceRecord {
        self.workload.request_record(req)
    }

    /// `req`, admitted now, is served at once from a stack with no setting change and no
    /// timer, and its query's end is deferred: its `Get` schedules nothing and records
    /// nothing, so [`Self::admit_drawn`] needs no trace ([`crate::sim::Nested::untraced`]).
    /// (`ConnPool.Get`: the wanted setting's stack, or the clean stack for no setting, has a
    /// connection; the deadline is still ahead; nothing waits.)
    #[inline]
    pub fn serves_at_once(&self, req: &Request) -> bool {
        self.defer_releases
            && req.deadline_ns > 0
            && self.waitlist.is_empty()
            && self.conns.has_idle(req.setting)
    }

    /// (requests arrived, completed before their deadline, in flight): what a host reads
    /// around each call to learn the outcomes (failed = arrived - completed - in flight).
    #[inline]
    pub fn outcome_counts(&self) -> (u64, u64, u64) {
        (self.m.requests, self.m.completed, self.in_flight)
    }

    /// Variant simulated.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// End of the last stage.
    pub(crate) fn stages_end(&self) -> SimTime {
        self.workload.stages_end
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// Close the books at the end of the run.
    pub(crate) fn finish_run(&mut self, end: SimTime) {
        self.note_depth(end);
        if let Some(go) = &mut self.mutex.go {
            go.close(end);
            self.m.mutex_stats = go.stats.clone();
        }
        self.m.wakes = self.sched.wakes;
        self.m.wake_ns = self.sched.wake_ns;
        self.m.runnable_max = self.sched.runnable_max;
        let cleared = if self.waitlist.is_empty() {
            self.last_emptied
        } else {
            end
        };
        self.m.drain_ns = cleared.0.saturating_sub(self.workload.stages_end.0);
        self.timeline.close(end, self.waitlist.len());
    }
}

impl World for PoolWorld {
    type Event = Event;

    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        debug_assert!(
            self.deferred.peek_time().is_none_or(|t| t > now),
            "not settled"
        );
        if let Event::DeadlineAlarm = ev {
            self.deadline_alarm(now, s);
            return;
        }
        self.dispatch(now, ev, s);
        self.after_event(now, s);
    }
}

impl PoolWorld {
    /// What follows the handling of every event (and of every timer an alarm fires, as its
    /// own event would have been): the zero-delay runs it issued, then, in an embedded pool,
    /// the deferred query ends become events if something now waits.
    #[inline]
    fn after_event(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        if !self.runs_now.is_empty() {
            self.run_now(now, s);
        }
        if self.defer_releases {
            self.flush_deferred(s);
        }
    }

    /// The goroutines woken with a zero delay during the current event (a fixed zero
    /// wake-up latency, [`PoolWorld::inline_wakes`], and nothing charged before the wake) run now, in wake order, each as the
    /// `WaiterRuns` event it would have been; the wakes their runs issue join the end of
    /// the list. Why this is exact: a zero-delay event is queued behind every event already
    /// pending at this instant and ahead of none, and those it would have run after are the
    /// other zero-delay runs of this event (kept in order here) and any event that happens
    /// to fall on this same nanosecond (a tie of two nanosecond-resolution times, the same
    /// tie `settle` documents, or a zero-length dial, round trip or query scheduled by one of
    /// these runs, which as an event would have come after the runs queued before it but
    /// before those queued after it: again a draw that rounds to 0 ns). Standalone pools
    /// only: an embedded pool's wakes stay events.
    /// Such runs are not events, so they are not in the trace digest or the event count.
    fn run_now(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let mut k = 0;
        while k < self.runs_now.len() {
            let w = self.runs_now[k];
            k += 1;
            self.dispatch(now, Event::WaiterRuns { w }, s);
        }
        self.runs_now.clear();
    }

    /// The alarm at `now`: each timer due now whose waiter is still parked fires (in arming
    /// order), each exactly as its own `Deadline` event would have been handled, the
    /// zero-delay runs and the deferred-end flush after each; timers whose waiters moved on
    /// are dropped; then the alarm is re-armed at the earliest live timer left, unless an
    /// alarm is already pending at or before it.
    fn deadline_alarm(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let waiters = &self.waiters;
        self.timers.fired(now, |w, gen| {
            let wt = &waiters[w as usize];
            wt.gen == gen && wt.state == WaiterState::Parked
        });
        while let Some((t, w, gen)) = self.timers.peek() {
            let wt = &self.waiters[w as usize];
            let live = wt.gen == gen && wt.state == WaiterState::Parked;
            if live && t > now {
                if self.timers.arm(t) {
                    s.at(t, Event::DeadlineAlarm);
                }
                return;
            }
            self.timers.pop();
            if live {
                debug_assert_eq!(t, now, "a live timer was not fired at its time");
                self.wake(w, true, 0, s);
                self.after_event(now, s);
            }
        }
    }

    /// One `Deadline` event per parked waiter (`on`) or the pool's own timers (the default):
    /// every figure of the run is the same, only the event count and the digest differ
    /// (`tests/connpool.rs` checks it). Set before the first event.
    #[doc(hidden)]
    pub fn set_deadline_events(&mut self, on: bool) {
        debug_assert!(self.timers.len() == 0);
        self.deadline_events = on;
    }

    fn dispatch(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::Arrival => {
                self.workload.requests_left -= 1;
                self.new_request(now, NONE, s);
                match self.workload.next_arrival(now) {
                    Some(t) => s.at(t, Event::Arrival),
                    None => {
                        self.workload.arrivals_done = true;
                        if self.in_flight == 0 {
                            s.stop();
                        }
                    }
                }
            }
            Event::ClientIssue { client } => {
                if now < self.workload.closed_end {
                    self.new_request(now, client, s);
                } else {
                    self.workload.arrivals_done = true;
                    if self.in_flight == 0 {
                        s.stop();
                    }
                }
            }
            Event::DialDone { w } => {
                let wt = self.waiters[w as usize];
                if wt.expired(now) {
                    // The dial used the request ctx: it fails, `active--` (vitessio/vitess
                    // `go/pools/smartconnpool/pool.go` `ConnPool.Get` step 2).
                    self.conns.close(wt.conn);
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
                    if let Some(k) = self.workload.stage_of(now) {
                        self.m.goodput_by_stage[k] += 1;
                    }
                }
                self.put(now, wt.conn, s);
                self.finish(now, w, s);
            }
            Event::Deadline { w, gen } => {
                let wt = &self.waiters[w as usize];
                if wt.gen == gen && wt.state == WaiterState::Parked {
                    self.wake(w, true, 0, s);
                }
            }
            Event::DeadlineAlarm => unreachable!("handled by `deadline_alarm`"),
            Event::WaiterRuns { w } => {
                self.sched.ran();
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
            Event::MutexRelease => self.mutex_release(now, s),
            Event::Mutex(ev) => self.mutex_event(now, ev, s),
            Event::StarvationTick => {
                if self.workload.arrivals_done && self.in_flight == 0 {
                    return;
                }
                self.lock(now, MutexOp::StarvationScan, s);
                self.tick_base = SimTime(self.tick_base.0.saturating_add(self.starvation_ns));
                let l = self.timer_lateness(s);
                s.at(
                    SimTime(self.tick_base.0.saturating_add(l)),
                    Event::StarvationTick,
                );
            }
        }
    }
}
