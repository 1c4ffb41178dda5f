//! The run's tally: the counters and records the metrics and the report read (connect
//! errors, shuns, lazy unshuns, the first fault, the read outages, the actions as they
//! happened). The sessions, the Monitor and the actions add to it; nothing in it drives the
//! simulation.

use super::hostgroups::PickStats;
use crate::sim::{SimDuration, SimTime};

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

/// The counters of one run.
#[derive(Debug)]
pub struct Tally {
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
}

impl Tally {
    /// A fault hits `hosts` at `now` (only the first one is kept).
    pub(crate) fn fault(&mut self, now: SimTime, hosts: &[u16]) {
        if self.first_fault.is_none() {
            self.first_fault = Some((now, hosts.to_vec()));
        }
    }

    /// A read-only client's statement succeeded at `now`: a gap longer than `outage_gap`
    /// since the previous one, after the first fault, was an outage.
    #[inline]
    pub(crate) fn read_ok(&mut self, now: SimTime, outage_gap: SimDuration) {
        if let Some((tf, _)) = self.first_fault {
            if now.since(self.last_read_ok) > outage_gap && now > tf {
                self.outages.push((self.last_read_ok, now));
            }
        }
        self.last_read_ok = now;
    }
}
