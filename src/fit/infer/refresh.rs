//! The refresh interval: vtgate's `--tablet_refresh_interval` T, given or estimated
//! from the gaps between each vtgate's polls.

use super::polls::Polls;
use super::FitOptions;
use crate::fit::names::NS;

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

/// The refresh interval (ns), its resolution (ns) and whether `--refresh-interval` gave it.
/// Reads: `opts.refresh_interval`, else every gap between consecutive polls of one vtgate,
/// within the tolerance `2 × res` (twice the lines' resolution, at least 2 us). When the gaps
/// give no interval (fewer than two polls per vtgate): 1m assumed, with a warning.
pub(super) fn refresh_interval(
    polls: &Polls,
    res: i64,
    opts: &FitOptions,
    warnings: &mut Vec<String>,
) -> (i64, i64, bool) {
    let tol = (2 * res).max(2_000);
    match opts.refresh_interval {
        Some(t) => (t.as_nanos() as i64, 0, true),
        None => {
            let gaps: Vec<i64> = polls
                .polls
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
    }
}
