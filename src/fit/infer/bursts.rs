//! The bursts and the read rate: each vtgate's error lines grouped into bursts
//! (throttled 5 s), and the replica read rate that gives the fitted replay as many errors.

use super::BurstFit;
use crate::fit::names::NS;
use crate::fit::parse::{Said, VtgateLog};
use crate::model::rollout::{run_detailed, RolloutParams};
use crate::model::RunOptions;

/// The error bursts of `logs` (since `t0`), and the errors in all. Reads: the error lines and
/// the `skipped` lines of the throttle (5 s): lines less than 6 s apart are one burst.
pub(super) fn bursts(logs: &[VtgateLog], t0: i64) -> (Vec<BurstFit>, u64) {
    // Bursts: error lines per vtgate, throttled 5 s.
    let mut bursts = vec![];
    let mut total_errors = 0u64;
    for (g, l) in logs.iter().enumerate() {
        let mut cur: Option<BurstFit> = None;
        for x in &l.lines {
            let (t, k, skipped) = match x.said {
                Said::Error { .. } => (x.t - t0, 1, false),
                Said::Skipped(k) => (x.t - t0 - 5 * NS, k, true),
                _ => continue,
            };
            total_errors += k;
            match &mut cur {
                Some(b) if t <= b.end + 6 * NS => {
                    b.errors += k;
                    b.end = b.end.max(t);
                    b.throttled |= skipped;
                }
                _ => {
                    if let Some(b) = cur.take() {
                        bursts.push(b);
                    }
                    cur = Some(BurstFit {
                        g,
                        start: t,
                        end: t,
                        errors: k,
                        throttled: skipped,
                    });
                }
            }
        }
        bursts.extend(cur);
    }
    (bursts, total_errors)
}

/// Set `p`'s replica read rate from `total_errors` (a lower bound when lines were
/// throttled). An exposure is one (vtgate, shard) route without a serving replica, and a
/// vtgate spreads its reads over the shards (each route gets `replica_read_rps / shards`,
/// `src/model/rollout/world.rs` `read_rate_s`), so the rate per vtgate is the errors over the
/// routes' exposed seconds, times the shards. (Before issue 36 the shards factor was missing
/// and a two-shard incident replayed half its errors: 4,832 of the multicell example's 9,789.)
/// No errors: the model default is kept (a warning).
pub(super) fn read_rate(p: &mut RolloutParams, total_errors: u64, warnings: &mut Vec<String>) {
    if total_errors > 0 {
        p.workload.replica_read_rps = 1.0;
        if p.check().is_ok() {
            let run = run_detailed(p, 1, RunOptions::default());
            let exposed: f64 = run
                .exposures
                .iter()
                .map(|e| e.end.since(e.start).as_secs_f64())
                .sum();
            if exposed > 0.0 {
                p.workload.replica_read_rps =
                    total_errors as f64 * f64::from(p.shards.max(1)) / exposed;
            }
        }
    } else {
        warnings.push(
            "no error lines in the vtgate logs: the read rate is not observed (model default \
             kept)"
                .into(),
        );
    }
}
