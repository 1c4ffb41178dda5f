//! The draw helpers of the rollout's components: their random streams, a duration drawn from
//! a lazy stream, poll jitter, and a vtgate's phase draw.

use super::params::DurationDist;
use crate::model::dist::uniform_offset;
use crate::sim::rng::{cached_stream, first_u64s, uniform01, unit_f64, LazyRng};
use crate::sim::{SimDuration, SimRng};

/// `sim::rng::stream(seed, tag, index)` with the tag's hash computed once per thread.
pub(crate) fn stream(seed: u64, tag: &'static str, index: u32) -> SimRng {
    cached_stream(seed, tag, index)
}

/// Uniform jitter in [0, j) drawn from `rng` (no draw when j is zero).
pub fn jitter(rng: &mut LazyRng, j: SimDuration) -> SimDuration {
    if j == SimDuration::ZERO {
        SimDuration::ZERO
    } else {
        uniform_offset(rng.get(), j)
    }
}

/// `d.sample_at(rng, index)` from a lazy stream, made only for a draw: a fixed duration
/// draws nothing, so a component whose durations are all fixed costs no generator.
#[inline]
pub(crate) fn sample_lazy(d: &DurationDist, rng: &mut LazyRng, index: usize) -> SimDuration {
    match d {
        DurationDist::Fixed { value } => *value,
        _ => d.sample_at(rng.get(), index),
    }
}

/// A vtgate's phase draw, the first of its stream `rng`: without jitter it is the stream's
/// only draw, `first`, its first `u64`, computed with the other vtgates' four at a time
/// ([`first_u64s`]) and no generator made ([`LazyRng`]); with jitter the generator is made at
/// once, as the polls draw from it (`first` unused).
#[inline]
pub(crate) fn phase_draw(rng: &mut LazyRng, jitter: SimDuration, first: u64) -> f64 {
    if jitter == SimDuration::ZERO {
        rng.first_u64_drawn(first);
        unit_f64(first)
    } else {
        uniform01(rng.get())
    }
}

/// The vtgates' first `u64`s for [`phase_draw`] into `out` (one per vtgate; left as they are
/// when there is jitter, where the phase comes from the generator).
pub(crate) fn phase_firsts(seed: u64, jitter: SimDuration, out: &mut [u64]) {
    if jitter == SimDuration::ZERO {
        first_u64s(seed, "vtgate", out);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cached_streams_are_the_kernel_streams() {
        use rand::Rng;
        for tag in [
            "vtgate",
            "workload",
            "tablet",
            "operator",
            "vtgate-fleet",
            "other",
        ] {
            for i in [0u32, 1, 7, 65535] {
                let mut a = super::stream(99, tag, i);
                let mut b = crate::sim::rng::stream(99, tag, i);
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
    }
}
