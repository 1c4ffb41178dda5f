//! Plan execution: simulate jobs in parallel and append their rows, in job order, to
//! `runs.csv.partial` (fresh, or resumed from its verified complete rows).

use super::RunConfig;
use crate::experiment::accumulate::Outputs;
use crate::experiment::layout::{runs_header, RowChecker, RowWriter};
use crate::experiment::plan::Plan;
use crate::io::csv::{csv_line, Next, Record, Records};
use crate::io::{self, write_atomic, FileWriter};
use crate::model::{RunOptions, RunOutput, SpecRunner};
use crate::sim::rng::replicate_seed;
use anyhow::{anyhow, bail, Result};
use rayon::prelude::*;
use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom};
use std::path::Path;

/// Simulate job `j` and format its `runs.csv` row; also returns the events handled.
pub fn job_row(plan: &Plan, j: u64) -> (Vec<u8>, u64) {
    let mut w = JobRunner::new(plan);
    let r = w.run(j);
    let mut row = Vec::with_capacity(256);
    w.write_row(j, &r, &mut row);
    (row, r.events)
}

/// One worker's jobs: the runner of the point it is on, so that consecutive jobs of one
/// point reuse one world where the model can (`WorldSpec::runner`), and the row writer of
/// that point. The rows are those of [`job_row`].
pub struct JobRunner<'a> {
    plan: &'a Plan,
    point: Option<(usize, SpecRunner<'a>)>,
    rows: RowWriter,
}

impl<'a> JobRunner<'a> {
    /// A worker on `plan`, on no point yet.
    pub fn new(plan: &'a Plan) -> Self {
        JobRunner {
            plan,
            point: None,
            rows: RowWriter::new(),
        }
    }

    /// Simulate job `j`.
    pub fn run(&mut self, j: u64) -> RunOutput {
        let plan = self.plan;
        let reps = plan.replicates();
        let i = (j / reps) as usize;
        let s = replicate_seed(plan.experiment.seed, j % reps);
        let runner = match &mut self.point {
            Some((k, r)) if *k == i => r,
            slot => {
                &mut slot
                    .insert((i, SpecRunner::new(plan.points[i].world.spec())))
                    .1
            }
        };
        runner.run(s, RunOptions::default())
    }

    /// Append job `j`'s `runs.csv` row (its run gave `r`) to `out`.
    pub fn write_row(&mut self, j: u64, r: &RunOutput, out: &mut Vec<u8>) {
        self.rows.write_row(self.plan, j, r, out);
    }
}

/// A run of consecutive jobs of one chunk, simulated by one worker: the rows' bytes and what
/// the outputs need of each row, in buffers kept from chunk to chunk (no allocation per row).
/// The worker's [`JobRunner`] lives only while it fills the block, so at most one world per
/// thread is held.
struct Block {
    /// This invocation's job indices `from..to` (job `k0 + i·n` for each `i`).
    from: u64,
    to: u64,
    rows: Vec<u8>,
    /// The kept metrics of each job, `keep.len()` a job.
    metrics: Vec<f64>,
    events: Vec<u64>,
    /// The digests' bytes, and where each job's ends.
    digests: Vec<u8>,
    digest_ends: Vec<usize>,
}

impl Block {
    fn new() -> Self {
        Block {
            from: 0,
            to: 0,
            rows: Vec::new(),
            metrics: Vec::new(),
            events: Vec::new(),
            digests: Vec::new(),
            digest_ends: Vec::new(),
        }
    }

    fn fill(&mut self, plan: &Plan, (k0, n): (u64, u64), bar: &indicatif::ProgressBar) {
        self.rows.clear();
        self.metrics.clear();
        self.events.clear();
        self.digests.clear();
        self.digest_ends.clear();
        if self.from == self.to {
            return;
        }
        let mut runner = JobRunner::new(plan);
        for i in self.from..self.to {
            let j = k0 + i * n;
            let r = runner.run(j);
            runner.write_row(j, &r, &mut self.rows);
            self.metrics.extend(plan.keep.iter().map(|&m| r.metrics[m]));
            self.events.push(r.events);
            self.digests.extend_from_slice(r.digest.as_bytes());
            self.digest_ends.push(self.digests.len());
            bar.inc(1);
        }
    }
}

/// Jobs a worker simulates in one go: few enough that the workers stay balanced, enough that
/// a worker stays on one point (one world) for many jobs.
const BLOCK_JOBS: u64 = 64;

pub(super) fn state_json(plan: &Plan, shard: Option<(u64, u64)>) -> String {
    serde_json::json!({
        "fingerprint": plan.fingerprint,
        "shard": shard.map(|(k, n)| format!("{k}/{n}")),
        "jobs": plan.jobs(),
    })
    .to_string()
}

/// Simulate job `j` again and compare with its row as read; `Err` says which field differs.
pub(super) fn resimulate_matches(
    chk: &RowChecker,
    plan: &Plan,
    raw: &[u8],
    j: u64,
) -> Result<(), String> {
    let (want, _) = job_row(plan, j);
    if want == raw {
        Ok(())
    } else {
        Err(chk.difference(raw, &want))
    }
}

/// A resumed or fresh `runs.csv.partial`, open for appending.
pub(super) struct Partial {
    pub(super) w: FileWriter,
    pub(super) done: u64,
}

/// Open `partial` to go on from its verified complete rows, or refuse saying what to do.
/// Jobs of this invocation are `k0 + i·n` for `i < mine`; the kept rows are added to `acc`
/// (an unsharded run's outputs, so `k0 = 0`, `n = 1`).
pub(super) fn resume_partial(
    plan: &Plan,
    partial: &Path,
    (k0, n, mine): (u64, u64, u64),
    mut acc: Option<&mut Outputs>,
) -> Result<Partial> {
    let mut chk = RowChecker::new(plan);
    let header = chk.header_bytes();
    let refuse = |what: String| {
        anyhow!(
            "cannot resume from {}: {what}. Run again without --resume to start over",
            partial.display()
        )
    };
    let mut rec = Records::open(partial)?;
    // The header: whole, or torn by a kill before any row (an empty file included).
    let header_ok = match rec.next_record()? {
        Record::End => false,
        Record::Torn(b) if header.starts_with(&b) => false,
        Record::Row(b, _) if b == header => true,
        Record::Row(..) | Record::Torn(_) => {
            return Err(refuse(
                "its header is not this experiment's runs.csv header".into(),
            ))
        }
    };
    let mut done = 0u64;
    let mut keep = rec.offset();
    let mut first: Option<Vec<u8>> = None;
    if header_ok {
        // One buffer for every row (no allocation per row).
        let mut b: Vec<u8> = Vec::with_capacity(1024);
        loop {
            match rec.next_into(&mut b)? {
                Next::End | Next::Torn => break, // a torn last row is dropped
                Next::Row(line) => {
                    if done >= mine {
                        return Err(refuse(format!(
                            "row {} (line {line}) is beyond the {mine} jobs of this run",
                            done + 1
                        )));
                    }
                    let row = chk
                        .check(&b, k0 + done * n)
                        .map_err(|m| refuse(format!("row {} (line {line}): {m}", done + 1)))?;
                    if let Some(acc) = acc.as_deref_mut() {
                        acc.add(row.metrics.iter().copied(), row.events, row.digest)
                            .map_err(|e| refuse(format!("row {} (line {line}): {e}", done + 1)))?;
                    }
                    if first.is_none() {
                        first = Some(b.clone());
                    }
                    done += 1;
                    keep = rec.offset();
                }
            }
        }
    }
    if let Some(b) = &first {
        resimulate_matches(&chk, plan, b, k0).map_err(|m| {
            refuse(format!(
                "row 1 (job {k0}) is not what this vtsim simulates: {m} (the rows were \
                 written by a different build, or changed)"
            ))
        })?;
    }
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(partial)
        .map_err(io::at("opening", partial))?;
    if header_ok {
        f.set_len(keep).map_err(io::at("truncating", partial))?;
        f.seek(SeekFrom::End(0))
            .map_err(io::at("seeking in", partial))?;
        Ok(Partial {
            w: FileWriter::new(f, partial),
            done,
        })
    } else {
        // Empty, or the header itself torn: write it again.
        f.set_len(0).map_err(io::at("truncating", partial))?;
        let mut w = FileWriter::new(f, partial);
        w.write_all(&header)?;
        Ok(Partial { w, done: 0 })
    }
}

/// Start `partial` afresh with its state file.
pub(super) fn fresh_partial(
    plan: &Plan,
    partial: &Path,
    state: &Path,
    my_state: &str,
) -> Result<Partial> {
    write_atomic(state, my_state.as_bytes())?;
    let mut w = FileWriter::create(partial)?;
    w.write_all(&csv_line(&runs_header(plan)))?;
    Ok(Partial { w, done: 0 })
}

/// Open the partial file of `dir` (resumed or fresh) for this invocation's jobs; resumed rows
/// are added to `acc`.
pub(super) fn open_partial(
    plan: &Plan,
    cfg: &RunConfig,
    dir: &Path,
    jobs: (u64, u64, u64),
    acc: Option<&mut Outputs>,
) -> Result<Partial> {
    let partial = dir.join("runs.csv.partial");
    let state = dir.join("run-state.json");
    let my_state = state_json(plan, cfg.shard);
    if !cfg.resume || !partial.is_file() {
        return fresh_partial(plan, &partial, &state, &my_state);
    }
    let same = io::read_limited(&state, 1 << 20)
        .map(|s| s == my_state.as_bytes())
        .unwrap_or(false);
    if !same {
        bail!(
            "cannot resume in {}: the partial output belongs to a different experiment, \
             shard or vtsim version (or its run-state.json is missing); run without --resume \
             to start again",
            dir.display()
        );
    }
    resume_partial(plan, &partial, jobs, acc)
}

/// Simulate this invocation's remaining jobs into `p`, adding each row to `acc` as it is
/// written. Returns (written, events, seconds).
pub(super) fn simulate(
    plan: &Plan,
    cfg: &RunConfig,
    p: &mut Partial,
    (k0, n, mine): (u64, u64, u64),
    mut acc: Option<&mut Outputs>,
) -> Result<(u64, u64, f64)> {
    let pool = super::thread_pool(cfg.threads)?;
    let bar = if cfg.progress {
        // Only this invocation's runs: with --resume the rate and ETA are of the runs left,
        // not of the resumed ones counted as if done in no time.
        let pb = indicatif::ProgressBar::new(mine - p.done);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} runs ({per_sec}, eta {eta}){msg}",
            )
            .expect("template"),
        );
        if p.done > 0 {
            pb.set_message(format!(", {} resumed", p.done));
        }
        pb
    } else {
        indicatif::ProgressBar::hidden()
    };
    let done = p.done;
    let mut events = 0u64;
    let mut written = 0u64;
    let chunk = (pool.current_num_threads() as u64 * 512).max(1024);
    let t_sim = std::time::Instant::now();
    // Without a terminal (and outside CI), one progress line every ~10 s on stderr.
    let lines = !cfg.progress
        && std::env::var_os("CI").is_none()
        && !std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut last_line = t_sim;
    // This invocation's i-th job (i in done..mine) is job k0 + i·n; chunks are built as they
    // are reached, so memory does not grow with the number of jobs. A chunk is cut into
    // blocks of consecutive jobs, one worker each; the blocks' buffers are kept from chunk
    // to chunk.
    let mut blocks: Vec<Block> = (0..chunk.div_ceil(BLOCK_JOBS))
        .map(|_| Block::new())
        .collect();
    let mut next = done;
    while next < mine {
        let end = (next + chunk).min(mine);
        for (b, blk) in blocks.iter_mut().enumerate() {
            blk.from = (next + b as u64 * BLOCK_JOBS).min(end);
            blk.to = (blk.from + BLOCK_JOBS).min(end);
        }
        next = end;
        // Each worker simulates its block's jobs and formats their rows; this thread only
        // writes bytes, in job order.
        pool.install(|| {
            blocks
                .par_iter_mut()
                .with_max_len(1)
                .for_each(|blk| blk.fill(plan, (k0, n), &bar))
        });
        let nk = plan.keep.len();
        for blk in &blocks {
            p.w.write_all(&blk.rows)?;
            let rows = blk.events.len();
            if let Some(acc) = acc.as_deref_mut() {
                let mut d0 = 0;
                for i in 0..rows {
                    let d1 = blk.digest_ends[i];
                    acc.add(
                        blk.metrics[i * nk..(i + 1) * nk].iter().copied(),
                        blk.events[i],
                        &blk.digests[d0..d1],
                    )?;
                    d0 = d1;
                }
            }
            events += blk.events.iter().sum::<u64>();
            written += rows as u64;
        }
        p.w.flush()?;
        if lines && last_line.elapsed().as_secs_f64() >= 10.0 {
            last_line = std::time::Instant::now();
            let dt = t_sim.elapsed().as_secs_f64();
            let rate = written as f64 / dt;
            let left = (mine - done - written) as f64;
            eprintln!(
                "vtsim: {}/{} runs ({:.0} runs/s, eta {:.0} s){}",
                done + written,
                mine,
                rate,
                left / rate.max(1e-9),
                if done > 0 {
                    format!(", {done} resumed")
                } else {
                    String::new()
                }
            );
        }
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
    Ok((written, events, t_sim.elapsed().as_secs_f64()))
}
