//! smartconnpool waiters with heterogeneous deadlines (`docs/connpool.md`; github/vitess-gh
//! PR #241 "smartconnpool: do not hand connections to expired waiters" and its A/B harness;
//! the code is vitessio/vitess `go/pools/smartconnpool` at release-22.0 and the fix of
//! vitessio/vitess PR #20308).
//!
//! vttablet's pool: `capacity` connections on LIFO idle stacks (clean and per setting). A `Get`
//! that finds none idle dials while below capacity, else joins a FIFO waitlist under one mutex,
//! `wl.mu`, which serialises every enqueue, every slow-path return and every timed-out
//! waiter's removal. The model runs the four variants of the harness of github/vitess-gh PR #241:
//! `Unfixed` (release-22.0), `OnlyA` (selection evicts expired waiters), `OnlyB` (O(1)
//! self-removal) and `Fixed` (A + B). `wl.mu` is Go's `sync.Mutex` ([`gosync::GoMutex`]:
//! barging, spinning, LIFO requeue, starvation mode after 1 ms; `costs.mutex: Fifo` keeps the
//! FIFO server of before) with hold time `base + per_node × nodes visited`; wake-ups cost the
//! waker a semaphore release and the woken goroutine a delay that grows with the runnable
//! goroutines per `GOMAXPROCS` ([`gosync::GoSched`]); ctx deadlines and the 100 ms starvation
//! ticker fire late by a drawn timer lateness. The costs are one calibration against
//! github/vitess-gh PR #238's counts (`experiments/pool-calibration.ron`, `docs/connpool.md`
//! "Calibration").
//!
//! Embedding the mutex in another world: own a `GoMutex<YourOp>` and a `GoSched`, add one
//! variant `Mutex(MutexEvent)` to your event enum, and pass a [`gosync::MutexCtx`] (your
//! scheduler, `fn(MutexEvent) -> YourEvent`, the `GoSched`, a stream) to `lock`, `handle` and
//! `unlock`; a returned [`gosync::Grant`] is an acquisition: run its critical section,
//! schedule your own release event after its hold and call `unlock` there
//! (`super::connpool::pool` is the pool's own host code; the unit tests of `gosync` are a
//! minimal host).
//!
//! What the model still leaves out, and which figures a measurement could refute:
//! - CPU is not modelled except as the run-queue term of a wake-up: the lock holder, spinners
//!   and the scanning goroutines do not compete for the `GOMAXPROCS` Ps, the GC never runs,
//!   and the holder is never preempted. A real collapse with CPU saturation would come sooner.
//! - The Go scheduler is a delay formula, not `runnext`/local/global run queues, work
//!   stealing or `usleep(3)` before stealing `runnext`; timer lateness is drawn at arrival from
//!   the process state then (idle or busy), not when the timer is due.
//! - Refutable: the fitted 13 ns per node (a `BenchmarkTryReturnConnSlow`-style measurement of
//!   a forced full scan at depth 512–64000 would confirm or refute it), the 1.8 µs base
//!   wake-up, the collapse loads of `docs/connpool.md` (Unfixed and OnlyA between 4× and 6×
//!   at capacity 20, GoSync), OnlyA not being worse than Unfixed in a steady overload, and
//!   the fraction of time `wl.mu` spends in starvation mode in a collapse (`mutex_starving_frac`,
//!   observable with a mutex profile).
//!
//! Where the specification (`docs/connpool.md`) and the code differ, the code is followed (noted
//! in the report too):
//! - A handed connection that needs a setting change when the ctx has expired is not returned:
//!   `ResetSetting`/`ApplySetting` fail at once, the connection is closed and
//!   `connReopen(expired ctx)` fails, so `active` drops (vitessio/vitess
//!   `go/pools/smartconnpool/pool.go` (the expired-waiter path, `docs/connpool.md`) step 4). The
//!   specification's "returns
//!   the connection immediately" holds only when the settings match.
//! - A waiter parked in `select` runs the case that woke it first (Go's `selectgo` wakes a
//!   parked goroutine with the case whose channel fired): an expired or evicted waiter whose
//!   timer fired first takes the ctx branch, `wl.mu` (a scan in Unfixed/OnlyA) and then
//!   `<-done`, even if a handoff arrived while it waited to be scheduled.
//! - Timed-out dials fail with the request (`getNew` dials with the request ctx).
//! - Not modelled: idle timeout and max lifetime (refresh workers), `MaxIdleCount` (inert by
//!   default, PR #241 "Port scope"), settings sharing a bucket (`bucket & 7`; at most 8 settings
//!   here, one stack each), the v23 unbuffered-channel send (the returner never blocks here,
//!   as in v22), dial errors other than ctx expiry.
//!
//! Digest (the rule is in [`crate::sim::trace`]): besides the events, each request's draws are
//! one draw record (`request`, setting, `request`, deadline offset in ns, service time in ns;
//! a pool embedded in the fleet world has index = pool << 8 | setting, a standalone pool is
//! pool 0): the deadline and the setting reach the counters (late completions, timeouts,
//! setting changes) without being event times; a random timer lateness is a draw record too
//! (`timer`, busy 0/1, `lateness`, ns), per starvation tick and per request that dials,
//! waits or arrives already due (a request served at once from a stack before its deadline
//! never consults its timer and draws none). Arrival gaps,
//! dial, setting round trips, wake-ups, handoffs, spins and think times are event times.
//!
//! Files: [`world`] (set-up, the embedding API, dispatch), [`pool`] (the world's state and a
//! request's path through the pool), [`mutex`] (`wl.mu` in the pool and its driver),
//! [`conns`] (connections, idle stacks), [`workload`] (arrivals, request draws),
//! [`waitlist`] (the list, `Waiter`, the selection rule), [`params`] (every parameter,
//! default and source), [`metrics`], [`event`], `timers` (the parked waiters' ctx timers),
//! [`gosync`] (Go's mutex and scheduler, reusable), [`erlang`] (the M/M/c+M closed form the
//! `Fixed` pool is checked against).
//!
//! Reading order, top-down (a file imports only files after it): mod.rs, world.rs, pool.rs,
//! mutex.rs, conns.rs, workload.rs, waitlist.rs, params.rs, metrics.rs, event.rs, timers.rs,
//! gosync.rs, erlang.rs.

pub mod conns;
pub mod erlang;
pub mod event;
pub mod gosync;
pub mod metrics;
pub mod mutex;
pub mod params;
pub mod pool;
mod timers;
pub mod waitlist;
pub mod workload;
pub mod world;

pub use erlang::{erlang_a, ErlangA};
pub use event::Event;
pub use metrics::Metrics;
pub use params::{
    Arrivals, ConnPoolParams, CostParams, MutexKind, PoolParams, Stage, Variant, Weighted,
    WorkloadParams,
};
pub use gosync::{GoMutex, GoSched, Grant, MutexCtx, MutexEvent, MutexStats};
pub use waitlist::{Selection, Waiter, WaiterState, Waitlist};
pub use workload::Request;
pub use world::PoolWorld;

use super::{Model, MetricSet, Run, RunOptions};
use crate::model::kit::Checked;
use crate::sim::{Draws, RunEnd, SimTime, Simulation, Trace};

/// The connpool model.
pub struct ConnPool;

/// One connpool run: its output and its [`ConnPoolDetail`].
pub type ConnPoolRun = Run<ConnPool>;

/// What a connpool run keeps besides the metric row.
pub struct ConnPoolDetail {
    /// Every counter.
    pub metrics: Metrics,
}

/// Simulate one run and keep its counters.
pub fn run_detailed(p: &ConnPoolParams, seed: u64, opts: RunOptions) -> ConnPoolRun {
    super::run_detailed(p, seed, opts)
}

impl Model for ConnPool {
    type Params = ConnPoolParams;
    type World = PoolWorld;
    type Metrics = metrics::ConnPoolMetrics;
    type Detail = ConnPoolDetail;
    fn validate(p: &ConnPoolParams) -> Checked {
        p.check()
    }
    fn simulation(p: &ConnPoolParams, seed: u64, trace: Trace, _logs: bool) -> Simulation<PoolWorld> {
        PoolWorld::simulation(p, seed, trace)
    }
    /// The stages, then the drain.
    fn horizon(p: &ConnPoolParams, w: &PoolWorld) -> SimTime {
        w.stages_end() + p.workload.drain
    }
    fn finish(_p: &ConnPoolParams, w: &mut PoolWorld, draws: Draws<'_>) {
        w.finish_run(draws.now());
    }
    fn metrics(p: &ConnPoolParams, w: &PoolWorld, end: SimTime, _events: u64) -> Self::Metrics {
        let mut stage_s: Vec<f64> = p
            .stages()
            .iter()
            .map(|s| s.duration.as_secs_f64())
            .collect();
        // A run cut short (a request limit) measures rates over the time it ran.
        let span_s = end.min(w.stages_end()).as_secs_f64();
        if let Some(last) = stage_s.last_mut() {
            let before: f64 = 0.0f64.max(w.stages_end().as_secs_f64() - *last);
            *last = (span_s - before).max(0.0);
        }
        w.m.values(span_s, &stage_s)
    }
    fn report(p: &ConnPoolParams, w: &PoolWorld, run: &RunEnd) -> String {
        let mut s = format!(
            "connpool {:?}: capacity {}, {} requests, {} events, digest {}\n",
            p.variant, p.pool.capacity, w.m.requests, run.events, run.digest
        );
        for (d, v) in Self::Metrics::DEFS.iter().zip(&run.metrics) {
            s.push_str(&format!("  {:28} {v:.6}\n", d.name));
        }
        s
    }
    fn artifacts(_p: &ConnPoolParams, w: &PoolWorld, _end: SimTime) -> Vec<super::Artifact> {
        metrics::artifacts(&w.timeline, &w.workload.stage_ends)
    }
    fn detail(_p: &ConnPoolParams, w: PoolWorld, _end: SimTime) -> ConnPoolDetail {
        ConnPoolDetail { metrics: w.m }
    }
}

twin_model! {
    /// [`ConnPool`] with one `Deadline` event per parked waiter instead of the pool's own
    /// timers (`PoolWorld::set_deadline_events`): the same runs, every counter equal, more
    /// events, another digest. Only for the check of that in `tests/connpool.rs`.
    ConnPoolDeadlineEvents of ConnPool,
    simulation: |p, seed, trace, _logs| PoolWorld::simulation_timed(p, seed, trace, true)
}
