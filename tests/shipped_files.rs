//! Every model and experiment file the project ships parses, validates, and (for models) is
//! built into the binary, so the README's commands work from any directory.

use std::path::Path;
use vtsim::experiment::files::EMBEDDED_MODELS;
use vtsim::experiment::{load_model_file, load_plan};

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

#[test]
fn the_incident_replays_with_its_own_seed() {
    let m = load_model_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("models/incident-000.ron"))
        .unwrap();
    assert_eq!(m.seed, Some(0xbaaf1458e77f4857));
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
            "58a73ccc3cdf47c953be994b2c9cad5925e5fc486b49a7129ee10da6089fe130",
        ),
        (
            "hold-fixture.ron",
            "fcfaebfcb52ef2352391bbdc265e2d80a5d9f0f8717d8b834e421bf7c9596f4e",
        ),
        (
            "incident-000.ron",
            "155e280f0bd2e5a4788f1747cdc0a70743a1862ad0a7ae39ed0a640a5fbb988b",
        ),
        (
            "playground.ron",
            "8f49824fe07a25d4ffeff8ab9f3a3657dea8c2ce3b685c9b61ba05b4c1955cf7",
        ),
        (
            "proxysql-lab.ron",
            "8d7657330e25a54c1c514adf9c5073a7b777c47e80efea0fb7a158f1fad7f9fe",
        ),
        (
            "proxysql-reader-fallback.ron",
            "735ceff6f624431fba4a173327f0fef0084a36cb288c7417e93bebc713a617da",
        ),
        (
            "proxysql-seed-1-idle-replica-dies.ron",
            "e6fedac8105731c41eae9372838c89732242a418ffef5589cce60faa58cfb1e7",
        ),
        (
            "proxysql-seed-2-read-replica-dies.ron",
            "e59e4ab176dc0408e66a091ee55f1e6d5f0fd5f2d6e6315568432218a44f231d",
        ),
        (
            "proxysql-seed-3-both-replicas-die.ron",
            "c3715bc88e6595eeca48897c6820f204ce0921817809f5aeccadcc2f37673944",
        ),
        (
            "proxysql-seed-4-writer-is-also-reader.ron",
            "c632944117168afd2c15f58800b5a06223e2540cc62cb388545df87b9966d68a",
        ),
        (
            "proxysql-seed-5-writer-into-readers.ron",
            "8cda550423dade1153353b586d1a94ac27010a4ce107045cefec1b5ad0b7aa7f",
        ),
        (
            "rollout-default.ron",
            "658b1c58cef9cbd222acfc062aca564a961d7f14a97a90c7d8b017c52680dd53",
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
