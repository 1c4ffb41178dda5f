//! `--json` on replay and run: the documented schemas (`docs/outputs.md`), and replay's text
//! form (each metric once, in a sensible precision; `--seed` takes the hex replay prints).

mod common;

use common::{hold_experiment, root, stderr, vtsim_ok};

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn replay_json_has_its_schema_and_the_pinned_digest() {
    let o = vtsim_ok(&root(), &["replay", "builtin:incident-000", "--json"]);
    let v = json(&o);
    assert_eq!(v["schema"], "vtsim.replay");
    assert_eq!(v["version"], 1);
    assert_eq!(v["model"]["name"], "incident-000");
    assert_eq!(v["model"]["kind"], "Rollout");
    // The seed as hex and as a decimal string: no JSON reader rounds it.
    assert_eq!(v["seed"], "0xbaaf1458e77f4857");
    assert_eq!(v["seed_decimal"], "13451992984052516951");
    assert_eq!(
        v["digest"],
        "069bed22b1606d80c3b747eb41298851ee1283bc86fc7103574bd77f839e44fd"
    );
    let m = v["metrics"].as_object().unwrap();
    assert_eq!(m.len(), 21);
    assert_eq!(m["any_error"], 1.0);
    assert!(m["rollout_duration_s"].as_f64().unwrap() > 100.0);
    assert!(v["events"].as_u64().unwrap() > 0);
}

#[test]
fn replay_prints_each_metric_once_and_takes_its_hex_seed() {
    let o = vtsim_ok(
        &root(),
        &["replay", "builtin:rollout-default", "--seed", "0x1"],
    );
    let text = String::from_utf8(o.stdout).unwrap();
    // Seed 0x1 is seed 1: the digest pinned for the model's seed-1 replay.
    let pinned = std::fs::read_to_string(root().join("tests/pinned-digests.txt")).unwrap();
    let digest = pinned
        .lines()
        .find_map(|l| l.strip_prefix("rollout-default 1 "))
        .expect("rollout-default is pinned with seed 1");
    assert!(text.contains(&format!("digest  {digest}\n")), "{text}");
    for name in [
        "any_error",
        "max_burst_duration_s",
        "topo_polls_per_s",
        "goodput",
    ] {
        let lines = text
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(name))
            .count();
        assert_eq!(lines, 1, "{name} printed {lines} times:\n{text}");
    }
    // Six significant digits, not the float's 17.
    assert!(
        text.contains("  topo_polls_per_s                 0.164366\n"),
        "{text}"
    );
    assert!(
        text.contains("  max_burst_duration_s             15.4611\n"),
        "{text}"
    );
    assert!(!text.contains("totals:"), "{text}");
    // The hex seed replay prints replays the same run as its decimal form.
    let hex = vtsim_ok(
        &root(),
        &[
            "replay",
            "builtin:incident-000",
            "--seed",
            "0xbaaf1458e77f4857",
            "--json",
        ],
    );
    let dec = vtsim_ok(
        &root(),
        &[
            "replay",
            "builtin:incident-000",
            "--seed",
            "13451992984052516951",
            "--json",
        ],
    );
    assert_eq!(json(&hex)["digest"], json(&dec)["digest"]);
    let bad = common::vtsim(
        &root(),
        &["replay", "builtin:hold-fixture", "--seed", "0xzz"],
        &[],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("decimal or 0x hex"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn run_json_has_its_schema_and_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "j", 3);
    let out = tmp.path().join("out");
    let o = vtsim_ok(
        tmp.path(),
        &[
            "run",
            exp.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ],
    );
    let v = json(&o);
    assert_eq!(v["schema"], "vtsim.run");
    assert_eq!(v["version"], 1);
    assert_eq!(v["experiment"], "j");
    assert_eq!(v["jobs"], 18);
    assert_eq!(v["runs_simulated"], 18);
    assert_eq!(v["runs_resumed"], 0);
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    for f in &files {
        assert!(out.join(f).is_file(), "{f}");
    }
    assert!(files.contains(&"end.png") && files.contains(&"points.csv"));
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(v["summary"], on_disk);
}
