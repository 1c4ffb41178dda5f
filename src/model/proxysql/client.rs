//! Closed-loop sysbench threads and the ProxySQL session that serves each of them: routing
//! (query rules, `transaction_persistent`), connection acquisition (`CONNECTING_SERVER`,
//! sysown/proxysql `lib/MySQL_Session.cpp` (`CONNECTING_SERVER`): retries,
//! `connect_timeout_server`, `connect_timeout_server_max` → ERR 9001),
//! statement execution on pooled backend connections, `query_retries_on_failure`, and
//! sysbench's `--mysql-ignore-errors=all` (a failed event restarts at once).

use super::event::Event;
use super::host::{Host, HostState};
use super::hostgroups::{HostGroups, Status};
use super::params::{rule_keyword, ClientParams, Latency, ProxysqlParams};
use super::runtime::{Runtime, WallClock};
use super::tally::Tally;
use crate::sim::rng::{below, stream};
use crate::sim::{Scheduler, SimRng, SimTime, TraceRecord};

/// A statement of a sysbench event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// `BEGIN`.
    Begin,
    /// A point or range `SELECT`.
    Select,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `INSERT`.
    Insert,
    /// `COMMIT`.
    Commit,
}

impl Stmt {
    /// First word of the digest.
    pub(crate) fn keyword(self) -> &'static str {
        match self {
            Stmt::Begin => "BEGIN",
            Stmt::Select => "SELECT",
            Stmt::Update => "UPDATE",
            Stmt::Delete => "DELETE",
            Stmt::Insert => "INSERT",
            Stmt::Commit => "COMMIT",
        }
    }
}

/// A backend connection a session holds.
#[derive(Clone, Copy, Debug)]
pub struct Conn {
    /// Its `MySrvC` entry.
    pub entry: u32,
    /// Its server died or restarted since it was opened (the next statement on it fails).
    pub(crate) stale: bool,
}

/// What a thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    /// Start the current statement.
    Idle,
    /// Try to acquire a connection again (after `connect_retries_delay`).
    Acquire,
    /// A new backend connection to `entry` completes (`ok`) or fails.
    Connect {
        /// Entry.
        entry: u32,
        /// Succeeds.
        ok: bool,
    },
    /// The statement on `entry` completes (`ok`) or fails (2013).
    Query {
        /// Entry.
        entry: u32,
        /// Succeeds.
        ok: bool,
    },
    /// The statement hangs on a black-holed server (no event pending).
    Hung {
        /// Entry.
        entry: u32,
    },
}

/// One sysbench thread (and its ProxySQL session).
pub struct Thread {
    /// Generation of the pending step.
    pub(crate) gen: u32,
    /// What it waits for.
    pub(crate) pending: Pending,
    /// Position in the script.
    pub(crate) stmt: u16,
    /// Destination hostgroup of the current statement.
    pub(crate) hg: u32,
    /// `max_connect_time` of the current acquisition.
    pub(crate) deadline: SimTime,
    /// Connect retries left.
    pub(crate) retries_left: u32,
    /// Query retries left.
    pub(crate) query_retries_left: u32,
    /// Connection carrying the current statement.
    pub conn: Option<Conn>,
    /// The current statement runs on the transaction's connection.
    pub on_trx: bool,
    /// Connection held by an open transaction.
    pub trx_conn: Option<Conn>,
    /// A transaction is open.
    pub(crate) in_trx: bool,
    /// `transaction_persistent_hostgroup`.
    pub(crate) pinned: Option<u32>,
    /// Its stream (`"sysbench"`, client << 16 | thread): latencies and server picks.
    pub(crate) rng: SimRng,
}

impl Thread {
    /// A thread about to start.
    pub fn new(rng: SimRng) -> Self {
        Thread {
            gen: 0,
            pending: Pending::Idle,
            stmt: 0,
            hg: 0,
            deadline: SimTime::ZERO,
            retries_left: 0,
            query_retries_left: 0,
            conn: None,
            on_trx: false,
            trx_conn: None,
            in_trx: false,
            pinned: None,
            rng,
        }
    }
}

/// One second of a client's report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sec {
    /// Events (transactions) completed.
    pub tx: u32,
    /// Statements completed.
    pub(crate) q: u32,
    /// Errors (failed events).
    pub err: u32,
}

/// A sysbench client.
pub struct ClientState {
    /// Statements of one event.
    pub(crate) script: Vec<Stmt>,
    /// Unpinned destination of each statement.
    pub routes: Vec<u32>,
    /// Read-only client (no writes): its errors are reads lost.
    pub reader: bool,
    /// Start time.
    pub start: SimTime,
    /// Threads.
    pub threads: Vec<Thread>,
    /// Per-second counters from `start`.
    pub secs: Vec<Sec>,
    /// Events completed.
    pub tx: u64,
    /// Statements completed.
    pub(crate) queries: u64,
    /// Errors returned to the client.
    pub errors: u64,
    /// ... of which ERR 9001 (max connect timeout).
    pub errors_9001: u64,
    /// ... of which a backend connect error after the retries (2003/2005).
    pub(crate) errors_backend: u64,
    /// ... of which 2013 Lost connection (not retried or retried and failed again).
    pub(crate) errors_lost: u64,
}

impl ClientState {
    /// The per-second counters of `now`'s second.
    #[inline]
    pub(crate) fn sec(&mut self, now: SimTime) -> &mut Sec {
        let i = (now.since(self.start).as_nanos() / 1_000_000_000) as usize;
        if i >= self.secs.len() {
            self.secs.resize(i + 1, Sec::default());
        }
        &mut self.secs[i]
    }

    /// Client `ci` of `p` (`c`) before its start: its script, its routes, its threads' streams.
    pub(crate) fn new(p: &ProxysqlParams, ci: usize, c: &ClientParams, seed: u64) -> Self {
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
    }
}

/// The hostgroup a statement goes to when the session is not pinned: the first active rule
/// (by `rule_id`) whose keyword prefixes the statement, else the user's default hostgroup.
pub fn route(p: &ProxysqlParams, keyword: &str) -> u32 {
    let mut rules: Vec<_> = p.query_rules.iter().filter(|r| r.active).collect();
    rules.sort_by_key(|r| r.rule_id);
    for r in rules {
        if let Some(k) = rule_keyword(&r.match_digest) {
            if keyword.starts_with(&k) {
                return r.destination_hostgroup;
            }
        }
    }
    p.user.default_hostgroup
}

/// Client-visible error classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientErr {
    MaxConnectTimeout,
    Backend,
    Lost,
}

/// The sessions during one event: the clients, and what of the proxy a session reads and
/// changes (the parameters, the servers' truth, the HostGroups Manager, the runtime settings,
/// the wall clock, the tally), borrowed from the world.
pub(crate) struct Sessions<'a> {
    /// The sysbench clients.
    pub(crate) clients: &'a mut [ClientState],
    /// The parameters.
    pub(crate) p: &'a ProxysqlParams,
    /// Host names (source first).
    pub(crate) names: &'a [String],
    /// Servers.
    pub(crate) hosts: &'a [Host],
    /// The HostGroups Manager.
    pub(crate) hgm: &'a mut HostGroups,
    /// Settings changeable at run time.
    pub(crate) rt: &'a Runtime,
    /// The wall clock.
    pub(crate) wall: WallClock,
    /// The run's counters.
    pub(crate) tally: &'a mut Tally,
}

impl Sessions<'_> {
    #[inline]
    fn sched(&mut self, c: usize, t: usize, at: SimTime, p: Pending, s: &mut Scheduler<Event>) {
        let th = &mut self.clients[c].threads[t];
        th.gen += 1;
        th.pending = p;
        s.at(
            at,
            Event::Step {
                client: c as u8,
                thread: t as u16,
                gen: th.gen,
            },
        );
    }

    /// The thread's pending step is due.
    pub(crate) fn step(&mut self, c: usize, t: usize, now: SimTime, s: &mut Scheduler<Event>) {
        match self.clients[c].threads[t].pending {
            Pending::Idle => self.start_stmt(c, t, now, s),
            Pending::Acquire => self.acquire(c, t, now, s),
            Pending::Connect { entry, ok } => self.connect_done(c, t, entry as usize, ok, now, s),
            Pending::Query { entry, ok } => self.query_done(c, t, entry as usize, ok, now, s),
            Pending::Hung { .. } => {}
        }
    }

    fn start_stmt(&mut self, c: usize, t: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let cl = &self.clients[c];
        let th = &cl.threads[t];
        let hg = th.pinned.unwrap_or(cl.routes[th.stmt as usize]);
        let trx = th
            .trx_conn
            .filter(|tc| self.hgm.entries[tc.entry as usize].hg == hg);
        let th = &mut self.clients[c].threads[t];
        th.hg = hg;
        th.query_retries_left = self.p.variables.query_retries_on_failure;
        if let Some(tc) = trx {
            th.conn = Some(tc);
            th.on_trx = true;
            self.run_query(c, t, now, s);
        } else {
            th.on_trx = false;
            th.deadline = now + self.rt.cts_max;
            th.retries_left = self.rt.connect_retries;
            self.acquire(c, t, now, s);
        }
    }

    /// One pass of `CONNECTING_SERVER`: pick a server (lazy unshun inside), take a pooled
    /// connection or open one.
    fn acquire(&mut self, c: usize, t: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let (deadline, hg) = {
            let th = &self.clients[c].threads[t];
            (th.deadline, th.hg)
        };
        if now >= deadline {
            return self.client_error(c, t, ClientErr::MaxConnectTimeout, now, s);
        }
        let wall = self.wall.second(now);
        let waits = self.rt.unshun_waits();
        let rec = self.rt.shun_recovery_time_sec != 0;
        let all = self.p.variables.unshun_algorithm == 1;
        let th = &mut self.clients[c].threads[t];
        let pick = self.hgm.pick(
            hg,
            now,
            wall,
            waits,
            rec,
            all,
            &mut th.rng,
            &mut self.tally.unshuns,
        );
        let Some(e) = pick else {
            let at = (now + self.p.variables.connect_retries_delay).min(deadline);
            return self.sched(c, t, at, Pending::Acquire, s);
        };
        let entry = &mut self.hgm.entries[e];
        let pooled = entry.free + entry.stale;
        // The server pick and the pooled connection drawn reach the error counters without
        // an event of their own: a draw record per acquisition that found a server.
        let index = (c as u32) << 16 | t as u32;
        if pooled > 0 {
            let stale = below(&mut th.rng, pooled as u64) < entry.stale as u64;
            s.draw(&TraceRecord {
                component: "session",
                index,
                kind: if stale { "pooled_stale" } else { "pooled" },
                a: e as u64,
                b: 0,
            });
            if stale {
                entry.stale -= 1;
            } else {
                entry.free -= 1;
            }
            entry.used += 1;
            th.conn = Some(Conn {
                entry: e as u32,
                stale,
            });
            return self.run_query(c, t, now, s);
        }
        s.draw(&TraceRecord {
            component: "session",
            index,
            kind: "connect",
            a: e as u64,
            b: 0,
        });
        let n = &self.p.network;
        let cap = self.rt.cts.min(deadline.since(now));
        let (ok, lat) = match self.hosts[entry.host as usize].state {
            HostState::Up if n.connect_latency <= cap => (true, n.connect_latency),
            HostState::Up | HostState::Dark => (false, cap),
            HostState::Refused => (false, n.refused_latency.min(cap)),
        };
        self.sched(
            c,
            t,
            now + lat,
            Pending::Connect {
                entry: e as u32,
                ok,
            },
            s,
        );
    }

    fn connect_done(
        &mut self,
        c: usize,
        t: usize,
        e: usize,
        ok: bool,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let host = self.hgm.entries[e].host as usize;
        if ok && self.hosts[host].state == HostState::Up {
            self.hgm.entries[e].used += 1;
            self.clients[c].threads[t].conn = Some(Conn {
                entry: e as u32,
                stale: false,
            });
            return self.run_query(c, t, now, s);
        }
        self.tally.connect_errors += 1;
        let wall = self.wall.second(now);
        let thr = self.rt.shun_threshold();
        let name = self.names[host].clone();
        if self.hgm.connect_error(e, wall, thr, now, &name) {
            self.tally.traffic_shuns += 1;
        }
        let th = &mut self.clients[c].threads[t];
        if th.retries_left == 0 {
            return self.client_error(c, t, ClientErr::Backend, now, s);
        }
        th.retries_left -= 1;
        let at = (now + self.p.variables.connect_retries_delay).min(th.deadline);
        self.sched(c, t, at, Pending::Acquire, s);
    }

    fn run_query(&mut self, c: usize, t: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let conn = self.clients[c].threads[t].conn.expect("a connection");
        let e = conn.entry;
        let state = self.hosts[self.hgm.entries[e as usize].host as usize].state;
        match state {
            HostState::Dark => {
                let th = &mut self.clients[c].threads[t];
                th.gen += 1;
                th.pending = Pending::Hung { entry: e };
            }
            HostState::Refused => {
                let at = now + self.p.network.dead_connection_latency;
                self.sched(
                    c,
                    t,
                    at,
                    Pending::Query {
                        entry: e,
                        ok: false,
                    },
                    s,
                )
            }
            HostState::Up if conn.stale => {
                let at = now + self.p.network.dead_connection_latency;
                self.sched(
                    c,
                    t,
                    at,
                    Pending::Query {
                        entry: e,
                        ok: false,
                    },
                    s,
                )
            }
            HostState::Up => {
                let lat = {
                    let cl = &mut self.clients[c];
                    let lat: &Latency = &self.p.clients[c].latency;
                    lat.draw(&mut cl.threads[t].rng)
                };
                self.sched(c, t, now + lat, Pending::Query { entry: e, ok: true }, s)
            }
        }
    }

    /// Return a connection to its pool (destroyed when broken or its server is gone).
    fn release(&mut self, conn: Conn) {
        let e = &mut self.hgm.entries[conn.entry as usize];
        e.used = e.used.saturating_sub(1);
        let gone = e.status == Status::OfflineHard || (e.status == Status::Shunned && e.kill_all);
        if !conn.stale && !gone && self.hosts[e.host as usize].state == HostState::Up {
            e.free += 1;
        }
    }

    fn destroy(&mut self, conn: Conn) {
        let e = &mut self.hgm.entries[conn.entry as usize];
        e.used = e.used.saturating_sub(1);
    }

    fn query_done(
        &mut self,
        c: usize,
        t: usize,
        _e: usize,
        ok: bool,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let th = &mut self.clients[c].threads[t];
        let conn = th.conn.take().expect("a connection");
        let on_trx = th.on_trx;
        th.on_trx = false;
        if !ok {
            if on_trx {
                th.trx_conn = None;
            }
            let retry = !th.in_trx && th.query_retries_left > 0;
            self.destroy(conn);
            if retry {
                let th = &mut self.clients[c].threads[t];
                th.query_retries_left -= 1;
                th.deadline = now + self.rt.cts_max;
                th.retries_left = self.rt.connect_retries;
                return self.acquire(c, t, now, s);
            }
            return self.client_error(c, t, ClientErr::Lost, now, s);
        }
        let tp = self.p.user.transaction_persistent;
        let cl = &mut self.clients[c];
        let stmt = cl.script[cl.threads[t].stmt as usize];
        let th = &mut cl.threads[t];
        match stmt {
            Stmt::Begin => {
                th.trx_conn = Some(conn);
                th.in_trx = true;
                if tp {
                    th.pinned = Some(th.hg);
                }
            }
            Stmt::Commit => {
                th.in_trx = false;
                th.pinned = None;
                if let Some(tc) = th.trx_conn.take() {
                    self.release(tc);
                }
                if !on_trx {
                    self.release(conn);
                }
            }
            _ => {
                if !on_trx {
                    self.release(conn);
                }
            }
        }
        let cl = &mut self.clients[c];
        cl.queries += 1;
        let reader = cl.reader;
        let last = cl.script.len() as u16;
        let sec = cl.sec(now);
        sec.q += 1;
        let th = &mut cl.threads[t];
        th.stmt += 1;
        if th.stmt == last {
            th.stmt = 0;
            cl.tx += 1;
            cl.sec(now).tx += 1;
        }
        if reader {
            self.tally.read_ok(now, self.p.outage_gap);
        }
        self.start_stmt(c, t, now, s);
    }

    /// The client gets an error: sysbench (`--mysql-ignore-errors=all`) rolls back and
    /// restarts the event at once.
    fn client_error(
        &mut self,
        c: usize,
        t: usize,
        kind: ClientErr,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let cl = &mut self.clients[c];
        cl.errors += 1;
        match kind {
            ClientErr::MaxConnectTimeout => cl.errors_9001 += 1,
            ClientErr::Backend => cl.errors_backend += 1,
            ClientErr::Lost => cl.errors_lost += 1,
        }
        cl.sec(now).err += 1;
        let th = &mut cl.threads[t];
        th.stmt = 0;
        th.in_trx = false;
        th.pinned = None;
        th.on_trx = false;
        let trx = th.trx_conn.take();
        if let Some(tc) = trx {
            self.release(tc);
        }
        self.start_stmt(c, t, now, s);
    }
}

/// Fail, now, the statements in flight or hung on entries matching `on` (`shun_and_killall`
/// kills used connections; a restarted server resets hung ones). With `hung_only`, only
/// hung statements.
pub(crate) fn fail_threads_on(
    clients: &mut [ClientState],
    on: impl Fn(usize) -> bool,
    hung_only: bool,
    now: SimTime,
    s: &mut Scheduler<Event>,
) {
    let mut hits = vec![];
    for (ci, c) in clients.iter().enumerate() {
        for (ti, th) in c.threads.iter().enumerate() {
            let e = match th.pending {
                Pending::Hung { entry } => Some(entry),
                Pending::Query { entry, ok: true } if !hung_only => Some(entry),
                _ => None,
            };
            if let Some(e) = e {
                if on(e as usize) {
                    hits.push((ci, ti, e));
                }
            }
        }
    }
    for (ci, ti, e) in hits {
        let th = &mut clients[ci].threads[ti];
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
        for (ci, c) in clients.iter().enumerate() {
            for (ti, th) in c.threads.iter().enumerate() {
                if let Some(tc) = th.trx_conn {
                    if on(tc.entry as usize) {
                        stale_trx.push((ci, ti));
                    }
                }
            }
        }
        for (ci, ti) in stale_trx {
            if let Some(tc) = clients[ci].threads[ti].trx_conn.as_mut() {
                tc.stale = true;
            }
        }
    }
}
