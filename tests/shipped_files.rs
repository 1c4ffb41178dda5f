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
