//! What one run reports: the metric row, the bursts, and the readable account.

use super::operator::Operator;
use super::params::RolloutParams;
use super::tablet::RestartRec;
use super::vtgate::Gates;
use super::workload::{Exposure, Workload};
use crate::model::MetricSet;
use crate::sim::{SimDuration, SimTime};
use std::fmt::Write;

crate::metric_set! {
    /// What one rollout run reports, in this order.
    pub struct RolloutMetrics {
        /// 1 if any replica read failed.
        any_error: Indicator = "1 if any replica read failed",
        /// Failed replica reads + failed primary writes.
        errors: Value = "failed replica reads + failed primary writes",
        /// Failed replica reads (both causes).
        replica_read_errors: Value = "failed replica reads (both causes)",
        /// Reads routed to a tablet that died before the vtgate noticed.
        routed_to_dead_errors: Value = "reads routed to a tablet that died before the vtgate noticed",
        /// Reads failed with no healthy REPLICA tablet known.
        no_healthy_errors: Value = "reads failed with no healthy REPLICA tablet known",
        /// Failed primary writes.
        primary_write_errors: Value = "failed primary writes",
        /// Error intervals merged across vtgates.
        bursts: Value = "error intervals merged across vtgates",
        /// Longest burst.
        max_burst_duration_s: Value = "longest burst",
        /// Time during which at least one vtgate could not serve a replica read.
        exposure_union_s: Value = "time during which at least one vtgate could not serve a replica read",
        /// Total exposure (summed over shards) per vtgate.
        exposure_mean_per_vtgate_s: Value = "total exposure (summed over shards) per vtgate",
        /// vtgates with any exposure.
        vtgates_exposed: Value = "vtgates with any exposure",
        /// `vtgates_exposed` / vtgates.
        frac_vtgates_exposed: Value = "vtgates_exposed / vtgates",
        /// Mean over (vtgate, restart) of first routing to the new process - serving time.
        discovery_lag_mean_s: Value = "mean over (vtgate, restart) of first routing to the new process - serving time",
        /// Largest discovery lag.
        discovery_lag_max_s: Value = "largest discovery lag",
        /// Successful / offered replica reads (1 with none offered).
        goodput: Value = "successful / offered replica reads (1 with none offered)",
        /// Operator start to the last tablet Available.
        rollout_duration_s: Value = "operator start to the last tablet Available",
        /// Full topology polls per second, all vtgates.
        topo_polls_per_s: Value = "full topology polls per second, all vtgates",
        /// One-shard reloads triggered by PRS.
        topo_partial_reloads: Value = "one-shard reloads triggered by PRS",
        /// Offered replica reads.
        replica_reads: Value = "offered replica reads",
        /// Events handled.
        handled_events: Value = "events handled",
        /// 1 if the rollout and every re-discovery finished before the horizon.
        completed: Indicator = "1 if the rollout and every re-discovery finished before the horizon",
    }
}

/// What the metrics and the account of a run read: the world's parts, lent by
/// `RolloutWorld::outcome` when the run has ended (and finished: the bursts merged).
pub struct Outcome<'a> {
    /// The parameters.
    pub(crate) p: &'a RolloutParams,
    /// The vtgates (their phases, polls and reloads).
    pub(crate) gates: &'a Gates,
    /// The operator (when the rollout ended, if it did).
    pub(crate) operator: &'a Operator,
    /// Every restart.
    pub(crate) restarts: &'a [RestartRec],
    /// The query counters and the exposures.
    pub(crate) workload: &'a Workload,
    /// The error bursts.
    pub(crate) bursts: &'a [Burst],
    /// The rollout and every re-discovery completed.
    pub(crate) complete: bool,
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

/// The metrics of a run that ended at `end` (the bursts are the world's, merged when it
/// finished).
pub fn values(o: &Outcome<'_>, end: SimTime, events: u64) -> RolloutMetrics {
    let bursts = o.bursts;
    let w = o.workload;
    let m = o.gates.vtgates.len();
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
    for r in o.restarts {
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
    let start = SimTime::ZERO + o.p.operator.start_at;
    let rollout_end = if o.operator.done() {
        o.operator.rollout_end
    } else {
        end
    };
    RolloutMetrics {
        any_error: if read_err > 0 { 1.0 } else { 0.0 },
        errors: (read_err + w.writes_failed) as f64,
        replica_read_errors: read_err as f64,
        routed_to_dead_errors: w.reads_dead as f64,
        no_healthy_errors: w.reads_none as f64,
        primary_write_errors: w.writes_failed as f64,
        bursts: bursts.len() as f64,
        max_burst_duration_s: max_burst,
        exposure_union_s: union_len(&w.exposures).as_secs_f64(),
        exposure_mean_per_vtgate_s: total_exp / m as f64,
        vtgates_exposed: exposed as f64,
        frac_vtgates_exposed: exposed as f64 / m as f64,
        discovery_lag_mean_s: if lag_n > 0 {
        lag_sum / lag_n as f64
    } else {
        0.0
    },
        discovery_lag_max_s: lag_max,
        goodput: if offered > 0 {
        w.reads_ok as f64 / offered as f64
    } else {
        1.0
    },
        rollout_duration_s: rollout_end.since(start).as_secs_f64(),
        topo_polls_per_s: {
        // Over [0, rollout end]: that window does not depend on the vtgate phases, so the
        // expected rate is exactly vtgates / refresh interval (no end-of-run bias).
        let n = o.gates.poll_log.iter().filter(|(_, t)| *t <= rollout_end).count();
        if rollout_end > SimTime::ZERO {
            n as f64 / rollout_end.as_secs_f64()
        } else {
            0.0
        }
    },
        topo_partial_reloads: o.gates.partial_reloads as f64,
        replica_reads: offered as f64,
        handled_events: events as f64,
        completed: if o.complete { 1.0 } else { 0.0 },
    }
}

fn t(x: SimTime) -> String {
    if x == SimTime::MAX {
        "-".into()
    } else {
        format!("{:.3}", x.as_secs_f64())
    }
}

/// The readable account of a run (what `vtsim replay` prints).
pub fn report(w: &Outcome<'_>, metrics: &[f64], digest: &str) -> String {
    let bursts = w.bursts;
    let mut o = String::new();
    let p = w.p;
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
    for (g, v) in w.gates.vtgates.iter().enumerate() {
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
    for g in 0..w.gates.vtgates.len() {
        let _ = write!(o, "  vtgate-{:02}", g + 1);
        for r in w.restarts {
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
    let mut ex = w.workload.exposures.clone();
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
    for (d, v) in RolloutMetrics::DEFS.iter().zip(metrics) {
        let _ = writeln!(o, "  {:<28} {}", d.name, v);
    }
    let _ = writeln!(o, "  {:<28} {}", "digest", digest);
    o
}
