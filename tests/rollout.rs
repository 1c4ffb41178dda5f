//! Rollout model: closed forms, the seed's incident, determinism, stream independence, and
//! fast vs per-query agreement (`spec/rollout.md` "What it must reproduce").

use serde::Deserialize;
use vtsim::model::rollout::{run_detailed, RolloutParams};
use vtsim::model::{RunOptions, WorldSpec};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename = "Model")]
struct ModelFile {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    description: String,
    world: WorldSpec,
}

fn load(path: &str) -> RolloutParams {
    let text = std::fs::read_to_string(format!("{}/{}", env!("CARGO_MANIFEST_DIR"), path))
        .expect("model file");
    let opts = ron::Options::default().with_default_extension(
        ron::extensions::Extensions::IMPLICIT_SOME
            | ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES,
    );
    let m: ModelFile = opts.from_str(&text).expect("model file parses");
    match m.world {
        WorldSpec::Rollout(p) => p,
        _ => panic!("not a rollout model"),
    }
}

#[test]
fn scratch_default() {
    let p = load("models/rollout-default.ron");
    let r = run_detailed(
        &p,
        1,
        RunOptions {
            report: true,
            ..Default::default()
        },
    );
    println!("{}", r.output.report.unwrap());
}

#[test]
fn scratch_incident() {
    let p = load("models/incident-000.ron");
    let r = run_detailed(
        &p,
        0xbaaf1458e77f4857,
        RunOptions {
            report: true,
            ..Default::default()
        },
    );
    println!("{}", r.output.report.unwrap());
}
