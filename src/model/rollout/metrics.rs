//! What one run reports: the metric row, the bursts, and the readable account.

use super::world::{Exposure, RestartRec, RolloutWorld};
use crate::model::MetricDef;
use crate::sim::{SimDuration, SimTime};
use std::fmt::Write;

/// The metrics, in the order [`values`] fills them.
pub fn defs() -> Vec<MetricDef> {
    vec![
        MetricDef::indicator("any_error", "1 if any replica read failed"),
        MetricDef::value("errors", "failed replica reads + failed primary writes"),
        MetricDef::value("replica_read_errors", "failed replica reads (both causes)"),
        MetricDef::value(
            "routed_to_dead_errors",
            "reads routed to a tablet that died before the vtgate noticed",
        ),
        MetricDef::value(
            "no_healthy_errors",
            "reads failed with no healthy REPLICA tablet known",
        ),
        MetricDef::value("primary_write_errors", "failed primary writes"),
        MetricDef::value("bursts", "error intervals merged across vtgates"),
        MetricDef::value("max_burst_duration_s", "longest burst"),
        MetricDef::value(
            "exposure_union_s",
            "time during which at least one vtgate could not serve a replica read",
        ),
        MetricDef::value(
            "exposure_mean_per_vtgate_s",
            "total exposure (summed over shards) per vtgate",
        ),
        MetricDef::value("vtgates_exposed", "vtgates with any exposure"),
        MetricDef::value("frac_vtgates_exposed", "vtgates_exposed / vtgates"),
        MetricDef::value(
            "discovery_lag_mean_s",
            "mean over (vtgate, restart) of first routing to the new process - serving time",
        ),
        MetricDef::value("discovery_lag_max_s", "largest discovery lag"),
        MetricDef::value(
            "goodput",
            "successful / offered replica reads (1 with none offered)",
        ),
        MetricDef::value(
            "rollout_duration_s",
            "operator start to the last tablet Available",
        ),
        MetricDef::value(
            "topo_polls_per_s",
            "full topology polls per second, all vtgates",
        ),
        MetricDef::value("topo_partial_reloads", "one-shard reloads triggered by PRS"),
        MetricDef::value("replica_reads", "offered replica reads"),
        MetricDef::value("events", "events handled"),
        MetricDef::indicator(
            "completed",
            "1 if the rollout and every re-discovery finished before the horizon",
        ),
    ]
}

/// A burst: overlapping (or nearly, `burst_merge_gap`) error intervals of any vtgates.
#[derive(Clone, Copy, Debug)]
pub struct Burst {
    /// First error interval's start.
    pub start: SimTime,
    /// Last error interval's end.
    pub end: SimTime,
    /// Failed reads in it.
    pub errors: u64,
    /// Distinct (vtgate, shard) intervals merged into it.
    pub intervals: u32,
}

/// Merge the exposures that saw at least one error into bursts.
pub fn bursts(exposures: &[Exposure], gap: SimDuration) -> Vec<Burst> {
    let mut e: Vec<&Exposure> = exposures
        .iter()
        .filter(|x| x.dead_errors + x.none_errors > 0)
        .collect();
    e.sort_by_key(|x| (x.start, x.g, x.shard));
    let mut out: Vec<Burst> = Vec::new();
    for x in e {
        let n = x.dead_errors + x.none_errors;
        match out.last_mut() {
            Some(b) if x.start <= b.end + gap => {
                b.end = b.end.max(x.end);
                b.errors += n;
                b.intervals += 1;
            }
            _ => out.push(Burst {
                start: x.start,
                end: x.end,
                errors: n,
                intervals: 1,
            }),
        }
    }
    out
}

/// Length of the union of the exposure intervals.
fn union_len(exposures: &[Exposure]) -> SimDuration {
    let mut iv: Vec<(SimTime, SimTime)> = exposures.iter().map(|x| (x.start, x.end)).collect();
    iv.sort();
    let mut total = SimDuration::ZERO;
    let mut cur: Option<(SimTime, SimTime)> = None;
    for (a, b) in iv {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = cur {
        total += e - s;
    }
    total
}

/// Discovery lags (s) of every discovered (vtgate, restart) pair.
pub fn lags(r: &RestartRec) -> impl Iterator<Item = f64> + '_ {
    r.discovered
        .iter()
        .filter(|d| **d != SimTime::MAX)
        .map(move |d| d.since(r.serving_at).as_secs_f64())
}

/// The metric row (order of [`defs`]).
pub fn values(w: &RolloutWorld, bursts: &[Burst], end: SimTime, events: u64) -> Vec<f64> {
    let m = w.m();
    let read_err = w.reads_dead + w.reads_none;
    let offered = w.reads_ok + read_err;
    let mut per_vtgate = vec![SimDuration::ZERO; m];
    for x in &w.exposures {
        per_vtgate[x.g as usize] += x.end - x.start;
    }
    let exposed = per_vtgate
        .iter()
        .filter(|d| **d > SimDuration::ZERO)
        .count();
    let total_exp: f64 = per_vtgate.iter().map(|d| d.as_secs_f64()).sum();
    let (mut lag_sum, mut lag_n, mut lag_max) = (0.0, 0u64, 0.0f64);
    for r in &w.restarts {
        for l in lags(r) {
            lag_sum += l;
            lag_n += 1;
            lag_max = lag_max.max(l);
        }
    }
    let max_burst = bursts
        .iter()
        .map(|b| (b.end - b.start).as_secs_f64())
        .fold(0.0, f64::max);
    let start = SimTime::ZERO + w.p.operator.start_at;
    let rollout_end = if w.shards_done as usize == w.shard_ops.len() {
        w.rollout_end
    } else {
        end
    };
    vec![
        if read_err > 0 { 1.0 } else { 0.0 },
        (read_err + w.writes_failed) as f64,
        read_err as f64,
        w.reads_dead as f64,
        w.reads_none as f64,
        w.writes_failed as f64,
        bursts.len() as f64,
        max_burst,
        union_len(&w.exposures).as_secs_f64(),
        total_exp / m as f64,
        exposed as f64,
        exposed as f64 / m as f64,
        if lag_n > 0 {
            lag_sum / lag_n as f64
        } else {
            0.0
        },
        lag_max,
        if offered > 0 {
            w.reads_ok as f64 / offered as f64
        } else {
            1.0
        },
        rollout_end.since(start).as_secs_f64(),
        {
            // Over [0, rollout end]: that window does not depend on the vtgate phases, so the
            // expected rate is exactly vtgates / refresh interval (no end-of-run bias).
            let n = w.poll_log.iter().filter(|(_, t)| *t <= rollout_end).count();
            if rollout_end > SimTime::ZERO {
                n as f64 / rollout_end.as_secs_f64()
            } else {
                0.0
            }
        },
        w.partial_reloads as f64,
        offered as f64,
        events as f64,
        if w.complete() { 1.0 } else { 0.0 },
    ]
}

fn t(x: SimTime) -> String {
    if x == SimTime::MAX {
        "-".into()
    } else {
        format!("{:.3}", x.as_secs_f64())
    }
}

/// The readable account of a run (what `vtsim replay` prints).
pub fn report(w: &RolloutWorld, bursts: &[Burst], metrics: &[f64], digest: &str) -> String {
    let mut o = String::new();
    let p = &w.p;
    let _ = writeln!(
        o,
        "rollout: {} vtgates, {} shard(s) × (1 primary + {} replicas); refresh {}, available timeout {}",
        p.vtgates,
        p.shards,
        p.replicas_per_shard,
        p.vtgate.tablet_refresh_interval,
        p.operator.tablet_available_timeout
    );
    let _ = writeln!(o, "\nvtgate poll phases (s):");
    for (g, v) in w.vtgates.iter().enumerate() {
        let _ = writeln!(o, "  vtgate-{:02}  {}", g + 1, t(v.phase));
    }
    let _ = writeln!(
        o,
        "\nrestart steps (s):  shard tablet role        drain    down  publish  serving    ready  available flaps"
    );
    for (i, r) in w.restarts.iter().enumerate() {
        let _ = writeln!(
            o,
            "  #{:<2} {:>5} {:>6} {:<11} {:>7} {:>7} {:>8} {:>8} {:>8} {:>10} {:>5}",
            i + 1,
            r.shard,
            r.tablet,
            if r.old_primary {
                "old primary"
            } else {
                "replica"
            },
            t(r.drain_at),
            t(r.down_at),
            t(r.publish_at),
            t(r.serving_at),
            t(r.ready_at),
            t(r.available_at),
            r.flaps
        );
    }
    let _ = writeln!(
        o,
        "\ndiscovery lag (s) = first routing to the new process - its serving time:"
    );
    let _ = write!(o, "  vtgate   ");
    for i in 0..w.restarts.len() {
        let _ = write!(o, "{:>9}", format!("#{}", i + 1));
    }
    let _ = writeln!(o);
    for g in 0..w.m() {
        let _ = write!(o, "  vtgate-{:02}", g + 1);
        for r in &w.restarts {
            let d = r.discovered[g];
            if d == SimTime::MAX {
                let _ = write!(o, "{:>9}", "-");
            } else {
                let _ = write!(o, "{:>9.3}", d.since(r.serving_at).as_secs_f64());
            }
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "\nexposures (no replica read possible):");
    let mut ex = w.exposures.clone();
    ex.sort_by_key(|x| (x.start, x.g, x.shard));
    for x in &ex {
        let _ = writeln!(
            o,
            "  vtgate-{:02} shard {}  {} .. {}  ({:.3} s)  errors {} (routed to dead {}, no healthy {})",
            x.g + 1,
            x.shard,
            t(x.start),
            t(x.end),
            (x.end - x.start).as_secs_f64(),
            x.dead_errors + x.none_errors,
            x.dead_errors,
            x.none_errors
        );
    }
    let _ = writeln!(o, "\nbursts:");
    for (i, b) in bursts.iter().enumerate() {
        let _ = writeln!(
            o,
            "  burst {}: {} .. {}  duration {:.3} s  errors {}  ({} vtgate intervals)",
            i + 1,
            t(b.start),
            t(b.end),
            (b.end - b.start).as_secs_f64(),
            b.errors,
            b.intervals
        );
    }
    let _ = writeln!(o, "\ntotals:");
    for (d, v) in defs().iter().zip(metrics) {
        let _ = writeln!(o, "  {:<28} {}", d.name, v);
    }
    let _ = writeln!(o, "  {:<28} {}", "digest", digest);
    o
}
