//! Observed against replayed: does the fitted model give the incident's errors? (issue 36)
//!
//! The fit ends by replaying its own model and setting, per vtgate, the errors the logs hold
//! (the error lines plus the throttled logger's `skipped N` counts) against the errors the
//! replay expects: the model's per-route read rate times the time each of the vtgate's routes
//! had no serving replica. In a fitted replay the timeline is the incident's (explicit phases,
//! observed durations in order), so the errors of a vtgate are Poisson with that mean, and the
//! observed count must lie in its central interval. The intervals are taken at
//! 1 − α/(vtgates + 1) each (Bonferroni over the vtgates and the total), α = 0.001, so a fit that agrees
//! fails this check once in a thousand incidents. A count with throttled lines is a lower
//! bound (the logger's last window may be unreported) and fails only above its interval.
//!
//! A mismatch is not a fit that failed to run: the model and the report are written, the
//! report ends with the mismatch named per vtgate, and `vtsim fit` exits 3.

use super::infer::Fit;
use crate::model::rollout::run_detailed;
use crate::model::RunOptions;
use statrs::distribution::{DiscreteCDF, Poisson};

/// The family-wise error rate of the check (every vtgate and the total at once).
pub const ALPHA: f64 = 0.001;

/// One vtgate's (or the total's) observed and replayed errors.
#[derive(Clone, Debug)]
pub struct Row {
    /// The vtgate's name, or `total`.
    pub name: String,
    /// Errors in its log (lines + skipped counts).
    pub observed: u64,
    /// Some of them were throttled: `observed` is a lower bound.
    pub lower_bound: bool,
    /// Bursts in its log.
    pub bursts_observed: usize,
    /// The replay's mean errors.
    pub expected: f64,
    /// The central interval of a Poisson count of that mean, at the check's level.
    pub interval: (u64, u64),
    /// Exposure intervals of the replay (per route, merged within 6 s as the log's bursts are).
    pub bursts_replayed: usize,
    /// The observed count is outside its interval.
    pub mismatch: bool,
}

/// The check's result.
#[derive(Clone, Debug)]
pub struct Totals {
    /// One row per vtgate, then the total.
    pub rows: Vec<Row>,
    /// The level of each interval.
    pub level: f64,
}

impl Totals {
    /// No row is outside its interval.
    pub fn agree(&self) -> bool {
        !self.rows.iter().any(|r| r.mismatch)
    }

    /// The section of the fit report, ending with one verdict line.
    pub fn render(&self) -> String {
        let mut t = format!(
            "\nobserved vs replayed errors (the fitted model's replay; each interval at {:.4} %, \
             {} % for all at once)\n",
            self.level * 100.0,
            (1.0 - ALPHA) * 100.0
        );
        t.push_str(&format!(
            "  {:<20} {:>10} {:>12} {:>21}  {:>7} | {:<8}\n",
            "vtgate", "logged", "replay mean", "interval", "bursts", "replayed"
        ));
        for r in &self.rows {
            t.push_str(&format!(
                "  {:<20} {:>9}{} {:>12.1} {:>21}  {:>7} | {:<8}{}\n",
                r.name,
                r.observed,
                if r.lower_bound { "+" } else { " " },
                r.expected,
                format!("[{}, {}]", r.interval.0, r.interval.1),
                r.bursts_observed,
                r.bursts_replayed,
                if r.mismatch { "  MISMATCH" } else { "" }
            ));
        }
        t.push_str("  (+: a lower bound, some lines were throttled)\n");
        t.push_str(&self.verdict());
        t.push('\n');
        t
    }

    /// One line: the replay agrees, or which vtgates it does not and by how much.
    pub fn verdict(&self) -> String {
        let bad: Vec<&Row> = self.rows.iter().filter(|r| r.mismatch).collect();
        let total = self.rows.last();
        if bad.is_empty() {
            return match total {
                Some(t) => format!(
                    "verdict: the replay gives the logged errors: {} logged, {:.1} expected, \
                     every vtgate within its interval",
                    t.observed, t.expected
                ),
                None => "verdict: no vtgate to compare".into(),
            };
        }
        let named: Vec<String> = bad
            .iter()
            .map(|r| {
                format!(
                    "{} logged {}{} where the replay expects {:.1} [{}, {}]",
                    r.name,
                    r.observed,
                    if r.lower_bound { "+" } else { "" },
                    r.expected,
                    r.interval.0,
                    r.interval.1
                )
            })
            .collect();
        format!(
            "verdict: MISMATCH: the fitted model does not replay the logged errors: {}",
            named.join("; ")
        )
    }
}

/// The central interval of a Poisson count of mean `mean` at level `level`.
fn interval(mean: f64, level: f64) -> (u64, u64) {
    if mean <= 0.0 {
        return (0, 0);
    }
    let tail = (1.0 - level) / 2.0;
    match Poisson::new(mean) {
        Ok(p) => (p.inverse_cdf(tail), p.inverse_cdf(1.0 - tail)),
        Err(_) => (0, u64::MAX),
    }
}

/// Replay the fit's model and set its errors against the logs'.
pub fn totals(f: &Fit) -> Totals {
    let p = &f.params;
    let run = run_detailed(p, 1, RunOptions::default());
    let shards = p.shards.max(1) as f64;
    // A vtgate's reads are spread over the shards: each route gets rate / shards
    // (`src/model/rollout/world.rs`, `read_rate_s`).
    let route_rate = p.workload.replica_read_rps / shards;
    let g_n = f.vtgates.len();
    let level = 1.0 - ALPHA / (g_n as f64 + 1.0);
    let mut rows = Vec::with_capacity(g_n + 1);
    let (mut obs_all, mut lb_all, mut exp_all, mut bo_all, mut br_all) = (0, false, 0.0, 0, 0);
    for (g, name) in f.vtgates.iter().enumerate() {
        let mine: Vec<_> = f.bursts.iter().filter(|b| b.g == g).collect();
        let observed: u64 = mine.iter().map(|b| b.errors).sum();
        let lower_bound = mine.iter().any(|b| b.throttled);
        let mut spans: Vec<(u64, u64)> = run
            .exposures
            .iter()
            .filter(|x| x.g as usize == g)
            .map(|x| (x.start.0, x.end.0))
            .collect();
        let expected: f64 = spans
            .iter()
            .map(|(a, b)| (b - a) as f64 / 1e9 * route_rate)
            .sum::<f64>()
            // An empty sum is -0.0.
            + 0.0;
        spans.sort_unstable();
        let mut bursts_replayed = 0;
        let mut end: Option<u64> = None;
        for (a, b) in spans {
            match end {
                Some(e) if a <= e + 6_000_000_000 => end = Some(e.max(b)),
                _ => {
                    bursts_replayed += 1;
                    end = Some(b);
                }
            }
        }
        rows.push(row(
            name.clone(),
            observed,
            lower_bound,
            mine.len(),
            expected,
            bursts_replayed,
            level,
        ));
        obs_all += observed;
        lb_all |= lower_bound;
        exp_all += expected;
        bo_all += mine.len();
        br_all += bursts_replayed;
    }
    rows.push(row(
        "total".into(),
        obs_all,
        lb_all,
        bo_all,
        exp_all,
        br_all,
        level,
    ));
    Totals { rows, level }
}

fn row(
    name: String,
    observed: u64,
    lower_bound: bool,
    bursts_observed: usize,
    expected: f64,
    bursts_replayed: usize,
    level: f64,
) -> Row {
    let interval = interval(expected, level);
    let mismatch = observed > interval.1 || (!lower_bound && observed < interval.0);
    Row {
        name,
        observed,
        lower_bound,
        bursts_observed,
        expected,
        interval,
        bursts_replayed,
        mismatch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_poisson_quantiles() {
        // Poisson(100): the 0.05 % and 99.95 % quantiles are 69 and 134 (R: qpois(c(5e-4, 1 - 5e-4), 100)).
        assert_eq!(interval(100.0, 0.999), (69, 134));
        assert_eq!(interval(0.0, 0.999), (0, 0));
        let r = row("g".into(), 9789, false, 2, 4832.0, 2, 0.999);
        assert!(r.mismatch);
        let r = row("g".into(), 4900, false, 2, 4832.0, 2, 0.999);
        assert!(!r.mismatch);
        // A lower bound below its interval is no mismatch; above it is.
        assert!(!row("g".into(), 10, true, 1, 100.0, 1, 0.999).mismatch);
        assert!(row("g".into(), 200, true, 1, 100.0, 1, 0.999).mismatch);
    }
}
