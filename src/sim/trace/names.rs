//! The name numbers of a trace: each distinct (component, kind) pair, by text, numbered in
//! the order of its first record, found by the addresses of its names.

/// Slots of the direct-mapped table from a (component, kind) pair's addresses to its name
/// number in the current trace.
const SLOTS: usize = 128;
/// Starting size of the table of every address pair met (a power of two).
const KNOWN_START: usize = 64;
/// Past this many distinct address pairs or texts, the tables a thread keeps across traces
/// are emptied when the next trace starts (only a program that keeps making new names
/// reaches it), so they stay bounded.
pub(super) const KNOWN_KEPT: usize = 1 << 14;

/// One slot of the address table: the pair's two names (their addresses and lengths are the
/// key), its number (0: empty) and the trace it was filled in (a slot of an older trace is
/// empty).
#[derive(Clone, Copy)]
pub(super) struct Slot {
    component: &'static str,
    kind: &'static str,
    number: u32,
    gen: u32,
}

const EMPTY_SLOT: Slot = Slot {
    component: "",
    kind: "",
    number: 0,
    gen: 0,
};

/// An address pair met in some trace on this thread, with the id of its text (0: empty).
#[derive(Clone, Copy)]
struct Known {
    component: &'static str,
    kind: &'static str,
    id: u32,
}

const EMPTY_KNOWN: Known = Known {
    component: "",
    kind: "",
    id: 0,
};

/// Text ids by text. A fixed-key SipHash: the keys are the program's own names, and the
/// default costs nothing to make (a dropped buffer leaves one behind).
type TextIds = std::collections::HashMap<
    (&'static str, &'static str),
    u32,
    std::hash::BuildHasherDefault<std::collections::hash_map::DefaultHasher>,
>;

/// A text's name number in the trace stamped `gen` (in another trace it has none yet).
#[derive(Clone, Copy, Default)]
struct Stamp {
    gen: u32,
    number: u32,
}

/// The name numbers of one trace (see the module doc): each distinct (component, kind) pair,
/// by text, gets 1, 2, ... in the order of its first record.
///
/// Three tables, the last two kept across the traces that reuse this one (a thread's runs):
/// - `slots` finds a pair's number in this trace by the addresses of its names (an address
///   hit is a text hit: the strings are immutable);
/// - on a miss, `known` (open addressing by the two addresses) gives the *text id* of a pair
///   of addresses met before, in this trace or an earlier one; only a pair of addresses never
///   met is looked up by its text, in `ids`, where equal texts get one id;
/// - `numbers[id]` is the text's number in this trace when its stamp is this trace's `gen`;
///   otherwise this is the text's first record in the trace, and it gets the next number.
///
/// So a run's first record of a pair costs two probes and no text comparison once the thread
/// has seen those addresses, and the numbers still depend only on the text.
#[derive(Default)]
pub(super) struct Names {
    /// [`SLOTS`] slots (empty only in the placeholder a dropped buffer leaves).
    pub(super) slots: Vec<Slot>,
    /// This trace's stamp: a slot or a number with another `gen` is not this trace's.
    gen: u32,
    /// Pairs numbered in this trace.
    count: u32,
    /// Address pairs met, by their addresses: a power of two long, at most half full.
    known: Vec<Known>,
    /// Entries of `known` in use.
    pub(super) known_len: usize,
    /// Text id by text (ids 1, 2, ...).
    ids: TextIds,
    /// This trace's number of each text id (index 0 unused).
    numbers: Vec<Stamp>,
}

impl Names {
    pub(super) fn new() -> Self {
        Names {
            slots: vec![EMPTY_SLOT; SLOTS],
            gen: 1,
            count: 0,
            known: vec![EMPTY_KNOWN; KNOWN_START],
            known_len: 0,
            ids: TextIds::default(),
            numbers: vec![Stamp::default()],
        }
    }
    /// Forget every pair's number (a new trace), keeping the allocations and the text ids.
    pub(super) fn reset(&mut self) {
        if self.known_len > KNOWN_KEPT || self.numbers.len() > KNOWN_KEPT {
            *self = Names::new();
            return;
        }
        if self.gen == u32::MAX {
            self.slots.fill(EMPTY_SLOT);
            self.numbers.fill(Stamp::default());
            self.gen = 0;
        }
        self.gen += 1;
        self.count = 0;
    }
    #[inline(always)]
    fn mix(component: &str, kind: &str) -> u64 {
        let a = component.as_ptr() as usize as u64;
        let b = kind.as_ptr() as usize as u64;
        (a ^ b.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
    #[inline(always)]
    pub(super) fn slot_of(component: &str, kind: &str) -> usize {
        (Self::mix(component, kind) >> (64 - SLOTS.trailing_zeros())) as usize
    }
    /// Whether slot `s` holds the pair's number in this trace.
    #[inline(always)]
    pub(super) fn holds(&self, s: &Slot, component: &'static str, kind: &'static str) -> bool {
        s.gen == self.gen && std::ptr::eq(s.component, component) && std::ptr::eq(s.kind, kind)
    }
    /// The number of the pair, or 0 when this is its first record (it is numbered now).
    ///
    /// Two-way: a pair is in its slot `i` or in `i ^ 1`, so two pairs whose addresses hash
    /// to one slot do not evict each other on every record. Which pairs collide depends on
    /// where the linker put the names: in one build the connpool model's request draw and
    /// one of its events did, 175,000 misses in a 200,000-customer run (1.8 % of its
    /// instructions).
    #[inline(always)]
    pub(super) fn number(&mut self, component: &'static str, kind: &'static str) -> u32 {
        let i = Self::slot_of(component, kind);
        let s = &self.slots[i];
        if self.holds(s, component, kind) {
            return s.number;
        }
        let s = &self.slots[i ^ 1];
        if self.holds(s, component, kind) {
            return s.number;
        }
        self.miss(i, component, kind)
    }
    /// The pair is in neither of its slots: its number (or 0 and a new number), put in its
    /// slot `slot`, whose pair moves to the other way (`slot ^ 1`), evicting what was there.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, slot: usize, component: &'static str, kind: &'static str) -> u32 {
        self.slots[slot ^ 1] = self.slots[slot];
        let id = self.id_of(component, kind);
        let gen = self.gen;
        let stamp = &mut self.numbers[id as usize];
        let (number, answer) = if stamp.gen == gen {
            (stamp.number, stamp.number)
        } else {
            self.count += 1;
            *stamp = Stamp {
                gen,
                number: self.count,
            };
            (self.count, 0)
        };
        self.slots[slot] = Slot {
            component,
            kind,
            number,
            gen,
        };
        answer
    }
    /// The text id of the pair: by its addresses when they were met before, else by its text
    /// (a new id for a new text), and the addresses are remembered.
    #[inline(always)]
    fn id_of(&mut self, component: &'static str, kind: &'static str) -> u32 {
        let mask = self.known.len() - 1;
        let mut i = (Self::mix(component, kind) >> 32) as usize & mask;
        loop {
            let k = &self.known[i];
            if k.id == 0 {
                break;
            }
            if std::ptr::eq(k.component, component) && std::ptr::eq(k.kind, kind) {
                return k.id;
            }
            i = (i + 1) & mask;
        }
        self.first_met(i, component, kind)
    }
    /// [`Self::id_of`] of a pair of addresses never met: by its text.
    #[cold]
    #[inline(never)]
    fn first_met(&mut self, at: usize, component: &'static str, kind: &'static str) -> u32 {
        let next = self.numbers.len() as u32;
        let id = *self.ids.entry((component, kind)).or_insert(next);
        if id == next {
            self.numbers.push(Stamp::default());
        }
        self.known[at] = Known {
            component,
            kind,
            id,
        };
        self.known_len += 1;
        if 2 * self.known_len > self.known.len() {
            let grown = vec![EMPTY_KNOWN; 2 * self.known.len()];
            let old = std::mem::replace(&mut self.known, grown);
            let mask = self.known.len() - 1;
            for k in old.into_iter().filter(|k| k.id != 0) {
                let mut i = (Self::mix(k.component, k.kind) >> 32) as usize & mask;
                while self.known[i].id != 0 {
                    i = (i + 1) & mask;
                }
                self.known[i] = k;
            }
        }
        id
    }
}
