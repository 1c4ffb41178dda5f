//! Bad input gets a clear error naming the file, line, column and field, exit code 2, no
//! panic, and nothing written.

mod common;
use common::*;

const GOOD_MODEL: &str = r#"Model(
    name: "m",
    world: Hold(
        pending: 10,
        events: 100,
        mean_increment: "1ms",
    ),
)
"#;

fn experiment(body: &str) -> String {
    format!(
        r#"Experiment(
    name: "x",
    model: "model.ron",
    seed: 1,
    replicates: 3,
{body}
)
"#
    )
}

/// (case, model text, experiment text, expected fragments of stderr)
fn cases() -> Vec<(&'static str, String, String, Vec<&'static str>)> {
    let good_x = experiment("");
    vec![
        (
            "unclosed parenthesis",
            GOOD_MODEL.into(),
            "Experiment(\n    name: \"x\",\n    model: \"model.ron\",\n".into(),
            vec!["exp.ron:3:", "ends early"],
        ),
        (
            "unknown experiment field",
            GOOD_MODEL.into(),
            experiment("    replicatez: 4,"),
            vec!["exp.ron:6:5", "field `replicatez`", "expected one of"],
        ),
        (
            "unknown model field",
            GOOD_MODEL.replace("events: 100,", "events: 100,\n        evnets: 3,"),
            good_x.clone(),
            vec!["model.ron:6:9", "field `evnets`"],
        ),
        (
            "negative duration",
            GOOD_MODEL.replace("\"1ms\"", "\"-5ms\""),
            good_x.clone(),
            vec!["model.ron:6:", "field `mean_increment`", "negative duration"],
        ),
        (
            "duration without a unit",
            GOOD_MODEL.replace("\"1ms\"", "\"30\""),
            good_x.clone(),
            vec!["model.ron:6:", "field `mean_increment`", "no unit"],
        ),
        (
            "duration as a number",
            GOOD_MODEL.replace("\"1ms\"", "30"),
            good_x.clone(),
            vec!["model.ron:6:", "field `mean_increment`", "expected a string", "\"90s\""],
        ),
        (
            "zero in a count the model needs",
            GOOD_MODEL.replace("pending: 10", "pending: 0"),
            good_x.clone(),
            vec!["model.ron:4:9", "field `pending`", "at least 1"],
        ),
        (
            "negative count",
            GOOD_MODEL.replace("pending: 10", "pending: -3"),
            good_x.clone(),
            vec!["model.ron:4:", "field `pending`"],
        ),
        (
            "zero replicates",
            GOOD_MODEL.into(),
            good_x.replace("replicates: 3", "replicates: 0"),
            vec!["exp.ron:5:5", "field `replicates`", "at least 1"],
        ),
        (
            "unknown model variant",
            GOOD_MODEL.replace("Hold(", "Hodl("),
            good_x.clone(),
            vec!["model.ron:3:", "field `world`", "unknown variant `Hodl`"],
        ),
        (
            "missing model file",
            GOOD_MODEL.into(),
            good_x.replace("model.ron", "nope.ron"),
            vec!["exp.ron:3:5", "field `model`", "not found"],
        ),
        (
            "unknown sweep parameter",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pendng\", values: [1, 2])],"),
            vec!["exp.ron:6:", "field `pendng`", "unknown parameter", "pending"],
        ),
        (
            "sweep value of the wrong type",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"mean_increment\", values: [\"1ms\", \"-1s\"])],"),
            vec!["exp.ron", "point 1", "negative duration"],
        ),
        (
            "sweep value the model rejects",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", values: [1, 0])],"),
            vec!["exp.ron", "field `pending`", "point 1"],
        ),
        (
            "zipped axes of unequal length",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Zip([Axis(param: \"pending\", values: [1, 2]), Axis(param: \"events\", name: \"n\", values: [5])])],",
            ),
            vec!["exp.ron", "equal lengths"],
        ),
        (
            "range with a zero step",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"mean_increment\", range: (from: \"1ms\", to: \"5ms\", step: \"0s\"))],",
            ),
            vec!["exp.ron", "field `mean_increment`", "step must be > 0"],
        ),
        (
            "unknown metric",
            GOOD_MODEL.into(),
            experiment("    metrics: [\"end_time\"],"),
            vec!["exp.ron:6:5", "field `metrics`", "unknown metric `end_time`", "end_time_s"],
        ),
        (
            "chart on a parameter that is not swept",
            GOOD_MODEL.into(),
            experiment(
                "    charts: [Chart(name: \"c\", title: \"t\", x: \"pending\", x_label: \"p\", y: [\"events\"], y_label: \"e\")],",
            ),
            vec!["exp.ron:6:", "field `x`", "not an axis"],
        ),
        (
            "bad output name",
            GOOD_MODEL.into(),
            good_x.replace("name: \"x\"", "name: \"../x\""),
            vec!["exp.ron:2:5", "field `name`"],
        ),
    ]
}

#[test]
fn every_malformed_file_is_refused_with_its_location() {
    let mut failures = vec![];
    for (case, model, exp, want) in cases() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("model.ron"), &model).unwrap();
        std::fs::write(tmp.path().join("exp.ron"), &exp).unwrap();
        let out = tmp.path().join("out");
        for args in [
            vec!["run", "exp.ron", "--out", out.to_str().unwrap()],
            vec!["validate", "exp.ron"],
        ] {
            let o = vtsim(tmp.path(), &args, &[]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{case}: {args:?}: exit code; stderr: {err}"
            );
            for w in &want {
                if !err.contains(w) {
                    failures.push(format!("{case}: {args:?}: `{w}` not in: {err}"));
                }
            }
            assert!(!err.contains("panicked"), "{case}: panic: {err}");
            assert!(!out.exists(), "{case}: output written");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_command_line_values_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("model.ron"), GOOD_MODEL).unwrap();
    std::fs::write(tmp.path().join("exp.ron"), experiment("")).unwrap();
    for (args, want) in [
        (vec!["run", "exp.ron", "--shard", "4/3"], "1 <= K <= N"),
        (vec!["run", "exp.ron", "--shard", "two"], "expected K/N"),
        (vec!["run", "exp.ron", "--threads", "0"], "at least 1"),
        (vec!["run", "missing.ron"], "missing.ron: cannot read"),
        (vec!["validate", "missing.ron"], "missing.ron: cannot read"),
        (
            vec!["replay", "model.ron", "--set", "pending=0"],
            "field `pending`",
        ),
        (
            vec!["replay", "model.ron", "--set", "nope=1"],
            "unknown parameter `nope`",
        ),
        (vec!["replay", "exp.ron"], "exp.ron"),
    ] {
        let o = vtsim(tmp.path(), &args, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: `{want}` not in {err}");
        assert!(!tmp.path().join("notebooks-out").exists());
    }
}

#[test]
fn a_good_file_validates() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("model.ron"), GOOD_MODEL).unwrap();
    std::fs::write(tmp.path().join("exp.ron"), experiment("")).unwrap();
    let o = vtsim(tmp.path(), &["validate", "exp.ron"], &[]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 points x 3 replicates = 3 runs"));
    let o = vtsim(tmp.path(), &["validate", "model.ron"], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The shipped models with one value broken: (model, from, to, expected fragments).
#[test]
fn shipped_models_refuse_impossible_values() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "rollout-default.ron",
            "vtgates: 10,",
            "vtgates: 0,",
            &["rollout-default.ron:11:", "field `vtgates`"],
        ),
        (
            "rollout-default.ron",
            "tablet_refresh_interval: \"1m\"",
            "tablet_refresh_interval: \"-1m\"",
            &[
                "rollout-default.ron:",
                "field `tablet_refresh_interval`",
                "negative",
            ],
        ),
        (
            "playground.ron",
            "failure_threshold: 3,",
            "failure_threshold: 0,",
            &["playground.ron:23:", "failure_threshold"],
        ),
        (
            "connpool-default.ron",
            "capacity: 20,",
            "capacity: 0,",
            &["connpool-default.ron:10:", "capacity"],
        ),
    ];
    for (model, from, to, want) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(root().join("models").join(model)).unwrap();
        assert!(text.contains(from), "{model}: `{from}` not found");
        std::fs::write(tmp.path().join(model), text.replacen(from, to, 1)).unwrap();
        for args in [vec!["validate", *model], vec!["replay", *model]] {
            let o = vtsim(tmp.path(), &args, &[]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{model} {to}: {err}");
            for w in *want {
                assert!(err.contains(w), "{model} {to}: `{w}` not in {err}");
            }
        }
    }
}
