//! The stream derivation: a run's seed, the stable stream id of each component, the
//! per-thread caches of seed keys and tag hashes, [`LazyRng`] (a stream made on its first
//! draw), and the seeds of an experiment's replicates.

use super::chacha::{chacha8_first_block, chacha8_first_u64, chacha8_first_u64s4};
use super::SimRng;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
pub(super) fn seed_key(mut state: u64) -> [u8; 32] {
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
