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
//!
//! The stream derivation (seeds, stream ids, their caches and [`LazyRng`]) is in `stream`,
//! the ChaCha8 first-block kernels (SSE2 and portable) in `chacha`, and the samplers
//! (uniform, exponential, normal, Poisson, shuffle) in `sample`; every item is re-exported
//! here.

mod chacha;
mod sample;
mod stream;
#[cfg(test)]
mod tests;

pub use chacha::{chacha8_first_block, chacha8_first_u64, chacha8_first_u64s4};
pub use sample::{
    below, exponential, poisson, shuffle, standard_exponential, standard_normal, uniform,
    uniform01, unit_f64,
};
pub use stream::{
    cached_stream, cached_stream_id, first_u64s, replicate_seed, splitmix64, stream, stream_id,
    LazyRng,
};

use rand_chacha::ChaCha8Rng;

/// The generator every component uses (a named portable generator of the rand book).
pub type SimRng = ChaCha8Rng;
