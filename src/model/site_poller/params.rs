//! Parameters of the site-poller model, with their defaults and where each comes from.
//!
//! Sources: ShipStream/bloodraven (`internal/controller/topology.go`, `internal/state/`,
//! `docs/docs/failover.mdx`), cited by file and function; Go's `time` package; 
//! `docs/site_poller.md`; and "the walkthrough": the bloodraven poller walkthrough "The poll
//! loop and per-site state", whose playground `models/playground.ron` is. *\[inferred\]* marks a
//! value
//! no code fixes (a network latency, a step duration): a documented modelling choice.
//!
//! Every enum is internally tagged (`kind`) so sweeps can override it through JSON:
//! `driver: (kind: "Ticker")`, `kind: (kind: "Flaky", p: 0.05)`.

pub use crate::model::dist::DurationDist;
use crate::sim::SimDuration;
use crate::model::kit::{fail, positive, probability, Checked};
use serde::{Deserialize, Serialize};

/// Parameters of the site-poller model (`docs/site_poller.md`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SitePollerParams {
    /// The watched sites, in declared order (the order breaks promotion ties,
    /// ShipStream/bloodraven `internal/state/matrix.go` `EvalCrossSite`).
    pub sites: Vec<SiteParams>,
    /// The `TopologyManager` loop.
    #[serde(default)]
    pub poller: PollerParams,
    /// Probe and per-poll I/O latencies.
    #[serde(default)]
    pub probes: ProbeParams,
    /// Scripted truth changes (faults), in any order.
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// The optional cross-site failover layer (`EvalCrossSite` + `failover.Execute`).
    #[serde(default)]
    pub failover: FailoverParams,
    /// The run ends here.
    #[serde(default = "d_horizon")]
    pub horizon: SimDuration,
}

/// One MySQL site.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteParams {
    /// Its name (`iad`, `pdx`, `reader`); faults name it.
    pub name: String,
    /// `primary-candidate`, or a non-promotable role (`read-only`, `dr-only`).
    pub role: Role,
    /// What `SELECT @@read_only` answers at the start of the run.
    pub initial: Answer,
    /// This site's per-probe transient failure probability, replacing `probes.flaky_p`.
    #[serde(default)]
    pub flaky_p: Option<f64>,
}

/// A site's role (`api/v1alpha1/types.go`; ShipStream/bloodraven
/// `internal/controller/topology.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Role {
    /// May be promoted; needs `recovery_threshold` writable answers to be believed Writable.
    PrimaryCandidate,
    /// Never promoted (`read-only` / `dr-only`): a writable answer is believed on the first
    /// poll (the bypass) and fenced every poll.
    NonPromotable,
}

/// What a reachable site answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Answer {
    /// `read_only=0`.
    Writable,
    /// `read_only=1`.
    ReadOnly,
}

/// Which loop drives the polls (ShipStream/bloodraven `internal/controller/topology.go`, the
/// loop; Go's timer semantics from `src/time/tick.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum LoopDriver {
    /// Current code: a one-shot `time.NewTimer(interval)` after each Poll, so
    /// `start(k+1) = end(k) + interval(k)`: period = poll duration + interval.
    #[default]
    TimerAfterCycle,
    /// Older versions: a phase-locked `time.Ticker` (Go ≥ 1.23 semantics: `src/time/tick.go`,
    /// `runtime/time.go`): ticks at
    /// `t0 + k·d`; a poll that overruns gets one immediate tick when it ends, the rest are
    /// dropped. When the adaptive interval changes the ticker is `Reset(new)` at the poll's end
    /// (the next tick is `new` later) *[inferred: the old ticker versions had no backoff; set
    /// `poller.adaptive_backoff: false` to reproduce them exactly]*.
    Ticker,
}

/// The poll loop (`TopologyManager.Run`, `adaptivePollInterval`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PollerParams {
    /// `spec.pollInterval`: 2 s (types.go kubebuilder default; the reconciler also
    /// hard-defaults a nil pointer to 2 s, seed). Must be > 0.
    pub poll_interval: SimDuration,
    /// `spec.failureThreshold`: consecutive errors before Unreachable. 3 (types.go, min 1).
    pub failure_threshold: u32,
    /// `spec.recoveryThreshold`: consecutive writable answers before Writable on a
    /// primary-candidate. 2 (types.go, min 1).
    pub recovery_threshold: u32,
    /// Multiply the interval by 2^(worst fail count − failure_threshold) (ShipStream/bloodraven
    /// `internal/controller/topology.go` (the loop)). On in the
    /// current code; off reproduces versions before the backoff.
    pub adaptive_backoff: bool,
    /// `maxPollBackoffExponent` = 4 (topology.go).
    pub max_backoff_exponent: u32,
    /// The backoff's hard cap: 30 s (`adaptivePollInterval`).
    pub max_interval: SimDuration,
    /// The loop driver: `(kind: "TimerAfterCycle")` (default, current code) or
    /// `(kind: "Ticker")`.
    pub driver: LoopDriver,
    /// When the operator starts (its first Poll runs at once, ShipStream/bloodraven
    /// `internal/controller/topology.go` (the loop); the ticker's phase is
    /// this instant). Default 0.
    pub start: SimDuration,
}

/// Probe and per-poll I/O latencies (ShipStream/bloodraven `internal/controller/topology.go`
/// `TopologyManager.Poll`, ShipStream/bloodraven `internal/mysql/checker.go` (`statusNetTimeout`)).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProbeParams {
    /// `context.WithTimeout(ctx, 5*time.Second)` around every probe (`Poll.pollSite`).
    pub probe_timeout: SimDuration,
    /// Driver dial/read/write timeout `statusNetTimeout` = 4 s (checker.go, current code): a
    /// black-holed site's probe fails at min(driver_timeout, probe_timeout). Older versions:
    /// set it ≥ probe_timeout (5 s).
    pub driver_timeout: SimDuration,
    /// Latency of an answered query over the held connection (one round trip plus MySQL).
    /// Default Uniform(1ms, 3ms) *\[inferred\]*.
    pub answer_latency: DurationDist,
    /// Latency of a refused probe (RST / kube-proxy REJECT: about one round trip,
    /// ShipStream/bloodraven `internal/mysql/checker.go` (`statusNetTimeout`)), and
    /// of a transient (flaky) error. Default Fixed 1ms *\[inferred\]*.
    pub refused_latency: DurationDist,
    /// Probability that any probe of an answering site fails (a transient error: every error
    /// counts, `docs/site_poller.md` #14). Default 0. A site's own `flaky_p` replaces it.
    pub flaky_p: f64,
    /// `SHOW REPLICA STATUS` on every site believed ReadOnly, one after another after the
    /// probes (ShipStream/bloodraven `internal/controller/topology.go` `TopologyManager.Poll` step
    /// 9), each as long as a query to that site (≤ 5 s when it is dark).
    pub replica_status_extra: bool,
    /// `fenceWritableNonPromotableSites`: every poll, `SET GLOBAL super_read_only=ON` on each
    /// non-promotable site believed Writable; it makes an answering site read-only
    /// (ShipStream/bloodraven `internal/controller/topology.go` `TopologyManager.Poll`
    /// step 4).
    pub fence_non_promotable: bool,
    /// Everything else a Poll does serially (convergence, recovery, DNS apply, GTID reads):
    /// one draw per poll. Default Fixed 0 *\[inferred\]*.
    pub other_extras: DurationDist,
}

/// What a fault does to its site's truth.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum FaultKind {
    /// Probes error after `probes.refused_latency` (pod deleted, mysqld down on a live host).
    Refused,
    /// Black-holed: probes fail at min(driver_timeout, probe_timeout) (4 s in current code).
    Dark,
    /// A read parked on a dead socket until the 5 s context (pre-PR #95 versions, issue #93;
    /// the real hang could outlive the context, which this model does not show).
    Hang,
    /// The site starts answering `read_only=1`.
    ReadOnlyFlip,
    /// The site starts answering `read_only=0`.
    WritableFlip,
    /// Each probe of the (still answering) site fails with probability `p`.
    Flaky {
        /// Per-probe failure probability.
        p: f64,
    },
}

/// When a fault lands relative to its nominal time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum FaultPhase {
    /// At `at + U[0, L)`, where L is the loop's most recent full period (poll start to poll
    /// start; the poll interval before two polls have run), drawn from the scenario's own
    /// stream: the fault's phase relative to the polls is uniform, so detection-delay
    /// distributions are honest. The default.
    #[default]
    UniformOverPollPeriod,
    /// At `at + U[0, window)`.
    Uniform {
        /// Width of the window.
        window: SimDuration,
    },
    /// Exactly at `at` (replaying a known incident, or a test).
    Exact,
}

/// A scripted truth change on one site.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    /// The site's name.
    pub site: String,
    /// Nominal start, from the beginning of the run.
    pub at: SimDuration,
    /// How the actual start is drawn around `at`.
    #[serde(default)]
    pub phase: FaultPhase,
    /// What changes.
    pub kind: FaultKind,
    /// How long it lasts (what it changed is then restored); none: to the end of the run.
    #[serde(default)]
    pub duration: Option<SimDuration>,
}

/// The cross-site failover layer (ShipStream/bloodraven `internal/state/matrix.go`
/// `EvalCrossSite`; failover.mdx).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FailoverParams {
    /// Model `applyCrossSiteAction` promotions. Default off (the poller alone).
    pub enabled: bool,
    /// `spec.failoverCooldown`: 5 m (types.go; code fallback when 0).
    pub cooldown: SimDuration,
    /// false (code): a promotion is attempted only in a Poll with a per-site state transition,
    /// so a blocked or failed one waits for the next transition. true: every Poll (what the
    /// failure matrix in the docs suggests). Ref ShipStream/bloodraven `internal/state/matrix.go`
    /// `EvalCrossSite` "promotion is only retried on transitions".
    pub retry_every_poll: bool,
    /// `pickFreshestCandidate`: `GTID_EXECUTED` on every candidate in parallel (≤ 5 s each).
    /// Default Fixed 10ms *\[inferred\]*.
    pub gtid_pick: DurationDist,
    /// `WaitForRelayLogDrain`: 0 when the candidate is caught up, up to `drain_budget`.
    /// Default Uniform(0s, 1s) *[inferred: the measured clean-kill case is caught up]*.
    pub relay_drain: DurationDist,
    /// The drain's budget: 30 s, non-fatal on expiry (failover.go).
    pub drain_budget: SimDuration,
    /// `STOP REPLICA; RESET REPLICA ALL; SET GLOBAL super_read_only=OFF; read_only=OFF`.
    /// Default Fixed 20ms *\[inferred\]*.
    pub promotion_sql: DurationDist,
    /// `confirmWritable` (≤ 5 s). Default Fixed 5ms *\[inferred\]*.
    pub confirm: DurationDist,
    /// `applyDNS` and the rest of the Poll after the promotion. Default Fixed 100ms *\[inferred\]*.
    pub dns: DurationDist,
    /// Probability that a promotion fails at a fatal step (no cooldown is then recorded).
    /// Default 0.
    pub failure_p: f64,
}

fn d_horizon() -> SimDuration {
    SimDuration::from_secs(600)
}

impl Default for PollerParams {
    fn default() -> Self {
        PollerParams {
            poll_interval: SimDuration::from_secs(2),
            failure_threshold: 3,
            recovery_threshold: 2,
            adaptive_backoff: true,
            max_backoff_exponent: 4,
            max_interval: SimDuration::from_secs(30),
            driver: LoopDriver::TimerAfterCycle,
            start: SimDuration::ZERO,
        }
    }
}

impl Default for ProbeParams {
    fn default() -> Self {
        ProbeParams {
            probe_timeout: SimDuration::from_secs(5),
            driver_timeout: SimDuration::from_secs(4),
            answer_latency: DurationDist::Uniform {
        min: SimDuration::from_millis(1),
        max: SimDuration::from_millis(3),
    },
            refused_latency: DurationDist::fixed(SimDuration::from_millis(1)),
            flaky_p: 0.0,
            replica_status_extra: true,
            fence_non_promotable: true,
            other_extras: DurationDist::fixed(SimDuration::ZERO),
        }
    }
}

impl Default for FailoverParams {
    fn default() -> Self {
        FailoverParams {
            enabled: false,
            cooldown: SimDuration::from_secs(300),
            retry_every_poll: false,
            gtid_pick: DurationDist::fixed(SimDuration::from_millis(10)),
            relay_drain: DurationDist::Uniform {
        min: SimDuration::ZERO,
        max: SimDuration::from_secs(1),
    },
            drain_budget: SimDuration::from_secs(30),
            promotion_sql: DurationDist::fixed(SimDuration::from_millis(20)),
            confirm: DurationDist::fixed(SimDuration::from_millis(5)),
            dns: DurationDist::fixed(SimDuration::from_millis(100)),
            failure_p: 0.0,
        }
    }
}

impl SitePollerParams {
    /// The walkthrough's playground: `iad` (primary-candidate, writable), `pdx` (primary-candidate,
    /// read-only), `reader` (non-promotable, read-only), defaults 2 s / 3 / 2, no faults.
    pub fn playground() -> Self {
        let site = |name: &str, role, initial| SiteParams {
            name: name.into(),
            role,
            initial,
            flaky_p: None,
        };
        SitePollerParams {
            sites: vec![
                site("iad", Role::PrimaryCandidate, Answer::Writable),
                site("pdx", Role::PrimaryCandidate, Answer::ReadOnly),
                site("reader", Role::NonPromotable, Answer::ReadOnly),
            ],
            poller: PollerParams::default(),
            probes: ProbeParams::default(),
            faults: vec![],
            failover: FailoverParams::default(),
            horizon: d_horizon(),
        }
    }

    /// Every latency zero (answers, refusals, extras, failover steps): the closed-form setting.
    /// Dark and hung probes keep their timeouts.
    pub fn zero_latencies(mut self) -> Self {
        let z = DurationDist::fixed(SimDuration::ZERO);
        self.probes.answer_latency = z.clone();
        self.probes.refused_latency = z.clone();
        self.probes.other_extras = z.clone();
        self.failover.gtid_pick = z.clone();
        self.failover.relay_drain = z.clone();
        self.failover.promotion_sql = z.clone();
        self.failover.confirm = z.clone();
        self.failover.dns = z;
        self
    }

    /// The index of the site named `name`.
    pub fn site_index(&self, name: &str) -> Option<usize> {
        self.sites.iter().position(|s| s.name == name)
    }

    /// Check what serde cannot; the error names the field.
    pub fn check(&self) -> Checked {
        if self.sites.is_empty() {
            return fail("sites", "at least one site");
        }
        if self.sites.len() > u16::MAX as usize {
            return fail("sites", "at most 65535 sites");
        }
        for (i, s) in self.sites.iter().enumerate() {
            if s.name.is_empty() {
                return fail(format!("sites[{i}].name"), "a non-empty name");
            }
            if self.sites[..i].iter().any(|o| o.name == s.name) {
                return fail(format!("sites[{i}].name"), "a name no other site has");
            }
            if let Some(p) = s.flaky_p {
                probability(&format!("sites[{i}].flaky_p"), p)?;
            }
        }
        let pl = &self.poller;
        if pl.poll_interval == SimDuration::ZERO {
            return fail(
                "poller.poll_interval",
                "a duration > 0 (an omitted value is 2s)",
            );
        }
        if pl.failure_threshold == 0 {
            return fail("poller.failure_threshold", "an integer >= 1");
        }
        if pl.recovery_threshold == 0 {
            return fail("poller.recovery_threshold", "an integer >= 1");
        }
        if pl.max_backoff_exponent > 20 {
            return fail("poller.max_backoff_exponent", "an integer in 0..=20");
        }
        if pl.max_interval < pl.poll_interval {
            return fail("poller.max_interval", "a duration >= poller.poll_interval");
        }
        let pr = &self.probes;
        positive("probes.probe_timeout", pr.probe_timeout)?;
        positive("probes.driver_timeout", pr.driver_timeout)?;
        probability("probes.flaky_p", pr.flaky_p)?;
        pr.answer_latency.check("probes.answer_latency")?;
        pr.refused_latency.check("probes.refused_latency")?;
        pr.other_extras.check("probes.other_extras")?;
        for (i, f) in self.faults.iter().enumerate() {
            if self.site_index(&f.site).is_none() {
                let names: Vec<&str> = self.sites.iter().map(|s| s.name.as_str()).collect();
                return fail(
                    format!("faults[{i}].site"),
                    format!("one of the site names: {}", names.join(", ")));
            }
            if let FaultKind::Flaky { p } = f.kind {
                probability(&format!("faults[{i}].kind.p"), p)?;
            }
            if let FaultPhase::Uniform { window } = f.phase {
                positive(&format!("faults[{i}].phase.window"), window)?;
            }
            if f.duration == Some(SimDuration::ZERO) {
                return fail(format!("faults[{i}].duration"), "a duration > 0, or none");
            }
        }
        let fo = &self.failover;
        probability("failover.failure_p", fo.failure_p)?;
        for (d, name) in [
            (&fo.gtid_pick, "gtid_pick"),
            (&fo.relay_drain, "relay_drain"),
            (&fo.promotion_sql, "promotion_sql"),
            (&fo.confirm, "confirm"),
            (&fo.dns, "dns"),
        ] {
            d.check(&format!("failover.{name}"))?;
        }
        positive("horizon", self.horizon)?;
        // Every poll and every probe is recorded for the report: bound their number so a
        // run fits in memory and ends in seconds (4m at 2s is 120 polls; 1e6 is 23 days).
        let polls = self.horizon.as_secs_f64() / pl.poll_interval.as_secs_f64();
        if polls > 1e6 {
            return fail(
                "horizon",
                format!(
                    "at most 1e6 poll intervals (horizon / poller.poll_interval); found {polls:.3e}"
                ));
        }
        if polls * self.sites.len() as f64 > 1e7 {
            return fail(
                "horizon",
                "at most 1e7 probes (horizon / poller.poll_interval x sites)");
        }
        // These two bound the events too: a Poll is three events and at most one fence per
        // site (a period is never shorter than poller.poll_interval), a fault at most four,
        // so a run has at most 3e6 + 1e7 + 4 x faults events, far below
        // crate::model::MAX_EVENTS_PER_RUN.
        Ok(())
    }
}


