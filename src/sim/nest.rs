//! One world embedded in another: a host world whose event enum has a variant per component
//! world (`Rollout(rollout::Event)`, `Pool { pool, ev }`) runs each component's own `handle`
//! against a [`Nested`] scheduler of the component's event type; [`Scheduler::nest`] moves
//! what the component scheduled into the host's queue, each event mapped by the host's `wrap`
//! (the same idea as `MutexCtx::wrap` of the connpool model's Go mutex, for a whole world).
//!
//! Nothing of the component changes: its events pop in the order the component alone would
//! pop them (the moved events keep their relative order: [`super::EventQueue`] pops equal
//! times in insertion order, and they are pushed into the host's queue in that order, after
//! everything the host scheduled before), its draw records go to the host's trace at the
//! same instant, and its `stop()` is reported to the host ([`Nested::stopped`]) instead of
//! ending the run.

use super::{EventQueue, Scheduler, SimTime, Simulation, Trace, World};

/// A component world's scheduler inside a host world (see the module doc). It holds no
/// event between two [`Scheduler::nest`] calls.
pub struct Nested<F> {
    s: Scheduler<F>,
}

impl<F: Copy> Default for Nested<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Copy> Nested<F> {
    /// An empty nested scheduler (its placeholder trace records nothing: the host's trace is
    /// swapped in for each call).
    pub fn new() -> Self {
        Nested {
            s: Scheduler {
                now: SimTime::ZERO,
                queue: EventQueue::new(),
                stopped: false,
                trace: Trace::off(),
            },
        }
    }
    /// The component called `stop()` during the last [`Scheduler::nest`] call.
    pub fn stopped(&self) -> bool {
        self.s.stopped
    }

    /// The component's scheduler at `now`, for a call its host knows schedules nothing,
    /// records no draw and does not stop (e.g. `PoolWorld::serves_at_once`): no trace is
    /// swapped in and nothing is moved afterwards, which saves [`Scheduler::nest`]'s two
    /// trace swaps. Its trace records nothing, so a draw made through it would be missing
    /// from the digest: use it only where that cannot happen (a debug build checks, after
    /// the call, that nothing was scheduled: [`Self::untraced_done`]).
    #[inline]
    pub fn untraced(&mut self, now: SimTime) -> &mut Scheduler<F> {
        self.s.now = now;
        &mut self.s
    }

    /// After a call on [`Self::untraced`]: it scheduled nothing and did not stop (checked in
    /// a debug build).
    #[inline]
    pub fn untraced_done(&self) {
        debug_assert!(
            self.s.queue.is_empty() && !self.s.stopped,
            "an untraced call scheduled or stopped"
        );
    }
}

impl<E: Copy> Scheduler<E> {
    /// Run `f` (a component world's handler) with `sub` as its scheduler, at this instant
    /// and on this run's trace; then move every event it scheduled into this queue, mapped by
    /// `wrap`, in the order they would have popped. The component's `stop()` does not stop
    /// the host: read [`Nested::stopped`].
    #[inline]
    pub fn nest<F: Copy, R>(
        &mut self,
        sub: &mut Nested<F>,
        wrap: impl Fn(F) -> E,
        f: impl FnOnce(&mut Scheduler<F>) -> R,
    ) -> R {
        let n = &mut sub.s;
        n.now = self.now;
        n.stopped = false;
        std::mem::swap(&mut self.trace, &mut n.trace);
        let r = f(n);
        std::mem::swap(&mut self.trace, &mut n.trace);
        while let Some((t, ev)) = n.queue.pop() {
            self.queue.push(t, wrap(ev));
        }
        r
    }
}

impl<W: World> Simulation<W> {
    /// The world and its primed events, in the order they would pop, for a host world that
    /// embeds it (with [`Scheduler::nest`]). Panics if the set-up recorded a draw or handled
    /// an event (those records would be lost; a model bug, not an input error).
    pub fn into_parts(mut self) -> (W, Vec<(SimTime, W::Event)>) {
        assert!(
            self.sched.trace.draws() == 0 && self.events == 0,
            "an embedded world's set-up recorded a draw or ran an event"
        );
        let mut evs = Vec::with_capacity(self.sched.queue.len());
        while let Some(e) = self.sched.queue.pop() {
            evs.push(e);
        }
        (self.world, evs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{TraceRecord, Traced};

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Ping(u32);
    impl Traced for Ping {
        fn record(&self) -> TraceRecord {
            TraceRecord {
                component: "ping",
                index: self.0,
                kind: "ping",
                a: 0,
                b: 0,
            }
        }
    }
    /// A component: each ping schedules two more at equal times, up to a bound.
    struct Pinger(Vec<u32>);
    impl World for Pinger {
        type Event = Ping;
        fn handle(&mut self, _now: SimTime, e: Ping, s: &mut Scheduler<Ping>) {
            self.0.push(e.0);
            if e.0 < 40 {
                s.after(super::super::SimDuration(3), Ping(2 * e.0 + 1));
                s.after(super::super::SimDuration(3), Ping(2 * e.0 + 2));
            }
        }
    }
    #[derive(Clone, Copy)]
    enum Host {
        P(Ping),
    }
    impl Traced for Host {
        fn record(&self) -> TraceRecord {
            match self {
                Host::P(p) => p.record(),
            }
        }
    }
    struct HostWorld(Pinger, Nested<Ping>);
    impl World for HostWorld {
        type Event = Host;
        fn handle(&mut self, now: SimTime, e: Host, s: &mut Scheduler<Host>) {
            let Host::P(p) = e;
            let inner = &mut self.0;
            s.nest(&mut self.1, Host::P, |n| inner.handle(now, p, n));
        }
    }

    #[test]
    fn a_nested_world_runs_as_it_runs_alone() {
        let mut alone = Simulation::new(Pinger(vec![]));
        alone.schedule(SimTime(1), Ping(0));
        alone.run_until(SimTime::MAX);
        let mut host = Simulation::new(HostWorld(Pinger(vec![]), Nested::new()));
        host.schedule(SimTime(1), Host::P(Ping(0)));
        host.run_until(SimTime::MAX);
        assert_eq!(alone.world.0, host.world.0 .0);
        assert!(alone.world.0.len() > 40);
        assert_eq!(alone.digest_hex(), host.digest_hex());
    }
}
