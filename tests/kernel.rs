//! Kernel promises seen from outside: same seed, same digest; stream independence;
//! FIFO ties through the public API.

use rand::Rng;
use vtsim::model::hold::HoldParams;
use vtsim::model::{RunOptions, WorldSpec};
use vtsim::sim::rng::{replicate_seed, stream};
use vtsim::sim::{Scheduler, SimDuration, SimTime, Simulation, TraceRecord, Traced, World};

mod common;

fn hold(pending: u32) -> WorldSpec {
    WorldSpec::Hold(HoldParams {
        pending,
        events: 5_000,
        mean_increment: SimDuration::from_millis(1),
        late_after: SimDuration::from_secs(1),
    })
}

#[test]
fn same_seed_same_digest_twice_in_one_process() {
    let w = hold(64);
    let a = w.run(11, RunOptions::default());
    let b = w.run(11, RunOptions::default());
    let c = w.run(12, RunOptions::default());
    assert_eq!(a.digest, b.digest);
    assert_eq!(a.metrics, b.metrics);
    assert_ne!(a.digest, c.digest);
}

#[test]
fn the_hold_digest_is_pinned() {
    // A change here means every recorded digest changes: the trace encoding, the queue order,
    // ChaCha8 streams or the sampler changed. Bump it only on purpose, and say so.
    let out = hold(64).run(11, RunOptions::default());
    assert_eq!(
        out.digest,
        "002dce01c0228e95895e61ef5192f2a6a56884305d8152c300b8179e4ad41148"
    );
}

/// The seed of replicate `r` as `vtsim run` uses it: the `seed` column of `runs.csv`, by
/// (point, replicate).
fn runner_seeds(replicates: u64) -> Vec<(u64, u64, u64)> {
    let tmp = tempfile::tempdir().unwrap();
    let exp = common::hold_experiment(tmp.path(), "seeds", replicates);
    let out = tmp.path().join("out");
    common::run_into(tmp.path(), &exp, &out, &["--threads", "2"]);
    let text = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (p, r, s) = (col("point"), col("replicate"), col("seed"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[p].parse().unwrap(),
                f[r].parse().unwrap(),
                u64::from_str_radix(f[s].trim_start_matches("0x"), 16).unwrap(),
            )
        })
        .collect()
}

/// Replicate `r`'s seed depends on the experiment seed and `r` only: the runner gives every
/// sweep point the same seed for replicate `r` (common random numbers), whatever the number of
/// replicates, and the derivation is the recorded one (changing it changes every digest ever
/// printed).
#[test]
fn replicate_seeds_depend_on_the_replicate_only() {
    // The derivation, pinned (99 is the seed of `common::hold_experiment`).
    let pinned: Vec<u64> = (0..5).map(|r| replicate_seed(99, r)).collect();
    assert_eq!(pinned, PINNED_SEEDS_99);
    let mut distinct = pinned.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5);
    assert_ne!(replicate_seed(1, 0), replicate_seed(2, 0));
    // Through the runner: 6 points x 3 replicates, then x 5 replicates.
    for reps in [3u64, 5] {
        let rows = runner_seeds(reps);
        assert_eq!(rows.len() as u64, 6 * reps);
        for (point, rep, seed) in rows {
            assert_eq!(
                seed, PINNED_SEEDS_99[rep as usize],
                "point {point} replicate {rep} of {reps}: not the replicate's seed"
            );
        }
    }
}

/// `replicate_seed(99, 0..5)`, computed independently (two SplitMix64 rounds in Python).
const PINNED_SEEDS_99: [u64; 5] = [
    9372081642167032678,
    4593142164184020366,
    1698277867491141050,
    17056042955191898788,
    1897506591804702981,
];

/// Every component of every model draws from its own stream: the stream of `(tag, index)` is
/// a function of the seed, the tag and the index only, so it cannot depend on other
/// components; what can break is two components sharing one (a stream id that drops the tag
/// or the index, a missing `set_stream`, two tags whose hashes collide). The first draws of
/// each (tag, index) the models use must all differ, and differ between seeds.
/// `tests/rollout.rs` (`streams_are_independent`) checks the consequence on a model: adding a
/// vtgate or changing the workload leaves the other components' times unchanged.
#[test]
fn every_component_gets_its_own_stream() {
    // Every tag a model passes to `stream`, each a string literal somewhere in src/.
    let tags = [
        "vtgate",
        "vtgate-fleet",
        "workload",
        "tablet",
        "operator",
        "connpool.arrivals",
        "connpool.requests",
        "connpool.dial",
        "connpool.mysql",
        "connpool.scheduler",
        "connpool.clients",
        "hold",
        "site",
        "poller",
        "failover",
        "fault",
        "wallclock",
        "sysbench",
        "monitor",
    ];
    fn read_rs(dir: &std::path::Path, out: &mut String) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                read_rs(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push_str(&std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut src = String::new();
    read_rs(&common::root().join("src"), &mut src);
    for t in tags {
        assert!(
            src.contains(&format!("\"{t}\"")),
            "tag {t:?} is no longer used"
        );
    }
    // Indices as the models form them: small ones, and sysbench's `client << 16 | thread`.
    let mut indices: Vec<u32> = (0..64).collect();
    indices.extend([1 << 16, (1 << 16) | 1, (2 << 16) | 3]);
    let mut seen = std::collections::BTreeMap::new();
    for seed in [0u64, 7, 0xbaaf1458e77f4857] {
        for t in tags {
            for &i in &indices {
                let mut r = stream(seed, t, i);
                let first = (r.next_u64(), r.next_u64());
                if let Some(prev) = seen.insert(first, (seed, t, i)) {
                    panic!("stream ({seed}, {t:?}, {i}) repeats the draws of {prev:?}");
                }
            }
        }
    }
    assert_eq!(seen.len(), 3 * tags.len() * indices.len());
}

#[test]
fn ties_pop_fifo_across_many_pushes() {
    #[derive(Clone, Copy)]
    struct E(u32);
    impl Traced for E {
        fn record(&self) -> TraceRecord {
            TraceRecord {
                component: "e",
                index: self.0,
                kind: "e",
                a: 0,
                b: 0,
            }
        }
    }
    struct W(Vec<u32>);
    impl World for W {
        type Event = E;
        fn handle(&mut self, _n: SimTime, e: E, s: &mut Scheduler<E>) {
            self.0.push(e.0);
            // Events scheduled now for now go after those already queued for now.
            if e.0 < 3 {
                s.after(SimDuration::ZERO, E(e.0 + 100));
            }
        }
    }
    let mut sim = Simulation::new(W(vec![]));
    // Interleave times so the heap reorders internally.
    for i in 0..1000u32 {
        sim.schedule(SimTime((i % 7) as u64), E(1000 + i));
    }
    for i in 0..5u32 {
        sim.schedule(SimTime(0), E(i));
    }
    sim.run_until(SimTime::MAX);
    let got = &sim.world.0;
    // Within each time, the order is the insertion order.
    let at0: Vec<u32> = got
        .iter()
        .copied()
        .filter(|&x| x < 1000 || (x - 1000) % 7 == 0)
        .collect();
    let mut want: Vec<u32> = (0..1000u32)
        .filter(|i| i % 7 == 0)
        .map(|i| 1000 + i)
        .collect();
    want.extend([0, 1, 2, 3, 4, 100, 101, 102]);
    assert_eq!(at0, want);
    for t in 1..7u32 {
        let seq: Vec<u32> = got
            .iter()
            .copied()
            .filter(|&x| x >= 1000 && (x - 1000) % 7 == t)
            .collect();
        let want: Vec<u32> = (0..1000u32)
            .filter(|i| i % 7 == t)
            .map(|i| 1000 + i)
            .collect();
        assert_eq!(seq, want);
    }
}

/// A world whose events are the same whatever it draws: each tick draws a count that only
/// reaches its total (like rollout's Fast-mode Poisson counts), recorded as a draw; the run
/// closes the last interval after the loop, through `world_and_draws`.
struct Counter {
    rng: vtsim::sim::SimRng,
    max: u64,
    total: u64,
}
#[derive(Clone, Copy)]
struct Tick;
impl Traced for Tick {
    fn record(&self) -> TraceRecord {
        TraceRecord {
            component: "counter",
            index: 0,
            kind: "tick",
            a: 0,
            b: 0,
        }
    }
}
impl Counter {
    fn count(&mut self, d: &mut vtsim::sim::Draws<'_>) {
        let n = self.rng.next_u64() % self.max;
        self.total += n;
        d.draw(&TraceRecord {
            component: "counter",
            index: 0,
            kind: "count",
            a: n,
            b: 0,
        });
    }
}
impl World for Counter {
    type Event = Tick;
    fn handle(&mut self, _now: SimTime, e: Tick, s: &mut Scheduler<Tick>) {
        self.count(&mut s.draws());
        s.after(SimDuration::from_millis(1), e);
    }
}

/// (total, digest, draw records) of a run of `ticks` ticks with counts below 100, closing
/// the last interval after the loop if `end_draw`, digesting `total` as the one metric if
/// `metric`.
fn counter_run(seed: u64, ticks: u64, end_draw: bool, metric: bool) -> (u64, String, u64) {
    let world = Counter {
        rng: stream(seed, "counter", 0),
        max: 100,
        total: 0,
    };
    let mut sim = Simulation::new(world);
    sim.schedule(SimTime::ZERO, Tick);
    sim.run_until(SimTime(ticks * 1_000_000 - 1));
    if end_draw {
        let (w, mut d) = sim.world_and_draws();
        w.count(&mut d);
    }
    let draws = sim.trace().draws();
    let total = sim.world.total as f64;
    let (names, values): (Vec<&str>, Vec<f64>) = if metric {
        (vec!["total"], vec![total])
    } else {
        (vec![], vec![])
    };
    let (w, end) = sim.close_with_metrics(names, values);
    assert_eq!(end.events, ticks);
    (w.total, end.digest, draws)
}

#[test]
fn draws_and_metrics_are_in_the_digest_when_the_events_are_not_enough() {
    // Same events (one tick a millisecond), different draws: different digests, even with no
    // metric record.
    let (t1, d1, n1) = counter_run(1, 50, true, false);
    let (t2, d2, n2) = counter_run(2, 50, true, false);
    assert_eq!((n1, n2), (51, 51));
    assert_ne!(t1, t2);
    assert_ne!(d1, d2);
    assert_eq!(
        counter_run(1, 50, true, false).1,
        d1,
        "same seed, same digest"
    );
    // The draw made after the loop is in the digest.
    let (_, d3, n3) = counter_run(1, 50, false, false);
    assert_eq!(n3, 50);
    assert_ne!(d1, d3);
    // So is the metric.
    assert_ne!(counter_run(1, 50, true, true).1, d1);
}

#[test]
#[should_panic(expected = "metric `b` has no value")]
fn closing_with_fewer_values_than_names_is_a_bug() {
    let sim = Simulation::new(Counter {
        rng: stream(1, "counter", 0),
        max: 1,
        total: 0,
    });
    let _ = sim.close_with_metrics(["a", "b"], vec![1.0]);
}
