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
//! 3. **metric**: the run's final metric values, in metric order, with their names, recorded
//!    once by [`Simulation::close_with_metrics`](super::Simulation::close_with_metrics), the
//!    only way a run ends and the only source of a [`RunEnd`](super::RunEnd), which is the
//!    only source of a model's `RunOutput`. So two runs whose metrics differ in any bit have
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
//! event  = 0x01 | uleb128(Δt) | str(component) | uleb128(index) | str(kind) | uleb128(a) | uleb128(b)
//! draw   = 0x02 | uleb128(Δt) | str(component) | uleb128(index) | str(kind) | uleb128(a) | uleb128(b)
//! metric = 0x03 | uleb128(position) | str(name) | bits: 8 bytes, little-endian
//! str(s) = len(s): u8 | the bytes of s   (a name longer than 255 bytes is cut at 255)
//! ```
//!
//! - The tag byte (`0x01` event, `0x02` draw, `0x03` metric) comes first, so no record of one
//!   type can be read as another.
//! - `Δt` is `t_ns` minus the `t_ns` of the previous event or draw record (the first one's
//!   is from 0); a draw is stamped with the current simulated time (an end-of-run draw with
//!   the time the run stopped).
//! - `uleb128` is unsigned LEB128: 7 bits a byte, low bits first, high bit set on all but the
//!   last byte.
//! - `position` is the metric's index in the model's metric list (0, 1, ...); `bits` is the
//!   IEEE-754 bit pattern of the value (`f64::to_bits`), except that every NaN is written as
//!   the canonical quiet NaN `0x7ff8000000000000` (NaN payloads differ between CPUs).
//!
//! The digest is the BLAKE3 hash of that byte string, shown as 64 hex characters.
//! Variable-length integers keep a typical record near 20 bytes, which matters because the
//! digest is kept for every run of every sweep; a plain event costs one tag byte more than an
//! untagged encoding, and no record allocates.
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
/// The bit pattern every NaN metric is digested as.
pub const CANONICAL_NAN_BITS: u64 = 0x7ff8_0000_0000_0000;

const FLUSH_AT: usize = 64 * 1024;

/// Append `v` as unsigned LEB128.
#[inline]
fn leb128(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push((v as u8) | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

/// Append a name: its length (cut at 255) and its bytes.
#[inline]
fn name(b: &mut Vec<u8>, s: &str) {
    let s = s.as_bytes();
    let n = s.len().min(255);
    b.push(n as u8);
    b.extend_from_slice(&s[..n]);
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

/// Running digest plus an optional JSONL sink.
pub struct Trace {
    enabled: bool,
    // Boxed: the hasher is ~2 KB and a trace is moved into every run.
    hasher: Box<blake3::Hasher>,
    last_t: u64,
    buf: Vec<u8>,
    jsonl: Option<std::io::BufWriter<Box<dyn Write + Send>>>,
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
            hasher: Box::new(blake3::Hasher::new()),
            last_t: 0,
            buf: Vec::with_capacity(4096),
            jsonl: None,
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
        let b = &mut self.buf;
        b.push(tag);
        leb128(b, t.0.wrapping_sub(self.last_t));
        self.last_t = t.0;
        name(b, r.component);
        leb128(b, r.index as u64);
        name(b, r.kind);
        leb128(b, r.a);
        leb128(b, r.b);
        if b.len() >= FLUSH_AT {
            self.hasher.update(b);
            b.clear();
        }
        if self.jsonl.is_some() {
            self.timed_json(tag, t, r);
        }
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

    /// Add the metric record of position `position`.
    pub fn metric(&mut self, position: u32, metric_name: &str, value: f64) {
        if !self.enabled {
            return;
        }
        self.metrics += 1;
        let bits = metric_bits(value);
        let b = &mut self.buf;
        b.push(TAG_METRIC);
        leb128(b, position as u64);
        name(b, metric_name);
        b.extend_from_slice(&bits.to_le_bytes());
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
        self.hasher.update(&self.buf);
        self.buf.clear();
        self.hasher.finalize().to_hex().to_string()
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

    const R: TraceRecord = TraceRecord {
        component: "vtgate",
        index: 3,
        kind: "poll",
        a: 300,
        b: 0,
    };

    /// The bytes of `R` as an event or draw record with time delta `dt`.
    fn timed_bytes(tag: u8, dt: u64) -> Vec<u8> {
        let mut want = vec![tag];
        leb128(&mut want, dt);
        want.push(6);
        want.extend_from_slice(b"vtgate");
        want.push(3);
        want.push(4);
        want.extend_from_slice(b"poll");
        want.extend_from_slice(&[0xAC, 0x02]); // 300
        want.push(0);
        want
    }

    #[test]
    fn the_encoding_is_the_documented_one() {
        let mut t = Trace::digest_only();
        t.event(SimTime(1_000), &R);
        t.draw(SimTime(1_000), &R);
        t.event(SimTime(1_500), &R);
        t.metric(0, "errors", 2.0);
        t.metric(1, "p", f64::NAN);
        let mut want = vec![];
        want.extend(timed_bytes(0x01, 1_000));
        want.extend(timed_bytes(0x02, 0));
        want.extend(timed_bytes(0x01, 500));
        want.extend_from_slice(&[0x03, 0, 6]);
        want.extend_from_slice(b"errors");
        want.extend_from_slice(&2.0f64.to_bits().to_le_bytes());
        want.extend_from_slice(&[0x03, 1, 1, b'p']);
        want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0xF8, 0x7F]);
        assert_eq!(&want[1..3], &[0xE8, 0x07]); // 1000
        assert_eq!(t.digest_hex(), blake3::hash(&want).to_hex().to_string());
        assert_eq!((t.events(), t.draws(), t.metrics()), (2, 1, 2));
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
        // Every bit of a metric counts; its name and position count too.
        let m = |p: u32, n: &'static str, v: f64| digest(&|t| t.metric(p, n, v));
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
