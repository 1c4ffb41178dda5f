//! The ctx timers of the parked waiters, kept by the pool itself.
//!
//! A waiter that parks on the waitlist arms its ctx timer (`waitForConn`'s `select` on
//! `ctx.Done()`, vitessio/vitess `go/pools/smartconnpool/waitlist.go`). Most parked waiters are
//! served before their deadline, and their timer then does nothing: as one kernel event per
//! waiter, each of those would still pop, be recorded in the trace and be ignored. The pool
//! keeps the timers here instead, in a time-ordered heap (ties in arming order), and keeps
//! one kernel event, the pool's `DeadlineAlarm`, armed at the earliest one that
//! may still fire. A timer whose waiter has moved on (woken, served, its slot reused: the
//! generation check) is dropped from the heap when it reaches the top, at no event's cost.
//!
//! Exactness: every timer that fires fires at its own time, and timers due at the same
//! instant fire in the order they were armed, as their own events would have. The alarm
//! that fires them was scheduled when the earliest of them was armed or when the previous
//! alarm fired; an alarm becomes useless only when the waiter it was armed for is served
//! first (it then fires nothing and arms the next). What can differ from one event per
//! timer is only the order against *other* events due at exactly the same nanosecond (a tie
//! of two nanosecond-resolution times, the same kind of tie `PoolWorld::settle` documents):
//! there all the timers due in that instant fire in one alarm, in arming order, where each
//! event would have taken its own place in scheduling order among the other events of that
//! instant.

use crate::sim::SimTime;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// One armed timer: `time << 64 | arming sequence` (unique: a total order, ties in arming
/// order) and `waiter << 32 | generation`.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    wg: u64,
}

impl Entry {
    #[inline]
    fn time(&self) -> SimTime {
        SimTime((self.key >> 64) as u64)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed: the max-heap `BinaryHeap` pops the earliest first.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// The parked waiters' timers and the times of the pending alarm events.
///
/// A timer is first kept in `fresh`, unsorted (its waiter is often served before any alarm
/// is due, and it is then dropped at the next alarm for the cost of one look at the waiter);
/// an alarm moves the fresh timers still live into the heap. Every fresh timer is at or
/// after the earliest pending alarm (a timer earlier than every pending alarm schedules its
/// own), so none is due before the next alarm looks at it.
#[derive(Debug, Default)]
pub(super) struct Timers {
    /// Timers armed since the last alarm.
    fresh: Vec<Entry>,
    /// Timers live at an alarm, earliest first.
    heap: BinaryHeap<Entry>,
    /// The next arming sequence number.
    seq: u64,
    /// Times of the alarm events scheduled and not yet fired, earliest first.
    alarms: BinaryHeap<Reverse<u64>>,
    /// The earliest of `alarms` (`u64::MAX`: none).
    next_alarm: u64,
}

impl Timers {
    /// No timer, no alarm.
    pub(super) fn new() -> Self {
        Timers {
            next_alarm: u64::MAX,
            ..Timers::default()
        }
    }

    /// Arm waiter `w`'s (generation `gen`) timer at `t`. True when an alarm event must be
    /// scheduled at `t` (none is pending at or before it).
    #[inline]
    pub(super) fn add(&mut self, t: SimTime, w: u32, gen: u32) -> bool {
        let key = ((t.0 as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.fresh.push(Entry {
            key,
            wg: ((w as u64) << 32) | gen as u64,
        });
        self.arm(t)
    }

    /// An alarm is wanted at `t`: true when one must be scheduled there (none is pending at
    /// or before `t`; a pending earlier one re-arms when it fires).
    #[inline]
    pub(super) fn arm(&mut self, t: SimTime) -> bool {
        if t.0 < self.next_alarm {
            self.alarms.push(Reverse(t.0));
            self.next_alarm = t.0;
            true
        } else {
            false
        }
    }

    /// The earliest pending alarm fires now: the fresh timers whose waiter is still
    /// `live(w, gen)` join the heap, the others are dropped.
    #[inline]
    pub(super) fn fired(&mut self, now: SimTime, mut live: impl FnMut(u32, u32) -> bool) {
        let a = self.alarms.pop();
        debug_assert_eq!(a.map(|a| a.0), Some(now.0), "alarms fire in time order");
        self.next_alarm = self.alarms.peek().map_or(u64::MAX, |a| a.0);
        for e in self.fresh.drain(..) {
            if live((e.wg >> 32) as u32, e.wg as u32) {
                self.heap.push(e);
            }
        }
    }

    /// The earliest timer of the heap: its time, waiter and generation.
    #[inline]
    pub(super) fn peek(&self) -> Option<(SimTime, u32, u32)> {
        self.heap
            .peek()
            .map(|e| (e.time(), (e.wg >> 32) as u32, e.wg as u32))
    }

    /// Drop the earliest timer of the heap.
    #[inline]
    pub(super) fn pop(&mut self) {
        self.heap.pop();
    }

    /// Timers kept (some may be stale).
    pub(super) fn len(&self) -> usize {
        self.heap.len() + self.fresh.len()
    }
}
