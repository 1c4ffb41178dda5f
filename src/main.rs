//! The `vtsim` command line. Parsing and printing only; the work is in the library.

mod tracediff;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use std::fs::File;
use std::io::{IsTerminal, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use vtsim::experiment::error::{io_words, plain_words};
use vtsim::experiment::files::{file_kind, model_source, FileKind};
use vtsim::experiment::plan::{apply_override, load_plan};
use vtsim::experiment::runner::{merge, run_plan, RunConfig};
use vtsim::experiment::{load_model_arg, InputError, ModelFile};
use vtsim::model::{Artifact, RunOptions, RunOutput, WorldSpec};
use vtsim::sim::Trace;

/// Most worker threads `--threads` (or `RAYON_NUM_THREADS`) may ask for: 1024. Results are the
/// same for any number, so the bound only has to be above any one machine's CPU count (a
/// 2-socket server has up to ~768 hardware threads) while keeping memory flat: the runner
/// holds 512 rows per thread in flight, so 1024 threads is ~0.5 M rows (~100 MB), where
/// 100 000 threads would be 51 M rows and 100 000 thread stacks. The bound is the same on
/// every machine, so a command that is valid on one is valid on all.
const MAX_THREADS: usize = 1024;

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
        /// Worker threads, 1 to 1024 (results are identical for any number).
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
        /// The model file (RON), or `builtin:NAME` for a model built into vtsim.
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
        /// Check determinism: run the seed twice here and once on another thread, compare
        /// the three traces record by record, and fail naming the first that differs.
        #[arg(long)]
        check: bool,
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
    /// The smallest tablet_available_timeout whose risk per rollout is below a target.
    Advise {
        /// vtgate --tablet_refresh_interval.
        #[arg(long, value_name = "DURATION")]
        refresh_interval: String,
        /// Number of vtgates.
        #[arg(long)]
        vtgates: u32,
        /// Target P(any failed replica read per rollout); at least about 4.3e-7 unless
        /// --rollouts is given.
        #[arg(long, default_value_t = 1e-3)]
        target_risk: f64,
        /// Rollout model: a file or `builtin:NAME` [default: builtin:rollout-default].
        #[arg(long)]
        model: Option<PathBuf>,
        /// Rollouts per gate, at most 1e7 [default: enough that zero errors in all of them
        /// meets the target].
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
        /// Events per hold-model measurement (1 to 1e8).
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

fn bad(m: impl Into<String>) -> anyhow::Error {
    BadInput(m.into()).into()
}

/// An I/O failure, with the file and the OS error in plain words (exit code 1).
fn io_fail(what: &str, path: &Path, e: &std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("{what} {}: {}", path.display(), io_words(e))
}

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

fn default_out(name: &str) -> PathBuf {
    Path::new("notebooks-out").join(name)
}

fn show_progress() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// `--threads` within 1..=MAX_THREADS; without it, `RAYON_NUM_THREADS` (which rayon reads)
/// within the same bound.
fn check_threads(threads: Option<usize>) -> Result<Option<usize>> {
    match threads {
        Some(t) if t == 0 || t > MAX_THREADS => Err(bad(format!(
            "--threads {t}: must be at least 1 and at most {MAX_THREADS} (results are the same \
             for any number; more threads than CPUs only costs memory)"
        ))),
        Some(t) => Ok(Some(t)),
        None => {
            if let Some(n) = std::env::var("RAYON_NUM_THREADS")
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
            {
                if n > MAX_THREADS as u64 {
                    return Err(bad(format!(
                        "RAYON_NUM_THREADS={n}: at most {MAX_THREADS} worker threads"
                    )));
                }
            }
            Ok(None)
        }
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Run {
            experiment,
            threads,
            shard,
            resume,
            out,
        } => {
            let shard = shard.map(|s| parse_shard(&s)).transpose().map_err(bad)?;
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
        } => replay(&model, seed, trace.as_deref(), &sets, out.as_deref(), check),
        Cmd::Diff { a, b, context } => diff(&a, &b, context),
        Cmd::Validate { file } => validate(&file).map(|()| ExitCode::SUCCESS),
        Cmd::Bench {
            events,
            kernel_only,
        } => bench(events, kernel_only).map(|()| ExitCode::SUCCESS),
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
                vtsim::sim::SimDuration::parse(v).map_err(|m| bad(format!("{flag}: {m}")))
            };
            let refresh = dur("--refresh-interval", &refresh_interval)?;
            let step = dur("--step", &step)?;
            if vtgates == 0 {
                return Err(bad("--vtgates must be at least 1"));
            }
            let n =
                vtsim::advise::check_request(refresh, step, target_risk, rollouts).map_err(bad)?;
            let threads = check_threads(threads)?;
            let world = match &model {
                Some(p) => load_model_arg(p)?.world,
                None => builtin_model("rollout-default").world,
            };
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
                .map_err(bad)?;
            print!("{}", vtsim::advise::render(&a));
            eprintln!("({:.1} s)", t0.elapsed().as_secs_f64());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Load a model named on the command line, refusing an experiment file with a hint.
fn load_model_cli(arg: &Path) -> Result<ModelFile> {
    let (path, text) = model_source(arg)?;
    if let Ok(FileKind::Experiment) = file_kind(&path, &text) {
        return Err(bad(format!(
            "{}: an experiment file; replay runs a model file (or `builtin:NAME`); run an \
             experiment with `vtsim run {}`",
            path.display(),
            path.display()
        )));
    }
    Ok(vtsim::experiment::parse_model(&path, &text)?)
}

fn replay(
    model: &Path,
    seed: Option<u64>,
    trace: Option<&Path>,
    sets: &[String],
    out_dir: Option<&Path>,
    check: bool,
) -> Result<ExitCode> {
    let mf = load_model_cli(model)?;
    let seed = seed.or(mf.seed).unwrap_or(1);
    let mut world = mf.world.clone();
    if !sets.is_empty() {
        let mut params = world.params_json();
        for s in sets {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| bad(format!("--set `{s}`: expected PATH=VALUE")))?;
            let value: serde_json::Value = ron::from_str(v)
                .or_else(|_| ron::from_str(&format!("\"{v}\"")))
                .map_err(|e| bad(format!("--set `{s}`: {e}")))?;
            apply_override(&mut params, k, value).map_err(|m| bad(format!("--set `{s}`: {m}")))?;
            world
                .with_params_json(params.clone())
                .map_err(|m| bad(format!("--set `{s}`: {m}")))?;
        }
        world = world
            .with_params_json(params)
            .map_err(|m| bad(format!("--set: {m}")))?;
        if let Err(e) = world.validate() {
            return Err(bad(format!("--set: {e}")));
        }
    }
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir).map_err(|e| io_fail("cannot create the folder", dir, &e))?;
    }
    let t0 = Instant::now();
    let (out, records) = if check {
        let (out, records) = check_determinism(&world, seed, trace)?;
        (out, Some(records))
    } else {
        let trace_sink = match trace {
            Some(p) => Trace::with_jsonl(
                File::create(p).map_err(|e| io_fail("cannot create the trace file", p, &e))?,
            ),
            None => Trace::digest_only(),
        };
        let out = world.run(
            seed,
            RunOptions {
                trace: trace_sink,
                report: true,
            },
        );
        (out, None)
    };
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
            bail!("writing the trace {}: {}", p.display(), plain_words(e));
        }
        println!("trace   {}", p.display());
    }
    if let Some(dir) = out_dir {
        for a in &out.artifacts {
            match a {
                Artifact::Text { name, text } => {
                    let p = dir.join(name);
                    write_file(&p, text.as_bytes())?;
                    println!("wrote   {}", p.display());
                }
                Artifact::Chart { name, data } => {
                    vtsim::chart::draw_files(data, dir, name).map_err(|e| {
                        anyhow::anyhow!(
                            "cannot draw the chart {}: {e:#}",
                            dir.join(format!("{name}.png")).display()
                        )
                    })?;
                    println!("wrote   {}", dir.join(format!("{name}.png")).display());
                }
            }
        }
    }
    if let Some(n) = records {
        println!("deterministic: 3 runs agree ({n} records)");
    }
    eprintln!("({:.3} ms wall)", dt * 1e3);
    Ok(ExitCode::SUCCESS)
}

/// Write `bytes` to `path` through `path.partial` and a rename, naming the file on failure.
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_fail("cannot write", path, &e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_fail("cannot write", path, &e)
    })
}

/// A trace file for `--check`: a fresh file in the temp folder, unlinked at once (the open
/// handles keep it until the run is compared, and nothing is left behind), as (writer, reader).
fn scratch_trace(k: usize) -> Result<(File, File)> {
    let dir = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let p = dir.join(format!(
        "vtsim-check-{}-{k}-{nanos}.jsonl",
        std::process::id()
    ));
    let w = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&p)
        .map_err(|e| io_fail("cannot create the scratch trace", &p, &e))?;
    let r = w
        .try_clone()
        .map_err(|e| io_fail("cannot reopen the scratch trace", &p, &e))?;
    let _ = std::fs::remove_file(&p);
    Ok((w, r))
}

/// Run `seed` three times (twice here, once on another thread at the same time as the
/// second) and compare traces, metrics, digest and report. Returns run 1's output and the
/// number of records, or an error naming the first difference.
fn check_determinism(
    world: &WorldSpec,
    seed: u64,
    trace: Option<&Path>,
) -> Result<(RunOutput, u64)> {
    let run = |w: &WorldSpec, f: File| {
        w.run(
            seed,
            RunOptions {
                trace: Trace::with_jsonl(f),
                report: true,
            },
        )
    };
    // Run 1 alone, into the user's --trace file when there is one.
    let (w1, r1) = match trace {
        Some(p) => {
            let w = File::create(p).map_err(|e| io_fail("cannot create the trace file", p, &e))?;
            let r = File::open(p).map_err(|e| io_fail("cannot read the trace file", p, &e))?;
            (w, r)
        }
        None => scratch_trace(1)?,
    };
    let o1 = run(world, w1);
    let (w2, r2) = scratch_trace(2)?;
    let (w3, r3) = scratch_trace(3)?;
    let other = world.clone();
    let handle = std::thread::Builder::new()
        .name("vtsim-check".into())
        .spawn(move || {
            other.run(
                seed,
                RunOptions {
                    trace: Trace::with_jsonl(w3),
                    report: true,
                },
            )
        })
        .map_err(|e| anyhow::anyhow!("cannot start a thread: {}", io_words(&e)))?;
    let o2 = run(world, w2);
    let o3 = handle
        .join()
        .map_err(|_| anyhow::anyhow!("the run on another thread panicked"))?;
    let scratch = format!("a scratch file in {}", std::env::temp_dir().display());
    let run1_file = trace.map_or(scratch.clone(), |p| p.display().to_string());
    for (name, o, file) in [
        ("run 1", &o1, &run1_file),
        ("run 2", &o2, &scratch),
        ("run 3 (another thread)", &o3, &scratch),
    ] {
        if let Some(e) = &o.trace_error {
            bail!(
                "--check: {name}: writing the trace {file}: {}",
                plain_words(e)
            );
        }
    }
    let mut records = 0;
    for (name, r, o) in [("run 2", r2, &o2), ("run 3 (another thread)", r3, &o3)] {
        let mut a = r1
            .try_clone()
            .map_err(|e| anyhow::anyhow!("cannot reread the trace of run 1: {}", io_words(&e)))?;
        a.seek(SeekFrom::Start(0))
            .map_err(|e| anyhow::anyhow!("cannot reread the trace of run 1: {}", io_words(&e)))?;
        let mut b = r;
        b.seek(SeekFrom::Start(0))
            .map_err(|e| anyhow::anyhow!("cannot reread the trace of {name}: {}", io_words(&e)))?;
        let mut ra = tracediff::Reader::new("run 1", a);
        let mut rb = tracediff::Reader::new(name, b);
        let outcome =
            tracediff::compare(&mut ra, &mut rb, 3).map_err(|e| anyhow::anyhow!("{e}"))?;
        match outcome {
            tracediff::Outcome::Same { records: n } => records = n,
            other => bail!(
                "not deterministic: seed {seed}: the traces of run 1 and {name} differ\n{}",
                tracediff::render(&other, ["run 1", name]).trim_end()
            ),
        }
        let mut diffs = vec![];
        if o.digest != o1.digest {
            diffs.push(format!("digest {} vs {}", o1.digest, o.digest));
        }
        if o.events != o1.events {
            diffs.push(format!("events {} vs {}", o1.events, o.events));
        }
        let defs = world.metric_defs();
        for (i, (x, y)) in o1.metrics.iter().zip(&o.metrics).enumerate() {
            if x.to_bits() != y.to_bits() {
                let n = defs.get(i).map(|d| d.name).unwrap_or("?");
                diffs.push(format!("metric {n} {x} vs {y}"));
            }
        }
        if o.metrics.len() != o1.metrics.len() {
            diffs.push(format!(
                "{} metrics vs {}",
                o1.metrics.len(),
                o.metrics.len()
            ));
        }
        if o.report != o1.report {
            diffs.push("the report text".into());
        }
        if !diffs.is_empty() {
            bail!(
                "not deterministic: seed {seed}: run 1 and {name} have equal traces but differ in: {}",
                diffs.join("; ")
            );
        }
    }
    Ok((o1, records))
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
    if events == 0 || events > vtsim::bench::MAX_EVENTS {
        return Err(bad(format!(
            "--events {events}: must be at least 1 and at most {:.0e}",
            vtsim::bench::MAX_EVENTS
        )));
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
    let world = builtin_model("rollout-default").world;
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

/// A model built into the binary (the shipped files always parse: tests/shipped_files.rs).
fn builtin_model(name: &str) -> ModelFile {
    let text = vtsim::experiment::files::builtin(name).expect("a built-in model of that name");
    vtsim::experiment::parse_model(Path::new(&format!("builtin:{name}")), text)
        .expect("built-in models parse")
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
