//! ProxySQL model throughput (`cargo bench --bench proxysql`), single-threaded: events per
//! second and ns per event for the seed's experiments (closed-loop sysbench, one event per
//! statement), with and without the trace digest. No peer is named for this model.
//! Timings are printed, never asserted.

use std::path::Path;
use std::time::Instant;
use vtsim::experiment::load_model_file;
use vtsim::model::proxysql::{run_detailed, ProxysqlParams};
use vtsim::model::{RunOptions, WorldSpec};
use vtsim::sim::rng::replicate_seed;
use vtsim::sim::Trace;

fn load(name: &str) -> ProxysqlParams {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(name);
    match load_model_file(&p).expect("model file").world {
        WorldSpec::Proxysql(p) => p,
        _ => panic!("not a ProxySQL model"),
    }
}

fn main() {
    for name in [
        "proxysql-seed-1-idle-replica-dies.ron",
        "proxysql-seed-3-both-replicas-die.ron",
        "proxysql-reader-fallback.ron",
    ] {
        let p = load(name);
        for (label, digest) in [("digest", true), ("no trace", false)] {
            let reps = 5u64;
            let t0 = Instant::now();
            let mut events = 0u64;
            for r in 0..reps {
                let trace = if digest {
                    Trace::digest_only()
                } else {
                    Trace::off()
                };
                let out = run_detailed(
                    &p,
                    replicate_seed(1, r),
                    RunOptions {
                        trace,
                        report: false,
                    },
                );
                events += out.output.events;
            }
            let dt = t0.elapsed().as_secs_f64();
            println!(
                "{name:<42} {label:<9} {:>6.1} ms/run  {:>6.2} Mev/s  {:>5.0} ns/event  ({} events/run, {:.0} s simulated)",
                dt * 1e3 / reps as f64,
                events as f64 / dt / 1e6,
                dt * 1e9 / events as f64,
                events / reps,
                p.horizon.as_secs_f64()
            );
        }
    }
}
