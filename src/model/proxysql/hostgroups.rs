//! The HostGroups Manager: runtime `mysql_servers` entries (one `MySrvC` per hostgroup and
//! host), traffic shunning, lazy unshunning, `shun_and_killall`, read_only-driven moves and
//! `LOAD MYSQL SERVERS TO RUNTIME` (sysown/proxysql `lib/MySrvC.cpp`
//! `MySrvC::connect_error`–sysown/proxysql `lib/MySQL_HostGroups_Manager.cpp`
//! `read_only_action_v2`).

use crate::sim::rng::below;
use crate::sim::{SimRng, SimTime};

/// `mysql_servers.status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Selectable.
    Online,
    /// Not selectable until unshunned.
    Shunned,
    /// Drained by the admin (not produced by this model, kept for the table).
    OfflineSoft,
    /// Removed (not shown in `runtime_mysql_servers`).
    OfflineHard,
}

impl Status {
    /// As ProxySQL prints it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Online => "ONLINE",
            Status::Shunned => "SHUNNED",
            Status::OfflineSoft => "OFFLINE_SOFT",
            Status::OfflineHard => "OFFLINE_HARD",
        }
    }
}

/// One runtime `MySrvC`: a host in a hostgroup, with its connection pool counters.
#[derive(Clone, Debug)]
pub struct Entry {
    /// `hostgroup_id`.
    pub hg: u32,
    /// Host index.
    pub host: u16,
    /// Status.
    pub(crate) status: Status,
    /// `weight`.
    pub(crate) weight: u32,
    /// `shunned_automatic`.
    pub(crate) shunned_auto: bool,
    /// `shunned_and_kill_all_connections`.
    pub(crate) kill_all: bool,
    /// `time_last_detected_error` (wall-clock seconds).
    pub(crate) tlde: i64,
    /// `connect_ERR_at_time_last_detected_error`.
    pub(crate) err_count: u32,
    /// Free pooled connections that work.
    pub(crate) free: u32,
    /// Free pooled connections whose server died or restarted since they were opened.
    pub(crate) stale: u32,
    /// Connections in use by sessions.
    pub used: u32,
}

/// A status change, for the timeline.
#[derive(Clone, Debug)]
pub struct Change {
    /// When.
    pub t: SimTime,
    /// Wall-clock second.
    pub(crate) wall: i64,
    /// Hostgroup.
    pub hg: u32,
    /// Host index.
    pub host: u16,
    /// Before (`None`: a new entry).
    pub from: Option<Status>,
    /// After.
    pub to: Status,
    /// Why.
    pub(crate) cause: &'static str,
}

/// The lazy-unshun outcome of one pick.
#[derive(Clone, Copy, Debug, Default)]
pub struct PickStats {
    /// Entries unshunned on the normal path.
    pub(crate) normal: u32,
    /// Entries unshunned on the desperate path.
    pub(crate) desperate: u32,
}

/// The HostGroups Manager's state.
pub struct HostGroups {
    /// Every entry ever created (removed ones are OFFLINE_HARD; indices are stable).
    pub entries: Vec<Entry>,
    /// The admin `mysql_servers` table: (hostgroup, host, weight).
    pub(crate) config: Vec<(u32, u16, u32)>,
    /// Status changes.
    pub(crate) changes: Vec<Change>,
    /// Log lines (time, text), capped.
    pub(crate) log: Vec<(SimTime, String)>,
    /// Last wall second a "no servers available" line was logged, per hostgroup.
    desperate_logged: Vec<(u32, i64)>,
    /// Per host: RO=0 seen since the last commit (`read_only_action_v2`).
    pub(crate) ro0_seen: Vec<bool>,
    /// Scratch buffer of candidate indices.
    cand: Vec<u32>,
}

/// `time_last_detected_error` of an entry that never had one (far in the past, no overflow).
pub const NEVER: i64 = i64::MIN / 4;

/// Log lines kept per run (the rest are counted, not kept).
pub const LOG_CAP: usize = 400;

impl HostGroups {
    /// Entries built from the admin table (all ONLINE).
    pub fn new(config: Vec<(u32, u16, u32)>, hosts: usize) -> Self {
        let mut h = HostGroups {
            entries: vec![],
            config,
            changes: vec![],
            log: vec![],
            desperate_logged: vec![],
            ro0_seen: vec![false; hosts],
            cand: vec![],
        };
        for &(hg, host, weight) in &h.config.clone() {
            h.entries.push(Entry::new(hg, host, weight));
        }
        h
    }

    /// The live (not OFFLINE_HARD) entry of `host` in `hg`.
    pub(crate) fn find(&self, hg: u32, host: u16) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.hg == hg && e.host == host && e.status != Status::OfflineHard)
    }
    fn find_any(&self, hg: u32, host: u16) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.hg == hg && e.host == host)
    }

    /// Log a line (kept up to [`LOG_CAP`]).
    pub(crate) fn say(&mut self, t: SimTime, s: String) {
        if self.log.len() < LOG_CAP {
            self.log.push((t, s));
        }
    }

    fn set_status(&mut self, i: usize, to: Status, t: SimTime, wall: i64, cause: &'static str) {
        let e = &mut self.entries[i];
        if e.status == to {
            return;
        }
        let from = e.status;
        e.status = to;
        self.changes.push(Change {
            t,
            wall,
            hg: e.hg,
            host: e.host,
            from: Some(from),
            to,
            cause,
        });
    }

    /// `MySrvC::connect_error()` (sysown/proxysql `lib/MySrvC.cpp` `MySrvC::connect_error`): a
    /// failed or timed-out backend connect at wall
    /// second `wall`. Returns true when it shunned the entry.
    pub(crate) fn connect_error(
        &mut self,
        i: usize,
        wall: i64,
        threshold: u32,
        t: SimTime,
        name: &str,
    ) -> bool {
        let e = &mut self.entries[i];
        if wall > e.tlde {
            e.tlde = wall;
            e.err_count = 1;
            false
        } else if wall == e.tlde {
            e.err_count += 1;
            if e.err_count >= threshold && e.status == Status::Online {
                e.shunned_auto = true;
                let (n, hg) = (e.err_count, e.hg);
                self.set_status(i, Status::Shunned, t, wall, "connect errors");
                self.say(
                    t,
                    format!("Shunning server {name}:3306 (hg {hg}) with {n} errors/sec"),
                );
                true
            } else {
                false
            }
        } else {
            false
        }
    }

    /// `MyHGC::get_random_MySrvC()` (sysown/proxysql `lib/MyHGC.cpp` `MyHGC::get_random_MySrvC`):
    /// lazy unshun (normal, then desperate path) and a
    /// weighted random pick among ONLINE entries of `hg`. `waits` = (normal, desperate)
    /// `max_wait_sec`; `unshun_all` is `unshun_algorithm = 1`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pick(
        &mut self,
        hg: u32,
        t: SimTime,
        wall: i64,
        waits: (i64, i64),
        recovery_enabled: bool,
        unshun_all: bool,
        rng: &mut SimRng,
        stats: &mut PickStats,
    ) -> Option<usize> {
        let mut cand = std::mem::take(&mut self.cand);
        cand.clear();
        let mut sum = 0u64;
        for i in 0..self.entries.len() {
            let e = &self.entries[i];
            if e.hg != hg {
                continue;
            }
            match e.status {
                Status::Online => {
                    sum += e.weight as u64;
                    cand.push(i as u32);
                }
                Status::Shunned
                    if e.shunned_auto
                        && recovery_enabled
                        && wall > e.tlde
                        && wall - e.tlde > waits.0
                        && (!e.kill_all || (e.used == 0 && e.free + e.stale == 0)) =>
                {
                    self.unshun(i, t, wall, true, "lazy unshun (normal)");
                    stats.normal += 1;
                    if unshun_all {
                        let host = self.entries[i].host;
                        for j in 0..self.entries.len() {
                            if j != i
                                && self.entries[j].host == host
                                && self.entries[j].status == Status::Shunned
                            {
                                self.unshun(j, t, wall, true, "unshun_algorithm=1");
                            }
                        }
                    }
                    sum += self.entries[i].weight as u64;
                    cand.push(i as u32);
                }
                _ => {}
            }
        }
        if sum == 0 {
            // The "desperate" path (MyHGC.cpp:213-260): ignores kill_all and keeps that flag,
            // but clears shunned_automatic, the error count and the last-error time.
            let mut logged = false;
            for i in 0..self.entries.len() {
                let e = &self.entries[i];
                if e.hg == hg
                    && e.status == Status::Shunned
                    && e.shunned_auto
                    && wall > e.tlde
                    && wall - e.tlde > waits.1
                {
                    if !logged {
                        logged = true;
                        self.log_desperate(hg, t, wall, waits.1);
                    }
                    self.unshun(i, t, wall, false, "lazy unshun (desperate)");
                    stats.desperate += 1;
                    sum += self.entries[i].weight as u64;
                    cand.push(i as u32);
                }
            }
        }
        let pick = if sum == 0 {
            None
        } else if cand.len() == 1 {
            Some(cand[0] as usize)
        } else {
            let mut r = below(rng, sum);
            let mut out = cand[cand.len() - 1] as usize;
            for &c in &cand {
                let w = self.entries[c as usize].weight as u64;
                if r < w {
                    out = c as usize;
                    break;
                }
                r -= w;
            }
            Some(out)
        };
        self.cand = cand;
        pick
    }

    fn log_desperate(&mut self, hg: u32, t: SimTime, wall: i64, wait: i64) {
        let slot = self.desperate_logged.iter().position(|(h, _)| *h == hg);
        let last = slot.map(|s| self.desperate_logged[s].1);
        if last == Some(wall) {
            return;
        }
        match slot {
            Some(s) => self.desperate_logged[s].1 = wall,
            None => self.desperate_logged.push((hg, wall)),
        }
        self.say(
            t,
            format!(
                "Hostgroup {hg} has no servers available! Checking servers shunned for more than {wait} second"
            ),
        );
    }

    /// Lazy unshun. Both paths (MyHGC.cpp) set ONLINE and clear `shunned_automatic`,
    /// `connect_ERR_at_time_last_detected_error` and `time_last_detected_error`; only the
    /// normal path (`clear_kill_all`) also clears `shunned_and_kill_all_connections`.
    fn unshun(
        &mut self,
        i: usize,
        t: SimTime,
        wall: i64,
        clear_kill_all: bool,
        cause: &'static str,
    ) {
        self.set_status(i, Status::Online, t, wall, cause);
        let e = &mut self.entries[i];
        e.shunned_auto = false;
        e.err_count = 0;
        e.tlde = NEVER;
        if clear_kill_all {
            e.kill_all = false;
        }
    }

    /// `shun_and_killall(host)` (sysown/proxysql `lib/MySQL_HostGroups_Manager.cpp`
    /// `shun_and_killall`): every entry of `host`. Returns the entries whose
    /// used connections must be killed, and how many of them went ONLINE → SHUNNED.
    pub(crate) fn shun_and_killall(&mut self, host: u16, t: SimTime, wall: i64) -> (Vec<usize>, u32) {
        let mut killed = vec![];
        let mut newly = 0;
        for i in 0..self.entries.len() {
            if self.entries[i].host != host {
                continue;
            }
            let e = &self.entries[i];
            let act = match e.status {
                Status::Online => true,
                Status::Shunned => e.shunned_auto,
                Status::OfflineSoft => {
                    let e = &mut self.entries[i];
                    e.shunned_auto = true;
                    e.kill_all = true;
                    e.free = 0;
                    e.stale = 0;
                    false
                }
                Status::OfflineHard => false,
            };
            if act {
                newly += (self.entries[i].status == Status::Online) as u32;
                self.set_status(i, Status::Shunned, t, wall, "missed heartbeats");
                let e = &mut self.entries[i];
                e.shunned_auto = true;
                e.kill_all = true;
                e.free = 0;
                e.stale = 0;
                killed.push(i);
            }
            if self.entries[i].status != Status::OfflineHard {
                self.entries[i].tlde = wall;
            }
        }
        (killed, newly)
    }

    /// `copy_if_not_exists` (sysown/proxysql `lib/MySQL_HostGroups_Manager.cpp`
    /// `read_only_action_v2`): copy entry `src` into `dst_hg`, ONLINE if it was shunned.
    fn copy_into(&mut self, src: usize, dst_hg: u32, t: SimTime, wall: i64, cause: &'static str) {
        let (host, weight, status) = {
            let e = &self.entries[src];
            (e.host, e.weight, e.status)
        };
        let status = if status == Status::Shunned {
            Status::Online
        } else {
            status
        };
        match self.find_any(dst_hg, host) {
            Some(j) if self.entries[j].status != Status::OfflineHard => {}
            Some(j) => {
                self.set_status(j, status, t, wall, cause);
                let e = &mut self.entries[j];
                e.weight = weight;
                e.shunned_auto = false;
                e.kill_all = false;
                e.err_count = 0;
            }
            None => {
                let mut e = Entry::new(dst_hg, host, weight);
                e.status = status;
                self.entries.push(e);
                self.changes.push(Change {
                    t,
                    wall,
                    hg: dst_hg,
                    host,
                    from: None,
                    to: status,
                    cause,
                });
            }
        }
        if !self.config.iter().any(|c| c.0 == dst_hg && c.1 == host) {
            self.config.push((dst_hg, host, weight));
        }
    }

    /// Remove entry `i` (OFFLINE_HARD), dropping its free connections.
    fn remove(&mut self, i: usize, t: SimTime, wall: i64, cause: &'static str) {
        self.set_status(i, Status::OfflineHard, t, wall, cause);
        let (hg, host) = (self.entries[i].hg, self.entries[i].host);
        self.entries[i].free = 0;
        self.entries[i].stale = 0;
        self.config.retain(|c| !(c.0 == hg && c.1 == host));
    }

    /// `read_only_action_v2` for one host (sysown/proxysql `lib/MySQL_HostGroups_Manager.cpp`
    /// `read_only_action_v2` table). `w`/`r`: the replication pair.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn read_only_action(
        &mut self,
        host: u16,
        read_only: bool,
        w: u32,
        r: u32,
        wiao: bool,
        t: SimTime,
        wall: i64,
        name: &str,
    ) {
        let writer = self.find(w, host);
        if !read_only {
            match writer {
                None => {
                    let Some(re) = self.find(r, host) else {
                        return;
                    };
                    self.copy_into(re, w, t, wall, "read_only=0: copied to writer HG");
                    self.say(
                        t,
                        format!("read_only_action_v2() detected RO=0 on server {name}:3306: moved to writer hostgroup {w}"),
                    );
                    if !wiao {
                        self.remove(re, t, wall, "read_only=0, writer_is_also_reader=false");
                    }
                    self.ro0_seen[host as usize] = true;
                }
                Some(_) => {
                    if !self.ro0_seen[host as usize] {
                        self.ro0_seen[host as usize] = true;
                        self.say(
                            t,
                            format!("read_only_action_v2() detected RO=0 on server {name}:3306 for the first time after commit(), but no need to reconfigure"),
                        );
                    }
                }
            }
        } else if let Some(we) = writer {
            self.copy_into(we, r, t, wall, "read_only=1: copied to reader HG");
            self.remove(we, t, wall, "read_only=1: removed from writer HG");
            self.ro0_seen[host as usize] = false;
            self.say(
                t,
                format!("read_only_action_v2() detected RO=1 on server {name}:3306: moved to reader hostgroup {r}"),
            );
        }
    }

    /// `LOAD MYSQL SERVERS TO RUNTIME` (`commit()`, sysown/proxysql `lib/MyHGC.cpp`
    /// `MyHGC::get_random_MySrvC` item 4): configured statuses
    /// (ONLINE) for configured rows, OFFLINE_HARD for the rest.
    pub(crate) fn load_to_runtime(&mut self, t: SimTime, wall: i64) {
        for i in 0..self.entries.len() {
            let (hg, host) = (self.entries[i].hg, self.entries[i].host);
            match self.config.iter().find(|c| c.0 == hg && c.1 == host) {
                Some(&(_, _, weight)) => {
                    self.set_status(i, Status::Online, t, wall, "LOAD MYSQL SERVERS TO RUNTIME");
                    let e = &mut self.entries[i];
                    e.weight = weight;
                    e.shunned_auto = false;
                    e.kill_all = false;
                }
                None => {
                    if self.entries[i].status != Status::OfflineHard {
                        self.remove(i, t, wall, "LOAD MYSQL SERVERS TO RUNTIME");
                    }
                }
            }
        }
        for k in 0..self.config.len() {
            let (hg, host, weight) = self.config[k];
            if self.find_any(hg, host).is_none() {
                self.entries.push(Entry::new(hg, host, weight));
                self.changes.push(Change {
                    t,
                    wall,
                    hg,
                    host,
                    from: None,
                    to: Status::Online,
                    cause: "LOAD MYSQL SERVERS TO RUNTIME",
                });
            }
        }
        for s in self.ro0_seen.iter_mut() {
            *s = false;
        }
    }

    /// The `runtime_mysql_servers` table, ordered by hostgroup then host.
    pub fn table(&self, names: &[String], wall: i64) -> String {
        let mut rows: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.status != Status::OfflineHard)
            .collect();
        rows.sort_by_key(|e| (e.hg, e.host));
        let mut s = String::from(
            "hostgroup_id  hostname  status   weight  shunned_auto  kill_all  secs_since_last_error\n",
        );
        for e in rows {
            let since = if e.tlde == NEVER {
                "-".to_string()
            } else {
                (wall - e.tlde).to_string()
            };
            s.push_str(&format!(
                "{:<13} {:<9} {:<8} {:<7} {:<13} {:<9} {}\n",
                e.hg,
                names[e.host as usize],
                e.status.name(),
                e.weight,
                e.shunned_auto as u8,
                e.kill_all as u8,
                since
            ));
        }
        s
    }
}

impl Entry {
    /// A fresh ONLINE entry.
    pub fn new(hg: u32, host: u16, weight: u32) -> Self {
        Entry {
            hg,
            host,
            status: Status::Online,
            weight,
            shunned_auto: false,
            kill_all: false,
            tlde: NEVER,
            err_count: 0,
            free: 0,
            stale: 0,
            used: 0,
        }
    }
}
