//! Per-run metrics, the replay report (sysbench lines, runtime tables, log) and the artifacts
//! (timeline CSV, per-second CSV, tps and err/s charts with the actions marked).

use super::client::ClientState;
use super::hostgroups::{HostGroups, Status};
use super::params::{Action, ProxysqlParams};
use super::runtime::{Runtime, WallClock};
use super::tally::{ActionRec, Tally};
use crate::chart::{ChartData, Curve, CurvePoint, MarkLine};
use crate::model::{Artifact, MetricSet};
use crate::sim::SimTime;
use std::fmt::Write;

/// Clients with their own error column.
pub const CLIENT_COLUMNS: usize = 4;

crate::metric_set! {
    /// What one ProxySQL run reports, in this order.
    pub struct ProxysqlMetrics {
        /// Errors returned to read-only clients (failed reads).
        reads_lost: Value = "errors returned to read-only clients (failed reads)",
        /// Errors returned to read/write clients (failed transactions).
        writes_lost: Value = "errors returned to read/write clients (failed transactions)",
        /// Read errors that were ERR 9001 (max connect timeout).
        read_errors_9001: Value = "read errors that were ERR 9001 (max connect timeout)",
        /// Read errors after the connect retries ran out (2003/2005).
        read_errors_backend: Value = "read errors after the connect retries ran out (2003/2005)",
        /// Read errors 2013 (connection lost, retry used up).
        read_errors_lost: Value = "read errors 2013 (connection lost, retry used up)",
        /// First fault to the first SHUNNED/removed entry of a faulted host (censored at the horizon).
        time_to_detect_s: Value = "first fault to the first SHUNNED/removed entry of a faulted host (censored at the horizon)",
        /// 1 when a faulted host was shunned or removed before the horizon.
        detected: Indicator = "1 when a faulted host was shunned or removed before the horizon",
        /// Start of the first read outage after the first fault to the end of the last one (0: no outage); when reads had not come back by the horizon (recovered = 0) it is censored: the time to the horizon, a lower bound.
        time_to_recover_s: Value = "start of the first read outage after the first fault to the end of the last one (0: no outage); when reads had not come back by the horizon (recovered = 0) it is censored: the time to the horizon, a lower bound",
        /// Total time with no successful read after the first fault.
        read_outage_s: Value = "total time with no successful read after the first fault",
        /// Mean events/s of the read-only clients.
        read_tps: Value = "mean events/s of the read-only clients",
        /// Mean events/s of the read/write clients.
        write_tps: Value = "mean events/s of the read/write clients",
        /// Errors of client 1.
        errors_client_1: Value = "errors of client 1",
        /// Errors of client 2.
        errors_client_2: Value = "errors of client 2",
        /// Errors of client 3.
        errors_client_3: Value = "errors of client 3",
        /// Errors of client 4.
        errors_client_4: Value = "errors of client 4",
        /// Entries shunned by connect errors (shun_on_failures per second).
        traffic_shuns: Value = "entries shunned by connect errors (shun_on_failures per second)",
        /// Entries moved ONLINE to SHUNNED by missed heartbeats (shun_and_killall).
        ping_shuns: Value = "entries moved ONLINE to SHUNNED by missed heartbeats (shun_and_killall)",
        /// Lazy unshuns on the normal path.
        normal_unshuns: Value = "lazy unshuns on the normal path",
        /// Lazy unshuns on the desperate path.
        desperate_unshuns: Value = "lazy unshuns on the desperate path",
        /// Failed backend connects.
        connect_errors: Value = "failed backend connects",
        /// 1 when any read failed.
        any_read_lost: Indicator = "1 when any read failed",
        /// 1 when no read outage was open at the horizon (reads came back, or never stopped); 0 means time_to_recover_s is censored.
        recovered: Indicator = "1 when no read outage was open at the horizon (reads came back, or never stopped); 0 means time_to_recover_s is censored",
    }
}

/// What the metrics, the report and the artifacts read: the parameters and the books the
/// world kept (the clients' counters, the HostGroups Manager's changes and log, the tally,
/// the actions), never the world itself.
pub struct Books<'a> {
    /// The parameters.
    pub p: &'a ProxysqlParams,
    /// Host names (source first).
    pub names: &'a [String],
    /// Settings at the end of the run.
    pub rt: &'a Runtime,
    /// The wall clock.
    pub wall: WallClock,
    /// The HostGroups Manager at the end of the run.
    pub hgm: &'a HostGroups,
    /// The sysbench clients.
    pub clients: &'a [ClientState],
    /// The run's counters.
    pub tally: &'a Tally,
    /// Actions as they happened.
    pub action_log: &'a [ActionRec],
}

/// First fault → first SHUNNED / OFFLINE_HARD of a faulted host: (seconds, detected).
pub fn detection(w: &Books<'_>, end: SimTime) -> (f64, bool) {
    let Some((tf, hosts)) = &w.tally.first_fault else {
        return (0.0, false);
    };
    let hit = w.hgm.changes.iter().find(|c| {
        c.t >= *tf
            && hosts.contains(&c.host)
            && matches!(c.to, Status::Shunned | Status::OfflineHard)
    });
    match hit {
        Some(c) => (c.t.since(*tf).as_secs_f64(), true),
        None => (end.since(*tf).as_secs_f64(), false),
    }
}

/// The metric row.
pub fn values(w: &Books<'_>, end: SimTime) -> ProxysqlMetrics {
    let sum = |f: &dyn Fn(&ClientState) -> u64, reader: bool| -> f64 {
        w.clients
            .iter()
            .filter(|c| c.reader == reader)
            .map(f)
            .sum::<u64>() as f64
    };
    let tps = |reader: bool| -> f64 {
        w.clients
            .iter()
            .filter(|c| c.reader == reader)
            .map(|c| {
                let d = end.since(c.start).as_secs_f64();
                if d > 0.0 {
                    c.tx as f64 / d
                } else {
                    0.0
                }
            })
            .sum::<f64>()
            + 0.0 // an empty sum is -0.0
    };
    let (detect, detected) = detection(w, end);
    // Recovery is measured from the start of the read outage (the last successful read, or the
    // first fault if that came later), not from the first fault: an idle replica that dies
    // long before reads notice must not count its quiet time. Censoring: an outage still open
    // at the horizon ends at the horizon, so time_to_recover_s is then a lower bound, flagged
    // by recovered = 0.
    let (recover, outage) = match &w.tally.first_fault {
        None => (0.0, 0.0),
        Some((tf, _)) => {
            let rec = match (w.tally.outages.first(), w.tally.outages.last()) {
                (Some(a), Some(b)) => b.1.since(a.0.max(*tf)).as_secs_f64(),
                _ => 0.0,
            };
            let tot: f64 = w
                .tally
                .outages
                .iter()
                .map(|o| o.1.since(o.0.max(*tf)).as_secs_f64())
                .sum::<f64>()
                + 0.0;
            (rec, tot)
        }
    };
    let reads_lost = sum(&|c| c.errors, true);
    let client = |i: usize| w.clients.get(i).map(|c| c.errors as f64).unwrap_or(0.0);
    ProxysqlMetrics {
        reads_lost,
        writes_lost: sum(&|c| c.errors, false),
        read_errors_9001: sum(&|c| c.errors_9001, true),
        read_errors_backend: sum(&|c| c.errors_backend, true),
        read_errors_lost: sum(&|c| c.errors_lost, true),
        time_to_detect_s: detect,
        detected: detected as u8 as f64,
        time_to_recover_s: recover,
        read_outage_s: outage,
        read_tps: tps(true),
        write_tps: tps(false),
        errors_client_1: client(0),
        errors_client_2: client(1),
        errors_client_3: client(2),
        errors_client_4: client(3),
        traffic_shuns: w.tally.traffic_shuns as f64,
        ping_shuns: w.tally.ping_shuns as f64,
        normal_unshuns: w.tally.unshuns.normal as f64,
        desperate_unshuns: w.tally.unshuns.desperate as f64,
        connect_errors: w.tally.connect_errors as f64,
        any_read_lost: (reads_lost > 0.0) as u8 as f64,
        recovered: (!w.tally.outage_open) as u8 as f64,
    }
}

/// sysbench's per-second lines of client `ci` (`[ 22s ] thds: 2 tps: … err/s: … reconn/s: …`).
pub fn sysbench_lines(w: &Books<'_>, ci: usize, end: SimTime) -> Vec<String> {
    let c = &w.clients[ci];
    let full = (end.since(c.start).as_nanos() / 1_000_000_000) as usize;
    (0..full)
        .map(|i| {
            let s = c.secs.get(i).copied().unwrap_or_default();
            format!(
                "[ {}s ] thds: {} tps: {:.2} qps: {:.2} err/s: {:.2} reconn/s: 0.00",
                i + 1,
                c.threads.len(),
                s.tx as f64,
                s.q as f64,
                s.err as f64
            )
        })
        .collect()
}

/// The replay report.
pub fn report(w: &Books<'_>, values: &[f64], end: SimTime, digest: &str) -> String {
    let p = &w.p;
    let mut r = String::new();
    let (nw, dw) = w.rt.unshun_waits();
    let _ = writeln!(
        r,
        "ProxySQL reader routing: source {}, replicas {}; writer HG {}, reader HG {}; user {} (default HG {}, transaction_persistent={})",
        p.servers.source,
        p.servers.replicas.join(", "),
        p.servers.writer_hostgroup,
        p.servers.reader_hostgroup,
        p.user.name,
        p.user.default_hostgroup,
        p.user.transaction_persistent as u8
    );
    let _ = writeln!(
        r,
        "shun at {} connect errors in one wall second; lazy unshun after > {} s (normal) / > {} s (desperate); connect_timeout_server {} / max {}; wall clock offset {:.3} s",
        w.rt.shun_threshold(),
        nw,
        dw,
        p.variables.connect_timeout_server,
        p.variables.connect_timeout_server_max,
        w.wall.offset as f64 / 1e9
    );
    let _ = writeln!(r, "\ninitial runtime_mysql_servers:");
    let mut init = String::new();
    let mut rows: Vec<(u32, &str)> = vec![(p.servers.writer_hostgroup, p.servers.source.as_str())];
    if p.servers.writer_in_reader_hostgroup {
        rows.push((p.servers.reader_hostgroup, p.servers.source.as_str()));
    }
    for h in &p.servers.replicas {
        rows.push((p.servers.reader_hostgroup, h.as_str()));
    }
    for (hg, h) in rows {
        let _ = writeln!(init, "  {hg:<13} {h:<9} ONLINE");
    }
    r.push_str(&init);
    for a in w.action_log {
        let _ = writeln!(r, "\n[{:>9.3} s] {}", a.t.as_secs_f64(), a.label);
        for l in a.table.lines() {
            let _ = writeln!(r, "  {l}");
        }
    }
    let _ = writeln!(
        r,
        "\nProxySQL log (first {} lines):",
        super::hostgroups::LOG_CAP
    );
    for (t, l) in &w.hgm.log {
        let _ = writeln!(r, "  {:>9.3} s  {l}", t.as_secs_f64());
    }
    for (ci, c) in w.clients.iter().enumerate() {
        let cp = &p.clients[ci];
        let _ = writeln!(
            r,
            "\nclient {} \"{}\": {} threads, {} statements per event{}, started at {}",
            ci + 1,
            cp.name,
            cp.threads,
            c.script.len(),
            if cp.skip_trx { " (--skip-trx)" } else { "" },
            cp.start_at
        );
        for l in sysbench_lines(w, ci, end) {
            let _ = writeln!(r, "{l}");
        }
        let _ = writeln!(
            r,
            "errors {} (9001: {}, connect retries exhausted: {}, lost connection: {})",
            c.errors, c.errors_9001, c.errors_backend, c.errors_lost
        );
    }
    let _ = writeln!(
        r,
        "\nruntime_mysql_servers at the end ({:.3} s):",
        end.as_secs_f64()
    );
    for l in w.hgm.table(w.names, w.wall.second(end)).lines() {
        let _ = writeln!(r, "  {l}");
    }
    let _ = writeln!(r);
    for (d, v) in ProxysqlMetrics::DEFS.iter().zip(values) {
        let _ = writeln!(r, "{:<22} {v}", d.name);
    }
    let _ = writeln!(r, "digest {digest}");
    r
}

/// The timeline CSV, the per-second CSV and the two charts.
pub fn artifacts(w: &Books<'_>, end: SimTime) -> Vec<Artifact> {
    let mut tl = String::from("time_s,wall_s,hostgroup_id,hostname,from,to,cause\n");
    for c in &w.hgm.changes {
        let _ = writeln!(
            tl,
            "{:.6},{},{},{},{},{},{}",
            c.t.as_secs_f64(),
            c.wall,
            c.hg,
            w.names[c.host as usize],
            c.from.map(|s| s.name()).unwrap_or("NEW"),
            c.to.name(),
            c.cause
        );
    }
    let mut sb = String::from("client,time_s,tps,qps,err_per_s\n");
    let mut tps_curves = vec![];
    let mut err_curves = vec![];
    for (ci, c) in w.clients.iter().enumerate() {
        let name = &w.p.clients[ci].name;
        let full = (end.since(c.start).as_nanos() / 1_000_000_000) as usize;
        let mut tp = vec![];
        let mut ep = vec![];
        for i in 0..full {
            let s = c.secs.get(i).copied().unwrap_or_default();
            let x = c.start.as_secs_f64() + (i + 1) as f64;
            let _ = writeln!(sb, "{name},{x},{},{},{}", s.tx, s.q, s.err);
            tp.push(CurvePoint {
                x,
                y: s.tx as f64,
                band: None,
            });
            ep.push(CurvePoint {
                x,
                y: s.err as f64,
                band: None,
            });
        }
        tps_curves.push(Curve {
            label: format!("{name} tps"),
            points: tp,
            series_x: None,
        });
        err_curves.push(Curve {
            label: format!("{name} err/s"),
            points: ep,
            series_x: None,
        });
    }
    let marks: Vec<MarkLine> =
        w.p.actions
            .iter()
            .filter(|a| !matches!(a.action, Action::ShowServers))
            .map(|a| MarkLine::V {
                x: a.at.as_secs_f64(),
                label: format!("{:.0} s: {}", a.at.as_secs_f64(), a.action.label()),
            })
            .collect();
    let chart = |title: &str, y: &str, curves: Vec<Curve>| ChartData {
        title: title.into(),
        x_label: "time (s)".into(),
        y_label: y.into(),
        log_x: false,
        log_y: false,
        curves,
        marks: marks.clone(),
    };
    vec![
        Artifact::Text {
            name: "timeline.csv".into(),
            text: tl,
        },
        Artifact::Text {
            name: "sysbench.csv".into(),
            text: sb,
        },
        Artifact::Chart {
            name: "tps".into(),
            data: chart(
                "sysbench tps per client (per-second report), scripted actions marked",
                "transactions per second",
                tps_curves,
            ),
        },
        Artifact::Chart {
            name: "err-s".into(),
            data: chart(
                "sysbench err/s per client (per-second report), scripted actions marked",
                "errors per second",
                err_curves,
            ),
        },
    ]
}
