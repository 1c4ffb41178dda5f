//! The fleet model (`docs/fleet.md`): the survivor's pool against Erlang-A while one replica
//! is drained, the rollout model's exposures on common seeds, goodput with no rollout against
//! Erlang-A, conservation of reads, bad input.

mod common;

use vtsim::model::connpool::{erlang_a, ConnPoolParams};
use vtsim::model::dist::DurationDist;
use vtsim::model::fleet::{run_detailed, FleetDetail, FleetParams, ReadRate};
use vtsim::model::rollout::ReplicaOrder;
use vtsim::model::{Model, RunOptions, RunOutput};
use vtsim::sim::rng::replicate_seed;
use vtsim::sim::SimDuration;
use vtsim::stats::{summarize, t_two_sided};

/// A fleet whose every pool is an M/M/c+M queue (the connpool model's Erlang-A pool: `Fixed`,
/// no costs, prefilled, exponential service at `mu` and patience at `theta`), fed `lam` reads
/// per second in total by 2 vtgates, one shard of 2 replicas.
fn erlang_fleet(lam: f64, mu: f64, c: u32, theta: f64) -> FleetParams {
    let e = ConnPoolParams::erlang_a(lam, mu, c, theta, 1);
    FleetParams {
        vtgates: 2,
        variant: e.variant,
        pool: e.pool,
        costs: e.costs,
        reads: vtsim::model::fleet::ReadParams {
            rate: ReadRate::PerVtgate { rps: lam / 2.0 },
            service: e.workload.service,
            deadline: e.workload.deadline,
        },
        ..FleetParams::default()
    }
}

/// `|mean − exact| ≤ t(1 − α/2, n − 1) · sd/√n` over the replicate values, else the figures.
fn within_interval(what: &str, values: &[f64], exact: f64, alpha: f64) {
    let s = summarize(values);
    let n = values.len() as f64;
    let half = t_two_sided(values.len() as u64 - 1, alpha) * s.sd / n.sqrt();
    eprintln!(
        "{what}: {:.5} ± {half:.5} (n = {n}) vs exact {exact:.5}",
        s.mean
    );
    assert!(
        (s.mean - exact).abs() <= half,
        "{what}: {:.5} ± {half:.5} (n = {n}) vs exact {exact:.5}",
        s.mean
    );
}

/// (a) One replica drained long enough: the survivor receives every read, and its pool's
/// abandonment is Erlang-A's at the whole load (λ = 2500/s, μ = 100/s, c = 20, θ = 200/s:
/// the connpool check's (25, 1, 20, 2) point at 100× speed, P(abandon) ≈ 0.21).
#[test]
fn the_survivors_pool_abandons_as_erlang_a_at_the_load_it_receives() {
    let (lam, mu, c, theta) = (2500.0, 100.0, 20, 200.0);
    let mut p = erlang_fleet(lam, mu, c, theta);
    // Tablet 1 (a replica) drains at 10 s and stays away for the whole run.
    p.operator.restart_primary = false;
    p.operator.replica_order = ReplicaOrder::Alias;
    p.operator.start_at = SimDuration::from_secs(10);
    p.operator.step_latency = DurationDist::fixed(SimDuration::ZERO);
    p.tablets.drain_grace = DurationDist::fixed(SimDuration::from_secs(1));
    p.tablets.restart = DurationDist::fixed(SimDuration::from_secs(10_000));
    p.horizon = SimDuration::from_secs(80);
    p.tail = SimDuration::ZERO;
    <vtsim::model::fleet::Fleet as Model>::validate(&p).expect("valid");
    let exact = erlang_a(lam, mu, c, theta).p_abandon;
    let before = erlang_a(lam / 2.0, mu, c, theta).p_abandon;
    let mut ab = vec![];
    for k in 0..6 {
        let r = run_detailed(&p, replicate_seed(41, k), RunOptions::default());
        assert_eq!(r.restarts.len(), 1);
        assert_eq!(r.restarts[0].tablet, 1);
        // Window: 20 s after the drain to the end; every read then goes to tablet 2.
        let w = &r.seconds[30..79];
        let offered: u64 = w.iter().map(|s| s.offered).sum();
        let timeouts: u64 = w.iter().map(|s| s.pool_timeouts).sum();
        assert_eq!(
            w.iter()
                .map(|s| s.no_healthy + s.routed_to_dead)
                .sum::<u64>(),
            0
        );
        assert!(offered > 100_000, "{offered}");
        ab.push(timeouts as f64 / offered as f64);
        // Before the drain both replicas share the load: far fewer abandon.
        let pre = &r.seconds[2..10];
        let pre_ab = pre.iter().map(|s| s.pool_timeouts).sum::<u64>() as f64
            / pre.iter().map(|s| s.offered).sum::<u64>() as f64;
        assert!(pre_ab < 3.0 * before + 0.01, "{pre_ab} vs {before}");
    }
    assert!(exact > 0.1 && before < exact / 3.0, "{exact} {before}");
    within_interval("survivor P(abandon)", &ab, exact, 0.01);
}

/// (c) No rollout: two replicas, each an M/M/c+M at half the load; goodput per second is the
/// offered rate minus Erlang-A's abandonment at λ/2 (λ = 4000/s: each pool at load 1).
#[test]
fn with_no_rollout_goodput_is_the_offered_load_minus_erlang_a_losses() {
    let (lam, mu, c, theta) = (4000.0, 100.0, 20, 200.0);
    let mut p = erlang_fleet(lam, mu, c, theta);
    p.operator.start_at = SimDuration::from_secs(10_000);
    p.horizon = SimDuration::from_secs(32);
    let lost = erlang_a(lam / 2.0, mu, c, theta).p_abandon;
    let exact = lam * (1.0 - lost);
    let mut good = vec![];
    for k in 0..6 {
        let r = run_detailed(&p, replicate_seed(43, k), RunOptions::default());
        assert_eq!(r.restarts.len(), 0);
        assert_eq!(r.metric("drains"), 0.0);
        let w = &r.seconds[2..31];
        good.push(w.iter().map(|s| s.good).sum::<u64>() as f64 / w.len() as f64);
        // Only pools fail reads here.
        assert_eq!(
            r.metric("no_healthy_errors") + r.metric("routed_to_dead_errors"),
            0.0
        );
        assert!(r.metric("pool_timeouts") > 0.0);
    }
    assert!(lost > 0.05, "{lost}");
    // The offered rate alone would fail: the losses are resolved by the check.
    assert!(summarize(&good).mean < lam * (1.0 - lost / 2.0));
    within_interval("goodput per second", &good, exact, 0.01);
}

/// (b) With ample capacity the fleet's exposure figures are the rollout model's on the same
/// seeds, exactly: the rollout world runs inside the fleet on its own streams (common random
/// numbers), untouched by the reads and the pools.
#[test]
fn the_exposures_are_the_rollout_models_on_common_seeds() {
    let mut p = FleetParams::default();
    p.pool.capacity = 1000;
    p.reads.rate = ReadRate::PerVtgate { rps: 40.0 };
    let rp = p.rollout_params();
    let names = [
        "exposure_union_s",
        "exposure_mean_per_vtgate_s",
        "vtgates_exposed",
        "frac_vtgates_exposed",
        "discovery_lag_mean_s",
        "discovery_lag_max_s",
        "rollout_duration_s",
        "completed",
    ];
    let (mut exposed_runs, mut none_errors) = (0, 0.0);
    for seed in 1..=12u64 {
        let f = run_detailed(&p, seed, RunOptions::default());
        let r = vtsim::model::rollout::run_detailed(&rp, seed, RunOptions::default());
        for n in names {
            assert_eq!(f.metric(n), r.metric(n), "seed {seed}: {n}");
        }
        assert_eq!(f.exposures.len(), r.exposures.len(), "seed {seed}");
        for (a, b) in f.exposures.iter().zip(&r.exposures) {
            assert_eq!(
                (a.g, a.shard, a.start, a.end),
                (b.g, b.shard, b.start, b.end)
            );
        }
        for (a, b) in f.restarts.iter().zip(&r.restarts) {
            assert_eq!(
                (a.tablet, a.drain_at, a.serving_at),
                (b.tablet, b.drain_at, b.serving_at)
            );
            assert_eq!(a.discovered, b.discovered);
        }
        assert_eq!(
            f.metric("pool_timeouts"),
            0.0,
            "seed {seed}: capacity is ample"
        );
        exposed_runs += (f.metric("exposure_union_s") > 0.0) as u32;
        none_errors += f.metric("no_healthy_errors");
    }
    // Not vacuous: the default gate (30 s < 60 s refresh) exposes vtgates on some seeds,
    // and the fleet's reads fail there.
    eprintln!("{exposed_runs} of 12 seeds exposed; {none_errors} no-healthy errors in all");
    assert!(exposed_runs >= 3, "{exposed_runs}");
    assert!(none_errors > 0.0);
}

/// Every offered read ends as exactly one of: served, the four failures, or still in a pool
/// when the run stops; the metrics and the timeline agree; a drained survivor overloads.
#[test]
fn reads_are_conserved_and_an_overloaded_survivor_times_out() {
    let mut p = FleetParams::default();
    p.pool.capacity = 20;
    p.reads.rate = ReadRate::Load { per_replica: 0.7 };
    for seed in [1u64, 2] {
        let r = run_detailed(&p, seed, RunOptions::default());
        let t = r.totals.all;
        assert_eq!(
            t.offered,
            t.good + t.failed() + r.totals.in_flight_at_end,
            "seed {seed}"
        );
        let from_seconds: u64 = r.seconds.iter().map(|s| s.failed()).sum();
        assert_eq!(from_seconds as f64, r.metric("failed_reads"));
        assert_eq!(
            r.metric("failed_reads"),
            r.metric("no_healthy_errors")
                + r.metric("pool_timeouts")
                + r.metric("routed_to_dead_errors")
                + r.metric("pool_closed_errors")
        );
        // 0.7 per replica is 1.4 on the survivor of a drained pair: its pool times out.
        assert!(r.metric("pool_timeouts") > 1000.0, "seed {seed}");
        assert_eq!(r.metric("drains"), 3.0);
        assert!(r.metric("worst_dip_depth_frac") > 0.1);
        eprintln!(
            "seed {seed}: {} offered, {} good, {} no healthy, {} pool timeouts, {} routed to dead, {} pool closed, {} in flight at end; worst dip {:.3} for {} s",
            t.offered, t.good, t.no_healthy, t.pool_timeouts, t.routed_to_dead, t.pool_closed,
            r.totals.in_flight_at_end, r.metric("worst_dip_depth_frac"), r.metric("worst_dip_duration_s")
        );
    }
    // The same fleet at 0.3 per replica (0.6 on a survivor) has no pool timeout.
    p.reads.rate = ReadRate::Load { per_replica: 0.3 };
    let r = run_detailed(&p, 1, RunOptions::default());
    assert_eq!(r.metric("pool_timeouts"), 0.0);
}

/// Two runs of one fleet by a model and its twin (`FleetEager`, `FleetSteppedDials`) give
/// the same figures: every metric bit but `handled_events`, and every second's counts.
fn same_figures(
    at: &str,
    (ao, a): (&RunOutput, &FleetDetail),
    (bo, b): (&RunOutput, &FleetDetail),
) {
    for (i, d) in ao.metric_defs().iter().enumerate() {
        if d.name == "handled_events" {
            continue;
        }
        assert_eq!(
            ao.metrics[i].to_bits(),
            bo.metrics[i].to_bits(),
            "{at}: {}",
            d.name
        );
    }
    assert_eq!(a.seconds.len(), b.seconds.len(), "{at}");
    for (k, (x, y)) in a.seconds.iter().zip(&b.seconds).enumerate() {
        assert_eq!(format!("{x:?}"), format!("{y:?}"), "{at} second {k}");
    }
}

/// A fleet with no waiter (the default at 100 reads/s per vtgate) and one whose survivor
/// overloads (a 20-connection pool at 0.7 of a replica's capacity).
fn quiet_and_overloaded() -> (FleetParams, FleetParams) {
    let mut quiet = FleetParams::default();
    quiet.reads.rate = ReadRate::PerVtgate { rps: 100.0 };
    let mut overloaded = FleetParams::default();
    overloaded.pool.capacity = 20;
    overloaded.reads.rate = ReadRate::Load { per_replica: 0.7 };
    (quiet, overloaded)
}

/// A query end that finds the waitlist empty is applied when the pool is next touched
/// rather than as an event (`PoolWorld::settle`): every figure of the run is the one the
/// event-per-end run gives (every metric but the event count, every second of the timeline,
/// every pool's counters), in a fleet with no waiter (the default at 100 reads/s per
/// vtgate), one whose survivor overloads (waiters come and go: ends switch between the two
/// paths) and one whose queries outlive the shutdown grace.
#[test]
fn deferred_query_ends_give_the_runs_of_one_event_per_end() {
    use vtsim::model::fleet::{Fleet, FleetEager};
    let (quiet, overloaded) = quiet_and_overloaded();
    let long = outliving_the_grace();
    for (what, p, seeds) in [
        ("quiet", &quiet, 1..=2u64),
        ("overloaded", &overloaded, 1..=1),
        ("long", &long, 1..=2),
    ] {
        for seed in seeds {
            let lazy = vtsim::model::run_detailed::<Fleet>(p, seed, RunOptions::default());
            let eager = vtsim::model::run_detailed::<FleetEager>(p, seed, RunOptions::default());
            let at = format!("{what} seed {seed}");
            same_figures(&at, (&lazy.output, &lazy), (&eager.output, &eager));
            assert!(lazy.output.events < eager.output.events, "{at}");
            assert_ne!(lazy.output.digest, eager.output.digest);
            assert_eq!(lazy.totals.in_flight_at_end, eager.totals.in_flight_at_end);
            assert_eq!(lazy.pools.len(), eager.pools.len());
            for (a, b) in lazy.pools.iter().zip(&eager.pools) {
                assert_eq!(
                    (a.requests, a.completed, a.timeouts),
                    (b.requests, b.completed, b.timeouts)
                );
            }
            eprintln!(
                "{what} seed {seed}: {} reads, {} failed, {} events deferred ({} -> {} events)",
                lazy.metric("replica_reads"),
                lazy.metric("failed_reads"),
                eager.output.events - lazy.output.events,
                eager.output.events,
                lazy.output.events
            );
        }
    }
}

/// The rollout inside the fleet skips the health-check dials that must fail before a new
/// process serves, as the rollout model does: the same runs as stepping each one (the hidden
/// `FleetSteppedDials`), every figure but the event count equal, fewer events.
#[test]
fn skipped_failing_dials_give_the_fleet_runs_of_stepping_them() {
    use vtsim::model::fleet::{Fleet, FleetSteppedDials};
    let (quiet, overloaded) = quiet_and_overloaded();
    let mut fewer = 0;
    for (what, p, seeds) in [
        ("quiet", &quiet, 1..=3u64),
        ("overloaded", &overloaded, 1..=2),
    ] {
        for seed in seeds {
            let a = vtsim::model::run_detailed::<Fleet>(p, seed, RunOptions::default());
            let b = vtsim::model::run_detailed::<FleetSteppedDials>(p, seed, RunOptions::default());
            same_figures(
                &format!("{what} seed {seed}"),
                (&a.output, &a),
                (&b.output, &b),
            );
            assert!(a.output.events <= b.output.events, "{what} seed {seed}");
            if a.output.events < b.output.events {
                fewer += 1;
                assert_ne!(a.output.digest, b.output.digest);
            }
        }
    }
    assert!(fewer > 0, "no run skipped a dial");
}

/// Long queries outlive the 3 s shutdown grace of a drained tablet: they fail as "pool
/// closed" (killed at the grace's end, or still in the pool when the pod is gone), and the
/// reads are still conserved.
#[test]
fn queries_running_past_the_shutdown_grace_fail_as_pool_closed() {
    let mut p = outliving_the_grace();
    let (mut closed, mut runs) = (0.0, 0);
    for seed in 1..=3u64 {
        let r = run_detailed(&p, seed, RunOptions::default());
        let t = r.totals.all;
        assert_eq!(
            t.offered,
            t.good + t.failed() + r.totals.in_flight_at_end,
            "seed {seed}"
        );
        assert_eq!(t.pool_closed as f64, r.metric("pool_closed_errors"));
        closed += r.metric("pool_closed_errors");
        runs += r.metric("any_pool_closed") as u32;
    }
    // 8 reads in flight per drained tablet on average, each running 2 s (exponential): about
    // a quarter outlive the 3 s grace at every drain.
    assert!(runs == 3 && closed >= 6.0, "{runs} runs, {closed} closed");
    // With the grace longer than any drain (pod gone after 3-10 s), fewer fail.
    p.vttablet.shutdown_grace_period = SimDuration::from_secs(60);
    let mut closed_long = 0.0;
    for seed in 1..=3u64 {
        closed_long += run_detailed(&p, seed, RunOptions::default()).metric("pool_closed_errors");
    }
    eprintln!("pool closed: {closed} with the 3 s grace, {closed_long} with 60 s (3 rollouts)");
    assert!(closed_long < closed, "{closed_long} vs {closed}");
}

/// Bad values exit 2 naming the field; an estimate over the event bound is refused.
#[test]
fn bad_fleet_values_exit_2_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "reads: (rate: (kind: \"PerVtgate\", rps: -1.0))",
            "reads.rate.rps",
        ),
        (
            "reads: (rate: (kind: \"Load\", per_replica: 1e9))",
            "reads.rate.per_replica",
        ),
        ("reads: (deadline: [])", "reads.deadline"),
        ("gateway: (retry_count: 1000)", "gateway.retry_count"),
        ("pool: (capacity: 0)", "pool.capacity"),
        ("vtgates: 0", "vtgates"),
        ("horizon: \"100d\"", "horizon"),
        (
            "reads: (rate: (kind: \"PerVtgate\", rps: 1e6)), horizon: \"100h\"",
            "reads.rate",
        ),
    ];
    for (i, (body, field)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("bad{i}.ron"));
        std::fs::write(&f, format!("Model(name: \"bad\", world: Fleet({body}))")).unwrap();
        let o = common::vtsim(dir.path(), &["validate", f.to_str().unwrap()], &[]);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{body}: {err}");
        assert!(err.contains(field), "{body}: {err}");
    }
}

/// The replay charts mark each SIGTERM (and the rollout's end) as a reference line of its own,
/// at the drain's time, in a colour no curve and no other marker has; the per-second curves
/// are the data only (no marker disguised as a two-point curve).
#[test]
fn the_replay_charts_mark_each_drain_in_a_colour_of_its_own() {
    use vtsim::chart::MarkLine;
    use vtsim::model::Artifact;
    let p = FleetParams::default();
    let run = run_detailed(
        &p,
        1,
        RunOptions {
            report: true,
            ..RunOptions::default()
        },
    );
    let drains: Vec<f64> = run
        .restarts
        .iter()
        .map(|r| r.drain_at.as_secs_f64())
        .collect();
    assert!(drains.len() >= 2, "{} drains", drains.len());
    let mut charts = 0;
    for a in &run.output.artifacts {
        let Artifact::Chart { name, data } = a else {
            continue;
        };
        charts += 1;
        let styled: Vec<(f64, (u8, u8, u8), bool)> = data
            .marks
            .iter()
            .filter_map(|m| match m {
                MarkLine::VStyled { x, style, .. } => Some((*x, style.rgb, style.dashed)),
                _ => None,
            })
            .collect();
        assert!(styled.len() >= drains.len(), "{name}: {styled:?}");
        for (k, d) in drains.iter().enumerate() {
            assert_eq!(styled[k].0, *d, "{name}: drain {k}");
            assert!(!styled[k].2, "{name}: drain {k} dashed");
        }
        let mut colours: Vec<(u8, u8, u8)> = styled.iter().map(|s| s.1).collect();
        colours.extend((0..data.curves.len()).map(vtsim::chart::palette));
        let n = colours.len();
        colours.sort();
        colours.dedup();
        assert_eq!(colours.len(), n, "{name}: a colour is used twice");
        for c in &data.curves {
            assert!(
                c.points.len() > 60,
                "{name}: curve `{}` has {} points",
                c.label,
                c.points.len()
            );
        }
    }
    assert_eq!(charts, 2);
}

/// Pool 20, 2 s queries with a 30 s deadline at 0.4 of capacity: queries that outlive the
/// 3 s shutdown grace.
fn outliving_the_grace() -> FleetParams {
    let mut p = FleetParams::default();
    p.pool.capacity = 20;
    p.reads.service = DurationDist::ShiftedExponential {
        min: SimDuration::ZERO,
        mean: SimDuration::from_secs(2),
    };
    p.reads.deadline = vec![vtsim::model::connpool::Weighted {
        weight: 1.0,
        value: DurationDist::fixed(SimDuration::from_secs(30)),
    }];
    p.reads.rate = ReadRate::Load { per_replica: 0.4 };
    p
}
