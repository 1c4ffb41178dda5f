//! Random durations shared by the models: fixed, uniform, or a floor plus an exponential tail,
//! written in model files as `(kind: "Uniform", min: "3s", max: "10s")`. A draw comes from
//! the stream of the component that owns the duration.

use crate::sim::rng::{exponential, uniform};
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
    pub fn check(&self, path: &str) -> Result<(), (String, String)> {
        if let DurationDist::Uniform { min, max } = self {
            if max < min {
                return Err((format!("{path}.max"), "a duration >= min".into()));
            }
        }
        Ok(())
    }
}
