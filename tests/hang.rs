//! Inputs that used to hang, spin, overflow or fill memory. Each runs the binary as a child
//! process and fails if it has not returned within 20 s; each must be refused (exit 2) with
//! the field or flag and the bound.

mod common;
use common::*;
use std::path::Path;

fn experiment(model: &str, replicates: &str, body: &str) -> String {
    format!(
        "Experiment(\n    name: \"h\",\n    model: \"{model}\",\n    seed: 1,\n    replicates: {replicates},\n{body}\n)\n"
    )
}

/// A rollout model with `n` vtgates and one explicit poll offset each (a large model file).
fn explicit_offsets_model(n: usize) -> String {
    let offsets: Vec<String> = (0..n).map(|i| format!("\"{}ms\"", i % 59_000)).collect();
    format!(
        "Model(\n    name: \"big\",\n    world: Rollout(\n        vtgates: {n},\n        vtgate: (\n            tablet_refresh_interval: \"1m\",\n            phase: (kind: \"Explicit\", offsets: [{}]),\n        ),\n        horizon: \"2m\",\n    ),\n)\n",
        offsets.join(", ")
    )
}

#[test]
fn experiments_that_used_to_hang_or_overflow_are_refused_quickly() {
    let hold = "builtin:hold-fixture";
    let values_20000: Vec<String> = (1..=20_000).map(|i| format!("\"{i}s\"")).collect();
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "empty set key: the field locator searched for \"\" forever",
            experiment(hold, "1", "    set: { \"\": 1 },"),
            vec!["h.ron:6:12", "field `set.`", "empty parameter path"],
        ),
        (
            "empty axis parameter",
            experiment(hold, "1", "    axes: [Axis(param: \"\", values: [1])],"),
            vec!["h.ron:6:24", "field `param`", "empty parameter path"],
        ),
        (
            "parameter path of separators only",
            experiment(hold, "1", "    axes: [Axis(param: \"..\", values: [1])],"),
            vec!["h.ron:6:24", "field `..`", "empty segment"],
        ),
        (
            "unicode parameter path",
            experiment(hold, "1", "    set: { \"é.ü\": 1 },"),
            vec!["h.ron:6:12", "field `set.é.ü`", "unknown parameter `é`"],
        ),
        (
            "range step of 1e-300: 0 points and an empty 'success'",
            experiment(
                hold,
                "1",
                "    axes: [Axis(param: \"pending\", range: (from: 1.0, to: 2.0, step: 1e-300))],",
            ),
            vec!["field `pending`", "1.0000e300 values", "at most 100000"],
        ),
        (
            "four 65,536-value axes: a grid of 2^64 points wrapped to 0",
            experiment(
                hold,
                "1",
                "    axes: [\n\
                 Axis(param: \"pending\", range: (from: 1, to: 65536, step: 1)),\n\
                 Axis(param: \"events\", name: \"n\", range: (from: 1, to: 65536, step: 1)),\n\
                 Axis(param: \"mean_increment\", range: (from: \"1ns\", to: \"65536ns\", step: \"1ns\")),\n\
                 Axis(param: \"late_after\", range: (from: \"1ns\", to: \"65536ns\", step: \"1ns\")),\n\
                 ],",
            ),
            vec!["field `axes`", "= 1.8447e19 points", "at most 1000000"],
        ),
        (
            "replicates of 2^63: points x replicates wrapped to 0 jobs",
            experiment(
                hold,
                "9223372036854775808",
                "    axes: [Axis(param: \"pending\", values: [1, 2])],",
            ),
            vec!["h.ron:5:5", "field `replicates`", "1.8447e19 runs", "at most 1e12"],
        ),
        (
            "a 20,000-value axis over a model of 65,535 explicit offsets (about 10 GB before)",
            experiment(
                "big.ron",
                "1",
                &format!(
                    "    axes: [Axis(param: \"operator.tablet_available_timeout\", values: [{}])],",
                    values_20000.join(", ")
                ),
            ),
            vec!["field `axes`", "validating 20000 points", "at most 2e9"],
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("big.ron"), explicit_offsets_model(65_535)).unwrap();
    let mut failures = vec![];
    for (case, text, want) in cases {
        std::fs::write(tmp.path().join("h.ron"), text).unwrap();
        failures.extend(refusal_failures(tmp.path(), case, "h.ron", &want));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn commands_that_used_to_hang_or_abort_are_refused_quickly() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("h.ron"),
        experiment("builtin:hold-fixture", "1", ""),
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // Allocated 101 GB of rollout results and aborted.
        (
            vec![
                "advise",
                "--refresh-interval",
                "60s",
                "--vtgates",
                "10",
                "--target-risk",
                "1e-9",
            ],
            "smallest target is 4.3e-7",
        ),
        // Scanned 2.9 million gates.
        (
            vec!["advise", "--refresh-interval", "1000h", "--vtgates", "10"],
            "--refresh-interval 3600000s: at most 3600s",
        ),
        // Tried to start 100 000 threads.
        (
            vec!["run", "h.ron", "--threads", "100000", "--out", "out"],
            "at most 1024",
        ),
        // Read without end.
        (
            vec!["validate", "/dev/zero"],
            "/dev/zero: larger than 16 MiB",
        ),
        (vec!["replay", "/dev/zero"], "/dev/zero: larger than 16 MiB"),
        (
            vec!["diff", "/dev/zero", "h.ron"],
            "/dev/zero:1: a line longer than 1048576 bytes",
        ),
    ];
    for (args, want) in cases {
        if args.contains(&"/dev/zero") && !Path::new("/dev/zero").exists() {
            continue;
        }
        let o = vtsim_within(tmp.path(), &args, &[], 20);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: `{want}` not in {err}");
        assert!(!tmp.path().join("out").exists(), "{args:?}: output written");
    }
}
