//! Connpool model throughput against the SimPy M/M/c+M peer (`cargo bench --bench connpool`).
//!
//! Same work as `benches/peer/simpy_mmc_reneging.py` (λ = 25, μ = 1, c = 20, θ = 2, 200,000
//! customers, seed 1): the `Fixed` pool configured as that queue (zero mutex cost, zero
//! wake-up latency, one setting, exponential service and patience, `ConnPoolParams::erlang_a`).
//! Reports the abandonment fraction of both (Erlang-A: 0.22613) and the CPU-time ratio: best
//! of seven rounds on each side, and the ratio within each round. A round times vtsim (with
//! and without the digest) and then one run of the SimPy script (the repository's
//! `benches/peer/`; `VTSIM_PEER` overrides the path), so the two sides take turns; without
//! `python3` or SimPy the bench says what to install (`pip install simpy`). Timings are
//! printed, never asserted.

mod common;

use vtsim::model::connpool::{erlang_a, run_detailed, ConnPoolParams};
use vtsim::model::RunOptions;
use vtsim::sim::Trace;

fn main() {
    let (lam, mu, c, theta, n) = (25.0, 1.0, 20, 2.0, 200_000u64);
    let p = ConnPoolParams::erlang_a(lam, mu, c, theta, n);
    let th = erlang_a(lam, mu, c, theta);
    // Seven rounds, each vtsim's two variants and then one SimPy run (`common::rounds_with_peer`):
    // on this shared 2-core VM the best of seven of one side measured after the other's moved
    // the ratio by a quarter between runs.
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
    let peer_args = ["--n", "200000", "--seed", "1"];
    let rounds = common::rounds_with_peer(
        ROUNDS,
        &mut [&mut with_digest, &mut without],
        "simpy_mmc_reneging.py",
        &peer_args,
        "cpu_s_best",
        "  ",
    );
    let b = rounds.best();
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
    if let Some((peer_cpu, stdout, _)) = &rounds.peer {
        print!("  SimPy (the last round): {}", stdout.replace('\n', "\n  "));
        let best_peer = peer_cpu.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "\n  SimPy CPU best of {ROUNDS} rounds: {best_peer:.3} s; speed ratio on CPU time (same 200,000 customers): {:.0}x with the digest, {:.0}x without (best against best); within each round {} with the digest, {} without (min-median-max)",
            best_peer / cpu,
            best_peer / cpu_off,
            rounds.round_ratio_range(0),
            rounds.round_ratio_range(1)
        );
    }
}
