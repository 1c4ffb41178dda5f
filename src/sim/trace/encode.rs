//! The byte encoding of a trace's records (see the parent module's doc): the tag bytes,
//! unsigned LEB128 words, names, a metric's bits and the metric-names hash, the padding
//! that ends an encoding, and the digest's hex form.

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

/// The longest record: a head of at most 5 bytes (a 32-bit name number and the type), three
/// LEB128 words of at most 10 bytes and one of 5, two names of at most 1 + 255 bytes (a metric
/// record is shorter).
pub(super) const MAX_RECORD: usize = 5 + 10 + 256 + 256 + 5 + 10 + 10;

/// BLAKE3's chunk: the unit it hashes in parallel SIMD lanes.
pub(super) const CHUNK: usize = 1024;

/// The zero bytes that end an encoding of `len` bytes (see the module doc): up to the next
/// multiple of 1024 bytes (a BLAKE3 chunk) when it is longer than one chunk, else none.
#[inline]
pub(super) fn padding(len: u64) -> usize {
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
pub(super) fn hex(hash: &[u8; 32]) -> String {
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
pub(super) fn leb128_at(out: &mut [u8; MAX_RECORD], at: usize, v: u64) -> usize {
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
pub(super) fn name_at(out: &mut [u8; MAX_RECORD], at: usize, s: &str) -> usize {
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
pub(super) fn leb128(b: &mut Vec<u8>, mut v: u64) {
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
