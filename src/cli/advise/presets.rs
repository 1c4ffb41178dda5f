//! `vtsim advise --preset NAME`: the preset questions, each a few engine searches, and the
//! flags a preset shares with the other forms.

use super::PresetArgs;
use crate::cli::bad;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use vtsim::advise;

/// A preset's list of durations: `list` parsed by `parse`, or `defaults` (seconds) when the
/// flag is not given.
fn durations_or(
    list: &Option<String>,
    parse: fn(&str) -> Result<Vec<vtsim::sim::SimDuration>, String>,
    defaults: &[u64],
) -> Result<Vec<vtsim::sim::SimDuration>> {
    match list {
        Some(s) => parse(s).map_err(bad),
        None => Ok(defaults
            .iter()
            .map(|&s| vtsim::sim::SimDuration::from_secs(s))
            .collect()),
    }
}

/// The flags a preset shares with the other forms, and the paths the user `--set`.
pub struct Shared {
    pub vtgates: Option<u32>,
    pub target: Option<f64>,
    pub target_risk: f64,
    pub gate: Option<String>,
    pub sets: Vec<String>,
    /// `--out`: the folder the rollout-frontier and fleet presets write their charts to.
    pub out: Option<PathBuf>,
}

/// `advise --preset NAME`: one of the preset questions, each a few engine searches.
pub fn advise_preset(
    model: &str,
    world: &vtsim::model::WorldSpec,
    p: &PresetArgs,
    c: &Shared,
    search: advise::SearchBudget,
    json: bool,
    pool: &rayon::ThreadPool,
) -> Result<ExitCode> {
    use vtsim::sim::SimDuration;
    let dur = |flag: &str, v: &str| SimDuration::parse(v).map_err(|m| bad(format!("{flag}: {m}")));
    let t0 = Instant::now();
    let mut say = |tag: &str, s: &advise::Search, t: &advise::Tested, total: u64| {
        eprintln!(
            "vtsim advise: {tag}: {}={}: {} after {} runs (estimate {}); {} runs so far, {:.1} s",
            s.knob,
            t.value.label,
            t.decision.word(),
            t.runs,
            advise::num(t.estimate),
            total,
            t0.elapsed().as_secs_f64()
        )
    };
    let kind = world.kind();
    let (text, doc) = match p.name.as_deref().unwrap_or_default() {
        "rollout-frontier" => {
            use advise::frontier;
            let gates = durations_or(&p.gates, frontier::parse_gates, &frontier::DEFAULT_GATES)?;
            let q = frontier::Frontier {
                gates,
                vtgates: c.vtgates.unwrap_or(10),
                target: c.target.unwrap_or(c.target_risk),
                search,
            };
            let res = pool
                .install(|| {
                    frontier::run(world, &q, &mut |g, s, t, n| {
                        say(
                            &format!("gate {}", vtsim::experiment::plan::duration_label(g)),
                            s,
                            t,
                            n,
                        )
                    })
                })
                .map_err(bad)?;
            let dir = c.out.clone().unwrap_or_else(|| PathBuf::from("advise-out"));
            std::fs::create_dir_all(&dir)
                .map_err(|e| bad(format!("--out {}: {e}", dir.display())))?;
            let runs: u64 = res.iter().map(|g| g.outcome.runs).sum();
            let footer = format!(
                "vtsim {} · {model} · advise --preset rollout-frontier --vtgates {} · {runs} runs · seed {:#x}",
                env!("CARGO_PKG_VERSION"),
                q.vtgates,
                q.search.seed
            );
            vtsim::chart::draw_files_footed(
                &frontier::chart(&q, &res),
                &dir,
                "rollout-frontier",
                &footer,
            )?;
            let mut text = frontier::render(model, &q, &res);
            text.push_str(&format!(
                "Chart: {}/rollout-frontier.png (and .svg).\n",
                dir.display()
            ));
            let searches: Vec<_> = res.iter().map(|g| (&g.search, &g.outcome)).collect();
            let mut pj = frontier::preset_json(&q, &res);
            pj["chart"] = serde_json::json!([
                dir.join("rollout-frontier.png").display().to_string(),
                dir.join("rollout-frontier.svg").display().to_string()
            ]);
            (text, advise::preset_doc(model, kind, pj, &searches))
        }
        "site-poller" => {
            use advise::site_poller as sp;
            let intervals =
                durations_or(&p.intervals, sp::parse_intervals, &sp::DEFAULT_INTERVALS)?;
            let q = sp::Question {
                intervals,
                max_threshold: p.max_threshold,
                probe_error: p.probe_error,
                false_per_day: p.false_alarms_per_day,
                detect_budget: dur("--detect-budget", &p.detect_budget)?,
                first_down: dur("--first-down", &p.first_down)?,
                search,
            };
            let rows = pool.install(|| sp::run(world, &q, &mut say)).map_err(bad)?;
            let searches: Vec<_> = rows
                .iter()
                .flat_map(|r| [(&r.quiet.0, &r.quiet.1), (&r.fast.0, &r.fast.1)])
                .collect();
            (
                sp::render(model, world, &q, &rows),
                advise::preset_doc(model, kind, sp::preset_json(world, &q, &rows), &searches),
            )
        }
        "connpool" => {
            use advise::connpool as cp;
            let variants = match &p.variants {
                Some(s) => cp::parse_variants(s).map_err(bad)?,
                None => cp::VARIANTS.iter().map(|s| s.to_string()).collect(),
            };
            let q = cp::Question {
                variants,
                load_rps: p.load_rps,
                search,
            };
            let rows = pool.install(|| cp::run(world, &q, &mut say)).map_err(bad)?;
            let searches: Vec<_> = rows
                .iter()
                .flat_map(|r| {
                    std::iter::once((&r.load.0, &r.load.1))
                        .chain(r.capacity.as_ref().map(|c| (&c.0, &c.1)))
                })
                .collect();
            (
                cp::render(model, world, &q, &rows),
                advise::preset_doc(model, kind, cp::preset_json(&q, &rows), &searches),
            )
        }
        "fleet" => {
            use advise::fleet as fl;
            let q = fl::Question {
                read_rps: p.read_rps,
                replicas: fl::parse_replicas(&p.replicas).map_err(bad)?,
                gate: match &c.gate {
                    Some(g) => dur("--gate", g)?,
                    None => fl::DEFAULT_GATE,
                },
                target: c.target.unwrap_or(fl::DEFAULT_TARGET),
                variant: p
                    .variant
                    .as_deref()
                    .map(fl::parse_variant)
                    .transpose()
                    .map_err(bad)?,
                vtgates: c.vtgates,
                keep: c.sets.clone(),
                search,
            };
            let rows = pool.install(|| fl::run(world, &q, &mut say)).map_err(bad)?;
            let mut text = fl::render(model, world, &q, &rows);
            let mut pj = fl::preset_json(&q, &rows);
            if let Some(dir) = &c.out {
                std::fs::create_dir_all(dir)
                    .map_err(|e| bad(format!("--out {}: {e}", dir.display())))?;
                let runs: u64 = rows.iter().map(|r| r.result.1.runs).sum();
                let footer = format!(
                    "vtsim {} · {model} · advise --preset fleet --read-rps {} · {runs} runs · seed {:#x}",
                    env!("CARGO_PKG_VERSION"),
                    advise::num(q.read_rps),
                    q.search.seed
                );
                vtsim::chart::draw_files_footed(
                    &fl::chart(&q, &rows),
                    dir,
                    "fleet-capacity",
                    &footer,
                )?;
                text.push_str(&format!(
                    "Chart: {}/fleet-capacity.png (and .svg).\n",
                    dir.display()
                ));
                pj["chart"] = serde_json::json!([
                    dir.join("fleet-capacity.png").display().to_string(),
                    dir.join("fleet-capacity.svg").display().to_string()
                ]);
            }
            let searches: Vec<_> = rows.iter().map(|r| (&r.result.0, &r.result.1)).collect();
            (text, advise::preset_doc(model, kind, pj, &searches))
        }
        _ => {
            use advise::proxysql as px;
            let q = px::Question {
                connect_budget: dur("--connect-budget", &p.connect_budget)?,
                max_reads_lost: p.max_reads_lost,
                search,
            };
            let rows = pool.install(|| px::run(world, &q, &mut say)).map_err(bad)?;
            let searches: Vec<_> = rows.iter().map(|r| (&r.result.0, &r.result.1)).collect();
            (
                px::render(model, &q, &rows),
                advise::preset_doc(model, kind, px::preset_json(&q, &rows), &searches),
            )
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        print!("{text}");
    }
    eprintln!("({:.1} s)", t0.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}
