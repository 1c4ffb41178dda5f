//! The per-site debounce state machine and the loop's adaptive interval: transcriptions of
//! Bloodraven's `computeState`, the non-promotable bypass in `Poll`, and `adaptivePollInterval`
//! (ShipStream/bloodraven `internal/controller/topology.go` @025b10dc: `computeState`,
//! `TopologyManager.Poll`, `adaptivePollInterval`).

use crate::sim::SimDuration;
use serde::Serialize;

/// What the operator believes about one site (`internal/state/machine.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SiteState {
    /// Initial, and after an operator restart: no decisive observation yet.
    Unknown,
    /// `read_only=0`, believed after `recovery_threshold` consecutive writable answers (or one,
    /// for a non-promotable site).
    Writable,
    /// `read_only=1`, believed on one answer.
    ReadOnly,
    /// `failure_threshold` consecutive probe errors.
    Unreachable,
}

impl SiteState {
    /// The string the operator logs (`unknown`, `writable`, `read-only`, `unreachable`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SiteState::Unknown => "unknown",
            SiteState::Writable => "writable",
            SiteState::ReadOnly => "read-only",
            SiteState::Unreachable => "unreachable",
        }
    }
    /// A small code for the trace (0 unknown, 1 writable, 2 read-only, 3 unreachable).
    pub fn code(self) -> u64 {
        self as u64
    }
}

/// One probe's outcome: `SELECT @@read_only` answered, or any error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeResult {
    /// The probe failed (refused, timed out, auth, `max_connections`: all count alike,
    /// `docs/site_poller.md` #14).
    Error,
    /// `read_only=1`.
    ReadOnly,
    /// `read_only=0`.
    Writable,
}

/// The thresholds `computeState` reads.
#[derive(Clone, Copy, Debug)]
pub struct Thresholds {
    /// `spec.failureThreshold`.
    pub(crate) failure: u32,
    /// `spec.recoveryThreshold`.
    pub(crate) recovery: u32,
}

/// Bloodraven's `siteTracker`: the believed state and the two consecutive-result counters.
#[derive(Clone, Copy, Debug)]
pub struct SiteTracker {
    /// The believed state.
    pub(crate) state: SiteState,
    /// Consecutive probe errors (unbounded; drives the backoff).
    pub(crate) fail_count: u32,
    /// Consecutive writable answers while not Writable.
    pub(crate) recovery_count: u32,
    /// `role == primary-candidate`.
    pub(crate) promotable: bool,
}

impl SiteTracker {
    /// A fresh tracker (`Unknown`, counters 0), as after `NewTopologyManager`.
    pub fn new(promotable: bool) -> Self {
        SiteTracker {
            state: SiteState::Unknown,
            fail_count: 0,
            recovery_count: 0,
            promotable,
        }
    }

    /// `computeState` followed by the non-promotable override in `Poll`. Mutates the counters
    /// and returns the new state; the caller stores it (see [`SiteTracker::observe`]).
    pub(crate) fn compute_state(&mut self, r: ProbeResult, th: Thresholds) -> SiteState {
        let computed = match r {
            ProbeResult::Error => {
                self.recovery_count = 0;
                self.fail_count = self.fail_count.saturating_add(1);
                if self.fail_count >= th.failure {
                    SiteState::Unreachable
                } else {
                    self.state
                }
            }
            ProbeResult::ReadOnly => {
                self.fail_count = 0;
                self.recovery_count = 0;
                SiteState::ReadOnly
            }
            ProbeResult::Writable => {
                self.fail_count = 0;
                if self.state != SiteState::Writable {
                    self.recovery_count = self.recovery_count.saturating_add(1);
                    if self.recovery_count >= th.recovery {
                        SiteState::Writable
                    } else {
                        self.state
                    }
                } else {
                    SiteState::Writable
                }
            }
        };
        // `if err == nil && !readOnly && !site.isPromotable() { newState = StateWritable }`:
        // a writable non-promotable site is an immediate safety fact (recoveryCount was still
        // incremented above, as in the code).
        if r == ProbeResult::Writable && !self.promotable {
            SiteState::Writable
        } else {
            computed
        }
    }

    /// Apply one probe result and store the new state; returns `(old, new)`.
    pub(crate) fn observe(&mut self, r: ProbeResult, th: Thresholds) -> (SiteState, SiteState) {
        let old = self.state;
        let new = self.compute_state(r, th);
        self.state = new;
        (old, new)
    }
}

/// The backoff knobs of `adaptivePollInterval`.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    /// `spec.pollInterval` (the base).
    pub(crate) base: SimDuration,
    /// `spec.failureThreshold`.
    pub(crate) failure_threshold: u32,
    /// `maxPollBackoffExponent` (4).
    pub(crate) max_exponent: u32,
    /// The hard cap (30 s).
    pub(crate) max_interval: SimDuration,
    /// Off reproduces the versions before the backoff (a fixed interval).
    pub(crate) enabled: bool,
}

impl Backoff {
    /// `adaptivePollInterval`: `base << clamp(worstFail − F, 0, max_exponent)`, capped.
    pub(crate) fn interval(&self, worst_fail: u32) -> SimDuration {
        if !self.enabled || worst_fail <= self.failure_threshold {
            return self.base;
        }
        let exp = (worst_fail - self.failure_threshold).min(self.max_exponent);
        let i = SimDuration(self.base.0.saturating_mul(1u64 << exp));
        if i > self.max_interval {
            self.max_interval
        } else {
            i
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_table_at_defaults() {
        let b = Backoff {
            base: SimDuration::from_secs(2),
            failure_threshold: 3,
            max_exponent: 4,
            max_interval: SimDuration::from_secs(30),
            enabled: true,
        };
        let got: Vec<u64> = (0..10).map(|f| b.interval(f).0 / 1_000_000_000).collect();
        assert_eq!(got, vec![2, 2, 2, 2, 4, 8, 16, 30, 30, 30]);
    }
}
