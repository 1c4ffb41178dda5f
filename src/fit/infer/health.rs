//! The health delays: `first_health_delay` (a new record's first health response)
//! and `health_stream_delay` (a SIGTERM reaching the vtgates), each with whether the inputs
//! bound it.

use super::drains::Drain;
use super::{mode, round_to};
use crate::fit::parse::{Said, VtgateLog};

/// The two health delays, each in ns with whether it is censored (a default).
#[derive(Clone, Copy, Debug)]
pub(super) struct HealthDelays {
    /// `first_health_delay`: a new record's first health response after its `Adding`.
    pub first: (i64, bool),
    /// `health_stream_delay`: a serving change reaches the vtgates after the SIGTERM.
    pub stream: (i64, bool),
}

/// `first_health_delay` (ns) and whether it is censored (10ms assumed). Reads: every
/// `Adding` line and the first serving change after it from the same tablet and host in the
/// same log; the most common gap, to 1 us.
pub(super) fn first_health_delay(logs: &[VtgateLog]) -> (i64, bool) {
    // first_health_delay: Adding -> the first response on that host, most common gap.
    let mut gaps = vec![];
    for l in logs {
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
    (fhd.unwrap_or(10_000_000), fhd_censored)
}

/// `health_stream_delay` (ns) and whether it is censored (50ms assumed). Reads: each drain
/// with a `Deleted Pod` event, the gap from the event to its first `true => false` line; `res`
/// is the lines' resolution (ns).
pub(super) fn health_stream_delay(raws: &[Drain], res: i64) -> (i64, bool) {
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
    (hsd.unwrap_or(50_000_000), hsd_censored)
}
