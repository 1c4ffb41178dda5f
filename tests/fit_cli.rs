//! `vtsim fit` on the command line: the short-form fixture regenerates the phases of
//! `models/incident-000.ron`, and bad inputs are refused with the file and line (exit 2,
//! bounded time, no output written).

mod common;

use common::{root, vtsim_within};
use std::path::Path;

fn offsets(text: &str) -> Vec<f64> {
    // The `offsets: [..]` list of an Explicit phase, in seconds.
    let i = text.find("offsets:").expect("offsets");
    let j = i + text[i..].find(']').unwrap();
    text[i..j]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|d| vtsim::sim::SimDuration::parse(d).unwrap().as_secs_f64())
        .collect()
}

#[test]
fn the_short_form_fixture_regenerates_the_phases_of_incident_000() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = root().join("tests/fixtures/incident-000-short.txt");
    let out = dir.path().join("fitted.ron");
    let o = vtsim_within(
        dir.path(),
        &[
            "fit",
            fixture.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--refresh-interval",
            "1m",
        ],
        &[],
        60,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fitted = offsets(&std::fs::read_to_string(&out).unwrap());
    let incident =
        offsets(&std::fs::read_to_string(root().join("models/incident-000.ron")).unwrap());
    assert_eq!(fitted.len(), 10);
    // The short form's t=0 is replica A's serving instant; incident-000 puts it at 86.5 s, so
    // every phase is shifted by 86.5 mod 60 = 26.5 s, and nothing else differs.
    for (g, (f, i)) in fitted.iter().zip(&incident).enumerate() {
        let shift = (i - f).rem_euclid(60.0);
        assert!((shift - 26.5).abs() < 1e-9, "vtgate {g}: {i} vs {f}");
    }
    // The gaps are stated.
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("short form only"), "{report}");
}

fn refused(dir: &Path, name: &str, text: &str, want: &[&str]) -> Vec<String> {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    let out = dir.join("out.ron");
    let o = vtsim_within(
        dir,
        &["fit", f.to_str().unwrap(), "--out", out.to_str().unwrap()],
        &[],
        20,
    );
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let mut fails = vec![];
    if o.status.code() != Some(2) {
        fails.push(format!("{name}: exit {:?}: {err}", o.status.code()));
    }
    for w in want {
        if !err.contains(w) {
            fails.push(format!("{name}: `{w}` not in: {err}"));
        }
    }
    if err.contains("panicked") || out.exists() {
        fails.push(format!("{name}: panic or output written: {err}"));
    }
    fails
}

#[test]
fn bad_inputs_are_refused_with_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let glog = "I0718 14:03:40.001340       1 healthcheck.go:406] Adding tablet to healthcheck: alias:{cell:\"zone1\" uid:101} hostname:\"10.244.0.2\" keyspace:\"commerce\" shard:\"-\" type:REPLICA\n";
    let json = "{\"time\":\"2026-07-18T14:03:41Z\",\"level\":\"INFO\",\"msg\":\"loading tablets for cells: zone1\"}\n";
    let mut fails = vec![];
    fails.extend(refused(
        dir,
        "mixed.log",
        &format!("{glog}{json}"),
        &["mixed.log:2:", "mixed Vitess versions"],
    ));
    fails.extend(refused(
        dir,
        "truncated.log",
        &format!("{json}{{\"time\":\"2026-07-18T14:03:42Z\",\"level\":\"IN"),
        &["truncated.log:2:", "truncated"],
    ));
    fails.extend(refused(
        dir,
        "nodiscovery.log",
        "I0718 14:03:40.001340       1 vtgate.go:300] starting\n",
        &["nodiscovery.log", "no discovery lines"],
    ));
    fails.extend(refused(
        dir,
        "cluster.yaml",
        "apiVersion: planetscale.com/v2\nkind: VitessCluster\n",
        &["cluster.yaml", "YAML"],
    ));
    fails.extend(refused(
        dir,
        "notes.txt",
        "hello\nworld\n",
        &["notes.txt:1:", "not a recognised input"],
    ));
    fails.extend(refused(
        dir,
        "short.txt",
        "[t+4x] vtgate-01: replica-A false => true (REPLICA)\n",
        &["short.txt:1:", "offset"],
    ));
    fails.extend(refused(
        dir,
        "events.json",
        "{\"items\": [{\"kind\": \"Event\", \"reason\": \"Deleted\"}]}",
        &["events.json", "items[0]"],
    ));
    fails.extend(refused(
        dir,
        "badrecord.log",
        "I0718 14:03:40.001340       1 healthcheck.go:406] Adding tablet to healthcheck: hostname:\"x\"\n",
        &["badrecord.log:1:", "alias.cell"],
    ));
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

fn read_model(path: &Path) -> vtsim::model::rollout::RolloutParams {
    match vtsim::experiment::load_model_file(path)
        .unwrap_or_else(|e| panic!("{e}"))
        .world
    {
        vtsim::model::WorldSpec::Rollout(p) => p,
        _ => panic!("not a rollout model"),
    }
}

#[test]
fn a_vitesscluster_yaml_alone_gives_a_model_of_its_shape_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = root().join("examples/incident-multicell/vitesscluster.yaml");
    let out = dir.path().join("cluster.ron");
    let o = vtsim_within(
        dir.path(),
        &[
            "fit",
            "--cluster",
            yaml.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
        60,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p = read_model(&out);
    // The cluster of examples/incident-multicell: zone1 holds the primary only, zone2 and
    // zone3 one replica each, 4 + 4 + 2 vtgates, zone3 watching zone1 and zone3, and the 45s
    // refresh interval of spec.extraVitessFlags.
    let cells: Vec<_> = p
        .cells
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.vtgates,
                c.replicas,
                c.primary,
                c.cells_to_watch.clone(),
            )
        })
        .collect();
    let watch3 = Some(vec!["zone1".to_string(), "zone3".to_string()]);
    assert_eq!(
        cells,
        [
            ("zone1", 4, 0, true, None),
            ("zone2", 4, 1, false, None),
            ("zone3", 2, 1, false, watch3)
        ]
    );
    assert_eq!((p.vtgates, p.shards, p.replicas_per_shard), (10, 2, 2));
    assert_eq!(p.vtgate.tablet_refresh_interval.as_secs_f64(), 45.0);
    // Without --out the model is printed, and `vtsim validate` takes it.
    let o = fit_cluster(dir.path(), &yaml);
    assert!(o.status.success());
    let printed = String::from_utf8_lossy(&o.stdout);
    assert_eq!(printed, std::fs::read_to_string(&out).unwrap());
    let v = vtsim_within(dir.path(), &["validate", out.to_str().unwrap()], &[], 60);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
}

/// `vtsim fit --cluster YAML`, the model on stdout.
fn fit_cluster(dir: &Path, yaml: &Path) -> std::process::Output {
    vtsim_within(dir, &["fit", "--cluster", yaml.to_str().unwrap()], &[], 60)
}

/// `kubectl get vitesscluster -o yaml` without a name prints a `kind: List`; a misspelt key
/// (`extraFlag:` for `extraFlags:`) or flag silently drops what it holds, so each is named
/// with its place (issue 36, class 10).
#[test]
fn a_listed_cluster_is_read_and_misspelt_keys_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let good =
        std::fs::read_to_string(root().join("examples/incident-multicell/vitesscluster.yaml"))
            .unwrap();
    let body: String = good
        .lines()
        .filter(|l| !l.starts_with('#'))
        .enumerate()
        .map(|(i, l)| format!("{}{l}\n", if i == 0 { "- " } else { "  " }))
        .collect();
    let listed =
        format!("apiVersion: v1\nkind: List\nitems:\n{body}metadata:\n  resourceVersion: \"\"\n");
    let yaml = dir.path().join("list.yaml");
    std::fs::write(&yaml, &listed).unwrap();
    let o = fit_cluster(dir.path(), &yaml);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let model = dir.path().join("m.ron");
    std::fs::write(&model, &o.stdout).unwrap();
    let p = read_model(&model);
    assert_eq!((p.vtgates, p.shards), (10, 2));
    assert_eq!(p.vtgate.tablet_refresh_interval.as_secs_f64(), 45.0);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("unknown key"));

    // The same cluster with zone3's `extraFlags:` misspelt and a flag misspelt: the model
    // loses zone3's cells_to_watch and the 45s, and the warnings say where and why.
    let typo = good
        .replace("      extraFlags:", "      extraFlag:")
        .replace(
            "tablet_refresh_interval: 45s",
            "tablet_refresh_intreval: 45s",
        );
    let yaml = dir.path().join("typo.yaml");
    std::fs::write(&yaml, &typo).unwrap();
    let o = fit_cluster(dir.path(), &yaml);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let line_of = |needle: &str| typo.lines().position(|l| l.contains(needle)).unwrap() + 1;
    assert!(
        err.contains(&format!(
            "typo.yaml:{}:7: unknown key `spec.cells[2].gateway.extraFlag` (did you mean `extraFlags`?)",
            line_of("extraFlag:")
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "typo.yaml:{}:5: flag `spec.extraVitessFlags.tablet_refresh_intreval` is not a vtgate flag vtsim reads: did you mean `tablet_refresh_interval`?",
            line_of("intreval")
        )),
        "{err}"
    );
}

#[test]
fn a_bad_cluster_file_is_refused_with_its_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let good =
        std::fs::read_to_string(root().join("examples/incident-multicell/vitesscluster.yaml"))
            .unwrap();
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "deployment.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n".into(),
            vec![
                "deployment.yaml:2:",
                "`kind`",
                "VitessCluster expected, found `Deployment`",
            ],
        ),
        (
            "nocells.yaml",
            "apiVersion: planetscale.com/v2\nkind: VitessCluster\nspec:\n  keyspaces: []\n".into(),
            vec!["nocells.yaml:4:", "`spec.cells`", "missing"],
        ),
        (
            "badcell.yaml",
            good.replace("  - cell: zone3\n", "  - cell: zone9\n"),
            vec!["badcell.yaml:", "tabletPools[2].cell", "found `zone9`"],
        ),
        (
            "noreplicas.yaml",
            good.replace("            replicas: 1\n", "            type2: x\n"),
            vec!["noreplicas.yaml:35:", "tabletPools[0].replicas", "missing"],
        ),
        (
            "broken.yaml",
            "apiVersion: planetscale.com/v2\nkind: VitessCluster\nspec: [a, b\n".into(),
            vec!["broken.yaml:", "not valid YAML"],
        ),
    ];
    let mut fails = vec![];
    for (name, text, want) in cases {
        let f = dir.path().join(name);
        std::fs::write(&f, &text).unwrap();
        let out = dir.path().join("out.ron");
        let o = vtsim_within(
            dir.path(),
            &[
                "fit",
                "--cluster",
                f.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
            30,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(2) || !want.iter().all(|w| err.contains(w)) || out.exists() {
            fails.push(format!("{name}: exit {:?}: {err}", o.status.code()));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
