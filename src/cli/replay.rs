//! `vtsim replay`: one replicate of a model, its metrics, digest and files, and `--emit-logs`.

use super::args::parse_seed;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use vtsim::replay;

/// The flags of `vtsim replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
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
}

/// Replays the run, then writes the `--emit-logs` files if asked.
pub fn run(args: ReplayArgs) -> Result<ExitCode> {
    let ReplayArgs {
        model,
        seed,
        trace,
        sets,
        out,
        check,
        emit_logs,
        log_format,
        json,
    } = args;
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
