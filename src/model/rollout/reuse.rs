//! World reuse across replicates: [`RolloutWorld::reset_in`] makes the world a finished run
//! left behind the world of a fresh run with a new seed, in place, so a worker running many
//! replicates of one parameter set keeps its vectors (tablets, views, routes, logs) and its
//! event queue instead of allocating and freeing them every run (`Model::reset`, used by
//! `WorldSpec::runner`).
//!
//! The rule: a reset world must run exactly as [`RolloutWorld::simulation_with_logs`]'s
//! does, digest included; the tests below compare the two on many seeds and parameter sets.
//! Every struct is destructured without `..`, so a field added to the world (or to a tablet,
//! view, vtgate, route or shard) does not compile here until the reset sets it.

use super::params::Phase;
use super::world::{
    jitter, phase_draw, phase_firsts, RolloutWorld, Route, ShardOp, Tablet, Tick, View, Vtgate, NONE,
};
use crate::model::dist::offset_of;
use crate::sim::rng::{cached_stream, uniform01};
use crate::sim::{SimDuration, SimTime, Simulation};

impl RolloutWorld {
    /// Make `sim`'s world (left by a finished run, or fresh, of its own parameters) the world
    /// [`Self::simulation_with_logs`] builds with `seed` and `logs`, and schedule the same
    /// initial events in the same order on `sim`, which must have been
    /// [`Simulation::restart`]ed.
    pub(super) fn reset_in(sim: &mut Simulation<RolloutWorld>, seed: u64, logs: bool) {
        let RolloutWorld {
            p,
            // Depends only on the parameters (the cells' mask is re-applied below, as the
            // constructor applies it).
            cells: _,
            tablets,
            gates,
            views,
            routes,
            pending_discoveries,
            operator,
            workload,
            bursts,
        } = &mut sim.world;
        // The components, each destructured too.
        let super::tablet::Tablets {
            list: tablets,
            restarts,
            rollout_start,
            next_addr,
            spare_discovered,
        } = tablets;
        let super::vtgate::Gates {
            vtgates: _, // below, with the first polls
            polls,
            partial_reloads,
            poll_log,
            journal,
            // A property of the model (the twin), kept.
            step_dials: _,
            // Kept too (parameters and nesting); the ring is refilled with the first polls.
            use_ticks: _,
            ticks,
            tick_head: _,
            firsts: _,
        } = gates;
        let super::operator::Operator {
            shard_ops,
            shards_done,
            rollout_end,
            prs,
        } = operator;
        let super::workload::Workload {
            reads_ok,
            reads_dead,
            reads_none,
            writes_ok,
            ok_read_ns,
            ok_write_ns,
            writes_failed,
            // These four depend only on the parameters, which a reset keeps.
            read_rate_s: _,
            write_rate_s: _,
            per_query: _,
            shards: _,
            exposures,
            rngs: workload_rngs,
        } = workload;
        ticks.clear();
        let per = p.replicas_per_shard as usize + 1;
        let n = tablets.len();
        for (t, tab) in tablets.iter_mut().enumerate() {
            let Tablet {
                shard,
                primary,
                serving,
                process_up,
                addr,
                record,
                restart,
                publish_at,
                serve_at,
                probe_origin,
                avail_gen,
                rng,
            } = tab;
            *shard = (t / per) as u16;
            *primary = t % per == 0;
            *serving = true;
            *process_up = true;
            *addr = t as u32;
            *record = t as u32;
            *restart = NONE;
            *publish_at = SimTime::ZERO;
            *serve_at = SimTime::ZERO;
            *probe_origin = SimTime::ZERO;
            *avail_gen = 0;
            rng.reseed(seed);
        }
        let backoff = p.vtgate.health_check_retry_delay.as_nanos();
        for row in views.chunks_exact_mut(n) {
            for (t, (v, tab)) in row.iter_mut().zip(tablets.iter()).enumerate() {
                *v = View {
                    hc_addr: t as u32,
                    gen: 0,
                    connected: true,
                    serving: true,
                    primary: tab.primary,
                    backoff,
                    contrib: 0,
                };
            }
        }
        routes.fill(Route::START);
        for op in shard_ops.iter_mut() {
            let ShardOp {
                order,
                next,
                restarted,
                prs_old,
                prs_new,
                done,
                rng,
            } = op;
            order.clear();
            *next = 0;
            restarted.clear();
            *prs_old = 0;
            *prs_new = 0;
            *done = false;
            rng.reseed(seed);
        }
        spare_discovered.extend(restarts.drain(..).map(|r| r.discovered));
        *pending_discoveries = 0;
        *shards_done = 0;
        *rollout_start = SimTime::MAX;
        *rollout_end = SimTime::ZERO;
        *next_addr = n as u32;
        *polls = 0;
        *partial_reloads = 0;
        poll_log.clear();
        exposures.clear();
        bursts.clear();
        for rng in workload_rngs.iter_mut() {
            rng.reseed(seed);
        }
        *reads_ok = 0;
        *reads_dead = 0;
        *reads_none = 0;
        *writes_ok = 0;
        *ok_read_ns = 0;
        *ok_write_ns = 0;
        *writes_failed = 0;
        match (logs, journal.as_mut()) {
            (true, Some(j)) => j.clear(),
            (true, None) => *journal = Some(Vec::new()),
            (false, _) => *journal = None,
        }
        prs.clear();
        sim.world.mask_unwatched();

        // The vtgates' phases and first polls, as the fresh world draws and schedules them.
        let tper = sim.world.p.vtgate.tablet_refresh_interval;
        let fleet_base = match &sim.world.p.vtgate.phase {
            Phase::Clustered { .. } => uniform01(&mut cached_stream(seed, "vtgate-fleet", 0)),
            _ => 0.0,
        };
        let poll_jitter = sim.world.p.vtgate.poll_jitter;
        phase_firsts(seed, poll_jitter, &mut sim.world.gates.firsts);
        for g in 0..sim.world.gates.vtgates.len() {
            let w = &mut sim.world;
            let Vtgate {
                phase,
                next_base,
                rng,
            } = &mut w.gates.vtgates[g];
            rng.reseed(seed);
            let u = phase_draw(rng, poll_jitter, w.gates.firsts[g]);
            let d = match &w.p.vtgate.phase {
                Phase::Uniform => offset_of(u, tper),
                Phase::Clustered { window } => {
                    let x = fleet_base * tper.as_nanos() as f64 + u * window.as_nanos() as f64;
                    SimDuration::from_nanos((x as u64) % tper.as_nanos())
                }
                Phase::Explicit { offsets } => offsets[g],
            };
            *phase = SimTime::ZERO + d;
            *next_base = *phase;
            let first = *phase + jitter(rng, w.p.vtgate.poll_jitter);
            w.gates.ticks.push(Tick {
                at: first,
                seq: 0,
                g: g as u16,
            });
        }
        RolloutWorld::schedule_first_polls(sim);
        RolloutWorld::plan_rollout(sim);
        RolloutWorld::schedule_first_queries(sim);
    }
}

#[cfg(test)]
mod tests {
    use crate::model::rollout::{Phase, ReplicaOrder, RolloutParams, WorkloadMode};
    use crate::model::{RunOptions, WorldSpec};
    use crate::sim::rng::replicate_seed;
    use crate::sim::SimDuration;
    use ron::extensions::Extensions;

    /// The world of shipped model file `models/NAME.ron` (the file `build.rs` embeds as
    /// `builtin:NAME`), read with the RON extensions model files are read with; the model
    /// layer does not import the experiment layer's loader.
    fn builtin(name: &str) -> RolloutParams {
        #[derive(serde::Deserialize)]
        #[serde(rename = "Model")]
        struct ModelFile {
            world: WorldSpec,
        }
        let path = format!("{}/models/{name}.ron", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("a shipped model file");
        let file: ModelFile = ron::Options::default()
            .with_default_extension(Extensions::IMPLICIT_SOME | Extensions::UNWRAP_VARIANT_NEWTYPES)
            .from_str(&text)
            .expect("shipped models parse");
        match file.world {
            WorldSpec::Rollout(p) => p,
            _ => panic!("{name} is not a rollout model"),
        }
    }

    /// Parameter sets that take every branch of the reset: phases uniform, clustered and
    /// explicit, jitter, several shards in parallel, random replica order, per-query mode,
    /// no queries, the primary restarted or not.
    fn cases() -> Vec<(&'static str, RolloutParams)> {
        let default = builtin("rollout-default");
        let mut peer = RolloutParams::default().zero_delays(SimDuration::from_secs(20));
        peer.vtgates = 10;
        peer.replicas_per_shard = 2;
        peer.operator.restart_primary = false;
        peer.workload.replica_read_rps = 0.0;
        peer.workload.primary_write_rps = 0.0;
        let mut clustered = default.clone();
        clustered.vtgate.phase = Phase::Clustered {
            window: SimDuration::from_secs(5),
        };
        clustered.vtgate.poll_jitter = SimDuration::from_secs(2);
        let mut shards = default.clone();
        shards.shards = 3;
        shards.operator.parallel_shards = true;
        shards.operator.replica_order = ReplicaOrder::Random;
        let mut per_query = default.clone();
        per_query.shards = 2;
        per_query.vtgates = 3;
        per_query.workload.mode = WorkloadMode::PerQuery;
        per_query.workload.replica_read_rps = 20.0;
        per_query.workload.primary_write_rps = 5.0;
        let multicell = builtin("rollout-multicell");
        let mut outage = multicell.clone();
        outage.vtgate.topo_outage.start = SimDuration::from_secs(60);
        outage.vtgate.topo_outage.length = SimDuration::from_secs(90);
        outage.vtgate.topo_outage.cells = vec!["zone2".into()];
        vec![
            ("rollout-default", default),
            ("rollout-multicell", multicell),
            ("multicell, zone2 topology outage", outage),
            ("incident-000", builtin("incident-000")),
            ("peer", peer),
            ("clustered+jitter", clustered),
            ("3 shards parallel random", shards),
            ("per-query 2 shards", per_query),
        ]
    }

    /// One runner over many seeds gives, run after run, exactly the fresh runs' outputs:
    /// digest, events and every metric.
    #[test]
    fn a_reset_world_runs_as_a_fresh_one() {
        for (name, p) in cases() {
            let spec = WorldSpec::Rollout(p);
            assert!(spec.validate().is_ok(), "{name}");
            let mut runner = spec.runner();
            let mut digests = std::collections::HashSet::new();
            for r in 0..150 {
                let seed = replicate_seed(3, r);
                let fresh = spec.run(seed, RunOptions::default());
                let reused = runner.run(seed, RunOptions::default());
                assert_eq!(reused.digest, fresh.digest, "{name}, replicate {r}");
                assert_eq!(reused.events, fresh.events, "{name}, replicate {r}");
                assert_eq!(reused.metrics, fresh.metrics, "{name}, replicate {r}");
                digests.insert(fresh.digest);
            }
            // The seeds do reach the runs (a reset that kept the old seed would still agree
            // with itself, not with 150 distinct fresh runs).
            assert!(digests.len() > 100, "{name}: {} distinct digests", digests.len());
        }
    }

    /// With a report asked for (logs kept), after runs without: the same report and digest.
    #[test]
    fn a_reset_world_reports_as_a_fresh_one() {
        let spec = WorldSpec::Rollout(builtin("incident-000"));
        let mut runner = spec.runner();
        for r in 0..6 {
            let seed = replicate_seed(9, r);
            let opts = || RunOptions {
                report: r % 2 == 1,
                ..Default::default()
            };
            let fresh = spec.run(seed, opts());
            let reused = runner.run(seed, opts());
            assert_eq!(reused.digest, fresh.digest, "replicate {r}");
            assert_eq!(reused.report, fresh.report, "replicate {r}");
        }
    }
}
