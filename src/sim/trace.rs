//! The event trace and its running digest: the bit-for-bit proof of a run.
//!
//! Every event the engine pops is described by its world as a [`TraceRecord`]
//! (component, index, kind, two integer payload words) and fed to a running BLAKE3 digest.
//! The digest's input is documented and stable, so a digest printed today can be checked by
//! any later build and on any machine. For each event, in pop order, the bytes are:
//!
//! ```text
//! t_ns: u64 LE | len(component): u8 | component bytes | index: u32 LE
//!              | len(kind): u8 | kind bytes | a: u64 LE | b: u64 LE
//! ```
//!
//! The digest is the BLAKE3 hash of the concatenation of these records (hex in reports).
//! Optionally every record is also written as one JSON line:
//! `{"t_ns":..,"t_s":..,"component":"..","index":..,"kind":"..","a":..,"b":..}`.

use super::time::SimTime;
use std::io::Write;

/// What a world says about one event, for the trace and the digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// The component that handles the event (`"vtgate"`, `"tablet"`, `"operator"`...).
    pub component: &'static str,
    /// Which one of them.
    pub index: u32,
    /// What happens (`"poll"`, `"drain"`...).
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

const FLUSH_AT: usize = 64 * 1024;

/// Running digest plus an optional JSONL sink.
pub struct Trace {
    enabled: bool,
    hasher: blake3::Hasher,
    buf: Vec<u8>,
    jsonl: Option<std::io::BufWriter<std::fs::File>>,
    io_error: Option<std::io::Error>,
    count: u64,
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
            hasher: blake3::Hasher::new(),
            buf: Vec::with_capacity(FLUSH_AT + 256),
            jsonl: None,
            io_error: None,
            count: 0,
        }
    }
    /// Keep the digest and write every event as a JSON line to `file`.
    pub fn with_jsonl(file: std::fs::File) -> Self {
        let mut t = Self::digest_only();
        t.jsonl = Some(std::io::BufWriter::new(file));
        t
    }
    /// Record nothing: for kernel benchmarks that measure the engine without the digest.
    pub fn off() -> Self {
        let mut t = Self::digest_only();
        t.enabled = false;
        t
    }
    /// Events recorded so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Add one event to the digest (and to the JSONL file when there is one).
    #[inline]
    pub fn record(&mut self, t: SimTime, r: &TraceRecord) {
        if !self.enabled {
            return;
        }
        self.count += 1;
        let b = &mut self.buf;
        b.extend_from_slice(&t.0.to_le_bytes());
        let c = r.component.as_bytes();
        b.push(c.len().min(255) as u8);
        b.extend_from_slice(&c[..c.len().min(255)]);
        b.extend_from_slice(&r.index.to_le_bytes());
        let k = r.kind.as_bytes();
        b.push(k.len().min(255) as u8);
        b.extend_from_slice(&k[..k.len().min(255)]);
        b.extend_from_slice(&r.a.to_le_bytes());
        b.extend_from_slice(&r.b.to_le_bytes());
        if b.len() >= FLUSH_AT {
            self.hasher.update(b);
            b.clear();
        }
        if let Some(w) = self.jsonl.as_mut() {
            if self.io_error.is_none() {
                if let Err(e) = writeln!(
                    w,
                    "{{\"t_ns\":{},\"t_s\":{},\"component\":\"{}\",\"index\":{},\"kind\":\"{}\",\"a\":{},\"b\":{}}}",
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
    }

    /// The digest of everything recorded so far, as 64 hex characters.
    pub fn digest_hex(&self) -> String {
        let mut h = self.hasher.clone();
        h.update(&self.buf);
        h.finalize().to_hex().to_string()
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
