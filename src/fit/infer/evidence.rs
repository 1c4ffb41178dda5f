//! The evidence: the parsed inputs sorted by kind (vtgate logs, short-form lines,
//! events, pods), each described in one line, and the vtgate logs put on one clock.

use crate::fit::names::{self, NS};
use crate::fit::parse::{Event, Input, Pod, ShortLine, VtgateLog};
use std::path::PathBuf;

/// The inputs by kind, as [`gather`] found them.
pub(super) struct Evidence {
    /// The vtgate logs, in input order.
    pub logs: Vec<VtgateLog>,
    /// The short-form files and their lines.
    pub shorts: Vec<(PathBuf, Vec<ShortLine>)>,
    /// Every event of every events JSON.
    pub events: Vec<Event>,
    /// Every pod of every pods JSON.
    pub pods: Vec<Pod>,
    /// One line per input (the model file's header).
    pub described: Vec<String>,
}

/// Sort `inputs` by kind. Reads: each input's kind and, for a vtgate log, its skipped and
/// out-of-order line counts (each a warning).
pub(super) fn gather(inputs: &[Input], warnings: &mut Vec<String>) -> Evidence {
    let mut logs: Vec<VtgateLog> = vec![];
    let mut shorts: Vec<(PathBuf, Vec<ShortLine>)> = vec![];
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
    Evidence {
        logs,
        shorts,
        events,
        pods,
        described,
    }
}

/// Put the vtgate logs on one clock and in name order; returns the coarsest line resolution
/// (ns). Reads: each log's format and glog year flag, and the first event instant or pod
/// creation (the year glog lines lack; else 2026, a warning).
pub(super) fn align_logs(
    logs: &mut [VtgateLog],
    events: &[Event],
    pods: &[Pod],
    warnings: &mut Vec<String>,
) -> i64 {
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
            Some(t) => names::civil(t).0,
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
                let (_, mo, d, ..) = names::civil(x.t);
                let sod = x.t.rem_euclid(86_400 * NS);
                x.t = names::days_from_civil(year, mo, d) * 86_400 * NS + sod;
            }
        }
    }
    logs.sort_by(|a, b| a.name.cmp(&b.name));
    logs.iter().map(|l| l.resolution).max().unwrap_or(1)
}
