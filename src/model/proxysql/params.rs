//! Parameters of the ProxySQL model, with their defaults and where each comes from.
//!
//! Sources: sysown/proxysql at v2.7.2-14 (commit 5cc418bb), cited by file and function;
//! `docs/proxysql.md`; and "the lab": the write-up "MySQL async replication HA, part 3 –
//! replicas die, and the reads you sent them", whose five experiments the shipped
//! `models/proxysql-seed-*.ron` replay.
//! Values marked *\[inferred\]* are in no code: a reading of runtime behaviour or a modelling
//! choice. Every enum is internally tagged (`kind`) so sweeps can override it through JSON.

use crate::sim::SimDuration;

pub use super::latency::Latency;
pub use super::ranges::{proxysql_range, PROXYSQL_RANGES};
use super::ranges::{out_of_range, Setting};
pub use super::script::{Action, ScriptedAction, SETTABLE};
use crate::model::kit::{fail, positive, Checked};
use serde::{Deserialize, Serialize};

/// Parameters of the ProxySQL reader-routing model (`docs/proxysql.md`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProxysqlParams {
    /// The MySQL servers and how they sit in ProxySQL's hostgroups.
    pub servers: ServersParams,
    /// The ProxySQL user the clients log in as (`mysql_users`).
    pub user: UserParams,
    /// `mysql_query_rules`, evaluated in `rule_id` order.
    pub query_rules: Vec<QueryRule>,
    /// The Monitor module (`mysql-monitor_*` variables).
    pub monitor: MonitorParams,
    /// `mysql-*` global variables of the HostGroups Manager and the session.
    pub variables: Variables,
    /// Latencies of the network and of the servers.
    pub network: NetworkParams,
    /// Closed-loop sysbench clients.
    pub clients: Vec<ClientParams>,
    /// Scripted faults and operator actions, with their times.
    pub actions: Vec<ScriptedAction>,
    /// Where simulated time 0 falls in its wall-clock second (`time(NULL)` buckets errors and
    /// shun times). Absent: drawn uniform in [0, 1 s) per seed (stream `"wallclock"`).
    pub wall_clock_offset: Option<SimDuration>,
    /// A gap longer than this without a successful read (read-only clients) is a read outage.
    /// Default 100ms *\[inferred\]*: a healthy client completes a read every ~0.2 ms.
    pub outage_gap: SimDuration,
    /// Length of the run.
    pub horizon: SimDuration,
}

/// The servers: one source (read_only=0) and its replicas (read_only=1), and the
/// `mysql_servers` / `mysql_replication_hostgroups` rows built from them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServersParams {
    /// The source's host name (the lab: `mysql-1`). Row `(writer_hostgroup, source)`.
    pub source: String,
    /// The replicas' host names (the lab: `mysql-2`, `mysql-3`). Rows `(reader_hostgroup, r)`.
    pub replicas: Vec<String>,
    /// Also configure the source in the reader hostgroup (the community workaround,
    /// sysown/proxysql `lib/MySQL_Session.cpp` (`CONNECTING_SERVER`)).
    /// Default false: the lab's lab ("nobody had copied the writer into it").
    pub writer_in_reader_hostgroup: bool,
    /// Weight of the source's reader row when it has one (sysown/proxysql `lib/MySQL_Session.cpp`
    /// (`CONNECTING_SERVER`) workaround: 1 against a
    /// large replica weight). Default 1.
    pub writer_weight_in_reader: u32,
    /// Weight of each replica row. Default 1 (the `mysql_servers.weight` default).
    pub replica_weight: u32,
    /// `mysql_replication_hostgroups.writer_hostgroup` (the lab: 10).
    pub writer_hostgroup: u32,
    /// `mysql_replication_hostgroups.reader_hostgroup` (the lab: 20).
    pub reader_hostgroup: u32,
}

/// The `mysql_users` row of the clients.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UserParams {
    /// User name (the lab: sbuser); for the report only.
    pub name: String,
    /// `default_hostgroup`: where a statement goes when no rule matches (the lab: 10).
    pub default_hostgroup: u32,
    /// `transaction_persistent` (table default 1 since 1.4.0, sysown/proxysql
    /// `lib/MySQL_Thread.cpp`; the lab: 1).
    pub transaction_persistent: bool,
}

/// One `mysql_query_rules` row.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryRule {
    /// `rule_id`: evaluation order.
    pub rule_id: u32,
    /// `active`.
    #[serde(default = "d_true")]
    pub active: bool,
    /// `match_digest`. Only an anchored keyword (`^SELECT`, `^UPDATE`, ...) is modelled,
    /// matched case-insensitively against the statement's first word.
    pub match_digest: String,
    /// `destination_hostgroup`.
    pub destination_hostgroup: u32,
    /// `apply`: stop evaluating at this rule (only `true` is modelled: no flagIN/flagOUT chains).
    #[serde(default = "d_true")]
    pub apply: bool,
}

/// When each Monitor loop starts relative to simulated time 0.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum LoopPhase {
    /// Uniform in [0, interval) per seed (stream `"monitor"`): ProxySQL's start time is
    /// unrelated to the fault times.
    #[default]
    Uniform,
    /// Fixed offsets of the first ping and read_only rounds.
    Fixed {
        /// First ping round.
        ping: SimDuration,
        /// First read_only round.
        read_only: SimDuration,
    },
}

/// `mysql-monitor_*` (sysown/proxysql `lib/MySQL_Thread.cpp` table, `MySQL_Thread.cpp:966-1105`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MonitorParams {
    /// `mysql-monitor_enabled` (true).
    pub enabled: bool,
    /// `mysql-monitor_ping_interval` (8000 ms since 2.0.1).
    pub ping_interval: SimDuration,
    /// `mysql-monitor_ping_timeout` (1000 ms).
    pub ping_timeout: SimDuration,
    /// `mysql-monitor_ping_max_failures` (3): consecutive failed pings before `shun_and_killall`.
    pub ping_max_failures: u32,
    /// `mysql-monitor_connect_timeout` (600 ms). Used as whole seconds and clamped to ≥ 1 s
    /// (sysown/proxysql `lib/MySQL_Thread.cpp`, `MySQL_Monitor.cpp:1555-1557`): it bounds every
    /// new monitor connection.
    pub connect_timeout: SimDuration,
    /// `mysql-monitor_read_only_interval` (1000 ms).
    pub read_only_interval: SimDuration,
    /// `mysql-monitor_read_only_timeout` (800 ms).
    pub read_only_timeout: SimDuration,
    /// `mysql-monitor_read_only_max_timeout_count` (3): consecutive timeout-class read_only
    /// failures before ProxySQL assumes read_only=1.
    pub read_only_max_timeout_count: u32,
    /// `mysql-monitor_writer_is_also_reader` (code default true). The lab's lab ran with
    /// false (it set it to 'true' at 01:17:23). Consulted only at a read_only 1→0 change.
    pub writer_is_also_reader: bool,
    /// Phases of the ping and read_only loops.
    pub phase: LoopPhase,
}

/// `mysql-*` globals (sysown/proxysql `lib/MySQL_Thread.cpp`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Variables {
    /// `mysql-shun_on_failures` (5): connect errors in one wall-clock second that shun.
    pub shun_on_failures: u32,
    /// `mysql-shun_recovery_time_sec` (10). 0 disables the normal-path unshun.
    pub shun_recovery_time_sec: u32,
    /// `mysql-unshun_algorithm` (0). 1: unshunning a host in one hostgroup unshuns it in all.
    pub unshun_algorithm: u32,
    /// `mysql-connect_retries_on_failure` (10): backend connect retries per request.
    pub connect_retries_on_failure: u32,
    /// `mysql-connect_retries_delay` (1 ms): pause between acquisition attempts.
    pub connect_retries_delay: SimDuration,
    /// `mysql-connect_timeout_server` (1000 ms): one backend connect attempt.
    pub connect_timeout_server: SimDuration,
    /// `mysql-connect_timeout_server_max` (10000 ms): budget from query start; then ERR 9001.
    pub connect_timeout_server_max: SimDuration,
    /// `mysql-query_retries_on_failure` (1): re-execute on a new connection when safe.
    pub query_retries_on_failure: u32,
}

/// Latencies *\[inferred\]*: a docker bridge on one host.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkParams {
    /// A successful new backend connection (TCP + MySQL handshake + auth). Default 1ms.
    pub connect_latency: SimDuration,
    /// A connect to a killed container fails after this: its DNS name is gone ("Unknown
    /// server host 'mysql-3' (-2)", seed). Default 2ms. A session's connect ends at
    /// `connect_timeout_server` and a Monitor check at its timeout if this is longer.
    pub refused_latency: SimDuration,
    /// A statement on a connection whose server died or restarted fails after this
    /// (2013 Lost connection). Default 1ms.
    pub dead_connection_latency: SimDuration,
    /// A monitor ping or read_only check answered by a live server. Default 1ms.
    pub monitor_check_latency: SimDuration,
}

/// A closed-loop sysbench client (`oltp_read_write` / `oltp_read_only`, sysbench 1.0
/// `oltp_common.lua`): each thread runs one event (transaction) after another.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientParams {
    /// Name in reports (the lab: the read/write client and the read-only client).
    pub name: String,
    /// `--threads`.
    pub threads: u32,
    /// `--point-selects` (10).
    #[serde(default = "d_ten")]
    pub point_selects: u32,
    /// Range selects per event (`simple`, `sum`, `order`, `distinct`: 4 with `--range-selects=on`).
    #[serde(default = "d_four")]
    pub range_selects: u32,
    /// Write statements per event (`oltp_read_write`: 1 index update, 1 non-index update,
    /// 1 delete, 1 insert = 4; `oltp_read_only`: 0).
    #[serde(default = "d_four")]
    pub writes: u32,
    /// `--skip-trx`: no BEGIN/COMMIT, every statement autocommits.
    #[serde(default)]
    pub skip_trx: bool,
    /// Per-statement latency. Default lognormal, median 200 µs, sigma 0.5 *\[inferred\]*: gives
    /// ~880 tps for 4 read/write threads and ~740 tps for 2 read-only threads (the lab: 640–1066
    /// and 520–912).
    #[serde(default = "d_latency")]
    pub latency: Latency,
    /// When the client starts (its report's `[ 1s ]` is one second later).
    #[serde(default)]
    pub start_at: SimDuration,
}

/// The keyword of an anchored `match_digest` (`^SELECT` → `SELECT`).
pub fn rule_keyword(digest: &str) -> Option<String> {
    let k = digest.strip_prefix('^')?;
    (!k.is_empty() && k.chars().all(|c| c.is_ascii_alphabetic())).then(|| k.to_ascii_uppercase())
}

impl ProxysqlParams {
    /// All host names: source first, then replicas.
    pub fn hosts(&self) -> Vec<String> {
        let mut v = vec![self.servers.source.clone()];
        v.extend(self.servers.replicas.iter().cloned());
        v
    }

    /// Checks serde cannot make.
    pub fn check(&self) -> Checked {
        if let Some(d) = self.wall_clock_offset {
            if d >= SimDuration::from_secs(1) {
                return fail(
                    "wall_clock_offset",
                    "a duration below 1s (where time 0 falls within its wall-clock second)",
                );
            }
        }
        let hosts = self.hosts();
        for (i, h) in hosts.iter().enumerate() {
            if h.is_empty() {
                return fail("servers.replicas", "non-empty host names");
            }
            if hosts[..i].contains(h) {
                return fail(
                    "servers.replicas",
                    format!("distinct host names (`{h}` twice)"),
                );
            }
        }
        if hosts.len() > 1000 {
            return fail("servers.replicas", "at most 999 replicas");
        }
        let s = &self.servers;
        if s.writer_hostgroup == s.reader_hostgroup {
            return fail("servers.reader_hostgroup", "a hostgroup ≠ writer_hostgroup");
        }
        if s.replica_weight == 0 {
            return fail("servers.replica_weight", "a weight ≥ 1");
        }
        if s.writer_weight_in_reader == 0 {
            return fail("servers.writer_weight_in_reader", "a weight ≥ 1");
        }
        for (i, r) in self.query_rules.iter().enumerate() {
            if rule_keyword(&r.match_digest).is_none() {
                return fail(
                    format!("query_rules[{i}].match_digest"),
                    "an anchored keyword such as \"^SELECT\" (other regexes are not modelled)",
                );
            }
            if !r.apply {
                return fail(
                    format!("query_rules[{i}].apply"),
                    "true (flagIN/flagOUT chains are not modelled)",
                );
            }
        }
        let m = &self.monitor;
        let v = &self.variables;
        for (field, variable, value) in [
            (
                "monitor.ping_interval",
                "mysql-monitor_ping_interval",
                Setting::Millis(m.ping_interval),
            ),
            (
                "monitor.ping_timeout",
                "mysql-monitor_ping_timeout",
                Setting::Millis(m.ping_timeout),
            ),
            (
                "monitor.ping_max_failures",
                "mysql-monitor_ping_max_failures",
                Setting::Count(m.ping_max_failures as u64),
            ),
            (
                "monitor.connect_timeout",
                "mysql-monitor_connect_timeout",
                Setting::Millis(m.connect_timeout),
            ),
            (
                "monitor.read_only_interval",
                "mysql-monitor_read_only_interval",
                Setting::Millis(m.read_only_interval),
            ),
            (
                "monitor.read_only_timeout",
                "mysql-monitor_read_only_timeout",
                Setting::Millis(m.read_only_timeout),
            ),
            (
                "monitor.read_only_max_timeout_count",
                "mysql-monitor_read_only_max_timeout_count",
                Setting::Count(m.read_only_max_timeout_count as u64),
            ),
            (
                "variables.shun_on_failures",
                "mysql-shun_on_failures",
                Setting::Count(v.shun_on_failures as u64),
            ),
            (
                "variables.shun_recovery_time_sec",
                "mysql-shun_recovery_time_sec",
                Setting::Count(v.shun_recovery_time_sec as u64),
            ),
            (
                "variables.unshun_algorithm",
                "mysql-unshun_algorithm",
                Setting::Count(v.unshun_algorithm as u64),
            ),
            (
                "variables.connect_retries_on_failure",
                "mysql-connect_retries_on_failure",
                Setting::Count(v.connect_retries_on_failure as u64),
            ),
            (
                "variables.connect_retries_delay",
                "mysql-connect_retries_delay",
                Setting::Millis(v.connect_retries_delay),
            ),
            (
                "variables.connect_timeout_server",
                "mysql-connect_timeout_server",
                Setting::Millis(v.connect_timeout_server),
            ),
            (
                "variables.connect_timeout_server_max",
                "mysql-connect_timeout_server_max",
                Setting::Millis(v.connect_timeout_server_max),
            ),
            (
                "variables.query_retries_on_failure",
                "mysql-query_retries_on_failure",
                Setting::Count(v.query_retries_on_failure as u64),
            ),
        ] {
            if let Some(expected) = out_of_range(variable, value) {
                return fail(field, expected);
            }
        }
        if let LoopPhase::Fixed { ping, read_only } = &m.phase {
            if *ping >= m.ping_interval {
                return fail("monitor.phase.ping", "an offset < monitor.ping_interval");
            }
            if *read_only >= m.read_only_interval {
                return fail(
                    "monitor.phase.read_only",
                    "an offset < monitor.read_only_interval",
                );
            }
        }
        let n = &self.network;
        for (f, d) in [
            ("network.connect_latency", n.connect_latency),
            ("network.refused_latency", n.refused_latency),
            ("network.dead_connection_latency", n.dead_connection_latency),
            ("network.monitor_check_latency", n.monitor_check_latency),
        ] {
            if d == SimDuration::ZERO {
                return fail(f, "a duration > 0");
            }
        }
        if self.clients.len() > 255 {
            return fail("clients", "at most 255 clients");
        }
        for (i, c) in self.clients.iter().enumerate() {
            if c.threads == 0 || c.threads > 4096 {
                return fail(format!("clients[{i}].threads"), "1 to 4096 threads");
            }
            // sysbench's defaults are 10 / 4 / 4; the sum must not wrap a u32.
            for (f, n) in [
                ("point_selects", c.point_selects),
                ("range_selects", c.range_selects),
                ("writes", c.writes),
            ] {
                if n > 10_000 {
                    return fail(
                        format!("clients[{i}].{f}"),
                        "at most 10000 statements per event",
                    );
                }
            }
            if c.point_selects + c.range_selects + c.writes == 0 {
                return fail(
                    format!("clients[{i}].point_selects"),
                    "at least one statement per event",
                );
            }
            match &c.latency {
                Latency::LogNormal { sigma, .. } if !(0.0..=5.0).contains(sigma) => {
                    return fail(format!("clients[{i}].latency.sigma"), "a sigma in [0, 5]");
                }
                _ => {}
            }
        }
        super::script::check_actions(&self.actions, &hosts, self.horizon)?;
        positive("horizon", self.horizon)?;
        // Every statement is simulated (~5e6 a second of wall time): bound the expected count
        // so that a run ends in well under a minute (the lab's 90 s lab is ~2e6).
        let statements: f64 = self
            .clients
            .iter()
            .map(|c| {
                let busy = (self.horizon.as_secs_f64() - c.start_at.as_secs_f64()).max(0.0);
                c.threads as f64 * busy / c.latency.mean_s().max(1e-6)
            })
            .sum();
        if statements > 2e8 {
            return fail(
                "horizon",
                format!(
                    "at most 2e8 expected statements (clients' threads x horizon / mean \
                     latency); found {statements:.3e}"
                ),
            );
        }
        crate::model::check_events(&self.event_terms())
    }

    /// The terms of the events-per-run estimate ([`crate::model::check_events`]):
    /// - statements: one step a statement, threads x (horizon − start) / mean latency;
    /// - retry loops: a thread that finds no server, or only dead ones, takes a step (and a
    ///   failed connect) every `connect_retries_delay`: 2 x threads x (horizon − start) /
    ///   `connect_retries_delay`, whatever the latency (a 1 ns delay ran for minutes);
    /// - the Monitor: two events a ping round and two a read_only round over the horizon;
    /// - one event a scripted action.
    pub fn event_terms(&self) -> Vec<crate::model::EventTerm> {
        let h = self.horizon.as_secs_f64();
        let (mut statements, mut retries) = (0.0, 0.0);
        for c in &self.clients {
            let busy = (h - c.start_at.as_secs_f64()).max(0.0);
            statements += c.threads as f64 * busy / c.latency.mean_s().max(1e-6);
            retries +=
                2.0 * c.threads as f64 * busy / self.variables.connect_retries_delay.as_secs_f64();
        }
        let m = &self.monitor;
        let (monitor, monitor_field) = if m.enabled {
            let ping = 2.0 * h / m.ping_interval.as_secs_f64();
            let ro = 2.0 * h / m.read_only_interval.as_secs_f64();
            let field = if ping >= ro {
                "monitor.ping_interval"
            } else {
                "monitor.read_only_interval"
            };
            (ping + ro, field)
        } else {
            (0.0, "monitor.enabled")
        };
        vec![
            (
                "horizon",
                "statements (threads x horizon / mean latency)",
                statements,
            ),
            (
                "variables.connect_retries_delay",
                "connect retry steps (2 x threads x horizon / connect_retries_delay)",
                retries,
            ),
            (
                monitor_field,
                "Monitor rounds (2 x horizon / each interval)",
                monitor,
            ),
            ("actions", "scripted actions", self.actions.len() as f64),
        ]
    }
}

impl Default for ProxysqlParams {
    fn default() -> Self {
        ProxysqlParams {
            servers: ServersParams::default(),
            user: UserParams::default(),
            query_rules: vec![],
            monitor: MonitorParams::default(),
            variables: Variables::default(),
            network: NetworkParams::default(),
            clients: vec![],
            actions: vec![],
            wall_clock_offset: None,
            outage_gap: SimDuration::from_millis(100),
            horizon: SimDuration::from_secs(60),
        }
    }
}

impl Default for ServersParams {
    fn default() -> Self {
        ServersParams {
            source: "mysql-1".into(),
            replicas: vec!["mysql-2".into(), "mysql-3".into()],
            writer_in_reader_hostgroup: false,
            writer_weight_in_reader: 1,
            replica_weight: 1,
            writer_hostgroup: 10,
            reader_hostgroup: 20,
        }
    }
}
impl Default for UserParams {
    fn default() -> Self {
        UserParams {
            name: "sbuser".into(),
            default_hostgroup: 10,
            transaction_persistent: true,
        }
    }
}
impl Default for MonitorParams {
    fn default() -> Self {
        MonitorParams {
            enabled: true,
            ping_interval: SimDuration::from_millis(8000),
            ping_timeout: SimDuration::from_secs(1),
            ping_max_failures: 3,
            connect_timeout: SimDuration::from_millis(600),
            read_only_interval: SimDuration::from_secs(1),
            read_only_timeout: SimDuration::from_millis(800),
            read_only_max_timeout_count: 3,
            writer_is_also_reader: true,
            phase: LoopPhase::Uniform,
        }
    }
}
impl Default for Variables {
    fn default() -> Self {
        Variables {
            shun_on_failures: 5,
            shun_recovery_time_sec: 10,
            unshun_algorithm: 0,
            connect_retries_on_failure: 10,
            connect_retries_delay: SimDuration::from_millis(1),
            connect_timeout_server: SimDuration::from_secs(1),
            connect_timeout_server_max: SimDuration::from_secs(10),
            query_retries_on_failure: 1,
        }
    }
}
impl Default for NetworkParams {
    fn default() -> Self {
        NetworkParams {
            connect_latency: SimDuration::from_millis(1),
            refused_latency: SimDuration::from_millis(2),
            dead_connection_latency: SimDuration::from_millis(1),
            monitor_check_latency: SimDuration::from_millis(1),
        }
    }
}

fn d_true() -> bool {
    true
}
fn d_four() -> u32 {
    4
}
fn d_ten() -> u32 {
    10
}
fn d_latency() -> Latency {
    Latency::LogNormal {
        median: SimDuration::from_nanos(200_000),
        sigma: 0.5,
    }
}
