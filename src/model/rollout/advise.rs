//! The bounds of `vtsim advise --refresh-interval` (the smallest `tablet_available_timeout`
//! whose risk of any failed replica read per rollout is below a target, beside the incident's
//! 1.5 × refresh-interval rule of thumb and the 2 × rule of vitess-operator PR #797).
//!
//! The search itself is the advise engine's (`src/advise/rollout.rs` `gate_for`: a
//! sequential test with Wilson intervals, Bonferroni over candidates and looks, common random
//! numbers across gates); this module keeps the checks of the form's flags, so that an
//! out-of-bounds request is refused, naming the flag, before anything runs.

use crate::io::label::duration_label;
use crate::sim::SimDuration;
use crate::stats::z_critical;

/// Parameter paths advise sets in the rollout model.
pub const REFRESH: &str = "vtgate.tablet_refresh_interval";
/// Number of vtgates.
pub const VTGATES: &str = "vtgates";
/// The Available gate.
pub const GATE: &str = "operator.tablet_available_timeout";

/// Most rollouts simulated per gate: 1e7. A rollout of the default model is about a
/// millisecond of CPU, so a gate costs at most a few CPU-hours, and the per-gate results
/// (three numbers a rollout) stay under 250 MB. It is what a target of about 4.3e-7 needs
/// ([`smallest_target`]).
pub const MAX_ROLLOUTS_PER_GATE: u64 = 10_000_000;
/// Most gates scanned (0, step, 2·step, … up to 4 × refresh): 1000.
pub const MAX_GATES: u64 = 1000;
/// Longest refresh interval advise accepts: 1 h (vtgate's `--tablet_refresh_interval`
/// defaults to 1 m; the scan goes up to 4 × refresh, and a rollout must finish within the
/// model's horizon for the answer to mean anything).
pub const MAX_REFRESH: SimDuration = SimDuration::from_secs(3600);

/// Rollouts per gate so that zero errors in all of them puts the Wilson upper bound below
/// `target` (with 10 % to spare). Saturates for a tiny target; see [`check_request`].
pub fn rollouts_for(target: f64) -> u64 {
    rollouts_needed(target).ceil().max(100.0) as u64
}

fn rollouts_needed(target: f64) -> f64 {
    let z2 = z_critical().powi(2);
    (z2 / target) * 1.1
}

/// The smallest target whose default rollout count is within [`MAX_ROLLOUTS_PER_GATE`]
/// (about 4.3e-7), rounded up to two significant digits.
pub fn smallest_target() -> f64 {
    let t = z_critical().powi(2) * 1.1 / MAX_ROLLOUTS_PER_GATE as f64;
    let e = 10f64.powf(t.log10().floor() - 1.0);
    (t / e).ceil() * e
}

/// The scan goes up to this many refresh intervals (a gate of 4 × refresh is far past every
/// rule of thumb: 1.5 × in the incident report, 2 × in vitess-operator PR #797).
pub const SCAN_REFRESHES: f64 = 4.0;

/// The largest gate the scan visits: [`SCAN_REFRESHES`] × refresh.
pub fn max_gate(refresh: SimDuration) -> SimDuration {
    refresh.mul_f64(SCAN_REFRESHES)
}

/// Gates the scan visits: 0, step, … up to 4 × refresh.
pub fn gates_scanned(refresh: SimDuration, step: SimDuration) -> u64 {
    (max_gate(refresh).as_nanos() / step.as_nanos().max(1)).saturating_add(1)
}

/// Check a request against the bounds; returns the rollouts per gate. The error names the
/// flag, the bound and what to do instead.
pub fn check_request(
    refresh: SimDuration,
    step: SimDuration,
    target: f64,
    rollouts: Option<u64>,
) -> Result<u64, String> {
    if refresh == SimDuration::ZERO || step == SimDuration::ZERO {
        return Err("--refresh-interval and --step must be > 0".into());
    }
    if refresh > MAX_REFRESH {
        return Err(format!(
            "--refresh-interval {}: at most {} (vtgate's default is 1m; the scan goes up to 4 × refresh)",
            duration_label(refresh),
            duration_label(MAX_REFRESH)
        ));
    }
    let gates = gates_scanned(refresh, step);
    if gates > MAX_GATES {
        // The smallest step within the bound, rounded up to a whole millisecond.
        let exact = max_gate(refresh).as_nanos() / MAX_GATES + 1;
        let min_step = exact.div_ceil(1_000_000) * 1_000_000;
        return Err(format!(
            "--step {} scans {gates} gates (0 to 4 × --refresh-interval {}); at most {MAX_GATES}: \
             use a --step of at least {}",
            duration_label(step),
            duration_label(refresh),
            duration_label(SimDuration::from_nanos(min_step))
        ));
    }
    if !(target > 0.0 && target < 1.0) {
        return Err("--target-risk must be in (0, 1)".into());
    }
    match rollouts {
        Some(0) => Err("--rollouts must be at least 1".into()),
        Some(n) if n > MAX_ROLLOUTS_PER_GATE => Err(format!(
            "--rollouts {n}: at most {MAX_ROLLOUTS_PER_GATE:.0e} per gate"
        )),
        Some(n) => Ok(n),
        None => {
            let need = rollouts_needed(target);
            if need > MAX_ROLLOUTS_PER_GATE as f64 {
                return Err(format!(
                    "--target-risk {target:e} needs {need:.2e} rollouts per gate (zero errors in \
                     all of them); at most {MAX_ROLLOUTS_PER_GATE:.0e}: the smallest target is \
                     {:e} (or give --rollouts N, at most {MAX_ROLLOUTS_PER_GATE:.0e})",
                    smallest_target()
                ));
            }
            Ok(rollouts_for(target))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_hold_at_their_edges() {
        let s = SimDuration::from_secs;
        let t_min = smallest_target();
        assert!((4.2e-7..4.4e-7).contains(&t_min), "{t_min}");
        let n = check_request(s(60), s(5), t_min, None).unwrap();
        assert!(
            n <= MAX_ROLLOUTS_PER_GATE && n > MAX_ROLLOUTS_PER_GATE * 9 / 10,
            "{n}"
        );
        let e = check_request(s(60), s(5), t_min * 0.9, None).unwrap_err();
        assert!(e.contains("the smallest target is 4.3e-7"), "{e}");
        assert_eq!(check_request(s(60), s(5), 1e-9, Some(50)), Ok(50));
        assert!(check_request(s(60), s(5), 1e-3, Some(MAX_ROLLOUTS_PER_GATE + 1)).is_err());
        // 4 × 60 s / 241 ms = 995.8: 996 gates; 240 ms would be 1001.
        assert_eq!(gates_scanned(s(60), SimDuration::from_millis(241)), 996);
        assert!(check_request(s(60), SimDuration::from_millis(241), 1e-3, None).is_ok());
        let e = check_request(s(60), SimDuration::from_millis(240), 1e-3, None).unwrap_err();
        assert!(
            e.contains("1001 gates") && e.contains("at least 241ms"),
            "{e}"
        );
        assert!(check_request(MAX_REFRESH, s(15), 1e-3, None).is_ok());
        let e = check_request(MAX_REFRESH + SimDuration::from_nanos(1), s(15), 1e-3, None);
        assert!(e.unwrap_err().contains("at most 3600s"));
        assert_eq!(rollouts_for(1e-3), 4226);
    }
}
