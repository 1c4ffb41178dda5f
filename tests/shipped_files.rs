//! Every model and experiment file the project ships parses, validates, and (for models) is
//! built into the binary, so the README's commands work from any directory.

use std::path::Path;
use vtsim::experiment::files::EMBEDDED_MODELS;
use vtsim::experiment::{load_model_file, load_plan};

mod common;

fn ron_files(dir: &str) -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut v: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_model_file_loads_and_is_embedded() {
    let files = ron_files("models");
    assert!(files.len() >= 3);
    for f in files {
        let m = load_model_file(&f).unwrap_or_else(|e| panic!("{e}"));
        let name = f.file_name().unwrap().to_str().unwrap();
        let embedded = EMBEDDED_MODELS
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} is not in EMBEDDED_MODELS"));
        assert_eq!(
            embedded.1,
            std::fs::read_to_string(&f).unwrap(),
            "{name}: embedded copy differs"
        );
        assert!(!m.world.metric_defs().is_empty(), "{name}: no metrics");
    }
}

#[test]
fn every_experiment_file_validates() {
    let files = ron_files("experiments");
    assert!(files.len() >= 2);
    for f in files {
        let plan = load_plan(&f).unwrap_or_else(|e| panic!("{e}"));
        assert!(plan.jobs() > 0);
        assert!(
            !plan.experiment.charts.is_empty(),
            "{}: no charts",
            f.display()
        );
    }
}

/// `vtsim replay models/incident-000.ron`, with no `--seed`, replays the incident with the
/// model file's own seed (0xbaaf1458e77f4857): the seed line, the discovery lags of replica A
/// that the report gives, and the pinned digest. With another seed the queries differ, so the
/// digest does too (the file's seed is what the replay depends on).
#[test]
fn the_incident_replays_with_its_own_seed() {
    let root = common::root();
    let model = root.join("models/incident-000.ron");
    let model = model.to_str().unwrap();
    let o = common::vtsim_ok(&root, &["replay", model]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("seed    13451992984052516951 (0xbaaf1458e77f4857)"),
        "{text}"
    );
    let list = std::fs::read_to_string(root.join("tests/pinned-digests.txt")).unwrap();
    let pinned = list
        .lines()
        .find_map(|l| l.strip_prefix("incident-000 13451992984052516951 "))
        .expect("incident-000 is pinned with its own seed");
    assert!(text.contains(&format!("digest  {pinned}\n")), "{text}");
    // The lag table's first column: restart #1 (replica A), vtgate-01 .. vtgate-10.
    let lags: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("vtgate-") && l.split_whitespace().count() == 4)
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(
        lags,
        [
            "0.000", "44.000", "46.000", "46.000", "46.000", "46.000", "46.000", "46.000",
            "48.000", "51.000"
        ],
        "{text}"
    );
    let other = common::vtsim_ok(&root, &["replay", model, "--seed", "1"]);
    let other = String::from_utf8_lossy(&other.stdout).to_string();
    assert!(other.contains("seed    1 (0x0000000000000001)"), "{other}");
    assert!(!other.contains("ade20bc22d64b97e"), "{other}");
}

#[test]
fn the_readme_experiment_example_is_valid() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("```ron\nExperiment(")
        .expect("an experiment example")
        + 7;
    let end = start + readme[start..].find("```").unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/readme-example.ron");
    let plan = vtsim::experiment::plan::plan_from_text(&path, &readme[start..end])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.points.len(), 16 * 5 * 2);
}

/// Every shipped model, replayed with its own seed (else 1), gives the trace digest pinned in
/// `tests/pinned-digests.txt` (one line per model: name, seed, digest). A change means a
/// recorded incident no longer replays bit for bit: the model, the kernel, the trace encoding
/// or a sampler changed. A model file without a line, or a line without a file, fails too.
#[test]
fn every_shipped_model_replays_to_its_pinned_digest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let list = std::fs::read_to_string(root.join("tests/pinned-digests.txt")).unwrap();
    let mut pinned: Vec<(String, u64, String)> = vec![];
    for (i, line) in list.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert!(
            f.len() == 3 && f[2].len() == 64,
            "tests/pinned-digests.txt line {}: expected `NAME SEED DIGEST`, found `{line}`",
            i + 1
        );
        let seed = f[1]
            .parse()
            .unwrap_or_else(|_| panic!("line {}: seed", i + 1));
        pinned.push((f[0].to_string(), seed, f[2].to_string()));
    }
    let mut problems = vec![];
    let files = ron_files("models");
    for f in &files {
        let name = f.file_stem().unwrap().to_str().unwrap().to_string();
        let m = load_model_file(f).unwrap_or_else(|e| panic!("{e}"));
        let seed = m.seed.unwrap_or(1);
        let digest = m
            .world
            .run(seed, vtsim::model::RunOptions::default())
            .digest;
        match pinned.iter().find(|p| p.0 == name) {
            None => problems.push(format!(
                "models/{name}.ron has no pinned digest; add this line to \
                 tests/pinned-digests.txt:\n{name} {seed} {digest}"
            )),
            Some((_, s, _)) if *s != seed => problems.push(format!(
                "{name}: pinned with seed {s}, but replay uses seed {seed}; the line is:\n\
                 {name} {seed} {digest}"
            )),
            Some((_, _, d)) if *d != digest => {
                problems.push(format!("{name}: replays to digest {digest}, pinned {d}"))
            }
            Some(_) => {}
        }
    }
    for (name, _, _) in &pinned {
        if !files
            .iter()
            .any(|f| f.file_stem().unwrap() == name.as_str())
        {
            problems.push(format!(
                "{name} is pinned but there is no models/{name}.ron"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The reference outputs committed under `notebooks-out/` are what the README's commands
/// write today, byte for byte: every committed file of each folder (the charts, whose footers
/// carry the runs digest, and `points.csv`), against a fresh `vtsim run` of its experiment.
/// A change that moves a figure or a digest fails here until the outputs are re-run and
/// committed (they once went six stops with stale footers).
#[test]
fn the_committed_reference_outputs_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    for name in ["tablet-available-sweep", "lead-sensitivity"] {
        let committed = root.join("notebooks-out").join(name);
        let files: Vec<_> = std::fs::read_dir(&committed)
            .unwrap()
            .map(|e| e.unwrap().path())
            // What the repository keeps there (`.gitignore` leaves the rest out).
            .filter(|p| p.extension().is_some_and(|e| e == "png") || p.ends_with("points.csv"))
            .collect();
        assert!(
            !files.is_empty(),
            "nothing committed in {}",
            committed.display()
        );
        let out = tmp.path().join(name);
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_vtsim"))
            .arg("run")
            .arg(root.join("experiments").join(format!("{name}.ron")))
            .arg("--out")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success(), "vtsim run {name}");
        for f in files {
            let file = f.file_name().unwrap();
            assert!(
                std::fs::read(&f).unwrap() == std::fs::read(out.join(file)).unwrap(),
                "notebooks-out/{name}/{} differs from what `vtsim run experiments/{name}.ron` \
                 writes: re-run it and commit the outputs",
                file.to_string_lossy()
            );
        }
    }
}
