//! The pool: connections, the clean and per-setting idle stacks, `Get`'s fast path (a stack,
//! a dial, any settings stack) and `put` (vitessio/vitess `go/pools/smartconnpool/pool.go`
//! `ConnPool.Get`, vitessio/vitess `go/pools/smartconnpool/pool.go` `put` / `tryReturnConn`,
//! vitessio/vitess `go/pools/smartconnpool/pool.go` (the expired-waiter path, `docs/connpool.md`)).

use super::event::Event;
use super::mutex::MutexOp;
use super::waitlist::WaiterState;
use super::workload::draw_ns;
use super::world::{Conn, PoolWorld};
use crate::sim::{Scheduler, SimDuration, SimTime};

impl PoolWorld {
    pub(super) fn new_conn(&mut self) -> u32 {
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

    pub(super) fn close_conn(&mut self, c: u32) {
        self.active -= 1;
        self.free_conns.push(c);
        self.m.conns_closed += 1;
    }

    /// `ConnPool.Get` (vitessio/vitess `go/pools/smartconnpool/pool.go` `ConnPool.Get`): stacks,
    /// then a dial, then any settings stack, then wait.
    pub(super) fn get(&mut self, now: SimTime, w: u32, s: &mut Scheduler<Event>) {
        let setting = self.waiters[w as usize].setting as usize;
        let mut conn = None;
        if setting != 0 {
            conn = self.setting_stacks[setting].pop();
        }
        if conn.is_none() {
            conn = self.clean.pop();
        }
        if conn.is_none() && self.active < self.capacity {
            self.arm_deadline_timer(w, s);
            let c = self.new_conn();
            let wt = &mut self.waiters[w as usize];
            wt.conn = c;
            wt.state = WaiterState::Dialing;
            let d = draw_ns(&self.dial, self.rng_dial.get());
            s.after(SimDuration(d), Event::DialDone { w });
            return;
        }
        if conn.is_none() {
            conn = self.pop_any_settings_stack();
        }
        match conn {
            Some(c) => {
                // A setting change asks the ctx again when its round trips are over.
                let wt = &self.waiters[w as usize];
                if wt.past_deadline(now) || self.conns[c as usize].setting != wt.setting {
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

    pub(super) fn pop_any_settings_stack(&mut self) -> Option<u32> {
        let n = self.setting_stacks.len();
        for k in 0..n.saturating_sub(1) {
            let i = 1 + (self.fresh_settings - 1 + k) % (n - 1);
            if let Some(c) = self.setting_stacks[i].pop() {
                return Some(c);
            }
        }
        None
    }

    pub(super) fn pop_any(&mut self) -> Option<u32> {
        self.clean.pop().or_else(|| self.pop_any_settings_stack())
    }

    #[inline]
    pub(super) fn stack_push(&mut self, c: u32) {
        let st = self.conns[c as usize].setting as usize;
        if st == 0 {
            self.clean.push(c);
        } else {
            self.setting_stacks[st].push(c);
            self.fresh_settings = st;
        }
    }

    /// `w` has connection `c` (`waited`: it came through the waitlist).
    pub(super) fn acquired(&mut self, now: SimTime, w: u32, c: u32, waited: bool, s: &mut Scheduler<Event>) {
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
                if let Some(k) = self.stage_of(now) {
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
        let have = self.conns[c as usize].setting;
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
        self.conns[c as usize].setting = want;
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
}
