//! The waitlist (`waitlist.go`, vitessio/vitess `go/list/list.go`,
//! `go/pools/smartconnpool/waitlist.go`, vitessio/vitess `go/pools/smartconnpool/waitlist.go`
//! `waitForConn`, vitessio/vitess `go/pools/smartconnpool/pool.go` `put` / `tryReturnConn`,
//! vitessio/vitess PR #20308) and the `Waiter`s it links.
//!
//! The real list is a doubly linked ring (`go/list`). Here it is a FIFO vector of waiter ids
//! with tombstones for removed entries (a removal anywhere is O(1)), compacted when tombstones
//! pile up. What a critical section would cost in the real code is counted separately as
//! "nodes visited"; the simulator's own cost stays low. The position of a waiter (what the
//! unfixed self-removal scan walks) comes from a Fenwick tree of live flags, kept only for the
//! variants that scan, so a timeout storm at depth n costs the simulator O(n log n), not O(n²).

use super::params::Variant;
use crate::sim::SimTime;

/// No waiter / no connection.
pub const NONE: u32 = u32::MAX;

/// One `Get` call from arrival to outcome; a *waiter* while it is linked on the waitlist.
#[derive(Clone, Copy, Debug)]
pub struct Waiter {
    /// Incremented each time the slot is reused (stale timers compare it).
    pub gen: u32,
    /// Requested setting: 0 = none (nil), 1.. = s1.. (pointer identity in the real code).
    pub setting: u8,
    /// Where the call is (see [`WaiterState`]).
    pub state: WaiterState,
    /// Times skipped by a returner's scan (`age`, vitessio/vitess `go/pools/smartconnpool/pool.go`
    /// `put` / `tryReturnConn`).
    pub age: u32,
    /// The `done` side of the handoff is ready: a returner selected (conn) or evicted (NONE) it.
    pub handed: bool,
    /// It was woken by its ctx expiring rather than by `done`: a goroutine parked in `select`
    /// is woken with the case that fired first, and runs that branch.
    pub woken_by_ctx: bool,
    /// It acquired its connection at or after its deadline.
    pub late: bool,
    /// When the request arrived (`Get` called).
    pub arrival: SimTime,
    /// Its acquisition deadline by the clock (arrival + timeout).
    pub deadline: SimTime,
    /// When its ctx is cancelled: the deadline plus the timer's lateness (`ctx.Err() != nil`
    /// and `ctx.Done()` closed from this instant on).
    pub cancel_at: SimTime,
    /// How long its query holds the connection.
    pub service_ns: u64,
    /// Its entry in the waitlist (absolute sequence number), while linked.
    pub seq: u64,
    /// The connection it holds or was handed (`NONE`: none, or evicted).
    pub conn: u32,
    /// The closed-loop client that issued it (`NONE` for open loop).
    pub client: u32,
}

/// Where a `Get` call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaiterState {
    /// Slot unused.
    Free,
    /// Dialling a new connection (`getNew`).
    Dialing,
    /// Queued on `wl.mu` to push itself (`waitForConn` step 2).
    Enqueuing,
    /// Linked and parked in `select`; nothing has woken it yet.
    Parked,
    /// Woken (handoff or ctx.Done); its goroutine runs after the wake-up latency.
    Waking,
    /// Its ctx branch runs: queued on `wl.mu` to remove itself.
    Removing,
    /// Holding a connection: setting round trips or the query.
    Busy,
}

impl Waiter {
    /// An unused slot.
    pub const EMPTY: Waiter = Waiter {
        gen: 0,
        setting: 0,
        state: WaiterState::Free,
        age: 0,
        handed: false,
        woken_by_ctx: false,
        late: false,
        arrival: SimTime::ZERO,
        deadline: SimTime::ZERO,
        cancel_at: SimTime::ZERO,
        service_ns: 0,
        seq: 0,
        conn: NONE,
        client: NONE,
    };
    /// `ctx.Err() != nil` at `now` (the timer has fired and cancelled the ctx).
    #[inline]
    pub(crate) fn expired(&self, now: SimTime) -> bool {
        now >= self.cancel_at
    }
    /// The deadline has passed by the clock at `now` (whether or not the timer has fired).
    #[inline]
    pub(crate) fn past_deadline(&self, now: SimTime) -> bool {
        now >= self.deadline
    }
}

/// What one `tryReturnConnSlow` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The waiter handed the connection (removed from the list), if any.
    pub target: Option<u32>,
    /// List nodes the walk visited (each costs `per_node` under `wl.mu`).
    pub visited: u32,
    /// The target was already expired when selected (an invariant-A violation).
    pub target_expired: bool,
}

/// Fenwick tree of live flags by waitlist index.
#[derive(Clone, Debug, Default)]
struct Fenwick(Vec<i32>);

impl Fenwick {
    fn with_flags(n: usize, live: impl Iterator<Item = bool>) -> Self {
        let mut t = vec![0i32; n + 1];
        for (i, l) in live.enumerate() {
            t[i + 1] = l as i32;
        }
        for i in 1..=n {
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                t[j] += t[i];
            }
        }
        Fenwick(t)
    }
    fn len(&self) -> usize {
        self.0.len().saturating_sub(1)
    }
    fn add(&mut self, i: usize, d: i32) {
        let mut i = i + 1;
        while i < self.0.len() {
            self.0[i] += d;
            i += i & i.wrapping_neg();
        }
    }
    /// Sum of flags at indices `< i`.
    fn prefix(&self, i: usize) -> i32 {
        let mut i = i;
        let mut s = 0;
        while i > 0 {
            s += self.0[i];
            i &= i - 1;
        }
        s
    }
}

/// The FIFO waitlist guarded by `wl.mu`.
#[derive(Clone, Debug)]
pub struct Waitlist {
    /// Waiter ids in FIFO order; `NONE` where one was removed.
    slots: Vec<u32>,
    /// First index that may be live.
    head: usize,
    /// Sequence number of `slots[0]`.
    base: u64,
    /// Linked waiters (`list.Len()`).
    live: usize,
    /// Live flags for positions, when the variant scans for itself.
    positions: Option<Fenwick>,
}

impl Waitlist {
    /// An empty list; `track_positions` for the variants whose self-removal scans.
    pub fn new(track_positions: bool) -> Self {
        Waitlist {
            slots: Vec::with_capacity(256),
            head: 0,
            base: 0,
            live: 0,
            positions: track_positions.then(|| Fenwick::with_flags(256, std::iter::empty())),
        }
    }

    /// Linked waiters (`list.Len()`, an atomic read in the real code).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.live
    }
    /// True when no waiter is linked.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Is waiter `w` linked?
    #[inline]
    pub(crate) fn contains(&self, waiters: &[Waiter], w: u32) -> bool {
        let s = waiters[w as usize].seq;
        s >= self.base
            && ((s - self.base) as usize) < self.slots.len()
            && self.slots[(s - self.base) as usize] == w
    }

    /// `PushBackValue`: link `w` at the back. O(1).
    pub fn push_back(&mut self, waiters: &mut [Waiter], w: u32) {
        let i = self.slots.len();
        self.slots.push(w);
        waiters[w as usize].seq = self.base + i as u64;
        self.live += 1;
        if let Some(f) = &mut self.positions {
            if i >= f.len() {
                self.rebuild_positions();
            } else {
                f.add(i, 1);
            }
        }
    }

    /// Waiters before `w` in the list (0 at the front). `w` must be linked.
    pub(crate) fn position(&self, waiters: &[Waiter], w: u32) -> usize {
        let i = (waiters[w as usize].seq - self.base) as usize;
        match &self.positions {
            Some(f) => (f.prefix(i) - f.prefix(self.head)) as usize,
            None => self.slots[self.head..i]
                .iter()
                .filter(|x| **x != NONE)
                .count(),
        }
    }

    /// Unlink `w` (which must be linked). O(1) here; the caller charges the real cost.
    pub(crate) fn remove(&mut self, waiters: &mut [Waiter], w: u32) {
        let i = (waiters[w as usize].seq - self.base) as usize;
        debug_assert_eq!(self.slots[i], w);
        self.slots[i] = NONE;
        self.live -= 1;
        if let Some(f) = &mut self.positions {
            f.add(i, -1);
        }
        while self.head < self.slots.len() && self.slots[self.head] == NONE {
            self.head += 1;
        }
        if self.live == 0 {
            self.base += self.slots.len() as u64;
            self.slots.clear();
            self.head = 0;
            if let Some(f) = &mut self.positions {
                f.0.iter_mut().for_each(|x| *x = 0);
            }
        } else if self.slots.len() - self.head > 4 * self.live + 1024 || self.head > 1 << 16 {
            self.compact(waiters);
        }
    }

    /// Drop tombstones and renumber the linked waiters (order unchanged).
    fn compact(&mut self, waiters: &mut [Waiter]) {
        self.base += self.slots.len() as u64;
        let old = std::mem::take(&mut self.slots);
        self.slots.reserve(old.len().max(256));
        for w in old.into_iter().filter(|x| *x != NONE) {
            waiters[w as usize].seq = self.base + self.slots.len() as u64;
            self.slots.push(w);
        }
        self.head = 0;
        if self.positions.is_some() {
            self.rebuild_positions();
        }
    }

    fn rebuild_positions(&mut self) {
        let n = (self.slots.len() * 2).max(256);
        self.positions = Some(Fenwick::with_flags(
            n,
            self.slots.iter().map(|x| *x != NONE),
        ));
    }

    /// Linked waiters, front to back.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots[self.head..]
            .iter()
            .copied()
            .filter(|x| *x != NONE)
    }

    /// `tryReturnConnSlow` for a connection with setting `conn_setting` at `now`: choose the
    /// waiter to hand it to, ageing the waiters skipped, and unlink the target. Variants with
    /// invariant A unlink every expired waiter examined and push it on `evicted` (they are
    /// woken with nothing); their fallback is the front-most live waiter, and with none the
    /// connection goes back to a stack (`target: None`). Unfixed and OnlyB fall back to the
    /// (aged) front waiter and never look at deadlines (vitessio/vitess
    /// `go/pools/smartconnpool/pool.go` `put` / `tryReturnConn`, vitessio/vitess PR #20308).
    pub fn select(
        &mut self,
        waiters: &mut [Waiter],
        variant: Variant,
        max_age: u32,
        conn_setting: u8,
        now: SimTime,
        evicted: &mut Vec<u32>,
    ) -> Selection {
        evicted.clear();
        let evicts = variant.evicts_expired();
        let mut target = NONE;
        let mut fallback = NONE;
        let mut visited = 0u32;
        let mut i = self.head;
        while i < self.slots.len() {
            let w = self.slots[i];
            i += 1;
            if w == NONE {
                continue;
            }
            visited += 1;
            let wt = &mut waiters[w as usize];
            if evicts && wt.expired(now) {
                evicted.push(w);
                continue; // unlinked below, after the walk (`next` captured first)
            }
            if fallback == NONE {
                fallback = w;
            }
            if wt.age > max_age || wt.setting == conn_setting {
                target = w;
                break;
            }
            wt.age += 1;
        }
        if target == NONE {
            target = fallback;
        }
        for &e in evicted.iter() {
            self.remove(waiters, e);
        }
        if target == NONE {
            return Selection {
                target: None,
                visited,
                target_expired: false,
            };
        }
        let target_expired = waiters[target as usize].expired(now);
        self.remove(waiters, target);
        Selection {
            target: Some(target),
            visited,
            target_expired,
        }
    }

    /// `maybeStarvingCount`: linked waiters with age 0 (expired ones skipped by the variants
    /// with invariant A). Visits every node.
    pub(crate) fn starving_count(&self, waiters: &[Waiter], variant: Variant, now: SimTime) -> usize {
        let skip_expired = variant.evicts_expired();
        self.iter()
            .filter(|w| {
                let wt = &waiters[*w as usize];
                wt.age == 0 && !(skip_expired && wt.expired(now))
            })
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiters(n: usize) -> Vec<Waiter> {
        vec![
            Waiter {
                deadline: SimTime::MAX,
                cancel_at: SimTime::MAX,
                ..Waiter::EMPTY
            };
            n
        ]
    }

    #[test]
    fn positions_survive_removals_and_compaction() {
        for track in [false, true] {
            let mut ws = waiters(5000);
            let mut wl = Waitlist::new(track);
            for w in 0..5000 {
                wl.push_back(&mut ws, w);
            }
            for w in (0..5000).filter(|w| w % 3 != 0) {
                wl.remove(&mut ws, w);
            }
            let linked: Vec<u32> = wl.iter().collect();
            assert_eq!(linked.len(), wl.len());
            for (k, w) in linked.iter().enumerate() {
                assert_eq!(wl.position(&ws, *w), k);
                assert!(wl.contains(&ws, *w));
            }
            assert!(!wl.contains(&ws, 1));
        }
    }
}
