//! The advise engine: its stated error by simulation on known Bernoulli and normal cases
//! (against naive peeking), answers on known cases, common random numbers, the rollout
//! preset against the uniform-phase closed form, the `--json` schema and the bounds (exit 2).

mod common;

use common::{root, stderr, vtsim_within};
use vtsim::advise::rollout::{today, Today};
use vtsim::advise::{
    looks, search, Ask, Decision, Direction, KnobKind, KnobValue, Sample, Search, SearchBudget,
    Want,
};
use vtsim::model::rollout::RolloutParams;
use vtsim::model::{MetricKind, WorldSpec};
use vtsim::sim::rng::{replicate_seed, standard_normal, stream, uniform01};
use vtsim::sim::SimDuration;
use vtsim::stats::{wilson, z_critical};

fn spec(c: usize, kind: MetricKind, target: f64, batch: u64, max_runs: u64, seed: u64) -> Search {
    Search {
        knob: "k".into(),
        knob_kind: KnobKind::Integer,
        candidates: (0..c)
            .map(|i| KnobValue {
                label: i.to_string(),
                x: i as f64,
                json: (i as i64).into(),
            })
            .collect(),
        metric: "m".into(),
        metric_kind: kind,
        target,
        want: Want::Below,
        direction: Direction::Min,
        batch,
        max_runs,
        budget: 1_000_000_000,
        seed,
        costs: vec![],
        alpha: 0.05,
    }
}

fn bernoulli(p: &[f64], seed: u64) -> impl Fn(usize, u64) -> Sample + Sync + '_ {
    move |c, r| {
        let mut g = stream(replicate_seed(seed, r), "bernoulli", c as u32);
        Sample {
            metric: if uniform01(&mut g) < p[c] { 1.0 } else { 0.0 },
            costs: vec![],
            digest: String::new(),
        }
    }
}

fn normal(mu: &[f64], seed: u64) -> impl Fn(usize, u64) -> Sample + Sync + '_ {
    move |c, r| {
        let mut g = stream(replicate_seed(seed, r), "normal", c as u32);
        Sample {
            metric: mu[c] + standard_normal(&mut g),
            costs: vec![],
            digest: String::new(),
        }
    }
}

/// Naive peeking at the same looks with a plain 95 % interval each time (what the engine's
/// split pays for): does any candidate of `p` clear?
fn naive_any_clear(p: &[f64], target: f64, batch: u64, max_runs: u64, seed: u64) -> bool {
    let f = bernoulli(p, seed);
    (0..p.len()).any(|c| {
        let mut events = 0;
        let mut n = 0;
        for look in looks(batch, max_runs) {
            while n < look {
                events += f(c, n).metric as u64;
                n += 1;
            }
            let (lo, hi) = wilson(events, n);
            if hi < target {
                return true;
            }
            if lo > target {
                return false;
            }
        }
        false
    })
}

#[test]
fn the_stated_error_holds_despite_peeking_where_naive_peeking_breaks_it() {
    // 10 candidates all exactly at the target (the worst case for a wrong "clears"): the
    // engine's answer is wrong whenever any of them clears. Stated: at most 5 %.
    let (target, batch, max_runs) = (0.1, 20, 1280);
    let p = vec![target; 10];
    let trials = 300;
    let mut wrong = 0;
    let mut naive_wrong = 0;
    for t in 0..trials {
        let s = spec(10, MetricKind::Indicator, target, batch, max_runs, 1000 + t);
        let o = search(&s, bernoulli(&p, 1000 + t), &mut |_, _| {});
        if o.answer().is_some() {
            wrong += 1;
        }
        if naive_any_clear(&p, target, batch, max_runs, 1000 + t) {
            naive_wrong += 1;
        }
    }
    let (rate, naive) = (
        wrong as f64 / trials as f64,
        naive_wrong as f64 / trials as f64,
    );
    eprintln!("Bernoulli at the target: engine {wrong}/{trials}, naive {naive_wrong}/{trials}");
    // Upper 95 % Wilson bound of the engine's error below 5 %; naive peeking well above it.
    assert!(wilson(wrong, trials).1 < 0.05, "engine error {rate}");
    assert!(wilson(naive_wrong, trials).0 > 0.05, "naive error {naive}");

    // The normal case (Student t): 10 candidates with mean exactly at the target 0.
    let mu = vec![0.0; 10];
    let mut wrong = 0;
    for t in 0..trials {
        let s = spec(10, MetricKind::Value, 0.0, 10, 640, 5000 + t);
        if search(&s, normal(&mu, 5000 + t), &mut |_, _| {})
            .answer()
            .is_some()
        {
            wrong += 1;
        }
    }
    eprintln!("normal at the target: engine {wrong}/{trials}");
    assert!(wilson(wrong, trials).1 < 0.05, "normal: {wrong}/{trials}");
}

#[test]
fn known_cases_get_their_answer_and_decide_early() {
    // P = 0.5, 0.2, 0.05, 0.01, 0: the smallest index below 0.02 is 3.
    let p = [0.5, 0.2, 0.05, 0.01, 0.0];
    let s = spec(5, MetricKind::Indicator, 0.02, 100, 100_000, 7);
    let o = search(&s, bernoulli(&p, 7), &mut |_, _| {});
    let a = o.answer().expect("an answer");
    assert_eq!(a.index, 3);
    assert_eq!(o.tested.len(), 4);
    assert!(o.tested[..3].iter().all(|t| t.decision == Decision::Misses));
    // The clear far-off candidates are decided at the first look.
    assert_eq!(o.tested[0].runs, 100);
    assert_eq!(
        o.runs,
        o.tested.iter().map(|t| t.runs).sum::<u64>(),
        "runs add up"
    );
    // Direction max scans from the top: index 4 (P = 0) is the first to clear.
    let mut s = s;
    s.direction = Direction::Max;
    let o = search(&s, bernoulli(&p, 7), &mut |_, _| {});
    assert_eq!(o.answer().unwrap().index, 4);
    assert_eq!(o.tested.len(), 1);
    // Above: the largest mean above 1 among means 0, 0.5, 1.5, 3 scanning from the bottom
    // (direction min) is index 2.
    let mu = [0.0, 0.5, 1.5, 3.0];
    let mut s = spec(4, MetricKind::Value, 1.0, 20, 10_000, 3);
    s.want = Want::Above;
    let o = search(&s, normal(&mu, 3), &mut |_, _| {});
    assert_eq!(o.answer().unwrap().index, 2);
    // A budget too small to show anything: no answer, said so.
    s.budget = 200;
    let o = search(&s, normal(&mu, 3), &mut |_, _| {});
    assert!(o.answer().is_none());
    assert_eq!(o.ending, vtsim::advise::Ending::BudgetSpent);
    assert!(o.runs <= 200);
}

fn closed_form_world() -> WorldSpec {
    let s = SimDuration::from_secs;
    let mut p = RolloutParams::default().zero_delays(s(20));
    p.operator.restart_primary = false;
    p.workload.replica_read_rps = 1000.0;
    p.workload.primary_write_rps = 0.0;
    WorldSpec::Rollout(p)
}

#[test]
fn todays_knob_preset_finds_the_closed_form_answer() {
    // Uniform phases, no delays: P(exposed per drain) = (T - A)/T, zero for T <= A. With 10
    // vtgates at T = A + 1 s, P(any vtgate exposed) = 1 - (A/(A+1))^10 (0.28 at A = 30 s),
    // so the largest safe T on a 1 s grid is A itself.
    for gate in [30, 20] {
        let q = Today {
            gate: SimDuration::from_secs(gate),
            vtgates: 10,
            target: 1e-3,
            range: Some(format!("{}s..{}s", gate - 5, gate + 5)),
            step: None,
            search: SearchBudget {
                seed: 1,
                ..Default::default()
            },
            alpha: None,
        };
        let (s, m) = today(&closed_form_world(), &q).unwrap();
        let o = search(&s, |c, r| m.sample(c, r), &mut |_, _| {});
        let a = o.answer().expect("an answer");
        assert_eq!(a.value.x, gate as f64, "gate {gate}");
        assert_eq!(a.events, 0);
        let above = o.tested.iter().find(|t| t.value.x == gate as f64 + 1.0);
        assert_eq!(above.map(|t| t.decision), Some(Decision::Misses));
        // The measured cost is about vtgates / T polls per second (counted over the rollout).
        let want = 10.0 / gate as f64;
        assert!(
            (a.costs[0] / want - 1.0).abs() < 0.02,
            "{} vs {want}",
            a.costs[0]
        );
    }
}

#[test]
fn candidates_share_their_seeds() {
    // Common random numbers: the burst merge gap changes no failed read, so with the same
    // seeds every candidate sees exactly the same any_error outcomes.
    let w = vtsim::experiment::files::builtin_model("rollout-default").world;
    let ask = Ask {
        knob: "workload.burst_merge_gap".into(),
        metric: "any_error".into(),
        target: 0.5,
        want: Want::Below,
        direction: Direction::Min,
        range: Some("1s..3s".into()),
        step: Some("1s".into()),
        search: SearchBudget {
            batch: Some(50),
            max_runs: Some(50),
            budget: None,
            seed: 9,
        },
        costs: vec!["bursts".into()],
        exceeds: None,
        alpha: None,
    };
    let (s, m) = vtsim::advise::prepare(&w, &ask).unwrap();
    let mut s = s;
    s.target = 0.0001; // nothing clears: every candidate is tested
    s.metric_kind = MetricKind::Value;
    let o = search(&s, |c, r| m.sample(c, r), &mut |_, _| {});
    assert_eq!(o.tested.len(), 3);
    let e = o.tested[0].estimate;
    assert!(e > 0.5 && e < 1.0, "{e}");
    assert!(o.tested.iter().all(|t| t.estimate == e));
    assert!(o.tested.iter().all(|t| t.digest0.len() == 64));
    // Every run is in its candidate's digest_runs: the hash of the runs' digests in order.
    let want = {
        let mut h = blake3::Hasher::new();
        for r in 0..o.tested[0].runs {
            h.update(m.sample(o.tested[0].index, r).digest.as_bytes());
        }
        h.finalize().to_hex().to_string()
    };
    assert_eq!(o.tested[0].digest_runs, want);
    assert_ne!(o.tested[0].digest_runs, o.tested[0].digest0);
    // Candidates whose runs differ in any metric differ in digest_runs.
    for t in &o.tested[1..] {
        assert_eq!(
            t.costs[0] == o.tested[0].costs[0],
            t.digest_runs == o.tested[0].digest_runs
        );
    }
    // A merge gap of 3 s merges at least as many bursts as 1 s.
    assert!(o.tested[2].costs[0] <= o.tested[0].costs[0]);
}

#[test]
fn the_json_document_has_its_schema() {
    let out = vtsim_within(
        &root(),
        &[
            "advise",
            "--gate",
            "30s",
            "--vtgates",
            "10",
            "--range",
            "36s..39s",
            "--target",
            "0.2",
            "--json",
        ],
        &[],
        120,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(v["schema"], "vtsim.advise");
    assert_eq!(v["version"], 1);
    assert_eq!(v["knob"]["path"], "vtgate.tablet_refresh_interval");
    assert_eq!(v["knob"]["unit"], "s");
    assert_eq!(v["metric"]["kind"], "indicator");
    assert_eq!(v["direction"], "max");
    assert_eq!(v["test"]["interval"], "wilson");
    assert!(v["seed"].as_str().unwrap().starts_with("0x"));
    let a = &v["answer"];
    let runs = a["runs"].as_u64().unwrap();
    let p = a["estimate"].as_f64().unwrap();
    let (lo, hi) = (
        a["ci95"][0].as_f64().unwrap(),
        a["ci95"][1].as_f64().unwrap(),
    );
    assert!(lo <= p && p <= hi && hi < 0.2, "{a}");
    assert_eq!(a["events"].as_u64().unwrap() as f64 / runs as f64, p);
    let x = a["x"].as_f64().unwrap();
    assert!((36.0..=39.0).contains(&x));
    let per = v["preset"]["polls_per_s_per_vtgate"].as_f64().unwrap();
    assert!((per - 1.0 / x).abs() < 1e-12);
    assert_eq!(
        v["preset"]["polls_per_s_fleet"].as_f64().unwrap(),
        per * 10.0
    );
    // Progress went to stderr, one line per tested candidate.
    let tested = v["tested"].as_array().unwrap().len();
    assert_eq!(stderr(&out).matches(" runs so far").count(), tested);
    let _ = z_critical();
}

#[test]
fn bounds_are_refused_with_exit_2_naming_the_flag() {
    let knob = |extra: &[&'static str]| {
        let mut v = vec![
            "advise",
            "--knob",
            "vtgate.tablet_refresh_interval",
            "--metric",
            "any_error",
            "--target",
            "0.01",
        ];
        v.extend_from_slice(extra);
        v
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (knob(&["--budget", "0"]), "--budget 0"),
        (knob(&["--budget", "2000000000"]), "at most 1e9"),
        (knob(&["--max-runs", "20000000"]), "--max-runs 20000000"),
        (knob(&["--batch", "0"]), "--batch must be at least 1"),
        (
            knob(&["--range", "1s..2000s", "--step", "1s"]),
            "is 2000 candidates; at most 1000: use a --step of at least 2002ms",
        ),
        (knob(&["--range", "9s..1s"]), "A is above B"),
        (knob(&["--max-runs", "100"]), "raise --max-runs to at least"),
        (
            vec![
                "advise",
                "--knob",
                "vtgate.nope",
                "--metric",
                "any_error",
                "--target",
                "0.1",
            ],
            "no parameter `vtgate.nope`",
        ),
        (
            vec![
                "advise", "--knob", "vtgates", "--metric", "nope", "--target", "0.1",
            ],
            "--metric nope",
        ),
        (vec!["advise", "--gate", "30s"], "--gate needs --vtgates"),
        (
            vec!["advise", "--vtgates", "10"],
            "advise needs one of --knob",
        ),
        (
            vec![
                "advise",
                "--gate",
                "30s",
                "--vtgates",
                "10",
                "--target",
                "1e-12",
            ],
            "--target 1e-12",
        ),
        (
            vec![
                "advise",
                "--gate",
                "30s",
                "--refresh-interval",
                "1m",
                "--vtgates",
                "10",
            ],
            "only one of",
        ),
    ];
    assert_refused(&cases);
}

fn playground_with(sets: &[(&str, serde_json::Value)]) -> WorldSpec {
    let w = vtsim::experiment::files::builtin_model("playground").world;
    let sets: Vec<(String, serde_json::Value)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    vtsim::experiment::plan::with_overrides(&w, &sets).unwrap()
}

fn mean_metric(w: &WorldSpec, name: &str, runs: u64, seed: u64) -> Vec<f64> {
    let i = w.metric_defs().iter().position(|d| d.name == name).unwrap();
    (0..runs)
        .map(|r| {
            w.run(replicate_seed(seed, r), vtsim::model::RunOptions::default())
                .metrics[i]
        })
        .collect()
}

#[test]
fn site_poller_false_alarms_match_a_run_of_k_failures() {
    // p = 1 %, pollInterval 1 s, 3 sites (iad writable primary candidate, recoveryThreshold 2;
    // pdx and reader read-only): per hour 3600 · p^k · (2(1 − p) + (1 − p)²).
    use serde_json::json;
    use vtsim::advise::site_poller::false_per_day_closed;
    for (k, runs, tol) in [(1u32, 20u64, 0.08), (2, 300, 0.2)] {
        let w = playground_with(&[
            ("poller.poll_interval", json!("1s")),
            ("poller.failure_threshold", json!(k)),
            ("probes.flaky_p", json!(0.01)),
            ("faults", json!([])),
            ("horizon", json!("1h")),
        ]);
        let per_h = mean_metric(&w, "false_unreachable_per_h", runs, 11);
        let mean = per_h.iter().sum::<f64>() / runs as f64;
        let closed = false_per_day_closed(&w, 0.01, k, SimDuration::from_secs(1)) / 24.0;
        let want = 3600.0 * 0.01f64.powi(k as i32) * (2.0 * 0.99 + 0.99 * 0.99);
        assert!((closed / want - 1.0).abs() < 1e-9, "{closed} vs {want}");
        assert!(
            (mean / closed - 1.0).abs() < tol,
            "k {k}: simulated {mean}/h vs closed form {closed}/h"
        );
    }
}

#[test]
fn site_poller_second_detection_lies_within_the_backoff_bound() {
    // pollInterval 2 s, threshold 3: with pdx down 5 min the loop polls every
    // I = min(2 s · 2^4, 30 s) = 30 s, so iad's delay lies in (2I, 3I] = (60, 90] s plus
    // the polls' own few milliseconds.
    use serde_json::json;
    let w = playground_with(&[
        ("poller.poll_interval", json!("2s")),
        ("poller.failure_threshold", json!(3)),
        (
            "faults",
            json!([
                {"site": "pdx", "at": "60s", "kind": {"kind": "Refused"}},
                {"site": "iad", "at": "360s", "phase": {"kind": "Uniform", "window": "34s"},
                 "kind": {"kind": "Refused"}},
            ]),
        ),
        ("horizon", json!("520s")),
    ]);
    let d = mean_metric(&w, "detect_second_s", 300, 3);
    let (lo, hi) = d
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(lo > 60.0 && hi <= 90.2, "delays in [{lo}, {hi}]");
    // Uniform over the phase: the mean is near 75 s.
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    assert!((mean - 75.0).abs() < 3.0, "mean {mean}");
}

#[test]
fn site_poller_preset_finds_the_closed_form_pairs() {
    // p = 1 %, T = 1 s, N = 1/day, budget 75 s, I = 16 s. Closed forms: false alarms/h at
    // k = 2: 1.07 (P(any per hour) 0.66 > 1 − e^(−1/24) = 0.041: misses), k = 3: 0.011
    // (clears); detection at k = 4 is within (48, 64] s (clears), at k = 5 within (64, 80]
    // (P(> 75 s) ≈ 0.31: misses). So the pairs are k = 3, 4.
    use vtsim::advise::site_poller::{run, Question};
    let w = vtsim::experiment::files::builtin_model("playground").world;
    let q = Question {
        intervals: vec![SimDuration::from_secs(1)],
        max_threshold: 6,
        probe_error: 0.01,
        false_per_day: 1.0,
        detect_budget: SimDuration::from_secs(75),
        first_down: SimDuration::from_secs(300),
        search: SearchBudget {
            seed: 1,
            ..Default::default()
        },
    };
    let rows = run(&w, &q, &mut |_, _, _, _| {}).unwrap();
    let r = &rows[0];
    assert_eq!(r.k_quiet(), Some(3));
    assert_eq!(r.k_fast(), Some(4));
    assert_eq!(r.pairs(), vec![3, 4]);
    // Every threshold below the quiet answer was shown to miss, every one above the fast one.
    assert!(r.quiet.1.tested[..2]
        .iter()
        .all(|t| t.decision == Decision::Misses));
    assert!(r.fast.1.tested[..2]
        .iter()
        .all(|t| t.decision == Decision::Misses));
    // The fast answer's mean delay sits inside its closed-form bound (48, 64] s.
    let a = r.fast.1.answer().unwrap();
    assert!(a.costs[0] > 48.0 && a.costs[0] <= 64.2, "{}", a.costs[0]);
    // The two searches split 5 %: each at 2.5 %.
    assert!(
        (r.quiet.0.alpha - 0.025).abs() < 1e-12,
        "{}",
        r.quiet.0.alpha
    );
}

#[test]
fn rollout_frontier_preset_finds_the_closed_form_frontier() {
    // Uniform phases and no delays: the largest safe refresh under gate A is A itself.
    use vtsim::advise::frontier::{chart, preset_json, run, Frontier};
    let q = Frontier {
        gates: vec![SimDuration::from_secs(20), SimDuration::from_secs(30)],
        vtgates: 10,
        target: 1e-2,
        search: SearchBudget {
            seed: 2,
            ..Default::default()
        },
    };
    let res = run(&closed_form_world(), &q, &mut |_, _, _, _| {}).unwrap();
    let xs: Vec<f64> = res
        .iter()
        .map(|g| g.outcome.answer().unwrap().value.x)
        .collect();
    assert_eq!(xs, vec![20.0, 30.0]);
    let j = preset_json(&q, &res);
    assert_eq!(j["frontier"][1]["polls_per_s_fleet"], 10.0 / 30.0);
    assert!((j["alpha_per_gate"].as_f64().unwrap() - 0.025).abs() < 1e-12);
    let d = chart(&q, &res);
    assert!(d
        .marks
        .iter()
        .any(|m| matches!(m, vtsim::chart::MarkLine::Shade { .. })));
    let dir = tempfile::tempdir().unwrap();
    vtsim::chart::draw_files_footed(&d, dir.path(), "rollout-frontier", "footer").unwrap();
    assert!(
        std::fs::metadata(dir.path().join("rollout-frontier.png"))
            .unwrap()
            .len()
            > 1000
    );
}

#[test]
fn connpool_capacity_search_respects_the_erlang_floor() {
    // 500 requests/s of 10 ms queries need 5 connections busy: capacity 4 serves at most
    // 400/s (< 95 % of 500, it must miss); 6 is at utilisation 0.83 and clears.
    use vtsim::advise::connpool::{capacity_search, staged};
    let w = staged(
        &vtsim::experiment::files::builtin_model("connpool-default").world,
        "Fixed",
    )
    .unwrap();
    let b = SearchBudget {
        batch: Some(5),
        max_runs: Some(40),
        budget: None,
        seed: 4,
    };
    let (_, o) = capacity_search(&w, 500.0, b, 0.05, &mut |_, _, _| {}).unwrap();
    let a = o.answer().unwrap();
    assert_eq!(a.value.x, 6.0);
    assert!(o.tested[..2].iter().all(|t| t.decision == Decision::Misses));
    assert!(
        o.tested[1].estimate <= 400.0 * 1.05,
        "{}",
        o.tested[1].estimate
    );
}

#[test]
fn proxysql_preset_compares_the_writer_in_the_reader_hostgroup() {
    // Every replica dies at 10 s of 40: without the writer among the readers no read
    // succeeds again (outage = 30 s, the rest of the run); with it the reads move to the
    // writer and fewer fail.
    use vtsim::advise::proxysql::{run, Question};
    let w = vtsim::experiment::files::builtin_model("proxysql-reader-fallback").world;
    let q = Question {
        connect_budget: SimDuration::from_secs(10),
        max_reads_lost: 2.0,
        search: SearchBudget {
            batch: Some(3),
            max_runs: Some(3),
            budget: None,
            seed: 5,
        },
    };
    let rows = run(&w, &q, &mut |_, _, _, _| {}).unwrap();
    let (no, yes) = (&rows[0].result.1.tested[0], &rows[1].result.1.tested[0]);
    assert!(!rows[0].writer_in_readers && rows[1].writer_in_readers);
    assert!((no.costs[0] - 30.0).abs() < 1e-6, "outage {}", no.costs[0]);
    assert_eq!(no.decision, Decision::Misses);
    assert!(
        yes.estimate < no.estimate / 4.0,
        "{} vs {}",
        yes.estimate,
        no.estimate
    );
    assert!(yes.costs[0] < 5.0, "outage {}", yes.costs[0]);
}

/// The default fleet, shortened for a test: 5 s refresh under a 10 s gate (no gate errors),
/// restarts of about 3 s, the preset's replicas-only rollout.
fn small_fleet_question(read_rps: f64, replicas: (u32, u32)) -> vtsim::advise::fleet::Question {
    vtsim::advise::fleet::Question {
        read_rps,
        replicas,
        gate: SimDuration::from_secs(10),
        target: 0.4,
        variant: None,
        vtgates: None,
        keep: vec![],
        search: SearchBudget {
            batch: Some(10),
            max_runs: Some(20),
            budget: None,
            seed: 6,
        },
    }
}

fn small_fleet() -> WorldSpec {
    let w = vtsim::experiment::files::builtin_model("fleet-default").world;
    let sets = [
        ("vtgate.tablet_refresh_interval", serde_json::json!("5s")),
        (
            "tablets.restart",
            serde_json::json!({"kind": "ShiftedExponential", "min": "2s", "mean": "1s"}),
        ),
        ("tablets.readiness_probe_period", serde_json::json!("2s")),
    ];
    let sets: Vec<(String, serde_json::Value)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    vtsim::experiment::plan::with_overrides(&w, &sets).unwrap()
}

#[test]
fn fleet_capacity_clears_at_or_above_the_erlang_floor_and_one_below_misses() {
    // 400 reads/s of 10 ms: while one replica is drained a survivor is offered
    // 400/(R−1) × 0.01 erlangs (4 with R = 2, 2 with R = 3). Scanned from one below that
    // floor, the smallest capacity that clears must be at least the floor, and the one below
    // it must miss (a decided miss, not undecided).
    use vtsim::advise::fleet::{best, capacity_search, erlangs, floor_of, prepared, Row};
    let q = small_fleet_question(400.0, (2, 3));
    let w = prepared(&small_fleet(), &q).unwrap();
    let mut rows = vec![];
    for (r, want_floor) in [(2u32, 4u32), (3, 2)] {
        let a = erlangs(q.read_rps, r, 0.010);
        assert_eq!(floor_of(a), want_floor);
        let (s, o) = capacity_search(
            &w,
            q.read_rps,
            r,
            (want_floor - 1, want_floor + 4),
            q.target,
            q.search.clone(),
            0.025,
            &mut |_, _, _| {},
        )
        .unwrap();
        let ans = o.answer().unwrap_or_else(|| panic!("R = {r}: no answer"));
        assert!(
            ans.value.x >= want_floor as f64,
            "R = {r}: {} below the floor {want_floor}",
            ans.value.x
        );
        let below = &o.tested[o.tested.len() - 2];
        assert_eq!(below.value.x, ans.value.x - 1.0);
        assert_eq!(below.decision, Decision::Misses, "R = {r}: {below:?}");
        assert!(below.costs[1] > 0.0, "R = {r}: no pool timeout below");
        assert_eq!(ans.costs[1], 0.0, "R = {r}: pool timeouts at the answer");
        // Every candidate before it missed too (floor − 1 is overloaded during a drain).
        assert!(o.tested[..o.tested.len() - 1]
            .iter()
            .all(|t| t.decision == Decision::Misses));
        assert_eq!(s.metric, "any_pool_timeout");
        rows.push(Row {
            replicas: r,
            erlangs: a,
            floor: want_floor,
            result: (s, o),
        });
    }
    // The answer: the fewest connections in all, a tie to fewer replicas.
    let conns: Vec<(u32, u32)> = rows
        .iter()
        .map(|r| (r.connections().unwrap(), r.replicas))
        .collect();
    assert_eq!(best(&rows).unwrap().replicas, conns.iter().min().unwrap().1);
    // A tie (2 × 6 = 3 × 4) goes to fewer replicas; one more connection each flips it.
    fn set(rows: &mut [Row], i: usize, c: f64) {
        let o = &mut rows[i].result.1;
        let k = o.tested.len() - 1;
        o.tested[k].value.x = c;
    }
    set(&mut rows, 0, 6.0);
    set(&mut rows, 1, 4.0);
    assert_eq!(best(&rows).unwrap().replicas, 2);
    set(&mut rows, 0, 7.0);
    assert_eq!(best(&rows).unwrap().replicas, 3);
}

#[test]
fn advise_sample_is_the_run_with_its_digest() {
    let q = small_fleet_question(400.0, (2, 2));
    // A sample of replicate 1 is that run: its metric, costs and trace digest.
    let w = vtsim::advise::fleet::with_replicas(
        &vtsim::advise::fleet::prepared(&small_fleet(), &q).unwrap(),
        400.0,
        2,
    )
    .unwrap();
    let ask = Ask {
        knob: "pool.capacity".into(),
        metric: "any_pool_timeout".into(),
        exceeds: None,
        target: 0.4,
        want: Want::Below,
        direction: Direction::Min,
        range: Some("4..4".into()),
        step: Some("1".into()),
        search: q.search.clone(),
        costs: vec!["pool_timeouts".into(), "goodput".into()],
        alpha: None,
    };
    let (_, m) = vtsim::advise::prepare(&w, &ask).unwrap();
    let x = m.sample(0, 1);
    let o = m
        .world(0)
        .run(replicate_seed(6, 1), vtsim::model::RunOptions::default());
    let at = |n: &str| o.metrics[w.metric_defs().iter().position(|d| d.name == n).unwrap()];
    assert_eq!(x.metric, at("any_pool_timeout"));
    assert_eq!(x.costs, vec![at("pool_timeouts"), at("goodput")]);
    assert!(at("pool_timeouts") > 0.0);
    assert_eq!(x.digest, o.digest);
    assert_eq!(x.digest.len(), 64);
}

#[test]
fn fleet_preset_cli_json_chart_and_bad_flags() {
    let dir = std::env::temp_dir().join(format!("vtsim-fleet-advise-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let o = vtsim_within(
        &root(),
        &[
            "advise",
            "--preset",
            "fleet",
            "--replicas",
            "2",
            "--read-rps",
            "100",
            "--gate",
            "20s",
            "--target",
            "0.9",
            "--batch",
            "2",
            "--max-runs",
            "2",
            "--set",
            "vtgate.tablet_refresh_interval=10s",
            "--json",
            "--out",
            d,
        ],
        &[],
        120,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "vtsim.advise.preset");
    assert_eq!(v["preset"]["name"], "fleet");
    assert_eq!(v["preset"]["rows"][0]["erlang_floor"], 1);
    assert_eq!(v["preset"]["answer"]["replicas"], 2);
    assert_eq!(v["preset"]["shortened"]["tail"], "5s");
    assert_eq!(v["searches"][0]["knob"]["path"], "pool.capacity");
    assert!(dir.join("fleet-capacity.png").is_file());
    let _ = std::fs::remove_dir_all(&dir);
    let fleet = |extra: &[&'static str]| {
        let mut v = vec!["advise", "--preset", "fleet"];
        v.extend_from_slice(extra);
        v
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            fleet(&["--replicas", "1..3"]),
            "--replicas 1..3: at least 2",
        ),
        (
            fleet(&["--replicas", "3..2"]),
            "--replicas 3..2: A is above B",
        ),
        (fleet(&["--replicas", "x"]), "--replicas x"),
        (fleet(&["--read-rps", "0"]), "--read-rps 0: must be in"),
        (fleet(&["--read-rps=-5"]), "--read-rps -5: must be in"),
        (fleet(&["--gate", "1h"]), "--gate 3600s: at most"),
        (fleet(&["--target", "1.5"]), "--target 1.5"),
        (
            fleet(&["--variant", "nope"]),
            "--variant nope: not a variant",
        ),
        (fleet(&["--vtgates", "0"]), "vtgates"),
        (
            fleet(&["--model", "builtin:rollout-default"]),
            "--preset fleet needs a Fleet model",
        ),
    ];
    assert_refused(&cases);
}

/// Each command exits 2 and its message contains the text given with it.
fn assert_refused<A: AsRef<[S]> + std::fmt::Debug, S: AsRef<str>>(cases: &[(A, &str)]) {
    for (args, want) in cases {
        let args: Vec<&str> = args.as_ref().iter().map(|a| a.as_ref()).collect();
        let o = vtsim_within(&root(), &args, &[], 60);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(want),
            "{args:?}: `{want}` not in {}",
            stderr(&o)
        );
    }
}

/// A flag the chosen form does not read is refused, named, with the forms that read it,
/// before any run (it would otherwise be ignored without a word). The same flags in the
/// forms that read them are taken by the other tests of this file.
#[test]
fn flags_the_form_does_not_read_are_refused() {
    assert_refused(&[
        (
            vec!["advise", "--preset", "fleet", "--target-risk", "0.01"],
            "--target-risk is not read by --preset fleet (only by --gate, --refresh-interval, --preset rollout-frontier)",
        ),
        (
            vec!["advise", "--gate", "30s", "--vtgates", "10", "--load-rps", "5"],
            "--load-rps is not read by --gate (only by --preset connpool)",
        ),
        (
            vec!["advise", "--preset", "site-poller", "--vtgates", "3"],
            "--vtgates is not read by --preset site-poller",
        ),
        (
            vec!["advise", "--preset", "connpool", "--read-rps", "10"],
            "--read-rps is not read by --preset connpool (only by --preset fleet)",
        ),
        (
            vec!["advise", "--refresh-interval", "60s", "--vtgates", "10", "--target", "0.01"],
            "--target is not read by --refresh-interval",
        ),
        (
            vec!["advise", "--gate", "30s", "--vtgates", "10", "--direction", "max"],
            "--direction is not read by --gate (only by --knob)",
        ),
        (
            vec!["advise", "--knob", "pool.capacity", "--metric", "x", "--target", "0.1", "--rollouts", "5"],
            "--rollouts is not read by --knob (only by --refresh-interval)",
        ),
        (
            vec!["advise", "--preset", "proxysql", "--gates", "10s"],
            "--gates is not read by --preset proxysql (only by --preset rollout-frontier)",
        ),
    ]);
}
