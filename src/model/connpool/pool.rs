//! The pool world's state and a request's path through it: `Get` (a stack, a dial, any
//! settings stack, else the waitlist), `wl.mu`'s list work and what follows each unlock, the
//! wake-up, the handoff or the ctx, the query, `put` and the request's end (vitessio/vitess
//! `go/pools/smartconnpool/pool.go` `ConnPool.Get`, `put` / `tryReturnConn`, the
//! expired-waiter path of `docs/connpool.md`; `waitlist.go` `waitForConn`,
//! `tryReturnConnSlow`). Also the 100 ms starvation worker, and the waitlist-depth
//! accounting done under the lock. The parts the world is made of are their own files':
//! [`super::conns`] (connections, stacks), [`super::waitlist`] (the list, `Waiter`, the
//! selection rule), [`super::mutex`] (`wl.mu` and its driver), `timers` (the ctx
//! timers), [`super::workload`] (arrivals, request draws), [`super::metrics`] (counters).

use super::conns::Conns;
use super::event::Event;
use super::gosync::GoSched;
use super::metrics::{Bucket, Metrics, Timeline};
use super::mutex::{AfterUnlock, Holder, MutexOp, WlMutex};
use super::params::Variant;
use super::timers::Timers;
use super::waitlist::{Waiter, WaiterState, Waitlist, NONE};
use super::workload::{draw_ns, Request, Workload};
use crate::model::dist::DurationDist;
use crate::sim::rng::LazyRng;
use crate::sim::{EventQueue, Scheduler, SimDuration, SimTime, TraceRecord};

/// The whole modelled system. Its fields are the pool's (connections, stacks), the
/// waiters', `wl.mu`'s, the workload's and the counters; the request's path through them is
/// here, their own methods in their files.
pub struct PoolWorld {
    // --- configuration
    /// The variant simulated (which of the fixes A and B it has).
    pub(super) variant: Variant,
    /// `maxAge`: selections a waiter may be passed over before it is served first (vitessio/vitess
    /// `go/pools/smartconnpool/waitlist.go` `waitForConn`).
    pub(super) max_age: u32,
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
    // --- random streams (one per component; those that may never draw are lazy)
    /// Dial latencies (`connpool.dial`).
    pub(super) rng_dial: LazyRng,
    /// Setting round trips (`connpool.mysql`).
    pub(super) rng_mysql: LazyRng,
    /// Wake-up latencies (`connpool.scheduler`).
    pub(super) rng_sched: LazyRng,
    /// Timer lateness (`connpool.timers`).
    pub(super) rng_timers: LazyRng,
    // --- the pool
    /// The connections and the idle stacks.
    pub(crate) conns: Conns,
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
    /// Arrivals, request draws, stages, closed-loop clients.
    pub(crate) workload: Workload,
    /// Requests arrived and not finished.
    pub(super) in_flight: u64,
    // --- measurement
    /// Time up to which the waitlist depth has been accounted.
    pub(super) depth_last_t: SimTime,
    /// When the waitlist last became empty.
    pub(super) last_emptied: SimTime,
    // --- deferred query ends (embedded pools only, see `PoolWorld::settle`)
    /// Query ends are kept here instead of as `QueryDone` events while nothing waits.
    pub(super) defer_releases: bool,
    /// The deferred query ends: (end, waiter), popped in time order (ties FIFO).
    pub(super) deferred: EventQueue<u32>,
    /// A zero-delay wake runs at the end of the current event instead of as an event: a
    /// standalone pool whose wake-up latency is a fixed zero (`PoolWorld::run_now`).
    pub(super) inline_wakes: bool,
    /// Waiters woken with a zero delay in the current event, whose goroutines run at its
    /// end, in wake order (standalone pools; see `PoolWorld::run_now`).
    pub(super) runs_now: Vec<u32>,
    /// The parked waiters' ctx timers and the pending alarm events (`super::timers`).
    pub(super) timers: Timers,
    /// One `Deadline` event per parked waiter instead of [`Self::timers`]: the same run, more
    /// events, another digest (only for the check of that, `PoolWorld::set_deadline_events`).
    pub(super) deadline_events: bool,
    /// Everything counted.
    pub(crate) m: Metrics,
    /// Counts per time bucket, through the stages and the drain.
    pub(crate) timeline: Timeline,
}

impl Holder for PoolWorld {
    #[inline(always)]
    fn lock_parts(&mut self) -> (&mut WlMutex, &mut GoSched, &mut LazyRng) {
        (&mut self.mutex, &mut self.sched, &mut self.rng_sched)
    }

    /// `wl.mu`'s owner runs `op` (asked for the lock at `asked`): the wait and the depth are
    /// counted, the list work done; the hold is `base + per_node × nodes` plus the list
    /// work's extra (a positive hold counts as busy time up to the end of the stages).
    #[inline(always)]
    fn critical(&mut self, now: SimTime, op: MutexOp, asked: SimTime) -> (u64, AfterUnlock) {
        self.m.mutex_wait.add(now.0 - asked.0);
        self.note_depth(now);
        let (nodes, extra, after) = self.critical_section(now, op);
        self.note_depth_after(now);
        let hold = self
            .base_ns
            .saturating_add(self.per_node_ns.saturating_mul(nodes as u64))
            .saturating_add(extra);
        if hold > 0 {
            self.m.mutex_busy_ns += hold.min(self.workload.stages_end.0.saturating_sub(now.0));
        }
        (hold, after)
    }

    /// What the unlocker does next; `charge` (ns) is what its `Unlock` cost it, which delays
    /// the wakes it issues.
    fn after_unlock(
        &mut self,
        now: SimTime,
        after: AfterUnlock,
        charge: u64,
        s: &mut Scheduler<Event>,
    ) {
        match after {
            AfterUnlock::Enqueued(w) => {
                let wt = &mut self.waiters[w as usize];
                if wt.expired(now) {
                    // The goroutine runs on into `select`: ctx is ready, done is not.
                    wt.state = WaiterState::Removing;
                    self.lock(now, MutexOp::SelfRemove(w), s);
                } else {
                    wt.state = WaiterState::Parked;
                    let (cancel_at, gen) = (wt.cancel_at, wt.gen);
                    self.arm_timer(cancel_at, w, gen, s);
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
                // Fixed (PR #241's backport) hands off first and wakes evictees after, outside
                // the lock; OnlyA follows upstream v23, which notifies evictees inline under
                // the lock (their releases were charged to the hold), before the target.
                let sem = self.sched.semrelease_ns;
                let mut t = charge;
                let evictees_first = self.variant == Variant::OnlyA;
                if evictees_first {
                    self.notify_evictees(0, 0, s);
                }
                if target != NONE {
                    t = t.saturating_add(sem);
                    self.hand(target, conn, t, s);
                    if sem > 0 && !self.evicted.is_empty() {
                        // `notify(true)` yields the returner's P: it wakes the evictees only
                        // once it is scheduled again.
                        let resume = self.sched.ready(self.rng_sched.get());
                        self.sched.ran();
                        t = t.saturating_add(resume);
                    }
                } else {
                    self.conns.stack_push(conn);
                }
                if !evictees_first {
                    self.notify_evictees(t, sem, s);
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
}

impl PoolWorld {
    pub(super) fn close_conn(&mut self, c: u32) {
        self.conns.close(c);
        self.m.conns_closed += 1;
    }

    /// `ConnPool.Get` (vitessio/vitess `go/pools/smartconnpool/pool.go` `ConnPool.Get`): stacks,
    /// then a dial, then any settings stack, then wait.
    pub(super) fn get(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let setting = self.waiters[w as usize].setting as usize;
        let mut conn = None;
        if setting != 0 {
            conn = self.conns.setting_stacks[setting].pop();
        }
        if conn.is_none() {
            conn = self.conns.clean.pop();
        }
        if conn.is_none() && self.conns.active < self.conns.capacity {
            self.arm_deadline_timer(w, s);
            let c = self.conns.new_conn();
            let wt = &mut self.waiters[w as usize];
            wt.conn = c;
            wt.state = WaiterState::Dialing;
            let d = draw_ns(&self.dial, self.rng_dial.get());
            s.after(SimDuration(d), Event::DialDone { w });
            return;
        }
        if conn.is_none() {
            conn = self.conns.pop_any_settings_stack();
        }
        match conn {
            Some(c) => {
                // A setting change asks the ctx again when its round trips are over.
                let wt = &self.waiters[w as usize];
                if wt.past_deadline(now) || self.conns.setting(c) != wt.setting {
                    self.arm_deadline_timer(w, s);
                }
                self.acquired(now, w, c, false, s)
            }
            None => {
                self.arm_deadline_timer(w, s);
                self.waiters[w as usize].state = WaiterState::Enqueuing;
                self.lock(now, MutexOp::Enqueue(w), s);
            }
        }
    }

    /// `w` has connection `c` (`waited`: it came through the waitlist).
    pub(super) fn acquired(
        &mut self,
        now: SimTime,
        w: u32,
        c: u32,
        waited: bool,
        s: &mut Scheduler<Event>,
    ) {
        let wt = self.waiters[w as usize];
        let latency = now.0 - wt.arrival.0;
        self.m.acquisition.add(latency);
        self.m.queue_time_all_ns += latency as u128;
        self.m.queue_time_all_n += 1;
        if waited {
            self.m.wait_count += 1;
            self.m.wait_time_ns += latency as u128;
            if wt.past_deadline(now) {
                self.m.post_deadline_handoffs += 1;
                if let Some(k) = self.workload.stage_of(now) {
                    self.m.post_deadline_by_stage[k] += 1;
                }
            }
            if wt.expired(now) {
                self.m.post_cancel_handoffs += 1;
            }
        }
        if !wt.expired(now) {
            self.m.success_latency.add(latency);
        }
        self.m.acquired += 1;
        self.timeline_at(now).acquired += 1;
        let wt = &mut self.waiters[w as usize];
        wt.conn = c;
        wt.state = WaiterState::Busy;
        wt.late = wt.expired(now);
        let have = self.conns.setting(c);
        if have == wt.setting {
            self.start_query(now, w, s);
            return;
        }
        if wt.expired(now) {
            // ResetSetting/ApplySetting with an expired ctx fail at once; the connection is
            // closed and connReopen(expired ctx) fails: `active--` (vitessio/vitess
            // `go/pools/smartconnpool/pool.go` (the expired-waiter path, `docs/connpool.md`) step
            // 4).
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
            d = draw_ns(&self.rtt, self.rng_mysql.get()).saturating_add(d);
        }
        self.conns.all[c as usize].setting = want;
        s.after(SimDuration(d), Event::SettingDone { w });
    }

    pub(super) fn start_query(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let wt = self.waiters[w as usize];
        if self.query_checks_deadline && wt.expired(now) {
            // execOnce with an expired ctx fails before execution; the connection is recycled.
            self.m.wasted_handoffs += 1;
            self.put(now, wt.conn, s);
            self.finish(now, w, s);
            return;
        }
        if self.defer_releases && self.waitlist.is_empty() {
            // Nothing waits: the end is applied by `settle` (see there).
            self.deferred.push(SimTime(now.0 + wt.service_ns), w);
        } else {
            s.after(SimDuration(wt.service_ns), Event::QueryDone { w });
        }
    }

    /// `put` → `tryReturnConn` (vitessio/vitess `go/pools/smartconnpool/pool.go` `put` /
    /// `tryReturnConn`): lock-free `Len()` check, else the slow path.
    pub(super) fn put(&mut self, now: SimTime, c: u32, s: &mut Scheduler<Event>) {
        if self.waitlist.is_empty() {
            self.conns.stack_push(c);
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

    pub(super) fn new_request(&mut self, now: SimTime, client: u32, s: &mut Scheduler<Event>) {
        let req = self.workload.draw_request();
        // The deadline and setting reach the counters (late, timed out, setting changes)
        // without being event times of their own: a draw record per request.
        s.draw(&self.workload.request_record(&req));
        self.request_drawn(now, client, req, s);
    }

    /// A drawn (and recorded) request calls `Get` now.
    #[inline]
    pub(crate) fn request_drawn(
        &mut self,
        now: SimTime,
        client: u32,
        req: Request,
        s: &mut Scheduler<Event>,
    ) {
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
        if let Some(k) = self.workload.stage_of(now) {
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
        if client != NONE && now < self.workload.closed_end {
            let d = self.workload.think_ns();
            s.after(SimDuration(d), Event::ClientIssue { client });
        }
        if self.workload.arrivals_done && self.in_flight == 0 {
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

    /// Run `op`'s list work: the nodes it visits, the extra hold time (wakes done under the
    /// lock) and what it does after unlocking.
    #[inline(always)]
    fn critical_section(&mut self, now: SimTime, op: MutexOp) -> (u32, u64, AfterUnlock) {
        match op {
            MutexOp::Enqueue(w) => {
                self.waitlist.push_back(&mut self.waiters, w);
                (0, 0, AfterUnlock::Enqueued(w))
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
                (nodes, 0, AfterUnlock::Removed { w, found })
            }
            MutexOp::Return { conn, starving } => {
                let sel = self.waitlist.select(
                    &mut self.waiters,
                    self.variant,
                    self.max_age,
                    self.conns.setting(conn),
                    now,
                    &mut self.evicted,
                );
                self.m.evictions += self.evicted.len() as u64;
                if sel.target.is_some() {
                    self.m.selections += 1;
                    self.m.invariant_a_violations += sel.target_expired as u64;
                }
                // OnlyA wakes its evictees under the lock (upstream v23's inline notify):
                // one semaphore release each, charged to the hold.
                let inline = if self.variant == Variant::OnlyA {
                    self.sched
                        .semrelease_ns
                        .saturating_mul(self.evicted.len() as u64)
                } else {
                    0
                };
                (
                    sel.visited,
                    inline,
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
                (
                    self.waitlist.len() as u32,
                    0,
                    AfterUnlock::Scanned { count },
                )
            }
        }
    }

    /// Wake the evictees: the first readied at `from + step`, each next one `step` later (the
    /// waker pays one semaphore release each).
    pub(super) fn notify_evictees(&mut self, from: u64, step: u64, s: &mut Scheduler<Event>) {
        let mut t = from;
        for k in 0..self.evicted.len() {
            let e = self.evicted[k];
            t = t.saturating_add(step);
            self.hand(e, NONE, t, s);
        }
        self.evicted.clear();
    }

    /// `tryReturnAnyConn`, up to the starving count, stopping at the first failure.
    pub(super) fn starvation_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        if self.starving_left == 0 {
            return;
        }
        let Some(c) = self.conns.pop_any() else {
            self.starving_left = 0;
            return;
        };
        self.starving_left -= 1;
        if self.waitlist.is_empty() {
            self.conns.stack_push(c);
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

    pub(super) fn note_depth(&mut self, now: SimTime) {
        let t = now.min(self.workload.stages_end);
        if t > self.depth_last_t {
            let d = self.waitlist.len();
            if d >= self.m.depth_time.len() {
                self.m.depth_time.resize(d + 1, 0);
            }
            self.m.depth_time[d] += t.0 - self.depth_last_t.0;
            self.depth_last_t = t;
        }
    }

    pub(super) fn note_depth_after(&mut self, now: SimTime) {
        let d = self.waitlist.len();
        self.m.depth_max = self.m.depth_max.max(d);
        if d == 0 {
            self.last_emptied = now;
        }
        let b = self.timeline.at(now);
        b.depth_max = b.depth_max.max(d);
        b.depth_end = d;
        b.touched = true;
    }

    /// The timeline bucket of `now`.
    #[inline]
    pub(super) fn timeline_at(&mut self, now: SimTime) -> &mut Bucket {
        self.timeline.at(now)
    }
}
