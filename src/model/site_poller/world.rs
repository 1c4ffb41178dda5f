//! The site-poller world: the sites ([`super::site`]), the scripted faults
//! ([`super::faults`]), the failover layer ([`super::failover`]) and the loop's books
//! ([`super::history`]), composed; the poll loop with its two drivers; the dispatch of its
//! events ([`super::event`]).
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
use super::failover::Failover;
use super::faults::Faults;
use super::history::{History, PollRec, TransitionRec};
use super::params::{Answer, FaultPhase, LoopDriver, Role, SitePollerParams};
use super::site::{Down, Site};
use super::tracker::{Backoff, ProbeResult, SiteState, SiteTracker, Thresholds};
use crate::sim::rng::{stream, uniform, uniform01};
use crate::sim::{Scheduler, SimDuration, SimRng, SimTime, Simulation, Trace, TraceRecord, World};

/// The world.
pub struct SitePollerWorld {
    /// The sites, in declared order.
    pub(crate) sites: Vec<Site>,
    /// The faults, in file order.
    pub(crate) faults: Faults,
    /// The failover layer.
    pub(crate) failover: Failover,
    /// The loop's transitions, Polls and counters.
    pub(crate) history: History,
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
    /// The poller's stream (`"poller"`): the other serial extras.
    pub(super) poller_rng: SimRng,
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
        let start = SimTime::ZERO + p.poller.start;
        let world = SitePollerWorld {
            sites,
            faults: Faults::new(p, seed),
            failover: Failover::new(seed),
            history: History::new(start, log_polls),
            last_period: p.poller.poll_interval,
            probes_done_at: start,
            next_start: Some(start),
            cur_results: Vec::new(),
            tick_origin: start,
            tick_period: p.poller.poll_interval,
            poller_rng: stream(seed, "poller", 0),
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
                    let u = uniform(sim.world.faults.rng(i), 0.0, window.as_secs_f64());
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

    fn poll_start(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        self.next_start = None;
        let h = &mut self.history;
        if h.poll_count > 0 {
            let period = now.since(h.last_start);
            self.last_period = period;
            h.max_period = h.max_period.max(period);
        }
        h.poll_count += 1;
        h.last_start = now;
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
        self.history.probe_count += self.sites.len() as u64;
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
                self.history.transitions.push(TransitionRec {
                    at: now,
                    site: i as u16,
                    from,
                    to,
                    poll: self.history.poll_count,
                    fail_count: site.tracker.fail_count,
                    recovery_count: site.tracker.recovery_count,
                    false_unreachable: to == SiteState::Unreachable && site.flaky_error,
                });
                self.faults.on_state(i, to, now);
            }
        }
        // Detections: this Poll started after the fault (its probes saw it) and before its end.
        let h = &self.history;
        self.faults
            .detect(now, h.poll_count, h.last_start, &self.sites);
        if self.history.log_polls {
            self.cur_results = self.sites.iter().map(|s| (s.result, s.latency)).collect();
        }
        let mut t = now;
        if self.p.failover.enabled && (any_transition || self.p.failover.retry_every_poll) {
            t = self
                .failover
                .cross_site(&self.p.failover, &self.p.probes, &mut self.sites, t, s);
        }
        // Serial extras, in Poll order.
        if self.p.probes.fence_non_promotable {
            for i in 0..self.sites.len() {
                if !self.sites[i].promotable && self.sites[i].tracker.state == SiteState::Writable {
                    t += self.sites[i].query_latency(&self.p.probes);
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
                    t += self.sites[i].query_latency(&self.p.probes);
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
                    let k = (self.history.last_start.0 - self.tick_origin.0) / d;
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
        let h = &mut self.history;
        if h.log_polls {
            h.polls.push(PollRec {
                seq: h.poll_count,
                start: h.last_start,
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

    /// The current poll period: this Poll's start to the next one's when it is known, else the
    /// most recent full period.
    fn current_period(&self) -> SimDuration {
        match self.next_start {
            Some(n) if self.history.poll_count > 0 => n.since(self.history.last_start),
            _ => self.last_period,
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
            Event::FaultDue(i) => {
                let period = self.current_period();
                self.faults.due(i as usize, now, period, s)
            }
            Event::FaultStart(i) => {
                let polls = self.history.poll_count;
                self.faults
                    .start(i as usize, now, &mut self.sites, polls, s)
            }
            Event::FaultEndDue(i) => {
                let period = self.current_period();
                self.faults.end_due(i as usize, now, period, s)
            }
            Event::FaultEnd(i) => self.faults.end(i as usize, now, &mut self.sites),
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
