//! `vtsim replay --emit-logs` and `vtsim fit`: the emitted lines follow the real format
//! strings, and replay -> emit -> fit -> replay gives the same discovery instants and
//! exposure intervals (`docs/fit.md`).

use vtsim::fit::emit::{render_run, LogFormat};
use vtsim::model::rollout::{run_with_logs, RolloutParams};
use vtsim::model::RunOptions;

fn files(p: &RolloutParams, seed: u64, fmt: LogFormat) -> Vec<(String, String)> {
    let run = run_with_logs(p, seed, RunOptions::default());
    render_run(p, &run, fmt)
}

#[test]
fn emitted_glog_lines_follow_the_v22_format_strings() {
    let p = RolloutParams::default();
    let f = files(&p, 3, LogFormat::Glog);
    assert_eq!(f.len(), 12, "10 vtgate logs, events.json, pods.json");
    let (name, log) = &f[0];
    assert_eq!(name, "vtgate-01.log");
    for line in log.lines() {
        // Lmmdd hh:mm:ss.uuuuuu, the PID padded to 7, file:line] (glog logsink.go textPrintf).
        let b = line.as_bytes();
        assert!(matches!(b[0], b'I' | b'W'), "{line}");
        assert_eq!(&line[1..5], "0718", "{line}");
        assert_eq!(b[21], b' ', "{line}");
        assert_eq!(&line[22..29], "      1", "{line}");
        let rest = &line[30..];
        let (site, msg) = rest.split_once("] ").expect("file:line]");
        let known = [
            ("healthcheck.go:356", "loading tablets for cells: "),
            ("healthcheck.go:377", "Setting up healthcheck for cell: "),
            (
                "healthcheck.go:406",
                "Adding tablet to healthcheck: alias:{cell:\"zone1\" uid:",
            ),
            (
                "healthcheck.go:459",
                "Removing tablet from healthcheck: alias:{cell:\"zone1\" uid:",
            ),
            ("healthcheck.go:502", "We have no health data for tablet: "),
            (
                "healthcheck.go:546",
                "We will have no health data for the next new primary",
            ),
            (
                "tablet_health_check.go:110",
                "HealthCheckUpdate(Serving State): tablet: zone1-",
            ),
            (
                "tablet_health_check.go:334",
                "tablet alias:{cell:\"zone1\" uid:",
            ),
            ("vtgate.go:812", "Execute: target: commerce.-.replica: "),
            ("throttled.go:82", "Execute: skipped "),
        ];
        assert!(
            known.iter().any(|(s, m)| *s == site && msg.starts_with(m)),
            "unknown line: {line}"
        );
    }
    // Per restart, every vtgate prints one serving false => true for the new address.
    let found = log
        .lines()
        .filter(|l| l.contains("serving false => true") && !l.contains("(10.244.0.2)"))
        .count();
    assert!(
        found >= 3 + 2,
        "start-up lines for 3 tablets and discoveries: {found}"
    );
}

#[test]
fn emitted_json_lines_are_slog_json_after_two_plain_lines() {
    let p = RolloutParams::default();
    let f = files(&p, 3, LogFormat::Json);
    let log = &f[1].1;
    let mut lines = log.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("WARNING: --logtostderr has no effect"));
    assert!(lines
        .next()
        .unwrap()
        .starts_with("Flag --cells_to_watch has been deprecated"));
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).expect(line);
        // slog's key order: time, level, source, msg.
        let keys: Vec<&str> = line
            .match_indices("\":")
            .map(|(i, _)| {
                let s = &line[..i];
                &s[s.rfind('"').unwrap() + 1..]
            })
            .collect();
        assert_eq!(&keys[..2], ["time", "level"], "{line}");
        assert!(
            v["msg"].is_string() && v["source"]["line"].is_u64(),
            "{line}"
        );
        let t = v["time"].as_str().unwrap();
        // RFC3339Nano: the fraction's trailing zeros trimmed.
        assert!(t.ends_with('Z'), "{t}");
        assert!(!t.contains('.') || !t.ends_with("0Z"), "{t}");
    }
}

use vtsim::fit::emit::EPOCH;
use vtsim::fit::parse::{parse, Input};
use vtsim::fit::{fit, FitOptions};
use vtsim::model::rollout::{run_detailed, RolloutRun};
use vtsim::sim::SimTime;

/// Parse emitted files as `vtsim fit` reads them (by content).
fn inputs(files: &[(String, String)]) -> Vec<Input> {
    files
        .iter()
        .map(|(n, t)| parse(std::path::Path::new(n), t).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The largest difference (ns) between the original run and the fitted model's replay:
/// discovery instants per (restart, vtgate) and exposure bounds per vtgate, with the fitted
/// time zero mapped back; panics when the structure differs.
fn round_trip(p: &RolloutParams, seed: u64, fmt: LogFormat) -> (i64, i64) {
    let orig = run_with_logs(p, seed, RunOptions::default());
    let files = render_run(p, &orig, fmt);
    let f =
        fit(&inputs(&files), &FitOptions::default()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let rep: RolloutRun = run_detailed(&f.params, 1, RunOptions::default());
    let shift = f.t0 - EPOCH;
    let at = |t: SimTime| t.0 as i64;
    let mut worst_disc = 0i64;
    assert_eq!(
        orig.restarts.len(),
        rep.restarts.len(),
        "seed {seed}: restarts"
    );
    for r in &orig.restarts {
        // Fitted tablet index of the original tablet (uid 101 + index).
        let k = f
            .tablets
            .iter()
            .position(|a| a.as_ref().map(|a| a.uid) == Some(101 + r.tablet as u64))
            .expect("tablet in the fit");
        let q = rep
            .restarts
            .iter()
            .find(|x| x.tablet as usize == k)
            .expect("restart");
        assert!(
            (at(r.drain_at) - shift - at(q.drain_at)).abs() <= 1000,
            "seed {seed}: drain"
        );
        for g in 0..p.vtgates as usize {
            if r.discovered[g] == SimTime::MAX {
                // A vtgate that does not watch the tablet's cell (multi-cell models).
                assert_eq!(
                    q.discovered[g],
                    SimTime::MAX,
                    "seed {seed}: vtgate {g} is blind"
                );
                continue;
            }
            assert_ne!(
                q.discovered[g],
                SimTime::MAX,
                "seed {seed}: vtgate {g} discovers"
            );
            let d = (at(r.discovered[g]) - shift - at(q.discovered[g])).abs();
            worst_disc = worst_disc.max(d);
        }
    }
    let mut worst_exp = 0i64;
    for g in 0..p.vtgates as u16 {
        let a: Vec<_> = orig.exposures.iter().filter(|e| e.g == g).collect();
        let b: Vec<_> = rep.exposures.iter().filter(|e| e.g == g).collect();
        assert_eq!(a.len(), b.len(), "seed {seed}: exposures of vtgate {g}");
        for (x, y) in a.iter().zip(&b) {
            worst_exp = worst_exp.max((at(x.start) - shift - at(y.start)).abs());
            worst_exp = worst_exp.max((at(x.end) - shift - at(y.end)).abs());
        }
    }
    (worst_disc, worst_exp)
}

#[test]
fn round_trip_on_50_seeds_of_the_default_model_reproduces_discoveries_and_exposures() {
    let p = RolloutParams::default();
    let (mut dg, mut eg, mut dj, mut ej) = (0, 0, 0, 0);
    for seed in 0..50u64 {
        let s = vtsim::sim::rng::replicate_seed(11, seed);
        let (d, e) = round_trip(&p, s, LogFormat::Glog);
        dg = dg.max(d);
        eg = eg.max(e);
        if seed % 5 == 0 {
            let (d, e) = round_trip(&p, s, LogFormat::Json);
            dj = dj.max(d);
            ej = ej.max(e);
        }
    }
    eprintln!("glog: discovery {dg} ns, exposure {eg} ns; json: {dj} ns, {ej} ns");
    // glog prints microseconds (truncated): every instant within 1 us; JSON prints ns.
    assert!(dg < 1000 && eg < 1000, "glog: {dg} ns, {eg} ns");
    assert!(dj <= 1 && ej <= 1, "json: {dj} ns, {ej} ns");
}

#[test]
fn kubectl_timestamps_prefixed_glog_fits_the_same() {
    // `kubectl logs --timestamps`: RFC3339Nano with 9 digits, a space, the line.
    let p = RolloutParams::default();
    let orig = run_with_logs(&p, 5, RunOptions::default());
    let plain = render_run(&p, &orig, LogFormat::Glog);
    let prefixed: Vec<(String, String)> = plain
        .iter()
        .map(|(n, t)| {
            if !n.ends_with(".log") {
                return (n.clone(), t.clone());
            }
            let mut out = String::new();
            for (i, l) in t.lines().enumerate() {
                out.push_str(&format!("2026-07-18T14:00:{:02}.123456789Z {l}\n", i % 60));
            }
            (n.clone(), out)
        })
        .collect();
    let a = fit(&inputs(&plain), &FitOptions::default()).unwrap();
    let b = fit(&inputs(&prefixed), &FitOptions::default()).unwrap();
    assert_eq!(
        format!("{:?}", a.params),
        format!("{:?}", b.params),
        "same model with and without the prefix"
    );
    assert_eq!(a.t0, b.t0);
}

#[test]
fn round_trip_on_10_seeds_of_a_two_shard_model_with_three_replicas() {
    // Two shards rolling in parallel, four replicas each: the steps and PRS are per shard.
    let p = RolloutParams {
        shards: 2,
        replicas_per_shard: 3,
        vtgates: 6,
        ..RolloutParams::default()
    };
    let mut worst = (0, 0);
    for seed in 0..10u64 {
        let (d, e) = round_trip(
            &p,
            vtsim::sim::rng::replicate_seed(12, seed),
            LogFormat::Json,
        );
        worst = (worst.0.max(d), worst.1.max(e));
    }
    assert!(worst.0 <= 1 && worst.1 <= 1, "{worst:?}");
}

fn load_rollout(path: &str) -> RolloutParams {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    match vtsim::experiment::load_model_file(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .world
    {
        vtsim::model::WorldSpec::Rollout(p) => p,
        _ => panic!("not a rollout model"),
    }
}

#[test]
fn round_trip_on_50_seeds_of_the_multicell_model_recovers_cells_and_lags() {
    // Three cells, two shards, zone3's vtgates not watching zone2: the fit reads the cells from
    // the tablet aliases, each vtgate's cell from its log's name and its watched cells from
    // its start-up line, and the replay gives the same discoveries and exposures.
    let p = load_rollout("models/rollout-multicell.ron");
    let (mut dg, mut eg, mut dj, mut ej) = (0, 0, 0, 0);
    for seed in 0..50u64 {
        let s = vtsim::sim::rng::replicate_seed(14, seed);
        let (d, e) = round_trip(&p, s, LogFormat::Glog);
        dg = dg.max(d);
        eg = eg.max(e);
        if seed % 5 == 0 {
            let (d, e) = round_trip(&p, s, LogFormat::Json);
            dj = dj.max(d);
            ej = ej.max(e);
        }
    }
    eprintln!("multicell glog: discovery {dg} ns, exposure {eg} ns; json: {dj} ns, {ej} ns");
    assert!(dg < 1000 && eg < 1000, "glog: {dg} ns, {eg} ns");
    assert!(dj <= 1 && ej <= 1, "json: {dj} ns, {ej} ns");
    // The shape itself.
    let orig = run_with_logs(&p, 3, RunOptions::default());
    let f = fit(
        &inputs(&render_run(&p, &orig, LogFormat::Json)),
        &FitOptions::default(),
    )
    .unwrap();
    assert_eq!(f.params.cells, p.cells, "{:#?}", f.params.cells);
    assert_eq!(f.params.vtgates, 10);
    assert_eq!(f.params.replicas_per_shard, 3);
}

#[test]
fn the_shipped_multicell_incident_fits_back_to_its_scenario() {
    // examples/incident-multicell: logs emitted from scenario.ron (the cluster of
    // vitesscluster.yaml, seed 7). They are what the scenario emits today, byte for byte.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/incident-multicell");
    let sc = load_rollout("examples/incident-multicell/scenario.ron");
    let orig = run_with_logs(&sc, 7, RunOptions::default());
    let emitted = render_run(&sc, &orig, LogFormat::Glog);
    let mut shipped = vec![];
    for (name, text) in &emitted {
        let on_disk = std::fs::read_to_string(dir.join("logs").join(name))
            .unwrap_or_else(|e| panic!("logs/{name}: {e}"));
        assert!(
            on_disk == *text,
            "logs/{name} differs from what scenario.ron emits"
        );
        shipped.push((name.clone(), on_disk));
    }
    let yaml = std::fs::read_to_string(dir.join("vitesscluster.yaml")).unwrap();
    let cluster = vtsim::fit::cluster::read(&dir.join("vitesscluster.yaml"), &yaml).unwrap();
    assert_eq!(cluster.params.cells, sc.cells);
    let opts = FitOptions {
        refresh_interval: cluster.refresh,
        ..FitOptions::default()
    };
    let f = fit(&inputs(&shipped), &opts).unwrap();
    assert_eq!(f.params.cells, sc.cells, "{:#?}", f.params.cells);
    // Phases: each vtgate's first poll, within the glog lines' 1 us.
    let t = sc.vtgate.tablet_refresh_interval.as_nanos() as i64;
    let shift = f.t0 - EPOCH;
    for (g, (off, bounded)) in f.phases.iter().enumerate() {
        assert!(bounded, "vtgate {g}: phase bounded by a poll");
        let want = (orig.phases[g].0 as i64 - shift).rem_euclid(t);
        let d = (want - off).abs();
        assert!(
            d.min(t - d) < 1000,
            "vtgate {g}: phase {off} ns, scenario {want} ns"
        );
    }
    // Restart instants within their stated resolution (plus the 1 us of glog).
    for r in &orig.restarts {
        let uid = 101 + r.tablet as u64;
        let x = f
            .restarts
            .iter()
            .find(|x| x.alias.uid == uid)
            .expect("restart fitted");
        for (name, got, want) in [
            ("drain", x.drain, r.drain_at),
            ("publish", x.publish, r.publish_at),
            ("serve", x.serve, r.serving_at),
        ] {
            let d = (want.0 as i64 - shift - got.ns).abs();
            assert!(
                d <= got.resolution + 1000,
                "tablet {uid} {name}: off by {d} ns (+/- {})",
                got.resolution
            );
        }
    }
    // The fitted model's replay gives exactly the observed discovery instants, hence lags.
    let rep = run_detailed(&f.params, 1, RunOptions::default());
    for x in &f.restarts {
        let k = f
            .tablets
            .iter()
            .position(|a| a.as_ref() == Some(&x.alias))
            .expect("tablet in the model");
        let q = rep
            .restarts
            .iter()
            .find(|q| q.tablet as usize == k)
            .expect("replayed");
        for (g, obs) in x.discovered.iter().enumerate() {
            match obs {
                None => assert_eq!(q.discovered[g], SimTime::MAX, "{} vtgate {g}", x.alias),
                Some(o) => assert_eq!(q.discovered[g].0 as i64, *o, "{} vtgate {g}", x.alias),
            }
        }
    }
    // zone3's vtgates (9, 10) never see zone2's replicas, and are the ones exposed longest.
    assert!(rep.exposures.iter().filter(|e| e.g >= 8).count() >= 4);
}
