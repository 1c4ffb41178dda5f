//! The model: the rollout parameters that replay the fitted instants exactly (the
//! durations `Observed` samples drawn in order, the phases `Explicit`, every other delay
//! fixed).

use super::cells::Cells;
use super::health::HealthDelays;
use super::layout::{Layout, TabletDurations};
use super::operator::OperatorFit;
use super::phase::Grid;
use super::{dur, FitResult, TabletFit};
use crate::fit::names::NS;
use crate::model::dist::{DurationDist, ObservedDraw};
use crate::model::rollout::{Phase, PrsCandidate, ReplicaOrder, RolloutParams, WorkloadMode};
use crate::sim::SimDuration;

/// The model of the fitted stages (the read rate is set later, from the bursts). Fails when
/// the cells do not give the model's shape. The horizon is twice the last response or
/// serving instant of `restarts`, at least 1 h.
pub(super) fn model(
    layout: &Layout,
    grid: &Grid,
    delays: &HealthDelays,
    slots: &TabletDurations,
    op: &OperatorFit,
    cells: Option<&Cells>,
    restarts: &[TabletFit],
) -> FitResult<RolloutParams> {
    let obs = |samples: Vec<SimDuration>| DurationDist::Observed {
        samples,
        draw: ObservedDraw::InOrder,
    };
    let per = layout.per;
    let mut p = RolloutParams {
        vtgates: grid.phases.len() as u32,
        shards: layout.shards.len() as u32,
        replicas_per_shard: (per - 1) as u32,
        ..RolloutParams::default()
    };
    p.vtgate.tablet_refresh_interval = dur(grid.tper);
    p.vtgate.phase = Phase::Explicit {
        offsets: grid.phases.iter().map(|(o, _)| dur(*o)).collect(),
    };
    p.vtgate.poll_jitter = SimDuration::ZERO;
    p.vtgate.topo_read_latency = SimDuration::ZERO;
    p.vtgate.first_health_delay = dur(delays.first.0);
    p.vtgate.health_stream_delay = dur(delays.stream.0);
    p.tablets.drain_grace = obs(slots.drain_grace.clone());
    p.tablets.restart = obs(slots.restart.clone());
    p.tablets.serving_after_publish = obs(slots.serving_after_publish.clone());
    p.tablets.readiness_probe_period = SimDuration::ZERO;
    p.tablets.readiness_flaps_per_hour = 0.0;
    p.tablets.keep_address_on_restart = false;
    p.operator.tablet_available_timeout = dur(op.available_gate);
    p.operator.step_latency = obs(op.steps.clone());
    let in_alias_order = op
        .restart_orders
        .iter()
        .all(|o| o.iter().enumerate().all(|(i, k)| *k as usize == i + 1));
    p.operator.replica_order = if in_alias_order {
        ReplicaOrder::Alias
    } else {
        ReplicaOrder::Listed {
            order: op.restart_orders.clone(),
        }
    };
    if let Some(c) = cells {
        p.cells = c.params(&layout.per_shard, &layout.shards)?;
    }
    let last = (per as u32).saturating_sub(2);
    let positions = &op.positions;
    p.operator.prs_candidate = if positions.iter().all(|x| *x == 0) {
        PrsCandidate::FirstRestarted
    } else if positions.iter().all(|x| *x == last) {
        PrsCandidate::LastRestarted
    } else {
        PrsCandidate::Restarted {
            positions: positions.clone(),
        }
    };
    p.operator.prs_duration = obs(op.prs.clone());
    p.operator.prs_replica_window = dur(op.window.unwrap_or(2 * NS));
    p.operator.restart_primary = layout.restart_primary;
    p.operator.parallel_shards = true;
    p.operator.start_at = SimDuration::ZERO;
    p.workload.mode = WorkloadMode::Fast;
    let last = restarts
        .iter()
        .flat_map(|r| r.discovered.iter().flatten().copied().chain([r.serve.ns]))
        .max()
        .unwrap_or(0);
    p.horizon = dur((2 * last).max(3600 * NS));
    Ok(p)
}
