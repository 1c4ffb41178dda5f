//! The timelines: each restarted tablet's SIGTERM, old pod gone, new address
//! published and serving again, bounded by the vtgates' logs, the poll grid, the operator's
//! next release and the pod's Ready (the method's step 3, in [`super`]).

use super::cells::{reload_cell, watches, Cells};
use super::drains::{Drain, Drains};
use super::phase::Grid;
use super::{fmt_t, Inferred, TabletFit};
use crate::fit::names::NS;
use crate::fit::parse::{Alias, Said, VtgateLog};
use std::collections::BTreeMap;

/// The first reconnect retry after a failed first health check (ns); it doubles per retry.
const RETRY: i64 = 2_000_000;
/// The reconnect backoff's cap (ns).
const RETRY_CAP: i64 = 60 * NS;

/// What every timeline reads, from the earlier stages.
pub(super) struct TimelineInputs<'a> {
    /// The vtgate logs, in model order (the evidence: `Adding`, serving changes, stream
    /// errors, `Removing`).
    pub logs: &'a [VtgateLog],
    /// Each tablet's shard (the roster).
    pub shard_of: &'a BTreeMap<Alias, String>,
    /// The cells (`None`: one implicit cell, every vtgate watching it).
    pub cells: Option<&'a Cells>,
    /// Per vtgate: its shard reloads (ns, Unix).
    pub reloads: &'a [Vec<i64>],
    /// The poll grid.
    pub grid: &'a Grid,
    /// The restarts in drain order, `health_stream_delay`, the resolution and time zero.
    pub drains: &'a Drains,
    /// Each pod's Ready since (ns, Unix; whole seconds).
    pub ready: &'a BTreeMap<u64, i64>,
    /// `first_health_delay` (ns).
    pub fhd: i64,
    /// The operator's Available gate (ns).
    pub available_gate: i64,
}

/// The timeline of every restart, in drain order.
pub(super) fn timelines(inp: &TimelineInputs, warnings: &mut Vec<String>) -> Vec<TabletFit> {
    let mut restarts = vec![];
    for r in &inp.drains.list {
        restarts.push(timeline(inp, r, warnings));
    }
    restarts
}

/// Each vtgate's first sighting of a restarted tablet's new process.
struct Sightings {
    /// Per vtgate: its first `Adding` of the tablet on a new host at or after the SIGTERM
    /// (ns, Unix), and that host.
    seen: Vec<Option<(i64, String)>>,
    /// Per vtgate: the first serving `=> true` from that host after it (ns, Unix).
    disc: Vec<Option<i64>>,
}

/// Where each vtgate first saw `r`'s new address (at or after `drain`), and its first response.
fn sightings(logs: &[VtgateLog], r: &Drain, drain: i64) -> Sightings {
    let m = logs.len();
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
    Sightings { seen, disc }
}

/// One restart's timeline. Without any vtgate seeing its new address, publish and serving
/// are censored defaults (a warning).
fn timeline(inp: &TimelineInputs, r: &Drain, warnings: &mut Vec<String>) -> TabletFit {
    let t0 = inp.drains.t0;
    let m = inp.logs.len();
    let (drain, drain_res) = inp.drains.drain_of(r);
    let shard = inp.shard_of.get(&r.alias).cloned().unwrap_or_default();
    let s = sightings(inp.logs, r, drain);
    let b = s.seen.iter().flatten().map(|s| s.0).min();
    let Some(b) = b else {
        warnings.push(format!(
            "tablet {}: restarted at {} but no vtgate saw its new address: its publish and \
             serving instants are censored (defaults)",
            r.alias,
            fmt_t(drain - t0)
        ));
        let publish = drain + 20 * NS;
        return TabletFit {
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
            ready: inp.ready.get(&r.alias.uid).map(|t| t - t0),
            discovered: vec![None; m],
        };
    };
    let a = publish_floor(inp, r, drain, b, &s);
    let op_hi = operator_ceiling(inp, r, drain);
    let b_eff = b.min(op_hi).max(a);
    let publish = a + (b_eff - a) / 2;
    let (serve, serve_res, serve_cens) = serving(inp, r, &s, publish, op_hi, warnings);
    let (down, down_res, down_cens) = pod_gone(inp, r, drain, publish);
    TabletFit {
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
        ready: inp.ready.get(&r.alias.uid).map(|t| t - t0),
        discovered: s.disc.iter().map(|d| d.map(|x| x - t0)).collect(),
    }
}

/// The earliest the new address can have been published (ns, Unix): after the SIGTERM, after
/// the last poll before `b` (the first sighting) of every vtgate that watches the tablet's
/// cell (a bounded phase), and after its every reload of that cell that did not see it.
fn publish_floor(inp: &TimelineInputs, r: &Drain, drain: i64, b: i64, s: &Sightings) -> i64 {
    let mut a = drain;
    for g in 0..inp.logs.len() {
        // Only a vtgate watching the tablet's cell could have seen the address.
        if !watches(inp.cells, g, &r.alias.cell) {
            continue;
        }
        if inp.grid.phases[g].1 {
            a = a.max(inp.grid.before(g, b));
        }
        if reload_cell(inp.cells, g).is_some_and(|c| c.as_deref() != Some(r.alias.cell.as_str())) {
            continue;
        }
        for &x in &inp.reloads[g] {
            if x < b && s.seen[g].as_ref().is_none_or(|s| s.0 > x) {
                a = a.max(x);
            }
        }
    }
    a
}

/// The latest `r` can have served (ns, Unix; `i64::MAX`: unbounded): the operator released
/// the shard's next tablet no earlier than serving + the Available gate, and the pod's Ready
/// (whole seconds, truncated) comes at or after serving.
fn operator_ceiling(inp: &TimelineInputs, r: &Drain, drain: i64) -> i64 {
    // The operator released the shard's next tablet no earlier than serving + the
    // Available gate (Ready comes at or after serving); the pod's Ready condition
    // (whole seconds, truncated) bounds it too.
    let mut op_hi = i64::MAX;
    let shard_key = inp.shard_of.get(&r.alias);
    let next_release = inp
        .drains
        .list
        .iter()
        .filter(|x| inp.shard_of.get(&x.alias) == shard_key && inp.drains.drain_of(x).0 > drain)
        .map(|x| inp.drains.release_of(x))
        .min();
    if let Some(nr) = next_release {
        op_hi = op_hi.min(nr - inp.available_gate);
    }
    if let Some(rd) = inp.ready.get(&r.alias.uid) {
        op_hi = op_hi.min(rd + NS);
    }
    op_hi
}

/// The serving instant, its half-width and whether it is censored (ns, Unix). Bounded above
/// by `op_hi` and by every first response; below by `publish` and by the retry before every
/// response that came through the reconnect backoff (`first_health_delay` after the record,
/// then [`RETRY`] doubling to [`RETRY_CAP`]): the midpoint. No response: publish + 5 s,
/// censored.
fn serving(
    inp: &TimelineInputs,
    r: &Drain,
    s: &Sightings,
    publish: i64,
    op_hi: i64,
    warnings: &mut Vec<String>,
) -> (i64, i64, bool) {
    let (t0, res) = (inp.drains.t0, inp.drains.res);
    // Serving: bounded by the first responses.
    let (mut lo, mut hi) = (publish, op_hi);
    for g in 0..inp.logs.len() {
        let (Some((p, _)), Some(c)) = (&s.seen[g], s.disc[g]) else {
            continue;
        };
        let base = p + inp.fhd;
        if (c - base).abs() <= 2 * res {
            hi = hi.min(c);
            continue;
        }
        let (mut at, mut d, mut prev) = (base, RETRY, base);
        let mut found = false;
        while at <= c + 2 * res {
            if (at - c).abs() <= 2 * res && at != base {
                lo = lo.max(prev);
                found = true;
                break;
            }
            prev = at;
            at += d;
            d = (d * 2).min(RETRY_CAP);
        }
        if !found {
            warnings.push(format!(
                "vtgate {}: its first response from {} at {} is not on the reconnect \
                 schedule from its poll at {}",
                inp.logs[g].name,
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
    if hi == i64::MAX {
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
    }
}

/// The old pod gone, its half-width and whether it is censored (ns, Unix): the first broken
/// health stream on the old host before `publish`, else the midpoint between the last
/// `Removing` of the old host (at least the SIGTERM + `health_stream_delay`) and `publish`.
fn pod_gone(inp: &TimelineInputs, r: &Drain, drain: i64, publish: i64) -> (i64, i64, bool) {
    // Old pod gone: the first broken stream on the old host, else bounded by the removals.
    let mut broke = i64::MAX;
    let mut removed = drain;
    for l in inp.logs {
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
    if broke < publish {
        (broke, inp.drains.res, false)
    } else {
        let lo = removed.max(drain + inp.drains.hsd);
        (lo + (publish - lo) / 2, (publish - lo) / 2, false)
    }
}
