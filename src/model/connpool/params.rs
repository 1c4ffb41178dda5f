//! Parameters of the connection-pool model, with defaults and where each comes from.
//!
//! Sources: vitessio/vitess `go/pools/smartconnpool` (`pool.go`, `waitlist.go`) at
//! release-22.0 and after PR #20308, cited by file and function; `docs/connpool.md`; and
//! github/vitess-gh PR #241 with its A/B harness ("the harness"). Values marked
//! *\[inferred\]* are modelling choices with no source in the code.
//! Every enum is internally tagged (`kind`) so sweeps can override fields through JSON.

use crate::model::dist::DurationDist;
use crate::sim::SimDuration;
use crate::model::kit::{count, fail, positive, Checked};
use serde::{Deserialize, Serialize};

/// Parameters of the connpool model (`docs/connpool.md`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConnPoolParams {
    /// Which waitlist code runs (`docs/connpool.md`, "Variants").
    pub variant: Variant,
    /// The pool: capacity, dial latency, setting round trips, workers.
    pub pool: PoolParams,
    /// Costs of `wl.mu` and of goroutine scheduling.
    pub costs: CostParams,
    /// The requests.
    pub workload: WorkloadParams,
}

/// The four waitlist variants of the table of `docs/connpool.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Variant {
    /// release-22.0: no expiry check at selection, O(position) self-removal scan (vitessio/vitess
    /// `go/pools/smartconnpool/waitlist.go` `waitForConn`-C.4).
    #[default]
    Unfixed,
    /// Invariant A only: selection evicts expired waiters; self-removal still scans.
    OnlyA,
    /// Invariant B only: O(1) `RemoveIfPresent`; selection unchanged.
    OnlyB,
    /// A + B: PR #241's backport (vitessio/vitess PR #20308, "Semaphore-based backport").
    Fixed,
}

impl Variant {
    /// Selection skips (evicts) waiters already expired when examined (invariant A).
    pub fn evicts_expired(self) -> bool {
        matches!(self, Variant::OnlyA | Variant::Fixed)
    }
    /// Self-removal is O(1) (invariant B).
    pub fn o1_removal(self) -> bool {
        matches!(self, Variant::OnlyB | Variant::Fixed)
    }
    /// All four, in the order of the table of `docs/connpool.md`.
    pub const ALL: [Variant; 4] = [
        Variant::Unfixed,
        Variant::OnlyA,
        Variant::OnlyB,
        Variant::Fixed,
    ];
    /// The name as written in model files.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Unfixed => "Unfixed",
            Variant::OnlyA => "OnlyA",
            Variant::OnlyB => "OnlyB",
            Variant::Fixed => "Fixed",
        }
    }
}

/// The pool (`ConnPool`, vitessio/vitess `go/list/list.go`,
/// `go/pools/smartconnpool/waitlist.go`-C.2, vitessio/vitess `go/pools/smartconnpool/pool.go`
/// `open` (the background workers)).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PoolParams {
    /// Capacity C: at most C connections exist (`active <= capacity`). Default 20 (TxPool
    /// default size, vitessio/vitess `go/pools/smartconnpool/pool.go` `ConnPool.Get`; PR #241's
    /// A/B harness).
    pub capacity: u32,
    /// Connections dialled at start (idle on the clean stack). Default 0: the pool starts
    /// empty and `getNew` dials on demand (vitessio/vitess `go/pools/smartconnpool/pool.go`
    /// `ConnPool.Get` step 2).
    pub prefill: u32,
    /// Time to dial a new MySQL connection (`connNew`, synchronous in the caller, vitessio/vitess
    /// `go/pools/smartconnpool/pool.go` `ConnPool.Get`).
    /// Default 1ms + Exp(1ms) *[inferred: local MySQL handshake]*.
    pub dial_latency: DurationDist,
    /// One MySQL round trip for `ResetSetting` or `ApplySetting` (`execOnce`, vitessio/vitess
    /// `go/pools/smartconnpool/pool.go` `ConnPool.Get`
    /// "Setting cost model"). Default 500us *\[inferred\]*.
    pub setting_rtt: DurationDist,
    /// `maxAge`: a waiter skipped more than this many times is served next (vitessio/vitess
    /// `go/pools/smartconnpool/pool.go` `put` / `tryReturnConn`: 8).
    pub max_age: u32,
    /// Period of the starvation worker (vitessio/vitess `go/pools/smartconnpool/pool.go` `open`
    /// (the background workers): 100 ms, #17675). `0s` disables it.
    pub starvation_interval: SimDuration,
    /// A request whose acquisition deadline passed before its query starts fails at once and
    /// returns the connection (`docs/connpool.md` "Pool"; vitessio/vitess
    /// `go/pools/smartconnpool/pool.go` (the expired-waiter path, `docs/connpool.md`): `execOnce`
    /// with an expired ctx). False:
    /// a post-deadline acquisition still runs its query (a TxPool caller whose request ctx
    /// outlives the 1 s pool timeout); it is then a late completion, never goodput.
    pub query_checks_deadline: bool,
}

/// `wl.mu` hold times, the lock's discipline, the Go scheduler's wake-up costs and timer
/// lateness. The defaults are one calibration (`experiments/pool-calibration.ron`,
/// `docs/connpool.md` "Calibration") and are not tuned per experiment.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostParams {
    /// How `wl.mu` serves its goroutines. Default `GoSync` (Go's `sync.Mutex`).
    pub mutex: MutexKind,
    /// Fixed part of every `wl.mu` critical section: lock, unlock and the O(1) list work
    /// (`docs/connpool.md` "The mutex is the heart of the model"). Default 200ns
    /// *[inferred: an uncontended Lock/Unlock pair is ~20 ns, plus cache-missing list
    /// operations]*.
    pub base: SimDuration,
    /// Added per list node a critical section visits (pointer chase through `sync.Pool`
    /// recycled elements, mostly cache misses at depth in the thousands). Default 13ns
    /// *[fitted to PR #238's counts, `experiments/pool-calibration.ron`]*.
    pub per_node: SimDuration,
    /// Base delay from a goroutine becoming runnable (a semaphore release, `ctx.Done`) to it
    /// running: one `schedule()`, the helper goroutine, `select` (vitessio/vitess
    /// `go/pools/smartconnpool/waitlist.go` `waitForConn`). The run-queue term
    /// (`wake_burst`, `gomaxprocs`) comes on top. Default Exp(mean 1.8us) *[fitted to PR #238's
    /// counts, `experiments/pool-calibration.ron`]*.
    pub wakeup_latency: DurationDist,
    /// `GOMAXPROCS` of the process. Default 8 *[inferred: the harness machine is not
    /// published]*.
    pub gomaxprocs: u32,
    /// CPU burst of each runnable goroutine a woken one waits behind once runnable goroutines
    /// outnumber `gomaxprocs` (Go `runtime/proc.go` run queues). Default 1us *[inferred:
    /// golang/go#29471 measured ~1.8 CPU-us per wake and run]*. `0s` turns the term off.
    pub wake_burst: SimDuration,
    /// Charged to the waker per semaphore release (`semrelease1`: root lock, treap dequeue,
    /// `goready`), inside `wl.mu` when the variant wakes under the lock (OnlyA, as upstream
    /// v23), else delaying the waker's next wake; a `notify(true)` handoff also makes the
    /// returner yield its P before it wakes evictees (Fixed). Default 200ns *\[inferred\]*.
    /// `0s` turns every waker charge (and the yield) off.
    pub semrelease: SimDuration,
    /// Lateness of a ctx deadline timer (and of the starvation ticker) when the process is
    /// idle (nothing waiting, nothing runnable): `epoll_wait` has 1 ms resolution and Linux
    /// adds 50 us of timer slack (Go `runtime/netpoll_epoll.go` `netpoll`; golang/go#44343,
    /// PR #79872). Default Uniform(20us, 1.05ms) *[inferred from those]*.
    pub timer_lateness: DurationDist,
    /// Timer lateness when the process is busy (waiters linked or goroutines runnable): the
    /// timer is run at the next `schedule()` on some P (Go `runtime/proc.go` `checkTimers`).
    /// Default Exp(mean 10us) *\[inferred\]*.
    pub timer_lateness_busy: DurationDist,
}

/// The discipline of `wl.mu`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum MutexKind {
    /// One FIFO server in request order, the owner running at once (the model before issue
    /// 14; kept for comparison).
    Fifo,
    /// Go's `sync.Mutex` (Go `src/sync/mutex.go`): normal mode with barging newcomers,
    /// optional spinning and LIFO requeue of a woken loser; starvation mode (FIFO handoff)
    /// after a waiter has waited 1 ms (`super::gosync`).
    GoSync {
        /// Spin before parking when `sync_runtime_canSpin` allows (at most 4 iterations,
        /// `gomaxprocs > 1`, fewer runnable goroutines than Ps). Default true.
        #[serde(default = "yes")]
        spin: bool,
        /// One spin iteration (`procyield(30)`: 30 PAUSE). Default 1us *[inferred:
        /// ~140-cycle PAUSE on Skylake-class CPUs at 3 GHz]*.
        #[serde(default = "spin_iter_default")]
        spin_iter: SimDuration,
        /// Starvation-mode unlock to the new owner running (`semrelease1(handoff=true)`
        /// puts it in the unlocker's `runnext`, `goyield`). Default Exp(mean 500ns)
        /// *\[inferred\]*.
        #[serde(default = "handoff_default")]
        handoff_latency: DurationDist,
    },
}

fn yes() -> bool {
    true
}
fn spin_iter_default() -> SimDuration {
    SimDuration::from_nanos(1_000)
}
fn handoff_default() -> DurationDist {
    exp(SimDuration::from_nanos(500))
}

impl Default for MutexKind {
    fn default() -> Self {
        MutexKind::GoSync {
            spin: true,
            spin_iter: spin_iter_default(),
            handoff_latency: handoff_default(),
        }
    }
}

impl MutexKind {
    /// The name as written in model files.
    pub fn name(&self) -> &'static str {
        match self {
            MutexKind::Fifo => "Fifo",
            MutexKind::GoSync { .. } => "GoSync",
        }
    }
}

/// The requests: arrivals, deadlines, settings, service times.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadParams {
    /// Open-loop Poisson stages or closed-loop clients.
    pub arrivals: Arrivals,
    /// Multiplies the load of every open-loop stage (the sweep knob of `pool-overload`).
    /// Default 1.
    pub load_scale: f64,
    /// Acquisition deadline (the ctx of `Get`) measured from arrival: a weighted mix.
    /// Default 75 % 1 s, 25 % 150 ms (PR #241's A/B harness, the benchmark of vitessio/vitess PR
    /// #20308).
    pub deadline: Vec<Weighted>,
    /// Weights of the settings a request carries: index 0 is no setting (nil), 1 is s1...
    /// (at most 8). Default `[1.0]`: every request without a setting.
    pub settings: Vec<f64>,
    /// How long a query holds its connection. Default exponential, mean 10 ms (PR #241's harness).
    pub service: DurationDist,
    /// After the last stage no request arrives; the run goes on this long (or until nothing
    /// is in flight) so that queued requests finish. Metrics per stage count only completions
    /// inside the stage. Default 2s.
    pub drain: SimDuration,
}

/// One part of a mix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Weighted {
    /// Relative weight (> 0).
    pub weight: f64,
    /// The distribution of this part.
    pub value: DurationDist,
}

/// How requests arrive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Arrivals {
    /// Poisson arrivals whose rate follows `stages`.
    OpenLoop {
        /// Stages in order; each has rate `load × capacity / mean service`.
        stages: Vec<Stage>,
        /// Stop arriving after this many requests (the peer benchmark: 200,000). Default none.
        #[serde(default)]
        requests: Option<u64>,
    },
    /// `clients` clients, each issuing one request, waiting for its outcome, thinking, again.
    ClosedLoop {
        /// Number of clients.
        clients: u32,
        /// Think time between a request's outcome and the client's next request.
        think: DurationDist,
        /// Length of the (single) stage.
        duration: SimDuration,
    },
}

/// One stage of an open-loop profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stage {
    /// Offered load as a multiple of the pool's service capacity (capacity / mean service).
    pub load: f64,
    /// Stage length.
    pub duration: SimDuration,
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals::OpenLoop {
            stages: vec![Stage {
                load: 0.8,
                duration: SimDuration::from_secs(10),
            }],
            requests: None,
        }
    }
}

/// An exponential duration with mean `mean`.
pub fn exp(mean: SimDuration) -> DurationDist {
    DurationDist::ShiftedExponential {
        min: SimDuration::ZERO,
        mean,
    }
}

/// The mean of a duration distribution, in seconds.
pub fn mean_s(d: &DurationDist) -> f64 {
    d.mean_s()
}

impl Default for PoolParams {
    fn default() -> Self {
        PoolParams {
            capacity: 20,
            prefill: 0,
            dial_latency: DurationDist::ShiftedExponential {
        min: SimDuration::from_millis(1),
        mean: SimDuration::from_millis(1),
    },
            setting_rtt: DurationDist::fixed(SimDuration::from_nanos(500_000)),
            max_age: 8,
            starvation_interval: SimDuration::from_millis(100),
            query_checks_deadline: true,
        }
    }
}

impl Default for CostParams {
    fn default() -> Self {
        CostParams {
            mutex: MutexKind::default(),
            base: SimDuration::from_nanos(200),
            per_node: SimDuration::from_nanos(13),
            wakeup_latency: exp(SimDuration::from_nanos(1_800)),
            gomaxprocs: 8,
            wake_burst: SimDuration::from_nanos(1_000),
            semrelease: SimDuration::from_nanos(200),
            timer_lateness: DurationDist::Uniform {
                min: SimDuration::from_nanos(20_000),
                max: SimDuration::from_nanos(1_050_000),
            },
            timer_lateness_busy: exp(SimDuration::from_nanos(10_000)),
        }
    }
}

impl Default for WorkloadParams {
    fn default() -> Self {
        WorkloadParams {
            arrivals: Arrivals::default(),
            load_scale: 1.0,
            deadline: vec![
        Weighted {
            weight: 0.75,
            value: DurationDist::fixed(SimDuration::from_secs(1)),
        },
        Weighted {
            weight: 0.25,
            value: DurationDist::fixed(SimDuration::from_millis(150)),
        },
    ],
            settings: vec![1.0],
            service: exp(SimDuration::from_millis(10)),
            drain: SimDuration::from_secs(2),
        }
    }
}

impl Default for ConnPoolParams {
    fn default() -> Self {
        ConnPoolParams {
            variant: Variant::Unfixed,
            pool: PoolParams::default(),
            costs: CostParams::default(),
            workload: WorkloadParams::default(),
        }
    }
}

/// Largest `pool.capacity`.
const MAX_CAPACITY: u32 = 100_000;
/// Largest closed-loop client count.
const MAX_CLIENTS: u32 = 100_000;
/// Largest expected number of requests in one run (~10 s of simulation).
const MAX_REQUESTS: f64 = 1e7;
/// Events one request can cause at most, for the event estimate.
pub const EVENTS_PER_REQUEST: f64 = 10.0;


impl ConnPoolParams {
    /// The stages: open-loop stages, or the closed loop's single stage.
    pub fn stages(&self) -> Vec<Stage> {
        match &self.workload.arrivals {
            Arrivals::OpenLoop { stages, .. } => stages.clone(),
            Arrivals::ClosedLoop { duration, .. } => vec![Stage {
                load: f64::NAN,
                duration: *duration,
            }],
        }
    }

    /// Arrival rate (per second) of a stage with the given load (times `load_scale`).
    pub fn rate_of(&self, load: f64) -> f64 {
        load * self.workload.load_scale * self.pool.capacity as f64 / mean_s(&self.workload.service)
    }

    /// An Erlang-A (M/M/c+M) queue as a `Fixed` pool: zero mutex cost, zero wake-up latency,
    /// zero dial latency, one setting, exponential service (rate `mu`) and exponential
    /// patience (rate `theta`), Poisson arrivals at `lam`, `requests` customers.
    pub fn erlang_a(lam: f64, mu: f64, c: u32, theta: f64, requests: u64) -> Self {
        let service = exp(SimDuration::from_secs_f64(1.0 / mu));
        let load = lam / (c as f64 * mu);
        ConnPoolParams {
            variant: Variant::Fixed,
            pool: PoolParams {
                capacity: c,
                prefill: c,
                dial_latency: DurationDist::fixed(SimDuration::ZERO),
                setting_rtt: DurationDist::fixed(SimDuration::ZERO),
                max_age: PoolParams::default().max_age,
                starvation_interval: SimDuration::ZERO,
                query_checks_deadline: true,
            },
            costs: CostParams {
                base: SimDuration::ZERO,
                per_node: SimDuration::ZERO,
                wakeup_latency: DurationDist::fixed(SimDuration::ZERO),
                wake_burst: SimDuration::ZERO,
                semrelease: SimDuration::ZERO,
                timer_lateness: DurationDist::fixed(SimDuration::ZERO),
                timer_lateness_busy: DurationDist::fixed(SimDuration::ZERO),
                ..CostParams::default()
            },
            workload: WorkloadParams {
                arrivals: Arrivals::OpenLoop {
                    stages: vec![Stage {
                        load,
                        duration: SimDuration::from_secs(1_000_000_000),
                    }],
                    requests: Some(requests),
                },
                load_scale: 1.0,
                deadline: vec![Weighted {
                    weight: 1.0,
                    value: exp(SimDuration::from_secs_f64(1.0 / theta)),
                }],
                settings: vec![1.0],
                service,
                drain: SimDuration::ZERO,
            },
        }
    }

    /// The expected number of requests of a run (an upper estimate for the closed loop:
    /// every client back-to-back with no wait), for the size bound of `check`.
    pub fn expected_requests(&self) -> f64 {
        let w = &self.workload;
        match &w.arrivals {
            Arrivals::OpenLoop { stages, requests } => {
                let n: f64 = stages
                    .iter()
                    .map(|s| self.rate_of(s.load) * s.duration.as_secs_f64())
                    .sum();
                match requests {
                    Some(r) => n.min(*r as f64),
                    None => n,
                }
            }
            Arrivals::ClosedLoop {
                clients,
                think,
                duration,
            } => {
                let cycle = mean_s(&w.service) + mean_s(think);
                *clients as f64 * duration.as_secs_f64() / cycle
            }
        }
    }

    /// The terms of the events-per-run estimate ([`crate::model::check_events`]): at most
    /// [`EVENTS_PER_REQUEST`] events a request (arrival, dial, setting change, query, deadline,
    /// wake-up, three `wl.mu` releases), and the starvation worker's ticks over the stages and
    /// the drain (it ticks on while a request is in flight, and to the end when none ever
    /// arrives).
    pub fn event_terms(&self) -> Vec<crate::model::EventTerm> {
        let requests_field = match &self.workload.arrivals {
            Arrivals::OpenLoop { .. } => "workload.arrivals.stages",
            Arrivals::ClosedLoop { .. } => "workload.arrivals.duration",
        };
        let span_s: f64 = self
            .stages()
            .iter()
            .map(|s| s.duration.as_secs_f64())
            .sum::<f64>()
            + self.workload.drain.as_secs_f64();
        let tick = self.pool.starvation_interval.as_secs_f64();
        vec![
            (
                requests_field,
                "requests x 10 events",
                EVENTS_PER_REQUEST * self.expected_requests(),
            ),
            (
                "pool.starvation_interval",
                "starvation ticks ((stages + workload.drain) / pool.starvation_interval)",
                if tick > 0.0 { span_s / tick } else { 0.0 },
            ),
        ]
    }

    /// Check what serde cannot; the error names the field.
    pub fn check(&self) -> Checked {
        let p = &self.pool;
        // vttablet pools hold tens to a few thousand connections; every one is a slot here.
        let conns = ("connection", "connections");
        count("pool.capacity", p.capacity.into(), (1, MAX_CAPACITY.into()), conns)?;
        if p.prefill > p.capacity {
            return fail("pool.prefill", "at most pool.capacity connections");
        }
        // The real worker ticks every 100ms; a 1ns ticker would be a run of 1e10 ticks.
        if p.starvation_interval != SimDuration::ZERO
            && p.starvation_interval < SimDuration::from_millis(1)
        {
            return fail("pool.starvation_interval", "0s (off) or a duration >= 1ms");
        }
        p.dial_latency.check("pool.dial_latency")?;
        p.setting_rtt.check("pool.setting_rtt")?;
        let c = &self.costs;
        c.wakeup_latency.check("costs.wakeup_latency")?;
        c.timer_lateness.check("costs.timer_lateness")?;
        c.timer_lateness_busy.check("costs.timer_lateness_busy")?;
        count("costs.gomaxprocs", c.gomaxprocs.into(), (1, 4096), ("processor", "processors"))?;
        if let MutexKind::GoSync {
            spin_iter,
            handoff_latency,
            ..
        } = &c.mutex
        {
            handoff_latency.check("costs.mutex.handoff_latency")?;
            if *spin_iter == SimDuration::ZERO {
                return fail("costs.mutex.spin_iter", "a duration > 0 (set spin: false to turn spinning off)");
            }
        }
        let w = &self.workload;
        if !(w.load_scale >= 0.0 && w.load_scale.is_finite()) {
            return fail("workload.load_scale", "a finite multiplier >= 0");
        }
        if w.deadline.is_empty() {
            return fail("workload.deadline", "at least one (weight, value) part");
        }
        for (i, part) in w.deadline.iter().enumerate() {
            if !(part.weight > 0.0 && part.weight.is_finite()) {
                return fail(
                    format!("workload.deadline[{i}].weight"),
                    "a finite weight > 0",
                );
            }
            part.value.check(&format!("workload.deadline[{i}].value"))?;
        }
        if w.settings.is_empty() || w.settings.len() > 9 {
            return fail(
                "workload.settings",
                "1 to 9 weights (nil, then at most 8 settings)",
            );
        }
        if w.settings.iter().any(|x| !(*x >= 0.0 && x.is_finite()))
            || w.settings.iter().sum::<f64>() <= 0.0
        {
            return fail(
                "workload.settings",
                "finite weights >= 0 with a positive sum",
            );
        }
        w.service.check("workload.service")?;
        if mean_s(&w.service) <= 0.0 {
            return fail("workload.service", "a distribution with a mean > 0");
        }
        match &w.arrivals {
            Arrivals::OpenLoop { stages, requests } => {
                if stages.is_empty() {
                    return fail("workload.arrivals.stages", "at least one stage");
                }
                for (i, s) in stages.iter().enumerate() {
                    if !(s.load >= 0.0 && s.load.is_finite()) {
                        return fail(
                    format!("workload.arrivals.stages[{i}].load"),
                            "a finite load >= 0",
                        );
                    }
                    if s.duration == SimDuration::ZERO {
                        return fail(
                    format!("workload.arrivals.stages[{i}].duration"),
                            "a duration > 0",
                        );
                    }
                }
                if *requests == Some(0) {
                    return fail("workload.arrivals.requests", "at least 1 request");
                }
            }
            Arrivals::ClosedLoop {
                clients,
                think,
                duration,
            } => {
                // Every client is a live request; a vttablet sees thousands, not millions.
                let (field, noun) = ("workload.arrivals.clients", ("client", "clients"));
                count(field, (*clients).into(), (1, MAX_CLIENTS.into()), noun)?;
                think.check("workload.arrivals.think")?;
                positive("workload.arrivals.duration", *duration)?;
            }
        }
        // Every request is simulated (and queued under overload): bound the expected count
        // so that a run ends in seconds and fits in memory (the peer benchmark uses 2e5).
        let expected = self.expected_requests();
        if expected.is_nan() || expected > MAX_REQUESTS {
            let field = match &w.arrivals {
                Arrivals::OpenLoop { .. } => "workload.arrivals.stages",
                Arrivals::ClosedLoop { .. } => "workload.arrivals.duration",
            };
            return fail(
                field,
                format!(
                    "at most 1e7 expected requests (load x load_scale x pool.capacity / mean \
                     service x duration); these parameters give {expected:.3e}"
                ));
        }
        crate::model::check_events(&self.event_terms())
    }
}
