//! Connpool model throughput against the SimPy M/M/c+M peer (`cargo bench --bench connpool`).
//!
//! Same work as `benches/peer/simpy_mmc_reneging.py` (λ = 25, μ = 1, c = 20, θ = 2, 200,000
//! customers, seed 1): the `Fixed` pool configured as that queue (zero mutex cost, zero
//! wake-up latency, one setting, exponential service and patience, `ConnPoolParams::erlang_a`).
//! Reports the abandonment fraction of both (Erlang-A: 0.22613) and the CPU-time ratio (best of seven
//! rounds on each side), with
//! the SimPy script (the repository's `benches/peer/`; `VTSIM_PEER` overrides the path) run in
//! this same session; without `python3` or SimPy the bench says what to install (`pip install
//! simpy`). Timings are printed, never asserted.

mod common;

use vtsim::model::connpool::{erlang_a, run_detailed, ConnPoolParams};
use vtsim::model::RunOptions;
use vtsim::sim::Trace;

fn main() {
    let (lam, mu, c, theta, n) = (25.0, 1.0, 20, 2.0, 200_000u64);
    let p = ConnPoolParams::erlang_a(lam, mu, c, theta, n);
    let th = erlang_a(lam, mu, c, theta);
    // The same seven timed rounds as the peer (`--repeat 7`), CPU time compared: on this
    // shared 2-core VM a best of three swung the ratio by 2x between runs.
    const ROUNDS: usize = 7;
    let mut out = None;
    let mut with_digest = || {
        out = Some(run_detailed(&p, 1, RunOptions::default()));
    };
    let mut without = || {
        let opts = RunOptions {
            trace: Trace::off(),
            report: false,
        };
        std::hint::black_box(run_detailed(&p, 1, opts).metrics.timeouts);
    };
    // Interleaved in each round (`common::best_of_each`).
    let b = common::best_of_each(ROUNDS, &mut [&mut with_digest, &mut without]);
    let ((cpu, best), (cpu_off, best_off)) = (b[0], b[1]);
    let r = out.expect("ran");
    let m = &r.metrics;
    let frac = m.timeouts as f64 / m.requests as f64;
    println!("vtsim connpool Fixed as M/M/{c}+M  lam={lam} mu={mu} theta={theta}  N={n} seed=1, 1 thread");
    println!(
        "  best of {ROUNDS}: CPU {cpu:.4} s (wall {best:.4} s) with the trace digest, CPU {cpu_off:.4} s (wall {best_off:.4} s) without; {} events -> {:.2e} events/s of CPU",
        r.output.events,
        r.output.events as f64 / cpu
    );
    println!(
        "  abandoned fraction {frac:.4} (Erlang-A {:.4});  mean wait (all) {:.4} s (Erlang-A {:.4})",
        th.p_abandon,
        m.queue_time_all_ns as f64 * 1e-9 / m.queue_time_all_n as f64,
        th.mean_wait_all
    );
    if let Some((stdout, v)) = common::run_peer(
        "simpy_mmc_reneging.py",
        &[
            "--n",
            "200000",
            "--seed",
            "1",
            "--repeat",
            &ROUNDS.to_string(),
        ],
        "  ",
    ) {
        print!("  SimPy: {}", stdout.replace('\n', "\n  "));
        let wall = v["wall_s_best"]
            .as_f64()
            .expect("wall_s_best in the peer's JSON");
        let peer_cpu = v["cpu_s_best"]
            .as_f64()
            .expect("cpu_s_best in the peer's JSON");
        println!(
            "\n  speed ratio on CPU time (best of {ROUNDS} each, same 200,000 customers): {:.0}x with the digest, {:.0}x without (wall: {:.0}x / {:.0}x)",
            peer_cpu / cpu,
            peer_cpu / cpu_off,
            wall / best,
            wall / best_off
        );
    }
}
