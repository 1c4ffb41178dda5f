//! Rollout model: closed forms, the seed's incident, determinism, stream independence, and
//! fast vs per-query agreement (`docs/rollout.md`, "The incident").

use vtsim::model::rollout::{
    run_detailed, DurationDist, Phase, Rollout, RolloutParams, RolloutRun, WorkloadMode,
};
use vtsim::model::{MetricDef, Model};
use vtsim::model::{RunOptions, WorldSpec};
use vtsim::sim::rng::replicate_seed;
use vtsim::sim::SimDuration;

fn load(path: &str) -> RolloutParams {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let m = vtsim::experiment::load_model_file(&path).unwrap_or_else(|e| panic!("{e}"));
    match m.world {
        WorldSpec::Rollout(p) => p,
        _ => panic!("not a rollout model"),
    }
}

fn secs(x: f64) -> SimDuration {
    SimDuration::from_secs_f64(x)
}

fn run(p: &RolloutParams, seed: u64) -> RolloutRun {
    run_detailed(p, seed, RunOptions::default())
}

fn metric(r: &RolloutRun, name: &str) -> f64 {
    let defs: Vec<MetricDef> = vtsim::model::rollout::Rollout::metric_defs();
    let i = defs.iter().position(|d| d.name == name).expect("metric");
    r.output.metrics[i]
}

/// Mean and standard error of a sample.
fn mean_se(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|y| (y - m) * (y - m)).sum::<f64>() / (n - 1.0);
    (m, (v / n).sqrt())
}

/// The closed-form setting: two replicas, no delays, uniform phases, replicas only (so the
/// second replica's drain is the only one that can expose a vtgate), no queries.
fn closed_form_params(t: f64, a: f64) -> RolloutParams {
    let mut p = RolloutParams::default().zero_delays(secs(20.0));
    p.vtgate.tablet_refresh_interval = secs(t);
    p.operator.tablet_available_timeout = secs(a);
    p.operator.restart_primary = false;
    p.workload.replica_read_rps = 0.0;
    p.workload.primary_write_rps = 0.0;
    p
}

#[test]
fn uniform_phases_match_the_closed_form() {
    // Per vtgate per drain: E[exposure] = (T - A)^2 / (2T), P(exposed) = (T - A) / T.
    // 1500 rollouts x 10 vtgates = 15000 independent vtgate samples per (T, A); tolerance
    // 4 standard errors of the sample.
    for (t, a) in [(60.0, 30.0), (60.0, 0.0), (120.0, 30.0), (30.0, 10.0)] {
        let p = closed_form_params(t, a);
        let mut exp = Vec::new();
        let mut hit = Vec::new();
        for k in 0..1500 {
            let r = run(&p, replicate_seed(11, k));
            assert_eq!(r.restarts.len(), 2);
            let mut per = vec![0.0; p.vtgates as usize];
            for e in &r.exposures {
                assert!(
                    e.start >= r.restarts[1].drain_at,
                    "only the 2nd drain exposes"
                );
                per[e.g as usize] += (e.end - e.start).as_secs_f64();
            }
            for x in per {
                exp.push(x);
                hit.push(if x > 0.0 { 1.0 } else { 0.0 });
            }
        }
        let (m, se) = mean_se(&exp);
        let want = (t - a) * (t - a) / (2.0 * t);
        assert!(
            (m - want).abs() <= 4.0 * se,
            "T={t} A={a}: mean exposure {m:.3} s vs {want:.3} (se {se:.3})"
        );
        let (ph, _) = mean_se(&hit);
        let pw = (t - a) / t;
        let se_p = (pw * (1.0 - pw) / hit.len() as f64).sqrt().max(1e-9);
        assert!(
            (ph - pw).abs() <= 4.0 * se_p,
            "T={t} A={a}: P(exposed) {ph:.4} vs {pw:.4} (se {se_p:.4})"
        );
    }
}

#[test]
fn default_timeout_errs_in_most_rollouts() {
    // T = 60 s, A = 30 s, realistic delays: errors in most rollouts (Wilson-free bound: with
    // 400 runs, a true rate of 0.5 would exceed 0.6 with probability < 1e-4).
    let p = load("models/rollout-default.ron");
    let n = 400;
    let bad = (0..n)
        .filter(|k| metric(&run(&p, replicate_seed(5, *k)), "any_error") == 1.0)
        .count();
    assert!(
        bad as f64 / n as f64 > 0.6,
        "{bad}/{n} rollouts with errors"
    );
}

#[test]
fn timeout_above_the_refresh_interval_never_errs() {
    // A = 90 s, T = 60 s: no error in any of 1000 rollouts (a vtgate discovers within T).
    let mut p = load("models/rollout-default.ron");
    p.operator.tablet_available_timeout = secs(90.0);
    for k in 0..1000 {
        let r = run(&p, replicate_seed(6, k));
        assert_eq!(metric(&r, "errors"), 0.0, "replicate {k}");
        assert_eq!(metric(&r, "exposure_union_s"), 0.0, "replicate {k}");
        assert_eq!(metric(&r, "completed"), 1.0);
    }
}

#[test]
fn shorter_refresh_interval_never_errs_at_2_4x_the_polls() {
    // The seed's workaround: T = 25 s with A = 30 s, no errors in 1000 rollouts, and 60/25 =
    // 2.4x the topology polls per second of T = 60 s (the expected rate is exactly M/T over
    // the rollout window; tolerance 4 standard errors of the ratio of the two sample means).
    let mut p25 = load("models/rollout-default.ron");
    p25.vtgate.tablet_refresh_interval = secs(25.0);
    let p60 = load("models/rollout-default.ron");
    let (mut r25, mut r60) = (Vec::new(), Vec::new());
    for k in 0..1000 {
        let seed = replicate_seed(7, k);
        let a = run(&p25, seed);
        assert_eq!(metric(&a, "errors"), 0.0, "replicate {k}");
        r25.push(metric(&a, "topo_polls_per_s"));
        r60.push(metric(&run(&p60, seed), "topo_polls_per_s"));
    }
    let (m25, se25) = mean_se(&r25);
    let (m60, se60) = mean_se(&r60);
    assert!((m25 - 10.0 / 25.0).abs() <= 4.0 * se25, "T=25: {m25}");
    assert!((m60 - 10.0 / 60.0).abs() <= 4.0 * se60, "T=60: {m60}");
    let ratio = m25 / m60;
    let se_ratio = ratio * ((se25 / m25).powi(2) + (se60 / m60).powi(2)).sqrt();
    assert!(
        (ratio - 2.4).abs() <= 4.0 * se_ratio,
        "ratio {ratio} (se {se_ratio})"
    );
}

const INCIDENT_SEED: u64 = 0xbaaf1458e77f4857;
const INCIDENT_DIGEST: &str = "069bed22b1606d80c3b747eb41298851ee1283bc86fc7103574bd77f839e44fd";

#[test]
fn incident_replays_the_seed() {
    let p = load("models/incident-000.ron");
    let r = run_detailed(
        &p,
        INCIDENT_SEED,
        RunOptions {
            report: true,
            ..Default::default()
        },
    );
    let lags: Vec<f64> = r.lags_s()[0]
        .iter()
        .map(|l| l.expect("discovered"))
        .collect();
    assert_eq!(
        lags,
        vec![0.0, 44.0, 46.0, 46.0, 46.0, 46.0, 46.0, 46.0, 48.0, 51.0],
        "discovery lags of replica A"
    );
    assert_eq!(r.bursts.len(), 2);
    let b = r
        .bursts
        .iter()
        .map(|b| (b.start.as_secs_f64(), b.end.as_secs_f64()))
        .collect::<Vec<_>>();
    assert_eq!(b, vec![(131.5, 137.5), (253.0, 257.5)]);
    // Burst 2 is vtgates 09 and 10 only.
    let late: Vec<u16> = r
        .exposures
        .iter()
        .filter(|e| e.start.as_secs_f64() > 200.0)
        .map(|e| e.g)
        .collect();
    assert_eq!(late, vec![8, 9]);
    assert_eq!(metric(&r, "primary_write_errors"), 0.0);
    assert_eq!(
        r.output.digest,
        INCIDENT_DIGEST,
        "report:\n{}",
        r.output.report.unwrap()
    );
}

#[test]
fn same_seed_same_digest() {
    let mut p = load("models/rollout-default.ron");
    for mode in [WorkloadMode::Fast, WorkloadMode::PerQuery] {
        p.workload.mode = mode;
        let a = run(&p, 42);
        let b = run(&p, 42);
        assert_eq!(a.output.digest, b.output.digest);
        assert_eq!(a.output.metrics, b.output.metrics);
        assert_ne!(a.output.digest, run(&p, 43).output.digest);
    }
}

#[test]
fn streams_are_independent() {
    // Changing the workload (rate, mode) leaves every vtgate poll, restart time and discovery
    // lag unchanged; adding a vtgate leaves the others' polls and the operator's times alone.
    let base = load("models/rollout-default.ron");
    let mut other = base.clone();
    other.workload.replica_read_rps = 500.0;
    other.workload.primary_write_rps = 0.0;
    let mut pq = base.clone();
    pq.workload.mode = WorkloadMode::PerQuery;
    let mut more = base.clone();
    more.vtgates = 11;
    for k in 0..20 {
        let seed = replicate_seed(8, k);
        let a = run(&base, seed);
        for q in [&other, &pq] {
            let b = run(q, seed);
            assert_eq!(a.poll_log, b.poll_log);
            assert_eq!(a.lags_s(), b.lags_s());
            let times = |r: &RolloutRun| -> Vec<_> {
                r.restarts
                    .iter()
                    .map(|x| (x.drain_at, x.serving_at, x.available_at))
                    .collect()
            };
            assert_eq!(times(&a), times(&b));
        }
        let c = run(&more, seed);
        let mine: Vec<_> = c
            .poll_log
            .iter()
            .filter(|(g, t)| *g < 10 && *t <= a.end)
            .copied()
            .collect();
        assert_eq!(a.poll_log, mine);
        let drains = |r: &RolloutRun| -> Vec<_> {
            r.restarts.iter().map(|x| (x.tablet, x.drain_at)).collect()
        };
        assert_eq!(drains(&a), drains(&c));
    }
}

#[test]
fn fast_and_per_query_modes_agree() {
    // Same seeds, so the routing intervals are identical in both modes (stream independence);
    // only the query counting differs. Paired differences of the error counts must have mean
    // 0 within 4 standard errors; the same for offered reads.
    let mut p = load("models/rollout-default.ron");
    p.workload.replica_read_rps = 20.0;
    p.workload.primary_write_rps = 2.0;
    let mut q = p.clone();
    q.workload.mode = WorkloadMode::PerQuery;
    let (mut d_err, mut d_reads) = (Vec::new(), Vec::new());
    let mut total = 0.0;
    for k in 0..300 {
        let seed = replicate_seed(9, k);
        let a = run(&p, seed);
        let b = run(&q, seed);
        total += metric(&a, "replica_read_errors");
        d_err.push(metric(&a, "replica_read_errors") - metric(&b, "replica_read_errors"));
        d_reads.push(metric(&a, "replica_reads") - metric(&b, "replica_reads"));
    }
    assert!(
        total > 1000.0,
        "the comparison needs errors to compare ({total})"
    );
    let (m, se) = mean_se(&d_err);
    assert!(
        m.abs() <= 4.0 * se,
        "errors: mean paired difference {m} (se {se})"
    );
    let (m, se) = mean_se(&d_reads);
    assert!(
        m.abs() <= 4.0 * se,
        "reads: mean paired difference {m} (se {se})"
    );
}

#[test]
fn validation_names_the_field() {
    let ok = load("models/rollout-default.ron");
    assert!(vtsim::model::rollout::Rollout::validate(&ok).is_ok());
    let check = |f: &dyn Fn(&mut RolloutParams), field: &str| {
        let mut p = ok.clone();
        f(&mut p);
        let e = vtsim::model::rollout::Rollout::validate(&p).unwrap_err();
        assert_eq!(e.field, field, "{e:?}");
    };
    check(&|p| p.vtgates = 0, "vtgates");
    check(
        &|p| p.vtgate.tablet_refresh_interval = SimDuration::ZERO,
        "vtgate.tablet_refresh_interval",
    );
    check(
        &|p| {
            p.vtgate.phase = Phase::Explicit {
                offsets: vec![secs(1.0); 3],
            }
        },
        "vtgate.phase.offsets",
    );
    check(
        &|p| {
            p.vtgate.phase = Phase::Explicit {
                offsets: vec![secs(61.0); 10],
            }
        },
        "vtgate.phase.offsets[0]",
    );
    check(
        &|p| {
            p.operator.step_latency = DurationDist::Uniform {
                min: secs(2.0),
                max: secs(1.0),
            }
        },
        "operator.step_latency.max",
    );
    check(
        &|p| p.workload.replica_read_rps = -1.0,
        "workload.replica_read_rps",
    );
}

#[test]
fn params_survive_json_overrides() {
    // Sweeps override dotted paths on the JSON tree: every enum is internally tagged.
    let p = load("models/rollout-default.ron");
    let spec = WorldSpec::Rollout(p);
    let mut v = spec.params_json();
    v["vtgate"]["phase"] = serde_json::json!({"kind": "Clustered", "window": "20s"});
    v["operator"]["tablet_available_timeout"] = serde_json::json!("1m30s");
    let back = spec.with_params_json(v).expect("round trip");
    match back {
        WorldSpec::Rollout(q) => {
            assert_eq!(q.vtgate.phase, Phase::Clustered { window: secs(20.0) });
            assert_eq!(q.operator.tablet_available_timeout, secs(90.0));
            let r = run(&q, 3);
            assert_eq!(metric(&r, "completed"), 1.0);
        }
        _ => unreachable!(),
    }
    // An unknown field is an error.
    let mut bad = spec.params_json();
    bad["vtgate"]["tablet_refresh_intervall"] = serde_json::json!("1m");
    assert!(spec.with_params_json(bad).is_err());
}

#[test]
fn every_restart_is_rediscovered_and_every_vtgate_serves_again_at_the_end() {
    // Invariant over many runs of the default model: the run completes, every (vtgate,
    // restart) pair is discovered, and when the run stops (before the final accounting closes
    // anything) every vtgate can route replica reads and primary writes again: no exposure is
    // left open, so none is cut short by the end of the run.
    let p = load("models/rollout-default.ron");
    for k in 0..200 {
        let seed = replicate_seed(10, k);
        let mut sim = vtsim::model::rollout::RolloutWorld::simulation(
            &p,
            seed,
            vtsim::sim::Trace::digest_only(),
        );
        let stop = sim.run_until(vtsim::sim::SimTime::ZERO + p.horizon);
        assert_ne!(
            stop,
            vtsim::sim::Stop::Horizon,
            "seed {seed}: hit the horizon"
        );
        for (i, r) in sim.world.routes.iter().enumerate() {
            assert!(
                r.read == 0 && r.write_ok,
                "seed {seed}: route {i} still exposed"
            );
        }
        assert_eq!(sim.world.pending_discoveries, 0, "seed {seed}");
        let r = run(&p, seed);
        assert_eq!(metric(&r, "completed"), 1.0);
        assert_eq!(r.restarts.len(), 3);
        for e in &r.exposures {
            assert!(e.start < e.end && e.end <= r.end);
        }
        assert!(metric(&r, "goodput") <= 1.0 && metric(&r, "goodput") > 0.0);
    }
}

#[test]
fn the_prs_reload_race_decides_the_incidents_second_burst() {
    // With every vtgate reloading the shard at the end of PRS (the other outcome of the race in
    // the code), the two vtgates that missed replica B find it then, and burst 2 disappears.
    let mut p = load("models/incident-000.ron");
    let base = run_detailed(&p, INCIDENT_SEED, RunOptions::default());
    assert_eq!(base.bursts.len(), 2);
    p.vtgate.prs_reload = vtsim::model::rollout::PrsReload::AllVtgates;
    let all = run_detailed(&p, INCIDENT_SEED, RunOptions::default());
    assert_eq!(all.bursts.len(), 1);
    assert_eq!(all.bursts[0].start.as_secs_f64(), 131.5);
}

#[test]
fn observed_in_order_durations_replay_per_tablet_and_uniform_ones_pick_samples() {
    use vtsim::model::rollout::ObservedDraw;
    // Every delay zero except the restart, observed per tablet: tablet k's new process
    // serves exactly samples[k] after its SIGTERM.
    let samples = vec![secs(11.0), secs(23.5), secs(37.25)];
    let mut p = RolloutParams::default().zero_delays(secs(0.0));
    p.tablets.restart = DurationDist::Observed {
        samples: samples.clone(),
        draw: ObservedDraw::InOrder,
    };
    p.check().expect("valid");
    let r = run(&p, 7);
    assert_eq!(r.restarts.len(), 3);
    for rec in &r.restarts {
        let d = rec.serving_at.since(rec.drain_at);
        assert_eq!(d, samples[rec.tablet as usize], "tablet {}", rec.tablet);
    }
    // Uniform: each restart takes one of the samples, and over seeds all three show up.
    p.tablets.restart = DurationDist::Observed {
        samples: samples.clone(),
        draw: ObservedDraw::Uniform,
    };
    let mut seen = [false; 3];
    for seed in 0..20 {
        for rec in &run(&p, seed).restarts {
            let d = rec.serving_at.since(rec.drain_at);
            let k = samples.iter().position(|s| *s == d).expect("a sample");
            seen[k] = true;
        }
    }
    assert_eq!(seen, [true; 3]);
    // Too few InOrder samples for three tablets: refused, naming the field.
    p.tablets.restart = DurationDist::Observed {
        samples: samples[..2].to_vec(),
        draw: ObservedDraw::InOrder,
    };
    let e = p.check().unwrap_err().to_string();
    assert!(e.contains("tablets.restart.samples"), "{e}");
}

// ---- Cells and topology outages (docs/rollout.md, "Cells and topology outages") ----

use vtsim::model::rollout::{CellParams, TopoOutage};

fn cell(
    name: &str,
    vtgates: u32,
    replicas: u32,
    primary: bool,
    watch: Option<&[&str]>,
) -> CellParams {
    CellParams {
        name: name.into(),
        vtgates,
        replicas,
        primary,
        cells_to_watch: watch.map(|l| l.iter().map(|s| s.to_string()).collect()),
    }
}

#[test]
fn one_listed_cell_watching_itself_is_the_default_model_bit_for_bit() {
    // The cell machinery (per-cell poll loop, initial routes from the views) must not move a
    // single event or draw when the shape is the implicit one.
    let p = load("models/rollout-default.ron");
    let mut q = p.clone();
    q.cells = vec![cell("zone1", 10, 2, true, None)];
    for k in 0..20 {
        let s = replicate_seed(31, k);
        assert_eq!(
            run(&p, s).output.digest,
            run(&q, s).output.digest,
            "replicate {k}"
        );
    }
}

#[test]
fn a_vtgate_discovers_only_the_cells_it_watches() {
    let p = load("models/rollout-multicell.ron");
    p.check().unwrap();
    // Tablets per shard: primary (zone1), zone1, zone2, zone3 replicas; vtgates 0-3 zone1,
    // 4-7 zone2, 8-9 zone3 (which do not watch zone2).
    let per = 4;
    for k in 0..30 {
        let r = run(&p, replicate_seed(32, k));
        assert_eq!(metric(&r, "completed"), 1.0, "replicate {k}");
        let lags = r.detail.lags_s();
        assert_eq!(r.detail.restarts.len(), 8);
        for (i, rec) in r.detail.restarts.iter().enumerate() {
            let zone2 = rec.tablet as usize % per == 2;
            for (g, lag) in lags[i].iter().enumerate() {
                let blind = zone2 && g >= 8;
                assert_eq!(
                    lag.is_none(),
                    blind,
                    "replicate {k} restart {i} vtgate {g}: {lag:?}"
                );
                if let Some(l) = lag {
                    assert!(*l >= 0.0 && *l <= 60.0 + 1.0, "replicate {k}: lag {l}");
                }
            }
        }
    }
}

#[test]
fn without_a_shared_alias_a_cell_with_no_replica_never_reads() {
    // zone2 has vtgates but no replica: with other cells routable its reads go to zone1's;
    // without (plain Vitess, no cells alias) its vtgates have no replica to read from.
    let mut p = load("models/rollout-default.ron");
    p.vtgates = 4;
    p.cells = vec![
        cell("zone1", 2, 2, true, None),
        cell("zone2", 2, 0, false, None),
    ];
    p.operator.tablet_available_timeout = secs(90.0);
    p.check().unwrap();
    let r = run(&p, 7);
    assert_eq!(metric(&r, "errors"), 0.0);
    p.vtgate.replica_reads_other_cells = false;
    let r = run(&p, 7);
    let exposed: Vec<u16> = r.detail.exposures.iter().map(|x| x.g).collect();
    assert!(exposed.iter().all(|g| *g >= 2), "{exposed:?}");
    for g in [2u16, 3] {
        let x = r
            .detail
            .exposures
            .iter()
            .find(|x| x.g == g)
            .expect("exposed");
        assert_eq!(x.start.0, 0, "vtgate {g} exposed from the start");
    }
    assert!(metric(&r, "errors") > 1000.0, "{}", metric(&r, "errors"));
}

#[test]
fn a_topology_outage_delays_every_discovery_to_its_end_and_breaks_the_safe_gate() {
    // A 90 s gate never errs without an outage (timeout_above_the_refresh_interval_never_errs);
    // with every topology read failing for 3 min from 15 s, no vtgate can see a new address
    // before the outage ends, so the second replica is drained while many vtgates know none.
    let mut p = load("models/rollout-default.ron");
    p.operator.tablet_available_timeout = secs(90.0);
    p.vtgate.topo_outage = TopoOutage {
        start: secs(15.0),
        length: secs(180.0),
        cells: vec![],
    };
    p.check().unwrap();
    let end = secs(195.0).as_nanos();
    let n = 100;
    let mut bad = 0;
    for k in 0..n {
        let r = run(&p, replicate_seed(33, k));
        assert_eq!(metric(&r, "completed"), 1.0);
        for rec in &r.detail.restarts {
            if rec.publish_at.0 >= secs(15.0).as_nanos() && rec.serving_at.0 < end {
                for d in &rec.discovered {
                    assert!(
                        d.0 >= end,
                        "replicate {k}: discovered at {} < outage end",
                        d.0
                    );
                }
            }
        }
        bad += (metric(&r, "any_error") == 1.0) as usize;
    }
    assert!(bad > n as usize / 2, "{bad}/{n} rollouts with errors");
    // The same outage on a cell no vtgate watches changes nothing.
    p.vtgates = 10;
    p.cells = vec![
        cell("zone1", 10, 2, true, Some(&["zone1"])),
        cell("zone2", 0, 0, false, None),
    ];
    p.vtgate.topo_outage.cells = vec!["zone2".into()];
    p.check().unwrap();
    for k in 0..20 {
        assert_eq!(metric(&run(&p, replicate_seed(33, k)), "errors"), 0.0);
    }
}

#[test]
fn cell_and_outage_mistakes_name_the_field() {
    let base = load("models/rollout-multicell.ron");
    type Edit = Box<dyn Fn(&mut RolloutParams)>;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|p| p.vtgates = 9), "vtgates"),
        (Box::new(|p| p.replicas_per_shard = 2), "replicas_per_shard"),
        (Box::new(|p| p.cells[1].primary = true), "cells"),
        (
            Box::new(|p| p.cells[2].name = "zone1".into()),
            "cells[2].name",
        ),
        (
            Box::new(|p| p.cells[2].cells_to_watch = Some(vec!["zone9".into()])),
            "cells[2].cells_to_watch[0]",
        ),
        (
            Box::new(|p| p.vtgate.topo_outage.cells = vec!["zone1".into(), "nope".into()]),
            "vtgate.topo_outage.cells[1]",
        ),
    ];
    for (f, field) in cases {
        let mut p = base.clone();
        f(&mut p);
        let e = p.check().expect_err(field);
        assert_eq!(e.field, field, "{e}");
    }
}

/// `p` at 200 vtgates polling every 33 s: the world `vtsim advise --gate 30s --vtgates 200`
/// runs at its answer.
fn advise_world(p: &RolloutParams) -> RolloutParams {
    let mut wide = p.clone();
    wide.vtgates = 200;
    wide.vtgate.tablet_refresh_interval = secs(33.0);
    wide
}

/// The health-check dials that must fail before a new process serves are not stepped as
/// events (`RolloutWorld::live_dial`): the same runs as stepping each one (the hidden
/// `RolloutSteppedDials`, as the model did before). Every metric bit but `handled_events`,
/// every restart's per-vtgate discovery time, exposure, poll and vtgate log note equal; fewer
/// events, another digest. Checked on the default model, at 200 vtgates (the advise preset's
/// world), with a kept address, a short refresh, a low backoff cap, readiness flaps, per-query
/// mode, the multicell model with a topology outage, and the incident.
#[test]
fn skipped_failing_dials_give_the_runs_of_stepping_them() {
    use vtsim::model::rollout::{run_with_logs, RolloutSteppedDials};
    let default = load("models/rollout-default.ron");
    let wide = advise_world(&default);
    let mut kept = default.clone();
    kept.tablets.keep_address_on_restart = true;
    // Dials every 0.5 s at most: some fall between the publish and the serving (with the
    // default 60 s cap the backoff has grown past that window by then).
    kept.vtgate.healthcheck_timeout = secs(0.5);
    let mut fast = default.clone();
    fast.vtgate.tablet_refresh_interval = secs(2.0);
    fast.vtgates = 20;
    let mut capped = fast.clone();
    capped.vtgate.healthcheck_timeout = secs(0.1);
    let mut flaps = default.clone();
    flaps.tablets.readiness_flaps_per_hour = 60.0;
    flaps.vtgate.tablet_refresh_interval = secs(10.0);
    let mut per_query = default.clone();
    per_query.vtgates = 4;
    per_query.workload.mode = WorkloadMode::PerQuery;
    let mut outage = load("models/rollout-multicell.ron");
    outage.vtgate.topo_outage.start = secs(60.0);
    outage.vtgate.topo_outage.length = secs(90.0);
    outage.vtgate.topo_outage.cells = vec!["zone2".into()];
    // (case, parameters, seeds, whether some run must skip a dial)
    let cases = [
        ("rollout-default", default, 40, true),
        ("200 vtgates, T = 33 s", wide, 4, true),
        ("kept address, cap 0.5 s", kept, 40, true),
        ("T = 2 s", fast, 20, true),
        ("T = 2 s, cap 100 ms", capped, 20, true),
        ("flaps", flaps, 40, true),
        ("per-query", per_query, 10, true),
        ("multicell outage", outage, 20, true),
        // Its explicit phases put no poll between a publish and the serving: the same events
        // and digest.
        ("incident-000", load("models/incident-000.ron"), 20, false),
    ];
    let handled = Rollout::metric_defs()
        .iter()
        .position(|d| d.name == "handled_events")
        .expect("handled_events");
    for (what, p, seeds, skips) in &cases {
        let (mut fewer, mut events, mut stepped) = (0, 0, 0);
        for r in 0..*seeds {
            let seed = replicate_seed(11, r);
            let a = run_with_logs(p, seed, RunOptions::default());
            let b =
                vtsim::model::run_with::<RolloutSteppedDials>(p, seed, RunOptions::default(), true);
            let bits = |m: &[f64]| {
                m.iter()
                    .enumerate()
                    .filter(|&(i, _)| i != handled)
                    .map(|(_, x)| x.to_bits())
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                bits(&a.output.metrics),
                bits(&b.output.metrics),
                "{what} seed {r}"
            );
            let (x, y) = (&a.detail, &b.detail);
            assert_eq!(
                format!("{:?}", x.restarts),
                format!("{:?}", y.restarts),
                "{what} {r}"
            );
            assert_eq!(
                format!("{:?}", x.exposures),
                format!("{:?}", y.exposures),
                "{what} {r}"
            );
            assert_eq!(x.poll_log, y.poll_log, "{what} {r}");
            assert_eq!(x.journal, y.journal, "{what} {r}");
            assert_eq!(a.end, b.end, "{what} {r}");
            assert!(a.output.events <= b.output.events, "{what} {r}");
            assert_eq!(a.output.metrics[handled], a.output.events as f64);
            if a.output.events < b.output.events {
                fewer += 1;
                assert_ne!(a.output.digest, b.output.digest, "{what} {r}");
            } else {
                assert_eq!(a.output.digest, b.output.digest, "{what} {r}");
            }
            events += a.output.events;
            stepped += b.output.events;
        }
        // The skipped dials are there to skip: a vtgate polls between a tablet's publish and
        // its serving in some run of every case.
        assert_eq!(
            fewer > 0,
            *skips,
            "{what}: {fewer} of {seeds} runs skipped a dial"
        );
        println!("{what}: {events} events, {stepped} stepped, {fewer} of {seeds} runs fewer");
    }
}

/// Without jitter the vtgates' polls are kept in a ring and only the earliest is a pending
/// event, with the sequence number its own event would have had (`world::Tick`): every run is
/// the one with a pending poll per vtgate (the hidden `RolloutPollEvents`), digest and event
/// count included, through a fresh world and a reset one. Ties are where an order could slip:
/// vtgates with equal explicit phases, a clustered window of 1 ns (every vtgate at one
/// phase), fixed durations on whole seconds (a poll at the instant of a tablet's change),
/// one vtgate, and jitter (no ring).
#[test]
fn the_poll_ring_runs_as_one_event_per_vtgate() {
    use vtsim::model::rollout::RolloutPollEvents;
    let default = load("models/rollout-default.ron");
    let mut same = default.clone();
    same.vtgates = 6;
    same.vtgate.tablet_refresh_interval = secs(10.0);
    same.vtgate.phase = Phase::Explicit {
        offsets: [0.0, 5.0, 5.0, 0.0, 2.0, 5.0]
            .iter()
            .map(|&x| secs(x))
            .collect(),
    };
    // The incident's zero delays and fixed whole-second durations with those phases: drains,
    // publishes and serves land on poll instants.
    let mut round = load("models/incident-000.ron");
    round.vtgates = 6;
    round.vtgate.tablet_refresh_interval = secs(10.0);
    round.vtgate.phase = same.vtgate.phase.clone();
    round.tablets.restart = DurationDist::Fixed { value: secs(20.0) };
    let mut one_phase = default.clone();
    one_phase.vtgates = 12;
    // A 1 ns window (zero is refused): every vtgate at the fleet's one phase.
    one_phase.vtgate.phase = Phase::Clustered {
        window: SimDuration::from_nanos(1),
    };
    let mut one = default.clone();
    one.vtgates = 1;
    let mut jitter = default.clone();
    jitter.vtgate.poll_jitter = secs(2.0);
    let wide = advise_world(&default);
    let cases = [
        ("rollout-default", default, 30),
        ("equal explicit phases", same, 10),
        ("equal phases, whole seconds", round, 10),
        ("one phase", one_phase, 10),
        ("one vtgate", one, 10),
        ("jitter", jitter, 10),
        ("200 vtgates", wide, 3),
        ("multicell", load("models/rollout-multicell.ron"), 10),
        ("incident-000", load("models/incident-000.ron"), 10),
    ];
    for (what, p, seeds) in &cases {
        let spec = WorldSpec::Rollout(p.clone());
        assert!(spec.validate().is_ok(), "{what}");
        let mut runner = spec.runner();
        for r in 0..*seeds {
            let seed = replicate_seed(5, r);
            let a = runner.run(seed, RunOptions::default());
            let b = vtsim::model::run_detailed::<RolloutPollEvents>(p, seed, RunOptions::default());
            assert_eq!(a.digest, b.output.digest, "{what} seed {r}");
            assert_eq!(a.events, b.output.events, "{what} seed {r}");
        }
    }
}
