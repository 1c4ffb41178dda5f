//! Go's `sync.Mutex` and the Go scheduler's wake-up cost, as reusable DES components.
//!
//! Sources: Go `src/sync/mutex.go` (go1.19.8; `src/internal/sync/mutex.go` in Go 1.24+, the
//! same logic) `Lock`/`lockSlow`/`Unlock`/`unlockSlow`; `src/runtime/sema.go`
//! `semacquire1`/`semrelease1`; `src/runtime/proc.go` `sync_runtime_canSpin`, `ready`,
//! `runqput` (the `runnext` slot), `goyield`.
//!
//! [`GoMutex`] is the mutex state machine: `locked`, `woken` (`mutexWoken`: a woken waiter or a
//! spinner is about to compete, so `Unlock` wakes nobody), `starving` (`mutexStarving`) and the
//! FIFO of parked goroutines on the mutex's semaphore. It owns no event enum and no clock: each
//! method takes `now` and a [`MutexCtx`] through which it schedules its own events
//! ([`MutexEvent`], mapped into the host world's event type by the `wrap` function the host
//! gives) and draws its latencies. The host decides what an acquisition does and how long it
//! holds the lock, and schedules the release itself:
//!
//! ```text
//! host: lock(op)      -> mutex.lock(now, op, ctx)   : Some(grant) = acquired now
//! host: its event     -> mutex.handle(now, ev, ctx) : Some(grant) = acquired now
//! host: on a grant    -> run the critical section, hold it for its time, then
//! host: at the release-> mutex.unlock(now, ctx)     : ns charged to the unlocker
//! ```
//!
//! The modes (the design comment of `mutex.go`):
//! - **Normal**: a newcomer that finds the mutex unlocked and not starving takes it at once,
//!   even with waiters queued (*barging*); one that finds it locked may spin (at most 4
//!   iterations, [`GoSched::can_spin`]) and then parks at the tail. `Unlock` wakes the head
//!   (unless a waiter is already woken or a spinner announced itself); the woken goroutine runs
//!   after the scheduler's delay and competes: it takes the mutex if it is free, else it parks
//!   again **at the front** (LIFO requeue; its wait clock keeps running).
//! - A woken waiter that has waited more than 1 ms in total (`starvationThresholdNs`, measured
//!   from its first park) and loses again switches the mutex to **starvation** mode: `Unlock`
//!   hands ownership straight to the head (the mutex stays owned while the new owner is being
//!   scheduled), newcomers neither barge nor spin and park at the tail. The owner that got the
//!   mutex by handoff switches back to normal if it waited under 1 ms or was the last waiter.
//!
//! Simplifications: a spinner re-checks the mutex only at the end of each spin iteration; the
//! CAS races of one instant are resolved in event order; a handed-off owner runs after
//! [`GoSched::handoff`] (`semrelease1` with `handoff = true` puts it in the unlocker's
//! `runnext` and the unlocker yields), and the unlocker is charged its semaphore release plus
//! the time until it is scheduled again.

use crate::model::dist::DurationDist;
use crate::sim::{Scheduler, SimDuration, SimRng, SimTime};
use std::collections::VecDeque;

/// `starvationThresholdNs` (Go `sync/mutex.go`): 1 ms.
pub const STARVATION_THRESHOLD_NS: u64 = 1_000_000;
/// `active_spin` (Go `runtime/lock_futex.go`): at most 4 spin iterations per `Lock` attempt.
pub const ACTIVE_SPIN: u8 = 4;

/// The Go scheduler as the pool sees it: `GOMAXPROCS` processors, a count of goroutines that
/// are runnable and not yet running, and what a wake-up costs.
///
/// A readied goroutine runs after `wake` (one `schedule()`, a cold stack, the waker finishing
/// its burst) plus a queueing term: with `R` goroutines already runnable on `P` processors it
/// waits behind `max(0, R + 1 - P) / P` bursts of `burst` each (the local run queues drain
/// FIFO; `runtime/proc.go` `runqput`, `findRunnable`). The waker pays `semrelease` per wake
/// (`semrelease1`: root lock, treap dequeue, `goready`).
#[derive(Clone, Debug)]
pub struct GoSched {
    /// `GOMAXPROCS`.
    pub gomaxprocs: u32,
    /// Base delay from readied to running.
    pub wake: DurationDist,
    /// CPU burst of one runnable goroutine ahead in the queue (ns).
    pub burst_ns: u64,
    /// Charged to the waker per semaphore release (ns).
    pub semrelease_ns: u64,
    /// Starvation-mode handoff: unlock to the new owner running (`runnext` + `goyield`).
    pub handoff: DurationDist,
    /// Spinning allowed at all (`sync_runtime_canSpin` also needs `GOMAXPROCS > 1`).
    pub spin: bool,
    /// One spin iteration: `procyield(30)` (ns).
    pub spin_iter_ns: u64,
    /// Goroutines readied and not yet running.
    pub runnable: u32,
    /// Most goroutines runnable at once.
    pub runnable_max: u32,
    /// Wake-ups drawn, and the sum of their delays (ns).
    pub wakes: u64,
    /// Sum of wake delays (ns).
    pub wake_ns: u128,
}

impl GoSched {
    /// The delay of a goroutine readied now; it counts as runnable until [`GoSched::ran`].
    pub fn ready(&mut self, rng: &mut SimRng) -> u64 {
        let r = self.runnable as u64;
        self.runnable += 1;
        self.runnable_max = self.runnable_max.max(self.runnable);
        let p = self.gomaxprocs.max(1) as u64;
        let queue = if self.burst_ns == 0 {
            0
        } else {
            (r + 1).saturating_sub(p).saturating_mul(self.burst_ns) / p
        };
        let d = self.wake.sample(rng).as_nanos().saturating_add(queue);
        self.wakes += 1;
        self.wake_ns += d as u128;
        d
    }
    /// A goroutine readied by [`GoSched::ready`] runs.
    pub fn ran(&mut self) {
        debug_assert!(self.runnable > 0);
        self.runnable = self.runnable.saturating_sub(1);
    }
    /// `sync_runtime_canSpin` for iteration `iter`: spinning on, more than one P, another P
    /// running (the lock holder; the caller only asks while the mutex is locked), and the
    /// spinner's own run queue empty (here: fewer runnable goroutines than the other Ps).
    pub fn can_spin(&self, iter: u8) -> bool {
        self.spin
            && iter < ACTIVE_SPIN
            && self.gomaxprocs > 1
            && self.runnable + 1 < self.gomaxprocs
    }
    /// Draw a starvation-mode handoff latency.
    pub fn handoff_ns(&mut self, rng: &mut SimRng) -> u64 {
        self.handoff.sample(rng).as_nanos()
    }
}

/// The mutex's own events, which the host maps into its event enum and hands back to
/// [`GoMutex::handle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutexEvent {
    /// Goroutine `g`, woken by `Unlock` (normal mode) or handed ownership (starvation mode),
    /// runs.
    Runs {
        /// The goroutine's slot.
        g: u32,
    },
    /// Goroutine `g` finished one spin iteration.
    Spun {
        /// The goroutine's slot.
        g: u32,
    },
}

impl MutexEvent {
    /// Kind name and slot, for the host's trace record.
    pub fn describe(self) -> (&'static str, u32) {
        match self {
            MutexEvent::Runs { g } => ("mutex_runs", g),
            MutexEvent::Spun { g } => ("mutex_spun", g),
        }
    }
}

/// What a [`GoMutex`] method needs from its host: the scheduler (and how to wrap a
/// [`MutexEvent`] into the host's event), the Go scheduler model and a random stream.
pub struct MutexCtx<'a, E> {
    /// The host's scheduler.
    pub s: &'a mut Scheduler<E>,
    /// Maps a mutex event into the host's event type.
    pub wrap: fn(MutexEvent) -> E,
    /// The goroutine scheduler.
    pub sched: &'a mut GoSched,
    /// The stream wake and handoff latencies are drawn from.
    pub rng: &'a mut SimRng,
}

impl<E: Copy> MutexCtx<'_, E> {
    fn after(&mut self, ns: u64, ev: MutexEvent) {
        self.s.after(SimDuration(ns), (self.wrap)(ev));
    }
}

/// A goroutine inside `Lock`.
#[derive(Clone, Copy, Debug)]
struct Gor<T> {
    op: T,
    /// When `Lock` was called.
    asked: SimTime,
    /// First park (`waitStartTime`); `None` before the first park.
    wait_start: Option<SimTime>,
    /// Spin iterations since the last wake (`iter`).
    iter: u8,
    /// `awoke`: this goroutine holds the `mutexWoken` flag.
    awoke: bool,
    /// `starving`: it has waited more than 1 ms.
    starving: bool,
    /// Ownership was handed to it (starvation mode).
    handed: bool,
}

/// An acquisition: the operation and when its `Lock` was called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant<T> {
    /// The operation that now holds the mutex.
    pub op: T,
    /// When it asked.
    pub asked: SimTime,
}

/// Counters of a [`GoMutex`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MutexStats {
    /// Acquisitions.
    pub acquisitions: u64,
    /// Newcomers that took the mutex while waiters were parked or a woken one was on its way.
    pub barges: u64,
    /// Spin iterations.
    pub spins: u64,
    /// Woken waiters that lost to a newcomer and parked again at the front.
    pub lifo_requeues: u64,
    /// Switches into starvation mode.
    pub starvation_entries: u64,
    /// Switches back to normal mode.
    pub starvation_exits: u64,
    /// Starvation-mode handoffs.
    pub handoffs: u64,
    /// Normal-mode wake-ups by `Unlock`.
    pub wakeups: u64,
    /// Time spent in starvation mode (ns, closed at each switch and by [`GoMutex::close`]).
    pub starving_ns: u64,
}

/// Go's `sync.Mutex` over operations of type `T` (see the module doc).
#[derive(Clone, Debug)]
pub struct GoMutex<T> {
    /// Owned (in starvation mode also while a handed-off owner is being scheduled).
    locked: bool,
    /// `mutexWoken`.
    woken: bool,
    /// `mutexStarving`.
    starving: bool,
    /// Since when it is starving.
    starving_since: SimTime,
    /// Parked goroutines, head first.
    queue: VecDeque<u32>,
    /// Goroutine slots.
    gs: Vec<Gor<T>>,
    /// Free slots.
    free: Vec<u32>,
    /// Counters.
    pub stats: MutexStats,
}

impl<T: Copy> Default for GoMutex<T> {
    fn default() -> Self {
        GoMutex {
            locked: false,
            woken: false,
            starving: false,
            starving_since: SimTime::ZERO,
            queue: VecDeque::new(),
            gs: Vec::new(),
            free: Vec::new(),
            stats: MutexStats::default(),
        }
    }
}

impl<T: Copy> GoMutex<T> {
    /// Owned.
    pub fn is_locked(&self) -> bool {
        self.locked
    }
    /// In starvation mode.
    pub fn is_starving(&self) -> bool {
        self.starving
    }
    /// The `mutexWoken` flag.
    pub fn is_woken(&self) -> bool {
        self.woken
    }
    /// Goroutines parked on the semaphore.
    pub fn parked(&self) -> usize {
        self.queue.len()
    }
    /// The parked goroutines' operations, head first.
    pub fn parked_ops(&self) -> impl Iterator<Item = T> + '_ {
        self.queue.iter().map(|g| self.gs[*g as usize].op)
    }

    /// `Lock` called at `now` for `op`: `Some` if it acquired at once (fast path or barging).
    pub fn lock<E: Copy>(&mut self, now: SimTime, op: T, ctx: &mut MutexCtx<'_, E>) -> Option<Grant<T>> {
        if !self.locked && !self.starving {
            if !self.queue.is_empty() || self.woken {
                self.stats.barges += 1;
            }
            self.locked = true;
            self.stats.acquisitions += 1;
            return Some(Grant { op, asked: now });
        }
        let g = Gor {
            op,
            asked: now,
            wait_start: None,
            iter: 0,
            awoke: false,
            starving: false,
            handed: false,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.gs[id as usize] = g;
                id
            }
            None => {
                self.gs.push(g);
                (self.gs.len() - 1) as u32
            }
        };
        self.compete(now, id, ctx)
    }

    /// One mutex event of this mutex: `Some` if a goroutine acquired.
    pub fn handle<E: Copy>(
        &mut self,
        now: SimTime,
        ev: MutexEvent,
        ctx: &mut MutexCtx<'_, E>,
    ) -> Option<Grant<T>> {
        match ev {
            MutexEvent::Runs { g } => {
                let gr = &mut self.gs[g as usize];
                let waited = now.0 - gr.wait_start.expect("a parked goroutine").0;
                gr.starving = gr.starving || waited > STARVATION_THRESHOLD_NS;
                if gr.handed {
                    // Starvation mode: ownership is ours; leave the mode if we waited < 1 ms
                    // or were the last waiter.
                    debug_assert!(self.locked && self.starving);
                    if !gr.starving || self.queue.is_empty() {
                        self.set_starving(now, false);
                    }
                    self.stats.acquisitions += 1;
                    return Some(self.release_slot(g));
                }
                ctx.sched.ran();
                gr.awoke = true;
                gr.iter = 0;
                self.compete(now, g, ctx)
            }
            MutexEvent::Spun { g } => {
                self.gs[g as usize].iter += 1;
                self.compete(now, g, ctx)
            }
        }
    }

    /// `Unlock` at `now` by the holder: wake the head (normal mode) or hand it the mutex
    /// (starvation mode). Returns the time charged to the unlocker before it runs on (ns).
    pub fn unlock<E: Copy>(&mut self, now: SimTime, ctx: &mut MutexCtx<'_, E>) -> u64 {
        debug_assert!(self.locked, "unlock of an unlocked mutex");
        self.locked = false;
        if self.starving {
            let Some(g) = self.queue.pop_front() else {
                self.set_starving(now, false);
                return 0;
            };
            self.locked = true;
            self.gs[g as usize].handed = true;
            self.stats.handoffs += 1;
            let d = ctx.sched.handoff_ns(ctx.rng);
            ctx.after(ctx.sched.semrelease_ns.saturating_add(d), MutexEvent::Runs { g });
            // `goyield`: the unlocker waits in its P's run queue behind the new owner.
            let resume = ctx.sched.ready(ctx.rng);
            ctx.sched.ran();
            return ctx.sched.semrelease_ns.saturating_add(d).saturating_add(resume);
        }
        if self.woken || self.queue.is_empty() {
            return 0;
        }
        let g = self.queue.pop_front().expect("a waiter");
        self.woken = true;
        self.stats.wakeups += 1;
        let d = ctx.sched.ready(ctx.rng);
        ctx.after(ctx.sched.semrelease_ns.saturating_add(d), MutexEvent::Runs { g });
        ctx.sched.semrelease_ns
    }

    /// Close the starvation-time account at the end of a run.
    pub fn close(&mut self, now: SimTime) {
        if self.starving {
            self.stats.starving_ns += now.0.saturating_sub(self.starving_since.0);
            self.starving_since = now;
        }
    }

    /// The `lockSlow` loop body for goroutine `g` (not holding, not parked).
    fn compete<E: Copy>(&mut self, now: SimTime, g: u32, ctx: &mut MutexCtx<'_, E>) -> Option<Grant<T>> {
        let gr = self.gs[g as usize];
        if !self.locked && !self.starving {
            if gr.awoke {
                self.woken = false;
            }
            self.locked = true;
            self.stats.acquisitions += 1;
            return Some(self.release_slot(g));
        }
        if !self.starving && ctx.sched.can_spin(gr.iter) {
            if !gr.awoke && !self.woken && !self.queue.is_empty() {
                self.woken = true;
                self.gs[g as usize].awoke = true;
            }
            self.stats.spins += 1;
            ctx.after(ctx.sched.spin_iter_ns, MutexEvent::Spun { g });
            return None;
        }
        // Park.
        if gr.starving && self.locked && !self.starving {
            self.set_starving(now, true);
        }
        if gr.awoke {
            self.woken = false;
        }
        let gm = &mut self.gs[g as usize];
        gm.awoke = false;
        match gm.wait_start {
            Some(_) => {
                self.queue.push_front(g);
                self.stats.lifo_requeues += 1;
            }
            None => {
                gm.wait_start = Some(now);
                self.queue.push_back(g);
            }
        }
        None
    }

    fn set_starving(&mut self, now: SimTime, on: bool) {
        if on == self.starving {
            return;
        }
        if on {
            self.starving_since = now;
            self.stats.starvation_entries += 1;
        } else {
            self.stats.starving_ns += now.0.saturating_sub(self.starving_since.0);
            self.stats.starvation_exits += 1;
        }
        self.starving = on;
    }

    fn release_slot(&mut self, g: u32) -> Grant<T> {
        let gr = self.gs[g as usize];
        self.free.push(g);
        Grant {
            op: gr.op,
            asked: gr.asked,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Hand-worked sequences: each expected time below follows from the rules in the module
    //! doc with fixed latencies (wake 10 us, handoff 1 us, no semaphore charge, no queueing).
    use super::*;
    use crate::sim::{stream, Simulation, TraceRecord, Traced, World};

    #[derive(Clone, Copy, Debug)]
    enum Ev {
        /// Goroutine `op` calls Lock and will hold for `hold_us`.
        Lock { op: u32, hold_us: u64 },
        Release,
        M(MutexEvent),
    }
    impl Traced for Ev {
        fn record(&self) -> TraceRecord {
            TraceRecord {
                component: "test",
                index: 0,
                kind: "ev",
                a: 0,
                b: 0,
            }
        }
    }
    struct W {
        m: GoMutex<(u32, u64)>,
        sched: GoSched,
        rng: SimRng,
        /// (acquire time in us, op)
        log: Vec<(f64, u32)>,
        pending: Option<Grant<(u32, u64)>>,
    }
    fn wrap(ev: MutexEvent) -> Ev {
        Ev::M(ev)
    }
    impl W {
        fn granted(&mut self, now: SimTime, g: Grant<(u32, u64)>, s: &mut Scheduler<Ev>) {
            self.log.push((now.0 as f64 / 1e3, g.op.0));
            s.after(SimDuration(g.op.1 * 1_000), Ev::Release);
        }
    }
    impl World for W {
        type Event = Ev;
        fn handle(&mut self, now: SimTime, ev: Ev, s: &mut Scheduler<Ev>) {
            let mut ctx = MutexCtx {
                s,
                wrap,
                sched: &mut self.sched,
                rng: &mut self.rng,
            };
            let g = match ev {
                Ev::Lock { op, hold_us } => self.m.lock(now, (op, hold_us), &mut ctx),
                Ev::Release => {
                    self.m.unlock(now, &mut ctx);
                    None
                }
                Ev::M(e) => self.m.handle(now, e, &mut ctx),
            };
            self.pending = g;
            if let Some(g) = self.pending.take() {
                self.granted(now, g, s);
            }
        }
    }
    fn sched(spin: bool, gomaxprocs: u32) -> GoSched {
        GoSched {
            gomaxprocs,
            wake: DurationDist::fixed(SimDuration::from_nanos(10_000)),
            burst_ns: 0,
            semrelease_ns: 0,
            handoff: DurationDist::fixed(SimDuration::from_nanos(1_000)),
            spin,
            spin_iter_ns: 1_000,
            runnable: 0,
            runnable_max: 0,
            wakes: 0,
            wake_ns: 0,
        }
    }
    /// Acquisitions (time in us, op) and the mutex at the end.
    type Outcome = (Vec<(f64, u32)>, GoMutex<(u32, u64)>);
    /// Run `locks` (time in us, op, hold in us) and return the acquisitions and the mutex.
    fn run(spin: bool, locks: &[(f64, u32, u64)]) -> Outcome {
        let w = W {
            m: GoMutex::default(),
            sched: sched(spin, 4),
            rng: stream(1, "test", 0),
            log: vec![],
            pending: None,
        };
        let mut sim = Simulation::new(w);
        for (t, op, hold_us) in locks {
            sim.schedule(
                SimTime((t * 1e3) as u64),
                Ev::Lock {
                    op: *op,
                    hold_us: *hold_us,
                },
            );
        }
        sim.run_until(SimTime(1_000_000_000));
        let mut m = sim.world.m.clone();
        m.close(SimTime((2_000.0 * 1e3) as u64));
        (sim.world.log.clone(), m)
    }

    /// A newcomer (C) takes the mutex while the woken waiter (B) is on its way; B loses and
    /// goes back to the front, then gets it at C's unlock.
    #[test]
    fn barging_and_lifo_requeue_of_the_woken_loser() {
        // A 0..100; B parks at 10; A's unlock wakes B (runs at 110); C barges at 105 and
        // holds to 155; B loses at 110 (waited 100 us, not starving), requeued at the front;
        // C's unlock wakes B, which runs and acquires at 165.
        let (log, m) = run(false, &[(0.0, 1, 100), (10.0, 2, 50), (105.0, 3, 50)]);
        assert_eq!(log, vec![(0.0, 1), (105.0, 3), (165.0, 2)]);
        assert_eq!(m.stats.barges, 1);
        assert_eq!(m.stats.lifo_requeues, 1);
        assert_eq!(m.stats.wakeups, 2);
        assert_eq!(m.stats.starvation_entries, 0);
        assert!(!m.is_locked() && !m.is_woken() && m.parked() == 0);
    }

    /// A waiter that has waited more than 1 ms and loses again switches the mutex to
    /// starvation mode; newcomers then queue at the tail; ownership is handed off in FIFO
    /// order; the owner that waited under 1 ms switches it back.
    #[test]
    fn starvation_entry_after_1ms_and_exit() {
        let (log, m) = run(
            false,
            &[
                (0.0, 1, 600),    // A 0..600
                (1.0, 2, 50),     // B parks at 1
                (605.0, 3, 600),  // C barges at 605 (B woken at 600, runs at 610: loses)
                (1210.0, 4, 100), // D barges at 1210 (B woken at 1205, runs 1215: loses, > 1 ms)
                (1250.0, 5, 10),  // E: starving, parks at the tail (no barging)
                (1320.0, 6, 5),   // F: starving, parks behind E
            ],
        );
        // B at 1215 waited 1214 us > 1 ms and lost: starvation on. D's unlock at 1310 hands
        // to B (runs at 1311; B starving and E, F queued: stays starving). B's unlock at 1361
        // hands to E (1362); E waited 112 us < 1 ms: back to normal. E's unlock at 1372
        // wakes F (normal mode, 10 us): F acquires at 1382.
        assert_eq!(
            log,
            vec![
                (0.0, 1),
                (605.0, 3),
                (1210.0, 4),
                (1311.0, 2),
                (1362.0, 5),
                (1382.0, 6)
            ]
        );
        assert_eq!(m.stats.barges, 2);
        assert_eq!(m.stats.lifo_requeues, 2);
        assert_eq!(m.stats.starvation_entries, 1);
        assert_eq!(m.stats.starvation_exits, 1);
        assert_eq!(m.stats.handoffs, 2);
        // Starving from 1215 to 1362 us.
        assert_eq!(m.stats.starving_ns, 147_000);
    }

    /// The last waiter leaves starvation mode even if it waited over 1 ms.
    #[test]
    fn the_last_waiter_ends_starvation() {
        let (log, m) = run(
            false,
            &[(0.0, 1, 600), (1.0, 2, 50), (605.0, 3, 600), (1210.0, 4, 100)],
        );
        // As above up to 1215 (starvation on); D's unlock at 1310 hands to B (1311), the
        // last waiter: normal mode although it waited 1310 us.
        assert_eq!(log, vec![(0.0, 1), (605.0, 3), (1210.0, 4), (1311.0, 2)]);
        assert_eq!(m.stats.starvation_entries, 1);
        assert_eq!(m.stats.starvation_exits, 1);
        assert!(!m.is_starving());
        assert_eq!(m.stats.starving_ns, 96_000);
    }

    /// A spinner takes the mutex at the end of the iteration in which it was released; one
    /// that spins 4 iterations in vain parks and is woken like any waiter.
    #[test]
    fn spinning_then_parking() {
        // A 0..3; B at 0.5 spins: checks at 1.5, 2.5 (locked), 3.5 (free): acquires at 3.5.
        let (log, m) = run(true, &[(0.0, 1, 3), (0.5, 2, 1)]);
        assert_eq!(log, vec![(0.0, 1), (3.5, 2)]);
        assert_eq!(m.stats.spins, 3);
        assert_eq!(m.stats.wakeups, 0);
        // A 0..10; B spins at 0, 1, 2, 3 and parks at 4; A's unlock wakes it: 20.
        let (log, m) = run(true, &[(0.0, 1, 10), (0.0, 2, 1)]);
        assert_eq!(log, vec![(0.0, 1), (20.0, 2)]);
        assert_eq!(m.stats.spins, 4);
        assert_eq!(m.stats.wakeups, 1);
        // Without spinning B parks at once: same outcome here, no spins.
        let (log, m) = run(false, &[(0.0, 1, 10), (0.0, 2, 1)]);
        assert_eq!(log, vec![(0.0, 1), (20.0, 2)]);
        assert_eq!(m.stats.spins, 0);
    }

    /// The run-queue term: with R goroutines already runnable on P processors a new one
    /// waits behind max(0, R + 1 - P) / P bursts.
    #[test]
    fn wake_delay_grows_with_runnable_goroutines_per_core() {
        let mut g = sched(false, 4);
        g.burst_ns = 1_000;
        let mut rng = stream(1, "test", 0);
        let d: Vec<u64> = (0..8).map(|_| g.ready(&mut rng)).collect();
        // 10 us base; R = 0..7 ahead: 0, 0, 0, 0, then (R+1-4)/4 us.
        assert_eq!(d, vec![10_000, 10_000, 10_000, 10_000, 10_250, 10_500, 10_750, 11_000]);
        assert_eq!(g.runnable, 8);
        g.ran();
        assert_eq!(g.runnable, 7);
        assert!(!g.can_spin(0), "7 runnable on 4 Ps: no spinning");
        let g1 = sched(true, 1);
        assert!(!g1.can_spin(0), "GOMAXPROCS 1: no spinning");
        let g4 = sched(true, 4);
        assert!(g4.can_spin(3) && !g4.can_spin(4));
    }

    /// A spinner that announces itself (`mutexWoken`) stops the unlock from waking the
    /// parked head; the spinner takes the mutex, the head is woken at the spinner's unlock.
    #[test]
    fn a_spinner_suppresses_the_wakeup() {
        // A 0..5; B spins at 0.1, 1.1, 2.1, 3.1 (nobody parked: it does not announce
        // itself) and parks at 4.1. C at 4.5 spins with B parked: sets woken;
        // A's unlock at 5 wakes nobody; C acquires at 5.5 and holds to 6.5; its unlock
        // wakes B (16.5).
        let (log, m) = run(true, &[(0.0, 1, 5), (0.1, 2, 1), (4.5, 3, 1)]);
        assert_eq!(log, vec![(0.0, 1), (5.5, 3), (16.5, 2)]);
        assert_eq!(m.stats.wakeups, 1);
    }
}
