//! What one fleet run reports: the metric row, the per-drain goodput dips, the timeline and
//! its chart, and the readable account.

use super::counts::{Second, Totals};
use super::slot::Slot;
use crate::model::rollout::{RestartRec, RolloutWorld};
use crate::model::MetricSet;
use crate::sim::SimTime;
use std::fmt::Write;

crate::metric_set! {
    /// What one fleet run reports, in this order.
    pub struct FleetMetrics {
        /// 1 if any replica read failed (any cause).
        any_failed_read: Indicator = "1 if any replica read failed (any cause)",
        /// 1 if any read failed with no healthy REPLICA known to its vtgate.
        any_no_healthy: Indicator = "1 if any read failed with no healthy REPLICA known to its vtgate",
        /// 1 if any read timed out in a vttablet pool.
        any_pool_timeout: Indicator = "1 if any read timed out in a vttablet pool",
        /// 1 if any read was routed only to tablets that had stopped serving.
        any_routed_to_dead: Indicator = "1 if any read was routed only to tablets that had stopped serving",
        /// 1 if any read was still in a drained tablet's pool when it closed.
        any_pool_closed: Indicator = "1 if any read was still in a drained tablet's pool when it closed",
        /// Failed replica reads: the sum of the four causes.
        failed_reads: Value = "failed replica reads: no_healthy + pool_timeouts + routed_to_dead + pool_closed",
        /// "no healthy tablet available" (UNAVAILABLE, not retried).
        no_healthy_errors: Value = "reads failed with no healthy REPLICA known (UNAVAILABLE)",
        /// "connection pool timed out" (RESOURCE_EXHAUSTED, not retried), or served after the deadline.
        pool_timeouts: Value = "reads whose deadline expired in a vttablet pool (RESOURCE_EXHAUSTED, not retried)",
        /// Every attempt went to a tablet that had stopped serving (CLUSTER_EVENT / UNAVAILABLE).
        routed_to_dead_errors: Value = "reads whose every attempt hit a tablet that had stopped serving",
        /// In a drained tablet's pool at the end of its shutdown grace (INTERNAL "connection pool is closed").
        pool_closed_errors: Value = "reads in a drained tablet's pool when it closed (INTERNAL, not retried)",
        /// Replica reads offered (arrived at a vtgate).
        replica_reads: Value = "replica reads offered",
        /// Reads served before their deadline / reads offered (1 with none offered).
        goodput: Value = "reads served before their deadline / reads offered (1 with none offered)",
        /// Reads served before their deadline per second, over the run.
        goodput_rps: Value = "reads served before their deadline per second, over the run",
        /// Tablets drained (SIGTERM).
        drains: Value = "tablets drained (SIGTERM)",
        /// The worst drain's dip depth (docs/fleet.md "Dips").
        worst_dip_depth_frac: Value = "largest failed fraction of a second's reads, over every drain window",
        /// The worst drain's dip duration.
        worst_dip_duration_s: Value = "longest span from a drain window's first to its last second with a failed read",
        /// Mean dip depth over the drains.
        mean_dip_depth_frac: Value = "mean over drains of the dip depth",
        /// Mean dip duration over the drains.
        mean_dip_duration_s: Value = "mean over drains of the dip duration",
        /// Reads that needed more than one attempt.
        retried_reads: Value = "reads retried on another tablet after a retryable error",
        /// As the rollout model reports it.
        exposure_union_s: Value = "time during which at least one vtgate knew no serving replica of a shard (rollout model)",
        /// As the rollout model reports it.
        exposure_mean_per_vtgate_s: Value = "total exposure per vtgate (rollout model)",
        /// As the rollout model reports it.
        vtgates_exposed: Value = "vtgates with any exposure (rollout model)",
        /// As the rollout model reports it.
        frac_vtgates_exposed: Value = "vtgates_exposed / vtgates (rollout model)",
        /// As the rollout model reports it.
        discovery_lag_mean_s: Value = "mean discovery lag of a restarted tablet (rollout model)",
        /// As the rollout model reports it.
        discovery_lag_max_s: Value = "largest discovery lag (rollout model)",
        /// As the rollout model reports it.
        rollout_duration_s: Value = "operator start to the last tablet Available (rollout model)",
        /// Events handled.
        handled_events: Value = "events handled",
        /// 1 if the rollout and every re-discovery finished before the horizon.
        completed: Indicator = "1 if the rollout and every re-discovery finished before the horizon",
    }
}

/// What the fleet's metrics, account and charts read: the world's parts, lent by
/// `FleetWorld::outcome` when the run has ended (and finished).
pub struct Outcome<'a> {
    /// The rollout world.
    pub(crate) rollout: &'a RolloutWorld,
    /// Counts per second.
    pub(crate) seconds: &'a [Second],
    /// Run totals.
    pub(crate) totals: &'a Totals,
    /// Every pool, in creation order.
    pub(crate) pools: &'a [Slot],
    /// When the rollout and every re-discovery completed (`SimTime::MAX`: not yet).
    pub(crate) complete_at: SimTime,
}

/// The goodput dip after one drain (`docs/fleet.md` "Dips").
#[derive(Clone, Copy, Debug)]
pub struct Dip {
    /// The drained tablet.
    pub tablet: u16,
    /// Its SIGTERM.
    pub drain_at: SimTime,
    /// Largest failed / offered reads of one second of the window.
    pub depth_frac: f64,
    /// From the window's first second with a failed read to the end of its last one (s).
    pub duration_s: f64,
    /// Failed reads in the window.
    pub failed: u64,
}

/// The dip of every drain: drain k's window is the seconds from its SIGTERM's second up to
/// (not including) the next drain's second, the last one to the end of the run.
pub fn dips(restarts: &[RestartRec], secs: &[Second]) -> Vec<Dip> {
    let mut drains: Vec<(SimTime, u16)> =
        restarts.iter().map(|r| (r.drain_at, r.tablet)).collect();
    drains.sort();
    (0..drains.len())
        .map(|k| {
            let (at, tablet) = drains[k];
            let a = (at.0 / 1_000_000_000) as usize;
            let b = match drains.get(k + 1) {
                Some((next, _)) => (next.0 / 1_000_000_000) as usize,
                None => secs.len(),
            }
            .min(secs.len());
            let (mut depth, mut first, mut last, mut failed) = (0.0f64, None, None, 0u64);
            for (i, s) in secs.iter().enumerate().take(b).skip(a) {
                let f = s.failed();
                if f > 0 {
                    failed += f;
                    depth = depth.max(f as f64 / s.offered.max(f) as f64);
                    first.get_or_insert(i);
                    last = Some(i);
                }
            }
            let duration_s = match (first, last) {
                (Some(x), Some(y)) => (y - x + 1) as f64,
                _ => 0.0,
            };
            Dip {
                tablet,
                drain_at: at,
                depth_frac: depth,
                duration_s,
                failed,
            }
        })
        .collect()
}

/// The metrics of a run that ended at `end`.
pub fn values(w: &Outcome<'_>, end: SimTime, events: u64) -> FleetMetrics {
    let r = crate::model::rollout::metrics::values(&w.rollout.outcome(), end, events);
    let t = &w.totals.all;
    let d = dips(&w.rollout.tablets.restarts, w.seconds);
    let n = d.len().max(1) as f64;
    let ind = |x: u64| if x > 0 { 1.0 } else { 0.0 };
    let failed = t.failed();
    FleetMetrics {
        any_failed_read: ind(failed),
        any_no_healthy: ind(t.no_healthy),
        any_pool_timeout: ind(t.pool_timeouts),
        any_routed_to_dead: ind(t.routed_to_dead),
        any_pool_closed: ind(t.pool_closed),
        failed_reads: failed as f64,
        no_healthy_errors: t.no_healthy as f64,
        pool_timeouts: t.pool_timeouts as f64,
        routed_to_dead_errors: t.routed_to_dead as f64,
        pool_closed_errors: t.pool_closed as f64,
        replica_reads: t.offered as f64,
        goodput: if t.offered > 0 {
            (t.good as f64 / t.offered as f64).min(1.0)
        } else {
            1.0
        },
        goodput_rps: if end > SimTime::ZERO {
            t.good as f64 / end.as_secs_f64()
        } else {
            0.0
        },
        drains: w.rollout.tablets.restarts.len() as f64,
        worst_dip_depth_frac: d.iter().map(|x| x.depth_frac).fold(0.0, f64::max),
        worst_dip_duration_s: d.iter().map(|x| x.duration_s).fold(0.0, f64::max),
        mean_dip_depth_frac: d.iter().map(|x| x.depth_frac).sum::<f64>() / n,
        mean_dip_duration_s: d.iter().map(|x| x.duration_s).sum::<f64>() / n,
        retried_reads: w.totals.retries as f64,
        exposure_union_s: r.exposure_union_s,
        exposure_mean_per_vtgate_s: r.exposure_mean_per_vtgate_s,
        vtgates_exposed: r.vtgates_exposed,
        frac_vtgates_exposed: r.frac_vtgates_exposed,
        discovery_lag_mean_s: r.discovery_lag_mean_s,
        discovery_lag_max_s: r.discovery_lag_max_s,
        rollout_duration_s: r.rollout_duration_s,
        handled_events: events as f64,
        completed: r.completed,
    }
}

/// The readable account `vtsim replay` prints.
pub fn report(w: &Outcome<'_>, metrics: &[f64], digest: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "fleet: {} vtgates, {} tablets, {} pools (one per vttablet process), digest {digest}",
        w.rollout.m(),
        w.rollout.tablets.list.len(),
        w.pools.len()
    );
    for (d, v) in FleetMetrics::DEFS.iter().zip(metrics) {
        let _ = writeln!(s, "  {:28} {v:.6}", d.name);
    }
    let _ = writeln!(s, "drains (dip: worst second's failed fraction, first-to-last failing second):");
    for d in dips(&w.rollout.tablets.restarts, w.seconds) {
        let _ = writeln!(
            s,
            "  tablet {:3} SIGTERM at {:9.3} s: {:6} failed, depth {:.4}, duration {:4.0} s",
            d.tablet,
            d.drain_at.as_secs_f64(),
            d.failed,
            d.depth_frac,
            d.duration_s
        );
    }
    let _ = writeln!(s, "pools (tablet: requests, completed before the deadline, timeouts):");
    for (i, p) in w.pools.iter().enumerate() {
        let m = &p.w.m;
        let _ = writeln!(
            s,
            "  pool {i:3} tablet {:3}: {:9} {:9} {:7}{}",
            p.tablet,
            m.requests,
            m.completed,
            m.timeouts,
            if p.dead { " (process gone)" } else { "" }
        );
    }
    s
}

/// `timeline.csv`, the goodput chart (offered and served) and the failures chart (in total
/// and per cause), each with the drains marked (the run's last, partial
/// second is in the CSV, with its true end, and not on the chart).
pub fn artifacts(w: &Outcome<'_>, end: SimTime) -> Vec<crate::model::Artifact> {
    use crate::chart::{palette, ChartData, Curve, CurvePoint, LineStyle, MarkLine};
    let mut csv = String::from(
        "t_start_s,t_end_s,offered,good,no_healthy,routed_to_dead,pool_timeouts,pool_closed\n",
    );
    let (mut good, mut offered, mut failed) = (vec![], vec![], vec![]);
    // Per cause: no healthy, routed to dead, pool timeouts, pool closed.
    let mut causes: [Vec<CurvePoint>; 4] = Default::default();
    for (i, b) in w.seconds.iter().enumerate() {
        let Second {
            offered: o,
            good: g,
            no_healthy,
            routed_to_dead,
            pool_timeouts,
            pool_closed,
        } = *b;
        let x = i as f64 + 1.0;
        let t_end = x.min(end.as_secs_f64());
        let _ = writeln!(
            csv,
            "{i},{t_end},{o},{g},{no_healthy},{routed_to_dead},{pool_timeouts},{pool_closed}"
        );
        if t_end < x {
            break;
        }
        let pt = |y: u64| CurvePoint {
            x,
            y: y as f64,
            band: None,
        };
        good.push(pt(g));
        offered.push(pt(o));
        failed.push(pt(b.failed()));
        for (c, v) in causes
            .iter_mut()
            .zip([no_healthy, routed_to_dead, pool_timeouts, pool_closed])
        {
            c.push(pt(v));
        }
    }
    let curve = |label: String, points| Curve {
        label,
        points,
        series_x: None,
    };
    // Each SIGTERM (and the end of the rollout) as a vertical line of its own colour (past
    // the panel's curves' colours) and legend entry; the end of the rollout dashed.
    let mut drains: Vec<(f64, String)> = w
        .rollout
        .tablets
        .restarts
        .iter()
        .map(|r| {
            let x = r.drain_at.as_secs_f64();
            let what = if r.old_primary { " (old primary)" } else { "" };
            (x, format!("SIGTERM tablet {}{what} at {x:.0} s", r.tablet))
        })
        .collect();
    if w.complete_at != SimTime::MAX {
        let x = w.complete_at.as_secs_f64();
        drains.push((x, format!("rollout and re-discovery complete at {x:.0} s")));
    }
    let verticals = |n_curves: usize| {
        let n_drains = w.rollout.tablets.restarts.len();
        drains
            .iter()
            .enumerate()
            .map(|(k, (x, label))| MarkLine::VStyled {
                x: *x,
                label: label.clone(),
                style: LineStyle {
                    rgb: palette(n_curves + k),
                    dashed: k >= n_drains,
                },
            })
            .collect::<Vec<_>>()
    };
    // Panel 1: offered and served, on a y range of their own (the dips show).
    let top = vec![
        curve("offered".into(), offered),
        curve("served before the deadline".into(), good),
    ];
    let top_marks = verticals(top.len());
    // Panel 2: the failures per cause that occurred (their sum is the failed total; with no
    // failure at all, the total, a flat zero).
    let names = [
        "no healthy tablet",
        "routed to a dead tablet",
        "pool timeout",
        "pool closed",
    ];
    let mut bottom: Vec<Curve> = causes
        .into_iter()
        .zip(names)
        .filter(|(c, _)| c.iter().any(|p| p.y > 0.0))
        .map(|(c, name)| curve(name.into(), c))
        .collect();
    if bottom.is_empty() {
        bottom.push(curve("failed (all causes)".into(), failed));
    }
    let bottom_marks = verticals(bottom.len());
    let chart = |name: &str, title: &str, y_label: &str, curves, marks| crate::model::Artifact::Chart {
        name: name.into(),
        data: ChartData {
            title: title.into(),
            x_label: "time (s)".into(),
            y_label: y_label.into(),
            log_x: false,
            log_y: false,
            curves,
            marks,
        },
    };
    vec![
        crate::model::Artifact::Text {
            name: "timeline.csv".into(),
            text: csv,
        },
        chart(
            "goodput",
            "Replica-read goodput per second through a rolling restart",
            "reads per second (1 s buckets)",
            top,
            top_marks,
        ),
        chart(
            "failures",
            "Failed replica reads per second, by cause",
            "failed reads per second (1 s buckets)",
            bottom,
            bottom_marks,
        ),
    ]
}
