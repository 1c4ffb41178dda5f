//! The pool world: its state, its set-up and the dispatch of every event. The nouns are in
//! their own files: [`super::pool`] (connections, idle stacks, `Get`, `put`),
//! [`super::mutex`] (`wl.mu`, the starvation worker), [`super::workload`] (arrivals,
//! clients, a request's life), [`super::waitlist`] (the list and the selection rule).

use super::event::Event;
use super::metrics::Metrics;
use super::gosync::{GoMutex, GoSched};
use super::metrics::Timeline;
use super::mutex::{MutexOp, WlMutex};
use super::timers::Timers;
use super::params::{Arrivals, ConnPoolParams, MutexKind, Variant};
use super::waitlist::{Waiter, WaiterState, Waitlist, NONE};
use crate::model::dist::{DurationDist, NsDraw};
use super::workload::{draw_ns, Mix, Request};
use crate::sim::rng::{stream, LazyRng};
use crate::sim::{EventQueue, Scheduler, SimDuration, SimRng, SimTime, Simulation, Trace, World};

/// One MySQL connection of the pool.
#[derive(Clone, Copy, Debug)]
pub struct Conn {
    /// Its current setting (0: none/clean).
    pub(crate) setting: u8,
}

/// The whole modelled system. Its fields are the pool's (connections, stacks), the
/// waiters', `wl.mu`'s, the workload's and the counters; the methods that change them are in
/// [`super::pool`], [`super::mutex`] and [`super::workload`].
pub struct PoolWorld {
    // --- configuration
    /// The variant simulated (which of the fixes A and B it has).
    pub(super) variant: Variant,
    /// `maxAge`: selections a waiter may be passed over before it is served first (vitessio/vitess
    /// `go/pools/smartconnpool/waitlist.go` `waitForConn`).
    pub(super) max_age: u32,
    /// `capacity`: the most connections that may exist.
    pub(super) capacity: u32,
    /// `wl.mu` hold time of every critical section (ns).
    pub(super) base_ns: u64,
    /// `wl.mu` hold time per waitlist node visited (ns).
    pub(super) per_node_ns: u64,
    /// `execOnce` refuses a query whose ctx has expired (the connection is recycled).
    pub(super) query_checks_deadline: bool,
    /// Period of the starvation worker (ns; 0: off).
    pub(super) starvation_ns: u64,
    /// Dial latency of a new connection.
    pub(super) dial: DurationDist,
    /// One round trip of a setting change (`ResetSetting` / `ApplySetting`).
    pub(super) rtt: DurationDist,
    /// The Go scheduler: wake-up delays, semaphore-release charges, spinning.
    pub(super) sched: GoSched,
    /// Timer lateness when the process is idle.
    pub(super) lateness_idle: DurationDist,
    /// Timer lateness when the process is busy.
    pub(super) lateness_busy: DurationDist,
    /// Query service time once a request holds a connection.
    pub(super) service: NsDraw,
    /// The mix of request deadlines.
    pub(super) deadlines: Mix<NsDraw>,
    /// The mix of request settings (0: none).
    pub(super) settings: Mix<u8>,
    /// A closed-loop client's think time (fixed zero for open-loop arrivals).
    pub(super) think: DurationDist,
    // --- random streams (one per component; those that may never draw are lazy)
    /// Open-loop arrival gaps (`connpool.arrivals`).
    pub(super) rng_arrivals: SimRng,
    /// A request's deadline, setting and service time (`connpool.requests`).
    pub(super) rng_requests: SimRng,
    /// Dial latencies (`connpool.dial`).
    pub(super) rng_dial: LazyRng,
    /// Setting round trips (`connpool.mysql`).
    pub(super) rng_mysql: LazyRng,
    /// Wake-up latencies (`connpool.scheduler`).
    pub(super) rng_sched: LazyRng,
    /// Closed-loop think times (`connpool.clients`).
    pub(super) rng_clients: LazyRng,
    /// Timer lateness (`connpool.timers`).
    pub(super) rng_timers: LazyRng,
    // --- the pool
    /// Every connection ever created (closed ones are reused through `free_conns`).
    pub(crate) conns: Vec<Conn>,
    /// Slots of closed connections, for reuse.
    pub(super) free_conns: Vec<u32>,
    /// The clean stack (LIFO).
    pub(super) clean: Vec<u32>,
    /// Per-setting stacks, indexed by setting (0 unused).
    pub(super) setting_stacks: Vec<Vec<u32>>,
    /// The setting stack pushed last (`getFromSettingsStack` starts there).
    pub(super) fresh_settings: usize,
    /// Connections that exist (`active`).
    pub(crate) active: u32,
    // --- waiters
    /// Every `Get` in flight, by slot.
    pub(crate) waiters: Vec<Waiter>,
    /// Free waiter slots, for reuse.
    pub(super) free_waiters: Vec<u32>,
    /// The waitlist.
    pub(crate) waitlist: Waitlist,
    /// Waiters a returner's walk evicted, to be told after the unlock.
    pub(super) evicted: Vec<u32>,
    /// `wl.mu`.
    pub(crate) mutex: WlMutex,
    /// Connections the starvation worker has still to try returning this tick.
    pub(super) starving_left: usize,
    /// The nominal time of the last starvation tick (ticks stay on the grid, each late by
    /// its own lateness).
    pub(super) tick_base: SimTime,
    // --- workload
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
    /// Requests arrived and not finished.
    pub(super) in_flight: u64,
    // --- measurement
    /// End of the last stage (rates and depths are measured up to it).
    pub(super) stages_end: SimTime,
    /// Time up to which the waitlist depth has been accounted.
    pub(super) depth_last_t: SimTime,
    /// When the waitlist last became empty.
    pub(super) last_emptied: SimTime,
    // --- deferred query ends (embedded pools only, see [`PoolWorld::settle`])
    /// The component index of the streams; an embedded pool's request records carry it.
    pub(super) index: u32,
    /// Query ends are kept here instead of as `QueryDone` events while nothing waits.
    pub(super) defer_releases: bool,
    /// The deferred query ends: (end, waiter), popped in time order (ties FIFO).
    pub(super) deferred: EventQueue<u32>,
    /// A zero-delay wake runs at the end of the current event instead of as an event: a
    /// standalone pool whose wake-up latency is a fixed zero (`PoolWorld::run_now`).
    pub(super) inline_wakes: bool,
    /// Waiters woken with a zero delay in the current event, whose goroutines run at its
    /// end, in wake order (standalone pools; see [`PoolWorld::run_now`]).
    pub(super) runs_now: Vec<u32>,
    /// The parked waiters' ctx timers and the pending alarm events (`super::timers`).
    pub(super) timers: Timers,
    /// One `Deadline` event per parked waiter instead of [`Self::timers`]: the same run, more
    /// events, another digest (only for the check of that, [`Self::set_deadline_events`]).
    pub(super) deadline_events: bool,
    /// Everything counted.
    pub(crate) m: Metrics,
    /// Counts per time bucket, through the stages and the drain.
    pub(crate) timeline: Timeline,
}

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
                if let Some(t) = sim.world.next_arrival(SimTime::ZERO) {
                    sim.schedule(t, Event::Arrival);
                }
            }
            Some(clients) => {
                for c in 0..clients {
                    let d = draw_ns(&sim.world.think, sim.world.rng_clients.get());
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
                    sim.draw(&crate::sim::TraceRecord {
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
            service: NsDraw::new(&w.service),
            deadlines: Mix::new(
                &w.deadline.iter().map(|x| x.weight).collect::<Vec<_>>(),
                w.deadline.iter().map(|x| NsDraw::new(&x.value)).collect(),
            ),
            settings: Mix::new(&w.settings, (0..nsettings as u8).collect()),
            think,
            rng_arrivals: stream(seed, "connpool.arrivals", index),
            rng_requests: stream(seed, "connpool.requests", index),
            rng_dial: LazyRng::new(seed, "connpool.dial", index),
            rng_mysql: LazyRng::new(seed, "connpool.mysql", index),
            rng_sched: LazyRng::new(seed, "connpool.scheduler", index),
            rng_clients: LazyRng::new(seed, "connpool.clients", index),
            rng_timers: LazyRng::new(seed, "connpool.timers", index),
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
            mutex: WlMutex {
                go: match p.costs.mutex {
                    MutexKind::Fifo => None,
                    MutexKind::GoSync { .. } => Some(GoMutex::default()),
                },
                ..WlMutex::default()
            },
            starving_left: 0,
            tick_base: SimTime::ZERO,
            stage_ends: stage_ends.clone(),
            stage_gaps_s: stage_rates.iter().map(|r| 1.0 / r).collect(),
            stage_rates,
            arrival_stage: 0,
            requests_left,
            arrivals_done: false,
            closed_end: *stage_ends.last().expect("a stage"),
            in_flight: 0,
            stages_end: *stage_ends.last().expect("a stage"),
            depth_last_t: SimTime::ZERO,
            last_emptied: SimTime::ZERO,
            index,
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
            timeline: Timeline::new(*stage_ends.last().expect("a stage") + w.drain),
        };
        for _ in 0..p.pool.prefill {
            let c = world.new_conn();
            world.clean.push(c);
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
        w.stage_ends = vec![SimTime::MAX];
        w.stage_rates = vec![0.0];
        w.stage_gaps_s = vec![f64::INFINITY];
        w.requests_left = u64::MAX;
        w.closed_end = SimTime::MAX;
        w.stages_end = SimTime::MAX;
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
        debug_assert!(self.waitlist.is_empty() && wt.client == NONE && !self.arrivals_done);
        if wt.late {
            self.m.late_completions += 1;
        } else {
            self.m.completed += 1;
            if let Some(k) = self.stage_of(t) {
                self.m.goodput_by_stage[k] += 1;
            }
        }
        self.stack_push(wt.conn);
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
                s.draw(&crate::sim::TraceRecord {
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
        s.at(SimTime(self.tick_base.0.saturating_add(l)), Event::StarvationTick);
    }

    /// One request arrives at an embedded pool now (`Get` is called).
    pub fn admit(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        debug_assert!(self.deferred.peek_time().is_none_or(|t| t > now), "not settled");
        self.new_request(now, NONE, s);
        self.flush_deferred(s);
    }

    /// [`Self::admit`] in three steps, for a host that records the request's draws itself
    /// (the same record, at the same point of the trace: [`Self::draw_request`], then
    /// [`Self::request_record`] on the host's trace, then this): a drawn request calls `Get`
    /// now.
    pub fn admit_drawn(&mut self, now: SimTime, req: Request, s: &mut Scheduler<Event>) {
        debug_assert!(self.deferred.peek_time().is_none_or(|t| t > now), "not settled");
        self.request_drawn(now, NONE, req, s);
        self.flush_deferred(s);
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
            && if req.setting == 0 {
                !self.clean.is_empty()
            } else {
                !self.setting_stacks[req.setting as usize].is_empty()
            }
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
        self.stages_end
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
        self.m.drain_ns = cleared.0.saturating_sub(self.stages_end.0);
        self.timeline.close(end, self.waitlist.len());
    }
}


impl World for PoolWorld {
    type Event = Event;

    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        debug_assert!(self.deferred.peek_time().is_none_or(|t| t > now), "not settled");
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
}

impl PoolWorld {
    /// Waiter `w` (generation `gen`) parks: its ctx timer is armed at `at`, kept by the pool
    /// (an alarm event scheduled if it is now the earliest) or, with
    /// [`Self::set_deadline_events`], as an event of its own.
    #[inline]
    pub(super) fn arm_timer(&mut self, at: SimTime, w: u32, gen: u32, s: &mut Scheduler<Event>) {
        if self.deadline_events {
            s.at(at, Event::Deadline { w, gen });
        } else if self.timers.add(at, w, gen) {
            s.at(at, Event::DeadlineAlarm);
        }
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
                    // The dial used the request ctx: it fails, `active--` (vitessio/vitess
                    // `go/pools/smartconnpool/pool.go` `ConnPool.Get` step 2).
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
                if self.arrivals_done && self.in_flight == 0 {
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
