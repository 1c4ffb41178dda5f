//! Metrics declared once: each model lists its metrics in one [`metric_set!`](crate::metric_set)
//! struct (name with its unit, kind, help) and fills them by field, so a metric's name and
//! its value cannot drift apart. The run skeleton ([`super::run_detailed`]) digests and
//! reports them in declaration order; `events` and `digest` are added once, by the runner.

use serde::Serialize;

/// Is a metric a measurement, or a 0/1 outcome whose mean is a probability?
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MetricKind {
    /// A measurement: mean, sd, Student-t CI, quantiles.
    Value,
    /// A 0/1 outcome: additionally a proportion with a Wilson interval.
    Indicator,
}

/// One metric a model reports per run. Names carry their unit (`exposure_s`, `goodput_rps`).
#[derive(Clone, Debug, Serialize)]
pub struct MetricDef {
    /// Column name, with its unit as a suffix where it has one.
    pub name: &'static str,
    /// Measurement or 0/1 outcome.
    pub kind: MetricKind,
    /// One line for the report page.
    pub help: &'static str,
}

impl MetricDef {
    /// The values the metric can take, for clamping its intervals: `[0, 1]` for a 0/1
    /// outcome and for a fraction (`goodput`, `*_frac`, `frac_*`, `*_utilisation`), else
    /// `[0, ∞)`: every vtsim metric is a count, a duration, a rate or a fraction, none
    /// negative (`tests/data.rs` checks every shipped model's default run against it).
    pub fn range(&self) -> (f64, f64) {
        let n = self.name;
        let fraction = self.kind == MetricKind::Indicator
            || n == "goodput"
            || n.ends_with("_frac")
            || n.starts_with("frac_")
            || n.ends_with("utilisation");
        if fraction {
            (0.0, 1.0)
        } else {
            (0.0, f64::INFINITY)
        }
    }
    /// A measurement.
    pub const fn value(name: &'static str, help: &'static str) -> Self {
        MetricDef {
            name,
            kind: MetricKind::Value,
            help,
        }
    }
    /// A 0/1 outcome.
    pub const fn indicator(name: &'static str, help: &'static str) -> Self {
        MetricDef {
            name,
            kind: MetricKind::Indicator,
            help,
        }
    }
}

/// The columns of `runs.csv` that are not metrics: a metric may not take one of these names
/// (the runner adds `events` and `digest` to every row itself).
pub const RESERVED_COLUMNS: &[&str] = &["job", "point", "replicate", "seed", "events", "digest"];

/// Whether `name` is one of [`RESERVED_COLUMNS`] (a `const fn`, so [`metric_set!`](crate::metric_set)
/// refuses such a metric when the model is compiled).
pub const fn is_reserved(name: &str) -> bool {
    let mut i = 0;
    while i < RESERVED_COLUMNS.len() {
        let (a, b) = (RESERVED_COLUMNS[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// The metrics of one run of a model: a struct of `f64` fields declared with
/// [`metric_set!`](crate::metric_set).
pub trait MetricSet {
    /// One definition per field, in declaration order.
    const DEFS: &'static [MetricDef];
    /// The values, in the order of [`Self::DEFS`].
    fn values(&self) -> Vec<f64>;
    /// [`crate::sim::trace::metric_names_digest`] of the names of [`Self::DEFS`], computed
    /// once (the metric-names record of every run's digest).
    fn names_digest() -> &'static [u8; 32];
}

/// Declare a model's metrics once: a struct with one `f64` field per metric, its
/// [`MetricSet`] definitions (the field name is the metric name) and a compile-time refusal
/// of any name in [`RESERVED_COLUMNS`].
///
/// ```ignore
/// crate::metric_set! {
///     /// What one run of a toy model reports.
///     pub struct ToyMetrics {
///         /// Requests that failed.
///         failed_requests: Value = "requests that failed",
///         /// 1 when any request failed.
///         any_failed: Indicator = "1 when any request failed",
///     }
/// }
/// ```
///
/// (This example is the unit test `a_metric_set_names_its_fields_in_order` below, compiled with
/// the library's tests rather than as a doctest.)
#[macro_export]
macro_rules! metric_set {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fattr:meta])* $field:ident : $kind:ident = $help:literal ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        $vis struct $name {
            $( $(#[$fattr])* pub $field: f64, )*
        }
        impl $crate::model::MetricSet for $name {
            const DEFS: &'static [$crate::model::MetricDef] = &[
                $( $crate::model::MetricDef {
                    name: stringify!($field),
                    kind: $crate::model::MetricKind::$kind,
                    help: $help,
                }, )*
            ];
            fn values(&self) -> Vec<f64> {
                vec![$(self.$field),*]
            }
            fn names_digest() -> &'static [u8; 32] {
                // One per metric set: this function is not generic.
                static DIGEST: ::std::sync::OnceLock<[u8; 32]> = ::std::sync::OnceLock::new();
                DIGEST.get_or_init(|| {
                    $crate::sim::trace::metric_names_digest(
                        <Self as $crate::model::MetricSet>::DEFS.iter().map(|d| d.name),
                    )
                })
            }
        }
        const _: () = {
            $( assert!(
                !$crate::model::metric::is_reserved(stringify!($field)),
                concat!(
                    "metric `", stringify!($field), "` is named like a runs.csv column \
                     (job, point, replicate, seed, events, digest): rename it"
                )
            ); )*
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::metric_set! {
        /// What one run of a toy model reports.
        pub struct ToyMetrics {
            /// Requests that failed.
            failed_requests: Value = "requests that failed",
            /// 1 when any request failed.
            any_failed: Indicator = "1 when any request failed",
        }
    }

    #[test]
    fn a_metric_set_names_its_fields_in_order() {
        let m = ToyMetrics {
            failed_requests: 3.0,
            any_failed: 1.0,
        };
        let names: Vec<&str> = ToyMetrics::DEFS.iter().map(|d| d.name).collect();
        assert_eq!(names, ["failed_requests", "any_failed"]);
        assert_eq!(ToyMetrics::DEFS[1].kind, MetricKind::Indicator);
        assert_eq!(ToyMetrics::DEFS[0].help, "requests that failed");
        assert_eq!(m.values(), vec![3.0, 1.0]);
        // BLAKE3 of str("failed_requests") | str("any_failed"), written out here.
        let mut names = vec![15u8];
        names.extend_from_slice(b"failed_requests");
        names.push(10);
        names.extend_from_slice(b"any_failed");
        assert_eq!(ToyMetrics::names_digest(), blake3::hash(&names).as_bytes());
    }

    #[test]
    fn reserved_names_are_exactly_the_runs_csv_columns() {
        for n in RESERVED_COLUMNS {
            assert!(is_reserved(n), "{n}");
        }
        for n in [
            "handled_events",
            "event",
            "eventsx",
            "",
            "digests",
            "seed_s",
        ] {
            assert!(!is_reserved(n), "{n}");
        }
    }
}
