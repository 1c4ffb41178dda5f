//! From parsed inputs to a rollout model that replays the incident (`docs/fit.md`).
//!
//! Method, in order (every value keeps its resolution; a value the inputs do not bound is
//! marked censored and given a stated default):
//! 1. Poll instants per vtgate: its start-up line and every topology record change it logged
//!    (`Adding` / `Removing`), except those of a shard reload after a PRS. The refresh
//!    interval T is the tolerant greatest common divisor of the gaps between them (rounded to
//!    the millisecond), unless `--refresh-interval` gives it; each vtgate's phase is its poll
//!    instants' residue modulo T (the most common one, to 1 ms).
//! 2. Health delays: the first health response comes `first_health_delay` after the record is
//!    added (the most common gap, to 1 us); a tablet's state change reaches the vtgates
//!    `health_stream_delay` after its SIGTERM (the operator's `Deleted Pod` event, to the ns
//!    its name encodes); without events the model default is assumed.
//! 3. Per restarted tablet: SIGTERM (the event), the old pod gone (the first broken health
//!    stream, else the midpoint of what bounds it), the new address published (between the
//!    last poll of any vtgate that did not see it and the first that did: the midpoint), and
//!    serving (bounded above by every first health response that came at once, by the
//!    operator's next release minus the Available gate and by the pod's Ready second, and
//!    below by the retry before every response that came through the reconnect backoff: the
//!    midpoint; the address is bounded above by the same operator and Ready bounds).
//! 4. The operator: each release (SIGTERM, or the PRS start for the primary) after the
//!    previous tablet served plus `tablet_available_timeout` (the readiness-probe lag is folded
//!    into the step, as `models/incident-000.ron` does); PRS start and end from the old
//!    primary's serving changes; the candidate from the `PlannedReparent` event.
//!
//! The fitted model replays these instants exactly: the durations are `Observed` samples
//! drawn in order, the phases `Explicit`, and every other delay fixed.

use super::names::NS;
use super::parse::{pod_uid, Alias, Event, Input, Pod, Said, ShortLine, VtgateLog};
use crate::model::dist::{DurationDist, ObservedDraw};
use crate::model::rollout::{
    run_detailed, Phase, PrsCandidate, ReplicaOrder, RolloutParams, WorkloadMode,
};
use crate::model::RunOptions;
use crate::sim::{SimDuration, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// What the fit may be told besides its inputs.
#[derive(Clone, Debug, Default)]
pub struct FitOptions {
    /// `--refresh-interval`: vtgate's `--tablet_refresh_interval` (else estimated).
    pub refresh_interval: Option<SimDuration>,
    /// The operator's Available gate (default 30 s, hard-coded in vitess-operator).
    pub available_timeout: Option<SimDuration>,
}

/// One inferred instant or duration: its value, its resolution (half-width of what the
/// inputs allow), and whether the inputs bound it at all.
#[derive(Clone, Copy, Debug)]
pub struct Inferred {
    /// Value, ns (an instant: since the fit's time zero).
    pub ns: i64,
    /// Half-width of the interval the inputs allow, ns.
    pub resolution: i64,
    /// Not bounded by the inputs (a default or a guess).
    pub censored: bool,
}

/// A restarted tablet's inferred lifecycle (since the fit's time zero).
#[derive(Clone, Debug)]
pub struct TabletFit {
    /// Its alias.
    pub alias: Alias,
    /// Its shard (`keyspace/shard`).
    pub shard: String,
    /// SIGTERM.
    pub drain: Inferred,
    /// Old pod gone.
    pub down: Inferred,
    /// New address published.
    pub publish: Inferred,
    /// Serving again.
    pub serve: Inferred,
    /// Ready since (pods JSON, whole seconds), if known.
    pub ready: Option<i64>,
    /// Per vtgate: its first health response from the new process (ns since time zero).
    pub discovered: Vec<Option<i64>>,
}

/// One observed error burst of one vtgate.
#[derive(Clone, Debug)]
pub struct BurstFit {
    /// vtgate index.
    pub g: usize,
    /// First error line (ns since time zero).
    pub start: i64,
    /// Last error line, or the last `skipped` line minus the throttle window.
    pub end: i64,
    /// Errors: the lines plus the skipped counts (a lower bound when skipped > 0).
    pub errors: u64,
    /// Some lines were throttled (the count and the end are lower bounds).
    pub throttled: bool,
}

/// The result of a fit.
#[derive(Clone, Debug)]
pub struct Fit {
    /// The model's parameters.
    pub params: RolloutParams,
    /// Unix ns of the model's time zero.
    pub t0: i64,
    /// vtgate names, in model order.
    pub vtgates: Vec<String>,
    /// Tablet aliases in model order (`None`: not in the inputs).
    pub tablets: Vec<Option<Alias>>,
    /// Restarted tablets, in restart order.
    pub restarts: Vec<TabletFit>,
    /// Observed error bursts.
    pub bursts: Vec<BurstFit>,
    /// The refresh interval and its resolution (ns), and whether it was given.
    pub refresh: (i64, i64, bool),
    /// Per vtgate: its phase offset (ns) and whether a poll bounded it.
    pub phases: Vec<(i64, bool)>,
    /// `first_health_delay` and `health_stream_delay` as fitted (ns; censored flags).
    pub delays: [(i64, bool); 2],
    /// What the inputs did not give, and other warnings.
    pub warnings: Vec<String>,
    /// The inputs, one line each.
    pub inputs: Vec<String>,
}

/// A fit failure (the inputs cannot give a model): the message names the file and line.
pub type FitResult<T> = Result<T, String>;

fn mode(values: &[i64], bin: i64) -> Option<i64> {
    let mut counts: BTreeMap<i64, (usize, i64)> = BTreeMap::new();
    for &v in values {
        let k = v.div_euclid(bin.max(1));
        let e = counts.entry(k).or_insert((0, v));
        e.0 += 1;
        e.1 = e.1.min(v);
    }
    counts
        .into_iter()
        .max_by_key(|(k, (n, _))| (*n, -*k))
        .map(|(_, (_, v))| v)
}

/// The tolerant greatest common divisor of positive gaps (each a multiple of T within
/// `tol`), and the largest multiple seen (for the resolution).
fn refresh_from_gaps(gaps: &[i64], tol: i64) -> Option<(i64, i64)> {
    let mut g = *gaps.iter().filter(|d| **d > tol * 4).min()?;
    for &d in gaps {
        let (mut a, mut b) = (d.max(g), d.min(g));
        while b > tol * 2 {
            let r = a % b;
            a = b;
            b = if b - r <= tol * 2 { 0 } else { r };
        }
        if a > tol * 4 {
            g = a;
        }
    }
    if g < 100_000_000 {
        return None;
    }
    // Least squares over the multiples, then the nearest millisecond.
    let (mut num, mut den, mut kmax) = (0f64, 0f64, 1i64);
    for &d in gaps {
        let k = ((d as f64) / g as f64).round().max(1.0);
        num += d as f64 * k;
        den += k * k;
        kmax = kmax.max(k as i64);
    }
    let t = num / den;
    let t = ((t / 1e6).round() * 1e6) as i64;
    Some((t, kmax))
}

/// Fit a rollout model to `inputs`.
pub fn fit(inputs: &[Input], opts: &FitOptions) -> FitResult<Fit> {
    let mut warnings = vec![];
    let mut logs: Vec<VtgateLog> = vec![];
    let mut shorts: Vec<(std::path::PathBuf, Vec<ShortLine>)> = vec![];
    let mut events: Vec<Event> = vec![];
    let mut pods: Vec<Pod> = vec![];
    let mut described = vec![];
    for i in inputs {
        match i {
            Input::Vtgate(l) => {
                described.push(format!(
                    "{}: vtgate {} log ({}, {} lines used)",
                    l.path.display(),
                    l.name,
                    l.format,
                    l.lines.len()
                ));
                if l.skipped.1 > 0 {
                    warnings.push(format!(
                        "{}:{}: {} lines are not {} log lines (skipped)",
                        l.path.display(),
                        l.skipped.0,
                        l.skipped.1,
                        l.format
                    ));
                }
                if l.out_of_order.1 > 0 {
                    warnings.push(format!(
                        "{}:{}: {} lines out of time order by more than 1 ms (sorted)",
                        l.path.display(),
                        l.out_of_order.0,
                        l.out_of_order.1
                    ));
                }
                logs.push(l.clone());
            }
            Input::Short(p, v) => {
                described.push(format!("{}: short form ({} lines)", p.display(), v.len()));
                shorts.push((p.clone(), v.clone()));
            }
            Input::Events(p, v) => {
                described.push(format!("{}: events ({} items)", p.display(), v.len()));
                events.extend(v.iter().cloned());
            }
            Input::Pods(p, v) => {
                described.push(format!("{}: pods ({} items)", p.display(), v.len()));
                pods.extend(v.iter().cloned());
            }
        }
    }
    if logs.is_empty() {
        if let Some((p, lines)) = shorts.first() {
            return fit_short(p, lines, opts, warnings, described);
        }
        return Err(
            "no vtgate log and no short-form lines among the inputs: nothing to fit \
                    (events and pods alone do not show discovery)"
                .into(),
        );
    }
    if logs.iter().any(|l| l.format != logs[0].format) {
        warnings.push("the vtgate logs mix glog and JSON (several Vitess versions)".into());
    }
    // glog has no year: take it from the events or pods, else assume 2026.
    if logs.iter().any(|l| l.glog_year) {
        let hint = events
            .iter()
            .map(|e| e.t)
            .chain(pods.iter().filter_map(|p| p.created))
            .next();
        let year = match hint {
            Some(t) => super::names::civil(t).0,
            None => {
                warnings.push(
                    "glog lines carry no year and no events or pods JSON gives one: assumed \
                     2026 (relative times are unaffected)"
                        .into(),
                );
                2026
            }
        };
        for l in logs.iter_mut().filter(|l| l.glog_year) {
            for x in &mut l.lines {
                let (_, mo, d, ..) = super::names::civil(x.t);
                let sod = x.t.rem_euclid(86_400 * NS);
                x.t = super::names::days_from_civil(year, mo, d) * 86_400 * NS + sod;
            }
        }
    }
    logs.sort_by(|a, b| a.name.cmp(&b.name));
    let res = logs.iter().map(|l| l.resolution).max().unwrap_or(1);

    // Tablets: every alias named, its shard, its first host, and the original primaries.
    let mut shard_of: BTreeMap<Alias, String> = BTreeMap::new();
    let mut first_seen: BTreeMap<Alias, (i64, String, bool)> = BTreeMap::new();
    for l in &logs {
        for x in &l.lines {
            let (alias, host, ks, primary) = match &x.said {
                Said::Adding(r) | Said::Removing(r) | Said::StreamError(r) => (
                    r.alias.clone(),
                    r.host.clone().unwrap_or_default(),
                    format!("{}/{}", r.keyspace, r.shard),
                    r.primary,
                ),
                Said::Serving {
                    alias,
                    host,
                    keyspace_shard,
                    primary,
                    ..
                } => (
                    alias.clone(),
                    host.clone(),
                    keyspace_shard.clone(),
                    *primary,
                ),
                _ => continue,
            };
            shard_of.entry(alias.clone()).or_insert(ks);
            let e = first_seen
                .entry(alias)
                .or_insert((x.t, host.clone(), primary));
            if x.t < e.0 && !host.is_empty() {
                *e = (x.t, host, primary);
            }
        }
    }
    if shard_of.is_empty() {
        return Err(format!(
            "{}: no discovery lines (Adding / Removing tablet, HealthCheckUpdate) in any vtgate \
             log: nothing to fit",
            logs[0].path.display()
        ));
    }
    let shards: BTreeSet<String> = shard_of.values().cloned().collect();
    let shards: Vec<String> = shards.into_iter().collect();
    // Cells: the tablets' alias cells and the vtgates' --cells_to_watch; vtgates reordered
    // cell by cell (the model's vtgate order).
    let cells = cells_of(&mut logs, &first_seen, &mut warnings);
    let m = logs.len();
    let watches = |g: usize, cell: &str| {
        cells
            .as_ref()
            .is_none_or(|c| c.watch[g].iter().any(|x| x == cell))
    };
    let reload_cell = |g: usize| cells.as_ref().map(|c| c.reload[g].clone());

    // Topology reads per vtgate: poll instants (and reloads, kept apart).
    let mut polls: Vec<Vec<i64>> = vec![];
    let mut reloads: Vec<Vec<i64>> = vec![];
    for l in &logs {
        let rl: Vec<i64> = l
            .lines
            .iter()
            .filter(|x| matches!(x.said, Said::Reload(_)))
            .map(|x| x.t)
            .collect();
        let mut ps: Vec<i64> = l
            .lines
            .iter()
            .filter(|x| matches!(x.said, Said::Start(_) | Said::Adding(_) | Said::Removing(_)))
            .map(|x| x.t)
            .filter(|t| !rl.iter().any(|r| *t >= *r && *t - *r <= 100_000_000))
            .collect();
        ps.dedup_by(|a, b| (*a - *b).abs() <= 1_000_000);
        polls.push(ps);
        reloads.push(rl);
    }
    // The refresh interval.
    let tol = (2 * res).max(2_000);
    let refresh = match opts.refresh_interval {
        Some(t) => (t.as_nanos() as i64, 0, true),
        None => {
            let gaps: Vec<i64> = polls
                .iter()
                .flat_map(|p| p.windows(2).map(|w| w[1] - w[0]))
                .filter(|d| *d > 0)
                .collect();
            match refresh_from_gaps(&gaps, tol) {
                Some((t, kmax)) => (t, (tol / kmax).max(1), false),
                None => {
                    warnings.push(
                        "the refresh interval cannot be estimated (fewer than two polls per \
                         vtgate): assumed 1m; give --refresh-interval"
                            .into(),
                    );
                    (60 * NS, 0, false)
                }
            }
        }
    };
    let tper = refresh.0;
    // Drain instants from the events: `Deleted Pod <name>`.
    let mut drains_ev: BTreeMap<u64, (i64, i64)> = BTreeMap::new();
    let mut candidates: BTreeMap<u64, u64> = BTreeMap::new(); // old primary uid -> new
    for e in &events {
        if e.reason == "Deleted" {
            if let Some(uid) = e.message.strip_prefix("deleted Pod ").and_then(pod_uid) {
                drains_ev.entry(uid).or_insert((e.t, e.resolution));
            }
        }
        if e.reason == "PlannedReparent" {
            let m = &e.message;
            let get = |key: &str| {
                m.split(key)
                    .nth(1)
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(super::parse::alias_of)
            };
            if let (Some(a), Some(b)) = (get("old primary "), get("new primary ")) {
                candidates.insert(a.uid, b.uid);
            }
        }
    }
    if events.is_empty() {
        warnings.push(
            "no events JSON: SIGTERM instants are the first serving true => false lines minus \
             the default health_stream_delay (50ms), and the PRS candidate is assumed to be the \
             replica restarted first"
                .into(),
        );
    }
    let ready_of: BTreeMap<u64, i64> = pods
        .iter()
        .filter_map(|p| Some((p.uid.or_else(|| pod_uid(&p.name))?, p.ready_since?)))
        .collect();

    // Per tablet, the serving changes seen by any vtgate, by host.
    struct Change {
        t: i64,
        host: String,
        from: bool,
        to: bool,
        primary: bool,
        finalize: bool,
    }
    let mut changes: BTreeMap<Alias, Vec<Change>> = BTreeMap::new();
    for l in &logs {
        for x in &l.lines {
            if let Said::Serving {
                alias,
                host,
                from,
                to,
                primary,
                finalize,
                ..
            } = &x.said
            {
                changes.entry(alias.clone()).or_default().push(Change {
                    t: x.t,
                    host: host.clone(),
                    from: *from,
                    to: *to,
                    primary: *primary,
                    finalize: *finalize,
                });
            }
        }
    }
    for v in changes.values_mut() {
        v.sort_by_key(|c| c.t);
    }
    // first_health_delay: Adding -> the first response on that host, most common gap.
    let mut gaps = vec![];
    for l in &logs {
        for (i, x) in l.lines.iter().enumerate() {
            if let Said::Adding(r) = &x.said {
                let host = r.host.clone().unwrap_or_default();
                if let Some(c) = l.lines[i + 1..].iter().find(|y| {
                    matches!(&y.said, Said::Serving { alias, host: h, finalize: false, .. }
                        if *alias == r.alias && *h == host)
                }) {
                    gaps.push(c.t - x.t);
                }
            }
        }
    }
    let fhd = mode(&gaps, 1000).map(|v| round_to(v, 1000));
    let fhd_censored = fhd.is_none();
    let fhd = fhd.unwrap_or(10_000_000);

    // The restarted tablets, in drain order, with their SIGTERM (before hsd is known: the
    // first true => false line).
    struct Raw {
        alias: Alias,
        old_host: String,
        drain_line: i64,
        drain_ev: Option<(i64, i64)>,
        prs: Option<(i64, i64)>,
    }
    let mut raws = vec![];
    for (alias, (_, host0, primary0)) in &first_seen {
        let ch = changes.get(alias).map(Vec::as_slice).unwrap_or(&[]);
        let on_old = |c: &&Change| c.host == *host0 && !c.finalize;
        let mut prs = None;
        let drain_line = if *primary0 {
            let s = ch
                .iter()
                .filter(on_old)
                .find(|c| c.from && !c.to && c.primary);
            let e = s.and_then(|s| {
                ch.iter()
                    .filter(on_old)
                    .find(|c| c.t > s.t && !c.from && c.to && !c.primary)
            });
            if let (Some(s), Some(e)) = (s, e) {
                prs = Some((s.t, e.t));
            }
            e.and_then(|e| {
                ch.iter()
                    .filter(on_old)
                    .find(|c| c.t > e.t && c.from && !c.to)
                    .map(|c| c.t)
            })
        } else {
            ch.iter()
                .filter(on_old)
                .find(|c| c.from && !c.to)
                .map(|c| c.t)
        };
        let drain_ev = drains_ev.get(&alias.uid).copied();
        let Some(drain_line) = drain_line.or(drain_ev.map(|d| d.0)) else {
            continue;
        };
        raws.push(Raw {
            alias: alias.clone(),
            old_host: host0.clone(),
            drain_line,
            drain_ev,
            prs,
        });
    }
    // health_stream_delay: the first push line after the SIGTERM event.
    let hsd_gaps: Vec<i64> = raws
        .iter()
        .filter_map(|r| r.drain_ev.map(|d| r.drain_line - d.0))
        .filter(|d| *d >= 0)
        .collect();
    // Each gap is a lower bound of the delay within the line resolution (glog truncates to
    // the microsecond): the largest gap of the most common microsecond, rounded up.
    let hsd = mode(&hsd_gaps, 1000).map(|v| {
        let top = hsd_gaps
            .iter()
            .filter(|g| g.div_euclid(1000) == v.div_euclid(1000) || (*g - v).abs() < res)
            .max()
            .copied()
            .unwrap_or(v);
        if res > 1 {
            (top + res - 1).div_euclid(res) * res
        } else {
            top
        }
    });
    let hsd_censored = hsd.is_none();
    let hsd = hsd.unwrap_or(50_000_000);
    let drain_of = |r: &Raw| -> (i64, i64) {
        match r.drain_ev {
            Some((t, res_e)) => (t, res_e / 2),
            None => (r.drain_line - hsd, res),
        }
    };
    raws.sort_by_key(|r| drain_of(r).0);
    if raws.is_empty() {
        return Err(format!(
            "{}: no tablet restart in the logs (no serving true => false line and no \
             `Deleted Pod` event): nothing to fit",
            logs[0].path.display()
        ));
    }
    // Time zero: a whole second, at least 1 s before the first release.
    let first_release = raws
        .iter()
        .map(|r| {
            r.prs
                .map_or(drain_of(r).0, |p| p.0 - hsd)
                .min(drain_of(r).0)
        })
        .min()
        .unwrap_or(0);
    let t0 = first_release.div_euclid(NS) * NS - NS;
    // Phases relative to t0.
    let mut phases = vec![];
    for (g, ps) in polls.iter().enumerate() {
        let res_mod: Vec<i64> = ps.iter().map(|p| (p - t0).rem_euclid(tper)).collect();
        match mode(&res_mod, 1_000_000) {
            Some(v) => phases.push((v, true)),
            None => {
                warnings.push(format!(
                    "vtgate {}: no topology poll in its log: its phase is censored (set to 0)",
                    logs[g].name
                ));
                phases.push((0, false))
            }
        }
    }
    // The last grid instant of vtgate g strictly before x.
    let grid_before = |g: usize, x: i64| -> i64 {
        let off = t0 + phases[g].0;
        let k = (x - off - 1).div_euclid(tper);
        off + k * tper
    };
    let retry = 2_000_000i64;
    let cap = 60 * NS;
    let mut restarts = vec![];
    for r in &raws {
        let (drain, drain_res) = drain_of(r);
        let shard = shard_of.get(&r.alias).cloned().unwrap_or_default();
        // The first Adding of a new host per vtgate, and the response after it.
        let mut seen: Vec<Option<(i64, String)>> = vec![None; m];
        let mut disc: Vec<Option<i64>> = vec![None; m];
        for (g, l) in logs.iter().enumerate() {
            for (i, x) in l.lines.iter().enumerate() {
                if x.t < drain {
                    continue;
                }
                if let Said::Adding(rec) = &x.said {
                    let h = rec.host.clone().unwrap_or_default();
                    if rec.alias == r.alias && !h.is_empty() && h != r.old_host {
                        seen[g] = Some((x.t, h.clone()));
                        disc[g] = l.lines[i + 1..]
                            .iter()
                            .find(|y| {
                                matches!(&y.said, Said::Serving { alias, host, to: true, .. }
                                    if *alias == r.alias && *host == h)
                            })
                            .map(|y| y.t);
                        break;
                    }
                }
            }
        }
        let b = seen.iter().flatten().map(|s| s.0).min();
        let Some(b) = b else {
            warnings.push(format!(
                "tablet {}: restarted at {} but no vtgate saw its new address: its publish and \
                 serving instants are censored (defaults)",
                r.alias,
                fmt_t(drain - t0)
            ));
            let publish = drain + 20 * NS;
            restarts.push(TabletFit {
                alias: r.alias.clone(),
                shard,
                drain: Inferred {
                    ns: drain - t0,
                    resolution: drain_res,
                    censored: false,
                },
                down: Inferred {
                    ns: drain - t0 + 5 * NS,
                    resolution: 0,
                    censored: true,
                },
                publish: Inferred {
                    ns: publish - t0,
                    resolution: 0,
                    censored: true,
                },
                serve: Inferred {
                    ns: publish - t0 + 5 * NS,
                    resolution: 0,
                    censored: true,
                },
                ready: ready_of.get(&r.alias.uid).map(|t| t - t0),
                discovered: vec![None; m],
            });
            continue;
        };
        let mut a = drain;
        for g in 0..m {
            // Only a vtgate watching the tablet's cell could have seen the address.
            if !watches(g, &r.alias.cell) {
                continue;
            }
            if phases[g].1 {
                a = a.max(grid_before(g, b));
            }
            if reload_cell(g).is_some_and(|c| c.as_deref() != Some(r.alias.cell.as_str())) {
                continue;
            }
            for &x in &reloads[g] {
                if x < b && seen[g].as_ref().is_none_or(|s| s.0 > x) {
                    a = a.max(x);
                }
            }
        }
        // The operator released the shard's next tablet no earlier than serving + the
        // Available gate (Ready comes at or after serving); the pod's Ready condition
        // (whole seconds, truncated) bounds it too.
        let mut op_hi = i64::MAX;
        let shard_key = shard_of.get(&r.alias);
        let next_release = raws
            .iter()
            .filter(|x| shard_of.get(&x.alias) == shard_key && drain_of(x).0 > drain)
            .map(|x| {
                x.prs
                    .map_or(drain_of(x).0, |p| (p.0 - hsd).min(drain_of(x).0))
            })
            .min();
        let op_gate = opts
            .available_timeout
            .unwrap_or(SimDuration::from_secs(30))
            .as_nanos() as i64;
        if let Some(nr) = next_release {
            op_hi = op_hi.min(nr - op_gate);
        }
        if let Some(rd) = ready_of.get(&r.alias.uid) {
            op_hi = op_hi.min(rd + NS);
        }
        let b_eff = b.min(op_hi).max(a);
        let publish = a + (b_eff - a) / 2;
        // Serving: bounded by the first responses.
        let (mut lo, mut hi) = (publish, op_hi);
        for g in 0..m {
            let (Some((p, _)), Some(c)) = (&seen[g], disc[g]) else {
                continue;
            };
            let base = p + fhd;
            if (c - base).abs() <= 2 * res {
                hi = hi.min(c);
                continue;
            }
            let (mut at, mut d, mut prev) = (base, retry, base);
            let mut found = false;
            while at <= c + 2 * res {
                if (at - c).abs() <= 2 * res && at != base {
                    lo = lo.max(prev);
                    found = true;
                    break;
                }
                prev = at;
                at += d;
                d = (d * 2).min(cap);
            }
            if !found {
                warnings.push(format!(
                    "vtgate {}: its first response from {} at {} is not on the reconnect \
                     schedule from its poll at {}",
                    logs[g].name,
                    r.alias,
                    fmt_t(c - t0),
                    fmt_t(p - t0)
                ));
            }
            hi = hi.min(c);
        }
        if hi < lo {
            warnings.push(format!(
                "tablet {}: the logs put its serving instant after {} but the operator's next release and the pod's Ready put it before {}: inconsistent inputs (the earlier is kept)",
                r.alias,
                fmt_t(lo - t0),
                fmt_t(hi - t0)
            ));
        }
        let (serve, serve_res, serve_cens) = if hi == i64::MAX {
            warnings.push(format!(
                "tablet {}: no vtgate logged a response from its new process: serving censored \
                 (publish + 5s)",
                r.alias
            ));
            (publish + 5 * NS, 0, true)
        } else if hi <= lo {
            (hi, 0, false)
        } else {
            (lo + (hi - lo) / 2, (hi - lo) / 2, false)
        };
        // Old pod gone: the first broken stream on the old host, else bounded by the removals.
        let mut broke = i64::MAX;
        let mut removed = drain;
        for l in &logs {
            for x in &l.lines {
                match &x.said {
                    Said::StreamError(rec)
                        if rec.alias == r.alias
                            && rec.host.as_deref() == Some(r.old_host.as_str())
                            && x.t >= drain =>
                    {
                        broke = broke.min(x.t)
                    }
                    Said::Removing(rec)
                        if rec.alias == r.alias
                            && rec.host.as_deref() == Some(r.old_host.as_str())
                            && x.t >= drain
                            && x.t < publish =>
                    {
                        removed = removed.max(x.t)
                    }
                    _ => {}
                }
            }
        }
        let (down, down_res, down_cens) = if broke < publish {
            (broke, res, false)
        } else {
            let lo = removed.max(drain + hsd);
            (lo + (publish - lo) / 2, (publish - lo) / 2, false)
        };
        restarts.push(TabletFit {
            alias: r.alias.clone(),
            shard,
            drain: Inferred {
                ns: drain - t0,
                resolution: drain_res,
                censored: false,
            },
            down: Inferred {
                ns: down - t0,
                resolution: down_res,
                censored: down_cens,
            },
            publish: Inferred {
                ns: publish - t0,
                resolution: (b_eff - a) / 2,
                censored: false,
            },
            serve: Inferred {
                ns: serve - t0,
                resolution: serve_res,
                censored: serve_cens,
            },
            ready: ready_of.get(&r.alias.uid).map(|t| t - t0),
            discovered: disc.iter().map(|d| d.map(|x| x - t0)).collect(),
        });
    }

    // Model layout: per shard, the original primary, then replicas in restart order, then
    // replicas never restarted.
    let a_gate = opts
        .available_timeout
        .unwrap_or(SimDuration::from_secs(30))
        .as_nanos() as i64;
    let mut per_shard: Vec<Vec<Alias>> = vec![];
    let mut primary_restarted = vec![];
    for sh in &shards {
        let mut primary: Vec<Alias> = first_seen
            .iter()
            .filter(|(a, (_, _, p))| *p && shard_of.get(*a) == Some(sh))
            .map(|(a, _)| a.clone())
            .collect();
        if primary.len() != 1 {
            return Err(format!(
                "shard {sh}: {} tablets were PRIMARY when the logs start (expected one)",
                primary.len()
            ));
        }
        let p = primary.remove(0);
        let mut v = vec![p.clone()];
        for r in &restarts {
            if r.shard == *sh && r.alias != p {
                v.push(r.alias.clone());
            }
        }
        for (a, s) in &shard_of {
            if s == sh && !v.contains(a) {
                warnings.push(format!(
                    "tablet {a}: never restarted in the logs: its durations are censored \
                     (the median of the others)"
                ));
                v.push(a.clone());
            }
        }
        if let Some(c) = &cells {
            // The model's order: the primary, then each cell's replicas, cell by cell
            // (restart order kept within a cell: the sort is stable).
            v[1..].sort_by_key(|a| c.index(&a.cell));
        }
        primary_restarted.push(restarts.iter().any(|r| r.alias == p));
        per_shard.push(v);
    }
    let per = per_shard[0].len();
    if let Some((i, v)) = per_shard.iter().enumerate().find(|(_, v)| v.len() != per) {
        return Err(format!(
            "shard {} has {} tablets and shard {} has {per}: the rollout model needs the same \
             number of tablets in every shard",
            shards[i],
            v.len(),
            shards[0]
        ));
    }
    let restart_primary = primary_restarted.iter().all(|x| *x);
    if !restart_primary && primary_restarted.iter().any(|x| *x) {
        warnings.push("some shards restarted their primary and others not: modelled as not".into());
    }
    let n = per * shards.len();
    let fit_of = |a: &Alias| restarts.iter().find(|r| r.alias == *a);
    let median = |f: &dyn Fn(&TabletFit) -> i64| -> i64 {
        let mut v: Vec<i64> = restarts.iter().map(f).collect();
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let dur = |x: i64| SimDuration::from_nanos(x.max(0) as u64);
    let mut drain_grace = vec![];
    let mut restart_d = vec![];
    let mut sap = vec![];
    let mut tablets = vec![];
    for v in &per_shard {
        for a in v {
            tablets.push(Some(a.clone()));
            let (dg, rs, sp) = match fit_of(a) {
                Some(r) => (
                    r.down.ns - r.drain.ns,
                    r.publish.ns - r.down.ns,
                    r.serve.ns - r.publish.ns,
                ),
                None => (
                    median(&|r| r.down.ns - r.drain.ns),
                    median(&|r| r.publish.ns - r.down.ns),
                    median(&|r| r.serve.ns - r.publish.ns),
                ),
            };
            drain_grace.push(dur(dg));
            restart_d.push(dur(rs));
            sap.push(dur(sp));
        }
    }
    // Operator steps, PRS.
    let mut steps = vec![SimDuration::ZERO; n];
    let mut prs_d = vec![];
    let mut window = None;
    let mut positions: Vec<u32> = vec![];
    let mut restart_orders: Vec<Vec<u32>> = vec![];
    for (s, v) in per_shard.iter().enumerate() {
        let mut replicas: Vec<&TabletFit> = v[1..].iter().filter_map(&fit_of).collect();
        replicas.sort_by_key(|r| r.drain.ns);
        // The restart order as indices in the shard (never-restarted replicas last).
        let mut order: Vec<u32> = replicas
            .iter()
            .filter_map(|r| v.iter().position(|a| *a == r.alias).map(|k| k as u32))
            .collect();
        for k in 1..v.len() as u32 {
            if !order.contains(&k) {
                order.push(k);
            }
        }
        restart_orders.push(order);
        let raw_p = raws.iter().find(|r| r.alias == v[0]);
        let prs = raw_p
            .and_then(|r| r.prs)
            .map(|(a, b)| (a - hsd - t0, b - hsd - t0));
        let mut releases: Vec<i64> = replicas.iter().map(|r| r.drain.ns).collect();
        if restart_primary {
            match prs {
                Some((start, end)) => {
                    releases.push(start);
                    prs_d.push(dur(end - start));
                    if let Some(pf) = fit_of(&v[0]) {
                        let w = pf.drain.ns - end;
                        if window.is_some_and(|x: i64| (x - w).abs() > 2 * res) {
                            warnings.push(format!(
                                "shard {}: the old primary served as a REPLICA for {} before \
                                 its SIGTERM, unlike the first shard: the first is kept",
                                shards[s],
                                fmt_t(w)
                            ));
                        }
                        window.get_or_insert(w);
                    }
                }
                None => {
                    warnings.push(format!(
                        "shard {}: the primary restarted but no PRS shows in the logs \
                         (default PRS timing)",
                        shards[s]
                    ));
                    prs_d.push(SimDuration::from_secs(3));
                }
            }
            let new = candidates.get(&v[0].uid);
            let pos = new.and_then(|u| replicas.iter().position(|r| r.alias.uid == *u));
            if pos.is_none() && !candidates.is_empty() {
                warnings.push(format!(
                    "shard {}: no PlannedReparent event names the new primary: assumed the \
                     replica restarted first",
                    shards[s]
                ));
            }
            positions.push(pos.unwrap_or(0) as u32);
        } else {
            prs_d.push(SimDuration::from_secs(3));
            positions.push(0);
        }
        for (k, rel) in releases.iter().enumerate() {
            let prev_avail = if k == 0 {
                0
            } else {
                replicas[k - 1].serve.ns + a_gate
            };
            let d = rel - prev_avail;
            if d < 0 {
                warnings.push(format!(
                    "shard {}: release {} came {} before the previous tablet could be \
                     Available (serving + {}): not replayed exactly",
                    shards[s],
                    k + 1,
                    fmt_t(-d),
                    fmt_t(a_gate)
                ));
            }
            steps[s * per + k] = dur(d);
        }
    }
    let obs = |samples: Vec<SimDuration>| DurationDist::Observed {
        samples,
        draw: ObservedDraw::InOrder,
    };
    let mut p = RolloutParams {
        vtgates: m as u32,
        shards: shards.len() as u32,
        replicas_per_shard: (per - 1) as u32,
        ..RolloutParams::default()
    };
    p.vtgate.tablet_refresh_interval = dur(tper);
    p.vtgate.phase = Phase::Explicit {
        offsets: phases.iter().map(|(o, _)| dur(*o)).collect(),
    };
    p.vtgate.poll_jitter = SimDuration::ZERO;
    p.vtgate.topo_read_latency = SimDuration::ZERO;
    p.vtgate.first_health_delay = dur(fhd);
    p.vtgate.health_stream_delay = dur(hsd);
    p.tablets.drain_grace = obs(drain_grace);
    p.tablets.restart = obs(restart_d);
    p.tablets.serving_after_publish = obs(sap);
    p.tablets.readiness_probe_period = SimDuration::ZERO;
    p.tablets.readiness_flaps_per_hour = 0.0;
    p.tablets.keep_address_on_restart = false;
    p.operator.tablet_available_timeout = dur(a_gate);
    p.operator.step_latency = obs(steps);
    let in_alias_order = restart_orders
        .iter()
        .all(|o| o.iter().enumerate().all(|(i, k)| *k as usize == i + 1));
    p.operator.replica_order = if in_alias_order {
        ReplicaOrder::Alias
    } else {
        ReplicaOrder::Listed {
            order: restart_orders,
        }
    };
    if let Some(c) = &cells {
        p.cells = c.params(&per_shard, &shards)?;
    }
    let last = (per as u32).saturating_sub(2);
    p.operator.prs_candidate = if positions.iter().all(|x| *x == 0) {
        PrsCandidate::FirstRestarted
    } else if positions.iter().all(|x| *x == last) {
        PrsCandidate::LastRestarted
    } else {
        PrsCandidate::Restarted { positions }
    };
    p.operator.prs_duration = obs(prs_d);
    p.operator.prs_replica_window = dur(window.unwrap_or(2 * NS));
    p.operator.restart_primary = restart_primary;
    p.operator.parallel_shards = true;
    p.operator.start_at = SimDuration::ZERO;
    p.workload.mode = WorkloadMode::Fast;
    let last = restarts
        .iter()
        .flat_map(|r| r.discovered.iter().flatten().copied().chain([r.serve.ns]))
        .max()
        .unwrap_or(0);
    p.horizon = dur((2 * last).max(3600 * NS));

    // Bursts: error lines per vtgate, throttled 5 s.
    let mut bursts = vec![];
    let mut total_errors = 0u64;
    for (g, l) in logs.iter().enumerate() {
        let mut cur: Option<BurstFit> = None;
        for x in &l.lines {
            let (t, k, skipped) = match x.said {
                Said::Error { .. } => (x.t - t0, 1, false),
                Said::Skipped(k) => (x.t - t0 - 5 * NS, k, true),
                _ => continue,
            };
            total_errors += k;
            match &mut cur {
                Some(b) if t <= b.end + 6 * NS => {
                    b.errors += k;
                    b.end = b.end.max(t);
                    b.throttled |= skipped;
                }
                _ => {
                    if let Some(b) = cur.take() {
                        bursts.push(b);
                    }
                    cur = Some(BurstFit {
                        g,
                        start: t,
                        end: t,
                        errors: k,
                        throttled: skipped,
                    });
                }
            }
        }
        bursts.extend(cur);
    }
    // Read rate: errors over exposed vtgate-seconds of the fitted replay (a lower bound when
    // lines were throttled).
    if total_errors > 0 {
        p.workload.replica_read_rps = 1.0;
        if p.check().is_ok() {
            let run = run_detailed(&p, 1, RunOptions::default());
            let exposed: f64 = run
                .exposures
                .iter()
                .map(|e| e.end.since(e.start).as_secs_f64())
                .sum();
            if exposed > 0.0 {
                p.workload.replica_read_rps = total_errors as f64 / exposed;
            }
        }
    } else {
        warnings.push(
            "no error lines in the vtgate logs: the read rate is not observed (model default \
             kept)"
                .into(),
        );
    }
    if let Err(e) = p.check() {
        return Err(format!("the fitted model is not valid: {e}"));
    }
    Ok(Fit {
        params: p,
        t0,
        vtgates: logs.iter().map(|l| l.name.clone()).collect(),
        tablets,
        restarts,
        bursts,
        refresh,
        phases,
        delays: [(fhd, fhd_censored), (hsd, hsd_censored)],
        warnings,
        inputs: described,
    })
}

/// The cells a fit found (`None` from [`cells_of`]: one cell, every vtgate watching it).
struct Cells {
    /// Cell names in model order.
    names: Vec<String>,
    /// Per vtgate (model order): its cell index.
    own: Vec<usize>,
    /// Per vtgate: the cells it watches.
    watch: Vec<Vec<String>>,
    /// Per vtgate: its `--cells_to_watch` as logged (`None`: no start-up line).
    flag: Vec<Option<String>>,
    /// Per vtgate: the cell its shard reload reads (the model's rule: its own when watched,
    /// else the first listed; `None`: it watches none).
    reload: Vec<Option<String>>,
}

impl Cells {
    fn index(&self, cell: &str) -> usize {
        self.names
            .iter()
            .position(|n| n == cell)
            .unwrap_or(usize::MAX)
    }

    /// The model's `cells`: vtgates per cell, replicas per shard in each cell, the primary's
    /// cell and each cell's `cells_to_watch`.
    fn params(
        &self,
        per_shard: &[Vec<Alias>],
        shards: &[String],
    ) -> FitResult<Vec<crate::model::rollout::CellParams>> {
        let count = |v: &[Alias]| -> Vec<u32> {
            let mut n = vec![0u32; self.names.len()];
            for a in &v[1..] {
                n[self.index(&a.cell)] += 1;
            }
            n
        };
        let reps = count(&per_shard[0]);
        let primary = &per_shard[0][0].cell;
        for (s, v) in per_shard.iter().enumerate() {
            if &v[0].cell != primary {
                return Err(format!(
                    "shard {}'s primary is in cell {} and shard {}'s in {}: the rollout model \
                     needs every shard's primary in one cell",
                    shards[s], v[0].cell, shards[0], primary
                ));
            }
            if count(v) != reps {
                return Err(format!(
                    "shards {} and {} have different numbers of replicas per cell: the rollout \
                     model needs the same shape in every shard",
                    shards[0], shards[s]
                ));
            }
        }
        let all: BTreeSet<&str> = self.names.iter().map(|s| s.as_str()).collect();
        let mut out = vec![];
        for (c, name) in self.names.iter().enumerate() {
            let gates: Vec<usize> = (0..self.own.len()).filter(|&g| self.own[g] == c).collect();
            let flags: BTreeSet<Option<&str>> =
                gates.iter().map(|&g| self.flag[g].as_deref()).collect();
            let cells_to_watch = match gates.first() {
                None => None,
                Some(&g) => {
                    let w: BTreeSet<&str> = self.watch[g].iter().map(|s| s.as_str()).collect();
                    if flags.len() > 1 {
                        return Err(format!(
                            "the vtgates of cell {name} log different --cells_to_watch values \
                             ({flags:?}): the rollout model gives one per cell"
                        ));
                    }
                    match self.flag[g].as_deref() {
                        None => None,
                        Some("") => Some(vec![]),
                        Some(_) if w == all => None,
                        Some(_) => Some(self.watch[g].clone()),
                    }
                }
            };
            out.push(crate::model::rollout::CellParams {
                name: name.clone(),
                vtgates: gates.len() as u32,
                replicas: reps[c],
                primary: name == primary,
                cells_to_watch,
            });
        }
        Ok(out)
    }
}

/// Find the cells: the tablets' alias cells and the cells the vtgates' start-up lines list
/// (`loading tablets for cells: a,b`, vitessio/vitess `go/vt/discovery/healthcheck.go`
/// `NewHealthCheck`). A vtgate's own cell is not in its log: it is taken from its name (a
/// `-`-separated part naming a cell, as the operator's vtgate pod names
/// `<cluster>-<cell>-vtgate-<hash>` do), else the one cell it watches. One cell in all: `None`
/// (the model's implicit cell). Reorders `logs` cell by cell (name order within a cell).
fn cells_of(
    logs: &mut [VtgateLog],
    first_seen: &BTreeMap<Alias, (i64, String, bool)>,
    warnings: &mut Vec<String>,
) -> Option<Cells> {
    let flag_of = |l: &VtgateLog| {
        l.lines.iter().find_map(|x| match &x.said {
            Said::Start(s) => Some(s.clone()),
            _ => None,
        })
    };
    let listed = |f: &str| -> Vec<String> {
        f.split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let mut known: BTreeSet<String> = first_seen.keys().map(|a| a.cell.clone()).collect();
    for l in logs.iter() {
        if let Some(f) = flag_of(l) {
            known.extend(listed(&f));
        }
    }
    if known.len() <= 1 {
        return None;
    }
    let own_of = |l: &VtgateLog| -> Option<String> {
        let parts: Vec<&str> = l.name.split('-').collect();
        let mut best: Option<&String> = None;
        for c in &known {
            let k = c.split('-').count();
            if parts.windows(k).any(|w| w.join("-") == *c) && best.is_none_or(|b| c.len() > b.len())
            {
                best = Some(c);
            }
        }
        best.cloned().or_else(|| {
            let w = listed(&flag_of(l)?);
            (w.len() == 1).then(|| w[0].clone())
        })
    };
    // Cell order: as the vtgates' names first name them, then the other cells by name.
    let mut names: Vec<String> = vec![];
    for l in logs.iter() {
        if let Some(c) = own_of(l) {
            if !names.contains(&c) {
                names.push(c);
            }
        }
    }
    for c in &known {
        if !names.contains(c) {
            names.push(c.clone());
        }
    }
    let mut own = vec![];
    for l in logs.iter() {
        own.push(match own_of(l) {
            Some(c) => names.iter().position(|n| *n == c).unwrap_or(0),
            None => {
                warnings.push(format!(
                    "vtgate {}: its cell is not in its name and it watches several cells: \
                     assumed {} (name the log file after the vtgate pod, \
                     <cluster>-<cell>-vtgate-...)",
                    l.name, names[0]
                ));
                0
            }
        });
    }
    // Stable: name order within a cell.
    let mut idx: Vec<usize> = (0..logs.len()).collect();
    idx.sort_by_key(|&g| own[g]);
    let sorted: Vec<VtgateLog> = idx.iter().map(|&g| logs[g].clone()).collect();
    let own: Vec<usize> = idx.iter().map(|&g| own[g]).collect();
    logs.clone_from_slice(&sorted);
    let mut watch = vec![];
    let mut flag = vec![];
    let mut reload = vec![];
    for (g, l) in logs.iter().enumerate() {
        let f = flag_of(l);
        let here = names[own[g]].clone();
        let w = match &f {
            Some(f) if !listed(f).is_empty() => listed(f),
            Some(_) => vec![here.clone()],
            None => {
                warnings.push(format!(
                    "vtgate {}: no `loading tablets for cells` line (the log starts after \
                     vtgate did): assumed it watches every cell",
                    l.name
                ));
                names.clone()
            }
        };
        reload.push(if w.contains(&here) {
            Some(here)
        } else {
            w.first().cloned()
        });
        watch.push(w);
        flag.push(f);
    }
    Some(Cells {
        names,
        own,
        watch,
        flag,
        reload,
    })
}

fn round_to(v: i64, q: i64) -> i64 {
    (v + q / 2).div_euclid(q) * q
}

/// A time in seconds for messages.
pub fn fmt_t(ns: i64) -> String {
    format!("{:.6}s", ns as f64 / 1e9)
}

/// The short form alone: the phases relative to the restarted tablet's serving instant
/// (`t+0`), everything else the model's defaults.
fn fit_short(
    path: &std::path::Path,
    lines: &[ShortLine],
    opts: &FitOptions,
    mut warnings: Vec<String>,
    inputs: Vec<String>,
) -> FitResult<Fit> {
    let tablet = lines
        .iter()
        .find(|l| !l.from && l.to)
        .map(|l| l.tablet.clone())
        .ok_or_else(|| format!("{}: no `false => true` line: no discovery", path.display()))?;
    let tper = match opts.refresh_interval {
        Some(t) => t.as_nanos() as i64,
        None => {
            warnings.push(
                "the short form shows one restart: the refresh interval cannot be estimated; \
                 assumed 1m (give --refresh-interval)"
                    .into(),
            );
            60 * NS
        }
    };
    let mut by_gate: BTreeMap<String, (usize, i64)> = BTreeMap::new();
    for l in lines
        .iter()
        .filter(|l| l.tablet == tablet && !l.from && l.to)
    {
        let t = l.at.as_nanos() as i64;
        if let Some((line, prev)) = by_gate.get(&l.vtgate) {
            if *prev != t {
                return Err(format!(
                    "{}:{}: vtgate {} discovers {tablet} twice (first at line {line})",
                    path.display(),
                    l.line,
                    l.vtgate
                ));
            }
        }
        by_gate.entry(l.vtgate.clone()).or_insert((l.line, t));
    }
    let names: Vec<String> = by_gate.keys().cloned().collect();
    let phases: Vec<(i64, bool)> = by_gate
        .values()
        .map(|(_, t)| (t.rem_euclid(tper), true))
        .collect();
    let res = NS; // the short form's whole seconds
    warnings.push(format!(
        "short form only: phases are relative to {tablet}'s serving instant (offset = lag mod \
         T); shift them by that instant in your timeline. Tablet, operator and workload \
         timings are not in the input (model defaults)"
    ));
    let mut p = RolloutParams {
        vtgates: names.len() as u32,
        ..RolloutParams::default()
    };
    p.vtgate.tablet_refresh_interval = SimDuration::from_nanos(tper as u64);
    p.vtgate.phase = Phase::Explicit {
        offsets: phases
            .iter()
            .map(|(o, _)| SimDuration::from_nanos(*o as u64))
            .collect(),
    };
    p.check()
        .map_err(|e| format!("the fitted model is not valid: {e}"))?;
    let discovered = by_gate.values().map(|(_, t)| Some(*t)).collect();
    Ok(Fit {
        params: p,
        t0: 0,
        vtgates: names,
        tablets: vec![],
        restarts: vec![TabletFit {
            alias: Alias {
                cell: tablet.clone(),
                uid: 0,
            },
            shard: String::new(),
            drain: Inferred {
                ns: 0,
                resolution: 0,
                censored: true,
            },
            down: Inferred {
                ns: 0,
                resolution: 0,
                censored: true,
            },
            publish: Inferred {
                ns: 0,
                resolution: 0,
                censored: true,
            },
            serve: Inferred {
                ns: 0,
                resolution: res / 2,
                censored: false,
            },
            ready: None,
            discovered,
        }],
        bursts: vec![],
        refresh: (tper, 0, opts.refresh_interval.is_some()),
        phases,
        delays: [(0, true), (0, true)],
        warnings,
        inputs,
    })
}

/// The serving instant of each fitted restart in the model's own replay, by alias order of
/// [`Fit::tablets`] (for the report's residuals).
pub fn replayed_serving(f: &Fit) -> Vec<SimTime> {
    let run = run_detailed(&f.params, 1, RunOptions::default());
    run.restarts.iter().map(|r| r.serving_at).collect()
}
