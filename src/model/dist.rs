//! Random durations shared by the models: fixed, uniform, or a floor plus an exponential tail,
//! written in model files as `(kind: "Uniform", min: "3s", max: "10s")`. A draw comes from
//! the stream of the component that owns the duration.
//!
//! Two rules turn a draw into a [`SimDuration`], one for each kind of draw:
//! - a random *duration* ([`DurationDist::sample`], and the ProxySQL statement latency) is
//!   drawn in float seconds and rounded to the nearest nanosecond
//!   ([`SimDuration::from_secs_f64`]);
//! - a random *offset* within a period (a poll phase, a jitter, a probe phase:
//!   [`uniform_offset`]) is `floor(u × period)` in nanoseconds, so it stays below the period.

use super::kit::{fail, Checked};
use crate::sim::rng::{exponential, uniform, uniform01};
use crate::sim::{SimDuration, SimRng};
use serde::{Deserialize, Serialize};

/// A random duration (drawn from the owning component's stream).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum DurationDist {
    /// Always `value`.
    Fixed {
        /// The duration.
        value: SimDuration,
    },
    /// Uniform in [min, max).
    Uniform {
        /// Lower bound.
        min: SimDuration,
        /// Upper bound (exclusive; equal to `min` gives `min`).
        max: SimDuration,
    },
    /// `min` plus an exponential with mean `mean` (a floor plus a tail).
    ShiftedExponential {
        /// The floor.
        min: SimDuration,
        /// Mean of the exponential part.
        mean: SimDuration,
    },
}

impl DurationDist {
    /// A fixed duration.
    pub fn fixed(d: SimDuration) -> Self {
        DurationDist::Fixed { value: d }
    }
    /// Draw one duration. `Fixed` consumes no randomness.
    pub fn sample(&self, rng: &mut SimRng) -> SimDuration {
        match self {
            DurationDist::Fixed { value } => *value,
            DurationDist::Uniform { min, max } => {
                if max <= min {
                    *min
                } else {
                    SimDuration::from_secs_f64(uniform(rng, min.as_secs_f64(), max.as_secs_f64()))
                }
            }
            DurationDist::ShiftedExponential { min, mean } => {
                *min + SimDuration::from_secs_f64(exponential(rng, mean.as_secs_f64()))
            }
        }
    }
    /// The mean, in seconds.
    pub fn mean_s(&self) -> f64 {
        match self {
            DurationDist::Fixed { value } => value.as_secs_f64(),
            // `sample` gives `min` when max <= min.
            DurationDist::Uniform { min, max } => {
                (min.as_secs_f64() + (*max).max(*min).as_secs_f64()) / 2.0
            }
            DurationDist::ShiftedExponential { min, mean } => {
                min.as_secs_f64() + mean.as_secs_f64()
            }
        }
    }
    /// Check the bounds; `path` names the field in the error.
    pub fn check(&self, path: &str) -> Checked {
        if let DurationDist::Uniform { min, max } = self {
            if max < min {
                return fail(format!("{path}.max"), "a duration >= min");
            }
        }
        Ok(())
    }
}

/// A uniform offset in [0, `period`): `floor(u × period)` nanoseconds with `u` one
/// [`uniform01`] draw from `rng` (a period of zero gives zero, still drawing `u`).
#[inline]
pub fn uniform_offset(rng: &mut SimRng, period: SimDuration) -> SimDuration {
    offset_of(uniform01(rng), period)
}

/// The offset [`uniform_offset`] gives for the uniform draw `u` in [0, 1).
#[inline]
pub fn offset_of(u: f64, period: SimDuration) -> SimDuration {
    SimDuration::from_nanos((u * period.as_nanos() as f64) as u64)
}
