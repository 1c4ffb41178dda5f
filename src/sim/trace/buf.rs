//! The encode buffer a trace writes its records into, and the spare buffers, name tables
//! and hashers a thread keeps from its dropped traces for the next ones.

use super::encode::MAX_RECORD;
use super::names::Names;

/// Bytes the encoder collects before it hands them to the hasher in one `update`.
pub(super) const FLUSH_AT: usize = 64 * 1024;

/// The encode buffer: initialised bytes and a fill mark. Between records `len < FLUSH_AT`
/// and there are at least [`MAX_RECORD`] bytes past `len`, so a record is written with no
/// capacity check and no reallocation. It starts at 8 KiB (a model run of a few hundred
/// records never grows it) and doubles up to `FLUSH_AT + MAX_RECORD`. A dropped buffer is
/// kept for the next trace made on the same thread (a sweep makes one trace per run), so a
/// run neither allocates nor zeroes one; only the bytes below `len`, written by this trace,
/// are ever read.
pub(super) struct Buf {
    pub(super) bytes: Vec<u8>,
    pub(super) len: usize,
    /// The trace's name numbers (kept with the buffer, so a run reuses their tables too).
    pub(super) names: Names,
    /// The hasher, made when a trace first flushes (most runs are hashed from the buffer in
    /// one [`blake3::hash`] call and never need one) and kept with the buffer; boxed, as it
    /// is about 2 KB. It holds bytes of this trace only when `hashing`.
    pub(super) hasher: Option<Box<blake3::Hasher>>,
    /// Whether this trace has fed `hasher` (else it is spare, to be reset before use).
    pub(super) hashing: bool,
    /// Bytes of this trace already fed to `hasher`.
    pub(super) flushed: u64,
}

/// What a dropped trace leaves for the next one on its thread.
pub(super) struct Spare {
    bytes: Vec<u8>,
    pub(super) names: Names,
    hasher: Option<Box<blake3::Hasher>>,
}

thread_local! {
    /// Buffers, name tables and hashers of dropped traces, for the next ones on this thread.
    pub(super) static SPARE_BUFS: std::cell::RefCell<Vec<Spare>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A trace whose bytes all fit in this many (its buffer's starting size) and that never
/// flushed is hashed straight from its buffer by [`Trace::digest_hex`](super::Trace::digest_hex).
pub(super) const DIRECT_MAX: usize = 8192;

/// Spare buffers kept per thread.
const SPARE_KEPT: usize = 4;

impl Buf {
    pub(super) fn new() -> Self {
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
    pub(super) fn room(&mut self) -> &mut [u8; MAX_RECORD] {
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
