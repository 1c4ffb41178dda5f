//! The Monitor's ping and read_only loops (sysown/proxysql `lib/MySQL_Monitor.cpp`,
//! sysown/proxysql `lib/MySQL_HostGroups_Manager.cpp` `shun_and_killall`, sysown/proxysql
//! `lib/MySQL_HostGroups_Manager.cpp` `read_only_action_v2`): a fixed cadence anchored
//! at each round's start; the checks of one round run concurrently and are post-processed
//! together when the slowest answers. Every check ends at its timeout at the latest (a ping
//! at `ping_timeout`, a new monitor connection at the connect timeout, a read_only check at
//! `read_only_timeout`), as in `monitor_ping_thread` (lib/MySQL_Monitor.cpp), whatever the
//! network latencies: a check that reaches its timeout fails.

use super::client::{fail_threads_on, Sessions};
use super::event::Event;
use super::host::{Host, HostState};
use super::hostgroups::{HostGroups, Status};
use super::params::{MonitorParams, ProxysqlParams};
use crate::sim::{Scheduler, SimDuration, SimTime};

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

/// What the Monitor keeps of one host.
#[derive(Clone, Copy, Debug)]
pub struct Watch {
    /// Consecutive failed Monitor pings (the ping log's trailing errors).
    pub(crate) ping_streak: u32,
    /// Consecutive timeout-class read_only failures.
    pub(crate) ro_streak: u32,
    /// The Monitor's pooled read_only connection: the epoch it was opened in.
    pub(crate) mon_conn: Option<u32>,
}

/// The Monitor: what it keeps of each host and the results of the rounds in progress.
#[derive(Clone, Debug)]
pub struct Monitor {
    /// Per host, by index.
    pub(crate) watch: Vec<Watch>,
    /// Ping results of the round in progress (per host; `None`: not pinged).
    pub(crate) ping_results: Vec<Option<bool>>,
    /// Start of the round in progress.
    pub(crate) ping_round_at: SimTime,
    /// read_only results of the round in progress.
    pub(crate) ro_results: Vec<RoResult>,
}

/// `mysql-monitor_connect_timeout` as the code uses it: whole seconds, at least 1 s.
fn monitor_connect_timeout(m: &MonitorParams) -> SimDuration {
    let s = (m.connect_timeout.as_nanos() / 1_000_000_000).max(1);
    SimDuration::from_secs(s)
}

impl Monitor {
    /// Nothing checked yet on any of `n` hosts.
    pub(crate) fn new(n: usize) -> Self {
        Monitor {
            watch: vec![
                Watch {
                    ping_streak: 0,
                    ro_streak: 0,
                    mon_conn: None,
                };
                n
            ],
            ping_results: vec![None; n],
            ping_round_at: SimTime::ZERO,
            ro_results: vec![RoResult::None; n],
        }
    }

    /// A ping round: every host with an entry not OFFLINE_HARD (SHUNNED ones included).
    pub(crate) fn ping_round(
        &mut self,
        p: &ProxysqlParams,
        hosts: &[Host],
        hgm: &HostGroups,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let n = &p.network;
        let mut slowest = n.monitor_check_latency;
        for (h, host) in hosts.iter().enumerate() {
            let target = hgm
                .entries
                .iter()
                .any(|e| e.host as usize == h && e.status != Status::OfflineHard);
            if !target {
                self.ping_results[h] = None;
                continue;
            }
            // A ping fails at `ping_timeout` if it has not answered by then ("timeout during
            // ping", `monitor_ping_thread` / `monitor_ping_async` in lib/MySQL_Monitor.cpp):
            // a refused host's error or a live host's answer slower than the timeout ends
            // there, and a live host that slow fails its ping.
            let timeout = p.monitor.ping_timeout;
            let (ok, lat) = match host.state {
                HostState::Up => (
                    n.monitor_check_latency < timeout,
                    n.monitor_check_latency.min(timeout),
                ),
                HostState::Refused => (false, n.refused_latency.min(timeout)),
                HostState::Dark => (false, timeout),
            };
            slowest = slowest.max(lat);
            self.ping_results[h] = Some(ok);
        }
        self.ping_round_at = now;
        s.after(slowest, Event::PingPost);
        s.after(p.monitor.ping_interval, Event::PingRound);
    }

    /// After a ping round: hosts whose last `ping_max_failures` pings failed are shunned and
    /// their connections killed (every round while pings keep failing).
    pub(crate) fn ping_post(
        &mut self,
        px: &mut Sessions<'_>,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let wall = px.wall.second(now);
        let max = px.p.monitor.ping_max_failures;
        for h in 0..px.hosts.len() {
            let Some(ok) = self.ping_results[h] else {
                continue;
            };
            let host = &mut self.watch[h];
            host.ping_streak = if ok { 0 } else { host.ping_streak + 1 };
            if host.ping_streak >= max {
                let (killed, newly) = px.hgm.shun_and_killall(h as u16, now, wall);
                // Only ONLINE → SHUNNED changes count; a re-shun of an entry already SHUNNED
                // (every round while pings keep failing) is not a new shun.
                px.tally.ping_shuns += newly as u64;
                if !killed.is_empty() {
                    let name = px.names[h].clone();
                    px.hgm.say(
                        now,
                        format!("Server {name}:3306 missed {max} heartbeats, shunning it and killing all the connections"),
                    );
                    let entries = &px.hgm.entries;
                    fail_threads_on(
                        px.clients,
                        move |e| entries[e].host as usize == h,
                        false,
                        now,
                        s,
                    );
                }
            }
        }
    }

    /// A read_only round: hosts in the replication hostgroups, not OFFLINE, that answer pings.
    pub(crate) fn read_only_round(
        &mut self,
        p: &ProxysqlParams,
        hosts: &[Host],
        hgm: &HostGroups,
        s: &mut Scheduler<Event>,
    ) {
        let (w, r) = (p.servers.writer_hostgroup, p.servers.reader_hostgroup);
        let n = &p.network;
        let mct = monitor_connect_timeout(&p.monitor);
        let max_ping = p.monitor.ping_max_failures;
        let mut slowest = n.monitor_check_latency;
        for (h, truth) in hosts.iter().enumerate() {
            let target = hgm.entries.iter().any(|e| {
                e.host as usize == h
                    && (e.hg == w || e.hg == r)
                    && matches!(e.status, Status::Online | Status::Shunned)
            });
            let host = &mut self.watch[h];
            if !target || host.ping_streak >= max_ping {
                self.ro_results[h] = RoResult::None;
                continue;
            }
            let pooled = host.mon_conn.is_some();
            let fresh = host.mon_conn == Some(truth.epoch);
            let ro_timeout = p.monitor.read_only_timeout;
            let (res, lat) = match truth.state {
                HostState::Up if pooled && !fresh => {
                    host.mon_conn = None;
                    (RoResult::Other, n.dead_connection_latency.min(ro_timeout))
                }
                // A new connection is bounded by the connect timeout and the check by
                // `read_only_timeout`; either one running out is a timeout-class failure.
                HostState::Up if !pooled && n.connect_latency >= mct => (RoResult::Timeout, mct),
                HostState::Up => {
                    let connect = if pooled {
                        SimDuration::ZERO
                    } else {
                        n.connect_latency
                    };
                    host.mon_conn = Some(truth.epoch);
                    if n.monitor_check_latency >= ro_timeout {
                        (RoResult::Timeout, connect + ro_timeout)
                    } else {
                        (
                            RoResult::Value(truth.read_only),
                            connect + n.monitor_check_latency,
                        )
                    }
                }
                HostState::Refused if pooled => {
                    host.mon_conn = None;
                    (RoResult::Other, n.dead_connection_latency.min(ro_timeout))
                }
                HostState::Refused => (RoResult::Timeout, n.refused_latency.min(mct)),
                HostState::Dark if pooled => {
                    host.mon_conn = None;
                    (RoResult::Timeout, p.monitor.read_only_timeout)
                }
                HostState::Dark => (RoResult::Timeout, mct),
            };
            slowest = slowest.max(lat);
            self.ro_results[h] = res;
        }
        s.after(slowest, Event::ReadOnlyPost);
        s.after(p.monitor.read_only_interval, Event::ReadOnlyRound);
    }

    /// After a read_only round: `read_only_action_v2` for every answer; three timeouts in a row
    /// count as read_only=1.
    pub(crate) fn read_only_post(&mut self, px: &mut Sessions<'_>, now: SimTime) {
        let (w, r) = (px.p.servers.writer_hostgroup, px.p.servers.reader_hostgroup);
        let wall = px.wall.second(now);
        let max = px.p.monitor.read_only_max_timeout_count;
        for h in 0..px.hosts.len() {
            let ro = match self.ro_results[h] {
                RoResult::None => continue,
                RoResult::Value(v) => {
                    self.watch[h].ro_streak = 0;
                    v
                }
                RoResult::Other => {
                    self.watch[h].ro_streak = 0;
                    continue;
                }
                RoResult::Timeout => {
                    self.watch[h].ro_streak += 1;
                    if self.watch[h].ro_streak < max {
                        continue;
                    }
                    if self.watch[h].ro_streak == max {
                        let name = px.names[h].clone();
                        px.hgm.say(
                            now,
                            format!("Server {name}:3306 missed {max} read_only checks. Assuming read_only=1"),
                        );
                    }
                    true
                }
            };
            let name = px.names[h].clone();
            px.hgm
                .read_only_action(h as u16, ro, w, r, px.rt.wiao, now, wall, &name);
        }
    }
}
