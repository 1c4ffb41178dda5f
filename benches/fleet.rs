//! Fleet model throughput (`cargo bench --bench fleet`): `models/fleet-default.ron` (10
//! vtgates × 500 replica reads/s through a rolling restart of one shard, ~1.3 M reads per
//! run), one run at a time on one thread (with the trace digest, and with the trace off),
//! then runs on 2 threads and the time a 1,000-rollout sweep point would take at that rate.
//! Timings are printed, never asserted.

use std::time::Instant;
use vtsim::experiment::load_model_file;
use vtsim::model::fleet::{run_detailed, FleetParams};
use vtsim::model::{RunOptions, WorldSpec};
use vtsim::sim::rng::replicate_seed;
use vtsim::sim::Trace;

fn params() -> FleetParams {
    let m = load_model_file(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/fleet-default.ron"
    )))
    .expect("models/fleet-default.ron loads");
    match m.world {
        WorldSpec::Fleet(p) => p,
        _ => panic!("not a fleet model"),
    }
}

fn main() {
    let p = params();
    let runs: u64 = std::env::var("VTSIM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let (mut best, mut best_off, mut events, mut reads) = (f64::INFINITY, f64::INFINITY, 0, 0.0);
    for k in 0..runs {
        let seed = replicate_seed(1, k);
        let t0 = Instant::now();
        let r = run_detailed(&p, seed, RunOptions::default());
        let dt = t0.elapsed().as_secs_f64();
        if dt < best {
            best = dt;
            events = r.output.events;
            reads = r.metric("replica_reads");
        }
        let t0 = Instant::now();
        let opts = RunOptions {
            trace: Trace::off(),
            report: false,
        };
        std::hint::black_box(run_detailed(&p, seed, opts).output.events);
        best_off = best_off.min(t0.elapsed().as_secs_f64());
    }
    println!("vtsim fleet-default (10 vtgates x 500 reads/s, 1 shard x 3 tablets, pool 96, Unfixed), 1 thread");
    println!(
        "  best of {runs}: {best:.3} s with the trace digest ({:.2e} events/s, {events} events, {reads:.0} reads, {:.2} runs/s), {best_off:.3} s with the trace off ({:.2e} events/s)",
        events as f64 / best,
        1.0 / best,
        events as f64 / best_off
    );
    let threads = 2u64;
    let per = runs.max(2);
    let t0 = Instant::now();
    let total: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let p = &p;
                s.spawn(move || {
                    (0..per)
                        .map(|k| {
                            run_detailed(p, replicate_seed(7, t * per + k), RunOptions::default())
                                .output
                                .events
                        })
                        .sum::<u64>()
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("bench thread"))
            .sum()
    });
    let dt = t0.elapsed().as_secs_f64();
    let rate = (threads * per) as f64 / dt;
    println!(
        "  {threads} threads: {} runs in {dt:.2} s = {rate:.2} runs/s ({:.2e} events/s); a 1,000-rollout point: {:.0} s",
        threads * per,
        total as f64 / dt,
        1000.0 / rate
    );
}
