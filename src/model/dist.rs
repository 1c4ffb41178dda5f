//! Random durations shared by the models: fixed, uniform, a floor plus an exponential tail, or
//! observed samples (an incident's timings, as `vtsim fit` writes them), written in model files
//! as `(kind: "Uniform", min: "3s", max: "10s")`. A draw comes from the stream of the
//! component that owns the duration.
//!
//! `Observed` samples are drawn one of two ways (`draw`):
//! - `InOrder`: the model passes an index ([`DurationDist::sample_at`]) and gets
//!   `samples[index]`, with no randomness: a fitted incident replays its own timings. Only the
//!   rollout model indexes its durations (a tablet's by tablet, an operator step by shard and
//!   step, a PRS by shard), so only it accepts `InOrder` ([`DurationDist::check_indexed`]);
//!   an index past the end is a checked error, never a wrap-around.
//! - `Uniform`: a uniform choice among the samples (one `below` draw from the component's
//!   stream): the observed durations as an empirical distribution, for what-if runs.
//!
//! Two rules turn a draw into a [`SimDuration`], one for each kind of draw:
//! - a random *duration* ([`DurationDist::sample`], and the ProxySQL statement latency) is
//!   drawn in float seconds and rounded to the nearest nanosecond
//!   ([`SimDuration::from_secs_f64`]);
//! - a random *offset* within a period (a poll phase, a jitter, a probe phase:
//!   [`uniform_offset`]) is `floor(u × period)` in nanoseconds, so it stays below the period.

use super::kit::{fail, Checked};
use crate::sim::rng::{below, exponential, uniform, uniform01};
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
    /// Observed durations (e.g. fitted from an incident's logs by `vtsim fit`).
    Observed {
        /// The samples, in the order the model indexes them (`InOrder`).
        samples: Vec<SimDuration>,
        /// How a draw picks a sample.
        #[serde(default)]
        draw: ObservedDraw,
    },
}

/// How an [`DurationDist::Observed`] draw picks a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum ObservedDraw {
    /// `samples[index]` for the index the model passes (a replayed incident); no randomness.
    #[default]
    InOrder,
    /// A uniform choice among the samples (an empirical distribution).
    Uniform,
}

/// At most this many observed samples per duration (a model file stays readable and bounded).
pub const MAX_OBSERVED: usize = 1_000_000;

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
            // `check` refuses `InOrder` where the model passes no index; the first sample is
            // what `sample_at(.., 0)` gives.
            DurationDist::Observed { samples, draw } => match draw {
                ObservedDraw::InOrder => samples[0],
                ObservedDraw::Uniform => samples[below(rng, samples.len() as u64) as usize],
            },
        }
    }
    /// Draw the duration of item `index` (a tablet, a step): `Observed`/`InOrder` gives
    /// `samples[index]` (checked in range by [`Self::check_indexed`]); every other kind is
    /// [`Self::sample`], so a model that indexes its draws replays as before.
    pub fn sample_at(&self, rng: &mut SimRng, index: usize) -> SimDuration {
        match self {
            DurationDist::Observed {
                samples,
                draw: ObservedDraw::InOrder,
            } => samples[index.min(samples.len() - 1)],
            _ => self.sample(rng),
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
            DurationDist::Observed { samples, .. } => {
                samples.iter().map(|d| d.as_secs_f64()).sum::<f64>() / samples.len().max(1) as f64
            }
        }
    }
    /// Check the bounds; `path` names the field in the error. `Observed` with `InOrder` is
    /// refused here: only a model that indexes its draws accepts it ([`Self::check_indexed`]).
    pub fn check(&self, path: &str) -> Checked {
        if let DurationDist::Observed {
            draw: ObservedDraw::InOrder,
            ..
        } = self
        {
            return fail(
                format!("{path}.draw"),
                "Uniform (InOrder replays are only for the rollout model's tablet, step and \
                 PRS durations)",
            );
        }
        self.check_common(path)
    }
    /// [`Self::check`] for a duration the model draws by index, `items` of them (an
    /// `InOrder` sample list must cover every index).
    pub fn check_indexed(&self, path: &str, items: usize) -> Checked {
        if let DurationDist::Observed {
            samples,
            draw: ObservedDraw::InOrder,
        } = self
        {
            if samples.len() < items {
                return fail(
                    format!("{path}.samples"),
                    format!(
                        "one sample per item in order ({items} needed, found {})",
                        samples.len()
                    ),
                );
            }
        }
        self.check_common(path)
    }
    fn check_common(&self, path: &str) -> Checked {
        match self {
            DurationDist::Uniform { min, max } if max < min => {
                fail(format!("{path}.max"), "a duration >= min")
            }
            DurationDist::Observed { samples, .. } if samples.is_empty() => {
                fail(format!("{path}.samples"), "at least one sample")
            }
            DurationDist::Observed { samples, .. } if samples.len() > MAX_OBSERVED => fail(
                format!("{path}.samples"),
                format!("at most {MAX_OBSERVED} samples, found {}", samples.len()),
            ),
            _ => Ok(()),
        }
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

#[cfg(test)]
mod observed_tests {
    use super::*;

    #[test]
    fn in_order_is_indexed_and_refused_where_no_index_is_passed() {
        let s = |x| SimDuration::from_secs(x);
        let d = DurationDist::Observed {
            samples: vec![s(1), s(2), s(3)],
            draw: ObservedDraw::InOrder,
        };
        let mut rng = crate::sim::rng::stream(1, "t", 0);
        assert_eq!(d.sample_at(&mut rng, 2), s(3));
        assert_eq!(d.sample_at(&mut rng, 0), s(1));
        assert!((d.mean_s() - 2.0).abs() < 1e-12);
        assert!(d.check_indexed("x", 3).is_ok());
        let e = d.check_indexed("x", 4).unwrap_err().to_string();
        assert!(e.contains("x.samples") && e.contains("4 needed"), "{e}");
        let e = d.check("y").unwrap_err().to_string();
        assert!(e.contains("y.draw"), "{e}");
        let empty = DurationDist::Observed {
            samples: vec![],
            draw: ObservedDraw::Uniform,
        };
        assert!(empty
            .check("z")
            .unwrap_err()
            .to_string()
            .contains("z.samples"));
    }
}
