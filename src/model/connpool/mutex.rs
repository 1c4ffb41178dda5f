//! `wl.mu` as one FIFO server: an operation asks for the lock; operations run one at a time
//! in request order (Go's `sync.Mutex` enters starvation mode, i.e. FIFO handoff, once a
//! waiter has waited 1 ms, which is the regime that matters here). An operation's list work
//! happens when it acquires the lock; it holds the lock for `base + per_node × nodes
//! visited`; what it does after unlocking (wake the target, stack the connection) happens at
//! the release. With zero cost the release is immediate and no event is scheduled. Also the
//! 100 ms starvation worker, and the waitlist-depth accounting done under the lock.

use super::event::Event;
use super::params::Variant;
use super::waitlist::{WaiterState, NONE};
use super::world::PoolWorld;
use crate::sim::{Scheduler, SimDuration, SimTime};
use std::collections::VecDeque;

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
pub(super) enum AfterUnlock {
    /// Waiter `.0` is linked at the back.
    Enqueued(u32),
    /// Waiter `w` looked for itself, and was `found` (else a returner owns it).
    Removed {
        /// The waiter.
        w: u32,
        /// It was still on the list.
        found: bool,
    },
    /// A returner selected `target` (or `NONE`: stack the connection) for `conn`.
    Returned {
        /// The connection returned.
        conn: u32,
        /// The waiter handed it, or `NONE`.
        target: u32,
        /// Issued by the starvation worker.
        starving: bool,
    },
    /// The starvation worker's scan counted `count` starving waiters.
    Scanned {
        /// Waiters starving.
        count: usize,
    },
}

/// `wl.mu` as one FIFO server.
#[derive(Debug, Default)]
pub struct WlMutex {
    /// Held (or being driven): new requests queue.
    pub(super) held: bool,
    /// Waiting operations and when each asked.
    pub(super) queue: VecDeque<(MutexOp, SimTime)>,
    /// The holder's after-unlock action.
    pub(super) after: Option<AfterUnlock>,
}

impl PoolWorld {
    pub(super) fn lock(&mut self, now: SimTime, op: MutexOp, s: &mut Scheduler<Event>) {
        self.mutex.queue.push_back((op, now));
        if !self.mutex.held {
            self.drive_mutex(now, s);
        }
    }

    /// Run queued operations until one holds the lock for a positive time (or none is left).
    pub(super) fn drive_mutex(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
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

    pub(super) fn critical_section(&mut self, now: SimTime, op: MutexOp) -> (u32, AfterUnlock) {
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

    pub(super) fn after_unlock(&mut self, now: SimTime, after: AfterUnlock, s: &mut Scheduler<Event>) {
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
                // Fixed (PR #241's backport) hands off first and wakes evictees after;
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

    pub(super) fn notify_evictees(&mut self, s: &mut Scheduler<Event>) {
        for k in 0..self.evicted.len() {
            let e = self.evicted[k];
            self.hand(e, NONE, s);
        }
        self.evicted.clear();
    }

    /// `tryReturnAnyConn`, up to the starving count, stopping at the first failure.
    pub(super) fn starvation_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
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

    pub(super) fn note_depth(&mut self, now: SimTime) {
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

    pub(super) fn note_depth_after(&mut self) {
        self.m.depth_max = self.m.depth_max.max(self.waitlist.len());
    }
}
