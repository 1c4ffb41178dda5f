//! The ProxySQL world: servers, the HostGroups Manager, the Monitor, the sysbench clients and
//! the scripted actions; construction from parameters and the event dispatch. Behaviour lives
//! beside it: [`super::hostgroups`], [`super::monitor`], [`super::client`].

use crate::model::dist::uniform_offset;
use super::client::{ClientState, Pending, Stmt, Thread};
use super::event::Event;
use super::hostgroups::{HostGroups, PickStats, Status};
use super::params::{Action, LoopPhase, ProxysqlParams};
use crate::sim::rng::{stream, uniform01};
use crate::sim::{Scheduler, SimDuration, SimTime, Simulation, Trace, TraceRecord, World};

/// What a connect to a host meets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostState {
    /// Serving.
    Up,
    /// Killed: connects fail fast (DNS name gone / refused), connections break.
    Refused,
    /// Black-holed: connects time out, queries on open connections hang.
    Dark,
}

/// One MySQL server.
#[derive(Clone, Debug)]
pub struct Host {
    /// Up, killed or black-holed.
    pub(crate) state: HostState,
    /// `@@global.read_only`.
    pub(crate) read_only: bool,
    /// Incremented at every kill, black-hole and start: connections of older epochs are broken.
    pub(crate) epoch: u32,
    /// Consecutive failed Monitor pings (the ping log's trailing errors).
    pub(crate) ping_streak: u32,
    /// Consecutive timeout-class read_only failures.
    pub(crate) ro_streak: u32,
    /// The Monitor's pooled read_only connection: the epoch it was opened in.
    pub(crate) mon_conn: Option<u32>,
}

/// The settings a `SetVariable` action can change at run time.
#[derive(Clone, Debug)]
pub struct Runtime {
    /// `mysql-monitor_writer_is_also_reader`.
    pub wiao: bool,
    /// `mysql-shun_on_failures`.
    pub(crate) shun_on_failures: u32,
    /// `mysql-shun_recovery_time_sec`.
    pub(crate) shun_recovery_time_sec: u32,
    /// `mysql-connect_retries_on_failure`.
    pub(crate) connect_retries: u32,
    /// `mysql-connect_timeout_server`.
    pub(crate) cts: SimDuration,
    /// `mysql-connect_timeout_server_max`.
    pub(crate) cts_max: SimDuration,
}

impl Runtime {
    /// Connect errors in one second that shun: `min(shun_on_failures, retries + 1)`.
    pub(crate) fn shun_threshold(&self) -> u32 {
        self.shun_on_failures
            .min(self.connect_retries.saturating_add(1))
    }
    /// `max_wait_sec` of the (normal, desperate) unshun paths (`MyHGC.cpp:117-260`).
    pub(crate) fn unshun_waits(&self) -> (i64, i64) {
        let rec = self.shun_recovery_time_sec as i64;
        let max_ms = (self.cts_max.as_nanos() / 1_000_000) as i64;
        let clamp = rec * 1000 >= max_ms;
        let normal = if clamp { max_ms / 1000 - 1 } else { rec };
        let desperate = if clamp { max_ms / 10000 - 1 } else { rec / 10 };
        (normal.max(1), desperate.max(1))
    }
}

/// Result of one Monitor read_only check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoResult {
    /// Not checked this round.
    None,
    /// `read_only` value read.
    Value(bool),
    /// A timeout-class failure (query timeout or failed new connection).
    Timeout,
    /// Another error (Lost connection on a pooled connection).
    Other,
}

/// A scripted action as it happened, with the runtime table right after it.
#[derive(Clone, Debug)]
pub struct ActionRec {
    /// When.
    pub t: SimTime,
    /// What.
    pub(crate) label: String,
    /// `runtime_mysql_servers` after it.
    pub table: String,
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
    /// Wall-clock offset of simulated time 0 (ns).
    pub(crate) wall_offset: u64,
    /// Ping results of the round in progress (per host; `None`: not pinged).
    pub(crate) ping_results: Vec<Option<bool>>,
    /// Start of the round in progress.
    pub(crate) ping_round_at: SimTime,
    /// read_only results of the round in progress.
    pub(crate) ro_results: Vec<RoResult>,
    /// Lazy unshuns.
    pub(crate) unshuns: PickStats,
    /// Backend connect failures.
    pub(crate) connect_errors: u64,
    /// Shuns by traffic (connect errors in one second).
    pub(crate) traffic_shuns: u64,
    /// Entries moved ONLINE → SHUNNED by `shun_and_killall` (missed heartbeats); a repeated
    /// call on an entry already SHUNNED is not counted.
    pub(crate) ping_shuns: u64,
    /// First fault: time and hosts.
    pub(crate) first_fault: Option<(SimTime, Vec<u16>)>,
    /// Last successful read of a read-only client.
    pub(crate) last_read_ok: SimTime,
    /// Read outages (gaps > `outage_gap` with no successful read) ending after the first fault.
    pub(crate) outages: Vec<(SimTime, SimTime)>,
    /// The last outage was still open at the horizon (its end is the horizon: censored).
    pub(crate) outage_open: bool,
    /// Actions as they happened.
    pub action_log: Vec<ActionRec>,
}

impl ProxysqlWorld {
    /// Wall-clock second of `t` (`time(NULL)`).
    #[inline]
    pub(crate) fn wall(&self, t: SimTime) -> i64 {
        (t.0.saturating_add(self.wall_offset) / 1_000_000_000) as i64
    }

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
                ping_streak: 0,
                ro_streak: 0,
                mon_conn: None,
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
            .map(|(ci, c)| {
                let mut script = vec![];
                if !c.skip_trx {
                    script.push(Stmt::Begin);
                }
                for _ in 0..c.point_selects + c.range_selects {
                    script.push(Stmt::Select);
                }
                let writes = [Stmt::Update, Stmt::Update, Stmt::Delete, Stmt::Insert];
                for k in 0..c.writes {
                    script.push(writes[k as usize % 4]);
                }
                if !c.skip_trx {
                    script.push(Stmt::Commit);
                }
                let threads = (0..c.threads)
                    .map(|t| Thread::new(stream(seed, "sysbench", (ci as u32) << 16 | t)))
                    .collect();
                let routes = script.iter().map(|st| route(p, st.keyword())).collect();
                ClientState {
                    script,
                    routes,
                    reader: c.writes == 0,
                    start: SimTime::ZERO + c.start_at,
                    threads,
                    secs: vec![],
                    tx: 0,
                    queries: 0,
                    errors: 0,
                    errors_9001: 0,
                    errors_backend: 0,
                    errors_lost: 0,
                }
            })
            .collect();
        let world = ProxysqlWorld {
            names,
            hosts,
            hgm: HostGroups::new(config, n),
            rt,
            clients,
            wall_offset,
            ping_results: vec![None; n],
            ping_round_at: SimTime::ZERO,
            ro_results: vec![RoResult::None; n],
            unshuns: PickStats::default(),
            connect_errors: 0,
            traffic_shuns: 0,
            ping_shuns: 0,
            first_fault: None,
            last_read_ok: SimTime::ZERO,
            outages: vec![],
            outage_open: false,
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

    fn fault(&mut self, now: SimTime, hosts: &[u16]) {
        if self.first_fault.is_none() {
            self.first_fault = Some((now, hosts.to_vec()));
        }
    }

    fn do_action(&mut self, i: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let a = self.p.actions[i].action.clone();
        let wall = self.wall(now);
        match &a {
            Action::Kill { host } => {
                let h = self.host_index(host);
                self.fault(now, &[h]);
                self.break_host(h, HostState::Refused, now, s);
            }
            Action::KillReplicas => {
                let hs: Vec<u16> = (0..self.hosts.len() as u16)
                    .filter(|&h| {
                        self.hosts[h as usize].read_only
                            && self.hosts[h as usize].state == HostState::Up
                    })
                    .collect();
                self.fault(now, &hs);
                for h in hs {
                    self.break_host(h, HostState::Refused, now, s);
                }
            }
            Action::BlackHole { host } => {
                let h = self.host_index(host);
                self.fault(now, &[h]);
                self.break_host(h, HostState::Dark, now, s);
            }
            Action::Start { host } => {
                let h = self.host_index(host) as usize;
                if self.hosts[h].state != HostState::Up {
                    self.hosts[h].state = HostState::Up;
                    self.hosts[h].epoch += 1;
                    // Queries hung on a black-holed server get a reset.
                    self.fail_threads_on(|w, e| w.hgm.entries[e].host as usize == h, true, now, s);
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

    /// Fail, now, the statements in flight or hung on entries matching `on` (`shun_and_killall`
    /// kills used connections; a restarted server resets hung ones). With `hung_only`, only
    /// hung statements.
    pub(crate) fn fail_threads_on(
        &mut self,
        on: impl Fn(&ProxysqlWorld, usize) -> bool,
        hung_only: bool,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let mut hits = vec![];
        for (ci, c) in self.clients.iter().enumerate() {
            for (ti, th) in c.threads.iter().enumerate() {
                let e = match th.pending {
                    Pending::Hung { entry } => Some(entry),
                    Pending::Query { entry, ok: true } if !hung_only => Some(entry),
                    _ => None,
                };
                if let Some(e) = e {
                    if on(self, e as usize) {
                        hits.push((ci, ti, e));
                    }
                }
            }
        }
        for (ci, ti, e) in hits {
            let th = &mut self.clients[ci].threads[ti];
            th.gen += 1;
            th.pending = Pending::Query {
                entry: e,
                ok: false,
            };
            if let Some(cc) = th.conn.as_mut() {
                cc.stale = true;
            }
            s.at(
                now,
                Event::Step {
                    client: ci as u8,
                    thread: ti as u16,
                    gen: th.gen,
                },
            );
        }
        if !hung_only {
            let mut stale_trx = vec![];
            for (ci, c) in self.clients.iter().enumerate() {
                for (ti, th) in c.threads.iter().enumerate() {
                    if let Some(tc) = th.trx_conn {
                        if on(self, tc.entry as usize) {
                            stale_trx.push((ci, ti));
                        }
                    }
                }
            }
            for (ci, ti) in stale_trx {
                if let Some(tc) = self.clients[ci].threads[ti].trx_conn.as_mut() {
                    tc.stale = true;
                }
            }
        }
    }

    /// Close the books at the end of the run.
    pub(crate) fn finish(&mut self, end: SimTime) {
        if let Some((tf, _)) = self.first_fault {
            if self.clients.iter().any(|c| c.reader) {
                let last = self.last_read_ok;
                if end.since(last) > self.p.outage_gap && end > tf {
                    self.outages.push((last, end));
                    self.outage_open = true;
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

/// The hostgroup a statement goes to when the session is not pinned: the first active rule
/// (by `rule_id`) whose keyword prefixes the statement, else the user's default hostgroup.
pub fn route(p: &ProxysqlParams, keyword: &str) -> u32 {
    let mut rules: Vec<_> = p.query_rules.iter().filter(|r| r.active).collect();
    rules.sort_by_key(|r| r.rule_id);
    for r in rules {
        if let Some(k) = super::params::rule_keyword(&r.match_digest) {
            if keyword.starts_with(&k) {
                return r.destination_hostgroup;
            }
        }
    }
    p.user.default_hostgroup
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
                    self.step(client as usize, thread as usize, now, s);
                }
            }
            Event::PingRound => self.ping_round(now, s),
            Event::PingPost => self.ping_post(now, s),
            Event::ReadOnlyRound => self.read_only_round(now, s),
            Event::ReadOnlyPost => self.read_only_post(now),
            Event::Action { i } => self.do_action(i as usize, now, s),
        }
    }
}
