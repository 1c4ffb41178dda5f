//! The Monitor's ping and read_only loops (sysown/proxysql `lib/MySQL_Monitor.cpp`,
//! sysown/proxysql `lib/MySQL_HostGroups_Manager.cpp` `shun_and_killall`, sysown/proxysql
//! `lib/MySQL_HostGroups_Manager.cpp` `read_only_action_v2`): a fixed cadence anchored
//! at each round's start; the checks of one round run concurrently and are post-processed
//! together when the slowest answers. Every check ends at its timeout at the latest (a ping
//! at `ping_timeout`, a new monitor connection at the connect timeout, a read_only check at
//! `read_only_timeout`), as in `monitor_ping_thread` (lib/MySQL_Monitor.cpp), whatever the
//! network latencies: a check that reaches its timeout fails.

use super::event::Event;
use super::hostgroups::Status;
use super::world::{HostState, ProxysqlWorld, RoResult};
use crate::sim::{Scheduler, SimDuration, SimTime};

impl ProxysqlWorld {
    /// `mysql-monitor_connect_timeout` as the code uses it: whole seconds, at least 1 s.
    fn monitor_connect_timeout(&self) -> SimDuration {
        let s = (self.p.monitor.connect_timeout.as_nanos() / 1_000_000_000).max(1);
        SimDuration::from_secs(s)
    }

    /// A ping round: every host with an entry not OFFLINE_HARD (SHUNNED ones included).
    pub(crate) fn ping_round(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let n = &self.p.network;
        let mut slowest = n.monitor_check_latency;
        for h in 0..self.hosts.len() {
            let target = self
                .hgm
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
            let timeout = self.p.monitor.ping_timeout;
            let (ok, lat) = match self.hosts[h].state {
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
        s.after(self.p.monitor.ping_interval, Event::PingRound);
    }

    /// After a ping round: hosts whose last `ping_max_failures` pings failed are shunned and
    /// their connections killed (every round while pings keep failing).
    pub(crate) fn ping_post(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let wall = self.wall(now);
        let max = self.p.monitor.ping_max_failures;
        for h in 0..self.hosts.len() {
            let Some(ok) = self.ping_results[h] else {
                continue;
            };
            let host = &mut self.hosts[h];
            host.ping_streak = if ok { 0 } else { host.ping_streak + 1 };
            if host.ping_streak >= max {
                let (killed, newly) = self.hgm.shun_and_killall(h as u16, now, wall);
                // Only ONLINE → SHUNNED changes count; a re-shun of an entry already SHUNNED
                // (every round while pings keep failing) is not a new shun.
                self.ping_shuns += newly as u64;
                if !killed.is_empty() {
                    let name = self.names[h].clone();
                    self.hgm.say(
                        now,
                        format!("Server {name}:3306 missed {max} heartbeats, shunning it and killing all the connections"),
                    );
                    self.fail_threads_on(
                        move |w, e| w.hgm.entries[e].host as usize == h,
                        false,
                        now,
                        s,
                    );
                }
            }
        }
    }

    /// A read_only round: hosts in the replication hostgroups, not OFFLINE, that answer pings.
    pub(crate) fn read_only_round(&mut self, _now: SimTime, s: &mut Scheduler<Event>) {
        let (w, r) = (
            self.p.servers.writer_hostgroup,
            self.p.servers.reader_hostgroup,
        );
        let n = &self.p.network;
        let mct = self.monitor_connect_timeout();
        let max_ping = self.p.monitor.ping_max_failures;
        let mut slowest = n.monitor_check_latency;
        for h in 0..self.hosts.len() {
            let target = self.hgm.entries.iter().any(|e| {
                e.host as usize == h
                    && (e.hg == w || e.hg == r)
                    && matches!(e.status, Status::Online | Status::Shunned)
            });
            let host = &mut self.hosts[h];
            if !target || host.ping_streak >= max_ping {
                self.ro_results[h] = RoResult::None;
                continue;
            }
            let pooled = host.mon_conn.is_some();
            let fresh = host.mon_conn == Some(host.epoch);
            let ro_timeout = self.p.monitor.read_only_timeout;
            let (res, lat) = match host.state {
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
                    host.mon_conn = Some(host.epoch);
                    if n.monitor_check_latency >= ro_timeout {
                        (RoResult::Timeout, connect + ro_timeout)
                    } else {
                        (
                            RoResult::Value(host.read_only),
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
                    (RoResult::Timeout, self.p.monitor.read_only_timeout)
                }
                HostState::Dark => (RoResult::Timeout, mct),
            };
            slowest = slowest.max(lat);
            self.ro_results[h] = res;
        }
        s.after(slowest, Event::ReadOnlyPost);
        s.after(self.p.monitor.read_only_interval, Event::ReadOnlyRound);
    }

    /// After a read_only round: `read_only_action_v2` for every answer; three timeouts in a row
    /// count as read_only=1.
    pub(crate) fn read_only_post(&mut self, now: SimTime) {
        let (w, r) = (
            self.p.servers.writer_hostgroup,
            self.p.servers.reader_hostgroup,
        );
        let wall = self.wall(now);
        let max = self.p.monitor.read_only_max_timeout_count;
        for h in 0..self.hosts.len() {
            let ro = match self.ro_results[h] {
                RoResult::None => continue,
                RoResult::Value(v) => {
                    self.hosts[h].ro_streak = 0;
                    v
                }
                RoResult::Other => {
                    self.hosts[h].ro_streak = 0;
                    continue;
                }
                RoResult::Timeout => {
                    self.hosts[h].ro_streak += 1;
                    if self.hosts[h].ro_streak < max {
                        continue;
                    }
                    if self.hosts[h].ro_streak == max {
                        let name = self.names[h].clone();
                        self.hgm.say(
                            now,
                            format!("Server {name}:3306 missed {max} read_only checks. Assuming read_only=1"),
                        );
                    }
                    true
                }
            };
            let name = self.names[h].clone();
            self.hgm
                .read_only_action(h as u16, ro, w, r, self.rt.wiao, now, wall, &name);
        }
    }
}
