//! The runner's promises: identical outputs for any thread count, for shards merged, and for
//! a run killed and resumed.

mod common;
use common::*;

/// Run `exp` into `dir/out1` and `dir/out2` with 1 and 2 threads; assert identical trees.
fn run_on_1_and_2_threads(dir: &std::path::Path, exp: &std::path::Path) {
    for t in ["1", "2"] {
        let out = dir.join(format!("out{t}"));
        vtsim_ok(
            dir,
            &[
                "run",
                exp.to_str().unwrap(),
                "--threads",
                t,
                "--out",
                out.to_str().unwrap(),
            ],
        );
    }
    assert_same_tree(&dir.join("out1"), &dir.join("out2"));
}

#[test]
fn threads_1_and_2_write_identical_files() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "thr", 30);
    run_on_1_and_2_threads(tmp.path(), &exp);
    let files: Vec<String> = tree(&tmp.path().join("out1"))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for f in [
        "runs.csv",
        "points.csv",
        "summary.json",
        "index.html",
        "end.png",
        "end.svg",
        "late.png",
    ] {
        assert!(files.iter().any(|n| n == f), "missing {f}: {files:?}");
    }
}

#[test]
fn three_shards_merged_equal_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "shard", 25);
    let whole = tmp.path().join("whole");
    let split = tmp.path().join("split");
    vtsim_ok(
        tmp.path(),
        &[
            "run",
            exp.to_str().unwrap(),
            "--out",
            whole.to_str().unwrap(),
        ],
    );
    for k in ["1/3", "2/3", "3/3"] {
        vtsim_ok(
            tmp.path(),
            &[
                "run",
                exp.to_str().unwrap(),
                "--shard",
                k,
                "--threads",
                "1",
                "--out",
                split.to_str().unwrap(),
            ],
        );
    }
    // Merged, the shards match the single run byte for byte.
    vtsim_ok(
        tmp.path(),
        &[
            "merge",
            exp.to_str().unwrap(),
            "--out",
            split.to_str().unwrap(),
        ],
    );
    assert_same_tree(&whole, &split);
}

#[test]
fn merge_refuses_a_missing_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "miss", 5);
    let split = tmp.path().join("split");
    for k in ["1/3", "3/3"] {
        vtsim_ok(
            tmp.path(),
            &[
                "run",
                exp.to_str().unwrap(),
                "--shard",
                k,
                "--out",
                split.to_str().unwrap(),
            ],
        );
    }
    let o = vtsim(
        tmp.path(),
        &[
            "merge",
            exp.to_str().unwrap(),
            "--out",
            split.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("shard 2/3"));
    assert!(!split.join("points.csv").exists());
}

#[test]
fn a_killed_run_resumes_to_identical_files() {
    let tmp = tempfile::tempdir().unwrap();
    // 6 points x 400 replicates = 2400 jobs; with one thread a chunk is 1024 jobs.
    let exp = hold_experiment(tmp.path(), "resume", 400);
    let whole = tmp.path().join("whole");
    let killed = tmp.path().join("killed");
    vtsim_ok(
        tmp.path(),
        &[
            "run",
            exp.to_str().unwrap(),
            "--threads",
            "1",
            "--out",
            whole.to_str().unwrap(),
        ],
    );
    let o = vtsim(
        tmp.path(),
        &[
            "run",
            exp.to_str().unwrap(),
            "--threads",
            "1",
            "--out",
            killed.to_str().unwrap(),
        ],
        &[("VTSIM_ABORT_AFTER_JOBS", "1000")],
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!killed.join("runs.csv").exists());
    assert!(!killed.join("points.csv").exists());
    // A kill can tear the last line: append half a row.
    let partial = killed.join("runs.csv.partial");
    let mut bytes = std::fs::read(&partial).unwrap();
    let rows_before = bytes.iter().filter(|b| **b == b'\n').count();
    assert_eq!(rows_before, 1 + 1024, "header + one chunk");
    bytes.extend_from_slice(b"1024,2,224,123");
    std::fs::write(&partial, bytes).unwrap();
    let o = vtsim_ok(
        tmp.path(),
        &[
            "run",
            exp.to_str().unwrap(),
            "--threads",
            "2",
            "--resume",
            "--out",
            killed.to_str().unwrap(),
        ],
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("1024 resumed"));
    assert_same_tree(&whole, &killed);
}

#[test]
fn resume_refuses_another_experiment() {
    let tmp = tempfile::tempdir().unwrap();
    let a = hold_experiment(tmp.path(), "a", 400);
    let out = tmp.path().join("out");
    let o = vtsim(
        tmp.path(),
        &[
            "run",
            a.to_str().unwrap(),
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("VTSIM_ABORT_AFTER_JOBS", "1")],
    );
    assert_eq!(o.status.code(), Some(3));
    let b = hold_experiment(tmp.path(), "b", 401);
    let o = vtsim(
        tmp.path(),
        &[
            "run",
            b.to_str().unwrap(),
            "--resume",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different experiment"));
}

#[test]
fn replay_is_deterministic_and_its_trace_leaves_the_digest_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let model = root().join("models/hold-fixture.ron");
    let a = vtsim(
        tmp.path(),
        &["replay", model.to_str().unwrap(), "--seed", "5"],
        &[],
    );
    let b = vtsim(
        tmp.path(),
        &["replay", model.to_str().unwrap(), "--seed", "5"],
        &[],
    );
    let c = vtsim(
        tmp.path(),
        &["replay", model.to_str().unwrap(), "--seed", "6"],
        &[],
    );
    let digest = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.starts_with("digest"))
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .expect("digest line")
    };
    assert_eq!(digest(&a), digest(&b));
    assert_ne!(digest(&a), digest(&c));
    assert_eq!(digest(&a).len(), 64);
    // The JSONL trace has one line per event and does not change the digest.
    let trace = tmp.path().join("t.jsonl");
    let d = vtsim(
        tmp.path(),
        &[
            "replay",
            model.to_str().unwrap(),
            "--seed",
            "5",
            "--trace",
            trace.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(digest(&a), digest(&d));
    let lines = std::fs::read_to_string(&trace).unwrap().lines().count();
    assert_eq!(lines, 10_000);
}

#[test]
fn a_rollout_sweep_is_identical_on_1_and_2_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("r.ron");
    std::fs::write(
        &exp,
        format!(
            r#"Experiment(
    name: "r",
    model: "{}",
    seed: 3,
    replicates: 40,
    axes: [
        Axis(param: "operator.tablet_available_timeout", name: "gate", values: ["20s", "40s"]),
        Axis(param: "vtgate.phase", name: "phase",
             values: [(kind: "Uniform"), (kind: "Clustered", window: "10s")]),
    ],
    charts: [Chart(name: "p", title: "p", x: "gate", x_label: "s", y: ["any_error"],
                   y_label: "P", series: "phase")],
)
"#,
            root().join("models/rollout-default.ron").display()
        ),
    )
    .unwrap();
    run_on_1_and_2_threads(tmp.path(), &exp);
}

#[test]
fn replay_fails_when_the_trace_cannot_be_written() {
    let tmp = tempfile::tempdir().unwrap();
    let model = root().join("models/hold-fixture.ron");
    let o = vtsim(
        tmp.path(),
        &["replay", model.to_str().unwrap(), "--trace", "/dev/full"],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("writing the trace /dev/full"));
}
