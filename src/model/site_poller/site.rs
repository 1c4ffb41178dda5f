//! One site: its truth (what it answers, why it does not, how flaky its probes are), the
//! operator's tracker of it and this Poll's probe outcome; and the latency of one query to it
//! given that truth.

use super::params::{Answer, ProbeParams};
use super::tracker::{ProbeResult, SiteTracker};
use crate::sim::{SimDuration, SimRng};

/// Why a site does not answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Down {
    /// Probes error fast.
    Refused,
    /// Probes fail at min(driver timeout, probe timeout).
    Dark,
    /// Probes fail at the probe timeout.
    Hang,
}

/// One site: its truth and the operator's tracker of it.
pub struct Site {
    /// Name.
    pub(crate) name: String,
    /// `role == primary-candidate`.
    pub(crate) promotable: bool,
    /// What it answers when reachable.
    pub(crate) answer: Answer,
    /// Why it does not answer, if it does not.
    pub(crate) down: Option<Down>,
    /// Current per-probe transient failure probability.
    pub(crate) flaky_p: f64,
    /// The operator's `siteTracker`.
    pub(crate) tracker: SiteTracker,
    /// Its stream (`"site"`, index): probe latencies, flaky draws, extra-query latencies.
    pub(crate) rng: SimRng,
    /// This Poll's probe result.
    pub(crate) result: ProbeResult,
    /// This Poll's probe error was a transient (flaky) one on an answering site.
    pub(crate) flaky_error: bool,
    /// This Poll's probe latency.
    pub(crate) latency: SimDuration,
}

impl Site {
    /// Latency of one query to this site given its truth now (an extra, a fence, a GTID read).
    pub(super) fn query_latency(&mut self, pr: &ProbeParams) -> SimDuration {
        match self.down {
            Some(Down::Refused) => pr.refused_latency.sample(&mut self.rng),
            Some(Down::Dark) => pr.driver_timeout.min(pr.probe_timeout),
            Some(Down::Hang) => pr.probe_timeout,
            None => pr
                .answer_latency
                .sample(&mut self.rng)
                .min(pr.driver_timeout.min(pr.probe_timeout)),
        }
    }
}
