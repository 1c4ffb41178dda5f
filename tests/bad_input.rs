//! Bad input gets a clear error naming the file, line, column and field, exit code 2, no
//! panic, and nothing written, within a time bound (every child is killed after 20 s and the
//! test fails: a hang is a bug).

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
        // Inputs that used to hang or overflow.
        (
            "empty set key (used to spin forever)",
            GOOD_MODEL.into(),
            experiment("    set: { \"\": 1 },"),
            vec!["exp.ron:6:12", "field `set.`", "an empty parameter path"],
        ),
        (
            "set key with an empty segment",
            GOOD_MODEL.into(),
            experiment("    set: { \"pending..x\": 1 },"),
            vec!["exp.ron:6:12", "field `set.pending..x`", "empty segment"],
        ),
        (
            "empty axis parameter (used to spin forever)",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"\", values: [1])],"),
            vec!["exp.ron:6:24", "field `param`", "an empty parameter path"],
        ),
        (
            "range step so small the count overflows",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"pending\", range: (from: 1.0, to: 2.0, step: 1e-300))],",
            ),
            vec!["exp.ron:6:24", "field `pending`", "1.0000e300 values", "at most 100000"],
        ),
        (
            "duration range of a trillion values",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"mean_increment\", range: (from: \"0s\", to: \"1h\", step: \"1ns\"))],",
            ),
            vec!["exp.ron:6:24", "field `mean_increment`", "3.6000e12 values"],
        ),
        (
            "grid whose size overflows u64",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"pending\", range: (from: 1, to: 65536, step: 1)),\n\
                 Axis(param: \"events\", name: \"n\", range: (from: 1, to: 65536, step: 1)),\n\
                 Axis(param: \"mean_increment\", range: (from: \"1ns\", to: \"65536ns\", step: \"1ns\")),\n\
                 Axis(param: \"late_after\", range: (from: \"1ns\", to: \"65536ns\", step: \"1ns\"))],",
            ),
            vec![
                "exp.ron:6:5",
                "field `axes`",
                "65536 × 65536 × 65536 × 65536 = 1.8447e19 points",
                "at most 1000000",
            ],
        ),
        (
            "grid just over the point bound",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"pending\", range: (from: 1, to: 1001, step: 1)),\n\
                 Axis(param: \"events\", name: \"n\", range: (from: 1, to: 1000, step: 1))],",
            ),
            vec!["field `axes`", "1001 × 1000 = 1.0010e6 points"],
        ),
        (
            "replicates that wrapped to 0 jobs",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", values: [1, 2])],")
                .replace("replicates: 3", "replicates: 9223372036854775808"),
            vec![
                "exp.ron:5:5",
                "field `replicates`",
                "2 points × 9223372036854775808 replicates = 1.8447e19 runs",
                "at most 1e12",
            ],
        ),
        (
            "points x replicates above the bound",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", values: [1, 2, 3])],")
                .replace("replicates: 3", "replicates: 400000000000"),
            vec!["field `replicates`", "= 1.2000e12 runs; at most 1e12"],
        ),
        // Silent substitution.
        (
            "model path with a typo (used to run the built-in model)",
            GOOD_MODEL.into(),
            good_x.replace("model.ron", "../modles/hold-fixture.ron"),
            vec![
                "exp.ron:3:5",
                "field `model`",
                "modles/hold-fixture.ron` not found (No such file or directory)",
                "`builtin:hold-fixture`",
            ],
        ),
        (
            "unknown built-in model",
            GOOD_MODEL.into(),
            good_x.replace("model.ron", "builtin:rollout-defualt"),
            vec![
                "exp.ron:3:5",
                "field `model`",
                "no built-in model `rollout-defualt`",
                "builtin:hold-fixture, ",
            ],
        ),
        (
            "one parameter under two axis names",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"pending\", values: [1, 2]), Axis(param: \"pending\", name: \"p2\", values: [3])],",
            ),
            vec!["exp.ron:6:64", "field `pending`", "two axes set `pending`"],
        ),
        (
            "an axis inside another",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"vtgate.phase\", values: [(kind: \"Uniform\")]),\n\
                 Axis(param: \"vtgate.phase.window\", values: [\"1s\"])],",
            )
            .replace("model.ron", "builtin:rollout-default"),
            vec![
                "exp.ron:7:",
                "field `vtgate.phase.window`",
                "two axes set `vtgate.phase` (`vtgate.phase.window` is inside it)",
            ],
        ),
        (
            "set overwritten by an axis",
            GOOD_MODEL.into(),
            experiment("    set: { \"pending\": 4 },\n    axes: [Axis(param: \"pending\", values: [1, 2])],"),
            vec!["exp.ron:6:12", "field `set.pending`", "the axis `pending` sweeps `pending`"],
        ),
        (
            "axis named seed (duplicate column)",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", name: \"seed\", values: [1, 2])],"),
            vec!["exp.ron:6:24", "field `pending`", "reserved column `seed`"],
        ),
        (
            "axis named after a reserved column in another case",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", name: \"Digest\", values: [1, 2])],"),
            vec!["field `pending`", "reserved column `digest`"],
        ),
        (
            "axis named after a metric",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", name: \"end_time_s\", values: [1, 2])],"),
            vec!["field `pending`", "is a metric of the model (`end_time_s`)"],
        ),
        (
            "two values with one label",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", values: [1, 2], labels: [\"a\", \"a\"])],"),
            vec!["field `pending`", "values 0 and 1 have the same label `a`"],
        ),
        (
            "two structured values with one default label",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"vtgate.phase\", values: [(kind: \"Clustered\", window: \"1s\"), (kind: \"Clustered\", window: \"2s\")])],",
            )
            .replace("model.ron", "builtin:rollout-default"),
            vec!["field `vtgate.phase`", "same label `clustered`", "`labels`"],
        ),
        // Labels and names that cannot round-trip through a CSV row and an HTML page.
        (
            "newline in a label",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", values: [1], labels: [\"a\\nb\"])],"),
            vec!["exp.ron:6:24", "field `pending`", "U+000A", "printable"],
        ),
        (
            "NUL in a label",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", values: [1], labels: [\"a\\u{0}\"])],"),
            vec!["field `pending`", "U+0000"],
        ),
        (
            "control character in a string value's default label",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"mean_increment\", values: [\"x\\ty\"])],"),
            vec!["field `mean_increment`", "U+0009", "give the axis `labels`"],
        ),
        (
            "control character in an axis name",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", name: \"p\\r\", values: [1])],"),
            vec!["field `pending`", "axis name", "U+000D"],
        ),
        (
            "empty label",
            GOOD_MODEL.into(),
            experiment("    axes: [Axis(param: \"pending\", values: [1], labels: [\"\"])],"),
            vec!["field `pending`", "an empty label"],
        ),
        (
            "experiment name too long",
            GOOD_MODEL.into(),
            good_x.replace("name: \"x\"", &format!("name: \"{}\"", "x".repeat(101))),
            vec!["exp.ron:2:5", "field `name`", "1 to 100 letters"],
        ),
        (
            "chart name of 300 characters",
            GOOD_MODEL.into(),
            experiment(&format!(
                "    axes: [Axis(param: \"pending\", values: [1])],\n    charts: [Chart(name: \"{}\", title: \"t\", x: \"pending\", x_label: \"p\", y: [\"events\"], y_label: \"e\")],",
                "c".repeat(300)
            )),
            vec!["exp.ron:7:", "field `name`", "chart name", "1 to 100 letters"],
        ),
        (
            "two charts of one name",
            GOOD_MODEL.into(),
            experiment(
                "    axes: [Axis(param: \"pending\", values: [1])],\n    charts: [Chart(name: \"c\", title: \"t\", x: \"pending\", x_label: \"p\", y: [\"handled_events\"], y_label: \"e\"), Chart(name: \"c\", title: \"t\", x: \"pending\", x_label: \"p\", y: [\"handled_events\"], y_label: \"e\")],",
            ),
            vec!["field `name`", "two charts are named `c`"],
        ),
        // Messages: a bad value in `set` is reported at its key.
        (
            "set value of the wrong type",
            GOOD_MODEL.into(),
            experiment("    set: { \"pending\": \"many\" },"),
            vec!["exp.ron:6:12", "field `set.pending`", "the value \"many\"", "invalid type"],
        ),
        (
            "set value the model rejects",
            GOOD_MODEL.into(),
            experiment("    set: { \"events\": 5, \"pending\": 0 },"),
            vec!["exp.ron:6:25", "field `set.pending`", "at least 1"],
        ),
        (
            "unknown set parameter",
            GOOD_MODEL.into(),
            experiment("    set: { \"pendng\": 1 },"),
            vec!["exp.ron:6:12", "field `set.pendng`", "unknown parameter `pendng`"],
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
        failures.extend(refusal_failures(tmp.path(), case, "exp.ron", &want));
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
        let o = vtsim_within(tmp.path(), &args, &[], 20);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: `{want}` not in {err}");
        assert!(!tmp.path().join("notebooks-out").exists());
    }
}

/// Flags and environment out of bounds, unknown or mistyped models, and bad `--set` values:
/// exit 2 with the flag (or field), the bound and what to do; no output written (not even the
/// `--trace` file).
#[test]
fn command_line_bounds_and_names_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("model.ron"), GOOD_MODEL).unwrap();
    std::fs::write(tmp.path().join("exp.ron"), experiment("")).unwrap();
    std::fs::write(tmp.path().join("other.ron"), "Thing(a: 1)\n").unwrap();
    let advise = |extra: &[&'static str]| {
        let mut v = vec!["advise", "--refresh-interval", "60s", "--vtgates", "10"];
        v.extend_from_slice(extra);
        v
    };
    type Case<'a> = (Vec<&'a str>, &'a [(&'a str, &'a str)], Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            vec!["run", "exp.ron", "--threads", "100000"],
            &[],
            vec!["--threads 100000", "at most 1024"],
        ),
        (
            vec!["run", "exp.ron"],
            &[("RAYON_NUM_THREADS", "100000")],
            vec!["RAYON_NUM_THREADS=100000", "at most 1024"],
        ),
        (
            advise(&["--threads", "5000"]),
            &[],
            vec!["--threads 5000", "at most 1024"],
        ),
        (
            advise(&["--target-risk", "1e-9"]),
            &[],
            vec![
                "--target-risk 1e-9 needs 4.23e9 rollouts per gate",
                "at most 1e7",
                "the smallest target is 4.3e-7",
            ],
        ),
        (
            advise(&["--rollouts", "100000000"]),
            &[],
            vec!["--rollouts 100000000: at most 1e7 per gate"],
        ),
        (
            vec!["advise", "--refresh-interval", "1000h", "--vtgates", "10"],
            &[],
            vec!["--refresh-interval 3600000s: at most 3600s"],
        ),
        (
            advise(&["--step", "1ms"]),
            &[],
            vec![
                "--step 1ms scans 240001 gates",
                "at most 1000",
                "use a --step of at least 241ms",
            ],
        ),
        (
            advise(&["--model", "builtin:nope"]),
            &[],
            vec![
                "builtin:nope: no built-in model `nope`",
                "builtin:rollout-default",
            ],
        ),
        (
            vec!["bench", "--events", "1000000000"],
            &[],
            vec!["--events 1000000000", "at most 1e8"],
        ),
        (
            vec!["replay", "builtin:incident-00"],
            &[],
            vec!["no built-in model `incident-00`", "builtin:incident-000"],
        ),
        (
            vec!["replay", "models/rollout-default.ron"],
            &[],
            vec![
                "models/rollout-default.ron: cannot read: No such file or directory",
                "built in: `builtin:rollout-default`",
            ],
        ),
        (
            vec!["replay", "exp.ron", "--trace", "t.jsonl"],
            &[],
            vec!["exp.ron: an experiment file", "vtsim run exp.ron"],
        ),
        (
            vec!["replay", "model.ron", "--set", "=1", "--trace", "t.jsonl"],
            &[],
            vec!["--set `=1`", "an empty parameter path"],
        ),
        (
            vec![
                "replay",
                "model.ron",
                "--set",
                "pending..x=1",
                "--trace",
                "t.jsonl",
            ],
            &[],
            vec!["--set `pending..x=1`", "empty segment"],
        ),
        (
            vec![
                "replay",
                "model.ron",
                "--set",
                "events=5",
                "--set",
                "pending=\"many\"",
                "--trace",
                "t.jsonl",
            ],
            &[],
            vec!["--set `pending=\"many\"`", "invalid type"],
        ),
        (
            vec!["validate", "other.ron"],
            &[],
            vec![
                "other.ron:1:1",
                "the file is a `Thing`",
                "expected `Model(` or `Experiment(`",
            ],
        ),
        (
            vec!["diff", "model.ron", "model.ron", "--context", "1000"],
            &[],
            vec!["--context 1000: at most 100"],
        ),
    ];
    for (args, env, want) in cases {
        let o = vtsim_within(tmp.path(), &args, env, 20);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        for w in want {
            assert!(err.contains(w), "{args:?}: `{w}` not in {err}");
        }
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!tmp.path().join("notebooks-out").exists(), "{args:?}");
        assert!(
            !tmp.path().join("t.jsonl").exists(),
            "{args:?}: trace written"
        );
    }
}

/// A file that is not UTF-8 is refused at its first bad byte (line, column, byte offset),
/// as an experiment, as the model it names, and on the command line.
#[test]
fn non_utf8_input_names_the_first_bad_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let mut model = GOOD_MODEL.as_bytes().to_vec();
    // Line 2 is `    name: "m",`: a Latin-1 e-acute inside the name, at column 12.
    let at = GOOD_MODEL.find("\"m\"").unwrap() + 1;
    model[at] = 0xe9;
    std::fs::write(tmp.path().join("model.ron"), &model).unwrap();
    let mut exp = experiment("").into_bytes();
    let at = exp.iter().position(|&b| b == b'1').unwrap(); // `seed: 1` on line 4
    exp[at] = 0xff;
    std::fs::write(tmp.path().join("exp.ron"), &exp).unwrap();
    std::fs::write(tmp.path().join("good.ron"), experiment("")).unwrap();
    let m_off = GOOD_MODEL.find("\"m\"").unwrap() + 1;
    let x_off = at;
    for (args, want) in [
        (
            vec!["validate", "model.ron"],
            format!("model.ron:2:12: not UTF-8: byte 0xe9 at byte offset {m_off}"),
        ),
        (
            vec!["replay", "model.ron"],
            format!("model.ron:2:12: not UTF-8: byte 0xe9 at byte offset {m_off}"),
        ),
        (
            vec!["validate", "exp.ron"],
            format!("exp.ron:4:11: not UTF-8: byte 0xff at byte offset {x_off}"),
        ),
        (
            vec!["run", "exp.ron"],
            format!("exp.ron:4:11: not UTF-8: byte 0xff at byte offset {x_off}"),
        ),
        (
            vec!["validate", "good.ron"],
            format!("model.ron:2:12: not UTF-8: byte 0xe9 at byte offset {m_off}"),
        ),
    ] {
        let o = vtsim_within(tmp.path(), &args, &[], 20);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&want), "{args:?}: `{want}` not in {err}");
        assert!(!tmp.path().join("notebooks-out").exists());
    }
}

/// I/O failures name the file and say the OS error in plain words (exit 1: not the input's
/// fault), without Rust's `(os error N)` codes.
#[test]
fn io_failures_name_the_file_in_plain_words() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("model.ron"), GOOD_MODEL).unwrap();
    for (args, code, want) in [
        (
            vec!["replay", "model.ron", "--trace", "no/such/dir/t.jsonl"],
            1,
            "cannot create the trace file no/such/dir/t.jsonl: No such file or directory",
        ),
        (
            vec!["replay", "model.ron", "--out", "model.ron/sub"],
            1,
            "cannot create the folder model.ron/sub: Not a directory",
        ),
        (vec!["validate", "."], 2, ".: cannot read: Is a directory"),
        (
            vec!["diff", "a.jsonl", "model.ron"],
            2,
            "a.jsonl: cannot read: No such file or directory",
        ),
    ] {
        let o = vtsim_within(tmp.path(), &args, &[], 20);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: `{want}` not in {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
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

/// The shipped models with one value broken: (model, from, to, expected fragments). The error
/// names the file and the line of the broken value (found in the file, so comments can change).
#[test]
fn shipped_models_refuse_impossible_values() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "rollout-default.ron",
            "vtgates: 10,",
            "vtgates: 0,",
            &["field `vtgates`"],
        ),
        (
            "rollout-default.ron",
            "tablet_refresh_interval: \"1m\"",
            "tablet_refresh_interval: \"-1m\"",
            &["field `tablet_refresh_interval`", "negative"],
        ),
        (
            "playground.ron",
            "failure_threshold: 3,",
            "failure_threshold: 0,",
            &["failure_threshold"],
        ),
        (
            "connpool-default.ron",
            "capacity: 20,",
            "capacity: 0,",
            &["capacity"],
        ),
    ];
    for (model, from, to, want) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(root().join("models").join(model)).unwrap();
        assert!(text.contains(from), "{model}: `{from}` not found");
        std::fs::write(tmp.path().join(model), text.replacen(from, to, 1)).unwrap();
        let line = text[..text.find(from).unwrap()].matches('\n').count() + 1;
        let at = format!("{model}:{line}:");
        for args in [vec!["validate", *model], vec!["replay", *model]] {
            let o = vtsim(tmp.path(), &args, &[]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{model} {to}: {err}");
            assert!(err.contains(&at), "{model} {to}: `{at}` not in {err}");
            for w in *want {
                assert!(err.contains(w), "{model} {to}: `{w}` not in {err}");
            }
        }
    }
}
