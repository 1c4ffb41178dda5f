//! The plan's unit tests: rebuilt points, range counting, text checks.

use super::axis::expand_range;
use super::load::{overlaps, plan_with_budget};
use super::text::check_text;
use crate::experiment::files::Axis;
use crate::model::RunOptions;
use std::path::Path;

const X: &str = r#"Experiment(
    name: "x",
    model: "builtin:hold-fixture",
    seed: 7,
    replicates: 2,
    set: { "events": 200 },
    axes: [
        Axis(param: "pending", values: [5, 50]),
        Zip([
            Axis(param: "mean_increment", values: ["1ms", "2ms", "3ms"]),
            Axis(param: "late_after", values: ["1s", "2s", "3s"]),
        ]),
    ],
)"#;

#[test]
fn rebuilt_points_run_like_kept_ones() {
    let p = Path::new("x.ron");
    let kept = plan_with_budget(p, X, u64::MAX).unwrap();
    let lazy = plan_with_budget(p, X, 0).unwrap();
    assert_eq!(kept.points.len(), 6);
    assert!(kept.points.iter().all(|p| p.world.is_kept()));
    assert!(lazy.points.iter().all(|p| !p.world.is_kept()));
    for (a, b) in kept.points.iter().zip(&lazy.points) {
        assert_eq!(a.labels, b.labels);
        let (ra, rb) = (
            a.world.run(3, RunOptions::default()),
            b.world.run(3, RunOptions::default()),
        );
        assert_eq!(ra.digest, rb.digest);
        assert_eq!(ra.metrics, rb.metrics);
    }
    // The grid order: first dimension slowest, zipped axes together.
    assert_eq!(lazy.points[4].labels, ["50", "2ms", "2s"]);
    let json = serde_json::to_value(&*lazy.points[4].world.spec()).unwrap();
    assert_eq!(json["Hold"]["pending"], 50);
    assert_eq!(json["Hold"]["events"], 200);
    assert_eq!(json["Hold"]["late_after"], "2s");
}

#[test]
fn ranges_count_before_they_build() {
    let axis =
        |r: &str| -> Axis { ron::from_str(&format!("(param: \"p\", range: Some({r}))")).unwrap() };
    let n = |r: &str| expand_range(&axis(r)).map(|v| v.len());
    assert_eq!(n("(from: 1, to: 10, step: 3)"), Ok(4));
    assert_eq!(n("(from: \"1s\", to: \"2s\", step: \"250ms\")"), Ok(5));
    assert_eq!(n("(from: 0.0, to: 1.0, step: 0.25)"), Ok(5));
    assert_eq!(
        n("(from: 9223372036854775800, to: 9223372036854775807, step: 3)"),
        Ok(3)
    );
    for (r, want) in [
        ("(from: 1.0, to: 2.0, step: 1e-300)", "1.0000e300 values"),
        (
            "(from: 0, to: 9223372036854775807, step: 1)",
            "9.2234e18 values",
        ),
        (
            "(from: \"0s\", to: \"1h\", step: \"1ns\")",
            "3.6000e12 values",
        ),
    ] {
        let e = n(r).unwrap_err();
        assert!(e.contains(want) && e.contains("at most 100000"), "{r}: {e}");
    }
}

#[test]
fn text_checks() {
    assert!(check_text("label", "30s", 10).is_ok());
    assert!(check_text("label", "a,b \"c\" <d>", 20).is_ok());
    for (s, want) in [
        ("", "an empty label"),
        ("a\nb", "U+000A at character 2"),
        ("\u{0}", "U+0000"),
        ("x\u{7f}", "U+007F"),
        ("a\u{2028}", "U+2028"),
        ("0123456789a", "11 characters; at most 10"),
    ] {
        let e = check_text("label", s, 10).unwrap_err();
        assert!(e.contains(want), "{s:?}: {e}");
    }
    assert!(overlaps("a.b", "a"));
    assert!(overlaps("a", "a.b"));
    assert!(overlaps("a", "a"));
    assert!(!overlaps("ab", "a"));
    assert!(!overlaps("a-x", "a"));
}
