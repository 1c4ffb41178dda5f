//! The `vtsim` command line. Parsing and printing only; the work is in the library.

use anyhow::Result;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::fs::File;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use vtsim::advise;
use vtsim::experiment::error::{io_words, BadInput};
use vtsim::experiment::files::{builtin_model, file_kind, model_source, FileKind};
use vtsim::experiment::plan::load_plan;
use vtsim::experiment::runner::{check_threads, default_out, thread_pool, RunConfig};
use vtsim::experiment::{load_model_arg, InputError};
use vtsim::replay;
use vtsim::report::{merge, run_plan};
use vtsim::tracediff;

#[derive(Parser)]
#[command(
    name = "vtsim",
    version,
    about = "Deterministic discrete-event simulator of Vitess / MySQL fleet timing contracts"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
// Parsed once per process; the size of the advise variant does not matter.
#[allow(clippy::large_enum_variant)]
enum Cmd {
    /// Run a sweep: every (point, replicate) of EXPERIMENT, written to notebooks-out/<name>/.
    Run {
        /// The experiment file (RON).
        experiment: PathBuf,
        /// Worker threads, 1 to 1024 (results are identical for any number).
        #[arg(long)]
        threads: Option<usize>,
        /// Run only shard K of N (1-based), or `auto/N` / `auto` to take K (and N) from
        /// JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm); join the shards
        /// with `vtsim merge`.
        #[arg(long, value_name = "K/N|auto/N|auto")]
        shard: Option<String>,
        /// Go on from the rows an interrupted run wrote.
        #[arg(long)]
        resume: bool,
        /// Output directory [default: notebooks-out/<experiment name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the run's summary as JSON on stdout (schema vtsim.run, docs/outputs.md).
        #[arg(long)]
        json: bool,
    },
    /// Fit a rollout model to an incident's logs: vtgate logs (glog or JSON, with or without
    /// the kubectl --timestamps prefix), the short form `[t+44s] vtgate-02: replica-A false =>
    /// true (REPLICA)`, kubectl events and pods JSON; files or folders (docs/fit.md). With
    /// --cluster alone: a model of a VitessCluster's shape and vtgate flags.
    Fit {
        /// Input files or folders (each file recognised by its content).
        #[arg(required_unless_present = "cluster")]
        paths: Vec<PathBuf>,
        /// The model file to write (the report goes beside it: .fit.txt, .fit.csv); required
        /// with log inputs; with --cluster alone, the model is printed when it is not given.
        #[arg(long)]
        out: Option<PathBuf>,
        /// A VitessCluster YAML (planetscale.com/v2): alone, its cells, vtgates, tablet pools
        /// and vtgate flags as a model; with logs, its refresh interval for the fit.
        #[arg(long, value_name = "FILE")]
        cluster: Option<PathBuf>,
        /// vtgate's --tablet_refresh_interval [default: estimated from the poll spacing].
        #[arg(long, value_name = "D")]
        refresh_interval: Option<String>,
        /// The operator's Available gate (tabletAvailableSeconds) [default: 30s].
        #[arg(long, value_name = "D")]
        available_timeout: Option<String>,
    },
    /// Run one replicate of a model and print its metrics and trace digest.
    Replay {
        /// The model file (RON), or `builtin:NAME` for a model built into vtsim.
        model: PathBuf,
        /// The run seed, decimal or 0x hex as replay prints it [default: the model file's
        /// `seed`, else 1].
        #[arg(long, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Write every event as a JSON line to FILE.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Override a parameter: --set operator.tablet_available_timeout=90s (RON value).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Write the run's files (timelines, charts), where the model makes any, to DIR.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Check determinism: run the seed twice here and once on another thread, compare
        /// the three traces record by record, and fail naming the first that differs.
        #[arg(long)]
        check: bool,
        /// Write what the real components would print for this run into DIR (rollout
        /// models): one log per vtgate, events.json and pods.json (docs/fit.md).
        #[arg(long, value_name = "DIR")]
        emit_logs: Option<PathBuf>,
        /// The vtgate log format of --emit-logs: glog (Vitess <= v23) or json (v24 slog).
        #[arg(long, default_value = "glog", requires = "emit_logs")]
        log_format: vtsim::fit::emit::LogFormat,
        /// Print the run as JSON (schema vtsim.replay, docs/outputs.md) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compare two JSONL traces (`replay --trace`): print the first differing record with
    /// the records before it; exit 1 if they differ, 0 if they are equal.
    Diff {
        /// The first trace.
        a: PathBuf,
        /// The second trace.
        b: PathBuf,
        /// Records of context shown before the first difference (at most 100).
        #[arg(long, default_value_t = 3)]
        context: usize,
    },
    /// Join the shard outputs of EXPERIMENT into the files of a single-machine run.
    Merge {
        /// The experiment file the shards ran.
        experiment: PathBuf,
        /// Output directory holding shards/ [default: notebooks-out/<experiment name>].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Parse and check a model or experiment file; write nothing.
    Validate {
        /// The file (RON), or `builtin:NAME`.
        file: PathBuf,
    },
    /// The smallest (or largest) knob value whose metric clears a target at 95 %: any model
    /// and knob (--knob), the rollout's refresh interval under a gate (--gate), or the
    /// rollout's gate for a refresh interval (--refresh-interval). See docs/advise.md.
    Advise {
        /// Any model: the knob's parameter path, e.g. vtgate.tablet_refresh_interval.
        #[arg(long, value_name = "PATH")]
        knob: Option<String>,
        /// With --knob: the metric that must clear the target.
        #[arg(long, value_name = "NAME")]
        metric: Option<String>,
        /// With --knob: the target (a probability for a 0/1 metric).
        #[arg(long)]
        target: Option<f64>,
        /// With --knob: `min` (the smallest value that clears) or `max` (the largest).
        #[arg(long, default_value = "min", value_parser = ["min", "max"])]
        direction: String,
        /// With --knob: the metric must be `below` or `above` the target.
        #[arg(long, default_value = "below", value_parser = ["below", "above"])]
        want: String,
        /// Candidates A..B (durations or numbers, like the parameter) [--knob default:
        /// step .. 4 × the model's value; --gate default: 1s .. 3 × gate].
        #[arg(long, value_name = "A..B")]
        range: Option<String>,
        /// Candidate step [--knob default: the model's value / 10; --gate: 1s;
        /// --refresh-interval: 5s].
        #[arg(long)]
        step: Option<String>,
        /// Override a parameter before the search (RON value), as replay --set.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// A metric whose mean is reported beside the answer (repeatable).
        #[arg(long = "cost", value_name = "NAME")]
        costs: Vec<String>,
        /// Runs in a candidate's first batch (later batches double) [default: 100 for a 0/1
        /// metric, 20 for a value].
        #[arg(long)]
        batch: Option<u64>,
        /// Most runs per candidate, at most 1e7 [default: enough for a 0/1 target; 10000].
        #[arg(long)]
        max_runs: Option<u64>,
        /// Most runs in all, at most 1e9 [default: 2e6].
        #[arg(long)]
        budget: Option<u64>,
        /// Rollout, today's knob: the operator's Available gate (30s in every release). With
        /// --preset fleet: the fleet rollout's gate [default: 120s].
        #[arg(long, value_name = "DURATION")]
        gate: Option<String>,
        /// Rollout: vtgate --tablet_refresh_interval; advise then solves for the gate.
        #[arg(long, value_name = "DURATION")]
        refresh_interval: Option<String>,
        /// Rollout (and --preset fleet): number of vtgates.
        #[arg(long)]
        vtgates: Option<u32>,
        /// Rollout (--gate, --refresh-interval, --preset rollout-frontier): target P(any failed
        /// replica read per rollout); with --refresh-interval at least about 4.3e-7 unless
        /// --rollouts is given.
        #[arg(long, default_value_t = 1e-3)]
        target_risk: f64,
        /// The model: a file or `builtin:NAME` [default: builtin:rollout-default].
        #[arg(long)]
        model: Option<PathBuf>,
        /// With --refresh-interval: rollouts per gate, at most 1e7 [default: enough that
        /// zero errors in all of them meets the target].
        #[arg(long)]
        rollouts: Option<u64>,
        /// Seed of the runs (decimal or 0x hex).
        #[arg(long, default_value = "1", value_parser = parse_seed)]
        seed: u64,
        /// Worker threads.
        #[arg(long)]
        threads: Option<usize>,
        /// Print the answer as JSON (schema vtsim.advise, docs/outputs.md).
        #[arg(long)]
        json: bool,
        /// With --knob: judge the 0/1 event `metric > X` (p99 below B is P(metric > B) below
        /// 0.01).
        #[arg(long, value_name = "X")]
        exceeds: Option<f64>,
        #[command(flatten)]
        preset: PresetArgs,
    },
    /// Measure the kernel (hold model vs a bare BinaryHeap) and sweep scaling.
    Bench {
        /// Events per hold-model measurement (1 to 1e8).
        #[arg(long, default_value_t = 5_000_000)]
        events: u64,
        /// Skip the sweep-scaling measurement.
        #[arg(long)]
        kernel_only: bool,
    },
}

/// A seed: decimal, or hex with `0x` (as `replay` prints it).
fn parse_seed(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
        None => t.replace('_', "").parse::<u64>(),
    };
    r.map_err(|_| format!("`{s}`: a seed is a number from 0 to 2^64 - 1, decimal or 0x hex"))
}

fn bad(m: impl Into<String>) -> anyhow::Error {
    BadInput(m.into()).into()
}

fn main() -> ExitCode {
    // Die quietly when a reader closes the pipe (`vtsim replay ... | head`), as Unix tools do,
    // instead of panicking on a failed print.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Parsed through the matches (as `Cli::parse` does) so that `advise` can tell a flag given
    // on the command line from its default (`ValueSource`).
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match dispatch(cli, &matches) {
        Ok(code) => code,
        Err(e) => {
            if let Some(b) = e.downcast_ref::<InputError>() {
                eprintln!("error: {b}");
                return ExitCode::from(2);
            }
            if let Some(BadInput(m)) = e.downcast_ref::<BadInput>() {
                eprintln!("error: {m}");
                return ExitCode::from(2);
            }
            // Errors from deeper down (the runner, the charts) may carry Rust's
            // "(os error N)" codes: say them in plain words.
            eprintln!("error: {}", without_os_codes(&format!("{e:#}")));
            ExitCode::from(1)
        }
    }
}

/// `s` without every " (os error N)" Rust appends to an OS error's message.
fn without_os_codes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(" (os error ") {
        let tail = &rest[i + " (os error ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            out.push_str(&rest[..i]);
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

fn show_progress() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

fn dispatch(cli: Cli, matches: &clap::ArgMatches) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Run {
            experiment,
            threads,
            shard,
            resume,
            out,
            json,
        } => {
            let shard = shard
                .map(|s| vtsim::experiment::shard_spec::parse(&s, |k| std::env::var(k).ok()))
                .transpose()
                .map_err(bad)?;
            let threads = check_threads(threads)?;
            let plan = load_plan(&experiment)?;
            let out = out.unwrap_or_else(|| default_out(&plan.experiment.name));
            let abort_after = std::env::var("VTSIM_ABORT_AFTER_JOBS")
                .ok()
                .and_then(|v| v.parse().ok());
            let cfg = RunConfig {
                threads,
                shard,
                resume,
                out,
                progress: show_progress(),
                abort_after,
            };
            eprintln!(
                "vtsim: {}: {} points x {} replicates = {} runs{}",
                plan.experiment.name,
                plan.points.len(),
                plan.replicates(),
                plan.jobs(),
                shard
                    .map(|(k, n)| format!(" (shard {k}/{n})"))
                    .unwrap_or_default()
            );
            let t0 = Instant::now();
            let s = run_plan(&plan, &cfg)?;
            let dt = t0.elapsed().as_secs_f64();
            eprintln!(
                "vtsim: {} runs in {:.2} s: simulated in {:.2} s ({:.0} runs/s, {:.2e} events/s), outputs in {:.2} s{}; wrote {}",
                s.jobs_run,
                dt,
                s.simulate_s,
                s.jobs_run as f64 / s.simulate_s,
                s.events as f64 / s.simulate_s,
                s.finalize_s,
                if s.jobs_resumed > 0 {
                    format!(", {} resumed", s.jobs_resumed)
                } else {
                    String::new()
                },
                s.dir.display()
            );
            if json {
                let v = vtsim::report::run_json(
                    &plan,
                    &s.dir,
                    shard.is_none(),
                    s.jobs_run,
                    s.jobs_resumed,
                    s.events,
                )?;
                println!("{}", serde_json::to_string_pretty(&v).expect("json"));
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Merge { experiment, out } => {
            let plan = load_plan(&experiment)?;
            let out = out.unwrap_or_else(|| default_out(&plan.experiment.name));
            merge(&plan, &out)?;
            eprintln!("vtsim: merged shards into {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Replay {
            model,
            seed,
            trace,
            sets,
            out,
            check,
            emit_logs,
            log_format,
            json,
        } => {
            let code = replay(
                &model,
                seed,
                trace.as_deref(),
                &sets,
                out.as_deref(),
                check,
                json,
            )?;
            if let Some(dir) = emit_logs {
                for p in replay::emit_logs(&model, seed, &sets, &dir, log_format)? {
                    // On stderr under --json, so stdout stays one JSON document.
                    if json {
                        eprintln!("wrote   {}", p.display());
                    } else {
                        println!("wrote   {}", p.display());
                    }
                }
            }
            Ok(code)
        }
        Cmd::Fit {
            paths,
            out,
            cluster,
            refresh_interval,
            available_timeout,
        } => {
            let dur = |flag: &str, v: Option<String>| {
                v.map(|v| {
                    vtsim::sim::SimDuration::parse(&v).map_err(|m| bad(format!("{flag}: {m}")))
                })
                .transpose()
            };
            let mut opts = vtsim::fit::FitOptions {
                refresh_interval: dur("--refresh-interval", refresh_interval)?,
                available_timeout: dur("--available-timeout", available_timeout)?,
            };
            if let Some(file) = &cluster {
                let (c, text) = match vtsim::fit::cluster_model(file) {
                    Ok(x) => x,
                    Err(vtsim::fit::FitError::Input(m)) => return Err(bad(m)),
                    Err(e) => return Err(anyhow::anyhow!("{e}")),
                };
                for w in &c.warnings {
                    eprintln!("vtsim: assumed: {w}");
                }
                if paths.is_empty() {
                    let target = out.clone().unwrap_or_else(|| PathBuf::from("cluster.ron"));
                    vtsim::experiment::files::parse_model(&target, &text).map_err(|e| {
                        anyhow::anyhow!("the cluster's model does not load back: {e}")
                    })?;
                    match &out {
                        Some(p) => {
                            vtsim::io::write_atomic(p, text.as_bytes())?;
                            println!("wrote   {}", p.display());
                        }
                        None => print!("{text}"),
                    }
                    return Ok(ExitCode::SUCCESS);
                }
                if opts.refresh_interval.is_none() {
                    opts.refresh_interval = c.refresh;
                }
            }
            let Some(out) = out else {
                return Err(bad(
                    "--out MODEL.ron is required with log inputs".to_string()
                ));
            };
            match vtsim::fit::run(&paths, &out, &opts) {
                Ok((report, files)) => {
                    print!("{report}");
                    for p in files {
                        println!("wrote   {}", p.display());
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(vtsim::fit::FitError::Input(m)) => Err(bad(m)),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            }
        }
        Cmd::Diff { a, b, context } => diff(&a, &b, context),
        Cmd::Validate { file } => validate(&file).map(|()| ExitCode::SUCCESS),
        Cmd::Bench {
            events,
            kernel_only,
        } => bench(events, kernel_only).map(|()| ExitCode::SUCCESS),
        Cmd::Advise {
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
        } => {
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
                let shared = Shared {
                    vtgates,
                    target,
                    target_risk,
                    gate,
                    sets: sets
                        .iter()
                        .filter_map(|s| s.split_once('=').map(|(p, _)| p.trim().to_string()))
                        .collect(),
                };
                return advise_preset(&mf.name, &world, &preset, &shared, budget, json, &pool);
            }
            if let Some(refresh_interval) = refresh_interval {
                let step = step.unwrap_or_else(|| "5s".into());
                let vtgates = vtgates.ok_or_else(|| bad("--refresh-interval needs --vtgates N"))?;
                return advise_gate(
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
                let gate =
                    vtsim::sim::SimDuration::parse(&g).map_err(|m| bad(format!("--gate: {m}")))?;
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
    }
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

/// The flags only a preset reads (`--vtgates`, `--target`, `--target-risk` and `--gate` are
/// shared with the other forms).
#[derive(clap::Args, Debug)]
struct PresetArgs {
    /// A preset question: rollout-frontier, connpool, site-poller, proxysql, fleet
    /// (docs/advise.md).
    #[arg(long = "preset", value_name = "NAME", value_parser = ["rollout-frontier", "connpool", "site-poller", "proxysql", "fleet"])]
    name: Option<String>,
    /// rollout-frontier: the gates [default: 10s,20s,30s,45s,60s,90s].
    #[arg(long, value_name = "LIST")]
    gates: Option<String>,
    /// rollout-frontier: the folder for rollout-frontier.png/.svg [default: advise-out];
    /// fleet: write fleet-capacity.png/.svg there.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// site-poller: poll intervals [default: 1s,2s,5s,10s].
    #[arg(long, value_name = "LIST")]
    intervals: Option<String>,
    /// site-poller: per-probe transient error probability.
    #[arg(long, default_value_t = 0.01)]
    probe_error: f64,
    /// site-poller: most false Unreachable transitions per day, all sites.
    #[arg(long, default_value_t = 1.0)]
    false_alarms_per_day: f64,
    /// site-poller: the second fault's detection p99 must be below this.
    #[arg(long, value_name = "DURATION", default_value = "75s")]
    detect_budget: String,
    /// site-poller: how long the first site has been down when the second dies.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    first_down: String,
    /// site-poller: the largest failureThreshold tried.
    #[arg(long, default_value_t = 8)]
    max_threshold: u32,
    /// connpool: variants [default: Unfixed,OnlyA,OnlyB,Fixed].
    #[arg(long, value_name = "LIST")]
    variants: Option<String>,
    /// connpool: offered requests/s for the smallest-capacity search.
    #[arg(long, default_value_t = 3000.0)]
    load_rps: f64,
    /// proxysql: mysql-connect_timeout_server_max, the user's connect budget.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    connect_budget: String,
    /// proxysql: the most read errors per replica-loss event accepted.
    #[arg(long, default_value_t = 2.0)]
    max_reads_lost: f64,
    /// fleet: replica reads/s per shard (all vtgates together).
    #[arg(long, default_value_t = advise::fleet::DEFAULT_READ_RPS)]
    read_rps: f64,
    /// fleet: replica counts per shard, A..B or N (at least 2).
    #[arg(long, value_name = "A..B", default_value = "2..3")]
    replicas: String,
    /// fleet: the pools' waitlist variant, Unfixed, OnlyA, OnlyB or Fixed [default: the
    /// model's].
    #[arg(long, value_name = "NAME")]
    variant: Option<String>,
}

/// The flags a preset shares with the other forms, and the paths the user `--set`.
struct Shared {
    vtgates: Option<u32>,
    target: Option<f64>,
    target_risk: f64,
    gate: Option<String>,
    sets: Vec<String>,
}

/// `advise --preset NAME`: one of the preset questions, each a few engine searches.
fn advise_preset(
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
            let dir = p.out.clone().unwrap_or_else(|| PathBuf::from("advise-out"));
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
            if let Some(dir) = &p.out {
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

/// `advise --refresh-interval`: the smallest safe gate for a refresh interval.
#[allow(clippy::too_many_arguments)]
fn advise_gate(
    world: &vtsim::model::WorldSpec,
    refresh_interval: &str,
    vtgates: u32,
    target_risk: f64,
    rollouts: Option<u64>,
    step: &str,
    search: advise::SearchBudget,
    model_name: &str,
    json: bool,
    pool: &rayon::ThreadPool,
) -> Result<ExitCode> {
    use vtsim::model::rollout::advise as gate;
    let dur = |flag: &str, v: &str| {
        vtsim::sim::SimDuration::parse(v).map_err(|m| bad(format!("{flag}: {m}")))
    };
    let refresh = dur("--refresh-interval", refresh_interval)?;
    let step = dur("--step", step)?;
    if vtgates == 0 {
        return Err(bad("--vtgates must be at least 1"));
    }
    gate::check_request(refresh, step, target_risk, rollouts).map_err(bad)?;
    let q = advise::rollout::GateFor {
        refresh,
        vtgates,
        target: target_risk,
        step,
        search: advise::SearchBudget {
            batch: search.batch.or(rollouts.map(|n| n.min(100))),
            max_runs: search.max_runs.or(rollouts),
            ..search
        },
    };
    eprintln!(
        "vtsim advise: gates 0s..{} in steps of {}, the engine's sequential test...",
        vtsim::experiment::plan::duration_label(gate::max_gate(refresh)),
        vtsim::experiment::plan::duration_label(step)
    );
    let t0 = Instant::now();
    let ticker = std::sync::Mutex::new(Ticker::new());
    let a = pool
        .install(|| {
            advise::rollout::gate_for(
                world,
                &q,
                &mut |s, t, n| lock(&ticker).decided(s, t, n),
                &mut |s, c, n| lock(&ticker).runs(&s.knob, &s.candidates[c].label, n),
            )
        })
        .map_err(bad)?;
    let ticker = ticker.into_inner().unwrap_or_else(|e| e.into_inner());
    ticker.finish();
    if json {
        let mut searches = vec![(&a.scan.0, &a.scan.1)];
        let _ = &mut searches;
        let refs: Vec<serde_json::Value> = a
            .references
            .iter()
            .map(|(l, t)| {
                serde_json::json!({"label": l, "gate": t.value.label, "gate_s": t.value.x,
                    "estimate": t.estimate, "ci95": [t.ci95.0, t.ci95.1], "runs": t.runs,
                    "decision": t.decision.word(), "rollout_duration_s": t.costs[1]})
            })
            .collect();
        let mut v = advise::to_json(model_name, world.kind(), &a.scan.0, &a.scan.1);
        v["preset"] = serde_json::json!({
            "name": "rollout-gate",
            "refresh_s": refresh.as_secs_f64(),
            "vtgates": vtgates,
            "target_risk": target_risk,
            "references": refs,
            "runs_with_references": a.runs,
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print!("{}", advise::rollout::render_gate_for(&q, &a));
    }
    eprintln!("({:.1} s)", t0.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

/// The ticker behind its lock (a panic elsewhere cannot leave it unusable).
fn lock(t: &std::sync::Mutex<Ticker>) -> std::sync::MutexGuard<'_, Ticker> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

/// Progress of an advise search on stderr: a spinner with the runs so far on a terminal,
/// else one line at most every 10 s; each decided candidate is one line either way.
struct Ticker {
    bar: Option<indicatif::ProgressBar>,
    t0: Instant,
    last_line: Instant,
}

impl Ticker {
    fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            if let Ok(st) =
                indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
            {
                b.set_style(st);
            }
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        let now = Instant::now();
        Ticker {
            bar,
            t0: now,
            last_line: now,
        }
    }

    /// A batch of runs finished (`runs` so far in all, on candidate `label`).
    fn runs(&mut self, knob: &str, label: &str, runs: u64) {
        let msg = format!("{knob}={label}: {runs} runs so far");
        match &self.bar {
            Some(b) => b.set_message(msg),
            None => {
                if self.last_line.elapsed().as_secs_f64() >= 10.0 {
                    self.last_line = Instant::now();
                    eprintln!(
                        "vtsim advise: {msg}, {:.0} s",
                        self.t0.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }

    /// A candidate was decided.
    fn decided(&mut self, s: &advise::Search, t: &advise::Tested, total: u64) {
        let line = format!(
            "vtsim advise: {}={}: {} after {} runs (estimate {}, decision interval [{}, {}]); \
             {} runs so far, {:.1} s",
            s.knob,
            t.value.label,
            t.decision.word(),
            t.runs,
            advise::num(t.estimate),
            advise::num(t.ci_decision.0),
            advise::num(t.ci_decision.1),
            total,
            self.t0.elapsed().as_secs_f64()
        );
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn replay(
    model: &Path,
    seed: Option<u64>,
    trace: Option<&Path>,
    sets: &[String],
    out_dir: Option<&Path>,
    check: bool,
    json: bool,
) -> Result<ExitCode> {
    let mf = replay::load_model(model)?;
    let seed = seed.or(mf.seed).unwrap_or(1);
    let world = replay::with_sets(&mf.world, sets)?;
    if let Some(dir) = out_dir {
        replay::create_out_dir(dir)?;
    }
    let t0 = Instant::now();
    let r = replay::replay(&world, seed, trace, check)?;
    let dt = t0.elapsed().as_secs_f64();
    let out = &r.output;
    if let Some(p) = trace {
        replay::trace_failure(out, p)?;
    }
    let wrote = match out_dir {
        Some(dir) => replay::write_artifacts(out, dir)?,
        None => vec![],
    };
    if json {
        let v = replay::to_json(&mf.name, &world, seed, &r, trace, &wrote);
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        eprintln!("({:.3} ms wall)", dt * 1e3);
        return Ok(ExitCode::SUCCESS);
    }
    println!("model   {} ({})", mf.name, world.kind());
    println!("seed    {seed} ({seed:#018x})");
    if let Some(rep) = &out.report {
        let rep = replay::report_without_metrics(rep, out);
        if !rep.is_empty() {
            println!();
            println!("{rep}");
            println!();
        }
    }
    println!("metrics");
    for (d, v) in world.metric_defs().iter().zip(&out.metrics) {
        println!("  {:<32} {}", d.name, replay::fmt_metric(*v));
    }
    println!("events  {}", out.events);
    println!("digest  {}", out.digest);
    if let Some(p) = trace {
        println!("trace   {}", p.display());
    }
    for p in &wrote {
        println!("wrote   {}", p.display());
    }
    if let Some(n) = r.checked_records {
        println!("deterministic: 3 runs agree ({n} records)");
    }
    eprintln!("({:.3} ms wall)", dt * 1e3);
    Ok(ExitCode::SUCCESS)
}

fn diff(a: &Path, b: &Path, context: usize) -> Result<ExitCode> {
    if context > tracediff::MAX_CONTEXT {
        return Err(bad(format!(
            "--context {context}: at most {}",
            tracediff::MAX_CONTEXT
        )));
    }
    let open = |p: &Path| {
        File::open(p).map_err(|e| bad(format!("{}: cannot read: {}", p.display(), io_words(&e))))
    };
    let (fa, fb) = (open(a)?, open(b)?);
    let (na, nb) = (a.display().to_string(), b.display().to_string());
    let mut ra = tracediff::Reader::new(na.clone(), fa);
    let mut rb = tracediff::Reader::new(nb.clone(), fb);
    let o = tracediff::compare(&mut ra, &mut rb, context).map_err(|e| bad(e.to_string()))?;
    print!("{}", tracediff::render(&o, [&na, &nb]));
    Ok(if o.same() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn validate(file: &Path) -> Result<()> {
    let (path, text) = model_source(file)?;
    match file_kind(&path, &text)? {
        FileKind::Model => {
            let m = vtsim::experiment::parse_model(&path, &text)?;
            let defs = m.world.metric_defs();
            println!(
                "ok: model `{}` ({}), {} metrics: {}",
                m.name,
                m.world.kind(),
                defs.len(),
                defs.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
            );
        }
        FileKind::Experiment => {
            let plan = vtsim::experiment::plan::plan_from_text(&path, &text)?;
            println!(
                "ok: experiment `{}`: model `{}` ({}), {} points x {} replicates = {} runs, {} charts",
                plan.experiment.name,
                plan.model.name,
                plan.model_path.display(),
                plan.points.len(),
                plan.replicates(),
                plan.jobs(),
                plan.experiment.charts.len()
            );
        }
    }
    Ok(())
}

fn bench(events: u64, kernel_only: bool) -> Result<()> {
    vtsim::bench::check_events(events).map_err(bad)?;
    vtsim::bench::report(events, kernel_only, &mut std::io::stdout().lock())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_codes_are_dropped() {
        assert_eq!(
            without_os_codes(
                "creating a: Permission denied (os error 13): b (os error x) (os error 2)"
            ),
            "creating a: Permission denied: b (os error x)"
        );
        assert_eq!(without_os_codes("plain"), "plain");
    }
}
