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

/// A [`DurationDist`] made ready for a hot loop: each draw gives exactly the nanoseconds of
/// `DurationDist::sample(..).as_nanos()` from the same stream, bit for bit, but the bounds and
/// the mean are converted to float seconds once, not on every draw (a division a draw, on
/// the critical path of a pool's request).
#[derive(Clone, Debug)]
pub enum NsDraw {
    /// [`DurationDist::Fixed`] (and a `Uniform` with `max <= min`): no randomness.
    Fixed(u64),
    /// [`DurationDist::Uniform`] with `max > min`, its bounds in seconds.
    Uniform {
        /// `min` in seconds.
        min_s: f64,
        /// `max` in seconds.
        max_s: f64,
    },
    /// [`DurationDist::ShiftedExponential`], its mean in seconds.
    ShiftedExponential {
        /// The floor.
        min: SimDuration,
        /// The mean of the exponential part, in seconds.
        mean_s: f64,
    },
    /// Any other (observed samples): drawn by [`DurationDist::sample`].
    Other(DurationDist),
}

impl NsDraw {
    /// The draw of `d`.
    pub fn new(d: &DurationDist) -> Self {
        match d {
            DurationDist::Fixed { value } => NsDraw::Fixed(value.as_nanos()),
            // `sample` gives `min`, with no draw, when max <= min.
            DurationDist::Uniform { min, max } if max <= min => NsDraw::Fixed(min.as_nanos()),
            DurationDist::Uniform { min, max } => NsDraw::Uniform {
                min_s: min.as_secs_f64(),
                max_s: max.as_secs_f64(),
            },
            DurationDist::ShiftedExponential { min, mean } => NsDraw::ShiftedExponential {
                min: *min,
                mean_s: mean.as_secs_f64(),
            },
            DurationDist::Observed { .. } => NsDraw::Other(d.clone()),
        }
    }
    /// One draw, in nanoseconds: `DurationDist::sample(rng).as_nanos()`.
    #[inline]
    pub fn sample_ns(&self, rng: &mut SimRng) -> u64 {
        match self {
            NsDraw::Fixed(ns) => *ns,
            NsDraw::Uniform { min_s, max_s } => {
                SimDuration::from_secs_f64(uniform(rng, *min_s, *max_s)).as_nanos()
            }
            NsDraw::ShiftedExponential { min, mean_s } => {
                (*min + SimDuration::from_secs_f64(exponential(rng, *mean_s))).as_nanos()
            }
            NsDraw::Other(d) => d.sample(rng).as_nanos(),
        }
    }
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
    fn ns_draw_is_sample_bit_for_bit() {
        use rand::Rng;
        let ms = SimDuration::from_millis;
        let dists = [
            DurationDist::fixed(ms(7)),
            DurationDist::Uniform {
                min: ms(3),
                max: ms(10),
            },
            DurationDist::Uniform {
                min: ms(10),
                max: ms(3),
            },
            DurationDist::Uniform {
                min: ms(5),
                max: ms(5),
            },
            DurationDist::ShiftedExponential {
                min: ms(0),
                mean: ms(1000),
            },
            DurationDist::ShiftedExponential {
                min: ms(2),
                mean: SimDuration(333_333_333),
            },
            DurationDist::ShiftedExponential {
                min: ms(2),
                mean: SimDuration::ZERO,
            },
            DurationDist::ShiftedExponential {
                min: SimDuration(u64::MAX - 5),
                mean: ms(1),
            },
            DurationDist::Observed {
                samples: vec![ms(1), ms(2), ms(9)],
                draw: ObservedDraw::Uniform,
            },
        ];
        for (i, d) in dists.iter().enumerate() {
            let (mut a, mut b) = (
                crate::sim::rng::stream(3, "ns-draw", i as u32),
                crate::sim::rng::stream(3, "ns-draw", i as u32),
            );
            let fast = NsDraw::new(d);
            for _ in 0..20_000 {
                assert_eq!(fast.sample_ns(&mut a), d.sample(&mut b).as_nanos(), "{d:?}");
            }
            // As many draws on each side: the streams are still in step.
            assert_eq!(a.next_u64(), b.next_u64(), "{d:?}");
        }
    }

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
