//! The params kit shared by every model: one error type for a parameter that fails a check,
//! the vocabulary of checks (positive duration, bounded count, probability, range, the
//! events-per-run estimate), and the conventions for defaults.
//!
//! # Defaults
//! A parameter struct whose fields all have defaults carries `#[serde(default)]` and one
//! `impl Default`: each default value is written once, there. A struct with required fields
//! (a site's name, a stage's load) gives its optional fields `#[serde(default = "fn")]`, with
//! the value written once, in that function. Either way a model file may leave out any field
//! that has a default, and `Default` is what a model file that sets nothing gets.
//!
//! # Random durations
//! Every random duration a model file sets is a [`DurationDist`](super::dist::DurationDist)
//! (or, in the ProxySQL model, a [`Latency`](super::proxysql::Latency), which
//! samples in the same units); a draw becomes a [`SimDuration`] through
//! [`SimDuration::from_secs_f64`], which rounds to the nearest nanosecond. That is the one
//! rounding rule of a drawn duration.

use crate::sim::SimDuration;

/// A parameter that fails a check: the field path (`vtgate.tablet_refresh_interval`,
/// `faults[0].site`) and what was expected there (`a duration > 0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The dotted path of the field, as a model file writes it.
    pub field: String,
    /// What the field must be, in words.
    pub expected: String,
}

impl ParamError {
    /// The field `field` should have been `expected`.
    pub fn new(field: impl Into<String>, expected: impl Into<String>) -> Self {
        ParamError {
            field: field.into(),
            expected: expected.into(),
        }
    }
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.expected)
    }
}

impl std::error::Error for ParamError {}

/// The result of a check.
pub type Checked = Result<(), ParamError>;

/// Refuse `field`: it should have been `expected`.
pub fn fail<T>(field: impl Into<String>, expected: impl Into<String>) -> Result<T, ParamError> {
    Err(ParamError::new(field, expected))
}

/// A duration that must be above zero: "a duration > 0".
pub fn positive(field: &str, d: SimDuration) -> Checked {
    if d == SimDuration::ZERO {
        return fail(field, "a duration > 0");
    }
    Ok(())
}

/// A count within `min..=max`: "at least 1 vtgate", "at most 65535 vtgates" (`one` and
/// `many` are the noun in the singular and the plural).
pub fn count(field: &str, n: u64, (min, max): (u64, u64), (one, many): (&str, &str)) -> Checked {
    let noun = |k: u64| if k == 1 { one } else { many };
    if n < min {
        return fail(field, format!("at least {min} {}", noun(min)));
    }
    if n > max {
        return fail(field, format!("at most {max} {}", noun(max)));
    }
    Ok(())
}

/// A probability: "a probability in [0, 1]" (NaN is refused).
pub fn probability(field: &str, p: f64) -> Checked {
    range(field, p, (0.0, 1.0), "a probability in [0, 1]")
}

/// A number within `lo..=hi` (NaN and infinities outside it are refused), else `expected`.
pub fn range(field: &str, x: f64, (lo, hi): (f64, f64), expected: &str) -> Checked {
    if x >= lo && x <= hi {
        Ok(())
    } else {
        fail(field, expected)
    }
}

/// The most events one run may be expected to handle, estimated from the parameters before
/// it runs ([`check_events`]). The kernel and the models handle 2e6-1e7 events a second on
/// one core (`vtsim bench`; proxysql-lab 3e5 events in 0.15 s), so 1e9 events is a run of
/// two to eight minutes: the longest one run can reasonably take (a sweep runs thousands),
/// and far below the estimates of the inputs that never end (rollout `PerQuery` at 1e7
/// reads/s and 10 vtgates over 6 h is 2.2e12).
pub const MAX_EVENTS_PER_RUN: f64 = 1e9;

/// One term of a model's event estimate: the field that drives it, what it counts, and the
/// expected number of events.
pub type EventTerm = (&'static str, &'static str, f64);

/// Refuse parameters whose estimated events per run exceed [`MAX_EVENTS_PER_RUN`]. The error
/// names the field of the largest term and what it counts. A NaN or infinite term (a zero
/// period) is refused too.
pub fn check_events(terms: &[EventTerm]) -> Checked {
    let total: f64 = terms.iter().map(|t| t.2).sum();
    if total.is_finite() && total <= MAX_EVENTS_PER_RUN {
        return Ok(());
    }
    let (field, what, n) = terms
        .iter()
        .copied()
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .expect("a term");
    fail(
        field,
        format!(
            "at most 1e9 events per run (estimated before running); these parameters give \
             {total:.3e}, of which {what}: {n:.3e}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_name_the_field_and_the_bound() {
        let e = count("vtgates", 0, (1, 65535), ("vtgate", "vtgates")).unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.expected.as_str()),
            ("vtgates", "at least 1 vtgate")
        );
        let e = count("vtgates", 65536, (1, 65535), ("vtgate", "vtgates")).unwrap_err();
        assert_eq!(e.expected, "at most 65535 vtgates");
        assert!(count("vtgates", 65535, (1, 65535), ("vtgate", "vtgates")).is_ok());
        assert!(probability("p", f64::NAN).is_err());
        assert!(probability("p", 1.0).is_ok() && probability("p", 1.0 + 1e-12).is_err());
        assert_eq!(
            positive("horizon", SimDuration::ZERO)
                .unwrap_err()
                .to_string(),
            "field `horizon`: a duration > 0"
        );
        let e = check_events(&[("a", "polls", 6e8), ("b", "queries", 5e8)]).unwrap_err();
        assert_eq!(e.field, "a");
        assert!(check_events(&[("a", "polls", f64::INFINITY)]).is_err());
    }
}
