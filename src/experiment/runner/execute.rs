//! Plan execution: simulate jobs in parallel and append their rows, in job order, to
//! `runs.csv.partial` (fresh, or resumed from its verified complete rows).

use super::RunConfig;
use crate::experiment::layout::{format_row, runs_header, RowChecker};
use crate::experiment::plan::Plan;
use crate::io::csv::{csv_line, Record, Records};
use crate::io::{self, write_atomic, FileWriter};
use crate::model::{RunOptions, SpecRunner};
use crate::sim::rng::replicate_seed;
use anyhow::{anyhow, bail, Result};
use rayon::prelude::*;
use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom};
use std::path::Path;

/// Simulate job `j` and format its `runs.csv` row; also returns the events handled.
pub fn job_row(plan: &Plan, j: u64) -> (Vec<u8>, u64) {
    JobRunner::new(plan).row(j)
}

/// One worker's jobs: the runner of the point it is on, so that consecutive jobs of one
/// point reuse one world where the model can (`WorldSpec::runner`). The rows are those of
/// [`job_row`].
pub struct JobRunner<'a> {
    plan: &'a Plan,
    point: Option<(usize, SpecRunner<'a>)>,
}

impl<'a> JobRunner<'a> {
    /// A worker on `plan`, on no point yet.
    pub fn new(plan: &'a Plan) -> Self {
        JobRunner { plan, point: None }
    }

    /// Simulate job `j` and format its `runs.csv` row; also returns the events handled.
    pub fn row(&mut self, j: u64) -> (Vec<u8>, u64) {
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
        let r = runner.run(s, RunOptions::default());
        let events = r.events;
        (format_row(plan, j, s, r), events)
    }
}

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
/// Jobs of this invocation are `k0 + i·n` for `i < mine`.
pub(super) fn resume_partial(
    plan: &Plan,
    partial: &Path,
    (k0, n, mine): (u64, u64, u64),
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
        loop {
            match rec.next_record()? {
                Record::End | Record::Torn(_) => break, // a torn last row is dropped
                Record::Row(b, line) => {
                    if done >= mine {
                        return Err(refuse(format!(
                            "row {} (line {line}) is beyond the {mine} jobs of this run",
                            done + 1
                        )));
                    }
                    chk.check(&b, k0 + done * n)
                        .map_err(|m| refuse(format!("row {} (line {line}): {m}", done + 1)))?;
                    if first.is_none() {
                        first = Some(b);
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

/// Open the partial file of `dir` (resumed or fresh) for this invocation's jobs.
pub(super) fn open_partial(
    plan: &Plan,
    cfg: &RunConfig,
    dir: &Path,
    jobs: (u64, u64, u64),
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
    resume_partial(plan, &partial, jobs)
}

/// Simulate this invocation's remaining jobs into `p`. Returns (written, events, seconds).
pub(super) fn simulate(
    plan: &Plan,
    cfg: &RunConfig,
    p: &mut Partial,
    (k0, n, mine): (u64, u64, u64),
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
    let chunk = (pool.current_num_threads() * 512).max(1024);
    let t_sim = std::time::Instant::now();
    // Without a terminal (and outside CI), one progress line every ~10 s on stderr.
    let lines = !cfg.progress
        && std::env::var_os("CI").is_none()
        && !std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut last_line = t_sim;
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
                .map_init(
                    || JobRunner::new(plan),
                    |w, &j| {
                        let r = w.row(j);
                        bar.inc(1);
                        r
                    },
                )
                .collect()
        });
        for (line, ev) in results {
            p.w.write_all(&line)?;
            events += ev;
            written += 1;
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
