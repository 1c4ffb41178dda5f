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
//!
//! # Where the code is
//!
//! This module holds the [`Trace`] itself (the digest and the optional JSONL log) and the
//! record a world gives it ([`TraceRecord`]); the byte encoding of a record is in `encode`,
//! the encode buffer and the spares a thread keeps in `buf`, and the name numbers in `names`.

mod buf;
mod encode;
mod names;
#[cfg(test)]
mod tests;

pub use encode::{
    metric_bits, metric_names_digest, CANONICAL_NAN_BITS, TAG_DRAW, TAG_EVENT, TAG_METRIC,
    TAG_METRIC_NAMES,
};

use super::time::SimTime;
use buf::{Buf, DIRECT_MAX, FLUSH_AT};
use encode::{hex, leb128_at, name_at, padding, CHUNK};
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

/// The digest of a trace that is off ([`Trace::off`]): BLAKE3 of no bytes.
const EMPTY_DIGEST_HEX: &str = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262";

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
