//! Simulated time: integer nanoseconds, never floats.
//!
//! Float sums drift and break bit-for-bit replay, so every instant is a [`SimTime`] and every
//! span a [`SimDuration`], both `u64` nanoseconds. Durations are written in model and
//! experiment files as strings: `"90s"`, `"1m30s"`, `"1m 30s"`, `"250ms"`, `"0s"`
//! (parsed by [`humantime::parse_duration`]; a sign, a missing unit or an unknown unit is an error).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Nanoseconds per second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// 2^63 as an `f64`: below it a count of nanoseconds converts through `i64`.
const I64_LIMIT: f64 = 9_223_372_036_854_775_808.0;

/// `ns` nanoseconds in seconds: `ns as f64 / 1e9`, converted through `i64` below 2^63 (the
/// same value as `u64`'s conversion, in one instruction on x86-64 instead of a fix-up
/// sequence).
#[inline(always)]
fn secs_of_nanos(ns: u64) -> f64 {
    let x = if ns < 1 << 63 {
        ns as i64 as f64
    } else {
        ns as f64
    };
    x / NANOS_PER_SEC as f64
}

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The end of time: a horizon that never stops a run on its own.
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Nanoseconds since the start.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the start, for reporting only (never feed this back into time).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        secs_of_nanos(self.0)
    }
    /// The span from `earlier` to `self`, zero when `earlier` is later.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A span of whole nanoseconds.
    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns)
    }
    /// A span of whole milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * 1_000_000)
    }
    /// A span of whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * NANOS_PER_SEC)
    }
    /// A span from float seconds, rounded to the nearest nanosecond, half away from zero
    /// (negative and NaN give zero; `s × 1e9 >= 2^64` saturates). Used where a duration is
    /// drawn from a distribution; the rounding is exact and portable.
    ///
    /// It is `(s × 1e9).round()` without the `round` call (a libm call on the x86-64
    /// baseline): `x = s × 1e9` lies in (0, 2^64), `x as u64` truncates it to `t`, and `x − t`
    /// is exact (`t ≤ x < t + 1 ≤ 2t` for `x ≥ 1`, Sterbenz; `t = 0` below), so adding one
    /// when that fraction is at least one half rounds as `round` does (from 2^52 on every
    /// `f64` is an integer and the fraction is 0). The tests of this file check it
    /// against `round` on every half-nanosecond boundary to 10 ns and 400,000 draws.
    #[inline]
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            return SimDuration(0);
        }
        let x = s * NANOS_PER_SEC as f64;
        // Below 2^63 (292 years) the conversions go through `i64`: the same values, one
        // instruction each on x86-64, where `u64`'s take a fix-up sequence.
        if x < I64_LIMIT {
            let t = x as i64;
            return SimDuration(t as u64 + ((x - t as f64) >= 0.5) as u64);
        }
        if x >= u64::MAX as f64 {
            return SimDuration(u64::MAX);
        }
        let t = x as u64;
        SimDuration(t + ((x - t as f64) >= 0.5) as u64)
    }
    /// Nanoseconds.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds, for reporting and for rates.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        secs_of_nanos(self.0)
    }
    /// `self * k`, saturating.
    pub fn mul_f64(self, k: f64) -> SimDuration {
        SimDuration::from_secs_f64(self.as_secs_f64() * k)
    }
    /// Parse `"90s"`, `"1m30s"`, `"250ms"`... See the module doc.
    pub fn parse(text: &str) -> Result<SimDuration, String> {
        let t = text.trim();
        if t.starts_with('-') {
            return Err(format!(
                "negative duration \"{text}\": durations must be >= 0"
            ));
        }
        if t.chars().all(|c| c.is_ascii_digit() || c == '.') && !t.is_empty() && t != "0" {
            return Err(format!(
                "duration \"{text}\" has no unit: write e.g. \"{t}s\" or \"{t}ms\""
            ));
        }
        if t == "0" {
            return Ok(SimDuration::ZERO);
        }
        match humantime::parse_duration(t) {
            Ok(d) => {
                let ns = d.as_nanos();
                if ns > u64::MAX as u128 {
                    Err(format!("duration \"{text}\" is too long"))
                } else {
                    Ok(SimDuration(ns as u64))
                }
            }
            Err(e) => Err(format!("invalid duration \"{text}\": {e}")),
        }
    }
}

impl fmt::Display for SimDuration {
    /// Writes the shortest humantime form, e.g. `1m 30s`, `250ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return write!(f, "0s");
        }
        write!(
            f,
            "{}",
            humantime::format_duration(std::time::Duration::from_nanos(self.0))
        )
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, o: SimTime) -> SimDuration {
        self.since(o)
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for SimDuration {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(d.0))
    }
}

impl Serialize for SimDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for SimDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = SimDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a duration string such as \"90s\", \"1m30s\" or \"250ms\""
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SimDuration, E> {
                SimDuration::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_secs_f64_rounds_as_round_does() {
        let mut xs = vec![
            f64::NAN,
            -f64::NAN,
            f64::NEG_INFINITY,
            f64::INFINITY,
            -1.0,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            4.9e-324,
            0.4e-9,
            0.5e-9,
            f64::from_bits(0.5e-9f64.to_bits() - 1),
            1.5e-9,
            2.5e-9,
            2.5000000000000004e-9,
            (1u64 << 52) as f64 * 1e-9,
            ((1u64 << 52) as f64 - 0.5) * 1e-9,
            ((1u64 << 53) as f64 + 2.0) * 1e-9,
            (1u64 << 63) as f64 * 1e-9,
            // Either side of 2^63 ns, where the conversion leaves `i64`.
            f64::from_bits(((1u64 << 63) as f64 * 1e-9).to_bits() - 1),
            f64::from_bits(((1u64 << 63) as f64 * 1e-9).to_bits() + 1),
            u64::MAX as f64 * 1e-9,
            u64::MAX as f64 * 1e-9 * (1.0 - f64::EPSILON),
            1e300,
        ];
        // Every half-nanosecond boundary from 0 to 10 ns and its neighbours, then draws.
        for k in 0..=20u32 {
            let x = k as f64 * 0.5e-9;
            xs.extend([
                x,
                f64::from_bits(x.to_bits() + 1),
                f64::from_bits(x.to_bits().max(1) - 1),
            ]);
        }
        let mut rng = crate::sim::rng::stream(7, "t", 0);
        for _ in 0..200_000 {
            xs.push(crate::sim::rng::exponential(&mut rng, 2.0));
            xs.push(crate::sim::rng::uniform(&mut rng, 0.0, 1e-6));
        }
        // The rounding as it was written before: `round`, then saturate.
        let reference = |s: f64| {
            if s.is_nan() || s <= 0.0 {
                return SimDuration(0);
            }
            let ns = (s * 1e9).round();
            SimDuration(if ns >= u64::MAX as f64 {
                u64::MAX
            } else {
                ns as u64
            })
        };
        for x in xs {
            assert_eq!(SimDuration::from_secs_f64(x), reference(x), "{x:e}");
        }
    }

    #[test]
    fn parses_the_documented_forms() {
        assert_eq!(
            SimDuration::parse("90s").unwrap(),
            SimDuration::from_secs(90)
        );
        assert_eq!(
            SimDuration::parse("1m30s").unwrap(),
            SimDuration::from_secs(90)
        );
        assert_eq!(
            SimDuration::parse("1m 30s").unwrap(),
            SimDuration::from_secs(90)
        );
        assert_eq!(
            SimDuration::parse("250ms").unwrap(),
            SimDuration::from_millis(250)
        );
        assert_eq!(SimDuration::parse("0s").unwrap(), SimDuration::ZERO);
        assert_eq!(SimDuration::parse("0").unwrap(), SimDuration::ZERO);
    }

    #[test]
    fn rejects_bad_durations() {
        assert!(SimDuration::parse("-5s").unwrap_err().contains("negative"));
        assert!(SimDuration::parse("30").unwrap_err().contains("no unit"));
        assert!(SimDuration::parse("3x").is_err());
        assert!(SimDuration::parse("").is_err());
    }

    /// Seconds through `i64` below 2^63 ns are what they were through `u64`.
    #[test]
    fn as_secs_f64_is_the_u64_conversion() {
        let mut ns = vec![0u64, 1, 999_999_999, 1 << 53, (1 << 53) + 1, u64::MAX];
        for k in [(1u64 << 63) - 1, 1 << 63, (1 << 63) + 1] {
            ns.extend([k - 1024, k, k + 1024]);
        }
        let mut rng = crate::sim::rng::stream(7, "t", 1);
        for _ in 0..100_000 {
            let x: u64 = rand::Rng::next_u64(&mut rng);
            ns.extend([x, x >> 11, x >> 30]);
        }
        for n in ns {
            let want = n as f64 / NANOS_PER_SEC as f64;
            assert_eq!(
                SimDuration(n).as_secs_f64().to_bits(),
                want.to_bits(),
                "{n}"
            );
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["90s", "250ms", "2h 5m", "1ns", "0s"] {
            let d = SimDuration::parse(s).unwrap();
            assert_eq!(SimDuration::parse(&d.to_string()).unwrap(), d);
        }
    }
}
