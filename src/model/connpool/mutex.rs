//! `wl.mu` in the pool: either one FIFO server ([`super::params::MutexKind::Fifo`], operations run one at a
//! time in request order, the next owner running at once) or Go's `sync.Mutex`
//! ([`super::params::MutexKind::GoSync`], the [`super::gosync::GoMutex`] state machine: barging, spinning,
//! LIFO requeue, starvation mode after 1 ms). An operation's list work happens when it
//! acquires the lock; it holds the lock for `base + per_node × nodes visited` (plus the
//! semaphore releases a variant does under the lock); what it does after unlocking (wake the
//! target, stack the connection) happens at the release, its wakes offset by what the
//! unlock charged it. With zero cost the release is immediate and no event is scheduled.
//! Also the 100 ms starvation worker, and the waitlist-depth accounting done under the lock.

use super::event::Event;
use super::gosync::{GoMutex, Grant, MutexCtx, MutexEvent};
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

/// `wl.mu`.
#[derive(Debug, Default)]
pub struct WlMutex {
    /// Go's `sync.Mutex` (`None`: the FIFO server).
    pub(super) go: Option<GoMutex<MutexOp>>,
    /// Held (or being driven): new requests queue (FIFO); a grant is running (GoSync).
    pub(super) held: bool,
    /// Waiting operations and when each asked (FIFO).
    pub(super) queue: VecDeque<(MutexOp, SimTime)>,
    /// An operation that acquired while another's after-unlock code ran (GoSync).
    pub(super) pending: Option<Grant<MutexOp>>,
    /// The holder's after-unlock action.
    pub(super) after: Option<AfterUnlock>,
}

/// The mutex events inside the pool's event enum.
fn wrap(ev: MutexEvent) -> Event {
    Event::Mutex(ev)
}

impl PoolWorld {
    pub(super) fn lock(&mut self, now: SimTime, op: MutexOp, s: &mut Scheduler<Event>) {
        if self.mutex.go.is_none() {
            self.mutex.queue.push_back((op, now));
            if !self.mutex.held {
                self.drive_mutex(now, s);
            }
            return;
        }
        // The fields are borrowed apart (no `take()`: moving the `GoMutex` out and back in
        // is a memcpy of the whole struct on every lock).
        let go = self.mutex.go.as_mut().expect("GoSync");
        let g = go.lock(now, op, &mut MutexCtx {
            s,
            wrap,
            sched: &mut self.sched,
            rng: self.rng_sched.get(),
        });
        if let Some(g) = g {
            self.go_granted(now, g, s);
        }
    }

    /// A `GoSync` mutex event.
    pub(super) fn mutex_event(&mut self, now: SimTime, ev: MutexEvent, s: &mut Scheduler<Event>) {
        let go = self.mutex.go.as_mut().expect("GoSync");
        let g = go.handle(now, ev, &mut MutexCtx {
            s,
            wrap,
            sched: &mut self.sched,
            rng: self.rng_sched.get(),
        });
        if let Some(g) = g {
            self.go_granted(now, g, s);
        }
    }

    /// The holder releases `wl.mu` (both kinds).
    pub(super) fn mutex_release(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let after = self.mutex.after.take().expect("a holder");
        if self.mutex.go.is_none() {
            self.after_unlock(now, after, 0, s);
            self.drive_mutex(now, s);
            return;
        }
        self.go_unlock_then(now, after, s);
        self.drain_pending(now, s);
    }

    /// `Unlock`, then the holder's after-unlock code, its wakes offset by the unlock's charge.
    fn go_unlock_then(&mut self, now: SimTime, after: AfterUnlock, s: &mut Scheduler<Event>) {
        let go = self.mutex.go.as_mut().expect("GoSync");
        let charge = go.unlock(now, &mut MutexCtx {
            s,
            wrap,
            sched: &mut self.sched,
            rng: self.rng_sched.get(),
        });
        let was = self.mutex.held;
        self.mutex.held = true;
        self.after_unlock(now, after, charge, s);
        self.mutex.held = was;
    }

    /// An operation acquired the GoSync mutex: run it (and, while holds are zero, whatever
    /// acquires next).
    fn go_granted(&mut self, now: SimTime, g: Grant<MutexOp>, s: &mut Scheduler<Event>) {
        if self.mutex.held {
            debug_assert!(self.mutex.pending.is_none());
            self.mutex.pending = Some(g);
            return;
        }
        self.mutex.pending = Some(g);
        self.drain_pending(now, s);
    }

    /// Run operation `op` (asked for the lock at `asked`) as the lock's owner: its critical
    /// section, then its hold. With a positive hold the release is scheduled and `None` is
    /// returned (the owner keeps the lock); a zero hold returns what to do after unlocking.
    /// Inlined with [`Self::critical_section`]: returned through memory, the
    /// `Option<AfterUnlock>` was written in parts and read back whole, a load stalled on its
    /// stores (about 3 % of a pool run's time; `#[inline]` alone did not inline it).
    #[inline(always)]
    fn hold_or_go_on(
        &mut self,
        now: SimTime,
        op: MutexOp,
        asked: SimTime,
        s: &mut Scheduler<Event>,
    ) -> Option<AfterUnlock> {
        self.m.mutex_wait.add(now.0 - asked.0);
        self.note_depth(now);
        let (nodes, extra, after) = self.critical_section(now, op);
        self.note_depth_after(now);
        let hold = self
            .base_ns
            .saturating_add(self.per_node_ns.saturating_mul(nodes as u64))
            .saturating_add(extra);
        if hold > 0 {
            self.m.mutex_busy_ns += hold.min(self.stages_end.0.saturating_sub(now.0));
            self.mutex.after = Some(after);
            s.after(SimDuration(hold), Event::MutexRelease);
            return None;
        }
        Some(after)
    }

    fn drain_pending(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        while let Some(g) = self.mutex.pending.take() {
            let Some(after) = self.hold_or_go_on(now, g.op, g.asked, s) else {
                return;
            };
            self.go_unlock_then(now, after, s);
        }
    }

    /// Run queued operations until one holds the lock for a positive time (or none is left).
    pub(super) fn drive_mutex(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        self.mutex.held = true;
        while let Some((op, asked)) = self.mutex.queue.pop_front() {
            let Some(after) = self.hold_or_go_on(now, op, asked, s) else {
                return;
            };
            self.after_unlock(now, after, 0, s);
        }
        self.mutex.held = false;
    }

    /// Run `op`'s list work: the nodes it visits, the extra hold time (wakes done under the
    /// lock) and what it does after unlocking.
    #[inline(always)]
    pub(super) fn critical_section(&mut self, now: SimTime, op: MutexOp) -> (u32, u64, AfterUnlock) {
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
                    self.conns[conn as usize].setting,
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
                    self.sched.semrelease_ns.saturating_mul(self.evicted.len() as u64)
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
                (self.waitlist.len() as u32, 0, AfterUnlock::Scanned { count })
            }
        }
    }

    /// What the unlocker does next; `charge` (ns) is what its `Unlock` cost it, which delays
    /// the wakes it issues.
    pub(super) fn after_unlock(
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
                    self.stack_push(conn);
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
    pub(super) fn timeline_at(&mut self, now: SimTime) -> &mut super::metrics::Bucket {
        self.timeline.at(now)
    }
}
