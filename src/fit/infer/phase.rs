//! The poll grid: each vtgate's phase, its poll instants' most common residue modulo
//! the refresh interval (to 1 ms) since the fit's time zero.

use super::mode;
use super::polls::Polls;
use crate::fit::parse::VtgateLog;

/// Every vtgate's poll grid: it reads the topology at `t0 + phase + k·T`.
pub(super) struct Grid {
    /// The fit's time zero (ns, Unix).
    pub t0: i64,
    /// The refresh interval T (ns).
    pub tper: i64,
    /// Per vtgate (model order): its phase (ns) and whether a poll bounded it.
    pub phases: Vec<(i64, bool)>,
}

/// The grid of `polls` on interval `tper` from `t0`. A vtgate without a poll gets phase 0,
/// censored (a warning naming it from `logs`).
pub(super) fn grid(
    polls: &Polls,
    t0: i64,
    tper: i64,
    logs: &[VtgateLog],
    warnings: &mut Vec<String>,
) -> Grid {
    // Phases relative to t0.
    let mut phases = vec![];
    for (g, ps) in polls.polls.iter().enumerate() {
        let res_mod: Vec<i64> = ps.iter().map(|p| (p - t0).rem_euclid(tper)).collect();
        match mode(&res_mod, 1_000_000) {
            Some(v) => phases.push((v, true)),
            None => {
                warnings.push(format!(
                    "vtgate {}: no topology poll in its log: its phase is censored (set to 0)",
                    logs[g].name
                ));
                phases.push((0, false))
            }
        }
    }
    Grid { t0, tper, phases }
}

impl Grid {
    /// The last grid instant of vtgate `g` strictly before `x` (ns, Unix).
    pub(super) fn before(&self, g: usize, x: i64) -> i64 {
        let off = self.t0 + self.phases[g].0;
        let k = (x - off - 1).div_euclid(self.tper);
        off + k * self.tper
    }
}
