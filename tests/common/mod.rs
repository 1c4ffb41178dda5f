//! Helpers shared by the integration tests: run the `vtsim` binary, compare output trees.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run `vtsim` with `args` in `cwd`.
pub fn vtsim(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vtsim"));
    c.current_dir(cwd).args(args).env("CI", "true");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run vtsim")
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
