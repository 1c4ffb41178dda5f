//! Evidence hygiene: what real incident folders hold besides the evidence, made right before
//! inference (issue 36). Each step says what it did in a warning, so the fit report lists it.
//!
//! - **Files that are no input** (a README, a binary, a YAML cluster, `kubectl get svc -o
//!   json`) are skipped with a warning naming the file and why; the fit fails only when no
//!   input is left.
//! - **Rotated or split logs** of one vtgate (`vtgate-x.log.1` then `vtgate-x.log`, or
//!   `vtgate-x.1.log`) are one vtgate: their lines are joined in time order under the base
//!   name. Files of different formats are not joined (a Vitess upgrade is a new process).
//! - **A vtgate restarted inside one file** (a second `loading tablets for cells` banner: a
//!   new process, so a new topology-watcher ticker and a new poll phase) is not one process:
//!   the model gives each vtgate one phase, so the process that logged the most discovery
//!   lines is kept and the other is named with the instant of the restart.
//! - **Repeated events.** client-go folds identical events into one (`count`,
//!   `lastTimestamp`; `series` for events.k8s.io), and the API server keeps an event for an
//!   hour, so an events dump can hold an occurrence from an earlier rollout
//!   (kubernetes/client-go `tools/record/events_cache.go` `EventCorrelate`). Each event's
//!   occurrence is taken inside the logs' time span (first or last occurrence); an event
//!   whose known occurrences all fall outside it is dropped with a warning naming it.

use super::names::NS;
use super::parse::{self, Event, Input, Said, VtgateLog};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How far before the logs' first line an event is still the logs' incident: a restart's
/// SIGTERM can precede the first line a vtgate logged about it (a censored restart: the logs
/// were collected from a later start, or rotated), by at most one operator step, which is
/// drain + restart + the Available gate: 5 minutes covers the default model's 3 to 10 s drain,
/// 10 s + Exp(10 s) restart and 30 s gate many times over.
pub const EVENT_LEAD_NS: i64 = 300 * NS;

/// Read every file; a file that is no input of the fit's is skipped with a warning.
/// Errors: the first input that is malformed (a file the fit reads, with a bad line), or no
/// input left.
pub fn read_all(files: &[PathBuf]) -> Result<(Vec<Input>, Vec<String>), String> {
    let mut inputs = vec![];
    let mut skipped = vec![];
    for f in files {
        match parse::read(f) {
            Ok(i) => inputs.push(i),
            Err(e) if e.unrecognised => skipped.push(format!("skipped {e}")),
            Err(e) => return Err(e.to_string()),
        }
    }
    if inputs.is_empty() {
        return Err(format!(
            "no input the fit reads among {} file(s): {}",
            files.len(),
            skipped.join("; ")
        ));
    }
    Ok((inputs, skipped))
}

/// The name one vtgate's rotated files share: `vtgate-x.log.1`, `vtgate-x.1.log` and
/// `vtgate-x.log` are all `vtgate-x` (logrotate's and kubelet's numbered suffixes, and the
/// `.log` the collection loop writes).
pub fn base_name(file_name: &str) -> String {
    let mut parts: Vec<&str> = file_name.split('.').collect();
    while parts.len() > 1 {
        let last = parts[parts.len() - 1];
        if last == "log" || (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())) {
            parts.pop();
        } else {
            break;
        }
    }
    parts.join(".")
}

/// Join rotated logs, keep one process per vtgate, and take each event's occurrence inside
/// the logs' span. Returns the tidied inputs and what was done.
pub fn tidy(inputs: Vec<Input>) -> (Vec<Input>, Vec<String>) {
    let mut warnings = vec![];
    let mut logs: BTreeMap<(String, &'static str), Vec<VtgateLog>> = BTreeMap::new();
    let mut rest = vec![];
    for i in inputs {
        match i {
            Input::Vtgate(l) => {
                let file = l.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                logs.entry((base_name(file), l.format)).or_default().push(l);
            }
            other => rest.push(other),
        }
    }
    let mut joined = vec![];
    for ((name, _), mut parts) in logs {
        let log = if parts.len() == 1 {
            parts.pop().unwrap()
        } else {
            join(name, parts, &mut warnings)
        };
        joined.push(one_process(log, &mut warnings));
    }
    let span = span_of(&joined);
    let mut out: Vec<Input> = joined.into_iter().map(Input::Vtgate).collect();
    for i in rest {
        match i {
            Input::Events(p, evs) => {
                let evs = match span {
                    Some(s) => in_span(&p, evs, s, &mut warnings),
                    None => evs,
                };
                out.push(Input::Events(p, evs));
            }
            other => out.push(other),
        }
    }
    (out, warnings)
}

/// One vtgate's files joined in time order (rotation: `x.log.1` holds the older lines).
fn join(name: String, mut parts: Vec<VtgateLog>, warnings: &mut Vec<String>) -> VtgateLog {
    parts.sort_by_key(|p| p.lines.first().map_or(i64::MAX, |l| l.t));
    let files: Vec<String> = parts.iter().map(|p| p.path.display().to_string()).collect();
    warnings.push(format!(
        "{} files of one vtgate `{name}` joined in time order (a rotated or split log): {}",
        parts.len(),
        files.join(", ")
    ));
    let mut log = parts.remove(0);
    for p in parts {
        log.resolution = log.resolution.max(p.resolution);
        log.glog_year |= p.glog_year;
        if log.skipped.1 == 0 {
            log.skipped.0 = p.skipped.0;
        }
        log.skipped.1 += p.skipped.1;
        log.out_of_order.1 += p.out_of_order.1;
        log.lines.extend(p.lines);
    }
    // Overlapping files (a copy of the same lines in both) keep one copy of each line.
    log.lines.sort_by_key(|l| l.t);
    log.lines.dedup_by(|a, b| a.t == b.t && a.said == b.said);
    log.name = name;
    log
}

/// A log with more than one start-up banner holds several processes: keep the one that
/// logged the most discovery lines, and say so.
fn one_process(mut log: VtgateLog, warnings: &mut Vec<String>) -> VtgateLog {
    let starts: Vec<usize> = log
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| matches!(l.said, Said::Start(_)))
        .map(|(i, _)| i)
        .collect();
    if starts.len() < 2 {
        return log;
    }
    // Process k holds lines [starts[k], starts[k + 1]); lines before the first banner belong
    // to the first process.
    let mut bounds: Vec<(usize, usize)> = vec![];
    for (k, &s) in starts.iter().enumerate() {
        let from = if k == 0 { 0 } else { s };
        let to = starts.get(k + 1).copied().unwrap_or(log.lines.len());
        bounds.push((from, to));
    }
    let discovery = |(a, b): (usize, usize)| {
        log.lines[a..b]
            .iter()
            .filter(|l| {
                matches!(
                    l.said,
                    Said::Adding(_) | Said::Removing(_) | Said::Serving { .. }
                )
            })
            .count()
    };
    let keep = (0..bounds.len())
        .max_by_key(|&k| (discovery(bounds[k]), k))
        .unwrap();
    let restarts: Vec<String> = starts[1..]
        .iter()
        .map(|&i| {
            format!(
                "{} (line {})",
                super::names::rfc3339_nano(log.lines[i].t),
                log.lines[i].line
            )
        })
        .collect();
    let (a, b) = bounds[keep];
    warnings.push(format!(
        "{}: the vtgate restarted inside the log at {} (a new `loading tablets` banner: a new \
         process with its own poll phase); the model has one phase per vtgate, so only process \
         {} of {} (lines {}..{}, {} discovery lines) is fitted",
        log.path.display(),
        restarts.join(", "),
        keep + 1,
        bounds.len(),
        log.lines[a].line,
        log.lines[b - 1].line,
        discovery((a, b))
    ));
    log.lines = log.lines[a..b].to_vec();
    log
}

/// The logs' time span (first and last line), on the logs' own clock.
fn span_of(logs: &[VtgateLog]) -> Option<(i64, i64, bool)> {
    let first = logs
        .iter()
        .filter_map(|l| l.lines.first())
        .map(|l| l.t)
        .min()?;
    let last = logs
        .iter()
        .filter_map(|l| l.lines.last())
        .map(|l| l.t)
        .max()?;
    // glog without the kubectl prefix has no year (its times are in 1970 until the fit gives
    // them one): compare month, day and time of day.
    let yearless = logs.iter().any(|l| l.glog_year);
    Some((first, last, yearless))
}

/// An instant on a yearless glog clock: its month, day and time of day in 1970.
fn yearless(t: i64) -> i64 {
    let (_, mo, d, ..) = super::names::civil(t);
    super::names::days_from_civil(1970, mo, d) * 86_400 * NS + t.rem_euclid(86_400 * NS)
}

/// Each event's occurrence inside the logs' span `[first - EVENT_LEAD_NS, last]`; events with
/// none are dropped, each named.
fn in_span(
    path: &std::path::Path,
    evs: Vec<Event>,
    (first, last, year_free): (i64, i64, bool),
    warnings: &mut Vec<String>,
) -> Vec<Event> {
    let clock = |t: i64| if year_free { yearless(t) } else { t };
    let inside = |t: i64| (first - EVENT_LEAD_NS..=last).contains(&clock(t));
    let mut out = vec![];
    let mut dropped = vec![];
    for mut e in evs {
        let first_in = inside(e.t);
        let last_in = e.last.is_some_and(inside);
        let what = format!("items[{}] {} \"{}\"", e.item, e.reason, e.message);
        match (first_in, last_in) {
            (true, false) => out.push(e),
            (false, true) => {
                // The latest occurrence is this incident's: its time has lastTimestamp's
                // resolution (1 s), the name's nanoseconds belong to the first.
                warnings.push(format!(
                    "{}: {what} happened {} times, first at {} (before the logs): the last, {}, \
                     is taken",
                    path.display(),
                    e.count,
                    super::names::rfc3339_nano(e.t),
                    super::names::rfc3339_nano(e.last.unwrap())
                ));
                e.t = e.last.unwrap();
                e.resolution = NS;
                e.count = 1;
                e.last = None;
                out.push(e);
            }
            (true, true) => {
                warnings.push(format!(
                    "{}: {what} happened {} times within the logs' span (first {}, last {}): \
                     only the first is placed (the others' times are not in the dump)",
                    path.display(),
                    e.count,
                    super::names::rfc3339_nano(e.t),
                    super::names::rfc3339_nano(e.last.unwrap())
                ));
                out.push(e);
            }
            (false, false) => dropped.push(format!(
                "{what} at {}{}",
                super::names::rfc3339_nano(e.t),
                e.last
                    .map(|l| format!(" .. {} ({} times)", super::names::rfc3339_nano(l), e.count))
                    .unwrap_or_default()
            )),
        }
    }
    if !dropped.is_empty() {
        let fmt = |t: i64| {
            if year_free {
                format!("{} (no year)", super::names::rfc3339_nano(t))
            } else {
                super::names::rfc3339_nano(t)
            }
        };
        warnings.push(format!(
            "{}: {} event(s) outside the logs' span ({} .. {}, less {} s for a restart the \
             logs begin after) are from another time (an earlier rollout?) and ignored: {}",
            path.display(),
            dropped.len(),
            fmt(first),
            fmt(last),
            EVENT_LEAD_NS / NS,
            dropped.join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_names_share_their_base() {
        for (f, b) in [
            ("vtgate-x.log", "vtgate-x"),
            ("vtgate-x.log.1", "vtgate-x"),
            ("vtgate-x.1.log", "vtgate-x"),
            (
                "example-zone1-vtgate-abc.log.12",
                "example-zone1-vtgate-abc",
            ),
            ("vtgate-01", "vtgate-01"),
            ("a.b.log", "a.b"),
        ] {
            assert_eq!(base_name(f), b, "{f}");
        }
    }
}
