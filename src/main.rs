//! The `vtsim` command line. Parsing and printing only; the work is in the library.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use vtsim::experiment::plan::{apply_override, load_plan};
use vtsim::experiment::runner::{merge, run_plan, RunConfig};
use vtsim::experiment::{load_model_file, InputError};
use vtsim::model::{RunOptions, WorldSpec};
use vtsim::sim::Trace;

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
enum Cmd {
    /// Run a sweep: every (point, replicate) of EXPERIMENT, written to notebooks-out/<name>/.
    Run {
        /// The experiment file (RON).
        experiment: PathBuf,
        /// Worker threads (results are identical for any number).
        #[arg(long)]
        threads: Option<usize>,
        /// Run only shard K of N (1-based); join the shards with `vtsim merge`.
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
        /// Go on from the rows an interrupted run wrote.
        #[arg(long)]
        resume: bool,
        /// Output directory [default: notebooks-out/<experiment name>].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run one replicate of a model and print its metrics and trace digest.
    Replay {
        /// The model file (RON).
        model: PathBuf,
        /// The run seed [default: the model file's `seed`, else 1].
        #[arg(long)]
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
        /// The file (RON).
        file: PathBuf,
    },
    /// The smallest tablet_available_timeout whose risk per rollout is below a target.
    Advise {
        /// vtgate --tablet_refresh_interval.
        #[arg(long, value_name = "DURATION")]
        refresh_interval: String,
        /// Number of vtgates.
        #[arg(long)]
        vtgates: u32,
        /// Target P(any failed replica read per rollout).
        #[arg(long, default_value_t = 1e-3)]
        target_risk: f64,
        /// Rollout model [default: the built-in models/rollout-default.ron].
        #[arg(long)]
        model: Option<PathBuf>,
        /// Rollouts per gate [default: enough that zero errors in all of them meets the target].
        #[arg(long)]
        rollouts: Option<u64>,
        /// Gate scan step.
        #[arg(long, default_value = "5s")]
        step: String,
        /// Seed of the rollouts.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Worker threads.
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Measure the kernel (hold model vs a bare BinaryHeap) and sweep scaling.
    Bench {
        /// Events per hold-model measurement.
        #[arg(long, default_value_t = 5_000_000)]
        events: u64,
        /// Skip the sweep-scaling measurement.
        #[arg(long)]
        kernel_only: bool,
    },
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| format!("--shard `{s}`: expected K/N, e.g. 2/3"))?;
    let k: u64 = k
        .trim()
        .parse()
        .map_err(|_| format!("--shard `{s}`: K is not a number"))?;
    let n: u64 = n
        .trim()
        .parse()
        .map_err(|_| format!("--shard `{s}`: N is not a number"))?;
    if n == 0 || k == 0 || k > n {
        return Err(format!("--shard `{s}`: need 1 <= K <= N"));
    }
    Ok((k, n))
}

/// An error that exits with code 2 (bad input), as opposed to 1 (a failure while running).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadInput(String);

fn main() -> ExitCode {
    // Die quietly when a reader closes the pipe (`vtsim replay ... | head`), as Unix tools do,
    // instead of panicking on a failed print.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(b) = e.downcast_ref::<InputError>() {
                eprintln!("error: {b}");
                return ExitCode::from(2);
            }
            if let Some(BadInput(m)) = e.downcast_ref::<BadInput>() {
                eprintln!("error: {m}");
                return ExitCode::from(2);
            }
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn default_out(name: &str) -> PathBuf {
    Path::new("notebooks-out").join(name)
}

fn show_progress() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Run {
            experiment,
            threads,
            shard,
            resume,
            out,
        } => {
            let shard = shard
                .map(|s| parse_shard(&s))
                .transpose()
                .map_err(BadInput)?;
            if threads == Some(0) {
                return Err(BadInput("--threads must be at least 1".into()).into());
            }
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
            Ok(())
        }
        Cmd::Merge { experiment, out } => {
            let plan = load_plan(&experiment)?;
            let out = out.unwrap_or_else(|| default_out(&plan.experiment.name));
            merge(&plan, &out)?;
            eprintln!("vtsim: merged shards into {}", out.display());
            Ok(())
        }
        Cmd::Replay {
            model,
            seed,
            trace,
            sets,
            out,
        } => replay(&model, seed, trace.as_deref(), &sets, out.as_deref()),
        Cmd::Validate { file } => validate(&file),
        Cmd::Bench {
            events,
            kernel_only,
        } => bench(events, kernel_only),
        Cmd::Advise {
            refresh_interval,
            vtgates,
            target_risk,
            model,
            rollouts,
            step,
            seed,
            threads,
        } => {
            let dur = |flag: &str, v: &str| {
                vtsim::sim::SimDuration::parse(v).map_err(|m| BadInput(format!("{flag}: {m}")))
            };
            let refresh = dur("--refresh-interval", &refresh_interval)?;
            let step = dur("--step", &step)?;
            if refresh == vtsim::sim::SimDuration::ZERO || step == vtsim::sim::SimDuration::ZERO {
                return Err(BadInput("--refresh-interval and --step must be > 0".into()).into());
            }
            if vtgates == 0 {
                return Err(BadInput("--vtgates must be at least 1".into()).into());
            }
            if !(target_risk > 0.0 && target_risk < 1.0) {
                return Err(BadInput("--target-risk must be in (0, 1)".into()).into());
            }
            if threads == Some(0) || rollouts == Some(0) {
                return Err(BadInput("--threads and --rollouts must be at least 1".into()).into());
            }
            let world = match &model {
                Some(p) => load_model_file(p)?.world,
                None => embedded_model("rollout-default.ron").world,
            };
            let n = rollouts.unwrap_or_else(|| vtsim::advise::rollouts_for(target_risk));
            let pool = {
                let mut b = rayon::ThreadPoolBuilder::new();
                if let Some(t) = threads {
                    b = b.num_threads(t);
                }
                b.build()?
            };
            eprintln!("vtsim advise: {n} rollouts per gate, scanning in steps of {step}...");
            let t0 = Instant::now();
            let a = pool
                .install(|| {
                    vtsim::advise::advise(
                        &world,
                        refresh,
                        vtgates,
                        target_risk,
                        n,
                        step,
                        refresh.mul_f64(4.0),
                        seed,
                    )
                })
                .map_err(BadInput)?;
            print!("{}", vtsim::advise::render(&a));
            eprintln!("({:.1} s)", t0.elapsed().as_secs_f64());
            Ok(())
        }
    }
}

fn replay(
    model: &Path,
    seed: Option<u64>,
    trace: Option<&Path>,
    sets: &[String],
    out_dir: Option<&Path>,
) -> Result<()> {
    let mf = load_model_file(model)?;
    let seed = seed.or(mf.seed).unwrap_or(1);
    let mut world = mf.world.clone();
    if !sets.is_empty() {
        let mut params = world.params_json();
        for s in sets {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| BadInput(format!("--set `{s}`: expected PATH=VALUE")))?;
            let value: serde_json::Value = ron::from_str(v)
                .or_else(|_| ron::from_str(&format!("\"{v}\"")))
                .map_err(|e| BadInput(format!("--set `{s}`: {e}")))?;
            apply_override(&mut params, k, value)
                .map_err(|m| BadInput(format!("--set `{s}`: {m}")))?;
        }
        world = world
            .with_params_json(params)
            .map_err(|m| BadInput(format!("--set: {m}")))?;
        if let Err((f, m)) = world.validate() {
            return Err(BadInput(format!("--set: field `{f}`: {m}")).into());
        }
    }
    let trace_sink = match trace {
        Some(p) => Trace::with_jsonl(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        ),
        None => Trace::digest_only(),
    };
    let t0 = Instant::now();
    let out = world.run(
        seed,
        RunOptions {
            trace: trace_sink,
            report: true,
        },
    );
    let dt = t0.elapsed().as_secs_f64();
    println!("model   {} ({})", mf.name, world.kind());
    println!("seed    {seed} ({seed:#018x})");
    if let Some(r) = &out.report {
        println!();
        println!("{}", r.trim_end());
        println!();
    }
    println!("metrics");
    for (d, v) in world.metric_defs().iter().zip(&out.metrics) {
        println!("  {:<32} {}", d.name, v);
    }
    println!("events  {}", out.events);
    println!("digest  {}", out.digest);
    if let Some(p) = trace {
        if let Some(e) = &out.trace_error {
            bail!("writing the trace {}: {e}", p.display());
        }
        println!("trace   {}", p.display());
    }
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for a in &out.artifacts {
            match a {
                vtsim::model::Artifact::Text { name, text } => {
                    vtsim::experiment::runner::write_atomic(&dir.join(name), text.as_bytes())?;
                    println!("wrote   {}", dir.join(name).display());
                }
                vtsim::model::Artifact::Chart { name, data } => {
                    vtsim::chart::draw_files(data, dir, name)?;
                    println!("wrote   {}", dir.join(format!("{name}.png")).display());
                }
            }
        }
    }
    eprintln!("({:.3} ms wall)", dt * 1e3);
    Ok(())
}

fn looks_like_model(text: &str) -> bool {
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with("//") || l.starts_with("#!") {
            continue;
        }
        if l.starts_with("Model") {
            return true;
        }
        if l.starts_with("Experiment") {
            return false;
        }
        break;
    }
    text.contains("world:")
}

fn validate(file: &Path) -> Result<()> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| InputError::file(file, format!("cannot read: {e}")))?;
    if looks_like_model(&text) {
        let m = vtsim::experiment::parse_model(file, &text)?;
        let defs = m.world.metric_defs();
        println!(
            "ok: model `{}` ({}), {} metrics: {}",
            m.name,
            m.world.kind(),
            defs.len(),
            defs.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
        );
    } else {
        let plan = vtsim::experiment::plan::plan_from_text(file, &text)?;
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
    Ok(())
}

fn bench(events: u64, kernel_only: bool) -> Result<()> {
    if events == 0 {
        bail!("--events must be > 0");
    }
    println!(
        "hold model: each pop schedules one event at now + Exp(1 ms); best of 5 rounds; 1 thread"
    );
    println!(
        "{:>9} {:>12} {:>16} {:>16} {:>16} {:>9}",
        "pending", "events", "kernel+digest/s", "kernel/s", "bare heap/s", "ratio"
    );
    for pending in [1_000u32, 10_000, 100_000] {
        let r = vtsim::bench::hold(pending, events, 5);
        println!(
            "{:>9} {:>12} {:>16.3e} {:>16.3e} {:>16.3e} {:>8.2}x",
            r.pending,
            r.events,
            r.kernel_digest_eps,
            r.kernel_nodigest_eps,
            r.bare_heap_eps,
            r.bare_heap_eps / r.kernel_digest_eps
        );
    }
    println!("(ratio = bare heap / kernel with digest: the kernel's overhead factor)");
    if kernel_only {
        return Ok(());
    }
    let world = sweep_bench_world();
    let runs = 4000u64;
    println!();
    println!("sweep scaling: {runs} runs of {}", world.kind());
    let mut base = 0.0;
    for threads in [1usize, 2] {
        let rate = vtsim::bench::sweep_runs_per_s(&world, runs, threads);
        if threads == 1 {
            base = rate;
        }
        println!(
            "  --threads {threads}: {rate:>10.0} runs/s  ({:.2}x)",
            rate / base
        );
    }
    Ok(())
}

fn embedded_model(name: &str) -> vtsim::experiment::ModelFile {
    let text = vtsim::experiment::files::EMBEDDED_MODELS
        .iter()
        .find(|(n, _)| *n == name)
        .expect("a built-in model of that name")
        .1;
    vtsim::experiment::parse_model(Path::new(name), text).expect("built-in models parse")
}

fn sweep_bench_world() -> WorldSpec {
    embedded_model("rollout-default.ron").world
}
