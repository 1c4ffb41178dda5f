//! From parsed inputs to a rollout model that replays the incident (`docs/fit.md`).
//!
//! Method, in order (every value keeps its resolution; a value the inputs do not bound is
//! marked censored and given a stated default):
//! 1. Poll instants per vtgate: its start-up line and every topology record change it logged
//!    (`Adding` / `Removing`), except those of a shard reload after a PRS. The refresh
//!    interval T is the tolerant greatest common divisor of the gaps between them (rounded to
//!    the millisecond), unless `--refresh-interval` gives it; each vtgate's phase is its poll
//!    instants' residue modulo T (the most common one, to 1 ms).
//! 2. Health delays: the first health response comes `first_health_delay` after the record is
//!    added (the most common gap, to 1 us); a tablet's state change reaches the vtgates
//!    `health_stream_delay` after its SIGTERM (the operator's `Deleted Pod` event, to the ns
//!    its name encodes); without events the model default is assumed.
//! 3. Per restarted tablet: SIGTERM (the event), the old pod gone (the first broken health
//!    stream, else the midpoint of what bounds it), the new address published (between the
//!    last poll of any vtgate that did not see it and the first that did: the midpoint), and
//!    serving (bounded above by every first health response that came at once, by the
//!    operator's next release minus the Available gate and by the pod's Ready second, and
//!    below by the retry before every response that came through the reconnect backoff: the
//!    midpoint; the address is bounded above by the same operator and Ready bounds).
//! 4. The operator: each release (SIGTERM, or the PRS start for the primary) after the
//!    previous tablet served plus `tablet_available_timeout` (the readiness-probe lag is folded
//!    into the step, as `models/incident-000.ron` does); PRS start and end from the old
//!    primary's serving changes; the candidate from the `PlannedReparent` event.
//!
//! The fitted model replays these instants exactly: the durations are `Observed` samples
//! drawn in order, the phases `Explicit`, and every other delay fixed.

//!
//! # Stages
//! [`fit`] runs these in order, each a function over explicit inputs, in a file named for what
//! it infers (every stage may add warnings, in this order):
//!
//! | stage (file) | reads | infers |
//! |---|---|---|
//! | `gather`, `align_logs` (evidence) | the parsed inputs | inputs by kind; one clock |
//! | `roster` | discovery lines | each tablet's shard, first host, primary |
//! | `cells_of` (cells) | aliases, `--cells_to_watch`, names | cells; vtgates' model order |
//! | `polls` | `Start`, `Adding`, `Removing`, `Reload` | poll and reload instants |
//! | `refresh_interval` (refresh) | poll gaps, `--refresh-interval` | T |
//! | `kube` | events and pods JSON | SIGTERM events, PRS candidates, Ready |
//! | `serving_changes`, `drains` (drains) | serving changes, SIGTERM events | restarts, PRS |
//! | `first_health_delay` (health) | `Adding` → first response | `first_health_delay` |
//! | `health_stream_delay` (health) | SIGTERM event → first line | `health_stream_delay` |
//! | `Drains::new` (drains) | restarts, `health_stream_delay` | drain order, time zero |
//! | `grid` (phase) | polls, T, time zero | each vtgate's phase |
//! | `timelines` (timeline) | logs, grid, drains, Ready, cells | drain, down, publish, serve |
//! | `layout`, `durations` (layout) | roster, timelines, cells | tablets per shard; durations |
//! | `operator` | layout, timelines, PRS, candidates | steps, PRS, replica order |
//! | `model` | the stages above | the rollout parameters |
//! | `bursts`, `read_rate` (bursts) | error and `skipped` lines; a replay | bursts; the read rate |
//!
//! Without a vtgate log, the short form alone is fitted by `short::fit_short`.

mod bursts;
mod cells;
mod drains;
mod evidence;
mod health;
mod kube;
mod layout;
mod model;
mod operator;
mod phase;
mod polls;
mod refresh;
mod roster;
mod short;
mod timeline;

use super::parse::{Alias, Input};
use crate::model::rollout::{run_detailed, RolloutParams};
use crate::model::RunOptions;
use crate::sim::{SimDuration, SimTime};
use drains::Drains;
use evidence::Evidence;
use health::HealthDelays;
use std::collections::BTreeMap;
use timeline::TimelineInputs;

/// What the fit may be told besides its inputs.
#[derive(Clone, Debug, Default)]
pub struct FitOptions {
    /// `--refresh-interval`: vtgate's `--tablet_refresh_interval` (else estimated).
    pub refresh_interval: Option<SimDuration>,
    /// The operator's Available gate (default 30 s, hard-coded in vitess-operator).
    pub available_timeout: Option<SimDuration>,
}

/// One inferred instant or duration: its value, its resolution (half-width of what the
/// inputs allow), and whether the inputs bound it at all.
#[derive(Clone, Copy, Debug)]
pub struct Inferred {
    /// Value, ns (an instant: since the fit's time zero).
    pub ns: i64,
    /// Half-width of the interval the inputs allow, ns.
    pub resolution: i64,
    /// Not bounded by the inputs (a default or a guess).
    pub censored: bool,
}

/// A restarted tablet's inferred lifecycle (since the fit's time zero).
#[derive(Clone, Debug)]
pub struct TabletFit {
    /// Its alias.
    pub alias: Alias,
    /// Its shard (`keyspace/shard`).
    pub shard: String,
    /// SIGTERM.
    pub drain: Inferred,
    /// Old pod gone.
    pub down: Inferred,
    /// New address published.
    pub publish: Inferred,
    /// Serving again.
    pub serve: Inferred,
    /// Ready since (pods JSON, whole seconds), if known.
    pub ready: Option<i64>,
    /// Per vtgate: its first health response from the new process (ns since time zero).
    pub discovered: Vec<Option<i64>>,
}

/// One observed error burst of one vtgate.
#[derive(Clone, Debug)]
pub struct BurstFit {
    /// vtgate index.
    pub g: usize,
    /// First error line (ns since time zero).
    pub start: i64,
    /// Last error line, or the last `skipped` line minus the throttle window.
    pub end: i64,
    /// Errors: the lines plus the skipped counts (a lower bound when skipped > 0).
    pub errors: u64,
    /// Some lines were throttled (the count and the end are lower bounds).
    pub throttled: bool,
}

/// The result of a fit.
#[derive(Clone, Debug)]
pub struct Fit {
    /// The model's parameters.
    pub params: RolloutParams,
    /// Unix ns of the model's time zero.
    pub t0: i64,
    /// vtgate names, in model order.
    pub vtgates: Vec<String>,
    /// Tablet aliases in model order (`None`: not in the inputs).
    pub tablets: Vec<Option<Alias>>,
    /// Restarted tablets, in restart order.
    pub restarts: Vec<TabletFit>,
    /// Observed error bursts.
    pub bursts: Vec<BurstFit>,
    /// The refresh interval and its resolution (ns), and whether it was given.
    pub refresh: (i64, i64, bool),
    /// Per vtgate: its phase offset (ns) and whether a poll bounded it.
    pub phases: Vec<(i64, bool)>,
    /// `first_health_delay` and `health_stream_delay` as fitted (ns; censored flags).
    pub delays: [(i64, bool); 2],
    /// What the inputs did not give, and other warnings.
    pub warnings: Vec<String>,
    /// The inputs, one line each.
    pub inputs: Vec<String>,
}

/// A fit failure (the inputs cannot give a model): the message names the file and line.
pub type FitResult<T> = Result<T, String>;

/// The most common value of `values` in bins of `bin` (the bin's least value; ties: the
/// earliest bin).
fn mode(values: &[i64], bin: i64) -> Option<i64> {
    let mut counts: BTreeMap<i64, (usize, i64)> = BTreeMap::new();
    for &v in values {
        let k = v.div_euclid(bin.max(1));
        let e = counts.entry(k).or_insert((0, v));
        e.0 += 1;
        e.1 = e.1.min(v);
    }
    counts
        .into_iter()
        .max_by_key(|(k, (n, _))| (*n, -*k))
        .map(|(_, (_, v))| v)
}

/// Fit a rollout model to `inputs`.
pub fn fit(inputs: &[Input], opts: &FitOptions) -> FitResult<Fit> {
    let mut warnings = vec![];
    let Evidence {
        mut logs,
        shorts,
        events,
        pods,
        described,
    } = evidence::gather(inputs, &mut warnings);
    if logs.is_empty() {
        if let Some((p, lines)) = shorts.first() {
            return short::fit_short(p, lines, opts, warnings, described);
        }
        return Err(
            "no vtgate log and no short-form lines among the inputs: nothing to fit \
                    (events and pods alone do not show discovery)"
                .into(),
        );
    }
    let res = evidence::align_logs(&mut logs, &events, &pods, &mut warnings);
    // Tablets: every alias named, its shard, its first host, and the original primaries.
    let roster = roster::roster(&logs)?;
    // Cells: the tablets' alias cells and the vtgates' --cells_to_watch; vtgates reordered
    // cell by cell (the model's vtgate order).
    let cells = cells::cells_of(&mut logs, &roster.first_seen, &mut warnings);
    // Topology reads per vtgate: poll instants (and reloads, kept apart).
    let polls = polls::polls(&logs);
    let refresh = refresh::refresh_interval(&polls, res, opts, &mut warnings);
    let kube = kube::kube(&events, &pods, &mut warnings);
    // The restarted tablets, with their SIGTERM (before hsd is known: the first true =>
    // false line), then in drain order once hsd places them.
    let changes = drains::serving_changes(&logs);
    let first = health::first_health_delay(&logs);
    let raws = drains::drains(&roster, &changes, &kube);
    let stream = health::health_stream_delay(&raws, res);
    let delays = HealthDelays { first, stream };
    let drained = Drains::new(raws, stream.0, res, &logs[0].path)?;
    let grid = phase::grid(&polls, drained.t0, refresh.0, &logs, &mut warnings);
    let a_gate = available_gate(opts);
    let restarts = timeline::timelines(
        &TimelineInputs {
            logs: &logs,
            shard_of: &roster.shard_of,
            cells: cells.as_ref(),
            reloads: &polls.reloads,
            grid: &grid,
            drains: &drained,
            ready: &kube.ready,
            fhd: first.0,
            available_gate: a_gate,
        },
        &mut warnings,
    );
    // Model layout: per shard, the original primary, then replicas in restart order, then
    // replicas never restarted.
    let shape = layout::layout(&roster, &restarts, cells.as_ref(), &mut warnings)?;
    let slots = layout::durations(&shape, &restarts);
    let op = operator::operator(
        &shape,
        &restarts,
        &drained,
        &kube.candidates,
        a_gate,
        &mut warnings,
    );
    let mut p = model::model(
        &shape,
        &grid,
        &delays,
        &slots,
        &op,
        cells.as_ref(),
        &restarts,
    )?;
    let (burst_list, total_errors) = bursts::bursts(&logs, drained.t0);
    bursts::read_rate(&mut p, total_errors, &mut warnings);
    if let Err(e) = p.check() {
        return Err(format!("the fitted model is not valid: {e}"));
    }
    Ok(Fit {
        params: p,
        t0: drained.t0,
        vtgates: logs.iter().map(|l| l.name.clone()).collect(),
        tablets: slots.tablets,
        restarts,
        bursts: burst_list,
        refresh,
        phases: grid.phases,
        delays: [delays.first, delays.stream],
        warnings,
        inputs: described,
    })
}

/// The operator's Available gate (ns): `--available-timeout`, else 30 s.
fn available_gate(opts: &FitOptions) -> i64 {
    opts.available_timeout
        .unwrap_or(SimDuration::from_secs(30))
        .as_nanos() as i64
}

/// A non-negative duration of `x` ns (a negative one is zero).
fn dur(x: i64) -> SimDuration {
    SimDuration::from_nanos(x.max(0) as u64)
}

/// `v` rounded to the nearest multiple of `q`.
fn round_to(v: i64, q: i64) -> i64 {
    (v + q / 2).div_euclid(q) * q
}

/// A time in seconds for messages.
pub fn fmt_t(ns: i64) -> String {
    format!("{:.6}s", ns as f64 / 1e9)
}

/// The serving instant of each fitted restart in the model's own replay, by alias order of
/// [`Fit::tablets`] (for the report's residuals).
pub fn replayed_serving(f: &Fit) -> Vec<SimTime> {
    let run = run_detailed(&f.params, 1, RunOptions::default());
    run.restarts.iter().map(|r| r.serving_at).collect()
}
