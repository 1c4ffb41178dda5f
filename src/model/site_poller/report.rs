//! What one run reports: the metric row, the readable timeline, and the CSV files.

use super::failover::Failover;
use super::faults::FaultRec;
use super::history::History;
use super::params::SitePollerParams;
use super::tracker::ProbeResult;
use crate::model::MetricSet;
use crate::sim::{SimDuration, SimTime};
use std::fmt::Write;

crate::metric_set! {
    /// What one site-poller run reports, in this order. Delays of undetected faults are censored
    /// (fault start to its end or the horizon) and counted in `undetected_faults`.
    pub struct SitePollerMetrics {
        /// First detectable fault: truth change -> the state that shows it (0: no such fault).
        detect_first_s: Value = "first detectable fault: truth change -> the state that shows it (0: no such fault)",
        /// Second detectable fault's detection delay (0: no such fault).
        detect_second_s: Value = "second detectable fault's detection delay (0: no such fault)",
        /// Largest detection delay over the faults.
        detect_max_s: Value = "largest detection delay over the faults",
        /// Detectable faults not detected before they ended or the horizon.
        undetected_faults: Value = "detectable faults not detected before they ended or the horizon",
        /// 1 when every started detectable fault was detected.
        all_detected: Indicator = "1 when every started detectable fault was detected",
        /// State transitions, all sites.
        transitions: Value = "state transitions, all sites",
        /// Transitions to Unreachable caused by transient errors on answering sites.
        false_unreachable: Value = "transitions to Unreachable caused by transient errors on answering sites",
        /// 1 when the run had at least one false Unreachable.
        any_false_unreachable: Indicator = "1 when the run had at least one false Unreachable",
        /// False Unreachable transitions per hour of simulated time.
        false_unreachable_per_h: Value = "false Unreachable transitions per hour of simulated time",
        /// First fault that ends: end -> the state of the restored truth (e.g. back to Writable).
        recovery_s: Value = "first fault that ends: end -> the state of the restored truth (e.g. back to Writable)",
        /// Probes sent per second, all sites.
        probes_per_s: Value = "probes sent per second, all sites",
        /// Polls started.
        polls: Value = "Polls started",
        /// Mean Poll start-to-start period.
        mean_period_s: Value = "mean Poll start-to-start period",
        /// Longest Poll start-to-start period.
        max_period_s: Value = "longest Poll start-to-start period",
        /// First fault's start -> a promotion recorded (activeSite flips); censored at the horizon; 0 with failover off.
        new_primary_s: Value = "first fault's start -> a promotion recorded (activeSite flips); censored at the horizon; 0 with failover off",
        /// 1 when a promotion was recorded after the first fault.
        promoted: Indicator = "1 when a promotion was recorded after the first fault",
        /// Promotions the cooldown blocked.
        failovers_blocked: Value = "promotions the cooldown blocked",
        /// Events handled.
        handled_events: Value = "events handled",
        /// Detectable faults whose site was already believed in the expected state when they started (e.g. a false Unreachable); their detection waits for the next Poll.
        already_believed: Value = "detectable faults whose site was already believed in the expected state when they started (e.g. a false Unreachable); their detection waits for the next Poll",
    }
}

/// What the report reads: the parameters and the books the world kept (the loop's history,
/// the faults, the failover layer), never the world itself.
pub struct Books<'a> {
    /// The parameters (the sites' names, in declared order, are the world's).
    pub p: &'a SitePollerParams,
    /// The poll loop's transitions, Polls and counters.
    pub history: &'a History,
    /// The faults and their detection.
    pub faults: &'a [FaultRec],
    /// Promotion attempts and the cooldown's blocks.
    pub failover: &'a Failover,
}

fn censored_delay(f: &FaultRec, end: SimTime) -> f64 {
    if f.detected != SimTime::MAX {
        f.detected.since(f.start).as_secs_f64()
    } else {
        f.end.min(end).since(f.start).as_secs_f64()
    }
}

/// The metric row.
pub fn values(b: &Books<'_>, end: SimTime, events: u64) -> SitePollerMetrics {
    let detectable: Vec<&FaultRec> = b
        .faults
        .iter()
        .filter(|f| f.expect.is_some() && f.start <= end)
        .collect();
    let delays: Vec<f64> = detectable.iter().map(|f| censored_delay(f, end)).collect();
    let undetected = detectable
        .iter()
        .filter(|f| f.detected == SimTime::MAX)
        .count();
    let false_u = b
        .history
        .transitions
        .iter()
        .filter(|t| t.false_unreachable)
        .count();
    let span = end.since(b.history.first_start).as_secs_f64();
    let recovery = b
        .faults
        .iter()
        .find(|f| f.end <= end)
        .map(|f| {
            if f.recovered != SimTime::MAX {
                f.recovered.since(f.end).as_secs_f64()
            } else {
                end.since(f.end).as_secs_f64()
            }
        })
        .unwrap_or(0.0);
    let first_fault = b.faults.iter().find(|f| f.start <= end);
    let (new_primary, promoted) = match first_fault {
        _ if !b.p.failover.enabled => (0.0, false),
        None => (0.0, false),
        Some(f) => match b
            .failover
            .recs
            .iter()
            .find(|r| r.recorded != SimTime::MAX && r.started >= f.start && r.recorded <= end)
        {
            Some(r) => (r.recorded.since(f.start).as_secs_f64(), true),
            None => (end.since(f.start).as_secs_f64(), false),
        },
    };
    let mean_period = if b.history.poll_count > 1 {
        b.history
            .last_start
            .since(b.history.first_start)
            .as_secs_f64()
            / (b.history.poll_count - 1) as f64
    } else {
        0.0
    };
    SitePollerMetrics {
        detect_first_s: delays.first().copied().unwrap_or(0.0),
        detect_second_s: delays.get(1).copied().unwrap_or(0.0),
        detect_max_s: delays.iter().copied().fold(0.0, f64::max),
        undetected_faults: undetected as f64,
        all_detected: (undetected == 0) as u8 as f64,
        transitions: b.history.transitions.len() as f64,
        false_unreachable: false_u as f64,
        any_false_unreachable: (false_u > 0) as u8 as f64,
        false_unreachable_per_h: if span > 0.0 {
            false_u as f64 * 3600.0 / span
        } else {
            0.0
        },
        recovery_s: recovery,
        probes_per_s: if span > 0.0 {
            b.history.probe_count as f64 / span
        } else {
            0.0
        },
        polls: b.history.poll_count as f64,
        mean_period_s: mean_period,
        max_period_s: b.history.max_period.as_secs_f64(),
        new_primary_s: new_primary,
        promoted: promoted as u8 as f64,
        failovers_blocked: b.failover.blocked as f64,
        handled_events: events as f64,
        already_believed: detectable.iter().filter(|f| f.already_believed).count() as f64,
    }
}

fn res(r: ProbeResult) -> &'static str {
    match r {
        ProbeResult::Error => "ERR",
        ProbeResult::ReadOnly => "ro=1",
        ProbeResult::Writable => "ro=0",
    }
}

fn ms(d: SimDuration) -> String {
    format!("{:.1}ms", d.as_secs_f64() * 1e3)
}

/// Polls printed in full in the timeline; later ones only when something happens.
const FULL_POLLS: u64 = 200;

/// The readable account `vtsim replay` prints: every Poll (the first 200 in full, later ones
/// when a transition or fault is near), probe results, transitions, faults and promotions.
pub fn timeline(b: &Books<'_>, metrics: &[f64], digest: &str, end: SimTime) -> String {
    let p = b.p;
    let name = |i: u16| p.sites[i as usize].name.as_str();
    let mut lines: Vec<(SimTime, u8, String)> = Vec::new();
    for f in b.faults {
        if f.start <= end {
            lines.push((
                f.start,
                0,
                format!(
                    "FAULT  {} {:?} starts (nominal {:.3} s)",
                    name(f.site),
                    f.kind,
                    f.nominal.as_secs_f64()
                ),
            ));
        }
        if f.end <= end {
            lines.push((
                f.end,
                0,
                format!("FAULT  {} {:?} ends", name(f.site), f.kind),
            ));
        }
    }
    let busy: Vec<u64> = b.history.transitions.iter().map(|t| t.poll).collect();
    for pr in &b.history.polls {
        let near = busy.iter().any(|&q| q + 1 >= pr.seq && q <= pr.seq + 1);
        if pr.seq > FULL_POLLS && !near {
            continue;
        }
        let mut s = format!("poll #{:<4} ", pr.seq);
        for (i, (r, lat)) in pr.results.iter().enumerate() {
            let _ = write!(
                s,
                "{} {} {} -> {} | ",
                b.p.sites[i].name,
                res(*r),
                ms(*lat),
                pr.states[i].as_str()
            );
        }
        let _ = write!(
            s,
            "probes {:.3} s, end {:.3} s, next in {}",
            pr.probes_done.as_secs_f64(),
            pr.end.as_secs_f64(),
            pr.next_interval
        );
        lines.push((pr.start, 1, s));
    }
    for t in &b.history.transitions {
        lines.push((
            t.at,
            2,
            format!(
                "STATE  {}: {} -> {} (poll #{}, fail {}, recovery {}){}",
                name(t.site),
                t.from.as_str(),
                t.to.as_str(),
                t.poll,
                t.fail_count,
                t.recovery_count,
                if t.false_unreachable {
                    "  FALSE (transient errors)"
                } else {
                    ""
                }
            ),
        ));
    }
    for r in &b.failover.recs {
        let msg = if r.recorded == SimTime::MAX {
            format!("FAILOVER promoting {} failed", name(r.candidate))
        } else {
            format!(
                "FAILOVER promoting {}: recorded at {:.3} s (cooldown starts)",
                name(r.candidate),
                r.recorded.as_secs_f64()
            )
        };
        lines.push((r.started, 3, msg));
    }
    lines.sort_by_key(|l| (l.0, l.1));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "site poller: {} sites, interval {}, failure {}, recovery {}, driver {:?}, horizon {}",
        b.p.sites.len(),
        p.poller.poll_interval,
        p.poller.failure_threshold,
        p.poller.recovery_threshold,
        p.poller.driver,
        p.horizon
    );
    for (t, _, l) in &lines {
        let _ = writeln!(out, "{:>10.3} s  {l}", t.as_secs_f64());
    }
    let _ = writeln!(out, "\nfaults:");
    for (i, f) in b.faults.iter().enumerate() {
        if f.start > end {
            let _ = writeln!(out, "  #{i} {} {:?}: not started", name(f.site), f.kind);
            continue;
        }
        let det = if f.detected != SimTime::MAX {
            format!(
                "detected after {:.3} s",
                f.detected.since(f.start).as_secs_f64()
            )
        } else if f.expect.is_some() {
            "NOT detected".into()
        } else {
            "nothing to detect".into()
        };
        let _ = writeln!(
            out,
            "  #{i} {} {:?} at {:.3} s: {det}",
            name(f.site),
            f.kind,
            f.start.as_secs_f64()
        );
    }
    let _ = writeln!(out, "\nmetrics:");
    for (d, v) in SitePollerMetrics::DEFS.iter().zip(metrics) {
        let _ = writeln!(out, "  {:<24} {v:.6}", d.name);
    }
    let _ = writeln!(out, "digest {digest}");
    out
}

/// `transitions.csv`: one row per state transition.
pub fn transitions_csv(b: &Books<'_>) -> String {
    let mut s =
        String::from("time_s,poll,site,from,to,fail_count,recovery_count,false_unreachable\n");
    for t in &b.history.transitions {
        let _ = writeln!(
            s,
            "{:.9},{},{},{},{},{},{},{}",
            t.at.as_secs_f64(),
            t.poll,
            b.p.sites[t.site as usize].name,
            t.from.as_str(),
            t.to.as_str(),
            t.fail_count,
            t.recovery_count,
            t.false_unreachable as u8
        );
    }
    s
}

/// `polls.csv`: one row per Poll, with each site's probe result, latency and state.
pub fn polls_csv(b: &Books<'_>) -> String {
    let mut s = String::from("poll,start_s,probes_done_s,end_s,next_interval_s");
    for site in &b.p.sites {
        let n = &site.name;
        let _ = write!(s, ",{n}_result,{n}_latency_ms,{n}_state");
    }
    s.push('\n');
    for p in &b.history.polls {
        let _ = write!(
            s,
            "{},{:.9},{:.9},{:.9},{:.3}",
            p.seq,
            p.start.as_secs_f64(),
            p.probes_done.as_secs_f64(),
            p.end.as_secs_f64(),
            p.next_interval.as_secs_f64()
        );
        for (i, (r, lat)) in p.results.iter().enumerate() {
            let _ = write!(
                s,
                ",{},{:.3},{}",
                res(*r),
                lat.as_secs_f64() * 1e3,
                p.states[i].as_str()
            );
        }
        s.push('\n');
    }
    s
}
