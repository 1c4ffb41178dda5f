//! The sweep runner: jobs = (point, replicate), run with rayon, written in job order.
//!
//! - Job `j` is point `j / R`, replicate `j % R`, seeded with `replicate_seed(seed, j % R)`:
//!   every point reuses the same seeds (common random numbers).
//! - Results are written in job order, whatever order the threads finish in, so every output
//!   file is identical for any `--threads`.
//! - `--shard K/N` runs jobs `j` with `j % N == K − 1` into `<out>/shards/K-of-N/runs.csv`;
//!   `vtsim merge` interleaves the shards back into the single-machine `runs.csv` and
//!   finalises it with the same code as an unsharded run, so the files are byte-identical.
//! - Rows stream to `runs.csv.partial` as chunks complete (memory stays flat as replicates
//!   grow); `--resume` keeps its complete rows and goes on from there. A finished run renames it.

use super::plan::Plan;
use crate::model::RunOptions;
use crate::report;
use crate::sim::rng::replicate_seed;
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How to run a plan.
#[derive(Clone, Debug, Default)]
pub struct RunConfig {
    /// Worker threads (default: rayon's, i.e. the number of CPUs or `RAYON_NUM_THREADS`).
    pub threads: Option<usize>,
    /// Run only shard `(k, n)`, 1-based.
    pub shard: Option<(u64, u64)>,
    /// Keep the rows of an interrupted run and go on.
    pub resume: bool,
    /// Output directory (`notebooks-out/<experiment>/` by default).
    pub out: PathBuf,
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Testing hook: exit with code 3 once this many jobs are written (a simulated kill).
    pub abort_after: Option<u64>,
}

/// What a finished run did.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// Jobs this invocation simulated (excluding resumed ones).
    pub jobs_run: u64,
    /// Jobs found already done by `--resume`.
    pub jobs_resumed: u64,
    /// Events handled by the jobs this invocation simulated.
    pub events: u64,
    /// Where the outputs are.
    pub dir: PathBuf,
    /// Wall seconds spent simulating (and writing rows).
    pub simulate_s: f64,
    /// Wall seconds spent on points, summary, charts and index (0 for a shard).
    pub finalize_s: f64,
}

/// Directory of shard `k` of `n` under `out`.
pub fn shard_dir(out: &Path, k: u64, n: u64) -> PathBuf {
    out.join("shards").join(format!("{k}-of-{n}"))
}

/// The `runs.csv` header for a plan.
pub fn runs_header(plan: &Plan) -> Vec<String> {
    let mut h: Vec<String> = ["job", "point", "replicate", "seed"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    h.extend(plan.columns.iter().cloned());
    h.extend(plan.kept_defs().iter().map(|d| d.name.to_string()));
    h.push("events".into());
    h.push("digest".into());
    h
}

fn csv_line(fields: &[String]) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(vec![]);
    w.write_record(fields).expect("write to memory");
    w.into_inner().expect("flush to memory")
}

fn state_json(plan: &Plan, shard: Option<(u64, u64)>) -> String {
    serde_json::json!({
        "fingerprint": plan.fingerprint,
        "shard": shard.map(|(k, n)| format!("{k}/{n}")),
        "jobs": plan.jobs(),
    })
    .to_string()
}

/// Read the complete rows of a partial file; returns (rows kept, byte length to keep).
fn scan_partial(path: &Path, header: &[u8]) -> Result<(u64, u64)> {
    let f = File::open(path)?;
    let mut r = BufReader::new(f);
    let mut line = Vec::new();
    let mut kept: u64 = 0;
    let mut rows = 0u64;
    let n = r.read_until(b'\n', &mut line)?;
    if n == 0 || line != header {
        bail!("the partial output has a different header");
    }
    kept += n as u64;
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line)?;
        if n == 0 || line.last() != Some(&b'\n') {
            break; // end, or a torn last line from a kill: dropped
        }
        kept += n as u64;
        rows += 1;
    }
    Ok((rows, kept))
}

/// Run a plan (or one shard of it) and, unless sharded, write every output.
pub fn run_plan(plan: &Plan, cfg: &RunConfig) -> Result<RunSummary> {
    let dir = match cfg.shard {
        Some((k, n)) => shard_dir(&cfg.out, k, n),
        None => cfg.out.clone(),
    };
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let partial = dir.join("runs.csv.partial");
    let state = dir.join("run-state.json");
    let header = csv_line(&runs_header(plan));
    let my_state = state_json(plan, cfg.shard);

    let mut done = 0u64;
    let file = if cfg.resume && partial.is_file() {
        let same = fs::read_to_string(&state)
            .map(|s| s == my_state)
            .unwrap_or(false);
        if !same {
            bail!(
                "cannot resume in {}: the partial output belongs to a different experiment, \
                 shard or vtsim version; run without --resume to start again",
                dir.display()
            );
        }
        let (rows, keep) = scan_partial(&partial, &header)?;
        done = rows;
        let mut f = OpenOptions::new().read(true).write(true).open(&partial)?;
        f.set_len(keep)?;
        f.seek(SeekFrom::End(0))?;
        f
    } else {
        write_atomic(&state, my_state.as_bytes())?;
        let mut f = File::create(&partial)?;
        f.write_all(&header)?;
        f
    };
    let mut out = BufWriter::with_capacity(1 << 20, file);

    let (k0, n) = match cfg.shard {
        Some((k, n)) => (k - 1, n),
        None => (0, 1),
    };
    let total = plan.jobs();
    let mine: u64 = if total > k0 {
        (total - k0).div_ceil(n)
    } else {
        0
    };

    let pool = {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(t) = cfg.threads {
            b = b.num_threads(t);
        }
        b.build().context("starting worker threads")?
    };
    let bar = if cfg.progress {
        let pb = indicatif::ProgressBar::new(mine);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} runs ({per_sec}, eta {eta})",
            )
            .expect("template"),
        );
        pb.set_position(done);
        pb
    } else {
        indicatif::ProgressBar::hidden()
    };

    let reps = plan.replicates();
    let seed = plan.experiment.seed;
    let mut events = 0u64;
    let mut written = 0u64;
    let chunk = (pool.current_num_threads() * 512).max(1024);
    let t_sim = std::time::Instant::now();
    // This invocation's i-th job (i in done..mine) is job k0 + i·n; chunks are built as they
    // are reached, so memory does not grow with the number of jobs.
    let mut next = done;
    while next < mine {
        let end = (next + chunk as u64).min(mine);
        let jobs: Vec<u64> = (next..end).map(|i| k0 + i * n).collect();
        next = end;
        // Each worker simulates its job and formats its row; this thread only writes bytes,
        // in job order.
        let results: Vec<(Vec<u8>, u64)> = pool.install(|| {
            jobs.par_iter()
                .map(|&j| {
                    let p = &plan.points[(j / reps) as usize];
                    let s = replicate_seed(seed, j % reps);
                    let r = p.world.run(s, RunOptions::default());
                    let mut f: Vec<String> = vec![
                        j.to_string(),
                        p.index.to_string(),
                        (j % reps).to_string(),
                        s.to_string(),
                    ];
                    f.extend(p.labels.iter().cloned());
                    f.extend(plan.keep.iter().map(|&i| r.metrics[i].to_string()));
                    f.push(r.events.to_string());
                    f.push(r.digest);
                    bar.inc(1);
                    (csv_line(&f), r.events)
                })
                .collect()
        });
        for (line, ev) in results {
            out.write_all(&line)?;
            events += ev;
            written += 1;
        }
        out.flush()?;
        if let Some(a) = cfg.abort_after {
            if done + written >= a {
                bar.abandon();
                eprintln!(
                    "vtsim: stopping after {} jobs (VTSIM_ABORT_AFTER_JOBS)",
                    done + written
                );
                std::process::exit(3);
            }
        }
    }
    bar.finish_and_clear();
    out.flush()?;
    drop(out);
    let simulate_s = t_sim.elapsed().as_secs_f64();
    let t_fin = std::time::Instant::now();
    let runs = dir.join("runs.csv");
    fs::rename(&partial, &runs)?;
    if cfg.shard.is_some() {
        // Keep the state file beside a finished shard: merge checks the fingerprints.
        fs::rename(&state, dir.join("shard.json"))?;
    } else {
        let _ = fs::remove_file(&state);
        report::finalize(plan, &dir)?;
    }
    Ok(RunSummary {
        jobs_run: written,
        jobs_resumed: done,
        events,
        dir,
        simulate_s,
        finalize_s: t_fin.elapsed().as_secs_f64(),
    })
}

/// Join the `n` shard outputs under `out/shards/` into `out/runs.csv` and finalise.
pub fn merge(plan: &Plan, out: &Path) -> Result<()> {
    let shards_root = out.join("shards");
    let mut ns: Vec<u64> = vec![];
    if let Ok(rd) = fs::read_dir(&shards_root) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some((_, n)) = name.split_once("-of-") {
                if let Ok(n) = n.parse::<u64>() {
                    if !ns.contains(&n) {
                        ns.push(n);
                    }
                }
            }
        }
    }
    let n = match ns.as_slice() {
        [n] => *n,
        [] => bail!("no shard outputs under {}", shards_root.display()),
        _ => bail!(
            "shard outputs of different splits under {}: {:?}",
            shards_root.display(),
            ns
        ),
    };
    let header = csv_line(&runs_header(plan));
    let mut readers = vec![];
    for k in 1..=n {
        let d = shard_dir(out, k, n);
        let st = fs::read_to_string(d.join("shard.json")).with_context(|| {
            format!("shard {k}/{n} is missing or unfinished in {}", d.display())
        })?;
        if st != state_json(plan, Some((k, n))) {
            bail!(
                "shard {k}/{n} in {} was run from a different experiment or vtsim version",
                d.display()
            );
        }
        let mut r = BufReader::new(File::open(d.join("runs.csv"))?);
        let mut line = vec![];
        r.read_until(b'\n', &mut line)?;
        if line != header {
            bail!("shard {k}/{n}: unexpected header");
        }
        readers.push(r);
    }
    let partial = out.join("runs.csv.partial");
    let mut w = BufWriter::new(File::create(&partial)?);
    w.write_all(&header)?;
    let mut line = vec![];
    for j in 0..plan.jobs() {
        line.clear();
        let r = &mut readers[(j % n) as usize];
        r.read_until(b'\n', &mut line)?;
        let want = format!("{j},");
        if !line.starts_with(want.as_bytes()) || line.last() != Some(&b'\n') {
            bail!("shard {}/{n} lacks job {j}", j % n + 1);
        }
        w.write_all(&line)?;
    }
    w.flush()?;
    drop(w);
    fs::rename(&partial, out.join("runs.csv"))?;
    report::finalize(plan, out)
}

/// Write `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.partial",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}
