//! The action script of a ProxySQL run: faults (kill, black-hole, start) and operator
//! statements (promote, `INSERT`, `LOAD MYSQL SERVERS TO RUNTIME`, `SET` a variable) at given
//! times, and their checks.

use super::ranges::{proxysql_range, RANGES_SOURCE};
use crate::model::kit::{fail, Checked};
use crate::sim::SimDuration;
use serde::{Deserialize, Serialize};

/// A scripted action at a time.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedAction {
    /// When (simulated time since the start).
    pub at: SimDuration,
    /// What.
    pub action: Action,
}

/// Faults and operator actions (`docs/proxysql.md` "Faults and operator actions").
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Action {
    /// `docker kill`: connects fail fast (the DNS name is gone), connections break.
    Kill {
        /// Host name.
        host: String,
    },
    /// Every host that is read_only=1 at that moment is killed.
    KillReplicas,
    /// Black-hole: connects time out, queries on open connections hang.
    BlackHole {
        /// Host name.
        host: String,
    },
    /// `docker start`: the server accepts connections again (read_only as before).
    Start {
        /// Host name.
        host: String,
    },
    /// Orchestrator-style promotion: `SET GLOBAL read_only=0` on `host`.
    Promote {
        /// Host name.
        host: String,
    },
    /// `SET GLOBAL read_only=…` on `host`.
    SetReadOnly {
        /// Host name.
        host: String,
        /// The new value.
        read_only: bool,
    },
    /// `INSERT INTO mysql_servers (hostgroup_id, hostname, weight, status='ONLINE')`: the
    /// admin table only; it takes effect at the next `LoadMysqlServers`.
    InsertServer {
        /// `hostgroup_id`.
        hostgroup: u32,
        /// `hostname`.
        host: String,
        /// `weight`.
        #[serde(default = "one")]
        weight: u32,
    },
    /// `LOAD MYSQL SERVERS TO RUNTIME`.
    LoadMysqlServers,
    /// `UPDATE global_variables …; LOAD MYSQL VARIABLES TO RUNTIME` (both at once). Names:
    /// `mysql-monitor_writer_is_also_reader`, `mysql-shun_on_failures`,
    /// `mysql-shun_recovery_time_sec`, `mysql-connect_retries_on_failure`,
    /// `mysql-connect_timeout_server`, `mysql-connect_timeout_server_max` (ms).
    SetVariable {
        /// Variable name.
        name: String,
        /// Its value as ProxySQL's admin would take it (`'true'`, `'10000'`).
        value: String,
    },
    /// Print the runtime `mysql_servers` table in the report (`SELECT … FROM
    /// runtime_mysql_servers`).
    ShowServers,
}

impl Action {
    /// The host an action names, if any.
    pub fn host(&self) -> Option<&str> {
        match self {
            Action::Kill { host }
            | Action::BlackHole { host }
            | Action::Start { host }
            | Action::Promote { host }
            | Action::SetReadOnly { host, .. }
            | Action::InsertServer { host, .. } => Some(host),
            _ => None,
        }
    }
    /// A short label for charts and reports.
    pub fn label(&self) -> String {
        match self {
            Action::Kill { host } => format!("kill {host}"),
            Action::KillReplicas => "kill replicas".into(),
            Action::BlackHole { host } => format!("black-hole {host}"),
            Action::Start { host } => format!("start {host}"),
            Action::Promote { host } => format!("promote {host}"),
            Action::SetReadOnly { host, read_only } => {
                format!("read_only={} on {host}", *read_only as u8)
            }
            Action::InsertServer {
                hostgroup, host, ..
            } => format!("insert ({hostgroup}, {host})"),
            Action::LoadMysqlServers => "LOAD MYSQL SERVERS".into(),
            Action::SetVariable { name, value } => format!("{name}={value}"),
            Action::ShowServers => "show servers".into(),
        }
    }
    /// A fault (the start of "time to detect").
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Action::Kill { .. } | Action::KillReplicas | Action::BlackHole { .. }
        )
    }
}

/// Variables a `SetVariable` action may name.
pub const SETTABLE: &[&str] = &[
    "mysql-monitor_writer_is_also_reader",
    "mysql-shun_on_failures",
    "mysql-shun_recovery_time_sec",
    "mysql-connect_retries_on_failure",
    "mysql-connect_timeout_server",
    "mysql-connect_timeout_server_max",
];

/// Check the script: hosts that exist, weights ≥ 1, settable variables within ProxySQL's
/// ranges, times within the horizon.
pub(super) fn check_actions(
    actions: &[ScriptedAction],
    hosts: &[String],
    horizon: SimDuration,
) -> Checked {
    for (i, a) in actions.iter().enumerate() {
        if let Some(h) = a.action.host() {
            if !hosts.iter().any(|x| x == h) {
                return fail(
                    format!("actions[{i}].action.host"),
                    format!("one of the servers: {}", hosts.join(", ")),
                );
            }
        }
        if let Action::InsertServer { weight: 0, .. } = a.action {
            return fail(format!("actions[{i}].action.weight"), "a weight ≥ 1");
        }
        if let Action::SetVariable { name, value } = &a.action {
            if !SETTABLE.contains(&name.as_str()) {
                return fail(
                    format!("actions[{i}].action.name"),
                    format!("one of: {}", SETTABLE.join(", ")),
                );
            }
            let ok = if name == "mysql-monitor_writer_is_also_reader" {
                matches!(value.as_str(), "true" | "false" | "1" | "0")
            } else {
                value.parse::<u64>().is_ok()
            };
            if !ok {
                return fail(
                    format!("actions[{i}].action.value"),
                    "'true'/'false' or an integer, as ProxySQL's admin takes it",
                );
            }
            // The ranges of the static `variables` (ProxySQL's own, see PROXYSQL_RANGES):
            // a 0 ms connect budget busy-looped the run, a u64 of milliseconds overflowed
            // its nanoseconds, and retries = 4294967295 wrapped the shun threshold to 0.
            if name != "mysql-monitor_writer_is_also_reader" {
                let n = value.parse::<u64>().expect("checked above");
                let (lo, hi) = proxysql_range(name).expect("a ranged variable");
                if !(lo..=hi).contains(&n) {
                    let unit = if name.starts_with("mysql-connect_timeout") {
                        " (milliseconds)"
                    } else {
                        ""
                    };
                    return fail(
                        format!("actions[{i}].action.value"),
                        format!(
                            "an integer from {lo} to {hi}{unit} (ProxySQL's range for \
                             {name}, {RANGES_SOURCE})"
                        ),
                    );
                }
            }
        }
        if a.at > horizon {
            return fail(format!("actions[{i}].at"), "a time ≤ horizon");
        }
    }
    Ok(())
}

/// The default `weight` of an `InsertServer` (ProxySQL's `mysql_servers.weight` default).
fn one() -> u32 {
    1
}
