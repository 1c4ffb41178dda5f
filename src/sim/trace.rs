//! The event trace and its running digest: the bit-for-bit proof of a run.
//!
//! Every event the engine pops is described by its world as a [`TraceRecord`]
//! (component, index, kind, two integer payload words) and fed to a running BLAKE3 digest.
//! The digest's input is documented and stable, so a digest printed today can be checked by
//! any later build and on any machine. For each event, in pop order, the bytes are:
//!
//! ```text
//! uleb128(t_ns − t_ns of the previous event) | len(component): u8 | component bytes
//!   | uleb128(index) | len(kind): u8 | kind bytes | uleb128(a) | uleb128(b)
//! ```
//!
//! (`uleb128` is unsigned LEB128: 7 bits a byte, low bits first, high bit set on all but the
//! last byte; the first event's delta is from 0; names longer than 255 bytes are cut at 255.)
//! The digest is the BLAKE3 hash of the concatenation of these records (hex in reports).
//! Variable-length integers keep a typical record near 20 bytes, which matters because the
//! digest is kept for every run of every sweep.
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

/// Append `v` as unsigned LEB128.
#[inline]
fn leb128(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push((v as u8) | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

/// Running digest plus an optional JSONL sink.
pub struct Trace {
    enabled: bool,
    // Boxed: the hasher is ~2 KB and a trace is moved into every run.
    hasher: Box<blake3::Hasher>,
    last_t: u64,
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
            hasher: Box::new(blake3::Hasher::new()),
            last_t: 0,
            buf: Vec::with_capacity(4096),
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
        leb128(b, t.0.wrapping_sub(self.last_t));
        self.last_t = t.0;
        let c = r.component.as_bytes();
        b.push(c.len().min(255) as u8);
        b.extend_from_slice(&c[..c.len().min(255)]);
        leb128(b, r.index as u64);
        let k = r.kind.as_bytes();
        b.push(k.len().min(255) as u8);
        b.extend_from_slice(&k[..k.len().min(255)]);
        leb128(b, r.a);
        leb128(b, r.b);
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

    #[test]
    fn the_encoding_is_the_documented_one() {
        let mut t = Trace::digest_only();
        let r = TraceRecord {
            component: "vtgate",
            index: 3,
            kind: "poll",
            a: 300,
            b: 0,
        };
        t.record(SimTime(1_000), &r);
        t.record(SimTime(1_000), &r);
        let mut want = vec![];
        for dt in [1_000u64, 0] {
            leb128(&mut want, dt);
            want.push(6);
            want.extend_from_slice(b"vtgate");
            want.push(3);
            want.push(4);
            want.extend_from_slice(b"poll");
            want.extend_from_slice(&[0xAC, 0x02]); // 300
            want.push(0);
        }
        assert_eq!(&want[..2], &[0xE8, 0x07]); // 1000
        assert_eq!(t.digest_hex(), blake3::hash(&want).to_hex().to_string());
        // Reading the digest does not disturb what follows.
        t.record(SimTime(2_000), &r);
        let mut u = Trace::digest_only();
        u.record(SimTime(1_000), &r);
        u.record(SimTime(1_000), &r);
        u.record(SimTime(2_000), &r);
        assert_eq!(t.digest_hex(), u.digest_hex());
    }
}
