//! The ChaCha8 first-block kernels: the first block of a stream, and the first `u64` of
//! four streams at once, each with SSE2 on x86_64 and in portable code.

/// The first 16 words a `ChaCha8Rng` made by `from_seed(key)` and `set_stream(stream)` draws
/// (block 0 of the stream): the ChaCha block function with 8 rounds (D. J. Bernstein,
/// "ChaCha, a variant of Salsa20", 2008) on the state rand_chacha lays out (constants, the
/// key's eight little-endian words, the 64-bit block counter 0, the 64-bit stream id), one
/// block where the generator computes four. Checked word for word against rand_chacha by
/// the tests below (both versions, on x86_64).
#[inline]
pub fn chacha8_first_block(key: &[u8; 32], stream: u64) -> [u32; 16] {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it, and
        // `chacha8_first_block_sse2` uses nothing else.
        unsafe { chacha8_first_block_sse2(key, stream) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    chacha8_first_block_portable(key, stream)
}

/// The first `u64` a generator draws from its first block: words 0 and 1, low word first.
#[inline(always)]
pub fn chacha8_first_u64(block: &[u32; 16]) -> u64 {
    u64::from(block[1]) << 32 | u64::from(block[0])
}

/// Words 0 and 1 of [`chacha8_first_block`] for four streams of one key, as a `u64` (low
/// word first, as the generator's `next_u64`): the four blocks' states side by side, a word
/// of each in one lane, so every quarter-round of the four runs at once and the rows need no
/// shuffles (the layout rand_chacha's wide refill uses).
#[inline]
pub fn chacha8_first_u64s4(key: &[u8; 32], streams: [u64; 4]) -> [u64; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of the x86_64 baseline, and the function uses nothing else.
        unsafe { chacha8_first_u64s4_sse2(key, streams) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    chacha8_first_u64s4_portable(key, streams)
}

/// The initial states of four streams' first blocks, word by word: word `i` of stream `l`
/// is `[i][l]` (the rows of [`chacha8_rows`], four streams side by side).
#[inline(always)]
fn chacha8_lanes(key: &[u8; 32], streams: [u64; 4]) -> [[u32; 4]; 16] {
    let rows = streams.map(|s| chacha8_rows(key, s));
    std::array::from_fn(|i| std::array::from_fn(|l| rows[l][i / 4][i % 4]))
}

/// [`chacha8_first_u64s4`] with SSE2: a state word of the four blocks a register.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn chacha8_first_u64s4_sse2(key: &[u8; 32], streams: [u64; 4]) -> [u64; 4] {
    use std::arch::x86_64::*;
    let mut x: [__m128i; 16] = chacha8_lanes(key, streams)
        .map(|v| _mm_setr_epi32(v[0] as i32, v[1] as i32, v[2] as i32, v[3] as i32));
    let (c0, c1) = (x[0], x[1]);
    macro_rules! rotl {
        ($v:expr, $l:literal, $r:literal) => {
            _mm_or_si128(_mm_slli_epi32::<$l>($v), _mm_srli_epi32::<$r>($v))
        };
    }
    macro_rules! qr {
        ($a:literal, $b:literal, $c:literal, $d:literal) => {
            x[$a] = _mm_add_epi32(x[$a], x[$b]);
            let t = _mm_xor_si128(x[$d], x[$a]);
            x[$d] = _mm_shufflehi_epi16::<0b10_11_00_01>(_mm_shufflelo_epi16::<0b10_11_00_01>(t));
            x[$c] = _mm_add_epi32(x[$c], x[$d]);
            let t = _mm_xor_si128(x[$b], x[$c]);
            x[$b] = rotl!(t, 12, 20);
            x[$a] = _mm_add_epi32(x[$a], x[$b]);
            let t = _mm_xor_si128(x[$d], x[$a]);
            x[$d] = rotl!(t, 8, 24);
            x[$c] = _mm_add_epi32(x[$c], x[$d]);
            let t = _mm_xor_si128(x[$b], x[$c]);
            x[$b] = rotl!(t, 7, 25);
        };
    }
    for _ in 0..4 {
        qr!(0, 4, 8, 12);
        qr!(1, 5, 9, 13);
        qr!(2, 6, 10, 14);
        qr!(3, 7, 11, 15);
        qr!(0, 5, 10, 15);
        qr!(1, 6, 11, 12);
        qr!(2, 7, 8, 13);
        qr!(3, 4, 9, 14);
    }
    let lo = _mm_add_epi32(x[0], c0);
    let hi = _mm_add_epi32(x[1], c1);
    let mut out = [0u64; 4];
    // (lo, hi) word pairs of lanes 0, 1 and then 2, 3: little-endian u64s.
    // SAFETY: `out` is 32 bytes, two unaligned 16-byte stores.
    unsafe {
        _mm_storeu_si128(out.as_mut_ptr().cast(), _mm_unpacklo_epi32(lo, hi));
        _mm_storeu_si128(out.as_mut_ptr().add(2).cast(), _mm_unpackhi_epi32(lo, hi));
    }
    out
}

/// [`chacha8_first_u64s4`] in portable code, on `[u32; 4]` lanes.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn chacha8_first_u64s4_portable(key: &[u8; 32], streams: [u64; 4]) -> [u64; 4] {
    let init = chacha8_lanes(key, streams);
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // four words of one lane, not one array
    fn qr(x: &mut [[u32; 4]; 16], a: usize, b: usize, c: usize, d: usize) {
        for l in 0..4 {
            x[a][l] = x[a][l].wrapping_add(x[b][l]);
            x[d][l] = (x[d][l] ^ x[a][l]).rotate_left(16);
            x[c][l] = x[c][l].wrapping_add(x[d][l]);
            x[b][l] = (x[b][l] ^ x[c][l]).rotate_left(12);
            x[a][l] = x[a][l].wrapping_add(x[b][l]);
            x[d][l] = (x[d][l] ^ x[a][l]).rotate_left(8);
            x[c][l] = x[c][l].wrapping_add(x[d][l]);
            x[b][l] = (x[b][l] ^ x[c][l]).rotate_left(7);
        }
    }
    let mut x = init;
    for _ in 0..4 {
        qr(&mut x, 0, 4, 8, 12);
        qr(&mut x, 1, 5, 9, 13);
        qr(&mut x, 2, 6, 10, 14);
        qr(&mut x, 3, 7, 11, 15);
        qr(&mut x, 0, 5, 10, 15);
        qr(&mut x, 1, 6, 11, 12);
        qr(&mut x, 2, 7, 8, 13);
        qr(&mut x, 3, 4, 9, 14);
    }
    std::array::from_fn(|l| {
        let lo = x[0][l].wrapping_add(init[0][l]);
        let hi = x[1][l].wrapping_add(init[1][l]);
        u64::from(hi) << 32 | u64::from(lo)
    })
}

/// The first block's initial rows: the constants, the key's two halves, counter 0 and the
/// stream id.
#[inline(always)]
fn chacha8_rows(key: &[u8; 32], stream: u64) -> [[u32; 4]; 4] {
    let w = |i: usize| u32::from_le_bytes([key[i], key[i + 1], key[i + 2], key[i + 3]]);
    [
        [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574],
        [w(0), w(4), w(8), w(12)],
        [w(16), w(20), w(24), w(28)],
        [0, 0, stream as u32, (stream >> 32) as u32],
    ]
}

/// [`chacha8_first_block`] with SSE2, a row a register (about a third of the portable
/// version's instructions).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn chacha8_first_block_sse2(key: &[u8; 32], stream: u64) -> [u32; 16] {
    use std::arch::x86_64::*;
    #[inline]
    #[target_feature(enable = "sse2")]
    fn rotl<const L: i32, const R: i32>(x: __m128i) -> __m128i {
        _mm_or_si128(_mm_slli_epi32::<L>(x), _mm_srli_epi32::<R>(x))
    }
    #[inline]
    #[target_feature(enable = "sse2")]
    fn rotl16(x: __m128i) -> __m128i {
        _mm_shufflehi_epi16::<0b10_11_00_01>(_mm_shufflelo_epi16::<0b10_11_00_01>(x))
    }
    #[inline]
    #[target_feature(enable = "sse2")]
    fn quarter_rounds(a: &mut __m128i, b: &mut __m128i, c: &mut __m128i, d: &mut __m128i) {
        *a = _mm_add_epi32(*a, *b);
        *d = rotl16(_mm_xor_si128(*d, *a));
        *c = _mm_add_epi32(*c, *d);
        *b = rotl::<12, 20>(_mm_xor_si128(*b, *c));
        *a = _mm_add_epi32(*a, *b);
        *d = rotl::<8, 24>(_mm_xor_si128(*d, *a));
        *c = _mm_add_epi32(*c, *d);
        *b = rotl::<7, 25>(_mm_xor_si128(*b, *c));
    }
    let row = |r: [u32; 4]| _mm_setr_epi32(r[0] as i32, r[1] as i32, r[2] as i32, r[3] as i32);
    let [k, b0, c0, d0] = chacha8_rows(key, stream).map(row);
    let (mut a, mut b, mut c, mut d) = (k, b0, c0, d0);
    for _ in 0..4 {
        // A column round, then a diagonal round on the rows turned into diagonals.
        quarter_rounds(&mut a, &mut b, &mut c, &mut d);
        b = _mm_shuffle_epi32::<0b00_11_10_01>(b);
        c = _mm_shuffle_epi32::<0b01_00_11_10>(c);
        d = _mm_shuffle_epi32::<0b10_01_00_11>(d);
        quarter_rounds(&mut a, &mut b, &mut c, &mut d);
        b = _mm_shuffle_epi32::<0b10_01_00_11>(b);
        c = _mm_shuffle_epi32::<0b01_00_11_10>(c);
        d = _mm_shuffle_epi32::<0b00_11_10_01>(d);
    }
    let rows = [
        _mm_add_epi32(a, k),
        _mm_add_epi32(b, b0),
        _mm_add_epi32(c, c0),
        _mm_add_epi32(d, d0),
    ];
    let mut out = [0u32; 16];
    for (o, r) in out.chunks_exact_mut(4).zip(rows) {
        // Lane i of `r` is word i of the row (little-endian lanes).
        let lo = _mm_cvtsi128_si64(r) as u64;
        let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(r, r)) as u64;
        o.copy_from_slice(&[lo as u32, (lo >> 32) as u32, hi as u32, (hi >> 32) as u32]);
    }
    out
}

/// [`chacha8_first_block`] in portable code, a row an array.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn chacha8_first_block_portable(key: &[u8; 32], stream: u64) -> [u32; 16] {
    #[inline(always)]
    fn add(x: &mut [u32; 4], y: &[u32; 4]) {
        for i in 0..4 {
            x[i] = x[i].wrapping_add(y[i]);
        }
    }
    #[inline(always)]
    fn xor_rotl(x: &mut [u32; 4], y: &[u32; 4], r: u32) {
        for i in 0..4 {
            x[i] = (x[i] ^ y[i]).rotate_left(r);
        }
    }
    #[inline(always)]
    fn quarter_rounds(a: &mut [u32; 4], b: &mut [u32; 4], c: &mut [u32; 4], d: &mut [u32; 4]) {
        add(a, b);
        xor_rotl(d, a, 16);
        add(c, d);
        xor_rotl(b, c, 12);
        add(a, b);
        xor_rotl(d, a, 8);
        add(c, d);
        xor_rotl(b, c, 7);
    }
    let [k, b0, c0, d0] = chacha8_rows(key, stream);
    let (mut a, mut b, mut c, mut d) = (k, b0, c0, d0);
    for _ in 0..4 {
        quarter_rounds(&mut a, &mut b, &mut c, &mut d);
        b = [b[1], b[2], b[3], b[0]];
        c = [c[2], c[3], c[0], c[1]];
        d = [d[3], d[0], d[1], d[2]];
        quarter_rounds(&mut a, &mut b, &mut c, &mut d);
        b = [b[3], b[0], b[1], b[2]];
        c = [c[2], c[3], c[0], c[1]];
        d = [d[1], d[2], d[3], d[0]];
    }
    add(&mut a, &k);
    add(&mut b, &b0);
    add(&mut c, &c0);
    add(&mut d, &d0);
    let mut out = [0u32; 16];
    for (row, x) in out.chunks_exact_mut(4).zip([a, b, c, d]) {
        row.copy_from_slice(&x);
    }
    out
}
