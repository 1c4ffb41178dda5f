//! `vtsim run`: a sweep, every (point, replicate) of an experiment, with its summary lines.

use super::{bad, show_progress};
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use vtsim::experiment::plan::load_plan;
use vtsim::experiment::runner::{check_threads, default_out, RunConfig};
use vtsim::report::run_plan;

/// The flags of `vtsim run`.
#[derive(clap::Args)]
pub struct RunArgs {
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
}

/// Runs the sweep and prints its summary (and, with `--json`, the summary document).
pub fn run(args: RunArgs) -> Result<ExitCode> {
    let RunArgs {
        experiment,
        threads,
        shard,
        resume,
        out,
        json,
    } = args;
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
