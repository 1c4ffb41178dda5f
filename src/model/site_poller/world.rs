//! The site-poller world: the sites' truth, the operator's trackers, and the poll loop with
//! its two drivers. Its events are in [`super::event`], the scripted faults in
//! [`super::faults`], the failover layer in [`super::failover`].
//!
//! One Poll (`TopologyManager.Poll`, ShipStream/bloodraven `internal/controller/topology.go`
//! `TopologyManager.Poll`) is three events:
//! - `PollStart`: every site is probed in parallel; each probe's outcome is fixed by the site's
//!   truth at that instant, its latency drawn (an answer slower than
//!   min(`driver_timeout`, `probe_timeout`) is an error at that deadline);
//! - `ProbesDone` when the slowest probe returns: `computeState` + bypass per site, the
//!   transitions, the cross-site layer (a promotion runs inside the Poll), then the serial
//!   extras (fence writable non-promotables, `SHOW REPLICA STATUS` per ReadOnly site, other
//!   work), whose latencies follow the truth at `ProbesDone`;
//! - `PollEnd`: the next interval (`adaptivePollInterval`) and the next start (driver).

pub use super::event::Event;
pub use super::faults::{Down, FaultRec};
pub use super::failover::FailoverRec;
use super::params::{Answer, FaultKind, FaultPhase, LoopDriver, Role, SitePollerParams};
use super::tracker::{Backoff, ProbeResult, SiteState, SiteTracker, Thresholds};
use crate::sim::rng::{stream, uniform, uniform01, LazyRng};
use crate::sim::{
    Scheduler, SimDuration, SimRng, SimTime, Simulation, Trace, TraceRecord, World,
};

/// One site: its truth and the operator's tracker of it.
pub struct Site {
    /// Name.
    pub(crate) name: String,
    /// `role == primary-candidate`.
    pub(crate) promotable: bool,
    /// What it answers when reachable.
    pub(crate) answer: Answer,
    /// Why it does not answer, if it does not.
    pub(crate) down: Option<Down>,
    /// Current per-probe transient failure probability.
    pub(crate) flaky_p: f64,
    /// The operator's `siteTracker`.
    pub(crate) tracker: SiteTracker,
    /// Its stream (`"site"`, index): probe latencies, flaky draws, extra-query latencies.
    pub(crate) rng: SimRng,
    /// This Poll's probe result.
    pub(crate) result: ProbeResult,
    /// This Poll's probe error was a transient (flaky) one on an answering site.
    pub(crate) flaky_error: bool,
    /// This Poll's probe latency.
    pub(crate) latency: SimDuration,
}

/// A state transition the operator logged (`state transition` site, from, to).
#[derive(Clone, Copy, Debug)]
pub struct TransitionRec {
    /// When (`ProbesDone` of the Poll).
    pub(crate) at: SimTime,
    /// Site index.
    pub site: u16,
    /// Previous state.
    pub from: SiteState,
    /// New state.
    pub to: SiteState,
    /// The Poll's sequence number (1 = the first Poll).
    pub(crate) poll: u64,
    /// Counters after the Poll.
    pub(crate) fail_count: u32,
    /// Counters after the Poll.
    pub(crate) recovery_count: u32,
    /// A transition to Unreachable caused by a transient error on an answering site.
    pub(crate) false_unreachable: bool,
}

/// One Poll, kept when the world logs polls.
#[derive(Clone, Debug)]
pub struct PollRec {
    /// Sequence number (1 = first).
    pub seq: u64,
    /// Start.
    pub start: SimTime,
    /// The slowest probe returned.
    pub probes_done: SimTime,
    /// The Poll returned.
    pub end: SimTime,
    /// Per site: probe result and latency.
    pub results: Vec<(ProbeResult, SimDuration)>,
    /// Per site: state after the Poll.
    pub states: Vec<SiteState>,
    /// The interval computed after the Poll.
    pub next_interval: SimDuration,
}

/// The world.
pub struct SitePollerWorld {
    /// The sites, in declared order.
    pub(crate) sites: Vec<Site>,
    /// The faults, in file order.
    pub(crate) faults: Vec<FaultRec>,
    /// Every state transition.
    pub(crate) transitions: Vec<TransitionRec>,
    /// Every Poll (only when `log_polls`).
    pub(crate) polls: Vec<PollRec>,
    /// Keep [`Self::polls`].
    pub(crate) log_polls: bool,
    /// Every promotion attempt.
    pub(crate) failovers: Vec<FailoverRec>,
    /// Promotions the cooldown blocked.
    pub(crate) failovers_blocked: u64,
    /// Polls that found more than one writable primary-candidate.
    pub(crate) split_brain_polls: u64,
    /// Polls started.
    pub(crate) poll_count: u64,
    /// Probes sent.
    pub(crate) probe_count: u64,
    /// Longest start-to-start period.
    pub(crate) max_period: SimDuration,
    /// First and latest Poll start.
    pub(crate) first_start: SimTime,
    /// Latest Poll start.
    pub(crate) last_start: SimTime,
    /// The latest full start-to-start period.
    pub(super) last_period: SimDuration,
    /// When this Poll's slowest probe returned.
    pub(super) probes_done_at: SimTime,
    /// The next Poll's start, once this one has ended.
    pub(super) next_start: Option<SimTime>,
    /// This Poll's probe results and latencies, one per site.
    pub(super) cur_results: Vec<(ProbeResult, SimDuration)>,
    /// The ticker's origin (`LoopDriver::Ticker`).
    pub(super) tick_origin: SimTime,
    /// The ticker's period, reset when the interval changes.
    pub(super) tick_period: SimDuration,
    /// When the latest promotion was recorded (the cooldown runs from it).
    pub(super) last_failover: Option<SimTime>,
    /// The site the latest promotion made primary.
    pub(super) last_target: Option<u16>,
    /// The poller's stream (`"poller"`): the other serial extras.
    pub(super) poller_rng: SimRng,
    /// The failover layer's stream (`"failover"`): step latencies, failures; lazy, since
    /// most runs never promote.
    pub(super) failover_rng: LazyRng,
    /// One stream per fault (`"fault"`, index): where in the poll period it starts and
    /// ends; lazy, since an `Exact` fault draws nothing.
    pub(super) fault_rngs: Vec<LazyRng>,
    /// The parameters.
    pub(super) p: SitePollerParams,
    /// `computeState`'s thresholds.
    pub(super) th: Thresholds,
    /// `adaptivePollInterval`'s backoff.
    pub(super) backoff: Backoff,
}

impl SitePollerWorld {
    /// A primed simulation: the first Poll at `poller.start`, each fault at its time.
    pub fn simulation(
        p: &SitePollerParams,
        seed: u64,
        trace: Trace,
        log_polls: bool,
    ) -> Simulation<SitePollerWorld> {
        let sites: Vec<Site> = p
            .sites
            .iter()
            .enumerate()
            .map(|(i, s)| Site {
                name: s.name.clone(),
                promotable: s.role == Role::PrimaryCandidate,
                answer: s.initial,
                down: None,
                flaky_p: s.flaky_p.unwrap_or(p.probes.flaky_p),
                tracker: SiteTracker::new(s.role == Role::PrimaryCandidate),
                rng: stream(seed, "site", i as u32),
                result: ProbeResult::Error,
                flaky_error: false,
                latency: SimDuration::ZERO,
            })
            .collect();
        let faults: Vec<FaultRec> = p
            .faults
            .iter()
            .map(|f| FaultRec {
                site: p.site_index(&f.site).expect("validated") as u16,
                kind: f.kind,
                nominal: SimTime::ZERO + f.at,
                start: SimTime::MAX,
                end: SimTime::MAX,
                duration: f.duration,
                expect: match f.kind {
                    FaultKind::Refused | FaultKind::Dark | FaultKind::Hang => {
                        Some(SiteState::Unreachable)
                    }
                    FaultKind::ReadOnlyFlip => Some(SiteState::ReadOnly),
                    FaultKind::WritableFlip => Some(SiteState::Writable),
                    FaultKind::Flaky { .. } => None,
                },
                detected: SimTime::MAX,
                already_believed: false,
                start_poll: 0,
                phase: f.phase,
                back_to: None,
                recovered: SimTime::MAX,
                saved_answer: Answer::ReadOnly,
                saved_down: None,
                saved_flaky: 0.0,
            })
            .collect();
        let start = SimTime::ZERO + p.poller.start;
        let world = SitePollerWorld {
            sites,
            faults,
            transitions: Vec::new(),
            polls: Vec::new(),
            log_polls,
            failovers: Vec::new(),
            failovers_blocked: 0,
            split_brain_polls: 0,
            poll_count: 0,
            probe_count: 0,
            max_period: SimDuration::ZERO,
            first_start: start,
            last_start: start,
            last_period: p.poller.poll_interval,
            probes_done_at: start,
            next_start: Some(start),
            cur_results: Vec::new(),
            tick_origin: start,
            tick_period: p.poller.poll_interval,
            last_failover: None,
            last_target: None,
            poller_rng: stream(seed, "poller", 0),
            failover_rng: LazyRng::new(seed, "failover", 0),
            fault_rngs: (0..p.faults.len())
                .map(|i| LazyRng::new(seed, "fault", i as u32))
                .collect(),
            th: Thresholds {
                failure: p.poller.failure_threshold,
                recovery: p.poller.recovery_threshold,
            },
            backoff: Backoff {
                base: p.poller.poll_interval,
                failure_threshold: p.poller.failure_threshold,
                max_exponent: p.poller.max_backoff_exponent,
                max_interval: p.poller.max_interval,
                enabled: p.poller.adaptive_backoff,
            },
            p: p.clone(),
        };
        let mut sim = Simulation::with_trace(world, trace);
        sim.schedule(start, Event::PollStart);
        for (i, f) in p.faults.iter().enumerate() {
            let at = SimTime::ZERO + f.at;
            match f.phase {
                FaultPhase::Exact => sim.schedule(at, Event::FaultStart(i as u16)),
                FaultPhase::Uniform { window } => {
                    let u = uniform(sim.world.fault_rngs[i].get(), 0.0, window.as_secs_f64());
                    sim.schedule(
                        at + SimDuration::from_secs_f64(u),
                        Event::FaultStart(i as u16),
                    );
                }
                FaultPhase::UniformOverPollPeriod => sim.schedule(at, Event::FaultDue(i as u16)),
            }
        }
        sim
    }

    /// The worst fail count over all sites (any role), which drives the backoff.
    pub(crate) fn worst_fail(&self) -> u32 {
        self.sites
            .iter()
            .map(|s| s.tracker.fail_count)
            .max()
            .unwrap_or(0)
    }

    /// Latency of one query to site `i` given its truth now (an extra, a fence, a GTID read).
    pub(super) fn query_latency(&mut self, i: usize) -> SimDuration {
        let pr = &self.p.probes;
        let s = &mut self.sites[i];
        match s.down {
            Some(Down::Refused) => pr.refused_latency.sample(&mut s.rng),
            Some(Down::Dark) => pr.driver_timeout.min(pr.probe_timeout),
            Some(Down::Hang) => pr.probe_timeout,
            None => pr
                .answer_latency
                .sample(&mut s.rng)
                .min(pr.driver_timeout.min(pr.probe_timeout)),
        }
    }

    fn poll_start(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        self.next_start = None;
        if self.poll_count > 0 {
            let period = now.since(self.last_start);
            self.last_period = period;
            self.max_period = self.max_period.max(period);
        }
        self.poll_count += 1;
        self.last_start = now;
        let pr = &self.p.probes;
        // A probe fails at whichever deadline comes first: the driver's `statusNetTimeout` or
        // the 5 s context (ShipStream/bloodraven `internal/mysql/checker.go` (`statusNetTimeout`)).
        let timeout = pr.driver_timeout.min(pr.probe_timeout);
        let mut slowest = SimDuration::ZERO;
        for (i, site) in self.sites.iter_mut().enumerate() {
            let (r, lat, flaky) = match site.down {
                Some(Down::Refused) => (
                    ProbeResult::Error,
                    pr.refused_latency.sample(&mut site.rng),
                    false,
                ),
                Some(Down::Dark) => (ProbeResult::Error, timeout, false),
                Some(Down::Hang) => (ProbeResult::Error, pr.probe_timeout, false),
                None => {
                    if site.flaky_p > 0.0 && uniform01(&mut site.rng) < site.flaky_p {
                        (
                            ProbeResult::Error,
                            pr.refused_latency.sample(&mut site.rng),
                            true,
                        )
                    } else {
                        let lat = pr.answer_latency.sample(&mut site.rng);
                        if lat >= timeout {
                            (ProbeResult::Error, timeout, false)
                        } else {
                            let r = match site.answer {
                                Answer::Writable => ProbeResult::Writable,
                                Answer::ReadOnly => ProbeResult::ReadOnly,
                            };
                            (r, lat, false)
                        }
                    }
                }
            };
            // A hung read outlives the driver deadline: it ends at the context (pre-PR #95).
            let lat = if site.down == Some(Down::Hang) {
                lat.min(pr.probe_timeout)
            } else {
                lat.min(timeout)
            };
            site.result = r;
            site.latency = lat;
            site.flaky_error = flaky;
            slowest = slowest.max(lat);
            // Only the slowest latency is an event time; each outcome reaches the trackers.
            s.draw(&TraceRecord {
                component: "probe",
                index: i as u32,
                kind: match (r, flaky) {
                    (_, true) => "flaky_error",
                    (ProbeResult::Error, false) => "error",
                    (ProbeResult::ReadOnly, false) => "read_only",
                    (ProbeResult::Writable, false) => "writable",
                },
                a: lat.as_nanos(),
                b: 0,
            });
        }
        self.probe_count += self.sites.len() as u64;
        s.after(slowest, Event::ProbesDone);
    }

    fn probes_done(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        self.probes_done_at = now;
        let mut any_transition = false;
        for i in 0..self.sites.len() {
            let site = &mut self.sites[i];
            let (from, to) = site.tracker.observe(site.result, self.th);
            if from != to {
                any_transition = true;
                self.transitions.push(TransitionRec {
                    at: now,
                    site: i as u16,
                    from,
                    to,
                    poll: self.poll_count,
                    fail_count: site.tracker.fail_count,
                    recovery_count: site.tracker.recovery_count,
                    false_unreachable: to == SiteState::Unreachable && site.flaky_error,
                });
                self.on_state(i, to, now);
            }
        }
        // Detections: this Poll started after the fault (its probes saw it) and before its end.
        for f in &mut self.faults {
            if f.detected == SimTime::MAX
                && f.start_poll < self.poll_count
                && f.start <= self.last_start
                && self.last_start < f.end
                && f.expect == Some(self.sites[f.site as usize].tracker.state)
            {
                f.detected = now;
            }
        }
        if self.log_polls {
            self.cur_results = self.sites.iter().map(|s| (s.result, s.latency)).collect();
        }
        let mut t = now;
        if self.p.failover.enabled && (any_transition || self.p.failover.retry_every_poll) {
            t = self.cross_site(t, s);
        }
        // Serial extras, in Poll order.
        if self.p.probes.fence_non_promotable {
            for i in 0..self.sites.len() {
                if !self.sites[i].promotable && self.sites[i].tracker.state == SiteState::Writable {
                    t += self.query_latency(i);
                    if self.sites[i].down.is_none() {
                        s.at(
                            t,
                            Event::SetAnswer {
                                site: i as u16,
                                writable: false,
                            },
                        );
                    }
                }
            }
        }
        if self.p.probes.replica_status_extra {
            for i in 0..self.sites.len() {
                if self.sites[i].tracker.state == SiteState::ReadOnly {
                    t += self.query_latency(i);
                }
            }
        }
        t += self.p.probes.other_extras.sample(&mut self.poller_rng);
        s.at(t, Event::PollEnd);
    }

    fn poll_end(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let interval = self.backoff.interval(self.worst_fail());
        let next = match self.p.poller.driver {
            LoopDriver::TimerAfterCycle => now + interval,
            LoopDriver::Ticker => {
                if interval != self.tick_period {
                    self.tick_origin = now;
                    self.tick_period = interval;
                    now + interval
                } else {
                    let d = self.tick_period.0;
                    let k = (self.last_start.0 - self.tick_origin.0) / d;
                    let nb = SimTime(
                        self.tick_origin
                            .0
                            .saturating_add(d.saturating_mul(k.saturating_add(1))),
                    );
                    if now < nb {
                        nb
                    } else {
                        now
                    }
                }
            }
        };
        if self.log_polls {
            self.polls.push(PollRec {
                seq: self.poll_count,
                start: self.last_start,
                probes_done: self.probes_done_at,
                end: now,
                results: std::mem::take(&mut self.cur_results),
                states: self.sites.iter().map(|x| x.tracker.state).collect(),
                next_interval: interval,
            });
        }
        self.next_start = Some(next);
        s.at(next, Event::PollStart);
    }

    /// Site `i` entered `to` at `now`: detections and recoveries.
    fn on_state(&mut self, i: usize, to: SiteState, now: SimTime) {
        for f in &mut self.faults {
            if f.site as usize != i || f.start > now {
                continue;
            }
            if f.end <= now && f.recovered == SimTime::MAX && f.back_to == Some(to) {
                f.recovered = now;
            }
        }
    }
}


impl World for SitePollerWorld {
    type Event = Event;
    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::PollStart => self.poll_start(now, s),
            Event::ProbesDone => self.probes_done(now, s),
            Event::PollEnd => self.poll_end(now, s),
            Event::FaultDue(i) => self.fault_due(i as usize, now, s),
            Event::FaultStart(i) => self.fault_start(i as usize, now, s),
            Event::FaultEndDue(i) => self.fault_end_due(i as usize, now, s),
            Event::FaultEnd(i) => self.fault_end(i as usize, now),
            Event::SetAnswer { site, writable } => {
                self.sites[site as usize].answer = if writable {
                    Answer::Writable
                } else {
                    Answer::ReadOnly
                };
            }
        }
    }
}
