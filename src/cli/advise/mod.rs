//! `vtsim advise`: the form asked for (`--knob`, `--gate`, `--refresh-interval` or `--preset`),
//! the flags it would not read refused, the model loaded, and the `--knob` / `--gate` search.
//! The `--refresh-interval` form is in [`gate`], the presets in [`presets`].

mod args;
mod gate;
mod presets;

pub use args::{AdviseArgs, PresetArgs};

use super::bad;
use super::progress::{lock, Ticker};
use crate::cli::Cli;
use anyhow::Result;
use clap::parser::ValueSource;
use clap::CommandFactory;
use std::process::ExitCode;
use std::time::Instant;
use vtsim::advise;
use vtsim::experiment::files::builtin_model;
use vtsim::experiment::load_model_arg;
use vtsim::experiment::runner::{check_threads, thread_pool};
use vtsim::replay;

/// Answers the advise question `a` asks; `matches` are the whole command line's (to tell a
/// flag given from its default).
pub fn run(a: AdviseArgs, matches: &clap::ArgMatches) -> Result<ExitCode> {
    let AdviseArgs {
        knob,
        metric,
        target,
        direction,
        want,
        range,
        step,
        sets,
        costs,
        batch,
        max_runs,
        budget,
        gate,
        refresh_interval,
        vtgates,
        target_risk,
        model,
        rollouts,
        seed,
        threads,
        json,
        exceeds,
        preset,
        out,
    } = a;
    let fleet = preset.name.as_deref() == Some("fleet");
    let forms = [
        knob.is_some(),
        gate.is_some() && !fleet,
        refresh_interval.is_some(),
        preset.name.is_some(),
    ];
    match forms.iter().filter(|&&f| f).count() {
        0 => {
            return Err(bad(
                "advise needs one of --knob PATH (any model and knob), --gate DURATION \
                 (rollout: the largest safe refresh interval under a gate), \
                 --refresh-interval DURATION (rollout: the smallest safe gate) or \
                 --preset NAME (rollout-frontier, connpool, site-poller, proxysql, fleet)",
            ))
        }
        1 => {}
        _ => {
            return Err(bad(
                "give only one of --knob, --gate, --refresh-interval and --preset",
            ))
        }
    }
    // The form asked for, by the names the flags' table below uses.
    let form = match (&knob, &refresh_interval, preset.name.as_deref()) {
        (Some(_), _, _) => "knob",
        (_, Some(_), _) => "refresh-interval",
        (_, _, Some(name)) => name,
        _ => "gate",
    };
    // Each flag read by only some forms (by its clap id, the field's name), and the
    // forms that read it.
    let flags: [(&str, &[&str]); 27] = [
        ("metric", &["knob"]),
        ("exceeds", &["knob"]),
        ("direction", &["knob"]),
        ("want", &["knob"]),
        ("costs", &["knob"]),
        ("target", &["knob", "gate", "rollout-frontier", "fleet"]),
        (
            "target_risk",
            &["gate", "refresh-interval", "rollout-frontier"],
        ),
        ("range", &["knob", "gate"]),
        ("step", &["knob", "gate", "refresh-interval"]),
        ("gate", &["gate", "fleet"]),
        (
            "vtgates",
            &["gate", "refresh-interval", "rollout-frontier", "fleet"],
        ),
        ("rollouts", &["refresh-interval"]),
        ("gates", &["rollout-frontier"]),
        ("out", &["rollout-frontier", "fleet"]),
        ("intervals", &["site-poller"]),
        ("probe_error", &["site-poller"]),
        ("false_alarms_per_day", &["site-poller"]),
        ("detect_budget", &["site-poller"]),
        ("first_down", &["site-poller"]),
        ("max_threshold", &["site-poller"]),
        ("variants", &["connpool"]),
        ("load_rps", &["connpool"]),
        ("connect_budget", &["proxysql"]),
        ("max_reads_lost", &["proxysql"]),
        ("read_rps", &["fleet"]),
        ("replicas", &["fleet"]),
        ("variant", &["fleet"]),
    ];
    let given = matches
        .subcommand_matches("advise")
        .expect("the advise subcommand");
    unread_flag(form, given, &flags)?;
    let threads = check_threads(threads)?;
    let default_model = match preset.name.as_deref() {
        Some("connpool") => "connpool-default",
        Some("fleet") => "fleet-default",
        Some("site-poller") => "playground",
        Some("proxysql") => "proxysql-reader-fallback",
        _ => "rollout-default",
    };
    let mf = match &model {
        Some(p) => load_model_arg(p)?,
        None => builtin_model(default_model),
    };
    let world = replay::with_sets(&mf.world, &sets)?;
    let pool = thread_pool(threads)?;
    let budget = advise::SearchBudget {
        batch,
        max_runs,
        budget,
        seed,
    };
    if preset.name.is_some() {
        let shared = presets::Shared {
            vtgates,
            target,
            target_risk,
            gate,
            sets: sets
                .iter()
                .filter_map(|s| s.split_once('=').map(|(p, _)| p.trim().to_string()))
                .collect(),
            out,
        };
        return presets::advise_preset(&mf.name, &world, &preset, &shared, budget, json, &pool);
    }
    if let Some(refresh_interval) = refresh_interval {
        let step = step.unwrap_or_else(|| "5s".into());
        let vtgates = vtgates.ok_or_else(|| bad("--refresh-interval needs --vtgates N"))?;
        return gate::advise_gate(
            &world,
            &refresh_interval,
            vtgates,
            target_risk,
            rollouts,
            &step,
            budget,
            &mf.name,
            json,
            &pool,
        );
    }
    let (s, sampler, today) = if let Some(g) = gate {
        let gate = vtsim::sim::SimDuration::parse(&g).map_err(|m| bad(format!("--gate: {m}")))?;
        let q = advise::rollout::Today {
            gate,
            vtgates: vtgates.ok_or_else(|| bad("--gate needs --vtgates N"))?,
            target: target.unwrap_or(target_risk),
            range,
            step,
            search: budget,
            alpha: None,
        };
        let (s, m) = advise::rollout::today(&world, &q).map_err(bad)?;
        (s, m, Some(q))
    } else {
        let ask = advise::Ask {
            knob: knob.expect("one form"),
            metric: metric.ok_or_else(|| bad("--knob needs --metric NAME"))?,
            target: target.ok_or_else(|| bad("--knob needs --target X"))?,
            want: if want == "above" {
                advise::Want::Above
            } else {
                advise::Want::Below
            },
            direction: if direction == "max" {
                advise::Direction::Max
            } else {
                advise::Direction::Min
            },
            range,
            step,
            search: budget,
            costs,
            exceeds,
            alpha: None,
        };
        let (s, m) = advise::prepare(&world, &ask).map_err(bad)?;
        (s, m, None)
    };
    eprintln!(
        "vtsim advise: {} candidates of {}, batches of {} doubling up to {} runs each, \
         budget {} runs",
        s.candidates.len(),
        s.knob,
        s.batch,
        s.max_runs,
        s.budget
    );
    let t0 = Instant::now();
    let ticker = std::sync::Mutex::new(Ticker::new());
    let o = pool.install(|| {
        advise::search_with(
            &s,
            |c, r| sampler.sample(c, r),
            &mut |t, total| lock(&ticker).decided(&s, t, total),
            &mut |c, n| lock(&ticker).runs(&s.knob, &s.candidates[c].label, n),
        )
    });
    lock(&ticker).finish();
    if json {
        let mut v = advise::to_json(&mf.name, world.kind(), &s, &o);
        if let Some(q) = &today {
            v["preset"] = advise::rollout::preset_json(q, &o);
        }
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print!("{}", advise::render(&mf.name, &s, &o));
        if let Some(q) = &today {
            print!("{}", advise::rollout::render_today(q, &s, &o));
        }
    }
    eprintln!("({:.1} s)", t0.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

/// Refuse a flag the chosen form of `advise` would not read (it would be ignored without a
/// word): `flags` lists each flag by its clap id with the forms that read it (`knob`, `gate`,
/// `refresh-interval` or a preset's name); a flag counts as given when its value came from the
/// command line, not from its default.
fn unread_flag(form: &str, given: &clap::ArgMatches, flags: &[(&str, &[&str])]) -> Result<()> {
    let name = |f: &str| match f {
        "knob" | "gate" | "refresh-interval" => format!("--{f}"),
        p => format!("--preset {p}"),
    };
    let cmd = Cli::command();
    let advise = cmd
        .find_subcommand("advise")
        .expect("the advise subcommand");
    for (id, forms) in flags {
        if given.value_source(id) == Some(ValueSource::CommandLine) && !forms.contains(&form) {
            let long = advise
                .get_arguments()
                .find(|a| a.get_id() == id)
                .and_then(|a| a.get_long())
                .expect("an advise flag");
            let readers: Vec<String> = forms.iter().map(|f| name(f)).collect();
            return Err(bad(format!(
                "--{long} is not read by {} (only by {}): leave it out",
                name(form),
                readers.join(", ")
            )));
        }
    }
    Ok(())
}
