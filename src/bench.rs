//! Throughput measurements shared by `vtsim bench` and `benches/`: the hold model on the
//! kernel against a bare `BinaryHeap` push/pop loop doing the same draws, and a sweep's
//! throughput and scaling.
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

/// One sweep-throughput measurement: runs and events per second.
#[derive(Clone, Copy, Debug)]
pub struct SweepRate {
    /// Runs per second (wall time).
    pub runs_per_s: f64,
    /// Events handled per second (wall time).
    pub events_per_s: f64,
    /// Events a run, on average.
    pub events_per_run: f64,
}

/// `runs` replicates of `world` on `threads` threads as a sweep's workers run them (each
/// thread reuses one world across its runs, [`crate::model::WorldSpec::runner`]; output
/// collected in job order): the best of `rounds` rounds.
pub fn sweep_rate(
    world: &crate::model::WorldSpec,
    runs: u64,
    threads: usize,
    rounds: u32,
) -> SweepRate {
    use crate::model::RunOptions;
    use crate::sim::rng::replicate_seed;
    use rayon::prelude::*;
    let pool = crate::experiment::runner::thread_pool(Some(threads)).expect("thread pool");
    let mut best = SweepRate {
        runs_per_s: 0.0,
        events_per_s: 0.0,
        events_per_run: 0.0,
    };
    for _ in 0..rounds.max(1) {
        let t0 = Instant::now();
        let out: Vec<(u64, String)> = pool.install(|| {
            (0..runs)
                .into_par_iter()
                .map_init(
                    || world.runner(),
                    |runner, r| {
                        let o = runner.run(replicate_seed(1, r), RunOptions::default());
                        (o.events, o.digest)
                    },
                )
                .collect()
        });
        let dt = t0.elapsed().as_secs_f64();
        let events: u64 = out.iter().map(|o| o.0).sum();
        std::hint::black_box(out);
        if runs as f64 / dt > best.runs_per_s {
            best = SweepRate {
                runs_per_s: runs as f64 / dt,
                events_per_s: events as f64 / dt,
                events_per_run: events as f64 / runs.max(1) as f64,
            };
        }
    }
    best
}

/// `vtsim bench --events`: at least 1 and at most [`MAX_EVENTS`].
pub fn check_events(events: u64) -> Result<(), String> {
    if events == 0 || events > MAX_EVENTS {
        return Err(format!(
            "--events {events}: must be at least 1 and at most {MAX_EVENTS:.0e}"
        ));
    }
    Ok(())
}

/// The pending-event counts `vtsim bench` measures the hold model at.
pub const PENDING: [u32; 3] = [1_000, 10_000, 100_000];
/// Rounds per measurement (the best is reported).
pub const ROUNDS: u32 = 5;
/// Runs of the sweep measurement.
pub const SWEEP_RUNS: u64 = 4000;
/// Rounds of the sweep measurement (the best is reported).
pub const SWEEP_ROUNDS: u32 = 3;
/// Thread counts of the sweep-scaling measurement.
pub const SWEEP_THREADS: [usize; 2] = [1, 2];

/// `vtsim bench`: the hold model at [`PENDING`] events against a bare heap, then (unless
/// `kernel_only`) [`SWEEP_RUNS`] runs of the built-in rollout model on [`SWEEP_THREADS`]: runs
/// and events per second, the scaling, and on one thread the time an event takes against
/// the bare heap's at the first size; each line is written to `out` as soon as it is measured.
pub fn report(events: u64, kernel_only: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    writeln!(
        out,
        "hold model: each pop schedules one event at now + Exp(1 ms); best of {ROUNDS} rounds; 1 thread"
    )?;
    writeln!(
        out,
        "{:>9} {:>12} {:>16} {:>16} {:>16} {:>9}",
        "pending", "events", "kernel+digest/s", "kernel/s", "bare heap/s", "ratio"
    )?;
    // The bare heap's events/s at the first size: the floor the sweep's events are compared to.
    let mut floor = None;
    for pending in PENDING {
        let r = hold(pending, events, ROUNDS);
        floor.get_or_insert(r.bare_heap_eps);
        writeln!(
            out,
            "{:>9} {:>12} {:>16.3e} {:>16.3e} {:>16.3e} {:>8.2}x",
            r.pending,
            r.events,
            r.kernel_digest_eps,
            r.kernel_nodigest_eps,
            r.bare_heap_eps,
            r.bare_heap_eps / r.kernel_digest_eps
        )?;
    }
    writeln!(
        out,
        "(ratio = bare heap / kernel with digest: the kernel's overhead factor)"
    )?;
    if kernel_only {
        return Ok(());
    }
    let world = crate::experiment::files::builtin_model("rollout-default").world;
    writeln!(out)?;
    writeln!(
        out,
        "sweep: {SWEEP_RUNS} runs of {} (rollout-default), each thread reusing one world; best of {SWEEP_ROUNDS} rounds",
        world.kind()
    )?;
    let mut base = None;
    for threads in SWEEP_THREADS {
        let r = sweep_rate(&world, SWEEP_RUNS, threads, SWEEP_ROUNDS);
        let base = *base.get_or_insert(r.runs_per_s);
        writeln!(
            out,
            "  --threads {threads}: {:>10.0} runs/s  ({:.2}x)  {:.3e} events/s, {:.1} events a run",
            r.runs_per_s,
            r.runs_per_s / base,
            r.events_per_s,
            r.events_per_run
        )?;
        if threads == 1 {
            if let Some(heap) = floor {
                writeln!(
                    out,
                    "    per event, one thread: {:.2}x the bare heap's time at {} pending",
                    heap / r.events_per_s,
                    PENDING[0]
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep measurement runs the sweep's replicates (the runner reusing a world gives
    /// the runs a fresh world gives): its events a run are theirs, on one thread and on two.
    #[test]
    fn the_sweep_rate_counts_the_sweeps_events() {
        use crate::model::RunOptions;
        use crate::sim::rng::replicate_seed;
        let world = crate::experiment::files::builtin_model("rollout-default").world;
        let runs = 24;
        let events: u64 = (0..runs)
            .map(|r| {
                world
                    .run(replicate_seed(1, r), RunOptions::default())
                    .events
            })
            .sum();
        for threads in [1, 2] {
            let r = sweep_rate(&world, runs, threads, 1);
            assert_eq!(
                r.events_per_run,
                events as f64 / runs as f64,
                "{threads} threads"
            );
            assert!(r.runs_per_s > 0.0 && r.events_per_s > r.runs_per_s);
        }
    }
}
