//! Fleet model throughput (`cargo bench --bench fleet`): `models/fleet-default.ron` (10
//! vtgates × 500 replica reads/s through a rolling restart of one shard, ~1.3 M reads per
//! run), one run at a time on one thread (with the trace digest, with the trace off, and, for
//! a same-run ratio, with every query end as an event: `FleetEager`), then runs on 2 threads
//! and the time a 1,000-rollout sweep point would take at that rate. CPU time of the process
//! (best of `VTSIM_BENCH_RUNS` runs, default 4) and wall time are printed, never asserted.

mod common;

use std::time::Instant;
use vtsim::experiment::load_model_file;
use vtsim::model::fleet::{Fleet, FleetEager, FleetParams};
use vtsim::model::{run_detailed, Model, RunOptions, WorldSpec};
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

/// Best CPU and wall seconds of one run of `M` over `runs` seeds, and the events and reads
/// of the run with the best CPU time.
fn best<M: Model<Params = FleetParams>>(
    p: &FleetParams,
    runs: u64,
    trace: bool,
) -> (f64, f64, u64, f64) {
    let (mut cpu, mut wall, mut events, mut reads) = (f64::INFINITY, f64::INFINITY, 0, 0.0);
    for k in 0..runs {
        let seed = replicate_seed(1, k);
        let opts = RunOptions {
            trace: if trace {
                Trace::digest_only()
            } else {
                Trace::off()
            },
            report: false,
        };
        let (c0, t0) = (common::cpu_s(), Instant::now());
        let r = run_detailed::<M>(p, seed, opts);
        let (c, w) = (common::cpu_s() - c0, t0.elapsed().as_secs_f64());
        wall = wall.min(w);
        if c < cpu {
            cpu = c;
            events = r.output.events;
            reads = r.output.metric("replica_reads").unwrap_or(0.0);
        }
    }
    (cpu, wall, events, reads)
}

fn main() {
    let p = params();
    let runs: u64 = std::env::var("VTSIM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    println!(
        "vtsim fleet-default (10 vtgates x 500 reads/s, 1 shard x 3 tablets, pool 96, Unfixed), 1 thread, best of {runs} (CPU time of the process)"
    );
    let (cpu, wall, events, reads) = best::<Fleet>(&p, runs, true);
    println!(
        "  with the trace digest: CPU {cpu:.3} s a run (wall {wall:.3} s): {:.2} runs/s, {:.2e} events/s ({events} events), {:.2e} reads/s ({reads:.0} reads), {:.0} ns a read",
        1.0 / cpu,
        events as f64 / cpu,
        reads / cpu,
        cpu * 1e9 / reads
    );
    let (cpu_off, wall_off, events_off, _) = best::<Fleet>(&p, runs, false);
    println!(
        "  with the trace off:    CPU {cpu_off:.3} s a run (wall {wall_off:.3} s): {:.2} runs/s, {:.2e} events/s",
        1.0 / cpu_off,
        events_off as f64 / cpu_off
    );
    let (cpu_e, wall_e, events_e, _) = best::<FleetEager>(&p, runs, true);
    println!(
        "  every query end an event (FleetEager, the same runs), digest: CPU {cpu_e:.3} s a run (wall {wall_e:.3} s), {events_e} events: {:.2}x the deferred run's CPU time",
        cpu_e / cpu
    );
    let threads = 2u64;
    let per = runs.max(2);
    let (c0, t0) = (common::cpu_s(), Instant::now());
    let total: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let p = &p;
                s.spawn(move || {
                    (0..per)
                        .map(|k| {
                            run_detailed::<Fleet>(
                                p,
                                replicate_seed(7, t * per + k),
                                RunOptions::default(),
                            )
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
    let (dc, dt) = (common::cpu_s() - c0, t0.elapsed().as_secs_f64());
    let n = (threads * per) as f64;
    let rate = n / dt;
    println!(
        "  {threads} threads: {} runs in {dt:.2} s wall = {rate:.2} runs/s ({:.2e} events/s), CPU {:.3} s a run; a 1,000-rollout point: {:.0} s at this wall rate, {:.0} s on 2 idle cores at this CPU time",
        threads * per,
        total as f64 / dt,
        dc / n,
        1000.0 / rate,
        1000.0 * dc / n / 2.0
    );
}
