//! The pending-event set.
//!
//! Ordered by `(time, insertion sequence)`: events at equal times pop in the order they were
//! scheduled (FIFO), never in an order that depends on the heap's layout. That makes a run a
//! pure function of its seed. The heap is a binary min-heap on a packed 128-bit key
//! (`time << 64 | seq`) stored beside the event, so a comparison is one integer compare.

use super::time::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

/// A min-priority queue of events keyed by `(time, seq)`; ties pop FIFO.
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
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
            seq: 0,
        }
    }
    /// An empty queue with room for `n` pending events.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(n),
            seq: 0,
        }
    }
    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| SimTime((e.key >> 64) as u64))
    }

    /// Schedule `event` at `time`. Later pushes at an equal time pop later.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let key = ((time.0 as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, event });
        // sift up
        let h = &mut self.heap;
        let mut i = h.len() - 1;
        let item = h[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if h[p].key <= item.key {
                break;
            }
            h[i] = h[p];
            i = p;
        }
        h[i] = item;
    }

    /// Remove and return the earliest event (FIFO among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let n = self.heap.len();
        if n == 0 {
            return None;
        }
        let top = self.heap.swap_remove(0);
        let h = &mut self.heap;
        let n = h.len();
        if n > 1 {
            // sift down, bottom-up variant: walk to a leaf along the smaller child, then back up.
            let item = h[0];
            let mut i = 0;
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                let r = l + 1;
                let c = if r < n && h[r].key < h[l].key { r } else { l };
                if item.key <= h[c].key {
                    break;
                }
                h[i] = h[c];
                i = c;
            }
            h[i] = item;
        }
        Some((SimTime((top.key >> 64) as u64), top.event))
    }

    /// Drop every pending event.
    pub fn clear(&mut self) {
        self.heap.clear();
    }
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
        let mut last = 0;
        while let Some((t, _)) = q.pop() {
            assert!(t.0 >= last);
            last = t.0;
        }
    }
}
