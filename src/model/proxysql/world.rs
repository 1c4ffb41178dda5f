//! The ProxySQL world: the servers ([`super::host`]), the HostGroups Manager
//! ([`super::hostgroups`]), the Monitor ([`super::monitor`]), the sysbench clients and their
//! sessions ([`super::client`]), the runtime settings and wall clock ([`super::runtime`]) and
//! the tally ([`super::tally`]), composed; construction from parameters, the scripted
//! actions, and the event dispatch.

use super::client::{fail_threads_on, ClientState, Pending, Sessions};
use super::event::Event;
use super::host::{Host, HostState};
use super::hostgroups::{HostGroups, PickStats, Status};
use super::monitor::Monitor;
use super::params::{Action, LoopPhase, ProxysqlParams};
use super::runtime::{Runtime, WallClock};
use super::tally::{ActionRec, Tally};
use crate::model::dist::uniform_offset;
use crate::sim::rng::{stream, uniform01};
use crate::sim::{Scheduler, SimDuration, SimTime, Simulation, Trace, TraceRecord, World};

/// The sessions' view of world `$w` for one event: every field but the Monitor and the
/// action log, borrowed apart (so the Monitor can act through it).
macro_rules! sessions {
    ($w:expr) => {
        Sessions {
            clients: &mut $w.clients,
            p: &$w.p,
            names: &$w.names,
            hosts: &$w.hosts,
            hgm: &mut $w.hgm,
            rt: &$w.rt,
            wall: $w.wall,
            tally: &mut $w.tally,
        }
    };
}

/// The whole ProxySQL world.
pub struct ProxysqlWorld {
    /// The parameters.
    pub(crate) p: ProxysqlParams,
    /// Host names (source first).
    pub(crate) names: Vec<String>,
    /// Servers.
    pub(crate) hosts: Vec<Host>,
    /// The HostGroups Manager.
    pub hgm: HostGroups,
    /// Settings changeable at run time.
    pub rt: Runtime,
    /// sysbench clients.
    pub clients: Vec<ClientState>,
    /// The wall clock: the offset of simulated time 0 in its second.
    pub(crate) wall: WallClock,
    /// The Monitor.
    pub(crate) monitor: Monitor,
    /// The run's counters.
    pub(crate) tally: Tally,
    /// Actions as they happened.
    pub action_log: Vec<ActionRec>,
}

impl ProxysqlWorld {
    /// A primed simulation.
    pub fn simulation(p: &ProxysqlParams, seed: u64, trace: Trace) -> Simulation<ProxysqlWorld> {
        let names = p.hosts();
        let n = names.len();
        let s = &p.servers;
        let mut config = vec![(s.writer_hostgroup, 0u16, 1u32)];
        if s.writer_in_reader_hostgroup {
            config.push((s.reader_hostgroup, 0, s.writer_weight_in_reader));
        }
        for i in 1..n {
            config.push((s.reader_hostgroup, i as u16, s.replica_weight));
        }
        let hosts = (0..n)
            .map(|i| Host {
                state: HostState::Up,
                read_only: i != 0,
                epoch: 0,
            })
            .collect();
        let wall_drawn = p.wall_clock_offset.is_none();
        let wall_offset = match p.wall_clock_offset {
            Some(d) => d.as_nanos(), // below 1 s (checked)
            None => (uniform01(&mut stream(seed, "wallclock", 0)) * 1e9) as u64,
        };
        let v = &p.variables;
        let rt = Runtime {
            wiao: p.monitor.writer_is_also_reader,
            shun_on_failures: v.shun_on_failures,
            shun_recovery_time_sec: v.shun_recovery_time_sec,
            connect_retries: v.connect_retries_on_failure,
            cts: v.connect_timeout_server,
            cts_max: v.connect_timeout_server_max,
        };
        let clients: Vec<ClientState> = p
            .clients
            .iter()
            .enumerate()
            .map(|(ci, c)| ClientState::new(p, ci, c, seed))
            .collect();
        let world = ProxysqlWorld {
            names,
            hosts,
            hgm: HostGroups::new(config, n),
            rt,
            clients,
            wall: WallClock {
                offset: wall_offset,
            },
            monitor: Monitor::new(n),
            tally: Tally {
                unshuns: PickStats::default(),
                connect_errors: 0,
                traffic_shuns: 0,
                ping_shuns: 0,
                first_fault: None,
                last_read_ok: SimTime::ZERO,
                outages: vec![],
                outage_open: false,
            },
            action_log: vec![],
            p: p.clone(),
        };
        let mut sim = Simulation::with_trace(world, trace);
        if wall_drawn {
            // The offset moves every wall-second bucket (shuns, err/s) without being an event.
            sim.draw(&TraceRecord {
                component: "wallclock",
                index: 0,
                kind: "offset",
                a: wall_offset,
                b: 0,
            });
        }
        if p.monitor.enabled {
            let (ping, ro) = match &p.monitor.phase {
                LoopPhase::Fixed { ping, read_only } => (*ping, *read_only),
                LoopPhase::Uniform => {
                    let mut r = stream(seed, "monitor", 0);
                    let ping = uniform_offset(&mut r, p.monitor.ping_interval);
                    (ping, uniform_offset(&mut r, p.monitor.read_only_interval))
                }
            };
            sim.schedule(SimTime::ZERO + ping, Event::PingRound);
            sim.schedule(SimTime::ZERO + ro, Event::ReadOnlyRound);
        }
        for (i, a) in p.actions.iter().enumerate() {
            sim.schedule(SimTime::ZERO + a.at, Event::Action { i: i as u16 });
        }
        for (ci, c) in p.clients.iter().enumerate() {
            for t in 0..c.threads {
                let th = &mut sim.world.clients[ci].threads[t as usize];
                th.gen += 1;
                let gen = th.gen;
                sim.schedule(
                    SimTime::ZERO + c.start_at,
                    Event::Step {
                        client: ci as u8,
                        thread: t as u16,
                        gen,
                    },
                );
            }
        }
        sim
    }

    /// Host index by name.
    pub(crate) fn host_index(&self, name: &str) -> u16 {
        self.names
            .iter()
            .position(|n| n == name)
            .expect("validated host") as u16
    }

    fn do_action(&mut self, i: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let a = self.p.actions[i].action.clone();
        let wall = self.wall.second(now);
        match &a {
            Action::Kill { host } => {
                let h = self.host_index(host);
                self.tally.fault(now, &[h]);
                self.break_host(h, HostState::Refused, now, s);
            }
            Action::KillReplicas => {
                let hs: Vec<u16> = (0..self.hosts.len() as u16)
                    .filter(|&h| {
                        self.hosts[h as usize].read_only
                            && self.hosts[h as usize].state == HostState::Up
                    })
                    .collect();
                self.tally.fault(now, &hs);
                for h in hs {
                    self.break_host(h, HostState::Refused, now, s);
                }
            }
            Action::BlackHole { host } => {
                let h = self.host_index(host);
                self.tally.fault(now, &[h]);
                self.break_host(h, HostState::Dark, now, s);
            }
            Action::Start { host } => {
                let h = self.host_index(host) as usize;
                if self.hosts[h].state != HostState::Up {
                    self.hosts[h].state = HostState::Up;
                    self.hosts[h].epoch += 1;
                    // Queries hung on a black-holed server get a reset.
                    let entries = &self.hgm.entries;
                    fail_threads_on(
                        &mut self.clients,
                        |e| entries[e].host as usize == h,
                        true,
                        now,
                        s,
                    );
                }
            }
            Action::Promote { host } => {
                let h = self.host_index(host) as usize;
                self.hosts[h].read_only = false;
            }
            Action::SetReadOnly { host, read_only } => {
                let h = self.host_index(host) as usize;
                self.hosts[h].read_only = *read_only;
            }
            Action::InsertServer {
                hostgroup,
                host,
                weight,
            } => {
                let h = self.host_index(host);
                if !self
                    .hgm
                    .config
                    .iter()
                    .any(|c| c.0 == *hostgroup && c.1 == h)
                {
                    self.hgm.config.push((*hostgroup, h, *weight));
                }
            }
            Action::LoadMysqlServers => {
                self.hgm.load_to_runtime(now, wall);
            }
            Action::SetVariable { name, value } => {
                let num = value.parse::<u64>().unwrap_or(0);
                match name.as_str() {
                    "mysql-monitor_writer_is_also_reader" => {
                        self.rt.wiao = matches!(value.as_str(), "true" | "1")
                    }
                    "mysql-shun_on_failures" => self.rt.shun_on_failures = num as u32,
                    "mysql-shun_recovery_time_sec" => self.rt.shun_recovery_time_sec = num as u32,
                    "mysql-connect_retries_on_failure" => self.rt.connect_retries = num as u32,
                    "mysql-connect_timeout_server" => self.rt.cts = SimDuration::from_millis(num),
                    "mysql-connect_timeout_server_max" => {
                        self.rt.cts_max = SimDuration::from_millis(num)
                    }
                    _ => unreachable!("validated"),
                }
            }
            Action::ShowServers => {}
        }
        let table = self.hgm.table(&self.names, wall);
        self.action_log.push(ActionRec {
            t: now,
            label: a.label(),
            table,
        });
    }

    /// A server dies (`Refused`) or goes dark: its pooled connections break; statements in
    /// flight on it fail at once (killed) or hang (dark).
    fn break_host(&mut self, h: u16, to: HostState, now: SimTime, s: &mut Scheduler<Event>) {
        let host = &mut self.hosts[h as usize];
        if host.state == to {
            return;
        }
        host.state = to;
        host.epoch += 1;
        for e in self.hgm.entries.iter_mut().filter(|e| e.host == h) {
            e.stale += e.free;
            e.free = 0;
        }
        let entries = &self.hgm.entries;
        for (ci, c) in self.clients.iter_mut().enumerate() {
            for (ti, th) in c.threads.iter_mut().enumerate() {
                if let Some(tc) = th.trx_conn.as_mut() {
                    if entries[tc.entry as usize].host == h {
                        tc.stale = true;
                    }
                }
                if let Some(cc) = th.conn.as_mut() {
                    if entries[cc.entry as usize].host == h {
                        cc.stale = true;
                    }
                }
                if let Pending::Query { entry, ok: true } = th.pending {
                    if entries[entry as usize].host == h {
                        th.gen += 1;
                        if to == HostState::Dark {
                            th.pending = Pending::Hung { entry };
                        } else {
                            th.pending = Pending::Query { entry, ok: false };
                            s.at(
                                now,
                                Event::Step {
                                    client: ci as u8,
                                    thread: ti as u16,
                                    gen: th.gen,
                                },
                            );
                        }
                    }
                }
            }
        }
    }

    /// Close the books at the end of the run.
    pub(crate) fn finish(&mut self, end: SimTime) {
        let t = &mut self.tally;
        if let Some((tf, _)) = t.first_fault {
            if self.clients.iter().any(|c| c.reader) {
                let last = t.last_read_ok;
                if end.since(last) > self.p.outage_gap && end > tf {
                    t.outages.push((last, end));
                    t.outage_open = true;
                }
            }
        }
    }

    /// Status of `host` in `hg` (None: no live entry).
    pub fn status(&self, hg: u32, host: &str) -> Option<Status> {
        let h = self.names.iter().position(|n| n == host)? as u16;
        self.hgm.find(hg, h).map(|i| self.hgm.entries[i].status)
    }
}

impl World for ProxysqlWorld {
    type Event = Event;
    #[inline]
    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::Step {
                client,
                thread,
                gen,
            } => {
                let th = &self.clients[client as usize].threads[thread as usize];
                if th.gen == gen {
                    sessions!(self).step(client as usize, thread as usize, now, s);
                }
            }
            Event::PingRound => self
                .monitor
                .ping_round(&self.p, &self.hosts, &self.hgm, now, s),
            Event::PingPost => self.monitor.ping_post(&mut sessions!(self), now, s),
            Event::ReadOnlyRound => {
                self.monitor
                    .read_only_round(&self.p, &self.hosts, &self.hgm, s)
            }
            Event::ReadOnlyPost => self.monitor.read_only_post(&mut sessions!(self), now),
            Event::Action { i } => self.do_action(i as usize, now, s),
        }
    }
}
