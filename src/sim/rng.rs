//! Seeded random streams, one per component.
//!
//! Every component (a vtgate, a tablet, the operator, a workload) draws from its own
//! `ChaCha8Rng`, seeded with the run seed and switched to a stream keyed by a *stable* id:
//! `stream_id(tag, index) = (first 4 bytes of blake3(tag), little-endian) << 32 | index`.
//! Adding a component, or changing another component's parameters, never changes the draws
//! of this one. `set_stream` is called right after seeding (the rand book's "Parallel RNGs"
//! chapter: one seed, a stream per work unit; `set_stream` after draws behaves differently in
//! rand_chacha and chacha20).
//!
//! Samplers use the `libm` crate's pure-Rust `log`/`exp`, so a draw is bit-identical on every
//! machine and C library, not only on this one.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The generator every component uses (a named portable generator of the rand book).
pub type SimRng = ChaCha8Rng;

/// The stable stream id of component `index` of kind `tag` (e.g. `("vtgate", 3)`).
pub fn stream_id(tag: &str, index: u32) -> u64 {
    let h = blake3::hash(tag.as_bytes());
    let b = h.as_bytes();
    let hi = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
    (hi << 32) | index as u64
}

/// `ChaCha8Rng::seed_from_u64(seed)`, the start of every stream of a run, with the seed's
/// expansion to a 32-byte key (rand_core's PCG32 fill) remembered for the last seed on this
/// thread: a run makes all its streams from one seed. `from_seed` of the same key is the same
/// generator, so the draws are those of `seed_from_u64(seed)`.
#[inline]
fn seeded(seed: u64) -> SimRng {
    ChaCha8Rng::from_seed(seed_key_cached(seed))
}

/// [`seed_key`] of `seed`, remembered for the last seed on this thread.
#[inline]
fn seed_key_cached(seed: u64) -> [u8; 32] {
    thread_local! {
        static LAST: std::cell::Cell<Option<(u64, [u8; 32])>> = const { std::cell::Cell::new(None) };
    }
    match LAST.with(|l| l.get()) {
        Some((s, k)) if s == seed => k,
        _ => {
            let k = seed_key(seed);
            LAST.with(|l| l.set(Some((seed, k))));
            k
        }
    }
}

/// The key `SeedableRng::seed_from_u64` expands `state` to (rand_core 0.10, `seedable_rng.rs`):
/// successive PCG32 outputs, little-endian.
fn seed_key(mut state: u64) -> [u8; 32] {
    const MUL: u64 = 6_364_136_223_846_793_005;
    const INC: u64 = 11_634_580_027_462_260_723;
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(4) {
        state = state.wrapping_mul(MUL).wrapping_add(INC);
        let xorshifted = (((state >> 18) ^ state) >> 27) as u32;
        let rot = (state >> 59) as u32;
        chunk.copy_from_slice(&xorshifted.rotate_right(rot).to_le_bytes());
    }
    key
}

/// The stream of component `(tag, index)` in the run seeded with `seed`.
pub fn stream(seed: u64, tag: &str, index: u32) -> SimRng {
    let mut r = seeded(seed);
    r.set_stream(stream_id(tag, index));
    r
}

/// The stream id of component `(tag, index)` with the tag's hash computed once per thread
/// (the same id as [`stream_id`]): for code that creates a stream per component per run.
pub fn cached_stream_id(tag: &'static str, index: u32) -> u64 {
    thread_local! {
        static BASES: std::cell::RefCell<Vec<(&'static str, u64)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let base = BASES.with(|b| {
        let b0 = b.borrow();
        // By address first (the same literal: no text comparison), then by text.
        if let Some((_, h)) = b0.iter().find(|(t, _)| std::ptr::eq(*t, tag)) {
            return *h;
        }
        // The same text at another address has the same id; the address is kept too.
        let h = match b0.iter().find(|(t, _)| *t == tag) {
            Some(&(_, h)) => h,
            None => stream_id(tag, 0),
        };
        drop(b0);
        b.borrow_mut().push((tag, h));
        h
    });
    base | index as u64
}

/// [`stream`] for a tag known at compile time, without hashing the tag again
/// ([`cached_stream_id`]): the same generator, the same draws.
pub fn cached_stream(seed: u64, tag: &'static str, index: u32) -> SimRng {
    let mut r = seeded(seed);
    r.set_stream(cached_stream_id(tag, index));
    r
}

/// A component's stream, created on its first draw: a component that never draws (fixed
/// durations, no queries, no faults) costs no generator. Its draws are exactly those of
/// `stream(seed, tag, index)`, whenever it is first used.
///
/// Drawn through its own [`Rng`] implementation (not [`LazyRng::get`]), a stream's first
/// `u64` comes from [`chacha8_first_block`] without a generator: for a component that makes
/// one draw a run (a vtgate's phase), that is a fraction of seeding a `ChaCha8Rng` and
/// refilling its four-block buffer. A later draw creates the generator and skips the words
/// already served, so the draws are the same either way.
pub struct LazyRng {
    /// The run seed.
    seed: u64,
    /// The stream id ([`stream_id`] of the tag and index).
    id: u64,
    /// The generator, once a draw has asked for it.
    rng: Option<SimRng>,
    /// Words of the stream served without the generator (0 or 2), which it skips when made.
    served: u8,
}

impl LazyRng {
    /// The stream of `(tag, index)` in the run seeded with `seed`, not yet created.
    pub fn new(seed: u64, tag: &'static str, index: u32) -> Self {
        LazyRng {
            seed,
            id: cached_stream_id(tag, index),
            rng: None,
            served: 0,
        }
    }
    /// The same component's stream in the run seeded with `seed`, not yet created (as
    /// [`LazyRng::new`] with this stream's tag and index).
    #[inline]
    pub fn reseed(&mut self, seed: u64) {
        self.seed = seed;
        self.rng = None;
        self.served = 0;
    }
    /// Record that this stream's first `u64` was drawn elsewhere, by [`first_u64s`] (many
    /// streams' first blocks at once): `x` is that draw, and the next draw here is the
    /// stream's second. Only on a stream not yet drawn from; builds with debug assertions
    /// check `x` against the stream's own first block.
    #[inline]
    pub fn first_u64_drawn(&mut self, x: u64) {
        debug_assert!(self.rng.is_none() && self.served == 0, "already drawn from");
        debug_assert_eq!(x, self.first_u64());
        let _ = x;
        self.served = 2;
    }
    /// The stream's first `u64`, from its first block, without a generator.
    #[inline]
    fn first_u64(&self) -> u64 {
        chacha8_first_u64(&chacha8_first_block(&seed_key_cached(self.seed), self.id))
    }
    /// The generator (created now if this is its first use).
    #[inline]
    pub fn get(&mut self) -> &mut SimRng {
        if self.rng.is_none() {
            self.rng = Some(self.make());
        }
        self.rng.as_mut().expect("made just above")
    }
    /// The generator at the position of the next draw.
    #[cold]
    #[inline(never)]
    fn make(&self) -> SimRng {
        let mut r = seeded(self.seed);
        r.set_stream(self.id);
        // The generator's output is a function of the word position alone, whatever mix of
        // u32 and u64 draws reached it: skip the words served from the first block.
        for _ in 0..self.served {
            r.next_u32();
        }
        r
    }
}

impl rand::TryRng for LazyRng {
    type Error = std::convert::Infallible;
    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.get().next_u32())
    }
    /// The stream's first `u64` straight from its first block; any other from the generator.
    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        if let Some(r) = &mut self.rng {
            return Ok(r.next_u64());
        }
        if self.served == 0 {
            self.served = 2;
            return Ok(self.first_u64());
        }
        Ok(self.get().next_u64())
    }
    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.get().fill_bytes(dst);
        Ok(())
    }
}

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

/// The first `u64` of the streams `(tag, 0)`, `(tag, 1)`, ... of the run seeded with `seed`,
/// one into each element of `out`: what `uniform01(&mut stream(seed, tag, i))` would draw
/// first, four streams at a time ([`chacha8_first_u64s4`]). A component that draws once a run
/// (a vtgate's phase) then costs a quarter of a block; [`LazyRng::first_u64_drawn`] tells its
/// stream.
pub fn first_u64s(seed: u64, tag: &'static str, out: &mut [u64]) {
    let key = seed_key_cached(seed);
    for (c, chunk) in out.chunks_mut(4).enumerate() {
        let ids: [u64; 4] = std::array::from_fn(|l| cached_stream_id(tag, (c * 4 + l) as u32));
        let x = chacha8_first_u64s4(&key, ids);
        chunk.copy_from_slice(&x[..chunk.len()]);
    }
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
fn chacha8_first_u64s4_portable(key: &[u8; 32], streams: [u64; 4]) -> [u64; 4] {
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
fn chacha8_first_block_portable(key: &[u8; 32], stream: u64) -> [u32; 16] {
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

/// SplitMix64 finaliser: a bijective, well-mixed map of u64 (Steele et al. 2014).
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of replicate `replicate` of an experiment seeded with `experiment_seed`.
/// It depends on nothing else, so every sweep point reuses the same seeds (common random numbers).
pub fn replicate_seed(experiment_seed: u64, replicate: u64) -> u64 {
    splitmix64(splitmix64(experiment_seed) ^ replicate.wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// Uniform in [0, 1) with 53 random bits.
#[inline]
pub fn uniform01<R: Rng>(rng: &mut R) -> f64 {
    unit_f64(rng.next_u64())
}

/// The uniform in [0, 1) [`uniform01`] makes of a 64-bit draw: its high 53 bits.
#[inline]
pub fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Exponential with the given mean: `mean` times a standard exponential from
/// [`standard_exponential`] (`mean <= 0` gives 0, and draws nothing). The number of draws
/// does not depend on the mean, so sweep points that scale a mean keep their common random
/// numbers.
#[inline]
pub fn exponential<R: Rng>(rng: &mut R, mean: f64) -> f64 {
    if mean <= 0.0 {
        return 0.0;
    }
    mean * standard_exponential(rng)
}

/// The ziggurat's right edge `r` for 256 layers of the exponential density (Marsaglia and
/// Tsang 2000, "The Ziggurat Method for Generating Random Variables", Journal of Statistical
/// Software 5(8), section 4; the value rand_distr's `ZIG_EXP_R` also uses).
const ZIG_EXP_R: f64 = 7.697_117_470_131_05;

/// The layers of the exponential ziggurat: `x[0] = v / f(r)` (the base layer, a rectangle of
/// height `f(r)` plus the tail beyond `r`, as one virtual rectangle of area `v`), `x[1] = r`,
/// `x[i + 1] = f⁻¹(f(x[i]) + v / x[i])` (each layer of area `v`), `x[256] = 0`, and
/// `f[i] = f(x[i]) = exp(-x[i])`, with `v = (r + 1) exp(-r)` (the tail's area plus the base
/// rectangle's). Computed once with `libm`, so they are the same bits on every machine.
struct ZigTables {
    x: [f64; 257],
    f: [f64; 257],
}

/// The area `v` of each layer: `(r + 1) exp(-r)`.
fn zig_exp_v() -> f64 {
    (ZIG_EXP_R + 1.0) * libm::exp(-ZIG_EXP_R)
}

fn zig_exp_tables() -> ZigTables {
    let r = ZIG_EXP_R;
    let v = zig_exp_v();
    let mut x = [0.0; 257];
    x[0] = v / libm::exp(-r);
    x[1] = r;
    for i in 1..255 {
        x[i + 1] = -libm::log(v / x[i] + libm::exp(-x[i]));
    }
    x[256] = 0.0;
    let mut f = [0.0; 257];
    for i in 0..257 {
        f[i] = libm::exp(-x[i]);
    }
    ZigTables { x, f }
}

static ZIG_EXP: std::sync::LazyLock<ZigTables> = std::sync::LazyLock::new(zig_exp_tables);

/// The layer a 64-bit draw picks (its low 8 bits) and its point `u · x[layer]`, `u` in (0, 1)
/// from its high 52 bits.
#[inline(always)]
fn zig_point(t: &ZigTables, bits: u64) -> (usize, f64) {
    let i = (bits & 0xff) as usize;
    // [1, 2) from the high 52 bits, shifted into (0, 1): never 0.
    let u = f64::from_bits((bits >> 12) | 0x3ff0_0000_0000_0000) - (1.0 - f64::EPSILON / 2.0);
    (i, u * t.x[i])
}

/// A standard exponential (mean 1) by the ziggurat method (Marsaglia and Tsang 2000), in the
/// form of rand_distr's `Exp1` (rand_distr/src/utils.rs, `ziggurat`): one 64-bit draw gives
/// the layer (its low 8 bits) and a uniform in (0, 1) (its high 52 bits); 97.8 % of draws
/// end there with one multiplication and a comparison. The rest take a second uniform: the tail beyond
/// `r` (layer 0) is `r` plus an exponential by inversion (`-log1p(-u)`), and a draw in a
/// layer's wedge is accepted when a uniform point under the layer lies under the density.
/// A sample takes 1.034 64-bit draws on average (the test below counts them). Exact in
/// distribution up to floating-point rounding. It replaced `-log1p(-u)` for every
/// draw, which made every digest change (issue 15): `libm`'s `log1p` is a long chain of
/// dependent floating-point operations, about 20 % of an M/M/c+M run's time.
///
/// The one-draw path is inlined into each caller; the rest (2.2 % of samples) is a call.
#[inline]
pub fn standard_exponential<R: Rng>(rng: &mut R) -> f64 {
    let t = &*ZIG_EXP;
    let (i, x) = zig_point(t, rng.next_u64());
    if x < t.x[i + 1] {
        return x;
    }
    standard_exponential_rest(rng, t, i, x)
}

/// [`standard_exponential`] after a first point `x` in layer `i` that is not inside the
/// layer below: the base's tail, the wedge test, and further tries.
#[cold]
#[inline(never)]
fn standard_exponential_rest<R: Rng>(rng: &mut R, t: &ZigTables, i: usize, x: f64) -> f64 {
    let (mut i, mut x) = (i, x);
    loop {
        if i == 0 {
            return ZIG_EXP_R - libm::log1p(-uniform01(rng));
        }
        if t.f[i + 1] + (t.f[i] - t.f[i + 1]) * uniform01(rng) < libm::exp(-x) {
            return x;
        }
        (i, x) = zig_point(t, rng.next_u64());
        if x < t.x[i + 1] {
            return x;
        }
    }
}

/// Uniform in [lo, hi).
#[inline]
pub fn uniform<R: Rng>(rng: &mut R, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * uniform01(rng)
}

/// Uniform integer in `0..n` (Lemire's widening multiply, unbiased by rejection). `n > 0`.
#[inline]
pub fn below<R: Rng>(rng: &mut R, n: u64) -> u64 {
    assert!(n > 0, "below(0)");
    let threshold = n.wrapping_neg() % n;
    loop {
        let x = rng.next_u64();
        let m = (x as u128) * (n as u128);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// Standard normal by Box–Muller (one draw per call; two uniforms consumed).
pub fn standard_normal<R: Rng>(rng: &mut R) -> f64 {
    let u1 = 1.0 - uniform01(rng); // (0, 1]
    let u2 = uniform01(rng);
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
}

/// Poisson with mean `lambda`, exact in distribution (up to floating-point rounding): inversion
/// by sequential search below a mean of 10 (one uniform), the transformed rejection method PTRS
/// of Hörmann (1993, "The transformed rejection method for generating Poisson random
/// variables", Insurance: Mathematics and Economics 12(1), 39-45) from 10 on (two uniforms per
/// attempt, about 1.1 attempts per draw whatever the mean; the constants are the paper's, as in
/// numpy's `random_poisson_ptrs`, numpy/random/src/distributions/distributions.c). A mean that
/// is not positive (or NaN) gives 0.
#[inline]
pub fn poisson<R: Rng>(rng: &mut R, lambda: f64) -> u64 {
    if lambda.is_nan() || lambda <= 0.0 {
        return 0;
    }
    if lambda < 10.0 {
        poisson_inversion(rng, lambda)
    } else {
        poisson_ptrs(rng, lambda)
    }
}

/// Inversion by sequential search: the smallest k with U < F(k), F the Poisson cdf built up
/// term by term (`0 < lambda < 10`, so `exp(-lambda)` is far from underflow and the search
/// takes about `lambda` steps).
fn poisson_inversion<R: Rng>(rng: &mut R, lambda: f64) -> u64 {
    let u = uniform01(rng);
    let mut p = libm::exp(-lambda);
    let mut f = p;
    let mut k = 0u64;
    while u >= f {
        k += 1;
        p *= lambda / k as f64;
        let next = f + p;
        if next == f {
            // The cdf has reached 1 in floating point (u within 1e-16 of 1): the tail left is
            // below rounding.
            break;
        }
        f = next;
    }
    k
}

/// PTRS (Hörmann 1993, algorithm PTRS), `lambda >= 10`.
fn poisson_ptrs<R: Rng>(rng: &mut R, lambda: f64) -> u64 {
    let slam = libm::sqrt(lambda);
    let b = 0.931 + 2.53 * slam;
    let a = -0.059 + 0.02483 * b;
    let invalpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    let mut logs: Option<(f64, f64)> = None;
    loop {
        let u = uniform01(rng) - 0.5;
        let v = uniform01(rng);
        let us = 0.5 - u.abs();
        // `as` saturates: an infinite or huge value (us near 0) lands far outside and is
        // rejected below.
        let k = floor_i64((2.0 * a / us + b) * u + lambda + 0.43);
        if us >= 0.07 && v <= vr {
            return k as u64;
        }
        if k < 0 || (us < 0.013 && v > us) {
            continue;
        }
        // log(lambda) and log(invalpha) only here, once a draw: most draws are accepted
        // above without them (pure functions, so computing them on the way, as numpy does,
        // or here gives the same values).
        let (loglam, log_invalpha) =
            *logs.get_or_insert_with(|| (libm::log(lambda), libm::log(invalpha)));
        // log(v) of v == 0 is -inf, which accepts: the same as the paper.
        if libm::log(v) + log_invalpha - libm::log(a / (us * us) + b)
            <= -lambda + k as f64 * loglam - log_factorial(k as u64)
        {
            return k as u64;
        }
    }
}

/// `floor(x) as i64` (saturating, NaN to 0), without a call: truncate toward zero, then step
/// down where that rounded a negative non-integer up. Floor is exact, so this is
/// `libm::floor(x) as i64` for every `x` (a test checks the edges and a million draws).
#[inline]
fn floor_i64(x: f64) -> i64 {
    let t = x as i64;
    if (t as f64) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// How many `log(k!)` [`log_factorial`] keeps.
const LOG_FACTORIALS: usize = 2048;

/// `lgamma(k + 1)` for `k < LOG_FACTORIALS`, computed once with `libm`.
static LOG_FACTORIAL: std::sync::LazyLock<Box<[f64]>> = std::sync::LazyLock::new(|| {
    (0..LOG_FACTORIALS)
        .map(|k| libm::lgamma(k as f64 + 1.0))
        .collect()
});

/// `log(k!)` as `libm::lgamma(k + 1)` gives it, the same bits: from a table below
/// `LOG_FACTORIALS` (PTRS's slow path, about a third of its draws at a mean of 100, needs
/// one a try), by `lgamma` above.
#[inline]
fn log_factorial(k: u64) -> f64 {
    match LOG_FACTORIAL.get(k as usize) {
        Some(&x) => x,
        None => libm::lgamma(k as f64 + 1.0),
    }
}

/// In-place Fisher–Yates shuffle.
pub fn shuffle<R: Rng, T>(rng: &mut R, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = below(rng, (i + 1) as u64) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent_of_each_other() {
        let mut a = stream(42, "vtgate", 0);
        let mut b = stream(42, "vtgate", 1);
        let mut a2 = stream(42, "vtgate", 0);
        let x: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let y: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let x2: Vec<u64> = (0..4).map(|_| a2.next_u64()).collect();
        assert_ne!(x, y);
        assert_eq!(x, x2);
    }

    #[test]
    fn a_lazy_stream_draws_what_the_eager_one_does() {
        let mut eager = stream(9, "tablet", 3);
        let mut lazy = LazyRng::new(9, "tablet", 3);
        let mut cached = cached_stream(9, "tablet", 3);
        for _ in 0..4 {
            let x = eager.next_u64();
            assert_eq!(lazy.get().next_u64(), x);
            assert_eq!(cached.next_u64(), x);
        }
        assert_ne!(
            LazyRng::new(9, "tablet", 4).get().next_u64(),
            stream(9, "tablet", 3).next_u64()
        );
    }

    /// Streams made through the per-thread seed cache, interleaving seeds and tags (so the
    /// cache is hit and missed), draw exactly what a freshly seeded generator does.
    #[test]
    fn the_seed_cache_changes_no_draw() {
        let fresh = |seed: u64, tag: &str, i: u32| {
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            r.set_stream(stream_id(tag, i));
            (0..70).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        for seed in [1u64, 1, 2, 1, u64::MAX, u64::MAX, 0] {
            for (tag, i) in [("vtgate", 0), ("vtgate", 9), ("tablet", 3)] {
                let mut a = stream(seed, tag, i);
                let mut b = cached_stream(seed, tag, i);
                let mut c = LazyRng::new(seed, tag, i);
                let want = fresh(seed, tag, i);
                assert_eq!((0..70).map(|_| a.next_u64()).collect::<Vec<_>>(), want);
                assert_eq!((0..70).map(|_| b.next_u64()).collect::<Vec<_>>(), want);
                assert_eq!(
                    (0..70).map(|_| c.get().next_u64()).collect::<Vec<_>>(),
                    want
                );
            }
        }
        assert_ne!(fresh(1, "vtgate", 0), fresh(2, "vtgate", 0));
    }

    /// The one-block ChaCha8 is rand_chacha's first block, for many keys and stream ids.
    #[test]
    fn the_first_block_is_the_generators() {
        for seed in [0u64, 1, 42, 0xDEAD_BEEF, u64::MAX] {
            for id in [0u64, 1, 7, 1 << 32, stream_id("vtgate", 3), u64::MAX] {
                let key = seed_key(seed);
                let mut r = ChaCha8Rng::from_seed(key);
                r.set_stream(id);
                let want: Vec<u32> = (0..16).map(|_| r.next_u32()).collect();
                assert_eq!(
                    chacha8_first_block(&key, id).to_vec(),
                    want,
                    "seed {seed} id {id}"
                );
                let portable = chacha8_first_block_portable(&key, id);
                assert_eq!(portable.to_vec(), want, "seed {seed} id {id}");
            }
        }
    }

    /// Drawn through its `Rng` (first u64 from the first block, then the generator), a lazy
    /// stream gives the eager stream's draws, in any mix of u32 and u64 draws, and after a
    /// reseed.
    #[test]
    fn a_lazy_stream_drawn_directly_draws_what_the_eager_one_does() {
        for seed in [3u64, 3, 17, u64::MAX] {
            for i in [0u32, 5, 9999] {
                let mut eager = stream(seed, "vtgate", i);
                let mut lazy = LazyRng::new(seed ^ 1, "vtgate", i);
                lazy.reseed(seed);
                for k in 0..40 {
                    if k % 3 == 2 {
                        assert_eq!(lazy.next_u32(), eager.next_u32(), "seed {seed} {i} {k}");
                    } else {
                        assert_eq!(lazy.next_u64(), eager.next_u64(), "seed {seed} {i} {k}");
                    }
                }
                // One draw through the trait, the rest through `get`.
                let mut eager = stream(seed, "tablet", i);
                let mut lazy = LazyRng::new(seed, "tablet", i);
                assert_eq!(lazy.next_u64(), eager.next_u64());
                for _ in 0..70 {
                    assert_eq!(lazy.get().next_u64(), eager.next_u64());
                }
            }
        }
        let (mut a, mut b) = (LazyRng::new(1, "vtgate", 0), LazyRng::new(1, "vtgate", 1));
        assert_ne!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn chacha8_first_draw_is_the_documented_one() {
        // rand_chacha 0.3, 0.9 and 0.10 all give 12578764544318200737 first for seed 42.
        let mut r = ChaCha8Rng::seed_from_u64(42);
        assert_eq!(r.next_u64(), 12578764544318200737);
    }

    #[test]
    fn poisson_mean_is_right() {
        let mut r = stream(7, "t", 0);
        for lambda in [0.5, 12.0, 80.0, 2000.0] {
            let n = 4000;
            let s: u64 = (0..n).map(|_| poisson(&mut r, lambda)).sum();
            let m = s as f64 / n as f64;
            let se = (lambda / n as f64).sqrt();
            assert!((m - lambda).abs() < 4.0 * se, "lambda {lambda}: mean {m}");
        }
    }

    /// The Poisson pmf at 0..=hi (log-space recurrence from the mode, independent of the
    /// sampler's `lgamma`).
    fn poisson_pmf(lambda: f64, hi: usize) -> Vec<f64> {
        let m = lambda.floor() as usize;
        let log_fact_m: f64 = (1..=m).map(|i| (i as f64).ln()).sum();
        let log_pm = -lambda + m as f64 * lambda.ln() - log_fact_m;
        let mut pmf = vec![0.0; hi.max(m) + 1];
        pmf[m] = log_pm.exp();
        for k in m + 1..pmf.len() {
            pmf[k] = pmf[k - 1] * lambda / k as f64;
        }
        for k in (0..m).rev() {
            pmf[k] = pmf[k + 1] * (k + 1) as f64 / lambda;
        }
        pmf.truncate(hi + 1);
        pmf
    }

    /// G statistic of `draws` against Poisson(`lambda`) and its degrees of freedom: cells are
    /// single values with expected count >= 5, the two tails pooled into the end cells.
    fn g_test(draws: &[u64], lambda: f64) -> (f64, usize) {
        let n = draws.len() as f64;
        let hi = (lambda + 12.0 * lambda.sqrt() + 30.0) as usize;
        let pmf = poisson_pmf(lambda, hi);
        let lo = pmf.iter().position(|p| p * n >= 5.0).unwrap();
        let top = pmf.iter().rposition(|p| p * n >= 5.0).unwrap();
        // Cell c covers value lo + c; the first also everything below, the last everything above.
        let cells = top - lo + 1;
        let mut expected: Vec<f64> = pmf[lo..=top].iter().map(|p| p * n).collect();
        expected[0] += pmf[..lo].iter().sum::<f64>() * n;
        let below_top: f64 = pmf[..=top].iter().sum();
        expected[cells - 1] += (1.0 - below_top).max(0.0) * n;
        let mut observed = vec![0u64; cells];
        for &x in draws {
            let c = (x as usize).clamp(lo, top) - lo;
            observed[c] += 1;
        }
        let g: f64 = observed
            .iter()
            .zip(&expected)
            .filter(|(o, _)| **o > 0)
            .map(|(&o, &e)| 2.0 * o as f64 * (o as f64 / e).ln())
            .sum();
        (g, cells - 1)
    }

    /// Upper 1e-6 quantile of chi-square with `df` degrees of freedom (Wilson-Hilferty).
    fn chi2_crit(df: usize) -> f64 {
        let d = df as f64;
        let z = 4.753; // standard normal upper 1e-6 point
        d * (1.0 - 2.0 / (9.0 * d) + z * (2.0 / (9.0 * d)).sqrt()).powi(3)
    }

    /// The sampler against the pmf at means on both sides of the switch at 10 and far out in
    /// PTRS's range; the same test rejects a rounded normal (the old sampler above 500) and a
    /// mean 3 % off, so it can fail.
    #[test]
    fn poisson_follows_the_pmf() {
        let n = 200_000;
        for (i, lambda) in [0.3, 2.5, 9.99, 10.0, 17.5, 63.0, 400.0, 5000.0, 1e5]
            .into_iter()
            .enumerate()
        {
            let mut r = stream(11, "poisson-g", i as u32);
            let draws: Vec<u64> = (0..n).map(|_| poisson(&mut r, lambda)).collect();
            let (g, df) = g_test(&draws, lambda);
            assert!(g < chi2_crit(df), "lambda {lambda}: G {g:.1} on {df} df");
        }
        let mut r = stream(11, "poisson-g", 100);
        let normal: Vec<u64> = (0..n)
            .map(|_| (30.0 + 30f64.sqrt() * standard_normal(&mut r) + 0.5).max(0.0) as u64)
            .collect();
        let (g, df) = g_test(&normal, 30.0);
        assert!(
            g > chi2_crit(df),
            "rounded normal not rejected: G {g:.1} on {df} df"
        );
        let off: Vec<u64> = (0..n).map(|_| poisson(&mut r, 200.0 * 1.03)).collect();
        let (g, df) = g_test(&off, 200.0);
        assert!(
            g > chi2_crit(df),
            "3 % off not rejected: G {g:.1} on {df} df"
        );
    }

    /// The layers against the published table (rand_distr's `ZIG_EXP_X` / `ZIG_EXP_F`,
    /// computed in higher precision by its `ziggurat_tables.py`) and the recurrence closing
    /// at 0: equal areas all the way up, so picking a layer uniformly is right.
    #[test]
    #[allow(clippy::excessive_precision)] // the published digits, as printed
    fn the_exponential_ziggurat_is_the_published_one() {
        let t = zig_exp_tables();
        let published = [
            (0, 8.697117470131052741, 0.000167066692307963),
            (1, 7.697117470131050077, 0.000454134353841497),
            (2, 6.941033629377212577, 0.000967269282327174),
            (128, 1.6703499537164521, 0.18818119940425426),
            (254, 0.104838507565818778, 0.900469929925747703),
            (255, 0.063852163815001570, 0.938143680862176477),
        ];
        for (i, x, f) in published {
            assert!((t.x[i] - x).abs() < 1e-12 * x, "x[{i}] {} vs {x}", t.x[i]);
            assert!((t.f[i] - f).abs() < 1e-12, "f[{i}] {} vs {f}", t.f[i]);
        }
        let top = -libm::log(zig_exp_v() / t.x[255] + libm::exp(-t.x[255]));
        assert!(top.abs() < 1e-9, "the top layer ends at {top}, not 0");
        assert_eq!((t.x[256], t.f[256]), (0.0, 1.0));
        for i in 0..256 {
            assert!(t.x[i] > t.x[i + 1] && t.f[i] < t.f[i + 1], "layer {i}");
        }
    }

    /// G statistic of standard exponential `draws` against Exp(1) on `cells` cells of equal
    /// probability, the last one open to infinity, and its degrees of freedom.
    fn exp_g_test(draws: &[f64], cells: usize) -> (f64, usize) {
        let n = draws.len() as f64;
        let mut observed = vec![0u64; cells];
        for &x in draws {
            // The cdf 1 - exp(-x) is uniform under the hypothesis.
            let c = ((-libm::expm1(-x)) * cells as f64) as usize;
            observed[c.min(cells - 1)] += 1;
        }
        let e = n / cells as f64;
        let g = observed
            .iter()
            .filter(|&&o| o > 0)
            .map(|&o| 2.0 * o as f64 * (o as f64 / e).ln())
            .sum();
        (g, cells - 1)
    }

    /// The sampler against the exponential's cdf on 2,000 equiprobable cells and its tail
    /// beyond the ziggurat's edge `r` (where the base layer hands over to inversion) and
    /// beyond `r + 3`; the same tests reject the sampler with its wedge test left out (every
    /// wedge draw accepted, about 1 % of the mass misplaced) and a mean 2 % off, so they can
    /// fail. Also measures how often one 64-bit draw is enough.
    #[test]
    fn the_exponential_follows_its_cdf() {
        let n = 2_000_000;
        let mut r = stream(13, "exp-g", 0);
        let draws: Vec<f64> = (0..n).map(|_| standard_exponential(&mut r)).collect();
        let (g, df) = exp_g_test(&draws, 2000);
        assert!(g < chi2_crit(df), "G {g:.1} on {df} df");
        let mean = draws.iter().sum::<f64>() / n as f64;
        // sd 1, so the mean's standard error is 1/sqrt(n); 5 standard errors.
        assert!((mean - 1.0).abs() < 5.0 / (n as f64).sqrt(), "mean {mean}");
        // Tail counts, Poisson: within 5 standard deviations of their expectation.
        for edge in [ZIG_EXP_R, ZIG_EXP_R + 3.0] {
            let k = draws.iter().filter(|&&x| x > edge).count() as f64;
            let e = n as f64 * libm::exp(-edge);
            assert!(
                (k - e).abs() < 5.0 * e.sqrt(),
                "beyond {edge}: {k} vs {e:.1}"
            );
        }
        // How many 64-bit draws a sample takes.
        struct Counting<'a>(&'a mut SimRng, u64);
        impl rand::TryRng for Counting<'_> {
            type Error = core::convert::Infallible;
            fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
                self.1 += 1;
                Ok(self.0.next_u32())
            }
            fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
                self.1 += 1;
                Ok(self.0.next_u64())
            }
            fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
                self.0.fill_bytes(dst);
                Ok(())
            }
        }
        let mut c = Counting(&mut r, 0);
        for _ in 0..100_000 {
            standard_exponential(&mut c);
        }
        // 256 v attempts a sample (the ziggurat's area over the density's), each of one draw
        // plus one more off the fast path (the mean of 1 - x[i+1]/x[i] over the layers):
        // 1.0336. The count's standard deviation is about 0.19 a sample.
        let t = zig_exp_tables();
        let slow = (0..256).map(|i| 1.0 - t.x[i + 1] / t.x[i]).sum::<f64>() / 256.0;
        let expected = 256.0 * zig_exp_v() * (1.0 + slow);
        let per = c.1 as f64 / 100_000.0;
        assert!(
            (per - expected).abs() < 5.0 * 0.19 / 100_000f64.sqrt(),
            "{per} draws a sample, {expected} expected"
        );

        // Without the wedge test: rejected.
        let no_wedge: Vec<f64> = (0..n)
            .map(|_| {
                let (i, x) = zig_point(&t, r.next_u64());
                if i == 0 && x >= t.x[1] {
                    ZIG_EXP_R - libm::log1p(-uniform01(&mut r))
                } else {
                    x
                }
            })
            .collect();
        let (g, df) = exp_g_test(&no_wedge, 2000);
        assert!(g > chi2_crit(df), "no wedge test not rejected: G {g:.1}");
        let off: Vec<f64> = (0..n).map(|_| exponential(&mut r, 1.02)).collect();
        let (g, df) = exp_g_test(&off, 2000);
        assert!(g > chi2_crit(df), "2 % off not rejected: G {g:.1}");
    }

    /// The draws are pinned: a change here changes the digest of every model that draws an
    /// exponential (all of them).
    #[test]
    fn exponential_draws_are_pinned() {
        let mut r = stream(5, "exp-pin", 0);
        let got: Vec<u64> = (0..8)
            .map(|_| standard_exponential(&mut r).to_bits())
            .collect();
        assert_eq!(
            got,
            vec![
                4606519615489702542,
                4612790533891082935,
                4613116426204088493,
                4598101942069241254,
                4606186170794011865,
                4613005163252117087,
                4601442828631284293,
                4600281803480597401
            ]
        );
        assert_eq!(exponential(&mut r, 0.0), 0.0);
        assert_eq!(exponential(&mut r, -1.0), 0.0);
    }

    #[test]
    fn floor_i64_is_libm_floor() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            -1.5,
            2.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            4503599627370495.5,
            -4503599627370495.5,
            9.223372036854775e18,
            -9.223372036854775e18,
            9.223372036854776e18,
            -9.223372036854776e18,
            -9.223372036854778e18,
        ];
        for k in [1.0f64, 2f64.powi(52), 2f64.powi(53), 2f64.powi(63)] {
            for x in [k, -k] {
                xs.extend([
                    x,
                    f64::from_bits(x.to_bits() + 1),
                    f64::from_bits(x.to_bits() - 1),
                ]);
            }
        }
        let mut r = stream(3, "floor", 0);
        for _ in 0..1_000_000 {
            let u = uniform01(&mut r) - 0.5;
            xs.push(u * 1e3);
            xs.push(1.0 / u);
        }
        for x in xs {
            assert_eq!(floor_i64(x), libm::floor(x) as i64, "{x:e}");
        }
    }

    /// Four streams' first `u64` at once are what each stream draws first, for every
    /// number of streams modulo 4; a stream told so draws its second next.
    #[test]
    fn first_u64s_are_each_streams_first_draw() {
        for seed in [0u64, 1, 0xDEAD_BEEF, u64::MAX] {
            for n in [0usize, 1, 3, 4, 5, 10, 13] {
                let mut out = vec![0u64; n];
                first_u64s(seed, "vtgate", &mut out);
                for (i, &x) in out.iter().enumerate() {
                    let mut eager = stream(seed, "vtgate", i as u32);
                    assert_eq!(x, eager.next_u64(), "seed {seed} stream {i}");
                    let mut lazy = LazyRng::new(seed, "vtgate", i as u32);
                    lazy.first_u64_drawn(x);
                    assert_eq!(lazy.next_u64(), eager.next_u64());
                    assert_eq!(lazy.next_u32(), eager.next_u32());
                }
            }
        }
        let mut r = stream(9, "keys", 0);
        for _ in 0..200 {
            let mut key = [0u8; 32];
            r.fill_bytes(&mut key);
            let ids: [u64; 4] = std::array::from_fn(|_| r.next_u64());
            let got = chacha8_first_u64s4(&key, ids);
            assert_eq!(got, chacha8_first_u64s4_portable(&key, ids));
            for l in 0..4 {
                assert_eq!(
                    got[l],
                    chacha8_first_u64(&chacha8_first_block(&key, ids[l]))
                );
            }
        }
    }

    /// The table gives `lgamma(k + 1)`'s bits, and so does the fallback past it.
    #[test]
    fn log_factorials_are_lgammas() {
        for k in (0..LOG_FACTORIALS as u64 + 10).chain([1 << 20, u32::MAX as u64]) {
            let want = libm::lgamma(k as f64 + 1.0);
            assert_eq!(log_factorial(k).to_bits(), want.to_bits(), "{k}");
        }
        assert_eq!(log_factorial(0), 0.0);
        assert!((log_factorial(10) - 3_628_800f64.ln()).abs() < 1e-12);
    }

    /// The draws are pinned: a change here changes every rollout digest.
    #[test]
    fn poisson_draws_are_pinned() {
        let mut r = stream(5, "poisson-pin", 0);
        let got: Vec<u64> = [0.0, -1.0, f64::NAN, 0.7, 9.5, 10.0, 250.0, 1e6]
            .into_iter()
            .map(|l| poisson(&mut r, l))
            .collect();
        assert_eq!(got, vec![0, 0, 0, 0, 9, 5, 273, 997_098]);
    }
}
