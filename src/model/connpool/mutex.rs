//! `wl.mu` in the pool: either one FIFO server ([`super::params::MutexKind::Fifo`], operations run one at a
//! time in request order, the next owner running at once) or Go's `sync.Mutex`
//! ([`super::params::MutexKind::GoSync`], the [`super::gosync::GoMutex`] state machine: barging, spinning,
//! LIFO requeue, starvation mode after 1 ms). An operation's list work happens when it
//! acquires the lock; it holds the lock for `base + per_node × nodes visited` (plus the
//! semaphore releases a variant does under the lock); what it does after unlocking (wake the
//! target, stack the connection) happens at the release, its wakes offset by what the
//! unlock charged it. With zero cost the release is immediate and no event is scheduled.
//!
//! This file is the lock and its driver; the list work and the after-unlock code are its
//! holder's, the pool world's (`Holder`: static dispatch, inlined).

use super::event::Event;
use super::gosync::{GoMutex, GoSched, Grant, MutexCtx, MutexEvent};
use crate::sim::rng::LazyRng;
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

/// What `wl.mu` runs for its owners: the holder's list work and after-unlock code. The
/// provided methods are the lock's driver.
pub(super) trait Holder: Sized {
    /// `wl.mu`, the Go scheduler and the stream its wake-ups and handoffs are drawn from,
    /// borrowed apart.
    fn lock_parts(&mut self) -> (&mut WlMutex, &mut GoSched, &mut LazyRng);

    /// Run operation `op` (asked for the lock at `asked`) as the lock's owner: its critical
    /// section. Returns its hold (ns) and what it does after unlocking.
    fn critical(&mut self, now: SimTime, op: MutexOp, asked: SimTime) -> (u64, AfterUnlock);

    /// What the unlocker does next; `charge` (ns) is what its `Unlock` cost it, which delays
    /// the wakes it issues.
    fn after_unlock(
        &mut self,
        now: SimTime,
        after: AfterUnlock,
        charge: u64,
        s: &mut Scheduler<Event>,
    );

    /// `op` asks for `wl.mu`.
    fn lock(&mut self, now: SimTime, op: MutexOp, s: &mut Scheduler<Event>) {
        let (mutex, sched, rng) = self.lock_parts();
        // The fields are borrowed apart (no `take()`: moving the `GoMutex` out and back in
        // is a memcpy of the whole struct on every lock).
        let Some(go) = mutex.go.as_mut() else {
            mutex.queue.push_back((op, now));
            if !mutex.held {
                drive_mutex(self, now, s);
            }
            return;
        };
        let g = go.lock(
            now,
            op,
            &mut MutexCtx {
                s,
                wrap,
                sched,
                rng: rng.get(),
            },
        );
        if let Some(g) = g {
            go_granted(self, now, g, s);
        }
    }

    /// A `GoSync` mutex event.
    fn mutex_event(&mut self, now: SimTime, ev: MutexEvent, s: &mut Scheduler<Event>) {
        let (mutex, sched, rng) = self.lock_parts();
        let go = mutex.go.as_mut().expect("GoSync");
        let g = go.handle(
            now,
            ev,
            &mut MutexCtx {
                s,
                wrap,
                sched,
                rng: rng.get(),
            },
        );
        if let Some(g) = g {
            go_granted(self, now, g, s);
        }
    }

    /// The holder releases `wl.mu` (both kinds).
    fn mutex_release(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let mutex = self.lock_parts().0;
        let after = mutex.after.take().expect("a holder");
        if mutex.go.is_none() {
            self.after_unlock(now, after, 0, s);
            drive_mutex(self, now, s);
            return;
        }
        go_unlock_then(self, now, after, s);
        drain_pending(self, now, s);
    }
}

/// `Unlock`, then the holder's after-unlock code, its wakes offset by the unlock's charge.
fn go_unlock_then<H: Holder>(
    h: &mut H,
    now: SimTime,
    after: AfterUnlock,
    s: &mut Scheduler<Event>,
) {
    let (mutex, sched, rng) = h.lock_parts();
    let go = mutex.go.as_mut().expect("GoSync");
    let charge = go.unlock(
        now,
        &mut MutexCtx {
            s,
            wrap,
            sched,
            rng: rng.get(),
        },
    );
    let was = mutex.held;
    mutex.held = true;
    h.after_unlock(now, after, charge, s);
    h.lock_parts().0.held = was;
}

/// An operation acquired the GoSync mutex: run it (and, while holds are zero, whatever
/// acquires next).
fn go_granted<H: Holder>(h: &mut H, now: SimTime, g: Grant<MutexOp>, s: &mut Scheduler<Event>) {
    let mutex = h.lock_parts().0;
    if mutex.held {
        debug_assert!(mutex.pending.is_none());
        mutex.pending = Some(g);
        return;
    }
    mutex.pending = Some(g);
    drain_pending(h, now, s);
}

/// Run operation `op` (asked for the lock at `asked`) as the lock's owner: its critical
/// section, then its hold. With a positive hold the release is scheduled and `None` is
/// returned (the owner keeps the lock); a zero hold returns what to do after unlocking.
/// Inlined with [`Holder::critical`] (and the pool's critical section in it): returned
/// through memory, the `Option<AfterUnlock>` was written in parts and read back whole, a
/// load stalled on its stores (about 3 % of a pool run's time; `#[inline]` alone did not
/// inline it).
#[inline(always)]
fn hold_or_go_on<H: Holder>(
    h: &mut H,
    now: SimTime,
    op: MutexOp,
    asked: SimTime,
    s: &mut Scheduler<Event>,
) -> Option<AfterUnlock> {
    let (hold, after) = h.critical(now, op, asked);
    if hold > 0 {
        h.lock_parts().0.after = Some(after);
        s.after(SimDuration(hold), Event::MutexRelease);
        return None;
    }
    Some(after)
}

fn drain_pending<H: Holder>(h: &mut H, now: SimTime, s: &mut Scheduler<Event>) {
    while let Some(g) = h.lock_parts().0.pending.take() {
        let Some(after) = hold_or_go_on(h, now, g.op, g.asked, s) else {
            return;
        };
        go_unlock_then(h, now, after, s);
    }
}

/// Run queued operations until one holds the lock for a positive time (or none is left).
fn drive_mutex<H: Holder>(h: &mut H, now: SimTime, s: &mut Scheduler<Event>) {
    h.lock_parts().0.held = true;
    while let Some((op, asked)) = h.lock_parts().0.queue.pop_front() {
        let Some(after) = hold_or_go_on(h, now, op, asked, s) else {
            return;
        };
        h.after_unlock(now, after, 0, s);
    }
    h.lock_parts().0.held = false;
}
