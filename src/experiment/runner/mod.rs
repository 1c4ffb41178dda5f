//! The sweep runner: jobs = (point, replicate), run with rayon, written in job order.
//!
//! - Job `j` is point `j / R`, replicate `j % R`, seeded with `replicate_seed(seed, j % R)`:
//!   every point reuses the same seeds (common random numbers).
//! - Results are written in job order, whatever order the threads finish in, so every output
//!   file is identical for any `--threads`.
//! - `--shard K/N` runs jobs `j` with `j % N == K − 1` into `<out>/shards/K-of-N/runs.csv`,
//!   and records in `shard.json` the BLAKE3 of that file and of every block of
//!   [`BLOCK_ROWS`] rows. `vtsim merge` interleaves the shards back into the single-machine
//!   `runs.csv` and finalises it with the same code as an unsharded run, so the files are
//!   byte-identical.
//! - Rows stream to `runs.csv.partial` as chunks complete (memory stays flat as replicates
//!   grow); `--resume` keeps its verified complete rows and goes on from there.
//!
//! # What is verified
//! The outputs (`points.csv`, `summary.json`, charts) are accumulated from the rows in job
//! order as they are written or verified ([`Outputs`]), so a finished `runs.csv` is never
//! read back. Every row that is read (a partial file on `--resume`, a shard's `runs.csv` in
//! `merge`) is parsed as a CSV record (a quoted
//! label may hold commas, quotes or line breaks) and checked against the plan: its job is the
//! next one expected, its point, replicate and seed are the ones job `j` derives
//! (`j / R`, `j % R`, `replicate_seed(seed, j % R)`), its labels are that point's, its
//! metrics, event count and digest are written exactly as vtsim writes them, and the record's
//! bytes are the ones vtsim's CSV writer gives for those fields. A shard's rows must also hash
//! to what `shard.json` recorded; where a block does not, its rows are simulated again to name
//! the row and field that changed. The first row of every shard and of a resumed partial file
//! is simulated again on this machine and must match byte for byte (a shard run by a different
//! build is caught there). A failed check is an error (exit code 1) naming the file and the
//! row, and nothing is replaced.
//!
//! # The output set is replaced whole
//! An unsharded run or a merge builds every output (`runs.csv`, `points.csv`,
//! `summary.json`, charts, `index.html`) in a staging folder beside the target,
//! `<parent>/.<name>.staging/`, on the same file system, then swaps it with the target in one
//! step (Linux `renameat2(RENAME_EXCHANGE)`; elsewhere, or where the file system cannot
//! exchange, two renames through `<parent>/.<name>.old/`, a window in which the target name
//! is briefly missing and that the next run repairs). Entries of the target that are not
//! vtsim outputs (`shards/`, or a file a user put there) are moved into the staging folder
//! just before the swap, so they are kept. A running unsharded run keeps its
//! `runs.csv.partial` and `run-state.json` in the target until the swap (the staged `runs.csv`
//! is a hard link to the finished partial file), so a kill at any moment before the swap
//! leaves a resumable run; after the swap they go with the old set. On any failure the staging
//! folder is removed (after moving the kept entries back); one left by a kill is cleaned up
//! (kept entries restored) by the next run or merge into that folder.
//!
//! # Locks
//! `<parent>/.<name>.lock` guards a folder: an unsharded run or a merge holds it exclusively,
//! a shard run holds it shared (shards run side by side, but not beside a run or merge into the
//! same folder), and a shard run also holds `<out>/shards/K-of-N/.lock` exclusively. The locks
//! are `flock(2)` locks, released by the operating system when the holder exits or is killed;
//! an exclusive holder writes its pid, host, command line and start time into the lock file
//! (JSON) and removes the file when it is done. A refused run exits with code 2 naming the
//! holder and the lock file. On a file system that cannot lock (`ENOLCK`, `EOPNOTSUPP`: some
//! network file systems) the run goes on without the lock and says so on stderr.
//!
//! # Resuming
//! `--resume` keeps the verified complete rows of `runs.csv.partial` (an empty file or a torn
//! header is rewritten, a torn last row dropped, any other damaged row refused); when the
//! partial file is complete (a kill in the output phase) nothing is simulated. A shard already
//! finished (its `shard.json` and the hashes of its `runs.csv` agree with the plan) is left as
//! it is; one that no longer verifies is run again.
//!
//! # Test hooks
//! `VTSIM_ABORT_AFTER_JOBS=N` (read by the CLI) exits with code 3 once N jobs are written;
//! `VTSIM_ABORT_IN_OUTPUTS=1` exits with code 3 in the output phase, once `runs.csv` is
//! complete and `points.csv` and `summary.json` are staged (for a shard: once `runs.csv` is
//! renamed, before `shard.json`); `VTSIM_TEST_WAIT_FOR=FILE` makes a run wait, once it holds
//! its locks, until FILE exists (at most 60 s); `VTSIM_TEST_NO_EXCHANGE=1` makes the swap use
//! its two-rename fallback. Each simulates a kill, holds a lock or takes a path on purpose,
//! for the tests.

mod execute;
mod lock;
mod merge;
mod outdir;
mod shard;

pub use execute::{job_row, JobRunner};
pub use merge::merge_with;
pub use outdir::{is_output_entry, OutDir};
pub use shard::{shard_dir, ShardRecord, BLOCK_ROWS};

use super::accumulate::Outputs;
use super::plan::Plan;
use crate::experiment::error::BadInput;
use crate::experiment::hooks::test_wait_hook;
use crate::io;
use anyhow::{anyhow, Context, Result};
use execute::{open_partial, simulate};
use lock::lock_out;
use outdir::{recover, Staging};
use shard::run_shard;
use std::path::{Path, PathBuf};

pub use crate::io::write_atomic;

/// Most worker threads `--threads` (or `RAYON_NUM_THREADS`) may ask for: 1024. Results are the
/// same for any number, so the bound only has to be above any one machine's CPU count (a
/// 2-socket server has up to ~768 hardware threads) while keeping memory flat: the runner
/// holds 512 rows per thread in flight, so 1024 threads is ~0.5 M rows (~100 MB), where
/// 100 000 threads would be 51 M rows and 100 000 thread stacks. The bound is the same on
/// every machine, so a command that is valid on one is valid on all.
pub const MAX_THREADS: usize = 1024;

/// `--threads` within 1..=[`MAX_THREADS`]; without it, `RAYON_NUM_THREADS` (which rayon
/// reads) within the same bound. The error is bad input.
pub fn check_threads(threads: Option<usize>) -> Result<Option<usize>> {
    match threads {
        Some(t) if t == 0 || t > MAX_THREADS => Err(BadInput(format!(
            "--threads {t}: must be at least 1 and at most {MAX_THREADS} (results are the same \
             for any number; more threads than CPUs only costs memory)"
        ))
        .into()),
        Some(t) => Ok(Some(t)),
        None => {
            if let Some(n) = std::env::var("RAYON_NUM_THREADS")
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
            {
                if n > MAX_THREADS as u64 {
                    return Err(BadInput(format!(
                        "RAYON_NUM_THREADS={n}: at most {MAX_THREADS} worker threads"
                    ))
                    .into());
                }
            }
            Ok(None)
        }
    }
}

/// The worker threads of a run, a merge's checks or `advise`: `threads` of them, or rayon's
/// default (the number of CPUs, or `RAYON_NUM_THREADS`).
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    b.build().context("starting worker threads")
}

/// The output folder of an experiment when `--out` is not given: `notebooks-out/<name>`.
pub fn default_out(name: &str) -> PathBuf {
    Path::new("notebooks-out").join(name)
}

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
    /// Jobs found already done by `--resume` (verified, not simulated again).
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

/// Run a plan (or one shard of it) and, unless sharded, write every output: `runs.csv`, and
/// the rest from its rows by `finalize`, given the plan, the staging folder and the rows
/// accumulated (a shard writes only its `runs.csv` and `shard.json`).
pub fn run_plan_with<F>(plan: &Plan, cfg: &RunConfig, finalize: F) -> Result<RunSummary>
where
    F: FnOnce(&Plan, &Path, Outputs) -> Result<()>,
{
    match cfg.shard {
        Some((k, n)) => run_shard(plan, cfg, k, n),
        None => run_whole(plan, cfg, finalize),
    }
}

fn run_whole<F>(plan: &Plan, cfg: &RunConfig, finalize: F) -> Result<RunSummary>
where
    F: FnOnce(&Plan, &Path, Outputs) -> Result<()>,
{
    let od = OutDir::resolve(&cfg.out)?;
    let _lock = lock_out(&od, true)?;
    recover(&od)?;
    io::create_dir_all(&od.path)?;
    test_wait_hook();
    let total = plan.jobs();
    let jobs = (0, 1, total);
    // The outputs are accumulated from the rows as they are verified (resumed) or written
    // (simulated), so runs.csv is not read back.
    let mut acc = Outputs::new(plan);
    let mut p = open_partial(plan, cfg, &od.path, jobs, Some(&mut acc))?;
    let (written, events, simulate_s) = simulate(plan, cfg, &mut p, jobs, Some(&mut acc))?;
    let done = p.done;
    p.w.finish()?;
    let t_fin = std::time::Instant::now();
    let partial = od.path.join("runs.csv.partial");
    publish(
        plan,
        &od,
        |staging| {
            io::link_or_copy(&partial, &staging.join("runs.csv"))?;
            Ok(acc)
        },
        finalize,
    )
    .map_err(|e| {
        anyhow!(
            "{e:#}. The {} simulated rows are kept in {}: once the cause is fixed, run again \
             with --resume to write the outputs without simulating again",
            done + written,
            partial.display()
        )
    })?;
    Ok(RunSummary {
        jobs_run: written,
        jobs_resumed: done,
        events,
        dir: cfg.out.clone(),
        simulate_s,
        finalize_s: t_fin.elapsed().as_secs_f64(),
    })
}

/// Stage a new output set (`runs` puts `runs.csv` into the staging folder and returns its
/// rows accumulated), finalise it (`finalize` writes the rest from the rows) and swap it in;
/// on failure the target is untouched and the staging folder is gone.
pub(super) fn publish<'p>(
    plan: &'p Plan,
    od: &OutDir,
    runs: impl FnOnce(&Path) -> Result<Outputs<'p>>,
    finalize: impl FnOnce(&'p Plan, &Path, Outputs<'p>) -> Result<()>,
) -> Result<()> {
    let staging = Staging::new(od)?;
    let sp = staging.path.clone();
    let built = runs(&sp).and_then(|acc| finalize(plan, &sp, acc));
    built.and_then(|()| staging.commit()).map_err(|e| {
        anyhow!(
            "building the outputs of {} in {}: {e:#}. The previous outputs are untouched",
            od.path.display(),
            sp.display()
        )
    })
}
