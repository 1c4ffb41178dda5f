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
    run_into(tmp.path(), &exp, &whole, &[]);
    for k in ["1/3", "2/3", "3/3"] {
        run_into(tmp.path(), &exp, &split, &["--shard", k, "--threads", "1"]);
    }
    // Merged, the shards match the single run byte for byte.
    merge_ok(tmp.path(), &exp, &split);
    assert_same_tree(&whole, &split);
}

#[test]
fn merge_refuses_a_missing_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "miss", 5);
    let split = tmp.path().join("split");
    for k in ["1/3", "3/3"] {
        run_into(tmp.path(), &exp, &split, &["--shard", k]);
    }
    let o = merge(tmp.path(), &exp, &split);
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
    let o = run_killed_after(tmp.path(), &exp, &killed, "1000");
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
    let o = run_killed_after(tmp.path(), &a, &out, "1");
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
    let text = std::fs::read_to_string(&trace).unwrap();
    let events = text
        .lines()
        .filter(|l| l.starts_with(r#"{"type":"event""#))
        .count();
    let metrics = text
        .lines()
        .filter(|l| l.starts_with(r#"{"type":"metric""#))
        .count();
    assert_eq!((events, metrics, text.lines().count()), (10_000, 3, 10_003));
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

/// The rows of a CSV file whose fields hold no quotes (the hold experiment's), as lines.
fn lines_of(bytes: &[u8]) -> Vec<String> {
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .map(|l| l.to_string())
        .collect()
}

fn join_lines(lines: &[String]) -> Vec<u8> {
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// Set field `i` of data row `row` (1-based) to `v`.
fn set_field(lines: &mut [String], row: usize, i: usize, v: &str) {
    let mut f: Vec<String> = lines[row].split(',').map(|s| s.to_string()).collect();
    assert_ne!(f[i], v, "the tamper must change something");
    f[i] = v.to_string();
    lines[row] = f.join(",");
}

/// A change to a shard's rows: set field `i` of data row 3 to a value, or any other edit.
enum Tamper {
    Field(usize, &'static str),
    Edit(fn(&mut Vec<String>)),
}
use Tamper::{Edit, Field};

#[test]
fn merge_refuses_a_tampered_shard_and_keeps_the_previous_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    // 6 points x 5 replicates = 30 jobs; shard 2/3 holds jobs 1, 4, 7, ... (10 rows).
    let exp = hold_experiment(tmp.path(), "tamper", 5);
    let split = tmp.path().join("split");
    shards_and_merge(tmp.path(), &exp, &split, 3);
    let before = tree(&split);
    let shard = split.join("shards/2-of-3/runs.csv");
    let good = std::fs::read(&shard).unwrap();
    // Columns: job,point,replicate,seed,pending,mean_increment,events,end_time_s,ended_late,
    // events,digest. Row 3 of shard 2/3 is job 7 (point 1, replicate 2).
    let cases: Vec<(&str, Tamper, &[&str])> = vec![
        (
            "metric",
            Field(7, "12.5"),
            &["row 3 ", "`end_time_s` is `12.5` in the file"],
        ),
        (
            "indicator",
            Field(8, "0"),
            &["row 3 ", "`ended_late` is `0` in the file"],
        ),
        (
            "events",
            Field(9, "301"),
            &["row 3 ", "`events` is `301` in the file"],
        ),
        (
            "digest",
            Edit(|l| {
                let d = l[3].rsplit(',').next().unwrap().to_string();
                let e = format!("{}{}", &d[..63], if d.ends_with('0') { "1" } else { "0" });
                set_field(l, 3, 10, &e)
            }),
            &["row 3 ", "`digest` is"],
        ),
        (
            "seed",
            Field(3, "12345"),
            &["row 3 ", "`seed` is `12345`, expected"],
        ),
        (
            "job",
            Field(0, "8"),
            &["row 3 ", "`job` is `8`, expected `7`"],
        ),
        (
            "point",
            Field(1, "0"),
            &["row 3 ", "`point` is `0`, expected `1`"],
        ),
        (
            "replicate",
            Field(2, "3"),
            &["row 3 ", "`replicate` is `3`, expected `2`"],
        ),
        (
            "label",
            Field(4, "6"),
            &["row 3 ", "`pending` is `6`, expected `5`"],
        ),
        (
            "dropped row",
            Edit(|l| {
                l.remove(3);
            }),
            &["row 3 ", "`job` is `10`, expected `7`"],
        ),
        (
            "duplicated row",
            Edit(|l| {
                let r = l[3].clone();
                l.insert(3, r);
            }),
            &["row 4 ", "`job` is `7`, expected `10`"],
        ),
        (
            "unparsable row",
            Edit(|l| l[3] = "7,1,2,x".into()),
            &["row 3 ", "4 fields, expected 11"],
        ),
        (
            "swapped rows",
            Edit(|l| l.swap(3, 4)),
            &["row 3 ", "`job` is `10`, expected `7`"],
        ),
        (
            "extra row",
            Edit(|l| {
                let r = l[1].clone();
                l.push(r);
            }),
            &["row 11 ", "beyond the shard's 10 jobs"],
        ),
        (
            "dropped last row",
            Edit(|l| {
                l.pop();
            }),
            &["ends after row 9", "job 28 (row 10) is missing"],
        ),
        (
            "number format",
            Field(9, "0300"),
            &["row 3 ", "`events` is `0300`, not a count"],
        ),
    ];
    for (what, tamper, expect) in cases {
        let mut lines = lines_of(&good);
        match tamper {
            Field(i, v) => set_field(&mut lines, 3, i, v),
            Edit(edit) => edit(&mut lines),
        }
        std::fs::write(&shard, join_lines(&lines)).unwrap();
        let o = merge(tmp.path(), &exp, &split);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.contains("shards/2-of-3/runs.csv: row")
                || err.contains("shards/2-of-3/runs.csv: ends"),
            "{what}: {err}"
        );
        for e in expect {
            assert!(err.contains(e), "{what}: expected `{e}` in: {err}");
        }
        assert!(
            before == tree(&split),
            "{what}: the previous outputs changed"
        );
        assert_eq!(
            names(&listing(tmp.path()))
                .iter()
                .filter(|n| n.starts_with('.'))
                .count(),
            0,
            "{what}: a staging folder or lock was left behind"
        );
    }
    // The untouched shard merges again to the same files.
    std::fs::write(&shard, &good).unwrap();
    merge_ok(tmp.path(), &exp, &split);
    assert!(before == tree(&split));
}

/// Rewrite a shard's `shard.json` hashes to match its (changed) `runs.csv`.
fn rehash_shard(dir: &std::path::Path) {
    let runs = std::fs::read(dir.join("runs.csv")).unwrap();
    let lines = lines_of(&runs);
    let blocks: Vec<String> = lines[1..]
        .chunks(64)
        .map(|c| {
            let mut h = blake3::Hasher::new();
            for l in c {
                h.update(l.as_bytes());
                h.update(b"\n");
            }
            h.finalize().to_hex()[..32].to_string()
        })
        .collect();
    let p = dir.join("shard.json");
    let mut j: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    j["runs_csv_blake3"] = blake3::hash(&runs).to_hex().to_string().into();
    j["block_blake3"] = serde_json::json!(blocks);
    std::fs::write(&p, serde_json::to_string_pretty(&j).unwrap()).unwrap();
}

#[test]
fn merge_checks_shard_json_and_simulates_each_shards_first_row_again() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "rehash", 5);
    let split = tmp.path().join("split");
    shards_and_merge(tmp.path(), &exp, &split, 3);
    let before = tree(&split);
    let dir = split.join("shards/1-of-3");
    let (good_runs, good_json) = (
        std::fs::read(dir.join("runs.csv")).unwrap(),
        std::fs::read(dir.join("shard.json")).unwrap(),
    );
    let merge_again = || merge(tmp.path(), &exp, &split);
    // A changed metric in row 1 with shard.json rehashed to match: the re-simulation of the
    // shard's first row still catches it.
    let mut lines = lines_of(&good_runs);
    set_field(&mut lines, 1, 7, "12.5");
    std::fs::write(dir.join("runs.csv"), join_lines(&lines)).unwrap();
    rehash_shard(&dir);
    let o = merge_again();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("shards/1-of-3/runs.csv: row 1 (line 2, job 0) is not what this vtsim simulates: `end_time_s` is `12.5` in the file"),
        "{}",
        stderr(&o)
    );
    assert!(before == tree(&split));
    // A changed metric in row 3, shard.json as it was: the block's hash fails, and its rows
    // simulated again name the row and the field.
    let mut lines = lines_of(&good_runs);
    set_field(&mut lines, 3, 7, "12.5");
    std::fs::write(dir.join("runs.csv"), join_lines(&lines)).unwrap();
    std::fs::write(dir.join("shard.json"), &good_json).unwrap();
    let o = merge_again();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("shards/1-of-3/runs.csv: row 3 (line 4, job 6) was changed after the shard finished: `end_time_s` is `12.5` in the file"),
        "{}",
        stderr(&o)
    );
    assert!(before == tree(&split));
    // A block hash changed in shard.json: the rows re-simulate fine, so shard.json is blamed.
    std::fs::write(dir.join("runs.csv"), &good_runs).unwrap();
    let mut j: serde_json::Value = serde_json::from_slice(&good_json).unwrap();
    j["block_blake3"][0] = "00000000000000000000000000000000".into();
    std::fs::write(dir.join("shard.json"), j.to_string()).unwrap();
    let o = merge_again();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "rows 1-10 match what this vtsim simulates but not the hash shard.json recorded"
        ),
        "{}",
        stderr(&o)
    );
    // The whole-file hash changed.
    let mut j: serde_json::Value = serde_json::from_slice(&good_json).unwrap();
    j["runs_csv_blake3"] = "ab".repeat(32).into();
    std::fs::write(dir.join("shard.json"), j.to_string()).unwrap();
    let o = merge_again();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("but shard.json recorded abab"),
        "{}",
        stderr(&o)
    );
    // A shard.json of another experiment, and one that is not a shard record.
    let mut j: serde_json::Value = serde_json::from_slice(&good_json).unwrap();
    j["fingerprint"] = "0".repeat(64).into();
    std::fs::write(dir.join("shard.json"), j.to_string()).unwrap();
    let o = merge_again();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("shard 1/3 in"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("different experiment"),
        "{}",
        stderr(&o)
    );
    std::fs::write(dir.join("shard.json"), "{\"fingerprint\": 1}").unwrap();
    let o = merge_again();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a shard record of this vtsim"),
        "{}",
        stderr(&o)
    );
    assert!(before == tree(&split));
    assert!(names(&listing(tmp.path()))
        .iter()
        .all(|n| !n.starts_with('.')));
}

#[test]
fn labels_with_commas_and_quotes_round_trip_through_resume_and_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("q.ron");
    std::fs::write(
        &exp,
        format!(
            r#"Experiment(
    name: "q",
    model: "{}",
    seed: 5,
    replicates: 400,
    set: {{ "events": 50 }},
    axes: [Axis(param: "pending", values: [5, 50, 500],
                labels: ["five, small", "say \"fifty\"", "\"500\",\"x\""])],
    charts: [],
)
"#,
            root().join("models/hold-fixture.ron").display()
        ),
    )
    .unwrap();
    let whole = tmp.path().join("whole");
    run_into(tmp.path(), &exp, &whole, &["--threads", "1"]);
    let runs = std::fs::read_to_string(whole.join("runs.csv")).unwrap();
    assert!(runs.contains(",\"five, small\","), "{runs}");
    assert!(runs.contains(",\"say \"\"fifty\"\"\","), "{runs}");
    // Sharded and merged.
    let split = tmp.path().join("split");
    shards_and_merge(tmp.path(), &exp, &split, 2);
    assert_same_tree(&whole, &split);
    // Killed after one chunk and resumed.
    let killed = tmp.path().join("killed");
    let o = run_killed_after(tmp.path(), &exp, &killed, "1000");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let o = run_into(tmp.path(), &exp, &killed, &["--resume"]);
    assert!(stderr(&o).contains(", 1024 resumed"), "{}", stderr(&o));
    assert_same_tree(&whole, &killed);
}

#[test]
fn resuming_a_finished_shard_simulates_nothing_unless_its_files_changed() {
    let tmp = tempfile::tempdir().unwrap();
    // 6 points x 5 replicates = 30 jobs; 15 per shard.
    let exp = hold_experiment(tmp.path(), "again", 5);
    let whole = tmp.path().join("whole");
    run_into(tmp.path(), &exp, &whole, &[]);
    let split = tmp.path().join("split");
    for k in ["1/2", "2/2"] {
        run_into(tmp.path(), &exp, &split, &["--shard", k]);
    }
    let dir = split.join("shards/1-of-2");
    let before = listing(&dir);
    // A resubmitted shard that already finished: verified, nothing simulated.
    let o = run_into(tmp.path(), &exp, &split, &["--shard", "1/2", "--resume"]);
    assert!(stderr(&o).contains("vtsim: 0 runs in"), "{}", stderr(&o));
    assert!(stderr(&o).contains(", 15 resumed"), "{}", stderr(&o));
    assert!(listing(&dir) == before);
    // Its runs.csv changed: simulated again, whole.
    let runs = dir.join("runs.csv");
    let text = std::fs::read_to_string(&runs).unwrap();
    std::fs::write(&runs, text.replacen(",300,", ",301,", 1)).unwrap();
    let o = run_into(tmp.path(), &exp, &split, &["--shard", "1/2", "--resume"]);
    let err = stderr(&o);
    assert!(
        err.contains("is recorded as finished but its runs.csv does not match the hashes in its shard.json; running it again"),
        "{err}"
    );
    assert!(err.contains("vtsim: 15 runs in"), "{err}");
    assert!(listing(&dir) == before);
    merge_ok(tmp.path(), &exp, &split);
    assert_same_tree(&whole, &split);
}
