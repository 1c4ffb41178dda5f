//! The per-statement latency of a ProxySQL session at the backend: its own distribution
//! (constant, exponential, lognormal) with a 1 µs floor, drawn with the one rounding rule of
//! every drawn duration ([`SimDuration::from_secs_f64`]).

use crate::sim::rng::{exponential, standard_normal};
use crate::sim::{SimDuration, SimRng};
use serde::{Deserialize, Serialize};

/// Per-statement latency at the backend (ProxySQL hop included).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Latency {
    /// Every statement takes `value`.
    Const {
        /// The latency.
        value: SimDuration,
    },
    /// Exponential with `mean`.
    Exp {
        /// Mean.
        mean: SimDuration,
    },
    /// Lognormal: `median · exp(sigma · N(0,1))`.
    LogNormal {
        /// Median.
        median: SimDuration,
        /// Shape.
        sigma: f64,
    },
}

impl Latency {
    /// One draw (≥ 1 µs, so a closed loop always advances time).
    #[inline]
    pub fn draw(&self, rng: &mut SimRng) -> SimDuration {
        let d = match self {
            Latency::Const { value } => *value,
            Latency::Exp { mean } => {
                SimDuration::from_secs_f64(exponential(rng, mean.as_secs_f64()))
            }
            Latency::LogNormal { median, sigma } => SimDuration::from_secs_f64(
                median.as_secs_f64() * libm::exp(sigma * standard_normal(rng)),
            ),
        };
        d.max(SimDuration::from_nanos(1_000))
    }
    /// The mean.
    pub fn mean_s(&self) -> f64 {
        match self {
            Latency::Const { value } => value.as_secs_f64(),
            Latency::Exp { mean } => mean.as_secs_f64(),
            Latency::LogNormal { median, sigma } => {
                median.as_secs_f64() * libm::exp(sigma * sigma / 2.0)
            }
        }
    }
}

