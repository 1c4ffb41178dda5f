//! The connpool model (`docs/connpool.md`): invariant A counted over every selection, live
//! selection identical in the four variants, the `Fixed` pool against Erlang-A, the seed's
//! goodput ordering under overload, determinism.

use proptest::prelude::*;
use vtsim::experiment::load_model_file;
use vtsim::model::connpool::{
    erlang_a, run_detailed, Arrivals, ConnPoolParams, Stage, Variant, Waiter, Waitlist,
};
use vtsim::model::{RunOptions, WorldSpec};
use vtsim::sim::rng::replicate_seed;
use vtsim::sim::{SimDuration, SimTime};
use vtsim::stats::summarize;

fn default_params() -> ConnPoolParams {
    let m = load_model_file(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/connpool-default.ron"
    )))
    .expect("model file loads");
    match m.world {
        WorldSpec::ConnPool(p) => p,
        _ => panic!("not a connpool model"),
    }
}

fn at_load(mut p: ConnPoolParams, variant: Variant, load: f64, secs: u64) -> ConnPoolParams {
    p.variant = variant;
    p.workload.arrivals = Arrivals::OpenLoop {
        stages: vec![Stage {
            load,
            duration: SimDuration::from_secs(secs),
        }],
        requests: None,
    };
    p
}

/// Invariant A, counted over every selection of overload runs (one setting and a three-way
/// setting mix): zero in OnlyA and Fixed; Unfixed and OnlyB violate it in the same runs.
#[test]
fn invariant_a_holds_only_with_the_expiry_check() {
    for settings in [vec![1.0], vec![0.5, 0.3, 0.2]] {
        for load in [2.0, 4.0, 6.0] {
            let mut base = default_params();
            base.workload.settings = settings.clone();
            for v in Variant::ALL {
                let p = at_load(base.clone(), v, load, 4);
                let r = run_detailed(&p, 11, RunOptions::default());
                let m = &r.metrics;
                assert!(m.selections > 1000, "{v:?} load {load}: too few selections");
                if v.evicts_expired() {
                    assert_eq!(
                        m.invariant_a_violations, 0,
                        "{v:?} load {load} {settings:?}"
                    );
                    assert!(m.evictions > 0, "{v:?}: the eviction path never ran");
                } else {
                    assert!(
                        m.invariant_a_violations > 0,
                        "{v:?} load {load} {settings:?}: expected violations"
                    );
                    assert_eq!(m.evictions, 0);
                }
            }
        }
    }
}

fn live_waitlist(entries: &[(u8, u32)]) -> (Vec<Waiter>, Waitlist) {
    let mut ws: Vec<Waiter> = entries
        .iter()
        .map(|(s, a)| Waiter {
            setting: *s,
            age: *a,
            deadline: SimTime::MAX,
            ..Waiter::EMPTY
        })
        .collect();
    let mut wl = Waitlist::new(true);
    for w in 0..entries.len() as u32 {
        wl.push_back(&mut ws, w);
    }
    (ws, wl)
}

proptest! {
    /// With no waiter expired, all four variants select the same waiter and leave the same
    /// ages (the seed's TestLiveWaiterSelectionMatchesPristine, over random lists).
    #[test]
    fn live_selection_is_the_same_in_every_variant(
        entries in prop::collection::vec((0u8..3, 0u32..=10), 1..=6),
        conn_setting in 0u8..3,
    ) {
        let mut outcomes = vec![];
        for v in Variant::ALL {
            let (mut ws, mut wl) = live_waitlist(&entries);
            let mut evicted = vec![];
            let sel = wl.select(&mut ws, v, 8, conn_setting, SimTime(1_000), &mut evicted);
            prop_assert!(evicted.is_empty());
            prop_assert!(!sel.target_expired);
            let ages: Vec<u32> = ws.iter().map(|w| w.age).collect();
            let left: Vec<u32> = wl.iter().collect();
            outcomes.push((sel.target, sel.visited, ages, left));
        }
        for o in &outcomes[1..] {
            prop_assert_eq!(o, &outcomes[0]);
        }
        // The pristine rule itself: first waiter with age > 8 or the connection's setting,
        // ageing those skipped; else the aged front.
        let first = entries.iter().position(|(s, a)| *a > 8 || *s == conn_setting);
        prop_assert_eq!(outcomes[0].0, Some(first.unwrap_or(0) as u32));
    }
}

/// `Fixed` with zero mutex cost, zero wake-up latency, one setting, exponential service and
/// patience is an M/M/c+M queue: P(abandon) and mean wait within the 95 % CI of 10 replicates.
#[test]
fn fixed_pool_is_erlang_a() {
    // (lambda, mu, c, theta): the peer's overload point, an underloaded pool, heavy overload.
    for (lam, mu, c, theta) in [
        (25.0, 1.0, 20, 2.0),
        (15.0, 1.0, 20, 1.0),
        (12.0, 1.0, 5, 0.5),
    ] {
        let p = ConnPoolParams::erlang_a(lam, mu, c, theta, 40_000);
        let th = erlang_a(lam, mu, c, theta);
        let (mut ab, mut wa, mut ws) = (vec![], vec![], vec![]);
        for k in 0..10 {
            let r = run_detailed(&p, replicate_seed(2026, k), RunOptions::default());
            let m = &r.metrics;
            assert_eq!(m.wasted_handoffs + m.post_deadline_handoffs, 0);
            assert_eq!(m.requests, 40_000);
            assert_eq!(m.timeouts + m.completed, m.requests);
            ab.push(m.timeouts as f64 / m.requests as f64);
            wa.push(m.queue_time_all_ns as f64 * 1e-9 / m.queue_time_all_n as f64);
            ws.push(m.acquisition.mean() * 1e-9);
        }
        for (name, xs, want) in [
            ("P(abandon)", &ab, th.p_abandon),
            ("mean wait (all)", &wa, th.mean_wait_all),
        ] {
            let s = summarize(xs);
            assert!(
                s.ci_lo <= want && want <= s.ci_hi,
                "lam {lam} c {c} theta {theta}: {name} {:.5} [{:.5}, {:.5}] vs Erlang-A {want:.5}",
                s.mean,
                s.ci_lo,
                s.ci_hi
            );
        }
        // The served customers' wait is also E[W | served] (histogram bins add <3 % error).
        let s = summarize(&ws);
        assert!(
            (s.mean - th.mean_wait_served).abs() < 0.04 * th.mean_wait_served + (s.ci_hi - s.ci_lo)
        );
    }
}

/// A steady 4x overload with the model's default costs: Unfixed collapses, OnlyB and Fixed
/// hold goodput. OnlyA collapses at the same load as Unfixed (both saturate wl.mu with
/// O(position) self-removal scans); in a steady overload it keeps about as much goodput as
/// Unfixed, so no order between the two is asserted here (see
/// `only_a_is_worse_than_unfixed_in_the_seeds_three_stage_harness`).
#[test]
fn overload_ordering() {
    let mut g = std::collections::BTreeMap::new();
    for load in [1.0, 4.0] {
        for v in Variant::ALL {
            let p = at_load(default_params(), v, load, 8);
            let mut xs = vec![];
            for k in 0..3 {
                xs.push(
                    run_detailed(&p, replicate_seed(7, k), RunOptions::default())
                        .output
                        .metrics[0],
                );
            }
            g.insert((load as u32, v.name()), summarize(&xs).mean);
        }
    }
    let cap = 2000.0; // capacity / mean service = 20 / 10 ms
    for v in Variant::ALL {
        assert!(
            g[&(1, v.name())] > 0.9 * cap,
            "{v:?} at 1x: {}",
            g[&(1, v.name())]
        );
    }
    assert!(
        g[&(4, "Unfixed")] < 0.3 * cap,
        "Unfixed at 4x: {}",
        g[&(4, "Unfixed")]
    );
    assert!(
        g[&(4, "OnlyA")] < 0.3 * cap,
        "OnlyA at 4x: {}",
        g[&(4, "OnlyA")]
    );
    assert!(
        g[&(4, "OnlyB")] > 0.95 * cap,
        "OnlyB at 4x: {}",
        g[&(4, "OnlyB")]
    );
    assert!(
        g[&(4, "Fixed")] > 0.95 * cap,
        "Fixed at 4x: {}",
        g[&(4, "Fixed")]
    );
}

/// A run is a pure function of its seed; the variants share the arrival stream.
#[test]
fn runs_are_deterministic_and_share_arrivals() {
    let p = at_load(default_params(), Variant::Fixed, 3.0, 2);
    let a = run_detailed(&p, 5, RunOptions::default());
    let b = run_detailed(&p, 5, RunOptions::default());
    assert_eq!(a.output.digest, b.output.digest);
    assert_eq!(a.output.metrics, b.output.metrics);
    let u = run_detailed(
        &at_load(default_params(), Variant::Unfixed, 3.0, 2),
        5,
        RunOptions::default(),
    );
    assert_eq!(u.metrics.requests, a.metrics.requests);
    assert_ne!(u.output.digest, a.output.digest);
}

/// The seed's A/B harness (1.0x -> 4.0x -> 1.0x of 8 s each, experiments/pool-ab-stages.ron)
/// at the default 50 us wake-up: OnlyA's wl.mu backlog (each evicted waiter scans the whole
/// list) outlasts the overload, so its goodput in the recovery stage is lower than Unfixed's,
/// as the seed's harness saw. Paired over common seeds; the 95 % t interval of the difference
/// must lie above zero.
#[test]
fn only_a_is_worse_than_unfixed_in_the_seeds_three_stage_harness() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/pool-ab-stages.ron");
    let plan = vtsim::experiment::load_plan(&path).unwrap_or_else(|e| panic!("{e}"));
    let var = plan.column("variant").unwrap();
    let wake = plan.column("wakeup_us").unwrap();
    let world = |v: &str| {
        plan.points
            .iter()
            .find(|p| p.labels[var] == v && p.labels[wake] == "50")
            .unwrap_or_else(|| panic!("no {v} point at 50 us"))
            .world
            .clone()
    };
    let (unfixed, only_a) = (world("Unfixed"), world("OnlyA"));
    let defs = unfixed.metric_defs();
    let s3 = defs
        .iter()
        .position(|d| d.name == "goodput_s3_rps")
        .unwrap();
    let diffs: Vec<f64> = (0..4)
        .map(|r| {
            let seed = replicate_seed(plan.experiment.seed, r);
            unfixed.run(seed, RunOptions::default()).metrics[s3]
                - only_a.run(seed, RunOptions::default()).metrics[s3]
        })
        .collect();
    let s = summarize(&diffs);
    assert!(
        s.ci_lo > 0.0,
        "recovery-stage goodput, Unfixed - OnlyA: mean {} CI [{}, {}]",
        s.mean,
        s.ci_lo,
        s.ci_hi
    );
}
