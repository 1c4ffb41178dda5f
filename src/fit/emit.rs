//! `vtsim replay MODEL --emit-logs DIR [--log-format glog|json]`: what the real components
//! would have printed for one rollout run, for tests of `vtsim fit` and for users who want
//! to see what to look for in their own logs.
//!
//! Files written:
//! - `vtgate-NN.log`, one per vtgate: its container log (stderr) with the discovery lines of
//!   vitessio/vitess `go/vt/discovery/healthcheck.go` (`NewHealthCheck`, `AddTablet`,
//!   `deleteTablet`, `updateHealth`), `tablet_health_check.go` (`setServingState`,
//!   `closeConnection`) and the error lines of `go/vt/vtgate/vtgate.go`
//!   (`recordAndAnnotateError`, through the 5 s `Execute` throttled logger,
//!   `go/vt/logutil/throttled.go`). `glog`: the text envelope and the file:line of v22.0.3
//!   (`I0718 14:03:40.001340       1 healthcheck.go:406] ...`, PID 1 padded to 7); `json`:
//!   the slog JSON of main/v24 (keys `time`, `level`, `source`, `msg`; RFC 3339 with the
//!   fraction's trailing zeros trimmed; main's line numbers), after the two non-JSON lines a
//!   v24 vtgate started by the operator prints first.
//! - `events.json`: `kubectl get events -o json` of the operator's events on the VitessShard
//!   (`Deleted` / `Created` Pod, `PlannedReparent`, `RollingRestartComplete`; legacy core/v1
//!   events: whole-second `firstTimestamp`, the first occurrence's Unix ns in hex at the end of
//!   the name, as client-go's `makeEvent` names them).
//! - `pods.json`: `kubectl get pods -o json` of the tablet pods at the end of the run (the
//!   Ready condition's whole-second `lastTransitionTime`).
//!
//! Wall clock: simulated time zero is [`EPOCH`] (2026-07-18T14:00:00Z, UTC). A vtgate's log
//! starts when it started, one refresh interval before its first simulated poll.
//! Error instants: an exposure's errors (the Fast-mode Poisson counts of the run) are spread
//! evenly over it (no extra randomness), then throttled as the real logger does. Primary
//! write errors are not emitted. Each tablet record is printed with one space between
//! fields (protobuf-go picks one or two per binary).

use super::names::{ip, rfc3339_nano, rfc3339_secs, Cluster, NS};
use crate::model::rollout::{run_with_logs, Note, RolloutParams, RolloutRun, NONE};
use crate::model::RunOptions;
use crate::sim::SimTime;
use anyhow::{Context, Result};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Unix ns of simulated time zero: 2026-07-18T14:00:00Z.
pub const EPOCH: i64 = 1_784_383_200 * NS;

/// The format of the emitted vtgate logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// glog text (Vitess up to v23; v22.0.3 line numbers).
    Glog,
    /// slog JSON (Vitess v24 and main; main's line numbers).
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "glog" => Ok(LogFormat::Glog),
            "json" => Ok(LogFormat::Json),
            _ => Err(format!("expected glog or json, found {s:?}")),
        }
    }
}

/// One call site: file, v22.0.3 line, main line, Go function (for slog's `source`).
struct Site(&'static str, u32, u32, &'static str);

const LOADING: Site = Site(
    "discovery/healthcheck.go",
    356,
    382,
    "discovery.NewHealthCheck",
);
const SETTING_UP: Site = Site(
    "discovery/healthcheck.go",
    377,
    391,
    "discovery.NewHealthCheck",
);
const ADDING: Site = Site(
    "discovery/healthcheck.go",
    406,
    420,
    "discovery.(*HealthCheckImpl).AddTablet",
);
const REMOVING: Site = Site(
    "discovery/healthcheck.go",
    459,
    474,
    "discovery.(*HealthCheckImpl).deleteTablet",
);
const NO_HEALTH_DATA: Site = Site(
    "discovery/healthcheck.go",
    502,
    517,
    "discovery.(*HealthCheckImpl).deleteTablet",
);
const RELOAD: Site = Site(
    "discovery/healthcheck.go",
    546,
    561,
    "discovery.(*HealthCheckImpl).updateHealth",
);
const SERVING: Site = Site(
    "discovery/tablet_health_check.go",
    110,
    112,
    "discovery.(*tabletHealthCheck).setServingState",
);
const STREAM_ERROR: Site = Site(
    "discovery/tablet_health_check.go",
    334,
    336,
    "discovery.(*tabletHealthCheck).closeConnection",
);
const EXECUTE_ERROR: Site = Site(
    "vtgate/vtgate.go",
    812,
    832,
    "vtgate.recordAndAnnotateError",
);
const TOPO_ERROR: Site = Site(
    "discovery/topology_watcher.go",
    185,
    191,
    "discovery.(*TopologyWatcher).loadTablets",
);
const TOPO_SHARD_ERROR: Site = Site(
    "discovery/topology_watcher.go",
    165,
    171,
    "discovery.(*TopologyWatcher).loadTabletsForKeyspaceShard",
);
const SKIPPED: Site = Site(
    "logutil/throttled.go",
    82,
    85,
    "logutil.(*ThrottledLogger).log.func1",
);

/// One log line before rendering.
struct Line {
    t: i64,
    /// glog's severity letter: `I`, `W` or `E`.
    level: char,
    site: &'static Site,
    msg: String,
}

/// Render one line in `fmt` (no newline).
fn render(l: &Line, fmt: LogFormat) -> String {
    let unix = EPOCH + l.t;
    match fmt {
        LogFormat::Glog => {
            let (_, mo, d, h, mi, s, ns) = super::names::civil(unix);
            let file = l.site.0.rsplit('/').next().unwrap_or(l.site.0);
            format!(
                "{}{mo:02}{d:02} {h:02}:{mi:02}:{s:02}.{:06} {:>7} {file}:{}] {}",
                l.level,
                ns / 1000,
                1,
                l.site.1,
                l.msg
            )
        }
        LogFormat::Json => {
            // Keys in slog's order: time, level, source, msg.
            format!(
                "{{\"time\":\"{}\",\"level\":\"{}\",\"source\":{{\"function\":\"vitess.io/vitess/go/vt/{}\",\"file\":\"vitess.io/vitess/go/vt/{}\",\"line\":{}}},\"msg\":{}}}",
                rfc3339_nano(unix),
                match l.level {
                    'E' => "ERROR",
                    'W' => "WARN",
                    _ => "INFO",
                },
                l.site.3,
                l.site.0,
                l.site.2,
                serde_json::to_string(&l.msg).expect("a string")
            )
        }
    }
}

/// Run `p` with `seed` keeping its logs, and write the files described above into `dir`
/// (created if missing). Returns the files written.
pub fn emit(p: &RolloutParams, seed: u64, dir: &Path, fmt: LogFormat) -> Result<Vec<PathBuf>> {
    let run = run_with_logs(p, seed, RunOptions::default());
    let files = render_run(p, &run, fmt);
    crate::io::create_dir_all(dir)?;
    let mut out = vec![];
    for (name, text) in files {
        let path = dir.join(name);
        crate::io::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        out.push(path);
    }
    Ok(out)
}

/// The files of [`emit`] for a finished run: (file name, contents).
pub fn render_run(p: &RolloutParams, run: &RolloutRun, fmt: LogFormat) -> Vec<(String, String)> {
    let c = Cluster::of_model(p);
    let cells = crate::model::rollout::cells::cell_names(p);
    let shape = crate::model::rollout::cells::Shape::of(p);
    let watches = |g: usize, t: usize| shape.as_ref().is_none_or(|sh| sh.watches(g, t));
    // Each vtgate's --cells_to_watch as the flag reads, and the cells NewHealthCheck sets up
    // (`strings.Split`; the empty flag gives "" and then the local cell).
    let flags: Vec<(String, Vec<String>)> = (0..p.vtgates as usize)
        .map(|g| match (&shape, p.cells.is_empty()) {
            (Some(sh), false) => {
                let own = sh.vtgate_cell[g] as usize;
                match &p.cells[own].cells_to_watch {
                    None => (cells.join(","), cells.clone()),
                    Some(l) if l.is_empty() => {
                        (String::new(), vec![String::new(), cells[own].clone()])
                    }
                    Some(l) => (l.join(","), l.clone()),
                }
            }
            _ => (c.cell.clone(), vec![c.cell.clone()]),
        })
        .collect();
    let per = p.replicas_per_shard as usize + 1;
    let n = p.shards as usize * per;
    let m = p.vtgates as usize;
    let width = m.to_string().len().max(2);
    let mut logs: Vec<Vec<Line>> = (0..m).map(|_| Vec::new()).collect();
    let tper = p.vtgate.tablet_refresh_interval.as_nanos() as i64;
    let connect = (p.vtgate.topo_read_latency + p.vtgate.first_health_delay).as_nanos() as i64;
    let shard_of = |t: usize| t / per;
    let ks_shard = |t: usize| format!("{}/{}", c.keyspace, c.shards[shard_of(t)]);
    let ty = |primary: bool| if primary { "PRIMARY" } else { "REPLICA" };
    // Start-up: NewHealthCheck, then the first loadTablets adds every tablet.
    for (g, log) in logs.iter_mut().enumerate() {
        let start = run.phases[g].0 as i64 - tper;
        let mut push = |t: i64, site: &'static Site, msg: String| {
            log.push(Line {
                t,
                level: 'I',
                site,
                msg,
            })
        };
        push(
            start,
            &LOADING,
            format!("loading tablets for cells: {}", flags[g].0),
        );
        for cell in &flags[g].1 {
            push(
                start,
                &SETTING_UP,
                format!("Setting up healthcheck for cell: {cell}"),
            );
        }
        for t in (0..n).filter(|&t| watches(g, t)) {
            let primary = t % per == 0;
            push(
                start,
                &ADDING,
                format!(
                    "Adding tablet to healthcheck: {}",
                    c.record(t, shard_of(t), Some(t as u32), primary)
                ),
            );
        }
        for t in (0..n).filter(|&t| watches(g, t)) {
            let primary = t % per == 0;
            push(
                start + connect,
                &SERVING,
                format!(
                    "HealthCheckUpdate(Serving State): tablet: {} serving false => true for {} ({}) reason: healthCheck update",
                    c.ident(t, t as u32),
                    ks_shard(t),
                    ty(primary)
                ),
            );
        }
    }
    for &(at, note) in &run.journal {
        let t_ns = at.0 as i64;
        let info = |site: &'static Site, msg: String| Line {
            t: t_ns,
            level: 'I',
            site,
            msg,
        };
        match note {
            Note::Record {
                g,
                tablet,
                from,
                to,
                was_serving,
                primary,
            } => {
                let (g, t) = (g as usize, tablet as usize);
                let sh = shard_of(t);
                let log = &mut logs[g];
                if from == NONE {
                    let cleared = c.record(t, sh, None, primary);
                    log.push(info(
                        &REMOVING,
                        format!("Removing tablet from healthcheck: {cleared}"),
                    ));
                    log.push(info(
                        &NO_HEALTH_DATA,
                        format!(
                            "We have no health data for tablet: {cleared}, it might have been deleted already"
                        ),
                    ));
                } else {
                    log.push(info(
                        &REMOVING,
                        format!(
                            "Removing tablet from healthcheck: {}",
                            c.record(t, sh, Some(from), primary)
                        ),
                    ));
                    if was_serving {
                        log.push(info(
                            &SERVING,
                            format!(
                                "HealthCheckUpdate(Serving State): tablet: {} serving true => false for {} ({}) reason: finalizeConn closing connection",
                                c.ident(t, from),
                                ks_shard(t),
                                ty(primary)
                            ),
                        ));
                    }
                }
                if to != NONE {
                    log.push(info(
                        &ADDING,
                        format!(
                            "Adding tablet to healthcheck: {}",
                            c.record(t, sh, Some(to), primary)
                        ),
                    ));
                }
            }
            Note::Serving {
                g,
                tablet,
                addr,
                from,
                to,
                primary,
            } => {
                let t = tablet as usize;
                logs[g as usize].push(info(
                    &SERVING,
                    format!(
                        "HealthCheckUpdate(Serving State): tablet: {} serving {from} => {to} for {} ({}) reason: healthCheck update",
                        c.ident(t, addr),
                        ks_shard(t),
                        ty(primary)
                    ),
                ));
            }
            Note::StreamError { g, tablet, addr } => {
                let t = tablet as usize;
                let primary = false;
                logs[g as usize].push(Line {
                    t: t_ns,
                    level: 'W',
                    site: &STREAM_ERROR,
                    msg: format!(
                        "tablet {} healthcheck stream error: vttablet: rpc error: code = Unavailable desc = error reading from server: EOF",
                        c.record(t, shard_of(t), Some(addr), primary)
                    ),
                });
            }
            Note::TopoError { g, cell, shard } => {
                // The error text is etcd's `rpctypes.ErrNoLeader` (an etcd that answers but
                // has no leader); an unreachable etcd blocks the read instead (not modelled).
                let cell = &cells[cell as usize];
                let (site, msg) = if shard == NONE {
                    (
                        &TOPO_ERROR,
                        format!("error getting tablets for cell: {cell}: etcdserver: no leader"),
                    )
                } else {
                    (
                        &TOPO_SHARD_ERROR,
                        format!(
                            "error getting tablets for keyspace-shard: {}:{}: etcdserver: no leader",
                            c.keyspace, c.shards[shard as usize]
                        ),
                    )
                };
                logs[g as usize].push(Line {
                    t: t_ns,
                    level: 'E',
                    site,
                    msg,
                });
            }
            Note::Reload { g, demoted, .. } => {
                // The demoted primary has not restarted yet: its address is its first one.
                let t = demoted as usize;
                logs[g as usize].push(info(
                    &RELOAD,
                    format!(
                        "We will have no health data for the next new primary tablet after demoting the tablet: {}, so start loading tablets now",
                        c.ident(t, t as u32)
                    ),
                ));
            }
        }
    }
    // Errors: each exposure's counted reads, spread evenly, through the throttled logger.
    let mut errors: Vec<Vec<(i64, bool, usize)>> = (0..m).map(|_| Vec::new()).collect();
    for e in &run.exposures {
        let (a, b) = (e.start.0 as i64, e.end.0 as i64);
        let k = e.dead_errors + e.none_errors;
        for i in 0..k {
            let t = a + ((b - a) as i128 * (2 * i as i128 + 1) / (2 * k as i128)) as i64;
            errors[e.g as usize].push((t, i < e.dead_errors, e.shard as usize));
        }
    }
    for (g, errs) in errors.iter_mut().enumerate() {
        errs.sort();
        let mut last: Option<i64> = None;
        let mut skipped: u64 = 0;
        let mut pending: Option<i64> = None;
        let window = 5 * NS;
        for &(t, dead, sh) in errs.iter() {
            if let Some(at) = pending {
                if at < t {
                    logs[g].push(Line {
                        t: at,
                        level: 'I',
                        site: &SKIPPED,
                        msg: format!("Execute: skipped {skipped} log messages"),
                    });
                    pending = None;
                    skipped = 0;
                }
            }
            if last.is_none_or(|l| t - l > window) {
                last = Some(t);
                let target = format!("{}.{}.replica", c.keyspace, c.shards[sh]);
                let err = if dead {
                    "vttablet: rpc error: code = Unavailable desc = error reading from server: EOF"
                        .to_string()
                } else {
                    format!(
                        "no healthy tablet available for 'keyspace:\"{}\" shard:\"{}\" tablet_type:REPLICA'",
                        c.keyspace, c.shards[sh]
                    )
                };
                logs[g].push(Line {
                    t,
                    level: 'I',
                    site: &EXECUTE_ERROR,
                    msg: format!(
                        "Execute: target: {target}: {err}, request: map[BindVariables:map[] Sql:select * from t]"
                    ),
                });
            } else {
                if skipped == 0 {
                    pending = Some(last.unwrap_or(t) + window);
                }
                skipped += 1;
            }
        }
        if let Some(at) = pending {
            logs[g].push(Line {
                t: at,
                level: 'I',
                site: &SKIPPED,
                msg: format!("Execute: skipped {skipped} log messages"),
            });
        }
    }
    let mut files = vec![];
    for (g, log) in logs.iter_mut().enumerate() {
        // Stable: lines of one instant keep the order they were noted in.
        log.sort_by_key(|l| l.t);
        let mut text = String::new();
        if fmt == LogFormat::Json {
            text.push_str("WARNING: --logtostderr has no effect when structured logging is enabled, pass --log-structured=false to use glog flags\n");
            text.push_str(
                "Flag --cells_to_watch has been deprecated, use --cells-to-watch instead \n",
            );
        }
        for l in log.iter() {
            text.push_str(&render(l, fmt));
            text.push('\n');
        }
        // With cells, the vtgate's own cell is in its name, as in the operator's pod names
        // (`<cluster>-<cell>-vtgate-<hash>`): its log does not print it.
        let name = match &shape {
            Some(sh) => format!(
                "vtgate-{:0width$}-{}.log",
                g + 1,
                cells[sh.vtgate_cell[g] as usize]
            ),
            None => format!("vtgate-{:0width$}.log", g + 1),
        };
        files.push((name, text));
    }
    files.push(("events.json".into(), events_json(p, run, &c)));
    files.push(("pods.json".into(), pods_json(p, run, &c)));
    files
}

/// A legacy core/v1 event of the operator on a VitessShard.
fn event(
    c: &Cluster,
    shard: usize,
    at: SimTime,
    reason: &str,
    message: String,
) -> serde_json::Value {
    let unix = EPOCH + at.0 as i64;
    let obj = c.vitess_shard(shard);
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": format!("{obj}.{:x}", unix),
            "namespace": "default",
            "creationTimestamp": rfc3339_secs(unix),
        },
        "involvedObject": {
            "apiVersion": "planetscale.com/v2",
            "kind": "VitessShard",
            "name": obj,
            "namespace": "default",
        },
        "reason": reason,
        "message": message,
        "source": {"component": "vitessshard-controller"},
        "firstTimestamp": rfc3339_secs(unix),
        "lastTimestamp": rfc3339_secs(unix),
        "count": 1,
        "type": "Normal",
        "eventTime": null,
        "reportingComponent": "vitessshard-controller",
        "reportingInstance": "",
    })
}

fn events_json(p: &RolloutParams, run: &RolloutRun, c: &Cluster) -> String {
    let mut items: Vec<(SimTime, serde_json::Value)> = vec![];
    for r in &run.restarts {
        let sh = r.shard as usize;
        let t = r.tablet as usize;
        items.push((
            r.drain_at,
            event(
                c,
                sh,
                r.drain_at,
                "Deleted",
                format!("deleted Pod {}", c.pod(t)),
            ),
        ));
        if r.down_at != SimTime::MAX {
            items.push((
                r.down_at,
                event(
                    c,
                    sh,
                    r.down_at,
                    "Created",
                    format!("created Pod {}", c.pod(t)),
                ),
            ));
        }
    }
    for x in &run.prs {
        if x.end != SimTime::MAX {
            items.push((
                x.end,
                event(
                    c,
                    x.shard as usize,
                    x.end,
                    "PlannedReparent",
                    format!(
                        "planned reparent from old primary {} to new primary {} succeeded",
                        c.alias_string(x.old as usize),
                        c.alias_string(x.new as usize)
                    ),
                ),
            ));
        }
    }
    if run.rollout_end > SimTime::ZERO {
        for sh in 0..p.shards as usize {
            items.push((
                run.rollout_end,
                event(
                    c,
                    sh,
                    run.rollout_end,
                    "RollingRestartComplete",
                    "Cascading rollout of tablets is complete.".into(),
                ),
            ));
        }
    }
    items.sort_by_key(|(t, _)| *t);
    let list = json!({
        "apiVersion": "v1",
        "items": items.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    });
    serde_json::to_string_pretty(&list).expect("json") + "\n"
}

fn pods_json(p: &RolloutParams, run: &RolloutRun, c: &Cluster) -> String {
    let per = p.replicas_per_shard as usize + 1;
    let n = p.shards as usize * per;
    let mut items = vec![];
    for t in 0..n {
        let rec = run.restarts.iter().find(|r| r.tablet as usize == t);
        // A pod never restarted in the run: created long before, Ready since then.
        let before = EPOCH - 86_400 * NS;
        let (created, ready, addr) = match rec {
            Some(r) if r.down_at != SimTime::MAX => (
                EPOCH + r.down_at.0 as i64,
                (r.ready_at != SimTime::MAX).then(|| EPOCH + r.ready_at.0 as i64),
                new_addr(run, t),
            ),
            _ => (before, Some(before), t as u32),
        };
        let pool = "replica";
        let cond = |ty: &str, at: Option<i64>| {
            json!({
                "type": ty,
                "status": if at.is_some() { "True" } else { "False" },
                "lastProbeTime": null,
                "lastTransitionTime": rfc3339_secs(at.unwrap_or(created)),
            })
        };
        items.push(json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": c.pod(t),
                "namespace": "default",
                "creationTimestamp": rfc3339_secs(created),
                "labels": {
                    "planetscale.com/component": "vttablet",
                    "planetscale.com/cluster": c.cluster,
                    "planetscale.com/cell": c.cell_of(t),
                    "planetscale.com/keyspace": c.keyspace,
                    "planetscale.com/shard": c.shards[t / per].replace('-', "x"),
                    "planetscale.com/tablet-uid": format!("{:010}", c.uid(t)),
                    "planetscale.com/tablet-type": pool,
                    "planetscale.com/tablet-index": format!("{}", t % per + 1),
                },
            },
            "status": {
                "phase": "Running",
                "podIP": ip(addr),
                "conditions": [cond("Ready", ready), cond("ContainersReady", ready)],
                "startTime": rfc3339_secs(created),
            },
        }));
    }
    let list = json!({
        "apiVersion": "v1",
        "items": items,
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    });
    serde_json::to_string_pretty(&list).expect("json") + "\n"
}

/// Tablet `t`'s address after its restart: the `to` of a record note for it that is not its
/// first address (the model numbers new pods' addresses from the tablet count up).
fn new_addr(run: &RolloutRun, t: usize) -> u32 {
    run.journal
        .iter()
        .find_map(|(_, n)| match *n {
            Note::Record { tablet, to, .. }
                if tablet as usize == t && to != NONE && to != t as u32 =>
            {
                Some(to)
            }
            _ => None,
        })
        .unwrap_or(t as u32)
}
