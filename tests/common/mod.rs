//! Helpers shared by the integration tests: run the `vtsim` binary, compare output trees.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Longest a `vtsim` child may run in a test before it is killed and the test fails (a hang
/// guard, far above any test's run time; not a timing assertion).
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

/// A `vtsim` command with `args` in `cwd` (no progress bar).
pub fn vtsim_cmd(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vtsim"));
    c.current_dir(cwd)
        .args(args)
        .env("CI", "true")
        .env_remove("RAYON_NUM_THREADS");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Start `c` with its output captured.
pub fn spawn(mut c: Command) -> Child {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vtsim")
}

/// Wait for `child` at most `limit`; kill it and fail the test past that.
pub fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let t_out = std::thread::spawn(move || {
        let mut v = vec![];
        out.read_to_end(&mut v).ok();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = vec![];
        err.read_to_end(&mut v).ok();
        v
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for vtsim") {
            break s;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("vtsim did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: t_out.join().expect("stdout reader"),
        stderr: t_err.join().expect("stderr reader"),
    }
}

/// Run `c` to the end, bounded by [`CHILD_TIMEOUT`].
pub fn run_bounded(c: Command) -> Output {
    wait_bounded(spawn(c), CHILD_TIMEOUT)
}

/// Run `vtsim` with `args` in `cwd` (bounded by [`CHILD_TIMEOUT`]).
pub fn vtsim(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    run_bounded(vtsim_cmd(cwd, args, env))
}

/// Run `vtsim` with `args` in `cwd`, killed (and the test failed) after `secs` seconds: the
/// guard of tests whose failure mode is a hang.
pub fn vtsim_within(cwd: &Path, args: &[&str], env: &[(&str, &str)], secs: u64) -> Output {
    wait_bounded(spawn(vtsim_cmd(cwd, args, env)), Duration::from_secs(secs))
}

/// How `vtsim validate FILE` and `vtsim run FILE --out out`, run in `dir` (each killed, and the
/// test failed, after 20 s), fall short of a clean refusal of input `case`: one line per
/// problem (an exit code other than 2, a fragment of `want` missing from stderr, a panic, an
/// output folder written). Empty when both commands refuse the input as they should.
pub fn refusal_failures(dir: &Path, case: &str, file: &str, want: &[&str]) -> Vec<String> {
    let mut failures = vec![];
    for args in [vec!["validate", file], vec!["run", file, "--out", "out"]] {
        let o = vtsim_within(dir, &args, &[], 20);
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(2) {
            failures.push(format!(
                "{case}: {args:?}: exit {:?}: {err}",
                o.status.code()
            ));
        }
        for w in want {
            if !err.contains(w) {
                failures.push(format!("{case}: {args:?}: `{w}` not in: {err}"));
            }
        }
        if err.contains("panicked") {
            failures.push(format!("{case}: {args:?}: panic: {err}"));
        }
        if dir.join("out").exists() {
            failures.push(format!("{case}: {args:?}: output written"));
        }
    }
    failures
}

/// Run `vtsim` with `args` in `cwd` and assert that it succeeded.
pub fn vtsim_ok(cwd: &Path, args: &[&str]) -> Output {
    let o = vtsim(cwd, args, &[]);
    assert!(
        o.status.success(),
        "vtsim {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Every file under `dir` (relative path, bytes), sorted, skipping `shards/`.
pub fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(d).expect("read dir") {
            let p = e.expect("entry").path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().to_string();
            if rel.starts_with("shards") {
                continue;
            }
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    let mut out = vec![];
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Assert two output trees hold the same files with the same bytes.
pub fn assert_same_tree(a: &Path, b: &Path) {
    let (ta, tb) = (tree(a), tree(b));
    let names_a: Vec<&String> = ta.iter().map(|(n, _)| n).collect();
    let names_b: Vec<&String> = tb.iter().map(|(n, _)| n).collect();
    assert_eq!(names_a, names_b, "different files in {a:?} and {b:?}");
    for ((n, x), (_, y)) in ta.iter().zip(&tb) {
        assert!(x == y, "{n} differs between {a:?} and {b:?}");
    }
}

/// A hold-model experiment of `points x replicates` written to `dir/exp.ron`.
pub fn hold_experiment(dir: &Path, name: &str, replicates: u64) -> PathBuf {
    let model = root().join("models/hold-fixture.ron");
    let text = format!(
        r#"Experiment(
    name: "{name}",
    model: "{}",
    seed: 99,
    replicates: {replicates},
    set: {{ "events": 300 }},
    axes: [
        Axis(param: "pending", values: [5, 50, 500]),
        Axis(param: "mean_increment", range: (from: "1ms", to: "2ms", step: "1ms")),
    ],
    charts: [
        Chart(name: "end", title: "end", x: "pending", x_label: "pending", y: ["end_time_s"],
              y_label: "s", series: "mean_increment", log_x: true,
              marks: [SeriesMultiple(factor: 1.5, label: "x1.5")]),
        Chart(name: "late", title: "late", x: "pending", x_label: "pending", y: ["ended_late"],
              y_label: "P", log_y: true),
    ],
)
"#,
        model.display()
    );
    let p = dir.join(format!("{name}.ron"));
    std::fs::write(&p, text).unwrap();
    p
}

/// Every entry under `dir`, hidden ones and `shards/` included (relative path, and the bytes
/// of files; `None` for folders), sorted: to check that nothing stray was left anywhere.
pub fn listing(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
        for e in std::fs::read_dir(d).expect("read dir") {
            let p = e.expect("entry").path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                out.push((rel, None));
                walk(base, &p, out);
            } else {
                out.push((rel, Some(std::fs::read(&p).expect("read"))));
            }
        }
    }
    let mut out = vec![];
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The names in a [`listing`].
pub fn names(l: &[(String, Option<Vec<u8>>)]) -> Vec<&str> {
    l.iter().map(|(n, _)| n.as_str()).collect()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The arguments of `vtsim run EXP --out OUT EXTRA...`.
pub fn run_args<'a>(exp: &'a Path, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", exp.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    args
}

/// Run `exp` into `out` (extra args after), asserting success.
pub fn run_into(cwd: &Path, exp: &Path, out: &Path, extra: &[&str]) -> Output {
    vtsim_ok(cwd, &run_args(exp, out, extra))
}

/// Run `exp` into `out` (extra args after) with `env`, whatever the outcome (bounded).
pub fn run_out(cwd: &Path, exp: &Path, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    vtsim(cwd, &run_args(exp, out, extra), env)
}

/// `vtsim run EXP --out OUT --threads 1` that kills itself (exit 3) after `jobs` jobs
/// (`VTSIM_ABORT_AFTER_JOBS`), as a killed machine would leave it; bounded.
pub fn run_killed_after(cwd: &Path, exp: &Path, out: &Path, jobs: &str) -> Output {
    run_out(
        cwd,
        exp,
        out,
        &["--threads", "1"],
        &[("VTSIM_ABORT_AFTER_JOBS", jobs)],
    )
}

/// The arguments of `vtsim merge EXP --out OUT`.
pub fn merge_args<'a>(exp: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![
        "merge",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]
}

/// `vtsim merge EXP --out OUT`, whatever the outcome (bounded).
pub fn merge(cwd: &Path, exp: &Path, out: &Path) -> Output {
    vtsim(cwd, &merge_args(exp, out), &[])
}

/// `vtsim merge EXP --out OUT`, asserting success.
pub fn merge_ok(cwd: &Path, exp: &Path, out: &Path) -> Output {
    vtsim_ok(cwd, &merge_args(exp, out))
}

/// Run shards 1..=n of `exp` into `out` and merge them, asserting success.
pub fn shards_and_merge(cwd: &Path, exp: &Path, out: &Path, n: u64) {
    for k in 1..=n {
        let s = format!("{k}/{n}");
        run_into(cwd, exp, out, &["--shard", &s, "--threads", "1"]);
    }
    merge_ok(cwd, exp, out);
}
