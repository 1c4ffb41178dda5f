//! The pending-event set.
//!
//! Ordered by `(time, insertion sequence)`: events at equal times pop in the order they were
//! scheduled (FIFO), never in an order that depends on the heap's layout. That makes a run a
//! pure function of its seed. Every key is unique (the sequence number never repeats), so the
//! keys are totally ordered and *any* correct min-queue pops exactly the same sequence: the
//! heap's shape is an implementation detail that cannot change a run or its digest.
//!
//! The heap is a binary min-heap of `(time, seq)` stored beside the event (24 bytes an entry
//! for a 4-byte event), compared as one 128-bit integer `time << 64 | seq`. A pop moves the
//! hole left by the root down to a leaf along the smaller child (one comparison a level,
//! chosen without a branch), then sifts the last entry up from there (Floyd's bottom-up
//! variant, the one `std::collections::BinaryHeap::pop` uses): about half the comparisons of
//! the textbook sift-down, and the last entry, which comes from the bottom, rarely rises far.
//! The entry pushed last waits outside the heap until the next pop (see [`EventQueue`]): a
//! pop that finds it earliest returns it with one comparison, else it fills the root's hole
//! in place of the last entry.

use super::time::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: u64,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

/// Put `item` at hole `i` of the heap `h`, moving it up while its parent is later: the shared
/// last step of `push` and of `pop`'s bottom-up descent.
#[inline(always)]
fn sift_up<E: Copy>(h: &mut [Entry<E>], mut i: usize, item: Entry<E>) {
    let key = item.key();
    while i > 0 {
        let p = (i - 1) / 2;
        if h[p].key() < key {
            break;
        }
        h[i] = h[p];
        i = p;
    }
    h[i] = item;
}

/// A min-priority queue of events keyed by `(time, seq)`; ties pop FIFO.
///
/// The entry pushed last waits in `slot`, outside the heap, until the next pop or push: a
/// pop then returns it at the cost of one comparison when it is the earliest, or else puts
/// it in the root's place and sifts it down (one descent where a push and a pop make two
/// passes). An event handler typically pushes one or two events before the next pop, so
/// most pushes never touch the heap. The order is the keys' order either way.
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    slot: Option<Entry<E>>,
    seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::new(),
            slot: None,
            seq: 0,
        }
    }
    /// An empty queue with room for `n` pending events.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(n),
            slot: None,
            seq: 0,
        }
    }
    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.slot.is_some() as usize
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.slot.is_none()
    }
    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        // The earliest key's time is the earlier of the two times (equal times: equal).
        match (&self.slot, self.heap.first()) {
            (Some(s), Some(h)) => Some(SimTime(s.time.min(h.time))),
            (Some(s), None) => Some(SimTime(s.time)),
            (None, h) => h.map(|e| SimTime(e.time)),
        }
    }

    /// Schedule `event` at `time`. Later pushes at an equal time pop later.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.reserve();
        self.push_reserved(time, seq, event);
    }

    /// Take the sequence number a [`Self::push`] now would take, without pushing. The caller
    /// keeps the event (e.g. one of a fleet of fixed-period tickers whose order it knows) and
    /// pushes it later with [`Self::push_reserved`]: it then pops exactly where it would have
    /// popped had it been pushed now, provided it is in the queue before any event that orders
    /// after it pops.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    /// Schedule `event` at `time` with a sequence number from [`Self::reserve`], used once.
    #[inline]
    pub fn push_reserved(&mut self, time: SimTime, seq: u64, event: E) {
        debug_assert!(seq < self.seq, "a sequence number not reserved");
        let item = Entry {
            time: time.0,
            seq,
            event,
        };
        if let Some(prev) = self.slot.replace(item) {
            self.heap_push(prev);
        }
    }

    #[inline]
    fn heap_push(&mut self, item: Entry<E>) {
        let i = self.heap.len();
        self.heap.push(item);
        let h = &mut self.heap[..];
        sift_up(h, i, item);
    }

    /// Remove and return the earliest event (FIFO among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let Some(s) = self.slot.take() else {
            return self.heap_pop();
        };
        let h = &mut self.heap[..];
        if h.is_empty() || s.key() < h[0].key() {
            return Some((SimTime(s.time), s.event));
        }
        // The root leaves; the slot's entry takes its place.
        let top = h[0];
        descend_and_fill(h, s);
        Some((SimTime(top.time), top.event))
    }

    #[inline]
    fn heap_pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let h = &mut self.heap[..];
        if h.is_empty() {
            return Some((SimTime(last.time), last.event));
        }
        let top = h[0];
        descend_and_fill(h, last);
        Some((SimTime(top.time), top.event))
    }

    /// Drop every pending event and start the sequence over (nothing pending is left to
    /// order against), keeping the allocation: the queue of a fresh run.
    pub fn clear(&mut self) {
        self.heap.clear();
        self.slot = None;
        self.seq = 0;
    }
}

/// The root of the non-empty heap `h` is vacated: move the hole down to a leaf along the
/// smaller child (one comparison a level, chosen without a branch), then put `item` there,
/// rising while its parent is later (Floyd's bottom-up variant).
#[inline(always)]
fn descend_and_fill<E: Copy>(h: &mut [Entry<E>], item: Entry<E>) {
    let n = h.len();
    let mut i = 0;
    loop {
        let l = 2 * i + 1;
        if l + 1 < n {
            let c = l + (h[l + 1].key() < h[l].key()) as usize;
            h[i] = h[c];
            i = c;
        } else {
            if l < n {
                h[i] = h[l];
                i = l;
            }
            break;
        }
    }
    sift_up(h, i, item);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new();
        for (i, t) in [5u64, 1, 9, 3, 7, 2, 8].iter().enumerate() {
            q.push(SimTime(*t), i);
        }
        let mut got = vec![];
        while let Some((t, i)) = q.pop() {
            got.push((t.0, i));
        }
        assert_eq!(
            got,
            [(1, 1), (2, 5), (3, 3), (5, 0), (7, 4), (8, 6), (9, 2)]
        );
    }

    /// Pushes and pops interleaved at random, with many equal times, against a reference
    /// that keeps every pending event in a sorted list: the same `(time, event)` at every pop.
    #[test]
    fn matches_a_sorted_list_with_fifo_ties() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for (times, ops) in [(4u64, 2_000u32), (1_000, 20_000), (u64::MAX, 5_000)] {
            let mut q = EventQueue::new();
            let mut reference: Vec<(u64, u64, u32)> = vec![]; // (time, seq, event)
            let mut seq = 0u64;
            for op in 0..ops {
                if reference.is_empty() || rng.next_u32() % 5 < 3 {
                    let t = rng.next_u64() % times.max(1);
                    q.push(SimTime(t), op);
                    let at = reference.partition_point(|&(rt, _, _)| rt <= t);
                    reference.insert(at, (t, seq, op));
                    seq += 1;
                } else {
                    let (t, _, e) = reference.remove(0);
                    assert_eq!(q.pop().map(|(t, e)| (t.0, e)), Some((t, e)));
                }
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.peek_time().map(|t| t.0), reference.first().map(|r| r.0));
            }
            for (t, _, e) in reference {
                assert_eq!(q.pop().map(|(t, e)| (t.0, e)), Some((t, e)));
            }
            assert!(q.pop().is_none());
        }
    }

    /// A simulation's pattern: every push at the last popped time plus a delay (zero, a few
    /// ns, microseconds to hours, or up to `u64::MAX`), peeks only now and then, pops without
    /// a peek, and a `clear` part way (a reused queue): the sorted reference at every pop.
    #[test]
    fn simulation_pattern_matches_a_sorted_list() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut q = EventQueue::new();
        for round in 0..3u32 {
            let mut reference: Vec<(u64, u64, u32)> = vec![];
            let (mut seq, mut now) = (0u64, 0u64);
            for op in 0..30_000u32 {
                let r = rng.next_u32() % 16;
                if reference.is_empty() || r < 8 {
                    let d = match rng.next_u32() % 6 {
                        0 => 0,
                        1 => rng.next_u64() % 8,
                        2 => rng.next_u64() % 1_000_000,
                        3 => rng.next_u64() % 3_600_000_000_000,
                        4 => u64::MAX - now,
                        _ => rng.next_u64() % 50_000_000_000,
                    };
                    let t = now.saturating_add(d);
                    q.push(SimTime(t), op);
                    let at = reference.partition_point(|&(rt, _, _)| rt <= t);
                    reference.insert(at, (t, seq, op));
                    seq += 1;
                } else if r < 10 {
                    assert_eq!(q.peek_time().map(|t| t.0), reference.first().map(|x| x.0));
                } else {
                    let (t, _, e) = reference.remove(0);
                    now = t;
                    assert_eq!(
                        q.pop().map(|(t, e)| (t.0, e)),
                        Some((t, e)),
                        "round {round}"
                    );
                }
                assert_eq!(q.len(), reference.len());
            }
            if round < 2 {
                q.clear();
                assert!(q.is_empty() && q.pop().is_none() && q.peek_time().is_none());
            } else {
                for (t, _, e) in reference {
                    assert_eq!(q.pop().map(|(t, e)| (t.0, e)), Some((t, e)));
                }
            }
        }
    }
}
