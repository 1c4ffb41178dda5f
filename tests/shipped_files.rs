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
    assert!(
        text.contains("digest  ade20bc22d64b97e34700e7542c69bcad2f649191e2bf80cbb0c27e992d7c020"),
        "{text}"
    );
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

/// Every shipped model, replayed with its own seed (else 1), gives this trace digest. A change
/// here means a recorded incident no longer replays bit for bit: the model, the kernel, the
/// trace encoding or a sampler changed. Update it only on purpose, and say so in the commit.
#[test]
fn every_shipped_model_replays_to_its_pinned_digest() {
    let pinned: &[(&str, &str)] = &[
        (
            "connpool-default.ron",
            "f2b3000ed6aaf9cb40620e88ed286edd35347bf7a0e8cc57c258c141ee6e12a3",
        ),
        (
            "hold-fixture.ron",
            "965f084e18daeac27a8d06649c88a2abda3049f171fa8708becf6751386f38bb",
        ),
        (
            "incident-000.ron",
            "ade20bc22d64b97e34700e7542c69bcad2f649191e2bf80cbb0c27e992d7c020",
        ),
        (
            "playground.ron",
            "ed516c6799df8671ae6caad91ad2f1549d83e432360fbc4a64dc2e88cab0bfd5",
        ),
        (
            "proxysql-lab.ron",
            "ce5149b322fa2afff9e5a7c8efb5c229f67f47f9bcfa70565e66914d1911e2e6",
        ),
        (
            "proxysql-reader-fallback.ron",
            "465f6c2246ed5f35d33b8be0609979530096aa02b5037ce9d75b5d8164826398",
        ),
        (
            "proxysql-seed-1-idle-replica-dies.ron",
            "0b78fc4d80573e5845c3d2d9be3ccf6a21524fb23e5ec650a497e8250a7cff4e",
        ),
        (
            "proxysql-seed-2-read-replica-dies.ron",
            "57ccc962e5f0077adad24b0b0613ceae5a579b0eab35361df4281c2fd24c5a46",
        ),
        (
            "proxysql-seed-3-both-replicas-die.ron",
            "bc93071e832e52e3cf00d0ec4f2a1ed29d3441c28e63a92a213c1778ca59093a",
        ),
        (
            "proxysql-seed-4-writer-is-also-reader.ron",
            "d5d96634be9a21e7ade2c44dbf97913e939cc3f0514010e864f2d2f179b927c7",
        ),
        (
            "proxysql-seed-5-writer-into-readers.ron",
            "7fdb2182dffff39cd9f5e651b5b71eb1dcd00133df64d112d19fec525a2b1f27",
        ),
        (
            "rollout-default.ron",
            "1d43f44308542f8a42042558af51688ffe4a3e5cbce59ec77762e0a229c324ad",
        ),
    ];
    let files = ron_files("models");
    assert_eq!(
        files.len(),
        pinned.len(),
        "a model file without a pinned digest"
    );
    let mut got = vec![];
    for (name, _) in pinned {
        let m = load_model_file(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("models")
                .join(name),
        )
        .unwrap();
        let out = m
            .world
            .run(m.seed.unwrap_or(1), vtsim::model::RunOptions::default());
        got.push((*name, out.digest));
    }
    let want: Vec<(&str, String)> = pinned.iter().map(|(n, d)| (*n, d.to_string())).collect();
    assert_eq!(got, want);
}
