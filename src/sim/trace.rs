//! The trace and its running digest: the bit-for-bit proof of a run.
//!
//! # What the digest covers
//!
//! A run's digest is the BLAKE3 hash of a sequence of *records*, and the rule is: **every
//! figure a run outputs is covered by its digest.** Three kinds of record make that hold:
//!
//! 1. **event**: every event the engine pops, in pop order, described by its world as a
//!    [`TraceRecord`] (component, index, kind, two integer payload words).
//! 2. **draw**: every random draw whose result reaches an output without being an event time
//!    or an event's own fields: an aggregated draw (rollout's Fast-mode Poisson count of the
//!    queries of one routing interval), one member of a sampled batch (a site poller's probe
//!    round), or a choice that only shows in later counters (a ProxySQL session's server
//!    pick, a connpool request's deadline). A world records it, as a [`TraceRecord`], where it
//!    draws: from [`World::handle`](super::World::handle) through
//!    [`Scheduler::draw`](super::Scheduler::draw), or from set-up and end-of-run code through
//!    [`Simulation::draw`](super::Simulation::draw) and
//!    [`Simulation::world_and_draws`](super::Simulation::world_and_draws). A draw whose only
//!    effect is an event's time (a latency, a phase) needs no record: the event carries it.
//! 3. **metric**: the run's final metric values, in metric order, after one record of the
//!    hash of their names, recorded once by
//!    [`Simulation::close_with_metrics`](super::Simulation::close_with_metrics), the only way
//!    a run ends and the only source of a [`RunEnd`](super::RunEnd), which is the only source
//!    of a model's `RunOutput`. So two runs whose metrics differ in any bit have
//!    different digests, whatever the events and draws did.
//!
//! The events handled (the `events` column of `runs.csv`) are the number of event records.
//! Each model's module doc lists the draws it records.
//!
//! # The encoding, byte for byte
//!
//! The digest's input is documented and stable, so a digest printed today can be checked by
//! any later build and on any machine. It is the concatenation of the records in the order
//! they are made (events and draws interleaved as they happen, then the metrics):
//!
//! ```text
//! encoding     = record | record | ... | padding
//! event        = uleb128(4·p + 1) | uleb128(Δt) | [names] | uleb128(index) | uleb128(a) | uleb128(b)
//! draw         = uleb128(4·p + 2) | uleb128(Δt) | [names] | uleb128(index) | uleb128(a) | uleb128(b)
//! metric-names = 0x04 | BLAKE3(str(name_0) | str(name_1) | ...): 32 bytes
//! metric       = 0x03 | uleb128(position) | bits: 8 bytes, little-endian
//! names        = str(component) | str(kind)        (only when p = 0)
//! str(s)       = len(s): u8 | the bytes of s       (a name longer than 255 bytes is cut at 255)
//! padding      = 0x00 bytes up to the next multiple of 1024 bytes, when the records are
//!                longer than 1024 bytes (none when they are 1024 bytes or fewer)
//! ```
//!
//! - The *head* (the first LEB128 word) carries the record type in its low two bits (1
//!   event, 2 draw, 3 metric, 0 metric-names), so no record of one type can be read as
//!   another, and a *name number* `p` in the bits above (1 in the metric-names record's
//!   head).
//! - A run's records end with one metric-names record and then its metric records, one per
//!   metric. The metric-names record is the BLAKE3 hash of the names of the metrics that
//!   follow, in their order (`name_i` is the name of position `i`), and is there even when a
//!   run has no metrics (then it is the hash of nothing). So the names are covered by the
//!   digest through a hash the model's metric set computes once
//!   ([`MetricSet::names_digest`](crate::model::MetricSet::names_digest)), not spelt out in
//!   every run's trace: that was 352 of the rollout model's 1.1 KB a run (331 name bytes
//!   and 21 length bytes). The JSONL trace
//!   has no line for it: a reader hashes the names of the metric lines.
//! - Name numbers: each distinct (component, kind) pair of a trace's event and draw records
//!   gets a number, 1, 2, 3, ..., in the order of its first record (events and draws share
//!   the numbering). That first record has `p = 0` and spells the pair out (`names`); every
//!   later record of the pair has `p` = its number and no names. So a record of one of the
//!   first 31 pairs starts with one byte, and the string bytes of a pair are hashed once a
//!   trace, not once a record. Pairs are compared by their text (two equal names are one
//!   name wherever they are stored). A metric record's head is the byte `0x03` and it
//!   carries no name (the metric-names record covers them).
//! - `Δt` is `t_ns` minus the `t_ns` of the previous event or draw record (the first one's
//!   is from 0); a draw is stamped with the current simulated time (an end-of-run draw with
//!   the time the run stopped).
//! - `uleb128` is unsigned LEB128: 7 bits a byte, low bits first, high bit set on all but the
//!   last byte.
//! - The *padding* makes every BLAKE3 chunk of a trace longer than one chunk a whole one.
//!   BLAKE3 hashes whole chunks side by side in SIMD lanes, but the blocks of the last,
//!   partial chunk one after another: the rollout model's run of about 1.9 KB hashed as one
//!   whole chunk and 14 blocks in a row, about 13.7 k instructions, and padded to 2 KiB as
//!   two chunks side by side, about 7 k. No record starts with a 0x00 byte (every head is at
//!   least 1), so a reader knows where the records end.
//! - `position` is the metric's index in the model's metric list (0, 1, ...); `bits` is the
//!   IEEE-754 bit pattern of the value (`f64::to_bits`), except that every NaN is written as
//!   the canonical quiet NaN `0x7ff8000000000000` (NaN payloads differ between CPUs).
//!
//! The string of records decodes back to the records (a reader keeps the same pair table),
//! the metric names to their hash: so two different traces never have the same input, unless
//! two lists of metric names have the same BLAKE3 hash, which is what the digest's guarantee
//! rests on anyway. The digest is the BLAKE3 hash of that byte string, shown as 64 hex
//! characters. A typical record is 5 to 9 bytes (it was about 20 with both names spelt out in
//! every record, before the name numbers), which matters because the digest is kept for every
//! run of every sweep, and no record allocates.
//!
//! # How the digest is computed
//!
//! Records are encoded into a buffer, never handed to the hasher one by one: BLAKE3 costs
//! several times more per byte when it is fed 20-byte pieces than when it gets whole 1 KiB
//! chunks, and with 8 or 16 chunks at once it hashes them in parallel SIMD lanes. The buffer
//! goes to `blake3::Hasher::update` when it holds 64 KiB, and when the digest is read if the
//! trace has flushed before or holds more than 8 KiB; otherwise (a model run of a few hundred
//! records) the digest is `blake3::hash` of the buffer, one call and no hasher at all. The
//! padding is written past the records in the buffer (or fed to a copy of the hasher), not
//! added to the trace: a digest read on the way is that of the records so far, padded, and
//! the records that follow are written over it. BLAKE3's result depends only on the byte
//! string, not on how it was split between `update` calls, so the digest is exactly
//! `blake3::hash(encoding)`, padding included (checked by unit tests against a one-piece
//! reference encoder, across several flushes, digests read on the way and every name length).
//! The buffer, the name tables and the hasher of a finished trace are kept for the next trace
//! on the same thread, so a run of a sweep allocates none of them.
//!
//! The name number of a record's pair is found by the addresses of its two `&'static str`
//! (a small direct-mapped table: one hash and two pointer comparisons a record). A pair's
//! first record in a trace finds the id of its text by the same addresses in a table the
//! thread keeps across its traces, and the text id gives the number (or a new one); only
//! addresses the thread never met are looked up by their text. So the numbers, and the
//! bytes, depend only on the names' text, and a run compares no text once its thread has
//! made one run of the same model.
//!
//! A digest of this construction is `blake3::hash` of the encoding above, which anyone can
//! recompute from a JSONL trace (`vtsim replay --trace`): the `t_ns`, names and payload words
//! of each line, in order, give the bytes (`tests/digest.rs` does it).
//!
//! # The JSONL trace
//!
//! [`Trace::with_jsonl`] also writes every record as one JSON line, in the same order, so two
//! traces can be compared record by record:
//!
//! ```text
//! {"type":"event","t_ns":..,"t_s":..,"component":"..","index":..,"kind":"..","a":..,"b":..}
//! {"type":"draw","t_ns":..,"t_s":..,"component":"..","index":..,"kind":"..","a":..,"b":..}
//! {"type":"metric","index":..,"name":"..","value":..,"bits":"0x.."}
//! ```
//!
//! (`value` is the metric as a JSON number, `null` when it is not finite; `bits` is what the
//! digest hashed, as 16 hex digits.)

use super::time::SimTime;
use std::io::Write;

/// What a world says about one event or one draw, for the trace and the digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// The component that handles the event or draws (`"vtgate"`, `"tablet"`, `"workload"`...).
    pub component: &'static str,
    /// Which one of them.
    pub index: u32,
    /// What happens (`"poll"`, `"drain"`, `"reads_ok"`...).
    pub kind: &'static str,
    /// First payload word (meaning depends on the kind; 0 when unused).
    pub a: u64,
    /// Second payload word.
    pub b: u64,
}

/// An event type that can describe itself for the trace.
pub trait Traced {
    /// The record of this event.
    fn record(&self) -> TraceRecord;
}

/// Tag byte of an event record.
pub const TAG_EVENT: u8 = 0x01;
/// Tag byte of a draw record.
pub const TAG_DRAW: u8 = 0x02;
/// Tag byte of a metric record.
pub const TAG_METRIC: u8 = 0x03;
/// Tag byte of the metric-names record (head type 0, which no other record has).
pub const TAG_METRIC_NAMES: u8 = 0x04;
/// The bit pattern every NaN metric is digested as.
pub const CANONICAL_NAN_BITS: u64 = 0x7ff8_0000_0000_0000;

/// The digest of a trace that is off ([`Trace::off`]): BLAKE3 of no bytes.
const EMPTY_DIGEST_HEX: &str = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262";

/// Bytes the encoder collects before it hands them to the hasher in one `update`.
const FLUSH_AT: usize = 64 * 1024;
/// The longest record: a head of at most 5 bytes (a 32-bit name number and the type), three
/// LEB128 words of at most 10 bytes and one of 5, two names of at most 1 + 255 bytes (a metric
/// record is shorter).
const MAX_RECORD: usize = 5 + 10 + 256 + 256 + 5 + 10 + 10;

/// Slots of the direct-mapped table from a (component, kind) pair's addresses to its name
/// number in the current trace.
const SLOTS: usize = 128;
/// Starting size of the table of every address pair met (a power of two).
const KNOWN_START: usize = 64;
/// Past this many distinct address pairs or texts, the tables a thread keeps across traces
/// are emptied when the next trace starts (only a program that keeps making new names
/// reaches it), so they stay bounded.
const KNOWN_KEPT: usize = 1 << 14;

/// One slot of the address table: the pair's two names (their addresses and lengths are the
/// key), its number (0: empty) and the trace it was filled in (a slot of an older trace is
/// empty).
#[derive(Clone, Copy)]
struct Slot {
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
struct Names {
    /// [`SLOTS`] slots (empty only in the placeholder a dropped buffer leaves).
    slots: Vec<Slot>,
    /// This trace's stamp: a slot or a number with another `gen` is not this trace's.
    gen: u32,
    /// Pairs numbered in this trace.
    count: u32,
    /// Address pairs met, by their addresses: a power of two long, at most half full.
    known: Vec<Known>,
    /// Entries of `known` in use.
    known_len: usize,
    /// Text id by text (ids 1, 2, ...).
    ids: TextIds,
    /// This trace's number of each text id (index 0 unused).
    numbers: Vec<Stamp>,
}

impl Names {
    fn new() -> Self {
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
    fn reset(&mut self) {
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
    fn slot_of(component: &str, kind: &str) -> usize {
        (Self::mix(component, kind) >> (64 - SLOTS.trailing_zeros())) as usize
    }
    /// Whether slot `s` holds the pair's number in this trace.
    #[inline(always)]
    fn holds(&self, s: &Slot, component: &'static str, kind: &'static str) -> bool {
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
    fn number(&mut self, component: &'static str, kind: &'static str) -> u32 {
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

/// The encode buffer: initialised bytes and a fill mark. Between records `len < FLUSH_AT`
/// and there are at least [`MAX_RECORD`] bytes past `len`, so a record is written with no
/// capacity check and no reallocation. It starts at 8 KiB (a model run of a few hundred
/// records never grows it) and doubles up to `FLUSH_AT + MAX_RECORD`. A dropped buffer is
/// kept for the next trace made on the same thread (a sweep makes one trace per run), so a
/// run neither allocates nor zeroes one; only the bytes below `len`, written by this trace,
/// are ever read.
struct Buf {
    bytes: Vec<u8>,
    len: usize,
    /// The trace's name numbers (kept with the buffer, so a run reuses their tables too).
    names: Names,
    /// The hasher, made when a trace first flushes (most runs are hashed from the buffer in
    /// one [`blake3::hash`] call and never need one) and kept with the buffer; boxed, as it
    /// is about 2 KB. It holds bytes of this trace only when `hashing`.
    hasher: Option<Box<blake3::Hasher>>,
    /// Whether this trace has fed `hasher` (else it is spare, to be reset before use).
    hashing: bool,
    /// Bytes of this trace already fed to `hasher`.
    flushed: u64,
}

/// What a dropped trace leaves for the next one on its thread.
struct Spare {
    bytes: Vec<u8>,
    names: Names,
    hasher: Option<Box<blake3::Hasher>>,
}

thread_local! {
    /// Buffers, name tables and hashers of dropped traces, for the next ones on this thread.
    static SPARE_BUFS: std::cell::RefCell<Vec<Spare>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A trace whose bytes all fit in this many (its buffer's starting size) and that never
/// flushed is hashed straight from its buffer by [`Trace::digest_hex`].
const DIRECT_MAX: usize = 8192;

/// Spare buffers kept per thread.
const SPARE_KEPT: usize = 4;

impl Buf {
    fn new() -> Self {
        let Spare {
            bytes,
            mut names,
            hasher,
        } = match SPARE_BUFS.try_with(|s| s.borrow_mut().pop()).ok().flatten() {
            Some(spare) => spare,
            None => Spare {
                bytes: vec![0u8; DIRECT_MAX],
                names: Names::new(),
                hasher: None,
            },
        };
        names.reset();
        Buf {
            bytes,
            len: 0,
            names,
            hasher,
            hashing: false,
            flushed: 0,
        }
    }
    /// Room for one record, as an array: the encoders' offsets are bounded by the record's
    /// layout (at most [`MAX_RECORD`]), so the compiler checks none of their writes.
    #[inline(always)]
    fn room(&mut self) -> &mut [u8; MAX_RECORD] {
        // The very checks the slicing makes, so that on this path (no growth) it makes none.
        let at = self.len;
        if self
            .bytes
            .get(at..)
            .is_some_and(|rest| rest.len() >= MAX_RECORD)
        {
            return self.bytes[at..]
                .first_chunk_mut()
                .expect("checked just above");
        }
        self.grow();
        self.bytes[at..]
            .first_chunk_mut()
            .expect("grow leaves MAX_RECORD bytes past len")
    }
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = (self.bytes.len() * 2).clamp(self.len + MAX_RECORD, FLUSH_AT + MAX_RECORD);
        self.bytes.resize(n, 0);
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        let spare = Spare {
            bytes: std::mem::take(&mut self.bytes),
            names: std::mem::take(&mut self.names),
            hasher: self.hasher.take(),
        };
        let _ = SPARE_BUFS.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < SPARE_KEPT {
                    s.push(spare);
                }
            }
        });
    }
}

/// BLAKE3's chunk: the unit it hashes in parallel SIMD lanes.
const CHUNK: usize = 1024;

/// The zero bytes that end an encoding of `len` bytes (see the module doc): up to the next
/// multiple of 1024 bytes (a BLAKE3 chunk) when it is longer than one chunk, else none.
#[inline]
fn padding(len: u64) -> usize {
    let rem = (len % CHUNK as u64) as usize;
    if len > CHUNK as u64 && rem != 0 {
        CHUNK - rem
    } else {
        0
    }
}

/// The two lower-case hex digits of every byte.
const HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = [DIGITS[b >> 4], DIGITS[b & 15]];
        b += 1;
    }
    t
};

/// 64 lower-case hex digits of a hash (what [`blake3::Hash::to_hex`] writes, a byte at a time
/// from a table instead of a character push at a time).
fn hex(hash: &[u8; 32]) -> String {
    let mut out = [0u8; 64];
    for (pair, &b) in out.chunks_exact_mut(2).zip(hash) {
        pair.copy_from_slice(&HEX_PAIRS[b as usize]);
    }
    String::from(std::str::from_utf8(&out).expect("hex digits are ASCII"))
}

/// Write `v` as unsigned LEB128 at `out[at..]`; returns the position after it. One and two
/// bytes (below 2^14: most time deltas, indices and payload words) without the loop. The
/// position returned is at most `at + 10` in a way the compiler can see, so the writes that
/// follow in a record need no bounds check.
#[inline(always)]
fn leb128_at(out: &mut [u8; MAX_RECORD], at: usize, v: u64) -> usize {
    if v < 0x80 {
        out[at] = v as u8;
        at + 1
    } else if v < 0x4000 {
        out[at] = (v as u8) | 0x80;
        out[at + 1] = (v >> 7) as u8;
        at + 2
    } else {
        leb128_long_at(out, at, v)
    }
}

/// [`leb128_at`] of any value. The position it returns is clamped to `at + 10` (where it is
/// anyway: a `u64` has at most 10 LEB128 bytes), once a value rather than once a byte, so the
/// compiler can bound the offsets of the words that follow.
#[inline(always)]
fn leb128_long_at(out: &mut [u8; MAX_RECORD], at: usize, mut v: u64) -> usize {
    let mut end = at;
    while v >= 0x80 {
        out[end] = (v as u8) | 0x80;
        v >>= 7;
        end += 1;
    }
    out[end] = v as u8;
    debug_assert!(end < at + 10);
    (end + 1).min(at + 10)
}

/// Write a name (its length, cut at 255, and its bytes) at `out[at..]`; returns the position
/// after it. A name of 4 to 32 bytes (all of them in practice) is copied as two fixed-size
/// overlapping words instead of through a `memcpy` call.
#[inline(always)]
fn name_at(out: &mut [u8; MAX_RECORD], at: usize, s: &str) -> usize {
    let s = s.as_bytes();
    let n = s.len().min(255);
    out[at] = n as u8;
    let dst = &mut out[at + 1..];
    if (17..=32).contains(&n) {
        dst[..16].copy_from_slice(&s[..16]);
        dst[n - 16..n].copy_from_slice(&s[n - 16..n]);
    } else if (8..=16).contains(&n) {
        dst[..8].copy_from_slice(&s[..8]);
        dst[n - 8..n].copy_from_slice(&s[n - 8..n]);
    } else if (4..8).contains(&n) {
        dst[..4].copy_from_slice(&s[..4]);
        dst[n - 4..n].copy_from_slice(&s[n - 4..n]);
    } else {
        dst[..n].copy_from_slice(&s[..n]);
    }
    at + 1 + n
}

/// Append `v` as unsigned LEB128 (the reference encoder of the tests).
#[cfg(test)]
fn leb128(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push((v as u8) | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

/// The bits a metric value is digested as (NaN canonicalised).
#[inline]
pub fn metric_bits(v: f64) -> u64 {
    if v.is_nan() {
        CANONICAL_NAN_BITS
    } else {
        v.to_bits()
    }
}

/// The 32 bytes of a metric-names record: the BLAKE3 hash of `str(name)` of each metric
/// name, in metric order (`str` as in the module doc: a length byte, the name cut at 255
/// bytes).
pub fn metric_names_digest<'a>(names: impl IntoIterator<Item = &'a str>) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    for n in names {
        let b = n.as_bytes();
        let b = &b[..b.len().min(255)];
        h.update(&[b.len() as u8]);
        h.update(b);
    }
    *h.finalize().as_bytes()
}

/// Running digest plus an optional JSONL sink.
pub struct Trace {
    enabled: bool,
    last_t: u64,
    buf: Buf,
    jsonl: Option<std::io::BufWriter<Box<dyn Write + Send>>>,
    /// A record that leaves the buffer this full takes the slow path ([`Self::after_timed`]):
    /// [`FLUSH_AT`], or 0 with a JSONL sink (every record). One comparison a record for both.
    slow_at: usize,
    io_error: Option<std::io::Error>,
    events: u64,
    draws: u64,
    metrics: u64,
}

impl Default for Trace {
    fn default() -> Self {
        Self::digest_only()
    }
}

impl Trace {
    /// Keep only the running digest (the default for every run).
    pub fn digest_only() -> Self {
        Trace {
            enabled: true,
            last_t: 0,
            buf: Buf::new(),
            jsonl: None,
            slow_at: FLUSH_AT,
            io_error: None,
            events: 0,
            draws: 0,
            metrics: 0,
        }
    }
    /// Keep the digest and write every record as a JSON line to `file`.
    pub fn with_jsonl(file: std::fs::File) -> Self {
        Self::with_writer(Box::new(file))
    }
    /// Keep the digest and write every record as a JSON line to `w` (buffered here), e.g. an
    /// in-memory buffer to compare two runs record by record.
    pub fn with_writer(w: Box<dyn Write + Send>) -> Self {
        let mut t = Self::digest_only();
        t.jsonl = Some(std::io::BufWriter::new(w));
        t.slow_at = 0;
        t
    }
    /// Record nothing: for kernel benchmarks that measure the engine without the digest.
    pub fn off() -> Self {
        let mut t = Self::digest_only();
        t.enabled = false;
        t
    }
    /// Event records so far.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// Draw records so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }
    /// Metric records so far.
    pub fn metrics(&self) -> u64 {
        self.metrics
    }

    /// One event or draw record: the shared encoding of both.
    #[inline(always)]
    fn timed(&mut self, tag: u8, t: SimTime, r: &TraceRecord) {
        let dt = t.0.wrapping_sub(self.last_t);
        self.last_t = t.0;
        let p = self.buf.names.number(r.component, r.kind);
        let out = self.buf.room();
        let at = leb128_at(out, 0, (p as u64) << 2 | tag as u64);
        let at = leb128_at(out, at, dt);
        let at = if p == 0 {
            let at = name_at(out, at, r.component);
            name_at(out, at, r.kind)
        } else {
            at
        };
        let at = leb128_at(out, at, r.index as u64);
        let at = leb128_at(out, at, r.a);
        let at = leb128_at(out, at, r.b);
        self.buf.len += at;
        if self.buf.len >= self.slow_at {
            self.after_timed(tag, t, *r);
        }
    }

    /// A record's slow path: flush a full buffer, write the JSON line.
    #[cold]
    #[inline(never)]
    fn after_timed(&mut self, tag: u8, t: SimTime, r: TraceRecord) {
        if self.buf.len >= FLUSH_AT {
            self.flush();
        }
        if self.jsonl.is_some() {
            self.timed_json(tag, t, &r);
        }
    }

    /// Hand the buffered bytes to the hasher.
    #[cold]
    #[inline(never)]
    fn flush(&mut self) {
        let b = &mut self.buf;
        let hasher = b.hasher.get_or_insert_with(Default::default);
        if !b.hashing {
            hasher.reset();
            b.hashing = true;
        }
        hasher.update(&b.bytes[..b.len]);
        b.flushed += b.len as u64;
        b.len = 0;
    }

    #[cold]
    fn timed_json(&mut self, tag: u8, t: SimTime, r: &TraceRecord) {
        let ty = if tag == TAG_EVENT { "event" } else { "draw" };
        if let (Some(w), None) = (self.jsonl.as_mut(), self.io_error.as_ref()) {
            if let Err(e) = writeln!(
                w,
                "{{\"type\":\"{ty}\",\"t_ns\":{},\"t_s\":{},\"component\":\"{}\",\"index\":{},\"kind\":\"{}\",\"a\":{},\"b\":{}}}",
                t.0,
                t.as_secs_f64(),
                r.component,
                r.index,
                r.kind,
                r.a,
                r.b
            ) {
                self.io_error = Some(e);
            }
        }
    }

    /// Add one event record (the engine calls this for every event it pops).
    #[inline]
    pub fn event(&mut self, t: SimTime, r: &TraceRecord) {
        if !self.enabled {
            return;
        }
        self.events += 1;
        self.timed(TAG_EVENT, t, r);
    }

    /// Add one draw record at time `t` (see the module doc for which draws are recorded).
    #[inline]
    pub fn draw(&mut self, t: SimTime, r: &TraceRecord) {
        if !self.enabled {
            return;
        }
        self.draws += 1;
        self.timed(TAG_DRAW, t, r);
    }

    /// Add the metric-names record: `names_digest` is [`metric_names_digest`] of the names of
    /// the metric records that follow, in their order (a model's metric set computes it once,
    /// not once a run). It comes before the first metric record.
    pub fn metric_names(&mut self, names_digest: &[u8; 32]) {
        if !self.enabled {
            return;
        }
        let out = self.buf.room();
        out[0] = TAG_METRIC_NAMES;
        out[1..33].copy_from_slice(names_digest);
        self.buf.len += 33;
        if self.buf.len >= FLUSH_AT {
            self.flush();
        }
    }

    /// Add the metric record of position `position` (inlined: a model's run ends with a loop
    /// of them). Its name is covered by the metric-names record before it
    /// ([`Self::metric_names`]), and written in the JSON line.
    #[inline(always)]
    pub fn metric(&mut self, position: u32, metric_name: &str, value: f64) {
        if !self.enabled {
            return;
        }
        self.metrics += 1;
        let bits = metric_bits(value);
        let out = self.buf.room();
        out[0] = TAG_METRIC;
        let at = leb128_at(out, 1, position as u64);
        out[at..at + 8].copy_from_slice(&bits.to_le_bytes());
        self.buf.len += at + 8;
        if self.buf.len >= self.slow_at {
            self.after_metric(position, metric_name, value);
        }
    }

    /// A metric record's slow path: flush a full buffer, write the JSON line.
    #[cold]
    #[inline(never)]
    fn after_metric(&mut self, position: u32, metric_name: &str, value: f64) {
        if self.buf.len >= FLUSH_AT {
            self.flush();
        }
        let bits = metric_bits(value);
        if let (Some(w), None) = (self.jsonl.as_mut(), self.io_error.as_ref()) {
            let r = if value.is_finite() {
                // `{:?}` is the shortest form that reads back to the same f64 (`1.0`, `1e-7`).
                writeln!(
                    w,
                    "{{\"type\":\"metric\",\"index\":{position},\"name\":\"{metric_name}\",\"value\":{value:?},\"bits\":\"{bits:#018x}\"}}"
                )
            } else {
                writeln!(
                    w,
                    "{{\"type\":\"metric\",\"index\":{position},\"name\":\"{metric_name}\",\"value\":null,\"bits\":\"{bits:#018x}\"}}"
                )
            };
            if let Err(e) = r {
                self.io_error = Some(e);
            }
        }
    }

    /// The digest of everything recorded so far, as 64 hex characters. (Recording may go on
    /// afterwards: the pending bytes are fed to the hasher, which does not change the hash.)
    pub fn digest_hex(&mut self) -> String {
        if !self.enabled {
            // A trace that is off records nothing: the hash of no bytes, not recomputed.
            return String::from(EMPTY_DIGEST_HEX);
        }
        let pad = padding(self.buf.flushed + self.buf.len as u64);
        let hash = if !self.buf.hashing && self.buf.len + pad <= DIRECT_MAX {
            // Everything is in the buffer, which stays: the records that follow are added to it,
            // over the padding, which is written past the records, not added to them.
            let end = self.buf.len + pad;
            let b = &mut self.buf;
            b.bytes[b.len..end].fill(0);
            blake3::hash(&b.bytes[..end])
        } else {
            self.flush();
            let hasher = self.buf.hasher.as_ref().expect("flushed");
            if pad == 0 {
                hasher.finalize()
            } else {
                // A copy takes the padding: recording may go on after this digest.
                let mut padded = (**hasher).clone();
                padded.update(&[0u8; CHUNK][..pad]);
                padded.finalize()
            }
        };
        hex(hash.as_bytes())
    }

    /// Flush the JSONL file; reports the first write error, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.io_error.take() {
            return Err(e);
        }
        if let Some(w) = self.jsonl.as_mut() {
            w.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digest of an encoding without its padding, padded here by the module doc's rule.
    fn reference_digest(records: &[u8]) -> String {
        let mut b = records.to_vec();
        if b.len() > 1024 {
            while !b.len().is_multiple_of(1024) {
                b.push(0);
            }
        }
        blake3::hash(&b).to_hex().to_string()
    }

    #[test]
    fn a_trace_that_is_off_has_the_digest_of_no_bytes() {
        let mut t = Trace::off();
        t.event(SimTime(5), &R);
        assert_eq!(t.digest_hex(), reference_digest(&[]));
        assert_eq!(t.digest_hex(), blake3::hash(b"").to_hex().as_str());
    }

    #[test]
    fn the_padding_fills_the_last_chunk_past_one_chunk() {
        let cases = [
            (0, 0),
            (1, 0),
            (1024, 0),
            (1025, 1023),
            (2047, 1),
            (2048, 0),
            (9000, 216),
        ];
        for (len, pad) in cases {
            assert_eq!(padding(len), pad, "{len}");
        }
        // Traces ending on either side of the first two chunk boundaries (a record of `R` is 6
        // bytes after the first, of 18), read in the buffer.
        for n in [60u64, 167, 168, 169, 170, 338, 339, 340, 341] {
            let mut t = Trace::digest_only();
            let (mut want, mut last_t) = (Vec::new(), 0u64);
            let mut pairs = std::collections::HashMap::new();
            for i in 0..n {
                t.event(SimTime(i), &R);
                reference_bytes(&mut want, &mut pairs, &mut last_t, TAG_EVENT, i, &R);
            }
            assert_eq!(t.digest_hex(), reference_digest(&want), "{n} records");
            // The padding is not part of the trace: the next record follows the last one.
            t.event(SimTime(n), &R);
            reference_bytes(&mut want, &mut pairs, &mut last_t, TAG_EVENT, n, &R);
            assert_eq!(t.digest_hex(), reference_digest(&want), "{n} + 1 records");
        }
    }

    const R: TraceRecord = TraceRecord {
        component: "vtgate",
        index: 3,
        kind: "poll",
        a: 300,
        b: 0,
    };

    /// The bytes of `R` as an event or draw record with time delta `dt`, its pair numbered
    /// `p` (0: its first record, names spelt out).
    fn timed_bytes(tag: u8, p: u8, dt: u64) -> Vec<u8> {
        let mut want = vec![p << 2 | tag];
        leb128(&mut want, dt);
        if p == 0 {
            want.push(6);
            want.extend_from_slice(b"vtgate");
            want.push(4);
            want.extend_from_slice(b"poll");
        }
        want.push(3);
        want.extend_from_slice(&[0xAC, 0x02]); // 300
        want.push(0);
        want
    }

    /// The word encoder against the byte loop, at every length boundary (2^(7k) and its
    /// neighbours), at every power of two and its neighbours, and at random values of every
    /// bit length, at the first and the last offset a record's word can start at: the same
    /// bytes and the same end.
    #[test]
    fn the_word_encoder_writes_the_reference_bytes() {
        use rand::{Rng, SeedableRng};
        let mut vs = vec![0u64, 1, u64::MAX, u64::MAX - 1];
        for k in 0..64 {
            let p = 1u64 << k;
            vs.extend([p - 1, p, p + 1]);
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for bits in 1..=64u32 {
            for _ in 0..200 {
                vs.push(rng.next_u64() >> (64 - bits));
            }
        }
        for &v in &vs {
            let mut want = vec![];
            leb128(&mut want, v);
            for at in [0, 7, MAX_RECORD - 10] {
                let mut out = [0xAAu8; MAX_RECORD];
                let end = leb128_at(&mut out, at, v);
                assert_eq!(end, at + want.len(), "end of {v:#x} at {at}");
                assert_eq!(&out[at..end], &want[..], "bytes of {v:#x} at {at}");
                assert!(out[..at].iter().all(|&b| b == 0xAA), "wrote before {at}");
            }
        }
    }

    #[test]
    fn the_encoding_is_the_documented_one() {
        let mut t = Trace::digest_only();
        t.event(SimTime(1_000), &R);
        t.draw(SimTime(1_000), &R);
        t.event(SimTime(1_500), &R);
        let names = metric_names_digest(["errors", "p"]);
        assert_eq!(&names, blake3::hash(b"\x06errors\x01p").as_bytes());
        t.metric_names(&names);
        t.metric(0, "errors", 2.0);
        t.metric(1, "p", f64::NAN);
        let mut want = vec![];
        want.extend(timed_bytes(0x01, 0, 1_000));
        want.extend(timed_bytes(0x02, 1, 0));
        want.extend(timed_bytes(0x01, 1, 500));
        want.push(0x04);
        want.extend_from_slice(&names);
        want.extend_from_slice(&[0x03, 0]);
        want.extend_from_slice(&2.0f64.to_bits().to_le_bytes());
        want.extend_from_slice(&[0x03, 1]);
        want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0xF8, 0x7F]);
        assert_eq!(&want[1..3], &[0xE8, 0x07]); // 1000
        assert_eq!(t.digest_hex(), reference_digest(&want));
        assert_eq!((t.events(), t.draws(), t.metrics()), (2, 1, 2));
        // A second pair gets number 2; the same text at another address is the same pair.
        let other_kind = String::from("poll").leak();
        let same = TraceRecord {
            kind: other_kind,
            ..R
        };
        let second = TraceRecord { kind: "tick", ..R };
        t.event(SimTime(1_500), &second);
        t.event(SimTime(1_500), &same);
        t.event(SimTime(1_500), &second);
        want.extend_from_slice(&[0x01, 0, 6]);
        want.extend_from_slice(b"vtgate");
        want.push(4);
        want.extend_from_slice(b"tick");
        want.extend_from_slice(&[3, 0xAC, 0x02, 0]);
        want.extend(timed_bytes(0x01, 1, 0));
        want.extend_from_slice(&[2 << 2 | 0x01, 0, 3, 0xAC, 0x02, 0]);
        assert_eq!(t.digest_hex(), reference_digest(&want));
    }

    /// One trace of `n` event records of `R` with the kinds `kind(i)`: its digest must be the
    /// reference encoder's, which numbers pairs by text. Returns the distinct pairs.
    fn check_trace(n: u64, kind: impl Fn(u64) -> &'static str) -> usize {
        let mut t = Trace::digest_only();
        let (mut want, mut last_t) = (Vec::new(), 0u64);
        let mut pairs = std::collections::HashMap::new();
        for i in 0..n {
            let r = TraceRecord { kind: kind(i), ..R };
            t.event(SimTime(i), &r);
            reference_bytes(&mut want, &mut pairs, &mut last_t, TAG_EVENT, i, &r);
        }
        assert_eq!(t.digest_hex(), reference_digest(&want));
        pairs.len()
    }

    /// Two pairs whose addresses hash to one slot, recorded in turn, both stay in the table
    /// (the two ways of their slot), so neither misses again; a third pair of that slot takes
    /// it and the pair it displaced stays in the other way.
    #[test]
    fn two_pairs_of_one_slot_both_stay() {
        let mut by_slot: std::collections::HashMap<usize, Vec<&'static str>> = Default::default();
        let same = (0..100_000)
            .find_map(|i| {
                let c: &'static str = format!("c{i}").leak();
                let v = by_slot.entry(Names::slot_of(c, "k")).or_default();
                v.push(c);
                (v.len() == 3).then(|| v.clone())
            })
            .expect("three pairs of one slot");
        let i = Names::slot_of(same[0], "k");
        let mut names = Names::new();
        names.reset();
        let (a, b, c) = (same[0], same[1], same[2]);
        assert_eq!((names.number(a, "k"), names.number(b, "k")), (0, 0));
        for _ in 0..3 {
            assert_eq!((names.number(a, "k"), names.number(b, "k")), (1, 2));
        }
        let held = |n: &Names, x: &'static str| {
            n.holds(&n.slots[i], x, "k") || n.holds(&n.slots[i ^ 1], x, "k")
        };
        assert!(held(&names, a) && held(&names, b));
        assert_eq!(names.number(c, "k"), 0);
        assert!(names.holds(&names.slots[i], c, "k"));
        assert_eq!(names.number(c, "k"), 3);
        assert!(
            held(&names, a) != held(&names, b),
            "one of the first two stays"
        );
    }

    /// The address pairs the next trace on this thread starts with.
    fn known_addresses() -> usize {
        drop(Trace::digest_only()); // takes the spare tables and puts them back
        SPARE_BUFS.with(|s| s.borrow().last().map_or(0, |b| b.names.known_len))
    }

    /// Pair numbers past the one-byte heads (31 pairs), records of pairs whose addresses
    /// collide in the slot table, and a pair met again under a new address: the bytes are the
    /// reference encoder's, which numbers pairs by text. Then traces on the same thread, which
    /// reuse the text ids of the first, with their pairs in other orders (each trace numbers
    /// them afresh) and more copies: the bytes are still the reference encoder's.
    #[test]
    fn name_numbers_depend_only_on_the_text() {
        let kinds: Vec<&'static str> = (0..300).map(|i| &*format!("k{i}").leak()).collect();
        // Every tenth record names its kind through a fresh copy (a new address).
        let copy_every_tenth = |i: u64, k: &'static str| -> &'static str {
            if i.is_multiple_of(10) {
                String::from(k).leak()
            } else {
                k
            }
        };
        let n = check_trace(20_000, |i| {
            copy_every_tenth(i, kinds[((i * 7919) % 300) as usize])
        });
        assert_eq!(n, 300);
        let met = known_addresses();
        // The 30 kinds of index 0 mod 10 are met only through copies.
        assert_eq!(met, 270 + 2_000);
        // Another order, the same addresses but those 30: no other address is new.
        let n = check_trace(5_000, |i| kinds[((i * 104_729 + 17) % 300) as usize]);
        assert_eq!((n, known_addresses()), (300, met + 30));
        // A few of them, first met in another order, and new copies of them.
        let n = check_trace(600, |i| {
            copy_every_tenth(i, kinds[(299 - (i * 31) % 40) as usize])
        });
        assert_eq!((n, known_addresses()), (40, met + 30 + 60));
    }

    /// A thread that keeps meeting new addresses gets its tables emptied between traces, and
    /// the numbering goes on by text.
    #[test]
    fn the_address_table_stays_bounded() {
        let fresh = |i: u64| -> &'static str { format!("k{}", i % 50).leak() };
        assert_eq!(check_trace(KNOWN_KEPT as u64 + 10, fresh), 50);
        assert_eq!(known_addresses(), 0);
        assert_eq!(check_trace(100, fresh), 50);
        assert_eq!(known_addresses(), 100);
    }

    /// The reference encoder: the documented byte string, built in one `Vec`; `pairs` is the
    /// trace's (component, kind) pairs by text, with their numbers.
    fn reference_bytes(
        out: &mut Vec<u8>,
        pairs: &mut std::collections::HashMap<(String, String), u64>,
        last_t: &mut u64,
        tag: u8,
        t: u64,
        r: &TraceRecord,
    ) {
        let name = |out: &mut Vec<u8>, s: &str| {
            let n = s.len().min(255);
            out.push(n as u8);
            out.extend_from_slice(&s.as_bytes()[..n]);
        };
        let key = (r.component.to_string(), r.kind.to_string());
        let p = pairs.get(&key).copied().unwrap_or(0);
        leb128(out, p << 2 | tag as u64);
        leb128(out, t.wrapping_sub(*last_t));
        *last_t = t;
        if p == 0 {
            let n = pairs.len() as u64 + 1;
            pairs.insert(key, n);
            name(out, r.component);
            name(out, r.kind);
        }
        leb128(out, r.index as u64);
        leb128(out, r.a);
        leb128(out, r.b);
    }

    /// Records of every name length (0 to 300 bytes: cut at 255), every LEB128 length and
    /// enough of them to fill the 64 KiB buffer several times: the buffered digest is the
    /// BLAKE3 hash of the whole byte string in one call, whatever the flush points.
    #[test]
    fn the_buffered_digest_is_the_hash_of_the_whole_encoding() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let names: Vec<&'static str> = (0..=300)
            .map(|n| &*Box::leak("abcdefghij".repeat(31)[..n].to_string().into_boxed_str()))
            .collect();
        let mut t = Trace::digest_only();
        let (mut want, mut last_t, mut now) = (Vec::new(), 0u64, 0u64);
        let mut pairs = std::collections::HashMap::new();
        let mut checked_midway = false;
        for i in 0..40_000u32 {
            let word = |rng: &mut rand_chacha::ChaCha8Rng| rng.next_u64() >> (rng.next_u32() % 64);
            let r = TraceRecord {
                component: names[(rng.next_u32() % 301) as usize],
                index: rng.next_u32() >> (rng.next_u32() % 32),
                kind: names[(rng.next_u32() % 20) as usize],
                a: word(&mut rng),
                b: word(&mut rng),
            };
            now = match i % 3 {
                0 => now,
                1 => now + word(&mut rng) % 1_000_000,
                _ => word(&mut rng), // also backwards: Δt wraps
            };
            let tag = if i % 4 == 0 { TAG_DRAW } else { TAG_EVENT };
            if tag == TAG_DRAW {
                t.draw(SimTime(now), &r);
            } else {
                t.event(SimTime(now), &r);
            }
            reference_bytes(&mut want, &mut pairs, &mut last_t, tag, now, &r);
            if i % 7 == 0 {
                let n = names[(rng.next_u32() % 301) as usize];
                let v = f64::from_bits(rng.next_u64());
                // A names record of one name (every name length, cut at 255), then the metric.
                let digest = metric_names_digest([n]);
                t.metric_names(&digest);
                t.metric(i, n, v);
                let mut spelt = vec![n.len().min(255) as u8];
                spelt.extend_from_slice(&n.as_bytes()[..n.len().min(255)]);
                assert_eq!(&digest, blake3::hash(&spelt).as_bytes());
                want.push(TAG_METRIC_NAMES);
                want.extend_from_slice(&digest);
                want.push(TAG_METRIC);
                leb128(&mut want, i as u64);
                want.extend_from_slice(&metric_bits(v).to_le_bytes());
            }
            if i == 20_000 {
                assert_eq!(t.digest_hex(), reference_digest(&want));
                checked_midway = true;
            }
        }
        assert!(
            checked_midway && want.len() > 4 * FLUSH_AT,
            "{} bytes",
            want.len()
        );
        assert_eq!(t.digest_hex(), reference_digest(&want));
        // The next trace on this thread reuses the (dirty) buffer: it hashes only its own bytes.
        drop(t);
        let mut u = Trace::digest_only();
        u.event(SimTime(1_000), &R);
        let (mut one, mut last_t) = (Vec::new(), 0);
        reference_bytes(
            &mut one,
            &mut Default::default(),
            &mut last_t,
            TAG_EVENT,
            1_000,
            &R,
        );
        assert_eq!(u.digest_hex(), reference_digest(&one));
    }

    #[test]
    fn reading_the_digest_does_not_disturb_what_follows() {
        let mut t = Trace::digest_only();
        t.event(SimTime(1_000), &R);
        let _ = t.digest_hex();
        t.event(SimTime(2_000), &R);
        let mut u = Trace::digest_only();
        u.event(SimTime(1_000), &R);
        u.event(SimTime(2_000), &R);
        assert_eq!(t.digest_hex(), u.digest_hex());
    }

    /// Digests read while the bytes are in the buffer alone (below and past 8 KiB) and after
    /// flushes, in two long traces in a row on one thread (the second reuses the first one's
    /// hasher and buffer): each is the hash of the bytes so far.
    #[test]
    fn every_digest_read_on_the_way_is_the_hash_so_far() {
        for _ in 0..2 {
            let mut t = Trace::digest_only();
            let (mut want, mut last_t) = (Vec::new(), 0u64);
            let mut pairs = std::collections::HashMap::new();
            let mut read = 0;
            for i in 0..30_000u64 {
                let r = TraceRecord { a: i * i, ..R };
                t.event(SimTime(i * 3), &r);
                reference_bytes(&mut want, &mut pairs, &mut last_t, TAG_EVENT, i * 3, &r);
                if [0, 1, 500, 1_500, 2_000, 9_000, 9_001, 29_999].contains(&i) {
                    assert_eq!(t.digest_hex(), reference_digest(&want));
                    read += 1;
                }
            }
            // The reads cover the buffer alone below and past 8 KiB, and several flushes.
            assert!(want.len() > 3 * FLUSH_AT, "{} bytes", want.len());
            assert_eq!(read, 8);
        }
    }

    #[test]
    fn record_types_are_distinguished() {
        let digest = |f: &dyn Fn(&mut Trace)| {
            let mut t = Trace::digest_only();
            f(&mut t);
            t.digest_hex()
        };
        let e = digest(&|t| t.event(SimTime(7), &R));
        let d = digest(&|t| t.draw(SimTime(7), &R));
        assert_ne!(e, d);
        // An event then a draw is not a draw then an event.
        let ed = digest(&|t| {
            t.event(SimTime(7), &R);
            t.draw(SimTime(7), &R)
        });
        let de = digest(&|t| {
            t.draw(SimTime(7), &R);
            t.event(SimTime(7), &R)
        });
        assert_ne!(ed, de);
        // Every bit of a metric counts; its name (through the names record) and position
        // count too.
        let m = |p: u32, n: &'static str, v: f64| {
            digest(&|t| {
                t.metric_names(&metric_names_digest([n]));
                t.metric(p, n, v)
            })
        };
        assert_ne!(m(0, "x", 0.0), m(0, "x", -0.0));
        assert_ne!(
            m(0, "x", 1.0),
            m(0, "x", f64::from_bits(1.0f64.to_bits() + 1))
        );
        assert_ne!(m(0, "x", 1.0), m(0, "y", 1.0));
        assert_ne!(m(0, "x", 1.0), m(1, "x", 1.0));
        // Every NaN is one NaN.
        assert_eq!(
            m(0, "x", f64::NAN),
            m(0, "x", f64::from_bits(0xfff8_0000_0000_0001))
        );
    }

    #[test]
    fn the_jsonl_trace_has_one_line_per_record() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut t = Trace::with_jsonl(std::fs::File::create(&p).unwrap());
        t.event(SimTime(1_500_000_000), &R);
        t.draw(SimTime(1_500_000_000), &R);
        t.metric(0, "errors", 2.0);
        t.metric(1, "p", f64::INFINITY);
        t.metric(2, "q", 1e-7);
        t.finish().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                r#"{"type":"event","t_ns":1500000000,"t_s":1.5,"component":"vtgate","index":3,"kind":"poll","a":300,"b":0}"#,
                r#"{"type":"draw","t_ns":1500000000,"t_s":1.5,"component":"vtgate","index":3,"kind":"poll","a":300,"b":0}"#,
                r#"{"type":"metric","index":0,"name":"errors","value":2.0,"bits":"0x4000000000000000"}"#,
                r#"{"type":"metric","index":1,"name":"p","value":null,"bits":"0x7ff0000000000000"}"#,
                r#"{"type":"metric","index":2,"name":"q","value":1e-7,"bits":"0x3e7ad7f29abcaf48"}"#,
            ]
        );
        for l in lines {
            serde_json::from_str::<serde_json::Value>(l).unwrap();
        }
    }

    #[test]
    fn any_writer_takes_the_jsonl_lines() {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Shared::default();
        let mut t = Trace::with_writer(Box::new(buf.clone()));
        t.event(SimTime(5), &R);
        t.metric(0, "x", 0.5);
        t.finish().unwrap();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.starts_with(r#"{"type":"event","t_ns":5,"#), "{text}");
    }
}
