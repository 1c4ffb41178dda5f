//! The kernel: simulated time, the event queue, seeded streams, the trace, and the loop.
//!
//! It knows nothing about Vitess. A model is a [`World`] with its own small `Copy` event enum;
//! [`Simulation`] is generic over it (monomorphised: no `dyn`, no async). Events at equal times
//! are handled in the order they were scheduled (FIFO). A world that needs to cancel an event
//! keeps a generation counter and ignores stale events when they pop. The [`trace`] digests every
//! event, every draw a world records ([`Scheduler::draw`], [`Draws`]) and the run's final metrics
//! ([`Simulation::close_with_metrics`]).

pub mod nest;
pub mod queue;
pub mod rng;
pub mod time;
pub mod trace;

pub use nest::Nested;
pub use queue::EventQueue;
pub use rng::{stream, SimRng};
pub use time::{SimDuration, SimTime};
pub use trace::{Trace, TraceRecord, Traced};

/// A modelled system: its state and how it reacts to its events.
pub trait World {
    /// The world's own event type: small, `Copy`, describable for the trace.
    type Event: Copy + Traced;
    /// React to `event` at time `now`, scheduling follow-ups on `sched`.
    fn handle(&mut self, now: SimTime, event: Self::Event, sched: &mut Scheduler<Self::Event>);
}

/// What a world sees of the engine while it handles an event: the clock, the queue, and the
/// trace (for draw records, see [`trace`]).
pub struct Scheduler<E> {
    now: SimTime,
    queue: EventQueue<E>,
    stopped: bool,
    trace: Trace,
}

impl<E: Copy> Scheduler<E> {
    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedule `event` at absolute time `at` (a time in the past is treated as now).
    #[inline]
    pub fn at(&mut self, at: SimTime, event: E) {
        let t = if at < self.now { self.now } else { at };
        self.queue.push(t, event);
    }
    /// Schedule `event` after `delay`.
    #[inline]
    pub fn after(&mut self, delay: SimDuration, event: E) {
        self.queue.push(self.now + delay, event);
    }
    /// The sequence number an [`Self::at`] now would give its event, for an event the world
    /// keeps and schedules later with [`Self::at_reserved`] ([`EventQueue::reserve`]). Not for
    /// a component run through [`Self::nest`], whose events the host renumbers.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        self.queue.reserve()
    }
    /// Schedule `event` at `at` (not in the past) with a number from [`Self::reserve`]: it
    /// pops where it would have had it been scheduled when the number was taken.
    #[inline]
    pub fn at_reserved(&mut self, at: SimTime, seq: u64, event: E) {
        debug_assert!(at >= self.now, "a reserved event in the past");
        self.queue.push_reserved(at, seq, event);
    }
    /// Stop the run after this event.
    pub fn stop(&mut self) {
        self.stopped = true;
    }
    /// Number of pending events.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }
    /// Record a draw whose result reaches an output without being an event (a draw record,
    /// stamped with the current time; see [`trace`]).
    #[inline]
    pub fn draw(&mut self, r: &TraceRecord) {
        self.trace.draw(self.now, r);
    }
    /// The draw sink, for code shared with end-of-run accounting (see [`Draws`]).
    #[inline]
    pub fn draws(&mut self) -> Draws<'_> {
        Draws {
            trace: &mut self.trace,
            now: self.now,
        }
    }
}

/// Where draw records go: the run's trace, at the current time. Handed out by
/// [`Scheduler::draws`] while an event is handled and by [`Simulation::world_and_draws`] after
/// the loop, so code that closes an accounting interval records its draws the same way in
/// both places.
pub struct Draws<'a> {
    trace: &'a mut Trace,
    now: SimTime,
}

impl Draws<'_> {
    /// Record one draw (see [`trace`]).
    #[inline]
    pub fn draw(&mut self, r: &TraceRecord) {
        self.trace.draw(self.now, r);
    }
    /// The time the draws are stamped with.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }
}

/// Why a run returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The next event lies beyond the horizon (time is left at the horizon).
    Horizon,
    /// Nothing is pending.
    Empty,
    /// The world called [`Scheduler::stop`].
    Stopped,
}

/// Makes [`RunEnd`] impossible to build outside this module.
#[derive(Clone, Copy, Debug)]
struct Sealed;

/// How a run ended: what every model reports besides its own metrics, and the metrics as they
/// were digested. Only [`Simulation::close_with_metrics`] makes one (the private field), so a
/// model's output (built from a `RunEnd`) always carries the metrics its digest covers.
#[derive(Clone, Debug)]
pub struct RunEnd {
    /// The time the run stopped (the horizon if it was reached).
    pub end: SimTime,
    /// Events handled.
    pub events: u64,
    /// Digest of the trace, metric records included (64 hex characters).
    pub digest: String,
    /// The first error writing the JSONL trace, if any.
    pub trace_error: Option<String>,
    /// The metric values, in metric order: exactly what the metric records hold.
    pub metrics: Vec<f64>,
    /// Only this module builds one.
    #[allow(dead_code)]
    sealed: Sealed,
}

/// The engine: a world, its pending events, the clock and the trace.
pub struct Simulation<W: World> {
    /// The modelled system.
    pub world: W,
    sched: Scheduler<W::Event>,
    events: u64,
}

impl<W: World> Simulation<W> {
    /// A simulation at time zero that keeps the running digest.
    pub fn new(world: W) -> Self {
        Self::with_trace(world, Trace::digest_only())
    }
    /// A simulation with a given trace sink.
    pub fn with_trace(world: W, trace: Trace) -> Self {
        Simulation {
            world,
            sched: Scheduler {
                now: SimTime::ZERO,
                queue: EventQueue::with_capacity(1024),
                stopped: false,
                trace,
            },
            events: 0,
        }
    }
    /// Start a new run with `trace` on this simulation: time zero, no event handled, nothing
    /// pending (the queue keeps its allocation), the world left as it is. For a model that
    /// resets its world in place for the next run ([`crate::model::Model::reset`]), which
    /// then schedules the initial events.
    pub fn restart(&mut self, trace: Trace) {
        self.sched.queue.clear();
        self.sched.now = SimTime::ZERO;
        self.sched.stopped = false;
        self.sched.trace = trace;
        self.events = 0;
    }
    /// Schedule an event from outside the world (initial events).
    pub fn schedule(&mut self, at: SimTime, event: W::Event) {
        self.sched.at(at, event);
    }
    /// [`Scheduler::reserve`] from outside the world (initial events).
    pub fn reserve(&mut self) -> u64 {
        self.sched.reserve()
    }
    /// [`Scheduler::at_reserved`] from outside the world (initial events).
    pub fn schedule_reserved(&mut self, at: SimTime, seq: u64, event: W::Event) {
        self.sched.at_reserved(at, seq, event);
    }
    /// The current time.
    pub fn now(&self) -> SimTime {
        self.sched.now
    }
    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// Pending events.
    pub fn pending(&self) -> usize {
        self.sched.queue.len()
    }
    /// The trace (record counts).
    pub fn trace(&self) -> &Trace {
        &self.sched.trace
    }
    /// Record a draw made outside the loop (set-up code), stamped with the current time.
    pub fn draw(&mut self, r: &TraceRecord) {
        self.sched.draw(r);
    }
    /// The world and the draw sink at the current time, for end-of-run code that draws (an
    /// accounting interval closed when the run stops).
    pub fn world_and_draws(&mut self) -> (&mut W, Draws<'_>) {
        (&mut self.world, self.sched.draws())
    }

    /// Handle events until the queue is empty, the world stops, or the next event is later
    /// than `horizon` (events exactly at the horizon are handled).
    pub fn run_until(&mut self, horizon: SimTime) -> Stop {
        self.run_while(horizon, |_| true)
    }

    /// Handle events while `keep_going(world)` holds (checked before each event), up to
    /// `horizon`; returns [`Stop::Stopped`] when the predicate ends the run.
    pub fn run_while(&mut self, horizon: SimTime, mut keep_going: impl FnMut(&W) -> bool) -> Stop {
        self.sched.stopped = false;
        while keep_going(&self.world) {
            let Some(t) = self.sched.queue.peek_time() else {
                return Stop::Empty;
            };
            if t > horizon {
                self.sched.now = horizon;
                return Stop::Horizon;
            }
            let (t, ev) = self.sched.queue.pop().expect("peeked");
            self.sched.now = t;
            self.sched.trace.event(t, &ev.record());
            self.world.handle(t, ev, &mut self.sched);
            self.events += 1;
            if self.sched.stopped {
                return Stop::Stopped;
            }
        }
        Stop::Stopped
    }

    /// The digest of the records so far (64 hex characters): events and draws, no metrics.
    /// For kernel benchmarks and tests; a model run ends with [`Self::close_with_metrics`].
    pub fn digest_hex(&mut self) -> String {
        self.sched.trace.digest_hex()
    }

    /// End the run: record the final metric values (`names[i]`, `values[i]`, in metric order)
    /// as metric records, flush the JSONL file, take the digest, and hand back the world with
    /// the [`RunEnd`]. This is the only way to get a `RunEnd`, so every model's figures are
    /// in its digest. Every draw must be recorded before (see [`Self::world_and_draws`]);
    /// `end` is the current time, which [`Simulation::run_until`] leaves at the horizon when
    /// it stops there.
    ///
    /// Panics if `names` and `values` differ in length (a model bug, not an input error).
    pub fn close_with_metrics<'a>(
        mut self,
        names: impl IntoIterator<Item = &'a str>,
        values: Vec<f64>,
    ) -> (W, RunEnd) {
        let names: Vec<&str> = names.into_iter().collect();
        let names_digest = trace::metric_names_digest(names.iter().copied());
        let end = self.end_with_metrics(&names_digest, names, values);
        (self.world, end)
    }

    /// [`Self::close_with_metrics`] keeping the simulation (for a world reused by the next
    /// run, after [`Self::restart`]); the trace is spent: restart before running again.
    /// `names_digest` is [`trace::metric_names_digest`] of `names` (a model's metric set
    /// keeps it: [`crate::model::MetricSet::names_digest`]); debug builds check it.
    pub fn end_with_metrics<'a>(
        &mut self,
        names_digest: &[u8; 32],
        names: impl IntoIterator<Item = &'a str>,
        values: Vec<f64>,
    ) -> RunEnd {
        self.sched.trace.metric_names(names_digest);
        let mut n = 0usize;
        #[cfg(debug_assertions)]
        let mut seen: Vec<&str> = Vec::new();
        for (i, name) in names.into_iter().enumerate() {
            #[cfg(debug_assertions)]
            seen.push(name);
            let v = *values
                .get(i)
                .unwrap_or_else(|| panic!("metric `{name}` has no value"));
            self.sched.trace.metric(i as u32, name, v);
            n += 1;
        }
        assert_eq!(n, values.len(), "more metric values than metric names");
        #[cfg(debug_assertions)]
        assert_eq!(
            &trace::metric_names_digest(seen),
            names_digest,
            "the metric-names digest is not that of the names"
        );
        let trace = &mut self.sched.trace;
        RunEnd {
            end: self.sched.now,
            events: self.events,
            trace_error: trace.finish().err().map(|e| e.to_string()),
            digest: trace.digest_hex(),
            metrics: values,
            sealed: Sealed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    struct Tick(u32);
    impl Traced for Tick {
        fn record(&self) -> TraceRecord {
            TraceRecord {
                component: "tick",
                index: self.0,
                kind: "tick",
                a: 0,
                b: 0,
            }
        }
    }
    struct Log(Vec<u32>);
    impl World for Log {
        type Event = Tick;
        fn handle(&mut self, _now: SimTime, e: Tick, _s: &mut Scheduler<Tick>) {
            self.0.push(e.0);
        }
    }

    #[test]
    fn ties_pop_fifo() {
        let mut sim = Simulation::new(Log(vec![]));
        for i in 0..100 {
            sim.schedule(SimTime(5), Tick(i));
        }
        sim.schedule(SimTime(1), Tick(1000));
        assert_eq!(sim.run_until(SimTime::MAX), Stop::Empty);
        let mut want = vec![1000];
        want.extend(0..100);
        assert_eq!(sim.world.0, want);
    }

    #[test]
    fn horizon_is_inclusive() {
        let mut sim = Simulation::new(Log(vec![]));
        sim.schedule(SimTime(10), Tick(1));
        sim.schedule(SimTime(11), Tick(2));
        assert_eq!(sim.run_until(SimTime(10)), Stop::Horizon);
        assert_eq!(sim.world.0, vec![1]);
        assert_eq!(sim.now(), SimTime(10));
    }
}
