//! Rollout model throughput (`cargo bench --bench rollout`), single-threaded.
//!
//! 1. The polling-discovery peer (`benches/peer/simpy_polling_discovery.py --replicas 2`): 10 clients,
//!    T = 60 s, two replicas each down D = 20 s, the next one A = 30 s after the previous came
//!    up; exposure per replication = sum over clients of the time they know no up replica
//!    (exact mean 75 s). vtsim's equivalent: 10 vtgates, zero delays except a 20 s restart,
//!    replicas only, no queries; exposure per replication = `exposure_mean_per_vtgate_s` × 10.
//!    The SimPy script (found in the repository's `benches/peer/`; `VTSIM_PEER` overrides the
//!    path) runs in the same session; without `python3` or SimPy the bench says what to
//!    install (`pip install simpy`) and prints vtsim's figures only.
//! 2. Runs per second of `models/rollout-default.ron` (fast and per-query workload).
//!
//! Seeds: `replicate_seed(experiment_seed, replicate)`. vtsim runs as a worker of `vtsim run`
//! does (one world reused across replicates, `WorldSpec::runner`). Part 1 compares CPU time
//! over seven rounds, each timing vtsim's variants and then one run of the peer (the sides
//! take turns): best against best, and the ratio within each round. Timings are printed,
//! never asserted.

mod common;

use std::time::Instant;
use vtsim::model::rollout::{run_detailed, RolloutParams, WorkloadMode};
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

fn exposure_index() -> usize {
    use vtsim::model::Model;
    vtsim::model::rollout::Rollout::metric_defs()
        .iter()
        .position(|d| d.name == "exposure_mean_per_vtgate_s")
        .unwrap()
}

fn peer_equivalent() {
    let reps = 10_000u64;
    let mut p = RolloutParams::default().zero_delays(SimDuration::from_secs(20));
    p.vtgates = 10;
    p.replicas_per_shard = 2;
    p.vtgate.tablet_refresh_interval = SimDuration::from_secs(60);
    p.operator.tablet_available_timeout = SimDuration::from_secs(30);
    p.operator.restart_primary = false;
    p.workload.replica_read_rps = 0.0;
    p.workload.primary_write_rps = 0.0;
    let ix = exposure_index();
    // Seven rounds, each vtsim's variants and then one SimPy run; CPU time compared, vtsim
    // run as a worker of `vtsim run` runs it (one world reused across replicates:
    // `WorldSpec::runner`).
    const ROUNDS: usize = 7;
    let spec = WorldSpec::Rollout(p.clone());
    let mut totals = Vec::with_capacity(reps as usize);
    let mut events = 0u64;
    // The three variants, in this order in each round.
    let mut with_digest = || {
        totals.clear();
        events = 0;
        let mut runner = spec.runner();
        for k in 0..reps {
            let r = runner.run(replicate_seed(0, k), RunOptions::default());
            events += r.events;
            totals.push(r.metrics[ix] * p.vtgates as f64);
        }
    };
    // The same work without the trace digest (what SimPy does not compute either).
    let mut without = || {
        let mut runner = spec.runner();
        let mut acc = 0.0;
        for k in 0..reps {
            let opts = RunOptions {
                trace: vtsim::sim::Trace::off(),
                report: false,
            };
            acc += runner.run(replicate_seed(0, k), opts).metrics[ix];
        }
        std::hint::black_box(acc);
    };
    // A fresh world per replication (run_detailed), for comparison.
    let mut fresh = || {
        let mut acc = 0.0;
        for k in 0..reps {
            acc += run_detailed(&p, replicate_seed(0, k), RunOptions::default())
                .output
                .metrics[ix];
        }
        std::hint::black_box(acc);
    };
    // Each round times the three variants and then one run of the SimPy peer, so the two
    // sides take turns (`common::rounds_with_peer`).
    let rounds = common::rounds_with_peer(
        ROUNDS,
        &mut [&mut with_digest, &mut without, &mut fresh],
        "simpy_polling_discovery.py",
        &["--replicas", "2"],
        "cpu_s",
        "    ",
    );
    let b = rounds.best();
    let ((cpu, best), (cpu_off, best_off), (cpu_fresh, _)) = (b[0], b[1], b[2]);
    let n = totals.len() as f64;
    let mean = totals.iter().sum::<f64>() / n;
    let sd = (totals.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = 1.96 * sd / n.sqrt();
    println!("(1) polling-discovery peer, vtsim equivalent: R=2 K=10 T=60 D=20 A=30, reps={reps}, 1 thread");
    println!(
        "    CPU {cpu:.4} s, wall {best:.4} s (best of {ROUNDS}) -> {:.0} replications/s of CPU; {:.1} events/rep -> {:.0} events/s",
        reps as f64 / cpu,
        events as f64 / reps as f64,
        events as f64 / cpu
    );
    println!(
        "    without the trace digest: CPU {cpu_off:.4} s, wall {best_off:.4} s; a fresh world per replication (digest on): CPU {cpu_fresh:.4} s"
    );
    println!("    mean total exposure per replication: {mean:.4} s (+-{half:.4} 95% CI; exact 75)");

    if let Some((peer_cpu, stdout, _)) = &rounds.peer {
        print!(
            "    SimPy (the last round): {}",
            stdout.replace('\n', "\n    ")
        );
        let best_peer = peer_cpu.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "\n    SimPy CPU best of {ROUNDS} rounds: {best_peer:.3} s; speed ratio on CPU time (same 10,000 replications): {:.1}x with the digest, {:.1}x without (best against best); within each round {} with the digest, {} without (min-median-max)",
            best_peer / cpu,
            best_peer / cpu_off,
            rounds.round_ratio_range(0),
            rounds.round_ratio_range(1)
        );
    }
}

fn default_model() {
    let p = load("models/rollout-default.ron");
    for (mode, runs) in [
        (WorkloadMode::Fast, 20_000u64),
        (WorkloadMode::PerQuery, 200),
    ] {
        let mut q = p.clone();
        q.workload.mode = mode.clone();
        let spec = WorldSpec::Rollout(q);
        let mut runner = spec.runner();
        let t0 = Instant::now();
        let mut events = 0u64;
        for k in 0..runs {
            events += runner
                .run(replicate_seed(1, k), RunOptions::default())
                .events;
        }
        let w = t0.elapsed().as_secs_f64();
        println!(
            "(2) models/rollout-default.ron, {mode:?} mode: {runs} runs in {w:.3} s -> {:.0} runs/s; {:.0} events/run, {:.2e} events/s",
            runs as f64 / w,
            events as f64 / runs as f64,
            events as f64 / w
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    // VTSIM_BENCH=peer or =default runs one part only (for profiling).
    let only = std::env::var("VTSIM_BENCH").unwrap_or_default();
    if only != "default" {
        peer_equivalent();
    }
    if only != "peer" {
        default_model();
    }
}
