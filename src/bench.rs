//! Throughput measurements shared by `vtsim bench` and `benches/`: the hold model on the
//! kernel against a bare `BinaryHeap` push/pop loop doing the same draws, and sweep scaling.
//! Timings are reported, never asserted.

use crate::model::hold::{HoldParams, HoldWorld};
use crate::sim::rng::{exponential, stream};
use crate::sim::{SimDuration, SimTime, Trace};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// Most events per hold-model measurement `vtsim bench --events` accepts: 1e8 (each of the
/// 3 sizes × 5 rounds × 3 variants handles them, so about 10 minutes at 1e7 events/s).
pub const MAX_EVENTS: u64 = 100_000_000;

/// One hold-model measurement.
#[derive(Clone, Debug)]
pub struct HoldResult {
    /// Pending events.
    pub pending: u32,
    /// Events handled.
    pub events: u64,
    /// Kernel with the running trace digest (the default for every model run), events/s.
    pub kernel_digest_eps: f64,
    /// Kernel without the digest, events/s.
    pub kernel_nodigest_eps: f64,
    /// Bare `BinaryHeap<Reverse<(u64, u64)>>` loop with the same draws, events/s.
    pub bare_heap_eps: f64,
}

fn params(pending: u32, events: u64) -> HoldParams {
    HoldParams {
        pending,
        events,
        mean_increment: SimDuration::from_millis(1),
        late_after: SimDuration::from_secs(1),
    }
}

/// Run the kernel on the hold model; returns (events, seconds, final time).
pub fn hold_kernel(pending: u32, events: u64, digest: bool) -> (u64, f64, SimTime) {
    let p = params(pending, events);
    let trace = if digest {
        Trace::digest_only()
    } else {
        Trace::off()
    };
    let mut sim = HoldWorld::simulation(&p, 1, trace);
    let t0 = Instant::now();
    sim.run_until(SimTime::MAX);
    let dt = t0.elapsed().as_secs_f64();
    std::hint::black_box(sim.digest_hex());
    (sim.events(), dt, sim.now())
}

/// The bare heap loop: pop the earliest (time, seq), push time + Exp(mean).
pub fn hold_bare_heap(pending: u32, events: u64) -> (u64, f64, u64) {
    let mut rng = stream(1, "hold", 0);
    let mut heap: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::with_capacity(pending as usize);
    let mut seq = 0u64;
    for _ in 0..pending {
        let d = SimDuration::from_secs_f64(exponential(&mut rng, 1e-3)).as_nanos();
        heap.push(Reverse((d, seq)));
        seq += 1;
    }
    let t0 = Instant::now();
    let mut last = 0;
    for _ in 0..events {
        let Reverse((t, _)) = heap.pop().expect("pending");
        last = t;
        let d = SimDuration::from_secs_f64(exponential(&mut rng, 1e-3)).as_nanos();
        heap.push(Reverse((t + d, seq)));
        seq += 1;
    }
    let dt = t0.elapsed().as_secs_f64();
    std::hint::black_box(last);
    (events, dt, last)
}

/// Best of `repeats` rounds at `pending` events; each round runs the three variants one
/// after the other, so a slow spell of a noisy machine hits them alike.
pub fn hold(pending: u32, events: u64, repeats: u32) -> HoldResult {
    let mut best = [0.0f64; 3];
    for _ in 0..repeats {
        let (n, s, _) = hold_kernel(pending, events, true);
        best[0] = best[0].max(n as f64 / s);
        let (n, s, _) = hold_kernel(pending, events, false);
        best[1] = best[1].max(n as f64 / s);
        let (n, s, _) = hold_bare_heap(pending, events);
        best[2] = best[2].max(n as f64 / s);
    }
    HoldResult {
        pending,
        events,
        kernel_digest_eps: best[0],
        kernel_nodigest_eps: best[1],
        bare_heap_eps: best[2],
    }
}

/// Runs per second of `runs` replicates of `world` on `threads` threads (output collected in
/// job order, as the runner does).
pub fn sweep_runs_per_s(world: &crate::model::WorldSpec, runs: u64, threads: usize) -> f64 {
    use crate::model::RunOptions;
    use crate::sim::rng::replicate_seed;
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let t0 = Instant::now();
    let digests: Vec<String> = pool.install(|| {
        (0..runs)
            .into_par_iter()
            .map(|r| {
                world
                    .run(replicate_seed(1, r), RunOptions::default())
                    .digest
            })
            .collect()
    });
    let dt = t0.elapsed().as_secs_f64();
    std::hint::black_box(digests);
    runs as f64 / dt
}
